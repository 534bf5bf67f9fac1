#pragma once
// memtrace: memory traces for partially observable reinforcement learning (Eberhard, Muehlebach &
// Vernade, ICML 2025). The umbrella header: everything the library offers.

#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/core.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/finite_pomdp.hpp"
#include "memtrace/env/noisy_random_walk.hpp"
#include "memtrace/env/tmaze.hpp"
#include "memtrace/env/two_state_hmm.hpp"
#include "memtrace/experiment/run.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/td.hpp"
#include "memtrace/learn/trace_td.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/trace_bank.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/memory/with_actions.hpp"
#include "memtrace/random.hpp"
