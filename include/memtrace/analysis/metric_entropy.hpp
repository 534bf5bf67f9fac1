#pragma once
// The bounds of paper §5 (complexity of offline on-policy evaluation) as functions: the metric
// entropies of the window class F_m (Lemma 5.3) and of the L-Lipschitz trace class F_{λ,L}
// (Lemma 5.4), the translations between the two (Theorems 5.5, window to trace, and 5.6, trace to
// window) and the Hoeffding bound (Theorem 5.1, Lemma 5.2). The T-maze's constants (Theorem 5.8)
// are in tmaze_complexity.hpp, beside its histories.
// Logarithms are natural, as in the paper; Δ = v̄ − v_ is the value range ("value_range").
// Entropies overflow quickly (|Y|^m): each has a log_ variant returning log H, which stays finite
// where H is not. See docs/theory.md.

#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>

#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail::entropy {

/// Throws unless value is positive and finite (NaN fails too).
inline void check_positive(const char* who, const char* name, double value) {
  if (!(value > 0.0 && value < std::numeric_limits<double>::infinity()))
    invalid(who, ": ", name, " must be positive and finite, got ", value);
}

/// The arguments of a cover of values: |Y| >= 1, ε and Δ positive and finite.
inline void check_cover(const char* who, std::size_t num_observations, double epsilon, double value_range) {
  check_num_observations(who, num_observations);
  check_positive(who, "epsilon", epsilon);
  check_positive(who, "value_range", value_range);
}

/// The same for the L-Lipschitz class, L checked after |Y| (the order of the arguments).
inline void check_lipschitz_cover(const char* who, std::size_t num_observations, double lipschitz, double epsilon,
                                  double value_range) {
  check_num_observations(who, num_observations);
  check_positive(who, "lipschitz", lipschitz);
  check_positive(who, "epsilon", epsilon);
  check_positive(who, "value_range", value_range);
}

/// log⌈c⌉ for c > 0 (the log of a number of grid points); +inf if c overflowed to inf.
[[nodiscard]] inline double log_ceil(double c) { return std::log(std::ceil(c)); }

/// a · b^e from its logarithm when the direct product would overflow: finite exactly when the
/// result is representable (up to rounding at the edge), +inf beyond.
[[nodiscard]] inline double from_log(double log_value) {
  return log_value > std::log(std::numeric_limits<double>::max()) ? std::numeric_limits<double>::infinity()
                                                                  : std::exp(log_value);
}

/// log(factor · log_count) where the entropy is factor · log_count; -inf when log_count = 0 (a
/// single grid point, zero entropy).
[[nodiscard]] inline double log_product(double log_factor, double log_count) {
  if (log_count == 0.0) return -std::numeric_limits<double>::infinity();
  return log_factor + std::log(log_count);
}

}  // namespace detail::entropy

/// Lemma 5.3: H_ε(F_m) = |Y|^m log⌈Δ/(2ε)⌉, exactly (the cover is also a packing). m = 0 is
/// the class of constants. Computed as a product while |Y|^m is representable and from its
/// logarithm beyond, so the result is finite whenever it is representable as a double and +inf
/// past about 1.8e308 (|Y| = 5: m ≳ 440). ⌈·⌉ is taken in floating point, so a ratio that is an
/// integer in exact arithmetic may round up to the next one.
[[nodiscard]] inline double window_entropy(std::size_t m, std::size_t num_observations, double epsilon,
                                           double value_range) {
  constexpr const char* who = "window_entropy";
  detail::entropy::check_cover(who, num_observations, epsilon, value_range);
  const double log_count = detail::entropy::log_ceil(value_range / (2.0 * epsilon));
  const double windows = std::pow(static_cast<double>(num_observations), static_cast<double>(m));
  if (std::isfinite(windows)) return windows * log_count;
  return detail::entropy::from_log(static_cast<double>(m) * std::log(static_cast<double>(num_observations)) +
                                   std::log(log_count));
}

/// log H_ε(F_m) = m log|Y| + log log⌈Δ/(2ε)⌉ (Lemma 5.3): finite for every m, so tables up
/// to any window length print; -inf when ⌈Δ/(2ε)⌉ = 1 (one value covers [v_, v̄]: H = 0).
[[nodiscard]] inline double log_window_entropy(std::size_t m, std::size_t num_observations, double epsilon,
                                               double value_range) {
  constexpr const char* who = "log_window_entropy";
  detail::entropy::check_cover(who, num_observations, epsilon, value_range);
  return detail::entropy::log_product(static_cast<double>(m) * std::log(static_cast<double>(num_observations)),
                                      detail::entropy::log_ceil(value_range / (2.0 * epsilon)));
}

/// log of the first bound of Lemma 5.4, log⌈Δ/ε⌉ |Y| (2L/ε)^{d_λ}, with d_λ = log|Y| / log(1/λ)
/// (Lemma 4.4; d_0 = 0). The proof's |S_1| = |Y|^m <= |Y| (2L/ε)^{d_λ} needs 2L >= ε: for
/// 2L < ε the formula can fall below the entropy of the constants, log⌈Δ/ε⌉.
[[nodiscard]] inline double log_trace_entropy_bound_dimension(double lambda, double lipschitz,
                                                              std::size_t num_observations, double epsilon,
                                                              double value_range) {
  constexpr const char* who = "log_trace_entropy_bound_dimension";
  detail::check_lambda(who, lambda);
  detail::entropy::check_lipschitz_cover(who, num_observations, lipschitz, epsilon, value_range);
  const double d = d_lambda(lambda, num_observations);
  const double log_factor =
      std::log(static_cast<double>(num_observations)) + (d == 0.0 ? 0.0 : d * std::log(2.0 * lipschitz / epsilon));
  return detail::entropy::log_product(log_factor, detail::entropy::log_ceil(value_range / epsilon));
}

/// The first bound of Lemma 5.4: H_ε(F_{λ,L}) <= log⌈Δ/ε⌉ |Y| (2L/ε)^{d_λ} (cover of Z_λ by the
/// length-m traces S_1). +inf when not representable (d_λ grows like 1/(1 − λ) as λ → 1).
[[nodiscard]] inline double trace_entropy_bound_dimension(double lambda, double lipschitz, std::size_t num_observations,
                                                          double epsilon, double value_range) {
  return detail::entropy::from_log(
      log_trace_entropy_bound_dimension(lambda, lipschitz, num_observations, epsilon, value_range));
}

/// log of the second bound of Lemma 5.4, log⌈Δ/ε⌉ ⌈2L√(|Y| − 1)/ε⌉^{|Y|−1}; independent of λ.
/// |Y| = 1 gives log log⌈Δ/ε⌉ (Z_λ is one point: one grid point suffices).
[[nodiscard]] inline double log_trace_entropy_bound_subspace(double lipschitz, std::size_t num_observations,
                                                             double epsilon, double value_range) {
  constexpr const char* who = "log_trace_entropy_bound_subspace";
  detail::entropy::check_lipschitz_cover(who, num_observations, lipschitz, epsilon, value_range);
  const auto affine = static_cast<double>(num_observations - 1);
  const double log_factor =
      num_observations == 1 ? 0.0 : affine * std::log(std::ceil(2.0 * lipschitz * std::sqrt(affine) / epsilon));
  return detail::entropy::log_product(log_factor, detail::entropy::log_ceil(value_range / epsilon));
}

/// The second bound of Lemma 5.4: H_ε(F_{λ,L}) <= log⌈Δ/ε⌉ ⌈2L√(|Y| − 1)/ε⌉^{|Y|−1} (a grid S_2
/// on the (|Y| − 1)-dimensional affine subspace of eq. (4)). +inf when not representable.
[[nodiscard]] inline double trace_entropy_bound_subspace(double lipschitz, std::size_t num_observations, double epsilon,
                                                         double value_range) {
  return detail::entropy::from_log(log_trace_entropy_bound_subspace(lipschitz, num_observations, epsilon, value_range));
}

/// log of the smaller of the two bounds of Lemma 5.4.
[[nodiscard]] inline double log_trace_entropy_bound(double lambda, double lipschitz, std::size_t num_observations,
                                                    double epsilon, double value_range) {
  const double dimension = log_trace_entropy_bound_dimension(lambda, lipschitz, num_observations, epsilon, value_range);
  const double subspace = log_trace_entropy_bound_subspace(lipschitz, num_observations, epsilon, value_range);
  return dimension < subspace ? dimension : subspace;
}

/// Lemma 5.4: H_ε(F_{λ,L}) <= min of its two bounds, O(L^{min{d_λ, |Y| − 1}}).
[[nodiscard]] inline double trace_entropy_bound(double lambda, double lipschitz, std::size_t num_observations,
                                                double epsilon, double value_range) {
  return detail::entropy::from_log(log_trace_entropy_bound(lambda, lipschitz, num_observations, epsilon, value_range));
}

/// Theorem 5.6 (trace to window): m(λ, L) = ⌈log(L/ε) / log(1/λ)⌉, the window length whose class F_m
/// approximates every f in F_{λ,L} to ε (λ^m <= ε/L), for ε in (0, L). λ = 0 gives 1, the limit
/// λ → 0+: the formula's 0 would need λ^0 = 1 <= ε/L, false for ε < L (z_0(h) = e_{y_0} is a
/// function of win_1). Throws if m would exceed 2^53 (λ within ~1e-14 of 1).
[[nodiscard]] inline std::size_t trace_to_window_length(double lambda, double lipschitz, double epsilon) {
  constexpr const char* who = "trace_to_window_length";
  detail::check_lambda(who, lambda);
  detail::entropy::check_positive(who, "lipschitz", lipschitz);
  detail::entropy::check_positive(who, "epsilon", epsilon);
  if (!(epsilon < lipschitz))
    detail::invalid(who, ": epsilon must be below lipschitz = ", lipschitz, " (Theorem 5.6), got ", epsilon);
  if (lambda == 0.0) return 1;
  const double m = std::ceil(std::log(lipschitz / epsilon) / std::log(1.0 / lambda));
  if (!(m <= 9007199254740992.0))
    detail::invalid(who, ": the window length ", m, " for lambda = ", lambda, " exceeds 2^53");
  return static_cast<std::size_t>(m);
}

/// log of Theorem 5.6's entropy bound log⌈Δ/(2ε)⌉ |Y| (L/ε)^{d_λ} (ε in (0, L)).
[[nodiscard]] inline double log_trace_to_window_entropy_bound(double lambda, double lipschitz,
                                                              std::size_t num_observations, double epsilon,
                                                              double value_range) {
  constexpr const char* who = "log_trace_to_window_entropy_bound";
  detail::check_lambda(who, lambda);
  detail::entropy::check_lipschitz_cover(who, num_observations, lipschitz, epsilon, value_range);
  if (!(epsilon < lipschitz))
    detail::invalid(who, ": epsilon must be below lipschitz = ", lipschitz, " (Theorem 5.6), got ", epsilon);
  const double d = d_lambda(lambda, num_observations);
  const double log_factor =
      std::log(static_cast<double>(num_observations)) + (d == 0.0 ? 0.0 : d * std::log(lipschitz / epsilon));
  return detail::entropy::log_product(log_factor, detail::entropy::log_ceil(value_range / (2.0 * epsilon)));
}

/// Theorem 5.6: H_ε(F_{m(λ,L)}) <= log⌈Δ/(2ε)⌉ |Y| (L/ε)^{d_λ} ∈ O(L^{d_λ}). +inf when not representable.
[[nodiscard]] inline double trace_to_window_entropy_bound(double lambda, double lipschitz, std::size_t num_observations,
                                                          double epsilon, double value_range) {
  return detail::entropy::from_log(
      log_trace_to_window_entropy_bound(lambda, lipschitz, num_observations, epsilon, value_range));
}

/// Theorem 5.5, window to trace (§5.1): L(m) = Δ / (√2 (1 − 2λ) λ^{m−1}) for λ in (0, 1/2) and
/// m >= 1, so that F_m ⊂ F_{λ,L(m)} (by Lemma 4.3, separation_bound(λ, m) · L(m) = Δ).
/// +inf when λ^{m−1} underflows.
[[nodiscard]] inline double window_to_trace_lipschitz(std::size_t m, double lambda, double value_range) {
  constexpr const char* who = "window_to_trace_lipschitz";
  if (m == 0) detail::invalid(who, ": m must be at least 1, got 0");
  if (!(lambda > 0.0 && lambda < 0.5)) detail::invalid(who, ": lambda must be in (0, 1/2), got ", lambda);
  detail::entropy::check_positive(who, "value_range", value_range);
  return value_range / (std::numbers::sqrt2 * (1.0 - 2.0 * lambda) * std::pow(lambda, static_cast<double>(m - 1)));
}

/// Lemma 5.2: an ε-cover loses at most εΔ + ε²/2 of return error, R(G) <= R(F) + εΔ + ε²/2.
[[nodiscard]] inline double cover_return_error_excess(double epsilon, double value_range) {
  constexpr const char* who = "cover_return_error_excess";
  detail::entropy::check_positive(who, "epsilon", epsilon);
  detail::entropy::check_positive(who, "value_range", value_range);
  return epsilon * value_range + 0.5 * epsilon * epsilon;
}

/// Theorem 5.1: with probability at least 1 − δ, the empirical minimiser over the smallest ε-cover
/// of F from n trajectories has R(f_n) <= R(F) + Δ² √((H_ε(F) + log(2/δ)) / (2n)) + εΔ + ε²/2.
/// `min_return_error` is R(F) >= 0, `entropy` is H_ε(F) >= 0 (+inf gives +inf).
[[nodiscard]] inline double hoeffding_bound(double min_return_error, double entropy, double epsilon, double value_range,
                                            double delta, std::size_t n) {
  constexpr const char* who = "hoeffding_bound";
  if (!(min_return_error >= 0.0 && min_return_error < std::numeric_limits<double>::infinity()))
    detail::invalid(who, ": min_return_error must be non-negative and finite, got ", min_return_error);
  if (!(entropy >= 0.0)) detail::invalid(who, ": entropy must be non-negative, got ", entropy);
  if (!(delta > 0.0 && delta < 1.0)) detail::invalid(who, ": delta must be in (0, 1), got ", delta);
  if (n == 0) detail::invalid(who, ": n must be at least 1, got 0");
  detail::entropy::check_positive(who, "epsilon", epsilon);
  detail::entropy::check_positive(who, "value_range", value_range);
  const double excess = cover_return_error_excess(epsilon, value_range);
  return min_return_error +
         value_range * value_range * std::sqrt((entropy + std::log(2.0 / delta)) / (2.0 * static_cast<double>(n))) +
         excess;
}

}  // namespace memtrace
