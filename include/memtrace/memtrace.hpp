#pragma once
// memtrace: memory traces for partially observable reinforcement learning (Eberhard, Muehlebach &
// Vernade, ICML 2025). The umbrella header: everything the library offers. Code that needs less
// includes one of the three layers it is made of, or one header (docs/design.md gives their compile times).

#include "memtrace/analysis.hpp"
#include "memtrace/analysis/belief_checkpoint.hpp"
#include "memtrace/checkpoint.hpp"
#include "memtrace/core.hpp"
#include "memtrace/env/checkpoint.hpp"
#include "memtrace/env/pomdp_file.hpp"
#include "memtrace/env/pomdp_model.hpp"
#include "memtrace/experiment.hpp"
#include "memtrace/learn/ppo_checkpoint.hpp"
#include "memtrace/learn/ppo_weights.hpp"
#include "memtrace/loop/checkpoint.hpp"
#include "memtrace/loop/ppo_run.hpp"
#include "memtrace/memory/checkpoint.hpp"
#include "memtrace/safetensors.hpp"
