#pragma once
// memtrace's exact-analysis umbrella: stationary distributions and true values, the belief filter,
// exact value errors and optimal weights of trace, window and concat estimators, trace-space
// geometry and the T-maze theory. Includes the core umbrella's models (docs/analysis.md).

#include "memtrace/analysis/belief.hpp"
#include "memtrace/analysis/concat_value_error.hpp"
#include "memtrace/analysis/linear_estimator.hpp"
#include "memtrace/analysis/lipschitz.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/analysis/metric_entropy.hpp"
#include "memtrace/analysis/monte_carlo.hpp"
#include "memtrace/analysis/tmaze_complexity.hpp"
#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/analysis/trace_space.hpp"
#include "memtrace/analysis/trace_value_error.hpp"
#include "memtrace/analysis/value_error.hpp"
#include "memtrace/analysis/window_value_error.hpp"
