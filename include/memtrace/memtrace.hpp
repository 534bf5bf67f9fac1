#pragma once
// memtrace: memory traces for partially observable reinforcement learning (Eberhard, Muehlebach &
// Vernade, ICML 2025). The umbrella header: everything the library offers.

#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/core.hpp"
#include "memtrace/features.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/trace_bank.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/memory/with_actions.hpp"
#include "memtrace/random.hpp"
