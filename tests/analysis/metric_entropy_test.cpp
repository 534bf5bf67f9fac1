// Tests of analysis/metric_entropy.hpp: every bound of §5 against a hand computation and the
// consistency relations the paper's proofs rely on (Lemma 5.7, Theorem 5.6's window bound, the
// window-to-trace Theorem 5.5 against Lemma 4.3). The T-maze (Theorem 5.8) is tested in
// analysis/tmaze_complexity_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memtrace/analysis/metric_entropy.hpp>
#include <memtrace/analysis/trace_geometry.hpp>
#include <numbers>
#include <vector>

namespace metric_entropy_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
const double sqrt2ek = std::numbers::sqrt2 * std::numbers::e;
}  // namespace

TEST_CASE("Lemma 5.3: window_entropy matches hand computations", "[entropy]") {
  // |Y| = 2, m = 3, Δ = 2, ε = 0.25: 2^3 log⌈2 / 0.5⌉ = 8 log 4.
  CHECK(window_entropy(3, 2, 0.25, 2.0) == Approx(8 * std::log(4.0)));
  CHECK(log_window_entropy(3, 2, 0.25, 2.0) == Approx(std::log(8 * std::log(4.0))));
  // m = 0 (the constants): |Y|^0 log⌈2 / 0.2⌉ = log 10.
  CHECK(window_entropy(0, 5, 0.1, 2.0) == Approx(std::log(10.0)));
  // |Y| = 3, m = 2, Δ = 1, ε = 0.3: ⌈1 / 0.6⌉ = ⌈1.67⌉ = 2, so 9 log 2.
  CHECK(window_entropy(2, 3, 0.3, 1.0) == Approx(9 * std::log(2.0)));
  // Δ = 1, ε = 0.5: ⌈1⌉ = 1 value covers [v_, v̄]: H = 0 and log H = -inf.
  CHECK(window_entropy(4, 3, 0.5, 1.0) == 0.0);
  CHECK(log_window_entropy(4, 3, 0.5, 1.0) == -inf);
  // The T-maze's k = 64: 5^64 log 10 ≈ 1.25e45, and its log 64 log 5 + log log 10.
  CHECK(window_entropy(64, 5, 0.1, 2.0) == Approx(std::pow(5.0, 64.0) * std::log(10.0)).epsilon(1e-12));
  CHECK(log_window_entropy(64, 5, 0.1, 2.0) == Approx(64 * std::log(5.0) + std::log(std::log(10.0))));
  // Stays finite while representable: 2^1024 overflows, 2^1024 log 2 ≈ 1.246e308 does not.
  const double edge = window_entropy(1024, 2, 0.5, 2.0);  // ⌈2 / 1⌉ = 2
  CHECK(std::isfinite(edge));
  CHECK(edge == Approx(std::ldexp(std::log(2.0), 1024)).epsilon(1e-12));
  CHECK(window_entropy(1025, 2, 0.5, 2.0) == inf);
  CHECK(log_window_entropy(100000, 5, 0.1, 2.0) == Approx(100000 * std::log(5.0) + std::log(std::log(10.0))));
}

TEST_CASE("Lemma 5.4: both bounds and their minimum match hand computations", "[entropy]") {
  // λ = 1/2, |Y| = 2: d_λ = 1. L = 1, ε = 0.25, Δ = 1: log⌈4⌉ · 2 · (2 / 0.25)^1 = 16 log 4.
  CHECK(trace_entropy_bound_dimension(0.5, 1.0, 2, 0.25, 1.0) == Approx(16 * std::log(4.0)));
  // Subspace: log⌈4⌉ ⌈2 · 1 · √1 / 0.25⌉^1 = 8 log 4, the smaller one.
  CHECK(trace_entropy_bound_subspace(1.0, 2, 0.25, 1.0) == Approx(8 * std::log(4.0)));
  CHECK(trace_entropy_bound(0.5, 1.0, 2, 0.25, 1.0) == Approx(8 * std::log(4.0)));
  // λ = 1/4, |Y| = 4: d_λ = log 4 / log 4 = 1. L = 2, ε = 0.5, Δ = 1: log⌈2⌉ · 4 · 8 = 32 log 2;
  // subspace log 2 · ⌈4√3 / 0.5⌉^3 = ⌈13.86⌉^3 log 2 = 2744 log 2; the minimum is 32 log 2.
  CHECK(trace_entropy_bound_dimension(0.25, 2.0, 4, 0.5, 1.0) == Approx(32 * std::log(2.0)));
  CHECK(trace_entropy_bound_subspace(2.0, 4, 0.5, 1.0) == Approx(2744 * std::log(2.0)));
  CHECK(trace_entropy_bound(0.25, 2.0, 4, 0.5, 1.0) == Approx(32 * std::log(2.0)));
  CHECK(log_trace_entropy_bound(0.25, 2.0, 4, 0.5, 1.0) == Approx(std::log(32 * std::log(2.0))));
  // |Y| = 5, L = 1, ε = 0.5, Δ = 2: log⌈4⌉ ⌈2 · 2 / 0.5⌉^4 = 8^4 log 4 = 4096 log 4.
  CHECK(trace_entropy_bound_subspace(1.0, 5, 0.5, 2.0) == Approx(4096 * std::log(4.0)));
  CHECK(log_trace_entropy_bound_subspace(1.0, 5, 0.5, 2.0) == Approx(std::log(4096 * std::log(4.0))));
  // λ = 0: d_0 = 0, Z_0 is the |Y| one-hot vectors: log⌈1 / 0.25⌉ · 3 = 3 log 4 for any L.
  CHECK(trace_entropy_bound_dimension(0.0, 5.0, 3, 0.25, 1.0) == Approx(3 * std::log(4.0)));
  // |Y| = 1: Z_λ is one point, ⌈·⌉^0 = 1: log⌈Δ/ε⌉ = log 4.
  CHECK(trace_entropy_bound_subspace(7.0, 1, 0.25, 1.0) == Approx(std::log(4.0)));
  CHECK(log_trace_entropy_bound_subspace(7.0, 1, 0.25, 1.0) == Approx(std::log(std::log(4.0))));
  // The T-maze at k = 64 (λ = 63/64, L = √2 e 64, ε = 0.1, Δ = 2): d_λ ≈ 102, so the first bound is
  // about 10^378 (+inf as a double) while its log is finite.
  const double lambda = 63.0 / 64.0, lip = sqrt2ek * 64;
  const double d = std::log(5.0) / std::log(64.0 / 63.0);
  CHECK(trace_entropy_bound_dimension(lambda, lip, 5, 0.1, 2.0) == inf);
  CHECK(log_trace_entropy_bound_dimension(lambda, lip, 5, 0.1, 2.0) ==
        Approx(std::log(std::log(20.0)) + std::log(5.0) + d * std::log(2 * lip / 0.1)).epsilon(1e-12));
  CHECK(trace_entropy_bound(lambda, lip, 5, 0.1, 2.0) == Approx(trace_entropy_bound_subspace(lip, 5, 0.1, 2.0)));
}

TEST_CASE("Lemma 5.7: d_lambda < |Y| - 1 for lambda < 1/2, so the dimension bound wins for large L", "[entropy]") {
  for (std::size_t n = 2; n <= 12; ++n) {
    for (const double lambda : {0.0, 1e-6, 0.1, 0.25, 1.0 / 3.0, 0.4, 0.49, 0.4999}) {
      INFO("|Y| = " << n << ", lambda = " << lambda);
      CHECK(d_lambda(lambda, n) < static_cast<double>(n - 1));
      // Exponent d_λ < |Y| - 1: for L/ε large enough the first bound of Lemma 5.4 is the smaller
      // (at λ = 0.4999 and |Y| = 2 the exponents differ by 3e-4: L/ε = 1e15 is not enough).
      if (lambda <= 0.49)
        CHECK(log_trace_entropy_bound(lambda, 1e12, n, 1e-3, 2.0) ==
              log_trace_entropy_bound_dimension(lambda, 1e12, n, 1e-3, 2.0));
    }
  }
  // The boundary: λ = 1/2 and |Y| = 2 give d_λ = 1 = |Y| - 1; slow forgetting (λ = 0.9, |Y| = 3,
  // d_λ ≈ 10.4) makes the subspace bound the smaller one.
  CHECK(d_lambda(0.5, 2) == Approx(1.0));
  CHECK(log_trace_entropy_bound(0.9, 10.0, 3, 0.1, 2.0) == log_trace_entropy_bound_subspace(10.0, 3, 0.1, 2.0));
}

TEST_CASE("Theorem 5.6: m(lambda, L) is the smallest m with lambda^m <= epsilon / L, and H(F_m) is within its bound",
          "[entropy][theorem]") {
  // λ = 1/2, L = 1, ε = 0.25: ⌈log 4 / log 2⌉ = 2. ε = 0.3: ⌈log(3.33) / log 2⌉ = ⌈1.74⌉ = 2.
  CHECK(trace_to_window_length(0.5, 1.0, 0.25) == 2);
  CHECK(trace_to_window_length(0.5, 1.0, 0.3) == 2);
  // λ = 0.1, L = 10, ε = 0.05: ⌈log 200 / log 10⌉ = ⌈2.30⌉ = 3.
  CHECK(trace_to_window_length(0.1, 10.0, 0.05) == 3);
  // λ = 0: z_0(h) = e_{y_0} needs win_1 (the formula's 0 would need λ^0 = 1 <= ε/L); λ -> 0+ agrees.
  CHECK(trace_to_window_length(0.0, 10.0, 0.05) == 1);
  CHECK(trace_to_window_length(1e-300, 10.0, 0.05) == 1);
  // Hand: λ = 1/2, |Y| = 2, L = 1, ε = 0.25, Δ = 2: log⌈4⌉ · 2 · 4^1 = 8 log 4 >= H(F_2) = 4 log 4.
  CHECK(trace_to_window_entropy_bound(0.5, 1.0, 2, 0.25, 2.0) == Approx(8 * std::log(4.0)));
  CHECK(window_entropy(2, 2, 0.25, 2.0) == Approx(4 * std::log(4.0)));
  // The proof: λ^m <= ε/L (so F_m approximates F_{λ,L} to ε), m is the smallest such, and the exact
  // H_ε(F_m) (Lemma 5.3) is at most the bound log⌈Δ/(2ε)⌉ |Y| (L/ε)^{d_λ}.
  for (const double lambda : {0.0, 0.05, 0.3, 0.5, 0.7, 0.9, 0.99})
    for (const double lip : {0.5, 1.0, 3.0, 10.0, 1000.0})
      for (const double eps : {0.01, 0.1, 0.4})
        for (const std::size_t n : {1, 2, 3, 5}) {
          if (eps >= lip) continue;
          INFO("lambda = " << lambda << ", L = " << lip << ", epsilon = " << eps << ", |Y| = " << n);
          const std::size_t m = trace_to_window_length(lambda, lip, eps);
          CHECK(std::pow(lambda, static_cast<double>(m)) <= eps / lip * (1 + 1e-12));
          if (m > 1) CHECK(std::pow(lambda, static_cast<double>(m - 1)) > eps / lip);
          CHECK(log_window_entropy(m, n, eps, 2.0) <=
                log_trace_to_window_entropy_bound(lambda, lip, n, eps, 2.0) + 1e-12);
        }
}

TEST_CASE("Theorem 5.5 (window to trace): L(m) makes separation_bound times L(m) equal Delta", "[entropy][theorem]") {
  // m = 1, λ = 1/4, Δ = 2: 2 / (√2 · 1/2 · 1) = 2√2. m = 3, Δ = 1: 1 / (√2 · 1/2 · 1/16) = 16√2.
  CHECK(window_to_trace_lipschitz(1, 0.25, 2.0) == Approx(2 * std::numbers::sqrt2));
  CHECK(window_to_trace_lipschitz(3, 0.25, 1.0) == Approx(16 * std::numbers::sqrt2));
  for (const double lambda : {0.01, 0.1, 0.25, 0.4, 0.49})
    for (std::size_t m = 1; m <= 12; ++m) {
      INFO("lambda = " << lambda << ", m = " << m);
      // Lemma 4.3: different windows are at least separation_bound apart, values at most Δ.
      CHECK(separation_bound(lambda, m) * window_to_trace_lipschitz(m, lambda, 2.0) == Approx(2.0).epsilon(1e-12));
      // The proof's last display: the first bound of Lemma 5.4 at L(m) is c |Y|^m with c free of m.
      const double log_c_1 =
          log_trace_entropy_bound_dimension(lambda, window_to_trace_lipschitz(1, lambda, 2.0), 3, 0.1, 2.0) -
          std::log(3.0);
      const double log_c_m =
          log_trace_entropy_bound_dimension(lambda, window_to_trace_lipschitz(m, lambda, 2.0), 3, 0.1, 2.0) -
          static_cast<double>(m) * std::log(3.0);
      CHECK(log_c_m == Approx(log_c_1).epsilon(1e-10));
    }
  CHECK(window_to_trace_lipschitz(2000, 0.1, 1.0) == inf);  // 0.1^1999 underflows
}

TEST_CASE("Theorem 5.1 (Hoeffding bound) and Lemma 5.2 match hand computations", "[entropy]") {
  // Lemma 5.2: ε = 0.1, Δ = 2: 0.2 + 0.01 / 2 = 0.205.
  CHECK(cover_return_error_excess(0.1, 2.0) == Approx(0.205));
  // R = 0.25, H = 1, δ = 2/e (log(2/δ) = 1), n = 1: 0.25 + 4 √(2 / 2) + 0.205 = 4.455.
  const double delta = 2.0 / std::numbers::e;
  CHECK(hoeffding_bound(0.25, 1.0, 0.1, 2.0, delta, 1) == Approx(4.455));
  // n = 100, H = 49: 0.25 + 4 √(50 / 200) + 0.205 = 2.455.
  CHECK(hoeffding_bound(0.25, 49.0, 0.1, 2.0, delta, 100) == Approx(2.455));
  CHECK(hoeffding_bound(0.25, 49.0, 0.1, 2.0, delta, 1000) < hoeffding_bound(0.25, 49.0, 0.1, 2.0, delta, 100));
  CHECK(hoeffding_bound(0.0, inf, 0.1, 2.0, 0.05, 10) == inf);
}

TEST_CASE("bad entropy arguments throw with the argument and the value named", "[entropy][errors]") {
  using Catch::Contains;
  REQUIRE_THROWS_WITH(window_entropy(3, 2, 0.0, 2.0),
                      Contains("window_entropy: epsilon must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(window_entropy(3, 2, 0.1, -1.0),
                      Contains("window_entropy: value_range must be positive and finite, got -1"));
  REQUIRE_THROWS_WITH(window_entropy(3, 0, 0.1, 2.0),
                      Contains("window_entropy: num_observations must be at least 1, got 0"));
  REQUIRE_THROWS_WITH(log_window_entropy(3, 2, std::nan(""), 2.0),
                      Contains("log_window_entropy: epsilon must be positive and finite, got nan"));
  REQUIRE_THROWS_WITH(window_entropy(3, 2, inf, 2.0), Contains("epsilon must be positive and finite, got inf"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_dimension(1.0, 1.0, 2, 0.1, 2.0),
                      Contains("lambda must be in [0, 1), got 1"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_dimension(-0.5, 1.0, 2, 0.1, 2.0),
                      Contains("lambda must be in [0, 1), got -0.5"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_dimension(0.5, 0.0, 2, 0.1, 2.0),
                      Contains("lipschitz must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_dimension(0.5, 1.0, 0, 0.1, 2.0),
                      Contains("num_observations must be at least 1, got 0"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_subspace(-2.0, 2, 0.1, 2.0),
                      Contains("trace_entropy_bound_subspace: lipschitz must be positive and finite, got -2"));
  REQUIRE_THROWS_WITH(trace_entropy_bound_subspace(2.0, 2, -0.1, 2.0),
                      Contains("epsilon must be positive and finite, got -0.1"));
  REQUIRE_THROWS_WITH(trace_entropy_bound(0.5, 1.0, 2, 0.1, 0.0),
                      Contains("value_range must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(trace_to_window_length(0.5, 1.0, 1.0),
                      Contains("trace_to_window_length: epsilon must be below lipschitz = 1 (Theorem 5.6), got 1"));
  REQUIRE_THROWS_WITH(trace_to_window_length(1.5, 1.0, 0.1),
                      Contains("trace_to_window_length: lambda must be in [0, 1), got 1.5"));
  REQUIRE_THROWS_WITH(trace_to_window_length(0.5, -1.0, 0.1),
                      Contains("lipschitz must be positive and finite, got -1"));
  REQUIRE_THROWS_WITH(trace_to_window_length(1.0 - 1e-16, 1e100, 1e-100), Contains("exceeds 2^53"));
  REQUIRE_THROWS_WITH(trace_to_window_entropy_bound(0.5, 1.0, 2, 2.0, 2.0),
                      Contains("epsilon must be below lipschitz = 1 (Theorem 5.6), got 2"));
  REQUIRE_THROWS_WITH(window_to_trace_lipschitz(2, 0.5, 1.0),
                      Contains("window_to_trace_lipschitz: lambda must be in (0, 1/2), got 0.5"));
  REQUIRE_THROWS_WITH(window_to_trace_lipschitz(2, 0.0, 1.0), Contains("lambda must be in (0, 1/2), got 0"));
  REQUIRE_THROWS_WITH(window_to_trace_lipschitz(0, 0.25, 1.0),
                      Contains("window_to_trace_lipschitz: m must be at least 1, got 0"));
  REQUIRE_THROWS_WITH(window_to_trace_lipschitz(2, 0.25, -1.0),
                      Contains("value_range must be positive and finite, got -1"));
  REQUIRE_THROWS_WITH(cover_return_error_excess(0.0, 1.0),
                      Contains("cover_return_error_excess: epsilon must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, 1.0, 0.1, 2.0, 1.0, 10),
                      Contains("hoeffding_bound: delta must be in (0, 1), got 1"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, 1.0, 0.1, 2.0, 0.0, 10), Contains("delta must be in (0, 1), got 0"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, 1.0, 0.1, 2.0, 0.05, 0),
                      Contains("hoeffding_bound: n must be at least 1, got 0"));
  REQUIRE_THROWS_WITH(hoeffding_bound(-0.1, 1.0, 0.1, 2.0, 0.05, 10),
                      Contains("min_return_error must be non-negative and finite, got -0.1"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, -1.0, 0.1, 2.0, 0.05, 10), Contains("entropy must be non-negative, got -1"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, 1.0, 0.0, 2.0, 0.05, 10),
                      Contains("epsilon must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(hoeffding_bound(0.1, 1.0, 0.1, 0.0, 0.05, 10),
                      Contains("value_range must be positive and finite, got 0"));
}

}  // namespace metric_entropy_test
