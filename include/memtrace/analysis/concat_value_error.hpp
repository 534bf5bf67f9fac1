#pragma once
// The exact value error of linear estimators on concatenated windows (ConcatWindow: the one-hot
// vectors of y_t, y_{t-1}, ..., y_{t-m+1} stacked, block k = lag k) under the stationary, infinitely
// long history: the value error is a quadratic form in the m|Y| weights whose matrix is made of the
// lag covariances E[e_{y_{t-i}} e_{y_{t-j}}ᵀ]; its minimiser and the TD fixed point follow.
// See docs/analysis.md.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <vector>

#include "memtrace/analysis/linear_estimator.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The moments of the concatenated window of length m (m|Y| features, block i = e_{y_{t-i}}).
/// With μ the stationary distribution, ω the weight of x_t (1 for a continuing model) and
/// W_l = (P^l)ᵀ D_μ O, the blocks are
///   E[ω(x_t) e_{y_{t-i}} e_{y_{t-j}}ᵀ] = Oᵀ diag(P^i ω) W_{j-i}  (j > i),  diag(Oᵀ (μ ∘ P^i ω))  (j = i),
///   E[ω(x_t) e_{y_{t-i}} v(x_t)] = Oᵀ (μ ∘ P^i (ω ∘ v)),
/// so the cost is O(m) sparse products with |Y| columns. Throws std::invalid_argument for m = 0.
/// (A function template on the process type, like every function here: see trace_moments.)
[[nodiscard]] LinearMoments concat_moments(const std::derived_from<StationaryProcess> auto& process, std::size_t m);

namespace detail {
/// concat_moments, with `who` naming the public function the caller called in messages.
[[nodiscard]] LinearMoments concat_moments(const char* who, const std::derived_from<StationaryProcess> auto& process,
                                           std::size_t m) {
  if (m == 0) detail::invalid(who, ": m must be at least 1, got 0");
  const std::size_t ny = process.num_observations();
  if (detail::checked_mul(m, ny) == 0 || m * ny > (std::size_t{1} << 16))
    detail::invalid(who, ": m|Y| with m = ", m, " and |Y| = ", ny,
                    " weights exceed 65536 (a dense m|Y| x m|Y| matrix)");
  const auto& p = process.transition();
  const auto& o = process.emission();
  const auto& mu = process.stationary();
  const Eigen::Index n = mu.size(), k = o.cols();
  const auto blocks = static_cast<Eigen::Index>(m);
  const auto& omega = process.relative_weights();
  const detail::ColumnSparse pt = detail::ColumnSparse(p).transpose();

  // P^i g for i = 0 .. m - 1, as the columns of an |X| x m matrix.
  const auto powers_of = [&](const auto& g) {
    Eigen::MatrixXd u(n, blocks);
    u.col(0) = g;
    for (Eigen::Index i = 1; i < blocks; ++i) u.col(i) = p * u.col(i - 1);
    return u;
  };
  std::vector<Eigen::MatrixXd> lagged(m);  // W_l = (P^l)ᵀ D_μ O
  lagged[0] = mu.asDiagonal() * o;
  for (std::size_t l = 1; l < m; ++l) lagged[l] = pt * lagged[l - 1];
  // E[g(x_t) e_{y_{t-i}} e_{y_{t-j}}ᵀ] for all i, j, from u = powers_of(g).
  const auto lag_moments = [&](const auto& u, Eigen::Index rows) {
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(rows * k, rows * k);
    for (Eigen::Index i = 0; i < rows; ++i) {
      out.block(i * k, i * k, k, k).diagonal() = o.transpose() * u.col(i).cwiseProduct(mu);
      for (Eigen::Index j = i + 1; j < rows; ++j) {
        const Eigen::MatrixXd b = o.transpose() * u.col(i).asDiagonal() * lagged[static_cast<std::size_t>(j - i)];
        out.block(i * k, j * k, k, k) = b;
        out.block(j * k, i * k, k, k) = b.transpose();
      }
    }
    return out;
  };
  const auto lag_vector = [&](const auto& g) {
    const Eigen::MatrixXd u = powers_of(g);
    Eigen::VectorXd out(blocks * k);
    for (Eigen::Index i = 0; i < blocks; ++i) out.segment(i * k, k) = o.transpose() * u.col(i).cwiseProduct(mu);
    return out;
  };

  LinearMoments moments;
  moments.second = lag_moments(powers_of(omega), blocks);
  moments.cross = lag_vector(omega.cwiseProduct(process.values()));
  moments.value_second = process.weights().dot(process.values().cwiseAbs2());
  moments.reward = lag_vector(omega.cwiseProduct(process.rewards()));
  // φ_{t+1}: block 0 is the next observation (counted when x_{t+1} is not terminal), block j >= 1
  // is block j - 1 of φ_t, weighted by the probability a(x_t) of not terminating.
  moments.next = Eigen::MatrixXd::Zero(blocks * k, blocks * k);
  if (blocks > 1) {
    const Eigen::MatrixXd shifted = lag_moments(powers_of(omega.cwiseProduct(process.continuation())), blocks);
    moments.next.rightCols((blocks - 1) * k) = shifted.leftCols((blocks - 1) * k);
  }
  Eigen::MatrixXd ahead = omega.asDiagonal() * (process.bootstrap_transition() * o);  // P^i D_ω P̃ O
  for (Eigen::Index i = 0; i < blocks; ++i) {
    if (i > 0) ahead = p * ahead;
    moments.next.block(i * k, 0, k, k) = o.transpose() * mu.asDiagonal() * ahead;
  }
  return moments;
}
}  // namespace detail

LinearMoments concat_moments(const std::derived_from<StationaryProcess> auto& process, std::size_t m) {
  return detail::concat_moments("concat_moments", process, m);
}

/// VE(w) = E[(wᵀφ_t - v(x_t))²] of the concatenated-window estimator with m|Y| weights w.
[[nodiscard]] double concat_value_error(const std::derived_from<StationaryProcess> auto& process, std::size_t m,
                                        const Eigen::VectorXd& w) {
  const LinearMoments moments = detail::concat_moments("concat_value_error", process, m);
  detail::check_weights("concat_value_error", moments, w);
  return linear_value_error(moments, w);
}

template <class E>
requires FiniteModel<E>
[[nodiscard]] double concat_value_error(const E& env, std::size_t m, const Eigen::VectorXd& w, double discount) {
  return concat_value_error(StationaryProcess(env, discount), m, w);
}

/// The weights that minimise the concatenated-window value error (least-norm: the blocks each
/// sum to one, so weights are determined up to constants moved between blocks).
[[nodiscard]] Eigen::VectorXd optimal_concat_weights(const std::derived_from<StationaryProcess> auto& process,
                                                     std::size_t m) {
  return optimal_linear_weights(detail::concat_moments("optimal_concat_weights", process, m));
}

[[nodiscard]] double optimal_concat_value_error(const std::derived_from<StationaryProcess> auto& process,
                                                std::size_t m) {
  const LinearMoments moments = detail::concat_moments("optimal_concat_value_error", process, m);
  return linear_value_error(moments, optimal_linear_weights(moments));
}

/// The TD(0) fixed point on concatenated windows with the process's γ (least-norm).
[[nodiscard]] Eigen::VectorXd concat_td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                                    std::size_t m) {
  return linear_td_fixed_point(detail::concat_moments("concat_td_fixed_point", process, m), process.discount());
}

}  // namespace memtrace
