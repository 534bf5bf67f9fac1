#pragma once
// The exact value error of full-window estimators (paper §3, F_m: one value per window of the m
// most recent observations) under the stationary, infinitely long history. One depth-first pass
// over the |Y|^m windows, sharing prefixes, gives the probability of every window and the sums
// Σ_x p(x_t = x, window) v(x) and v(x)²; the value error of any table and the optimal table (the
// belief-weighted value) then cost O(|Y|^m). Tables use Window's index layout (repeat_first:
// newest observation = lowest digit). See docs/analysis.md.

#include <Eigen/Core>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "memtrace/analysis/markov.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The exact per-window quantities of the length-m window under the stationary process, indexed
/// like Window<>(m, |Y|) (index y_0 + y_{-1}|Y| + ... + y_{-m+1}|Y|^{m-1}). Probabilities are over
/// the steps whose state x_t is not terminal (StationaryProcess::weights()).
struct WindowMoments {
  std::size_t length = 0;
  std::size_t num_observations = 0;
  /// p(w) = P(win_m(h_t) = w).
  Eigen::VectorXd probability;
  /// Σ_x p(x_t = x, w) v(x).
  Eigen::VectorXd value_sum;
  /// Σ_x p(x_t = x, w) v(x)².
  Eigen::VectorXd value_square_sum;
  /// Σ_x p(x_t = x, w) (v(x) - E[v | w])² = p(w) Var(v | w), summed around the mean value so that
  /// it keeps its digits when Var(v | w) is small against v².
  Eigen::VectorXd residual;
};

namespace detail {

using RowDense = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// |Y|^m, or throws naming m and the size when it overflows or exceeds max_table_size. The pass
/// also keeps one |X| x |Y| matrix per level: m·|X|·|Y| entries, which must fit max_table_size too
/// (with |Y| = 1 the table has one entry for every m, and only this bounds the depth).
inline std::size_t window_table_size(const char* who, std::size_t m, std::size_t num_observations,
                                     std::size_t max_table_size, std::size_t num_states = 1) {
  if (m == 0) invalid(who, ": m must be at least 1, got 0");
  if (m > max_table_size) invalid(who, ": m = ", m, " exceeds max_table_size = ", max_table_size);
  const std::size_t size = checked_pow(num_observations, m);
  if (size == 0 || size > max_table_size)
    invalid(who, ": a table of |Y|^m windows with |Y| = ", num_observations, " and m = ", m,
            size == 0 ? std::string(" overflows std::size_t")
                      : message(" has ", size, " entries (", two_decimals(static_cast<double>(size) * 32.0 / (1 << 30)),
                                " GiB of window moments) and exceeds max_table_size = ", max_table_size));
  const std::size_t working = checked_mul(m, checked_mul(num_states, num_observations));
  if (working == 0 || working > max_table_size)
    invalid(who, ": the pass over windows of length m = ", m, " keeps m·|X|·|Y| entries with |X| = ", num_states,
            " and |Y| = ", num_observations, ", ",
            working == 0 ? std::string("which overflows std::size_t")
                         : message(working, ", more than max_table_size = ", max_table_size));
  return size;
}

/// The depth-first pass over all windows of length m, oldest observation at the root (the forward
/// algorithm): g_1 = μ, f_j = g_j ∘ O(·, y_j), g_{j+1} = Pᵀ f_j, so p(x_t = x, w) = f_m(x). Sums
/// Σ_x f_m(x) N(x, c) for the |X| x C matrix `newest` (whose columns already hold O(·, y_m) for the
/// newest observation they belong to) are handed to store(index, sums, row): the window index
/// without its newest digit, and the row of `sums` (C columns) for those windows. The newest step
/// is folded into P N, so a node one level above the leaves costs one dense |Y| x |X| x C product
/// and the others one sparse product with |Y| columns.
template <class Store>
void window_pass(const std::derived_from<StationaryProcess> auto& process, std::size_t m, const Eigen::MatrixXd& newest,
                 Store&& store) {
  const std::size_t ny = process.num_observations();
  const auto powers_of_y = powers(ny, m);
  const auto k = static_cast<Eigen::Index>(ny);
  const auto& o = process.emission();
  if (m == 1) {
    store(0, Eigen::MatrixXd(process.stationary().transpose() * newest), 0);
    return;
  }
  const Eigen::MatrixXd last = process.transition() * newest;
  const SparseMatrix pt = SparseMatrix(process.transition().transpose());
  // Depth-first without recursion (a window of any length must not exhaust the stack): level j in
  // [1, m - 1) keeps its matrix f_j, the digit y_j being visited and the index of its windows.
  std::vector<RowDense> forward(m);
  std::vector<Eigen::Index> digit(m, 0);
  std::vector<std::size_t> base(m, 0);
  Eigen::VectorXd g = process.stationary();
  std::size_t j = 1, index = 0;
  for (;;) {
    for (; j + 1 < m; ++j) {  // descend along digit 0
      auto& f = forward[j];
      f = g.asDiagonal() * o;
      f = pt * f;  // column y: p(x_{j+1}, older observations, y_j = y) before y_{j+1} is emitted
      digit[j] = 0;
      base[j] = index;
      g = f.col(0);
    }
    // y_{m-1} and y_m together
    const Eigen::MatrixXd sums = o.transpose() * g.asDiagonal() * last;
    for (Eigen::Index y = 0; y < k; ++y) store(index + static_cast<std::size_t>(y) * ny, sums, y);
    // the deepest level with a digit left
    do {
      if (--j == 0) return;
    } while (++digit[j] == k);
    index = base[j] + static_cast<std::size_t>(digit[j]) * powers_of_y[m - j];
    g = forward[j].col(digit[j]);
    ++j;
  }
}

}  // namespace detail

/// The window moments for window length m, by a depth-first pass over windows from the oldest
/// observation to the newest (the forward algorithm): f_1 = μ ∘ O(·, y_{-m+1}), f_{j+1} =
/// (Pᵀ f_j) ∘ O(·, y_{j+1}), and the newest step is folded into the precomputed |X| x |Y| matrices
/// P D O, P D v O, P D v² O (D the weights of x_t), so the pass costs |Y|^{m-2} sparse products
/// with |Y| columns and |Y|^{m-2} dense |Y| x |X| x 3|Y| products. Refuses (before allocating) a
/// table of more than max_table_size windows. (A function template on the process type, like
/// window_td_fixed_point: see trace_moments.)
[[nodiscard]] WindowMoments window_moments(const std::derived_from<StationaryProcess> auto& process, std::size_t m,
                                           std::size_t max_table_size = default_max_table_size) {
  constexpr const char* who = "window_moments";
  const std::size_t ny = process.num_observations();
  const Eigen::Index n = process.stationary().size();
  const std::size_t size = detail::window_table_size(who, m, ny, max_table_size, static_cast<std::size_t>(n));
  const auto k = static_cast<Eigen::Index>(ny);
  const auto& o = process.emission();
  // ω = d / μ weights x_t; values are centred on their mean so that the residual keeps its digits.
  const auto& omega = process.relative_weights();
  const double mean = process.weights().dot(process.values());
  const Eigen::VectorXd centred = process.values().array() - mean;
  Eigen::MatrixXd newest(n, 3 * k);  // [D O, D v O, D v² O] with D = diag(ω)
  newest << omega.asDiagonal() * o, omega.cwiseProduct(centred).asDiagonal() * o,
      omega.cwiseProduct(centred.cwiseAbs2()).asDiagonal() * o;

  WindowMoments out;
  out.length = m;
  out.num_observations = ny;
  out.probability = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(size));
  out.value_sum = out.probability;
  out.value_square_sum = out.probability;
  out.residual = out.probability;
  // Row `row` of `sums` holds, for the newest observation y in column block b,
  // Σ_x p(x_t = x, w) ω(x) (v(x) - mean)^b of the windows index + y.
  detail::window_pass(process, m, newest, [&](std::size_t index, const auto& sums, Eigen::Index row) {
    for (Eigen::Index y = 0; y < k; ++y) {
      const double p = sums(row, y), centred_sum = sums(row, k + y), centred_square = sums(row, 2 * k + y);
      const auto w = static_cast<Eigen::Index>(index) + y;
      out.probability[w] = p;
      out.value_sum[w] = centred_sum + mean * p;
      out.value_square_sum[w] = centred_square + 2.0 * mean * centred_sum + mean * mean * p;
      const double residual = p > 0.0 ? centred_square - centred_sum * centred_sum / p : 0.0;
      out.residual[w] = residual > 0.0 ? residual : 0.0;
    }
  });
  return out;
}

/// The window moments of a finite model with discount γ.
template <class E>
requires FiniteModel<E>
[[nodiscard]] WindowMoments window_moments(const E& env, std::size_t m, double discount,
                                           std::size_t max_table_size = default_max_table_size) {
  detail::window_table_size("window_moments", m, env.num_observations(), max_table_size);
  return window_moments(StationaryProcess(env, discount), m, max_table_size);
}

/// The optimal table: θ*(w) = E[v(x_t) | win_m(h_t) = w], the value under the belief p(x_t | w)
/// (0 for a window of probability 0).
[[nodiscard]] inline Eigen::VectorXd optimal_window_table(const WindowMoments& moments) {
  Eigen::VectorXd table = Eigen::VectorXd::Zero(moments.probability.size());
  for (Eigen::Index w = 0; w < table.size(); ++w)
    if (moments.probability[w] > 0.0) table[w] = moments.value_sum[w] / moments.probability[w];
  return table;
}

/// The smallest value error of a window of this length: Σ_w p(w) Var(v | w).
[[nodiscard]] inline double optimal_window_value_error(const WindowMoments& moments) { return moments.residual.sum(); }

/// VE(θ) = E[(θ(win_m(h_t)) - v(x_t))²] = Σ_w p(w) Var(v | w) + p(w) (θ(w) - θ*(w))² for a table θ
/// in Window's index layout (|Y|^m entries).
[[nodiscard]] inline double window_value_error(const WindowMoments& moments, const Eigen::VectorXd& table) {
  if (table.size() != moments.probability.size())
    detail::invalid("window_value_error: table must have |Y|^m = ", moments.probability.size(), " entries, got ",
                    table.size());
  if (!table.allFinite()) detail::invalid("window_value_error: table must be finite");
  double value_error = 0.0;
  for (Eigen::Index w = 0; w < table.size(); ++w) {
    const double p = moments.probability[w];
    const double gap = p > 0.0 ? table[w] - moments.value_sum[w] / p : 0.0;
    value_error += moments.residual[w] + p * gap * gap;
  }
  return value_error;
}

/// The value errors of K tables at once, the columns of a |Y|^m × K matrix (LinearTdBank's
/// weights, say), in one pass over the windows. A column with a non-finite entry (a learner that
/// diverged) gets +inf rather than an exception.
template <class Derived>
[[nodiscard]] Eigen::VectorXd window_value_errors(const WindowMoments& moments,
                                                  const Eigen::MatrixBase<Derived>& tables) {
  if (tables.rows() != moments.probability.size())
    detail::invalid("window_value_errors: tables must have |Y|^m = ", moments.probability.size(), " rows, got ",
                    tables.rows());
  const Eigen::Index k = tables.cols();
  Eigen::VectorXd value_error = Eigen::VectorXd::Constant(k, optimal_window_value_error(moments));
  for (Eigen::Index w = 0; w < tables.rows(); ++w) {
    const double p = moments.probability[w];
    if (p > 0.0) value_error.array() += p * (tables.row(w).transpose().array() - moments.value_sum[w] / p).square();
  }
  for (Eigen::Index c = 0; c < k; ++c)
    if (!std::isfinite(value_error[c]) || !tables.col(c).allFinite())
      value_error[c] = std::numeric_limits<double>::infinity();
  return value_error;
}

/// The TD(0) fixed point of the window table (features e_{w_t}, Window's index layout) with the
/// process's γ: p(w) θ(w) - γ Σ_{y'} p(w, y_{t+1} = y') θ(w') = E[1{w_t = w} r_{t+1}], where w' is
/// w shifted by one with y' as its newest observation (counted when x_{t+1} is not terminal). The
/// quantities come from the same depth-first pass as window_moments (with |Y|² + 2|Y| sums per
/// window); the system, |Y| + 1 non-zeros a row and strictly diagonally dominant (off-diagonal row
/// sums γ p(w) at most), is solved by BiCGSTAB to 1e-13 relative. Windows of probability 0 get 0.
/// Throws std::invalid_argument like window_moments, and std::runtime_error if the solve fails.
[[nodiscard]] Eigen::VectorXd window_td_fixed_point(const std::derived_from<StationaryProcess> auto& process,
                                                    std::size_t m,
                                                    std::size_t max_table_size = default_max_table_size) {
  constexpr const char* who = "window_td_fixed_point";
  const std::size_t ny = process.num_observations();
  const std::size_t size =
      detail::window_table_size(who, m, ny, max_table_size, static_cast<std::size_t>(process.stationary().size()));
  const auto k = static_cast<Eigen::Index>(ny);
  const auto& o = process.emission();
  const auto& omega = process.relative_weights();
  const Eigen::MatrixXd ahead = process.bootstrap_transition() * o;  // p(x_{t+1} non-terminal, y_{t+1} | x_t)
  Eigen::MatrixXd newest(omega.size(), k * (k + 2));  // [D O, D r̄ O, D diag(O(·, y)) P̃ O for each y]
  newest << omega.asDiagonal() * o, omega.cwiseProduct(process.rewards()).asDiagonal() * o,
      Eigen::MatrixXd::Zero(omega.size(), k * k);
  for (Eigen::Index y = 0; y < k; ++y)
    newest.middleCols(2 * k + y * k, k) = omega.cwiseProduct(o.col(y)).asDiagonal() * ahead;

  const auto table = static_cast<Eigen::Index>(size);
  Eigen::VectorXd probability = Eigen::VectorXd::Zero(table), reward = probability;
  Eigen::MatrixXd next = Eigen::MatrixXd::Zero(k, table);  // next(y', w) = p(w, x_{t+1} non-terminal, y_{t+1} = y')
  detail::window_pass(process, m, newest, [&](std::size_t index, const auto& sums, Eigen::Index row) {
    for (Eigen::Index y = 0; y < k; ++y) {
      const auto w = static_cast<Eigen::Index>(index) + y;
      probability[w] = sums(row, y);
      reward[w] = sums(row, k + y);
      next.col(w) = sums.row(row).segment(2 * k + y * k, k).transpose();
    }
  });
  // w' = (w mod |Y|^{m-1}) |Y| + y': the oldest digit drops out, y' becomes the newest.
  const auto top = static_cast<Eigen::Index>(size / ny);
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(size * (ny + 1));
  const double discount = process.discount();
  for (Eigen::Index w = 0; w < table; ++w) {
    if (!(probability[w] > 0.0)) {
      entries.emplace_back(w, w, 1.0);  // θ(w) = 0 for a window that never occurs
      continue;
    }
    entries.emplace_back(w, w, probability[w]);
    for (Eigen::Index y = 0; y < k; ++y)
      if (next(y, w) != 0.0) entries.emplace_back(w, (w % top) * k + y, -discount * next(y, w));
  }
  detail::ColumnSparse a(table, table);
  a.setFromTriplets(entries.begin(), entries.end());  // a self-loop window adds to its diagonal
  Eigen::BiCGSTAB<detail::ColumnSparse, Eigen::DiagonalPreconditioner<double>> solver;
  solver.setTolerance(1e-13);
  solver.setMaxIterations(10000);
  solver.compute(a);
  const Eigen::VectorXd theta = solver.solve(reward);
  if (solver.info() != Eigen::Success || !theta.allFinite())
    throw std::runtime_error(detail::message(who, ": BiCGSTAB did not converge (estimated error ", solver.error(),
                                             " after ", solver.iterations(), " iterations)"));
  return theta;
}

}  // namespace memtrace
