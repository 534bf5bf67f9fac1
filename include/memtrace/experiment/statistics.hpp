#pragma once
// Aggregation over seeds: mean, standard deviation and a Student t confidence interval, with the
// t quantile computed here (no dependency) from a regularized incomplete beta function.
// See docs/experiments.md.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <span>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

/// Stirling's series of ln Γ(x) without its leading terms: ln Γ(x) - (x - 1/2) ln x + x - ln(2π)/2,
/// for x >= 15 (Bernoulli terms up to x^-13; the next one is below 1e-19 there).
[[nodiscard]] inline double stirling_remainder(double x) noexcept {
  const double r = 1.0 / x, r2 = r * r;
  return r * (1.0 / 12 +
              r2 * (-1.0 / 360 +
                    r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 + r2 * (1.0 / 1188 + r2 * (-691.0 / 360360 + r2 / 156))))));
}

/// ln Γ(x) for x > 0: Stirling's series at x + k >= 15 and the recurrence Γ(x + 1) = x Γ(x) below.
/// Written here because std::lgamma may write the global signgam (a data race in threaded sweeps).
[[nodiscard]] inline double log_gamma(double x) noexcept {
  double shift = 1.0;  // x (x + 1) ... (x + k - 1); stays far below overflow since x + k < 16
  while (x < 15.0) {
    shift *= x;
    x += 1.0;
  }
  return (x - 0.5) * std::log(x) - x + 0.5 * std::log(2 * std::numbers::pi) + stirling_remainder(x) - std::log(shift);
}

/// ln B(a, 1/2) = ln Γ(a) + ln Γ(1/2) - ln Γ(a + 1/2). For large a the two ln Γ nearly cancel, so
/// their difference is taken inside Stirling's series: -ln(a)/2 - a ln(1 + 1/(2a)) + 1/2 + ...
[[nodiscard]] inline double log_beta_half(double a) noexcept {
  const double log_gamma_half = 0.5 * std::log(std::numbers::pi);
  if (a < 15.0) return log_gamma(a) + log_gamma_half - log_gamma(a + 0.5);
  return -0.5 * std::log(a) - a * std::log1p(0.5 / a) + 0.5 + stirling_remainder(a) - stirling_remainder(a + 0.5) +
         log_gamma_half;
}

/// The continued fraction of the regularized incomplete beta function (modified Lentz), converging
/// fast for x < (a + 1) / (a + b + 2). y = 1 - x is passed separately so that it keeps its digits.
[[nodiscard]] inline double beta_continued_fraction(double a, double b, double x) noexcept {
  constexpr double tiny = 1e-300;
  constexpr double eps = 1e-16;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double f = d;
  // One Lentz step for the partial numerator num: updates d and c, returns the factor of f.
  const auto lentz_step = [&](double num) {
    d = 1.0 + num * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    return d * c;
  };
  for (int m = 1; m < 1000000; ++m) {
    const double m2 = 2.0 * m;
    // Even step: m (b - m) x / ((a + 2m - 1)(a + 2m)).
    f *= lentz_step(m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)));
    // Odd step: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    const double delta = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)));
    f *= delta;
    if (std::abs(delta - 1.0) < eps) break;
  }
  return f;
}

/// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1], given
/// y = 1 - x, ln x, ln y (each computed by the caller without cancellation) and ln B(a, b).
[[nodiscard]] inline double incomplete_beta(double a, double b, double x, double y, double log_x, double log_y,
                                            double log_beta) noexcept {
  if (x <= 0.0 && log_x == -std::numeric_limits<double>::infinity()) return 0.0;
  if (y <= 0.0 && log_y == -std::numeric_limits<double>::infinity()) return 1.0;
  const double front = std::exp(a * log_x + b * log_y - log_beta);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, y) / b;
}

/// P(T > t) (upper) and P(|T| < t) (central) for t >= 0, T Student t with dof degrees of freedom:
/// I_x(dof/2, 1/2) / 2 and I_{1-x}(1/2, dof/2) at x = dof / (dof + t^2), with x and 1 - x each
/// computed without cancellation or overflow.
[[nodiscard]] inline double student_t_probability(double t, double dof, bool central) noexcept {
  // x = 1 / (1 + r), y = r / (1 + r) with r = t^2 / dof. Each log is formed where it does not
  // cancel: ln x = -ln(1 + r) for small r (dof/2 multiplies it), via 1/r where t^2 would overflow.
  double x, y, log_x, log_y;
  if (t * t <= dof) {
    const double r = t * t / dof;
    x = 1.0 / (1.0 + r);
    y = r / (1.0 + r);
    log_x = -std::log1p(r);
    log_y = std::log(r) + log_x;
  } else {
    const double s = dof / t / t;  // 1 / r, which may underflow: the logs carry on
    x = s / (1.0 + s);
    y = 1.0 / (1.0 + s);
    log_y = -std::log1p(s);
    log_x = std::log(dof) - 2.0 * std::log(t) + log_y;
  }
  const double a = 0.5 * dof, log_beta = log_beta_half(a);
  return central ? incomplete_beta(0.5, a, y, x, log_y, log_x, log_beta)
                 : 0.5 * incomplete_beta(a, 0.5, x, y, log_x, log_y, log_beta);
}

/// The t in [0, inf) with probability(t) = target for a monotone probability function (decreasing
/// unless `increasing`): bisection on the bit patterns of non-negative doubles, which are ordered
/// like the values, so 64 halvings reach neighbouring doubles from any magnitude with no guess.
template <class Probability>
[[nodiscard]] double invert_probability(Probability probability, double target, bool increasing) {
  std::uint64_t lo = 0;  // t = 0
  std::uint64_t hi = std::bit_cast<std::uint64_t>(std::numeric_limits<double>::infinity());
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if ((probability(std::bit_cast<double>(mid)) < target) == increasing) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return std::bit_cast<double>(hi);
}

/// The t >= 0 with P(T > t) = q, q in (0, 1/2]. Near the centre (q >= 1/4) it solves
/// P(|T| < t) = 1 - 2q instead, which is exact there and keeps the digits of small t.
template <class Probability>
[[nodiscard]] double upper_quantile(Probability probability, double q) {
  if (q >= 0.25) return invert_probability([&](double t) { return probability(t, true); }, 1.0 - 2.0 * q, true);
  return invert_probability([&](double t) { return probability(t, false); }, q, false);
}

/// The standard normal quantile for an upper-tail probability q in (0, 1/2].
[[nodiscard]] inline double normal_upper_quantile(double q) {
  return upper_quantile(
      [](double t, bool central) {
        const double u = t / std::numbers::sqrt2;
        return central ? std::erf(u) : 0.5 * std::erfc(u);
      },
      q);
}

}  // namespace detail

/// The p-quantile of Student's t distribution with dof > 0 degrees of freedom (dof need not be
/// an integer; dof = infinity gives the standard normal quantile), for p in (0, 1). Accurate to
/// about 1e-11 relative (checked against mpmath); t_{0.975, n-1} is the factor of a 95% confidence interval over n
/// seeds.
[[nodiscard]] inline double student_t_quantile(double p, double dof) {
  if (!(p > 0.0 && p < 1.0)) detail::invalid("student_t_quantile: p must be in (0, 1), got ", p);
  if (!(dof > 0.0)) detail::invalid("student_t_quantile: dof must be positive, got ", dof);
  if (p == 0.5) return 0.0;
  const double q = p < 0.5 ? p : 1.0 - p;  // exact for p >= 1/2 (Sterbenz)
  double t;
  if (std::isinf(dof)) {
    t = detail::normal_upper_quantile(q);
  } else if (dof > 1e6) {
    // Cornish-Fisher expansion in 1/dof (Abramowitz & Stegun 26.7.5): ln Γ cancels badly here,
    // and the omitted terms are below (z^2 / dof)^5.
    const double z = detail::normal_upper_quantile(q), z2 = z * z, v = 1.0 / dof;
    const double g1 = (z2 + 1.0) * z / 4.0;
    const double g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    const double g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    const double g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    t = z + v * (g1 + v * (g2 + v * (g3 + v * g4)));
  } else {
    t = detail::upper_quantile([dof](double x, bool central) { return detail::student_t_probability(x, dof, central); },
                               q);
  }
  return p < 0.5 ? -t : t;
}

/// Mean, standard deviation and a confidence interval of a sample (one value per seed).
struct Summary {
  std::size_t n = 0;
  double mean = 0.0;
  /// The sample standard deviation (divisor n - 1); NaN when n = 1.
  double sd = 0.0;
  /// mean ∓ t_{(1 + level)/2, n-1} sd / √n; both NaN when n = 1 (no spread can be estimated).
  double ci_low = 0.0;
  double ci_high = 0.0;
};

namespace detail {

/// Neumaier's compensated sum: exact to about one rounding whatever the magnitudes and order.
class CompensatedSum {
 public:
  void add(double x) noexcept {
    const double t = sum_ + x;
    compensation_ += std::abs(sum_) >= std::abs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  [[nodiscard]] double value() const noexcept { return sum_ + compensation_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

}  // namespace detail

/// Summarizes a sample: compensated two-pass mean and variance (no loss of digits when values
/// share a large offset or the sample is long), and a Student t interval at the given level.
/// A NaN or infinite value makes the result NaN or infinite. An empty sample throws.
[[nodiscard]] inline Summary summarize(std::span<const double> values, double level = 0.95) {
  if (values.empty()) detail::invalid("summarize: values must not be empty, got 0 values");
  if (!(level > 0.0 && level < 1.0)) detail::invalid("summarize: level must be in (0, 1), got ", level);
  const auto n = static_cast<double>(values.size());
  detail::CompensatedSum sum;
  for (double x : values) sum.add(x);
  Summary s;
  s.n = values.size();
  s.mean = sum.value() / n;
  if (values.size() == 1) {
    s.sd = s.ci_low = s.ci_high = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  // Corrected two-pass variance: the second sum removes the rounding error of the mean.
  detail::CompensatedSum squares, deviations;
  for (double x : values) {
    squares.add((x - s.mean) * (x - s.mean));
    deviations.add(x - s.mean);
  }
  const double d = deviations.value();
  s.sd = std::sqrt(std::max(0.0, squares.value() - d * d / n) / (n - 1.0));
  const double half_width = student_t_quantile(0.5 + 0.5 * level, n - 1.0) * s.sd / std::sqrt(n);
  s.ci_low = s.mean - half_width;
  s.ci_high = s.mean + half_width;
  return s;
}

}  // namespace memtrace
