#pragma once
// The geometry of trace space (paper §4): traces of whole histories (eq. (2)), windows, the set
// Z_λ^m of all length-m traces, and the quantities of Lemmas 4.2 (concentration), 4.3 (separation)
// and 4.4 (Minkowski dimension). Histories are chronological: oldest first, h.back() is the paper's y_0.
// See docs/analysis.md.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <span>
#include <vector>

#include "memtrace/env/fwd.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// z_λ(h) = (1 - λ) Σ_{k=0}^{|h|-1} λ^k e_{y_{-k}} (eq. (2)), summed directly (not by the
/// recursion), for a finite history h over |Y| one-hot observations. The empty history gives 0.
[[nodiscard]] inline Eigen::VectorXd trace_of(std::span<const Observation> history, double lambda,
                                              std::size_t num_observations) {
  detail::check_lambda("trace_of", lambda);
  detail::check_num_observations("trace_of", num_observations);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(num_observations));
  const std::size_t n = history.size();
  for (std::size_t k = 0; k < n; ++k) {
    const Observation y = history[n - 1 - k];
    detail::check_observation("trace_of", y, num_observations);
    z[static_cast<Eigen::Index>(y)] += (1.0 - lambda) * std::pow(lambda, static_cast<double>(k));
  }
  return z;
}

/// win_m(h): the m most recent observations of h, chronological; all of h if it is shorter (the
/// missing ones are the paper's zero padding).
[[nodiscard]] inline std::vector<Observation> window_of(std::span<const Observation> history, std::size_t m) {
  if (m == 0) detail::invalid("window_of: m must be at least 1, got 0");
  const std::size_t count = history.size() < m ? history.size() : m;
  return {history.end() - static_cast<std::ptrdiff_t>(count), history.end()};
}

/// Σ_i z_i = 1 - λ^m for every trace of a length-m history (eq. (4)): the traces lie in an
/// affine subspace of dimension |Y| - 1.
[[nodiscard]] inline double trace_subspace_sum(double lambda, std::size_t m) {
  detail::check_lambda("trace_subspace_sum", lambda);
  return 1.0 - std::pow(lambda, static_cast<double>(m));
}

/// Z_λ^m = { z_λ(h) : h ∈ Y^m } as a |Y| × |Y|^m matrix: column j is the trace of the length-m
/// history whose full-window index (Window's layout) is j, so y_{-k} is digit k of j in base |Y|.
/// Built by the self-similarity Z^m = λ Z^{m-1} + (1 - λ) Y in O(|Y|^{m+1}).
/// Refuses, before allocating, a matrix of more than max_entries = |Y|·|Y|^m doubles.
[[nodiscard]] inline Eigen::MatrixXd trace_set(double lambda, std::size_t num_observations, std::size_t m,
                                               std::size_t max_entries = std::size_t{1} << 26) {
  detail::check_lambda("trace_set", lambda);
  detail::check_num_observations("trace_set", num_observations);
  // Checked before powers() allocates m + 1 words (checked_pow is 0 on overflow).
  const std::size_t windows = m <= max_entries ? detail::checked_pow(num_observations, m) : 0;
  const std::size_t entries = detail::checked_mul(windows, num_observations);
  if (entries == 0 || entries > max_entries)
    detail::invalid("trace_set: |Y|^(m+1) with |Y| = ", num_observations, " and m = ", m,
                    " entries exceed max_entries = ", max_entries);
  const auto p = detail::powers(num_observations, m);
  const auto n = static_cast<Eigen::Index>(num_observations);
  Eigen::MatrixXd z = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(p.back()));
  // After step c the first |Y|^c columns hold Z^c; column y + |Y| j of Z^{c+1} extends the history
  // of column j of Z^c (the older part) by the newest observation y.
  for (std::size_t c = 0; c < m; ++c) {
    const auto older = static_cast<Eigen::Index>(p[c]);
    for (Eigen::Index j = older - 1; j >= 0; --j) {
      const Eigen::VectorXd prev = z.col(j);
      for (Eigen::Index y = 0; y < n; ++y) {
        auto col = z.col(y + n * j);
        col = lambda * prev;
        col[y] += 1.0 - lambda;
      }
    }
  }
  return z;
}

/// Lemma 4.2: histories with the same length-m window have traces at most √2 λ^m apart.
[[nodiscard]] inline double concentration_bound(double lambda, std::size_t m) {
  detail::check_lambda("concentration_bound", lambda);
  return std::numbers::sqrt2 * std::pow(lambda, static_cast<double>(m));
}

/// Lemma 4.3: for λ <= 1/2, histories of equal (or infinite) length whose length-m windows
/// differ have traces at least √2 (1 - 2λ) λ^{m-1} apart. (A history and a shorter one can be
/// closer: see docs/analysis.md.)
[[nodiscard]] inline double separation_bound(double lambda, std::size_t m) {
  detail::check_lambda("separation_bound", lambda);
  if (lambda > 0.5) detail::invalid("separation_bound: lambda must be at most 1/2, got ", lambda);
  if (m == 0) detail::invalid("separation_bound: m must be at least 1, got 0");
  return std::numbers::sqrt2 * (1.0 - 2.0 * lambda) * std::pow(lambda, static_cast<double>(m - 1));
}

/// d_λ = log|Y| / log(1/λ) (Lemma 4.4): the Minkowski dimension of Z_λ when λ < 1/2.
/// λ = 0 gives 0 (Z_0 is the finite set of one-hot vectors).
[[nodiscard]] inline double d_lambda(double lambda, std::size_t num_observations) {
  detail::check_lambda("d_lambda", lambda);
  detail::check_num_observations("d_lambda", num_observations);
  if (lambda == 0.0) return 0.0;
  return std::log(static_cast<double>(num_observations)) / std::log(1.0 / lambda);
}

/// dim(Z_λ) <= min{|Y| - 1, d_λ} for every λ in [0, 1), with equality to d_λ when λ < 1/2
/// (Lemma 4.4).
[[nodiscard]] inline double minkowski_dimension_bound(double lambda, std::size_t num_observations) {
  const double d = d_lambda(lambda, num_observations);
  const auto affine = static_cast<double>(num_observations - 1);
  return d < affine ? d : affine;
}

}  // namespace memtrace
