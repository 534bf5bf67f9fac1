#pragma once
// The exact value error of linear estimators on memory traces (paper §5: f(h) = wᵀ z_λ(h)) under
// the stationary, infinitely long history: the moments of the trace in closed form (geometric sums
// over time lags, solved as sparse systems in I - λP and I - λ²P), the value error of any
// weights, the optimal weights and the TD fixed point. See docs/analysis.md for the derivation.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>

#include "memtrace/analysis/linear_estimator.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The moments of the memory trace z_t = λ z_{t-1} + (1 - λ) e_{y_t} (eq. (1)) under the
/// stationary process, and its conditional mean given the state.
struct TraceMoments : LinearMoments {
  /// |X| x |Y|: row x is E[z_t | x_t = x] (zero where μ(x) = 0).
  Eigen::MatrixXd conditional_mean;
};

/// The trace moments for forgetting factor λ. With m(x) = E[z_t 1{x_t = x}] (rows of an |X| x |Y|
/// matrix M) and S(x) = E[z_t z_tᵀ 1{x_t = x}], the recursion gives
///   M = λ Pᵀ M + (1 - λ) D_μ O,   S(x') = λ² Σ_x P(x, x') S(x) + C(x'),
///   C(x') = λ(1 - λ) (q(x') o(x')ᵀ + o(x') q(x')ᵀ) + (1 - λ)² μ(x') diag(o(x')),  q = Pᵀ M,
/// and a weighted sum Σ_x g(x) S(x) = Σ_x u(x) C(x) with u = (I - λ²P)^{-1} g (the reverse
/// kernel), so one LU of I - λP (|Y| right-hand sides) and one of I - λ²P (two) suffice. Both have
/// ||(I - λP)^{-1}||_∞ = 1 / (1 - λ): accurate for λ up to 0.99 and beyond.
/// Throws std::invalid_argument unless 0 <= lambda < 1. (Like every function here that solves, a
/// function template on the process type, so that only a caller compiles the solvers.)
[[nodiscard]] TraceMoments trace_moments(const std::derived_from<StationaryProcess> auto& process, double lambda);

namespace detail {
/// trace_moments, with `who` naming the public function the caller called in messages.
[[nodiscard]] TraceMoments trace_moments(const char* who, const std::derived_from<StationaryProcess> auto& process,
                                         double lambda) {
  detail::check_lambda(who, lambda);
  const auto& p = process.transition();
  const auto& o = process.emission();
  const auto& mu = process.stationary();
  const Eigen::Index n = p.rows();
  const auto& omega = process.relative_weights();

  detail::ShiftedSolver<> first(p, process.ordering(), lambda, who, "I - lambda P");
  const detail::ShiftedSolver<> second(p, process.ordering(), lambda * lambda, who, "I - lambda^2 P");
  const Eigen::MatrixXd dmu_o = mu.asDiagonal() * o;
  const Eigen::MatrixXd m = (1.0 - lambda) * first.solve_transposed(dmu_o);
  const Eigen::MatrixXd q = detail::ColumnSparse(p).transpose() * m;

  // Σ_x g(x) S(x) for the weights g.
  const auto weighted_second = [&](const auto& g) {
    const Eigen::VectorXd u = second.solve(g);  // Σ_l λ^{2l} P^l g
    const Eigen::MatrixXd qu = q.transpose() * u.asDiagonal() * o;
    Eigen::MatrixXd s = lambda * (1.0 - lambda) * (qu + qu.transpose());
    s.diagonal() += (1.0 - lambda) * (1.0 - lambda) * (o.transpose() * u.cwiseProduct(mu));
    return s;
  };

  TraceMoments moments;
  moments.second = weighted_second(omega);
  moments.cross = m.transpose() * omega.cwiseProduct(process.values());
  moments.value_second = process.weights().dot(process.values().cwiseAbs2());
  // z_{t+1} = λ z_t + (1 - λ) e_{y_{t+1}}, counted only when x_{t+1} is not terminal.
  const Eigen::MatrixXd next_emission = process.bootstrap_transition() * o;
  moments.next = lambda * weighted_second(omega.cwiseProduct(process.continuation())) +
                 (1.0 - lambda) * m.transpose() * omega.asDiagonal() * next_emission;
  moments.reward = m.transpose() * omega.cwiseProduct(process.rewards());
  moments.conditional_mean = m;
  for (Eigen::Index x = 0; x < n; ++x)
    moments.conditional_mean.row(x) =
        mu[x] > 0.0 ? Eigen::RowVectorXd(m.row(x) / mu[x]) : Eigen::RowVectorXd::Zero(o.cols());
  return moments;
}
}  // namespace detail

TraceMoments trace_moments(const std::derived_from<StationaryProcess> auto& process, double lambda) {
  return detail::trace_moments("trace_moments", process, lambda);
}

/// VE(w) = E[(wᵀ z_t - v(x_t))²] of the trace estimator with weights w (|Y| entries).
[[nodiscard]] double trace_value_error(const std::derived_from<StationaryProcess> auto& process, double lambda,
                                       const Eigen::VectorXd& w) {
  const TraceMoments moments = detail::trace_moments("trace_value_error", process, lambda);
  detail::check_weights("trace_value_error", moments, w);
  return linear_value_error(moments, w);
}

template <class E>
requires FiniteModel<E>
[[nodiscard]] double trace_value_error(const E& env, double lambda, const Eigen::VectorXd& w, double discount) {
  detail::check_lambda("trace_value_error", lambda);
  return trace_value_error(StationaryProcess(env, discount), lambda, w);
}

/// The weights that minimise the trace value error: E[z zᵀ] w = E[z v].
[[nodiscard]] Eigen::VectorXd optimal_trace_weights(const std::derived_from<StationaryProcess> auto& process,
                                                    double lambda) {
  return optimal_linear_weights(detail::trace_moments("optimal_trace_weights", process, lambda));
}

template <class E>
requires FiniteModel<E>
[[nodiscard]] Eigen::VectorXd optimal_trace_weights(const E& env, double lambda, double discount) {
  detail::check_lambda("optimal_trace_weights", lambda);
  return optimal_trace_weights(StationaryProcess(env, discount), lambda);
}

/// The smallest value error of a linear estimator on the trace with forgetting factor λ.
[[nodiscard]] double optimal_trace_value_error(const std::derived_from<StationaryProcess> auto& process,
                                               double lambda) {
  const TraceMoments moments = detail::trace_moments("optimal_trace_value_error", process, lambda);
  return linear_value_error(moments, optimal_linear_weights(moments));
}

/// The TD(0) fixed point on traces: E[z_t (z_t - γ z_{t+1})ᵀ] w = E[z_t r_{t+1}] with the
/// process's γ. Under partial observability it is not the VE minimiser.
[[nodiscard]] Eigen::VectorXd trace_td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                                   double lambda) {
  return linear_td_fixed_point(detail::trace_moments("trace_td_fixed_point", process, lambda), process.discount());
}

template <class E>
requires FiniteModel<E>
[[nodiscard]] Eigen::VectorXd trace_td_fixed_point(const E& env, double lambda, double discount) {
  detail::check_lambda("trace_td_fixed_point", lambda);
  return trace_td_fixed_point(StationaryProcess(env, discount), lambda);
}

}  // namespace memtrace
