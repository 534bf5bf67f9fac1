#pragma once
// The minimal Lipschitz constant of a value function in trace space (paper §5, F_{λ,L}): the
// smallest L such that some L-Lipschitz f has f(z_λ(h)) = v(h) on a finite set of histories, the
// enumeration of the length-m histories of a finite model with their values v(h) = E[v(x_t) | h],
// and λ* = argmin_λ of that constant (§5.2 "Slow forgetting", Figure 3). Histories are chronological:
// oldest first, h.back() is the paper's y_0. See docs/theory.md.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "memtrace/analysis/markov.hpp"
#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/forward_filter.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A history of observations (chronological, newest last) with the value to represent there and its probability.
struct LabelledHistory {
  std::vector<Observation> history;
  double value = 0.0;
  double probability = 0.0;
};

/// Two values count as equal when they differ by at most this times the largest |value| of the set
/// (belief values carry rounding of a few ulps; a spurious difference between histories with the
/// same trace would make the constant infinite).
inline constexpr double lipschitz_value_tolerance = 1e-10;

/// The most histories labelled_histories enumerates by default (|Y|^n ≤ 2^16): the pairs of
/// minimal_lipschitz_constant cost O(N²).
inline constexpr std::size_t default_max_histories = std::size_t{1} << 16;

/// The minimal Lipschitz constant and a pair of histories that attains it.
struct LipschitzPair {
  /// max over pairs with different values of |v(h) − v(h')| / ‖z_λ(h) − z_λ(h')‖ (+infinity for
  /// coinciding traces with different values, 0 when no two values differ).
  double constant = 0.0;
  /// Indices of a maximising pair, first < second; both 0 when the constant is 0.
  std::size_t first = 0;
  std::size_t second = 0;
};

namespace detail {

inline void check_histories(const char* who, std::span<const LabelledHistory> histories, std::size_t num_observations) {
  for (std::size_t i = 0; i < histories.size(); ++i) {
    const LabelledHistory& h = histories[i];
    // An infinite value would make the tolerance infinite and every pair "equal": L = 0, silently.
    if (!std::isfinite(h.value)) invalid(who, ": histories[", i, "].value must be finite, got ", h.value);
    for (std::size_t k = 0; k < h.history.size(); ++k)
      if (h.history[k] >= num_observations)
        invalid(who, ": histories[", i, "].history[", k, "] must be an observation in [0, ", num_observations,
                "), got ", h.history[k]);
  }
}

/// The traces z_λ(h) (eq. (2)) of all histories as the columns of a |Y| × N matrix: trace_of's sum,
/// term for term in the same order (so bit-identical to it), written in place (GCC 12 -O3 warns
/// falsely, -Wstringop-overread, on assigning trace_of's vector to a column).
[[nodiscard]] inline Eigen::MatrixXd trace_matrix(std::span<const LabelledHistory> histories, double lambda,
                                                  std::size_t num_observations) {
  Eigen::MatrixXd z =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(num_observations), static_cast<Eigen::Index>(histories.size()));
  for (std::size_t i = 0; i < histories.size(); ++i) {
    const std::vector<Observation>& h = histories[i].history;
    const std::size_t n = h.size();
    for (std::size_t k = 0; k < n; ++k)
      z(static_cast<Eigen::Index>(h[n - 1 - k]), static_cast<Eigen::Index>(i)) +=
          (1.0 - lambda) * std::pow(lambda, static_cast<double>(k));
  }
  return z;
}

/// The pair maximisation over precomputed traces; values are checked already.
[[nodiscard]] inline LipschitzPair lipschitz_pairs(std::span<const LabelledHistory> histories, const Eigen::MatrixXd& z,
                                                   double value_tolerance) {
  double scale = 0.0;
  for (const LabelledHistory& h : histories) scale = std::max(scale, std::abs(h.value));
  const double tolerance = value_tolerance * scale;
  LipschitzPair best;
  const std::size_t n = histories.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double gap = std::abs(histories[i].value - histories[j].value);
      if (!(gap > tolerance)) continue;  // equal values: any f maps both traces to one value
      const double distance = (z.col(static_cast<Eigen::Index>(i)) - z.col(static_cast<Eigen::Index>(j))).norm();
      const double ratio = distance > 0.0 ? gap / distance : std::numeric_limits<double>::infinity();
      if (ratio > best.constant) best = {ratio, i, j};
      if (std::isinf(ratio)) return best;
    }
  }
  return best;
}

/// minimal_lipschitz_pair's checks and work, with `who` naming the public function called.
[[nodiscard]] inline LipschitzPair lipschitz_pair_checked(const char* who, std::span<const LabelledHistory> histories,
                                                          double lambda, std::size_t num_observations,
                                                          double value_tolerance) {
  check_lambda(who, lambda);
  check_num_observations(who, num_observations);
  if (!(value_tolerance >= 0.0 && value_tolerance < 1.0))
    invalid(who, ": value_tolerance must be in [0, 1), got ", value_tolerance);
  check_histories(who, histories, num_observations);
  return lipschitz_pairs(histories, trace_matrix(histories, lambda, num_observations), value_tolerance);
}

}  // namespace detail

/// The smallest L such that some L-Lipschitz f on trace space has f(z_λ(h)) = value(h) for every
/// given history, and a pair attaining it. By McShane's extension (and Kirszbraun's, as in
/// Lemma 5.4) this is max |v(h) − v(h')| / ‖z_λ(h) − z_λ(h')‖ over pairs with different values
/// (clamping f to [v_min, v_max] keeps it L-Lipschitz, so F_{λ,L}'s range costs nothing). Traces
/// are trace_of (eq. (2) over the given observations, zero before them), one-hot over |Y|,
/// computed once; the pairs cost O(N² |Y|). Values within value_tolerance × max|value| count as
/// equal. Throws std::invalid_argument for λ ∉ [0, 1), |Y| = 0, an observation ≥ |Y| or a value that
/// is not finite.
[[nodiscard]] inline LipschitzPair minimal_lipschitz_pair(std::span<const LabelledHistory> histories, double lambda,
                                                          std::size_t num_observations,
                                                          double value_tolerance = lipschitz_value_tolerance) {
  return detail::lipschitz_pair_checked("minimal_lipschitz_pair", histories, lambda, num_observations, value_tolerance);
}

/// The smallest L such that some L-Lipschitz function f of the trace (eq. (2) via trace_of, one-hot |Y|)
/// has f(z_λ(h)) = value(h) for every given history: max over pairs with different values of
/// |v(h) − v(h')| / ‖z(h) − z(h')‖. +infinity if two histories with the same trace have different values;
/// 0 for fewer than two histories.
[[nodiscard]] inline double minimal_lipschitz_constant(std::span<const LabelledHistory> histories, double lambda,
                                                       std::size_t num_observations) {
  return detail::lipschitz_pair_checked("minimal_lipschitz_constant", histories, lambda, num_observations,
                                        lipschitz_value_tolerance)
      .constant;
}

/// Where the histories of labelled_histories start: from the stationary distribution (a length-m
/// window of the stationary, infinitely long history) or from the model's initial distribution.
enum class HistoryStart { stationary, initial };

namespace detail {

/// |Y|^m, or throws naming m and the size when it overflows or exceeds max_histories.
inline std::size_t history_count(const char* who, std::size_t m, std::size_t num_observations,
                                 std::size_t max_histories) {
  if (m == 0) invalid(who, ": m must be at least 1, got 0");
  // The enumeration keeps a belief per level: bound the depth even when |Y|^m is small (|Y| = 1).
  if (m > max_histories) invalid(who, ": m = ", m, " exceeds max_histories = ", max_histories);
  const std::size_t count = checked_pow(num_observations, m);  // 0: overflow (|Y| >= 1 here)
  if (count == 0)
    invalid(who, ": |Y|^m histories with |Y| = ", num_observations, " and m = ", m, " overflow std::size_t");
  if (count > max_histories)
    invalid(who, ": |Y|^m = ", count, " histories with |Y| = ", num_observations, " and m = ", m,
            " exceed max_histories = ", max_histories);
  return count;
}

}  // namespace detail

/// All length-m histories h with p(h, x_t non-terminal) > 0 when the state of the oldest
/// observation is drawn from `start` (|X| entries, a distribution), with v(h) = E[v(x_t) | h, x_t
/// non-terminal] (the belief filter's value: the process's state values with its γ) and
/// probability p(h, x_t non-terminal), the weight the value error gives h (p(h) for a continuing
/// model). The forward filter (forward_filter.hpp) runs on the process's chain: a terminal state
/// inside h emits its observation and restarts, as in the stationary history; a history whose last
/// state is terminal with probability 1 is not listed. Enumerated depth-first from the oldest
/// observation (normalised beliefs: no underflow), in increasing Window<>(m, |Y|) index order.
/// Refuses, before allocating, m = 0 or more than max_histories = |Y|^m histories.
[[nodiscard]] inline std::vector<LabelledHistory> labelled_histories(
    const StationaryProcess& process, std::size_t m, const Eigen::VectorXd& start,
    std::size_t max_histories = default_max_histories) {
  constexpr const char* who = "labelled_histories";
  const std::size_t ny = process.num_observations();
  const std::size_t count = detail::history_count(who, m, ny, max_histories);
  if (start.size() != process.stationary().size())
    detail::invalid(who, ": start must have |X| = ", process.stationary().size(), " entries, got ", start.size());
  detail::check_distribution(who, "start", start, default_row_sum_tolerance);
  const Eigen::MatrixXd& o = process.emission();
  const SparseMatrix pt = SparseMatrix(process.transition().transpose());
  std::vector<LabelledHistory> out;
  out.reserve(count);
  // Depth-first without recursion (a history of any length must not exhaust the stack): level j
  // keeps the prediction of x_j, the probability of y_1..y_{j-1} and the observation y_j it tries.
  std::vector<Observation> h(m, 0);
  std::vector<Eigen::VectorXd> predicted(m);
  std::vector<double> probability(m, 1.0);
  predicted[0] = start;
  std::size_t depth = 0;
  for (;;) {
    // b: p(x_j | y_1..y_j) before x_{j+1} is predicted; mass: p(y_j | y_1..y_{j-1}).
    Eigen::VectorXd b = predicted[depth];
    const double mass = condition_belief(b, o.col(static_cast<Eigen::Index>(h[depth])));
    if (mass > 0.0) {
      if (depth + 1 == m) {
        const NonTerminalValue last = non_terminal_value(b, process.values(), process.terminal());
        // p(x_t non-terminal | h) is 1 for a continuing model: not multiplied in, so p(h) stays exact.
        const double weight = process.episodic() ? last.probability : 1.0;
        if (weight > 0.0) out.push_back({h, last.value, probability[depth] * mass * weight});
      } else {
        ++depth;
        predicted[depth] = predict_belief(pt, b);
        probability[depth] = probability[depth - 1] * mass;
        h[depth] = 0;
        continue;
      }
    }
    // the next observation at the deepest level that has one left
    while (++h[depth] == ny) {
      if (depth == 0) return out;
      --depth;
    }
  }
}

/// The same from the stationary distribution: length-m windows of the stationary history.
[[nodiscard]] inline std::vector<LabelledHistory> labelled_histories(
    const StationaryProcess& process, std::size_t m, std::size_t max_histories = default_max_histories) {
  return labelled_histories(process, m, process.stationary(), max_histories);
}

/// The same for a finite model with discount γ, starting from its stationary or initial distribution.
template <class E>
requires FiniteModel<E>
[[nodiscard]] std::vector<LabelledHistory> labelled_histories(const E& env, std::size_t m, double discount,
                                                              HistoryStart start = HistoryStart::stationary,
                                                              std::size_t max_histories = default_max_histories) {
  detail::history_count("labelled_histories", m, env.num_observations(), max_histories);
  const StationaryProcess process(env, discount);
  if (start == HistoryStart::stationary) return labelled_histories(process, m, max_histories);
  const Eigen::MatrixXd initial = detail::to_dense(env.model().initial());
  return labelled_histories(process, m, Eigen::VectorXd(initial.col(0)), max_histories);
}

/// The minimal Lipschitz constant over the length-m histories of the stationary process (the
/// paper's "length-4 histories" restriction of Figure 3 for m = 4).
[[nodiscard]] inline double minimal_lipschitz_constant(const StationaryProcess& process, double lambda, std::size_t m,
                                                       std::size_t max_histories = default_max_histories) {
  detail::check_lambda("minimal_lipschitz_constant", lambda);
  const auto histories = labelled_histories(process, m, max_histories);
  return minimal_lipschitz_constant(histories, lambda, process.num_observations());
}

/// The same for a finite model with discount γ.
template <class E>
requires FiniteModel<E>
[[nodiscard]] double minimal_lipschitz_constant(const E& env, double lambda, std::size_t m, double discount,
                                                HistoryStart start = HistoryStart::stationary,
                                                std::size_t max_histories = default_max_histories) {
  detail::check_lambda("minimal_lipschitz_constant", lambda);
  const auto histories = labelled_histories(env, m, discount, start, max_histories);
  return minimal_lipschitz_constant(histories, lambda, env.num_observations());
}

/// λ* and the minimal Lipschitz constant there.
struct LipschitzOptimum {
  double lambda = 0.0;
  double constant = 0.0;
};

/// λ* = argmin over λ ∈ [0, 1) of minimal_lipschitz_constant (the paper's λ* of §5.2, with R = 0
/// on the given histories): the grid λ_k = k / grid_points, k = 0..grid_points−1 (ties go to the
/// smallest λ), then golden-section search on [λ_{k−1}, λ_{k+1}] around the grid minimum down to
/// width 1e-9, keeping the better of the two. The constant is piecewise smooth in λ with infinite
/// spikes where two traces coincide (Appendix A), so this is a local refinement of a global grid
/// search. Throws std::invalid_argument like minimal_lipschitz_constant, or for grid_points < 2.
[[nodiscard]] inline LipschitzOptimum lipschitz_optimal_lambda(std::span<const LabelledHistory> histories,
                                                               std::size_t num_observations,
                                                               std::size_t grid_points = 200) {
  constexpr const char* who = "lipschitz_optimal_lambda";
  if (grid_points < 2) detail::invalid(who, ": grid_points must be at least 2, got ", grid_points);
  detail::check_num_observations(who, num_observations);
  detail::check_histories(who, histories, num_observations);
  const auto at = [&](double lambda) {
    return detail::lipschitz_pairs(histories, detail::trace_matrix(histories, lambda, num_observations),
                                   lipschitz_value_tolerance)
        .constant;
  };
  const double step = 1.0 / static_cast<double>(grid_points);
  LipschitzOptimum best{0.0, at(0.0)};
  std::size_t best_k = 0;
  for (std::size_t k = 1; k < grid_points; ++k) {
    const double lambda = static_cast<double>(k) * step;
    const double constant = at(lambda);
    if (constant < best.constant) {
      best = {lambda, constant};
      best_k = k;
    }
  }
  if (!std::isfinite(best.constant) || best.constant == 0.0) return best;
  double a = best_k == 0 ? 0.0 : static_cast<double>(best_k - 1) * step;
  double b = best_k + 1 == grid_points ? best.lambda : static_cast<double>(best_k + 1) * step;
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = b - ratio * (b - a), d = a + ratio * (b - a);
  double fc = at(c), fd = at(d);
  while (b - a > 1e-9) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = at(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = at(d);
    }
  }
  if (fc < best.constant) best = {c, fc};
  if (fd < best.constant) best = {d, fd};
  return best;
}

}  // namespace memtrace
