#pragma once
// The matrix vocabulary of the finite models: the sparse row-stochastic matrices that hold
// transitions and emissions (row-stochastic: m(x, x') = p(x' | x)), and the checks every model and
// every analysis applies to them before use. See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Row-major sparse matrix: the storage of transition matrices (rows are sampled, so row-major).
using SparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

/// Rows of a stochastic matrix may differ from 1 by this much (rounding in a user's numbers).
inline constexpr double default_row_sum_tolerance = 1e-9;

namespace detail {

/// `m` with its zero entries removed and compressed: the alias tables then hold only reachable entries.
[[nodiscard]] inline SparseMatrix pruned(SparseMatrix m) {
  m.prune([](Eigen::Index, Eigen::Index, double v) { return v != 0.0; });
  m.makeCompressed();
  return m;
}

/// Throws unless `m` is rows x cols; `what` names the matrix and its expected shape.
inline void check_shape(const char* who, const char* what, Eigen::Index rows, Eigen::Index cols, Eigen::Index want_rows,
                        Eigen::Index want_cols) {
  if (rows != want_rows || cols != want_cols)
    invalid(who, ": ", what, " must be ", want_rows, " x ", want_cols, ", got ", rows, " x ", cols);
}

/// Throws unless every entry of the row-major sparse `m` is finite and non-negative and every row
/// sums to 1 within `tolerance`; the message names the matrix, the row (and entry) and the sum.
inline void check_row_stochastic(const char* who, const char* name, const SparseMatrix& m, double tolerance) {
  for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
    double sum = 0.0;
    for (SparseMatrix::InnerIterator it(m, r); it; ++it) {
      if (!std::isfinite(it.value()))
        invalid(who, ": ", name, "(", r, ", ", it.col(), ") must be a finite probability, got ", it.value());
      if (it.value() < 0.0)
        invalid(who, ": ", name, "(", r, ", ", it.col(), ") must not be negative, got ", it.value());
      sum += it.value();
    }
    if (!(std::abs(sum - 1.0) <= tolerance))
      invalid(who, ": ", name, " row ", r, " sums to ", sum, ", expected 1 (tolerance ", tolerance, ")");
  }
}

inline void check_row_stochastic(const char* who, const char* name, const Eigen::MatrixXd& m, double tolerance) {
  check_row_stochastic(who, name, SparseMatrix(m.sparseView(1.0, 0.0)), tolerance);
}

/// Throws unless `p` is a probability vector (finite, non-negative, summing to 1 within `tolerance`).
inline void check_distribution(const char* who, const char* name, const Eigen::VectorXd& p, double tolerance) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i])) invalid(who, ": ", name, "[", i, "] must be a finite probability, got ", p[i]);
    if (p[i] < 0.0) invalid(who, ": ", name, "[", i, "] must not be negative, got ", p[i]);
    sum += p[i];
  }
  if (!(std::abs(sum - 1.0) <= tolerance))
    invalid(who, ": ", name, " sums to ", sum, ", expected 1 (tolerance ", tolerance, ")");
}

/// How far from 1 a computed sum of `terms` stored entries may be and still count as 1 up to
/// rounding: terms · 2^-52, i.e. 2 terms u (u = 2^-53), above the classic (terms − 1) u bound of
/// a sum of numbers that sum to 1 exactly. A row within it is left as given.
[[nodiscard]] inline double rounding_of_sum(Eigen::Index terms) noexcept {
  return static_cast<double>(terms) * std::numeric_limits<double>::epsilon();
}

/// Divides every row of the row-major sparse `m` (already checked by check_row_stochastic) whose
/// sum differs from 1 by more than its rounding by that sum: a model accepted within a tolerance
/// holds rows that sum to 1 up to rounding, so every analysis, which checks to
/// default_row_sum_tolerance, accepts it. Rows within rounding of 1 are left bit for bit.
inline void renormalize_rows(SparseMatrix& m) {
  for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
    double sum = 0.0;
    Eigen::Index terms = 0;
    for (SparseMatrix::InnerIterator it(m, r); it; ++it, ++terms) sum += it.value();
    if (std::abs(sum - 1.0) > rounding_of_sum(terms))
      for (SparseMatrix::InnerIterator it(m, r); it; ++it) it.valueRef() /= sum;
  }
}

/// Divides one dense distribution (a vector, or a row of a matrix) by its sum unless the sum is
/// within rounding of 1 (zeros add no rounding: only the nonzero entries count).
template <class Derived>
void renormalize_entries(Eigen::DenseBase<Derived>& p) {
  double sum = 0.0;
  Eigen::Index terms = 0;
  for (Eigen::Index i = 0; i < p.size(); ++i)
    if (p(i) != 0.0) {
      sum += p(i);
      ++terms;
    }
  if (std::abs(sum - 1.0) > rounding_of_sum(terms)) p /= sum;
}

/// renormalize_rows of a dense matrix.
inline void renormalize_rows(Eigen::MatrixXd& m) {
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    auto row = m.row(r);
    renormalize_entries(row);
  }
}

/// Throws unless every stored entry of `m` is finite.
inline void check_finite(const char* who, const char* name, const SparseMatrix& m) {
  for (Eigen::Index r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      if (!std::isfinite(it.value()))
        invalid(who, ": ", name, "(", r, ", ", it.col(), ") must be a finite reward, got ", it.value());
}

inline void check_tolerance(const char* who, double tolerance) {
  if (!(tolerance >= 0.0 && tolerance < 1.0)) invalid(who, ": tolerance must be in [0, 1), got ", tolerance);
}

/// A model's terminal flags: an empty `terminal` becomes "no state is terminal" (one flag per state
/// of `initial`); throws unless a non-empty one has one flag per state, or if `initial` puts
/// probability on a terminal state (an episode would start ended).
inline void complete_terminal_flags(const char* who, std::vector<bool>& terminal, const Eigen::VectorXd& initial) {
  const auto n = static_cast<std::size_t>(initial.size());
  if (!terminal.empty() && terminal.size() != n)
    invalid(who, ": terminal must be empty or have one flag per state (", n, "), got ", terminal.size());
  if (terminal.empty()) terminal.assign(n, false);
  for (Eigen::Index x = 0; x < initial.size(); ++x)
    if (terminal[static_cast<std::size_t>(x)] && initial[x] > 0.0)
      invalid(who, ": initial puts probability ", initial[x], " on terminal state ", x);
}

/// Throws unless 0 <= p <= 1 (NaN fails too); `name` is the parameter.
inline void check_probability(const char* who, const char* name, double p) {
  if (!(p >= 0.0 && p <= 1.0)) invalid(who, ": ", name, " must be in [0, 1], got ", p);
}

}  // namespace detail
}  // namespace memtrace
