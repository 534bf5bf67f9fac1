#pragma once
// The value error of a linear estimator f(h) = wᵀφ(h) as a quadratic form in w, from the moments
// of its features under the stationary process: VE(w) = wᵀ E[φφᵀ] w - 2 wᵀ E[φ v] + E[v²]; its
// minimiser; and the TD fixed point E[φ (φ - γ φ')ᵀ] w = E[φ r'] (the projected Bellman equation).
// Memory traces and concatenated windows both reduce to it. See docs/analysis.md.

#include <Eigen/Core>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>

#include "memtrace/env/fwd.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The moments of a feature vector φ_t under the stationary process (expectations over the steps
/// t whose state x_t is not terminal, weighted as StationaryProcess::weights()).
struct LinearMoments {
  /// E[φ_t φ_tᵀ].
  Eigen::MatrixXd second;
  /// E[φ_t v(x_t)].
  Eigen::VectorXd cross;
  /// E[v(x_t)²].
  double value_second = 0.0;
  /// E[φ_t φ_{t+1}ᵀ], with φ_{t+1} = 0 when x_{t+1} is terminal (no bootstrap).
  Eigen::MatrixXd next;
  /// E[φ_t r_{t+1}].
  Eigen::VectorXd reward;
};

namespace detail {

inline void check_weights(const char* who, const LinearMoments& moments, const Eigen::VectorXd& w) {
  if (w.size() != moments.cross.size())
    invalid(who, ": weights must have ", moments.cross.size(), " entries, got ", w.size());
  if (!w.allFinite()) invalid(who, ": weights must be finite");
}

}  // namespace detail

/// The minimiser of the value error: E[φφᵀ] w = E[φ v], the least-norm solution when E[φφᵀ] is
/// singular (an observation that never occurs, or the redundant blocks of a concatenated window).
/// (The functions that solve take their moments as `std::derived_from<LinearMoments> auto`: function
/// templates, so that only a caller compiles Eigen's decomposition; see docs/design.md.)
[[nodiscard]] Eigen::VectorXd optimal_linear_weights(const std::derived_from<LinearMoments> auto& moments) {
  return moments.second.completeOrthogonalDecomposition().solve(moments.cross);
}

namespace detail {

/// VE* + gapᵀ E[φφᵀ] gap, clamped at 0 against rounding. Weights so large (a learner that diverged)
/// that the quadratic form overflows give inf - inf = NaN or -inf: their value error is +inf, not
/// the 0 that a clamp would make of it.
[[nodiscard]] inline double value_error_from_gap(double minimum, double quadratic) noexcept {
  const double value_error = minimum + quadratic;
  if (!std::isfinite(value_error)) return std::numeric_limits<double>::infinity();
  return value_error > 0.0 ? value_error : 0.0;
}

}  // namespace detail

/// VE(w) = E[(wᵀφ_t - v(x_t))²]. Written as VE* + (w - w*)ᵀ E[φφᵀ] (w - w*), which keeps its digits
/// near the optimum w* (the direct form cancels there). +inf when that form overflows.
[[nodiscard]] double linear_value_error(const std::derived_from<LinearMoments> auto& moments,
                                        const Eigen::VectorXd& w) {
  detail::check_weights("linear_value_error", moments, w);
  const Eigen::VectorXd best = optimal_linear_weights(moments);
  const double minimum = moments.value_second - moments.cross.dot(best);
  const Eigen::VectorXd gap = w - best;
  return detail::value_error_from_gap(minimum > 0.0 ? minimum : 0.0, gap.dot(moments.second * gap));
}

/// The value errors of K weight vectors at once, the columns of a dim × K matrix (LinearTdBank's
/// weights, say), with one solve for w*. A column with a non-finite entry (a learner that
/// diverged) gets +inf rather than an exception, and so does one whose quadratic form overflows.
template <std::derived_from<LinearMoments> Moments, class Derived>
[[nodiscard]] Eigen::VectorXd linear_value_errors(const Moments& moments, const Eigen::MatrixBase<Derived>& weights) {
  if (weights.rows() != moments.cross.size())
    detail::invalid("linear_value_errors: weights must have ", moments.cross.size(), " rows, got ", weights.rows());
  const Eigen::VectorXd best = optimal_linear_weights(moments);
  const double minimum = std::max(0.0, moments.value_second - moments.cross.dot(best));
  const Eigen::MatrixXd gap = weights.colwise() - best;
  const Eigen::MatrixXd weighted = moments.second * gap;
  Eigen::VectorXd value_error(weights.cols());
  for (Eigen::Index c = 0; c < weights.cols(); ++c) {
    value_error[c] = weights.col(c).allFinite() ? detail::value_error_from_gap(minimum, gap.col(c).dot(weighted.col(c)))
                                                : std::numeric_limits<double>::infinity();
  }
  return value_error;
}

/// The TD fixed point: E[φ_t (φ_t - γ φ_{t+1})ᵀ] w = E[φ_t r_{t+1}], where TD(0) with small steps
/// settles under the stationary process (least-norm when the system is singular).
[[nodiscard]] Eigen::VectorXd linear_td_fixed_point(const std::derived_from<LinearMoments> auto& moments,
                                                    double discount) {
  if (!(discount >= 0.0 && discount < 1.0))
    detail::invalid("linear_td_fixed_point: discount must be in [0, 1), got ", discount);
  const Eigen::MatrixXd a = moments.second - discount * moments.next;
  return a.completeOrthogonalDecomposition().solve(moments.reward);
}

}  // namespace memtrace
