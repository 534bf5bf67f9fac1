// Tests of analysis/trace_geometry.hpp, and of MemoryTrace against the paper's §4: eq. (4),
// Lemmas 4.2 (concentration) and 4.3 (separation) on exhaustive sets of histories, Theorem 4.1
// for rational λ with its two counterexamples (Appendix A), and the T-maze distances of Theorem 5.8.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#include <numbers>
#include <set>
#include <vector>

namespace trace_geometry_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// Every history over n observations of each length in [min_length, max_length], chronological.
std::vector<std::vector<Observation>> all_histories(std::size_t n, std::size_t min_length, std::size_t max_length) {
  std::vector<std::vector<Observation>> out;
  std::vector<std::vector<Observation>> level{{}};
  for (std::size_t length = 0; length <= max_length; ++length) {
    if (length >= min_length) out.insert(out.end(), level.begin(), level.end());
    std::vector<std::vector<Observation>> next;
    for (const auto& h : level)
      for (Observation y = 0; y < n; ++y) {
        next.push_back(h);
        next.back().push_back(y);
      }
    level = std::move(next);
  }
  return out;
}

/// The trace after feeding h to a MemoryTrace that starts from the empty history (eq. (2)).
Eigen::VectorXd memory_trace(const std::vector<Observation>& h, double lambda, std::size_t n) {
  MemoryTrace<> trace(lambda, n, TraceInit::zero);
  for (const Observation y : h) trace.update(y);
  return trace.features();
}

}  // namespace

TEST_CASE("trace_set enumerates Z_lambda^m in window order and lies on eq. (4)", "[geometry]") {
  const std::size_t n = 3, m = 4;
  const double lambda = 0.4;
  const Eigen::MatrixXd z = trace_set(lambda, n, m);
  REQUIRE(z.cols() == 81);
  const Window<> window(m, n);
  for (Eigen::Index j = 0; j < z.cols(); ++j) {
    const auto h = window.window_at(static_cast<std::size_t>(j));
    REQUIRE((z.col(j) - trace_of(h, lambda, n)).cwiseAbs().maxCoeff() < 1e-15);
    REQUIRE(z.col(j).sum() == Approx(trace_subspace_sum(lambda, m)).epsilon(1e-14));
  }
  CHECK(trace_set(0.5, 2, 0).cols() == 1);  // Z^0 = {0}
  CHECK(trace_set(0.5, 2, 0).isZero());
}

TEST_CASE("Lemma 4.2 (concentration) holds on all histories up to length 6", "[geometry][lemma]") {
  for (const std::size_t n : {2u, 3u}) {
    const auto histories = all_histories(n, 0, n == 2 ? 6 : 5);
    for (const double lambda : {0.1, 0.3, 0.5, 0.7, 0.9}) {
      std::vector<Eigen::VectorXd> traces;
      for (const auto& h : histories) traces.push_back(memory_trace(h, lambda, n));
      for (std::size_t m = 1; m <= 6; ++m) {
        const double bound = concentration_bound(lambda, m);
        double worst = 0.0;
        for (std::size_t i = 0; i < histories.size(); ++i)
          for (std::size_t j = i + 1; j < histories.size(); ++j)
            if (window_of(histories[i], m) == window_of(histories[j], m))
              worst = std::max(worst, (traces[i] - traces[j]).norm());
        INFO("|Y| = " << n << ", lambda = " << lambda << ", m = " << m);
        CHECK(worst <= bound * (1 + 1e-12));
      }
    }
  }
}

TEST_CASE("Lemma 4.3 (separation) holds on all histories of equal length, and is tight", "[geometry][lemma]") {
  for (const std::size_t n : {2u, 3u}) {
    const std::size_t length = n == 2 ? 6 : 5;
    const auto histories = all_histories(n, length, length);
    for (const double lambda : {0.05, 0.2, 1.0 / 3.0, 0.45, 0.5}) {
      std::vector<Eigen::VectorXd> traces;
      for (const auto& h : histories) traces.push_back(memory_trace(h, lambda, n));
      for (std::size_t m = 1; m <= length; ++m) {
        double closest = INFINITY;
        for (std::size_t i = 0; i < histories.size(); ++i)
          for (std::size_t j = i + 1; j < histories.size(); ++j)
            if (window_of(histories[i], m) != window_of(histories[j], m))
              closest = std::min(closest, (traces[i] - traces[j]).norm());
        const double bound = separation_bound(lambda, m);
        // The pair (b^{L-m} a c^{m-1}, a^{L-m} b c^{m-1}) is √2 λ^{m-1} (1 - 2λ + λ^{L-m+1}) apart,
        // which tends to the bound as L grows: the bound cannot be raised.
        const double pair = std::numbers::sqrt2 * std::pow(lambda, m - 1.0) *
                            (1.0 - 2.0 * lambda + std::pow(lambda, static_cast<double>(length - m + 1)));
        std::vector<Observation> h(length, 1), hbar(length, 0);
        h[length - m] = 0;
        hbar[length - m] = 1;
        for (std::size_t k = length - m + 1; k < length; ++k) h[k] = hbar[k] = 0;
        INFO("|Y| = " << n << ", lambda = " << lambda << ", m = " << m);
        // Distances of traces whose entries are near 1 carry absolute rounding errors near 1e-16.
        CHECK((memory_trace(h, lambda, n) - memory_trace(hbar, lambda, n)).norm() == Approx(pair).margin(1e-14));
        CHECK(closest >= bound - 1e-14);
        CHECK(closest <= pair + 1e-14);
      }
    }
  }
  // The lemma needs histories of one length (or infinite ones): a history and the empty history
  // can be closer than the bound, since ||e_y - 0|| = 1 < √2.
  const double lambda = 0.05;
  const std::vector<Observation> one{0};
  CHECK(memory_trace(one, lambda, 2).norm() < separation_bound(lambda, 1));
}

TEST_CASE("Theorem 4.1 (finite injectivity): rational lambda separates all histories up to length 8",
          "[geometry][theorem]") {
  struct Rational {
    std::int64_t p, q;
  };
  for (const Rational lambda : {Rational{1, 3}, Rational{3, 5}, Rational{1, 2}}) {
    for (const std::size_t n : {2u, 3u}) {
      const auto histories = all_histories(n, 1, 8);
      const double l = static_cast<double>(lambda.p) / static_cast<double>(lambda.q);
      // Exact: q^7 z / (1 - λ) = Σ_k p^k q^{7-k} e_{y_{-k}} is an integer vector.
      std::set<std::array<std::int64_t, 3>> exact;
      std::vector<std::array<double, 3>> computed;
      for (const auto& h : histories) {
        std::array<std::int64_t, 3> key{};
        std::int64_t pk = 1;
        for (std::size_t k = 0; k < h.size(); ++k, pk *= lambda.p) {
          std::int64_t qk = 1;
          for (std::size_t i = k; i < 7; ++i) qk *= lambda.q;
          key[h[h.size() - 1 - k]] += pk * qk;
        }
        exact.insert(key);
        const Eigen::VectorXd z = memory_trace(h, l, n);
        std::array<double, 3> point{};
        for (std::size_t i = 0; i < n; ++i) {
          point[i] = z[static_cast<Eigen::Index>(i)];
          const double exact_value = static_cast<double>(key[i]) * (1 - l) / std::pow(lambda.q, 7.0);
          REQUIRE(point[i] == Approx(exact_value).epsilon(1e-14).margin(1e-300));
        }
        computed.push_back(point);
      }
      INFO("lambda = " << lambda.p << "/" << lambda.q << ", |Y| = " << n);
      CHECK(exact.size() == histories.size());  // the theorem
      std::sort(computed.begin(), computed.end());
      CHECK(std::adjacent_find(computed.begin(), computed.end()) == computed.end());  // and in floating point
    }
  }
}

TEST_CASE("the counterexamples of Appendix A (Examples A.1 and A.2) do collide", "[geometry][theorem]") {
  // Irrational λ = φ - 1 (golden ratio): h = (y1, y2, y2) and h' = (y2, y1, y1), newest first.
  const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
  const std::vector<Observation> h{1, 1, 0}, hbar{0, 0, 1};  // chronological
  CHECK((trace_of(h, golden, 2) - trace_of(hbar, golden, 2)).norm() < 1e-15);
  CHECK((trace_of(h, 0.618, 2) - trace_of(hbar, 0.618, 2)).norm() > 1e-5);  // a nearby rational λ does not

  // λ = 1/2 with infinite histories (y1, y2, y2, ...) and (y2, y1, y1, ...): at length L the traces
  // are √2 2^{-L} apart, so they meet in the limit.
  for (const std::size_t length : {5u, 10u, 20u, 60u}) {
    std::vector<Observation> a(length, 1), b(length, 0);
    a.back() = 0;
    b.back() = 1;
    const double distance = (memory_trace(a, 0.5, 2) - memory_trace(b, 0.5, 2)).norm();
    if (length <= 20)
      CHECK(distance == Approx(std::numbers::sqrt2 * std::pow(2.0, -double(length))).epsilon(1e-6));
    else
      CHECK(distance < 1e-15);
  }
}

TEST_CASE("Theorem 5.8: with lambda = (k-1)/k traces of different values are at least √2/(e k) apart",
          "[geometry][theorem]") {
  enum : Observation { a, b, o, x, y };
  for (std::size_t k = 2; k <= 40; ++k) {
    const double lambda = static_cast<double>(k - 1) / static_cast<double>(k);
    // Table 2: the histories of positive probability under "always up" and their values.
    std::vector<std::pair<std::vector<Observation>, double>> table;
    for (std::size_t i = 0; i + 2 <= k; ++i)
      for (const Observation start : {a, b}) {
        std::vector<Observation> h{start};
        h.insert(h.end(), i, o);
        table.emplace_back(h, 0.0);
      }
    for (const Observation start : {a, b})
      for (const Observation end : {x, y}) {
        std::vector<Observation> h{start};
        h.insert(h.end(), k - 2, o);
        h.push_back(end);
        table.emplace_back(h, (start == a) == (end == x) ? 1.0 : -1.0);
      }
    double closest = INFINITY;
    for (std::size_t i = 0; i < table.size(); ++i)
      for (std::size_t j = i + 1; j < table.size(); ++j)
        if (table[i].second != table[j].second)
          closest =
              std::min(closest, (trace_of(table[i].first, lambda, 5) - trace_of(table[j].first, lambda, 5)).norm());
    INFO("k = " << k);
    // The closest pair is ao^{k-2}x against bo^{k-2}x, at √2 (1 - λ) λ^{k-1} >= √2 / (e k).
    CHECK(closest == Approx(std::numbers::sqrt2 * (1 - lambda) * std::pow(lambda, k - 1.0)).epsilon(1e-12));
    CHECK(closest >= std::numbers::sqrt2 / (std::numbers::e * static_cast<double>(k)));
  }
}

TEST_CASE("bound functions match hand computations", "[geometry]") {
  CHECK(concentration_bound(0.5, 3) == Approx(std::sqrt(2.0) / 8));
  CHECK(concentration_bound(0.0, 2) == 0.0);
  CHECK(separation_bound(0.25, 2) == Approx(std::sqrt(2.0) * 0.5 * 0.25));
  CHECK(separation_bound(0.5, 4) == 0.0);
  CHECK(d_lambda(1.0 / 3.0, 3) == Approx(1.0));
  CHECK(d_lambda(0.5, 2) == Approx(1.0));
  CHECK(d_lambda(0.25, 2) == Approx(0.5));
  CHECK(d_lambda(0.0, 5) == 0.0);
  CHECK(minkowski_dimension_bound(0.9, 3) == 2.0);  // d_λ ≈ 10.4 > |Y| - 1
  CHECK(minkowski_dimension_bound(0.1, 3) == Approx(std::log(3.0) / std::log(10.0)));
  CHECK(trace_subspace_sum(0.5, 3) == 0.875);
  const std::vector<Observation> h{0, 1, 2, 3};
  CHECK(window_of(h, 2) == std::vector<Observation>{2, 3});
  CHECK(window_of(h, 9) == h);
}

TEST_CASE("bad geometry arguments throw with the value named", "[geometry][errors]") {
  CHECK_THROWS_WITH(separation_bound(0.6, 2), "separation_bound: lambda must be at most 1/2, got 0.6");
  CHECK_THROWS_WITH(separation_bound(0.3, 0), "separation_bound: m must be at least 1, got 0");
  CHECK_THROWS_WITH(concentration_bound(1.0, 2), "concentration_bound: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(d_lambda(0.5, 0), "d_lambda: num_observations must be at least 1, got 0");
  CHECK_THROWS_WITH(window_of(std::vector<Observation>{1}, 0), "window_of: m must be at least 1, got 0");
  CHECK_THROWS_WITH(trace_of(std::vector<Observation>{0, 4}, 0.5, 3), "trace_of: observation must be in [0, 3), got 4");
  CHECK_THROWS_WITH(trace_set(0.5, 11, 8),
                    "trace_set: |Y|^(m+1) with |Y| = 11 and m = 8 entries exceed max_entries = 67108864");
}

}  // namespace trace_geometry_test
