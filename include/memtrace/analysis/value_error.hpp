#pragma once
// One exact-analysis entry point per quantity, overloaded on the memory: the moments of a
// MemoryTrace, a Window or a ConcatWindow under the stationary process (exact_moments), then the
// value error of weights or a table, the optimum and the TD fixed point with the same argument
// lists for every memory. An experiment that holds its memories in a template or a std::variant
// never switches on their kind. The per-memory functions (trace_value_error.hpp,
// window_value_error.hpp, concat_value_error.hpp) are what these call. See docs/analysis.md.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>

#include "memtrace/analysis/concat_value_error.hpp"
#include "memtrace/analysis/linear_estimator.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/analysis/trace_value_error.hpp"
#include "memtrace/analysis/window_value_error.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {
namespace detail {

/// Throws unless the memory's |Y| is the process's: the exact analysis reads the memory's
/// observations as the model's observation indices.
inline void check_memory_observations(const char* who, std::size_t memory, std::size_t process) {
  if (memory != process) invalid(who, ": the memory has ", memory, " observations, the process ", process);
}

}  // namespace detail

/// The moments of a memory trace with the memory's λ (TraceMoments; the stationary history is
/// infinitely long, so the trace's initialisation plays no part).
template <class Lambda, int NumObservations, class Scalar>
[[nodiscard]] TraceMoments exact_moments(const std::derived_from<StationaryProcess> auto& process,
                                         const MemoryTrace<Lambda, NumObservations, Scalar>& memory) {
  detail::check_memory_observations("exact_moments", memory.num_observations(), process.num_observations());
  return detail::trace_moments("exact_moments", process, memory.lambda());
}

/// The moments of a full window of the memory's length m (WindowMoments, refused before allocating
/// above max_table_size windows).
template <int Length, int NumObservations>
[[nodiscard]] WindowMoments exact_moments(const std::derived_from<StationaryProcess> auto& process,
                                          const Window<Length, NumObservations>& memory,
                                          std::size_t max_table_size = default_max_table_size) {
  detail::check_memory_observations("exact_moments", memory.num_observations(), process.num_observations());
  detail::window_table_size("exact_moments", memory.length(), process.num_observations(), max_table_size,
                            process.num_states());  // refused under this function's name
  return window_moments(process, memory.length(), max_table_size);
}

/// The moments of a concatenated window of the memory's length m (LinearMoments of m|Y| features).
template <int Length, int NumObservations>
[[nodiscard]] LinearMoments exact_moments(const std::derived_from<StationaryProcess> auto& process,
                                          const ConcatWindow<Length, NumObservations>& memory) {
  detail::check_memory_observations("exact_moments", memory.num_observations(), process.num_observations());
  return detail::concat_moments("exact_moments", process, memory.length());
}

/// The number of weights of the memory's estimator: |Y| for a trace, m|Y| for a concatenated
/// window (the size of the learner's weight vector), |Y|^m for a full window (its table; a Window
/// with zero padding has more entries, for the padded windows after these: the stationary analysis
/// has infinitely long histories, so pass table.head(num_weights(moments))).
[[nodiscard]] std::size_t num_weights(const std::derived_from<LinearMoments> auto& moments) {
  return static_cast<std::size_t>(moments.cross.size());
}

[[nodiscard]] inline std::size_t num_weights(const WindowMoments& moments) {
  return static_cast<std::size_t>(moments.probability.size());
}

/// VE of a linear estimator's weights (a trace's or a concatenated window's).
[[nodiscard]] double value_error(const std::derived_from<LinearMoments> auto& moments, const Eigen::VectorXd& w) {
  detail::check_weights("value_error", moments, w);
  return linear_value_error(moments, w);
}

/// VE of a window table (Window's index layout).
[[nodiscard]] inline double value_error(const WindowMoments& moments, const Eigen::VectorXd& table) {
  if (table.size() != moments.probability.size())
    detail::invalid("value_error: the window table must have |Y|^m = ", moments.probability.size(),
                    " entries (with zero padding: the first |Y|^m, table.head(num_weights(moments))), got ",
                    table.size());
  if (!table.allFinite()) detail::invalid("value_error: the window table must be finite");
  return window_value_error(moments, table);
}

/// The value errors of the columns of `weights` (one learner each), +inf for a diverged one.
template <class Derived>
[[nodiscard]] Eigen::VectorXd value_errors(const std::derived_from<LinearMoments> auto& moments,
                                           const Eigen::MatrixBase<Derived>& weights) {
  if (weights.rows() != moments.cross.size())
    detail::invalid("value_errors: weights must have ", moments.cross.size(), " rows, got ", weights.rows());
  return linear_value_errors(moments, weights);
}

template <class Derived>
[[nodiscard]] Eigen::VectorXd value_errors(const WindowMoments& moments, const Eigen::MatrixBase<Derived>& tables) {
  if (tables.rows() != moments.probability.size())
    detail::invalid("value_errors: window tables must have |Y|^m = ", moments.probability.size(), " rows, got ",
                    tables.rows());
  return window_value_errors(moments, tables);
}

/// The weights (or table) that minimise the value error.
[[nodiscard]] Eigen::VectorXd optimal_weights(const std::derived_from<LinearMoments> auto& moments) {
  return optimal_linear_weights(moments);
}

[[nodiscard]] inline Eigen::VectorXd optimal_weights(const WindowMoments& moments) {
  return optimal_window_table(moments);
}

/// The smallest value error the memory's estimator can reach.
[[nodiscard]] double optimal_value_error(const std::derived_from<LinearMoments> auto& moments) {
  return linear_value_error(moments, optimal_linear_weights(moments));
}

[[nodiscard]] inline double optimal_value_error(const WindowMoments& moments) {
  return optimal_window_value_error(moments);
}

/// The TD(0) fixed point of the memory's estimator with the process's γ (weights or a table, the
/// layout value_error takes). For a trace or a concatenated window it computes the moments again:
/// linear_td_fixed_point(moments, γ) reuses moments already at hand.
template <class Lambda, int NumObservations, class Scalar>
[[nodiscard]] Eigen::VectorXd td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                             const MemoryTrace<Lambda, NumObservations, Scalar>& memory) {
  detail::check_memory_observations("td_fixed_point", memory.num_observations(), process.num_observations());
  return linear_td_fixed_point(detail::trace_moments("td_fixed_point", process, memory.lambda()), process.discount());
}

template <int Length, int NumObservations>
[[nodiscard]] Eigen::VectorXd td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                             const Window<Length, NumObservations>& memory,
                                             std::size_t max_table_size = default_max_table_size) {
  detail::check_memory_observations("td_fixed_point", memory.num_observations(), process.num_observations());
  detail::window_table_size("td_fixed_point", memory.length(), process.num_observations(), max_table_size,
                            process.num_states());
  return window_td_fixed_point(process, memory.length(), max_table_size);
}

template <int Length, int NumObservations>
[[nodiscard]] Eigen::VectorXd td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                             const ConcatWindow<Length, NumObservations>& memory) {
  detail::check_memory_observations("td_fixed_point", memory.num_observations(), process.num_observations());
  return linear_td_fixed_point(detail::concat_moments("td_fixed_point", process, memory.length()), process.discount());
}

}  // namespace memtrace
