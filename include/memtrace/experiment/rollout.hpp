#pragma once
// Deprecated in 0.3.0, removed in 0.4.0: the acting loop moved to memtrace/loop/rollout.hpp and
// PPO's train and evaluate to memtrace/loop/ppo.hpp (both in the core umbrella).

#include "memtrace/loop/ppo.hpp"
#include "memtrace/loop/rollout.hpp"
