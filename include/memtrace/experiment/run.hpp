#pragma once
// Deprecated in 0.3.0, removed in 0.4.0: the TD run loops moved to memtrace/loop/run_td.hpp (in
// the core umbrella).

#include "memtrace/loop/run_td.hpp"
