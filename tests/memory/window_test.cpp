// Tests of memory/window.hpp: index arithmetic round trips, the two paddings, agreement of the
// one-hot (Window) and concatenated (ConcatWindow) encodings, and refusal of oversized tables.
#include <catch2/catch.hpp>
#include <cstddef>
#include <limits>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace window_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

std::vector<Observation> random_history(std::size_t length, std::size_t num_observations, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  std::vector<Observation> h(length);
  for (auto& y : h) y = uniform_index(g, num_observations);
  return h;
}

/// win_m(h) under a padding rule, chronological: zero padding keeps a short window short.
std::vector<Observation> padded_window(const std::vector<Observation>& h, std::size_t m, WindowPadding padding) {
  auto w = window_of(h, m);
  if (padding == WindowPadding::repeat_first) w.insert(w.begin(), m - w.size(), h.front());
  return w;
}

/// The concatenated one-hot vectors of a window (newest first, zero blocks for missing ones).
Eigen::VectorXd stacked_one_hot(const std::vector<Observation>& window, std::size_t m, std::size_t n) {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m * n));
  for (std::size_t k = 0; k < window.size(); ++k)
    v[static_cast<Eigen::Index>(k * n + window[window.size() - 1 - k])] = 1.0;
  return v;
}

}  // namespace

TEST_CASE("window table sizes follow the padding rule", "[window]") {
  CHECK(Window<>::table_size(5, 11, WindowPadding::repeat_first) == 161051);
  CHECK(Window<>::table_size(5, 11, WindowPadding::zero) == 161051 + 14641 + 1331 + 121 + 11);
  CHECK(Window<>::table_size(3, 1, WindowPadding::zero) == 3);
  CHECK(Window<>(4, 2, WindowPadding::zero).dim() == 16 + 8 + 4 + 2);
  CHECK(ConcatWindow<>(5, 11).dim() == 55);
}

TEST_CASE("the |Y|^m guard: n^m, or 0 on overflow, in at most 64 products", "[window]") {
  static_assert(memtrace::detail::checked_pow(11, 5) == 161051);
  static_assert(memtrace::detail::checked_pow(2, 63) == std::size_t{1} << 63);
  static_assert(memtrace::detail::checked_pow(2, 64) == 0);
  static_assert(memtrace::detail::checked_pow(7, 0) == 1);
  CHECK(memtrace::detail::checked_pow(1, std::numeric_limits<std::size_t>::max()) == 1);  // no m steps
  CHECK(memtrace::detail::checked_pow(3, std::numeric_limits<std::size_t>::max()) == 0);
  CHECK(memtrace::detail::powers(3, 4) == std::vector<std::size_t>{1, 3, 9, 27, 81});
  CHECK(memtrace::detail::powers(11, 20).empty());
}

TEST_CASE("zero-padded windows are indexed as documented", "[window]") {
  // |Y| = 2, m = 3: full windows at [0, 8), one observation at offset(1) = 8, two at offset(2) = 10.
  const Window<> window(3, 2, WindowPadding::zero);
  CHECK(window.dim() == 8 + 2 + 4);
  CHECK(window.index_of(std::vector<Observation>{1}) == 8 + 1);
  CHECK(window.index_of(std::vector<Observation>{1, 0}) == 10 + 0 + 1 * 2);  // y_0 = 0, y_{-1} = 1
  CHECK(window.index_of(std::vector<Observation>{1, 1, 0}) == 0 + 1 * 2 + 1 * 4);
  CHECK(window.index_of(std::vector<Observation>{0, 1, 1, 0}) == 0 + 1 * 2 + 1 * 4);  // only the last 3 count
  const Window<> repeat(3, 2, WindowPadding::repeat_first);
  CHECK(repeat.index_of(std::vector<Observation>{1, 0}) == 0 + 1 * 2 + 1 * 4);  // (1, 1, 0): y_0 repeated back
}

TEST_CASE("every window index decodes to a window that encodes to it again", "[window]") {
  for (const auto padding : {WindowPadding::repeat_first, WindowPadding::zero}) {
    for (const std::size_t n : {1u, 2u, 3u, 5u}) {
      for (const std::size_t m : {1u, 2u, 4u}) {
        const Window<> window(m, n, padding);
        for (std::size_t i = 0; i < window.dim(); ++i) {
          const auto w = window.window_at(i);
          REQUIRE(!w.empty());
          REQUIRE(w.size() <= m);
          REQUIRE((padding == WindowPadding::zero || w.size() == m));
          REQUIRE(window.index_of(w) == i);
        }
      }
    }
  }
}

TEST_CASE("Window's O(1) update agrees with win_m of the whole history", "[window]") {
  for (const auto padding : {WindowPadding::repeat_first, WindowPadding::zero}) {
    for (const std::size_t m : {1u, 2u, 3u, 6u}) {
      const std::size_t n = 4;
      const auto h = random_history(60, n, m * 7 + 1);
      Window<> window(m, n, padding);
      std::size_t full_windows = 1;  // |Y|^m
      for (std::size_t k = 0; k < m; ++k) full_windows *= n;
      window.reset(h[0]);
      for (std::size_t t = 0; t < h.size(); ++t) {
        if (t > 0) window.update(h[t]);
        const std::vector<Observation> seen(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(t + 1));
        INFO("m = " << m << ", t = " << t);
        REQUIRE(window.features().index == window.index_of(seen));
        REQUIRE(window.window_at(window.index()) == padded_window(seen, m, padding));
        REQUIRE(window.index() < window.dim());
        // A full window lies in the first |Y|^m entries under both paddings.
        REQUIRE((window.index() < full_windows) == (padding == WindowPadding::repeat_first || t + 1 >= m));
      }
    }
  }
}

TEST_CASE("compile-time and run-time windows give the same features", "[window]") {
  const auto h = random_history(200, 11, 3);
  Window<3, 11> fixed;
  Window<> runtime(3, 11);
  ConcatWindow<3, 11> concat_fixed;
  ConcatWindow<> concat_runtime(3, 11);
  fixed.reset(h[0]);
  runtime.reset(h[0]);
  concat_fixed.reset(h[0]);
  concat_runtime.reset(h[0]);
  for (std::size_t t = 1; t < h.size(); ++t) {
    fixed.update(h[t]);
    runtime.update(h[t]);
    concat_fixed.update(h[t]);
    concat_runtime.update(h[t]);
    REQUIRE(fixed.features() == runtime.features());
    REQUIRE(to_dense(concat_fixed.features(), 33) == to_dense(concat_runtime.features(), 33));
  }
}

TEST_CASE("ConcatWindow is the stacked one-hot vectors of the window, as Window decodes it", "[window][concat]") {
  for (const auto padding : {WindowPadding::repeat_first, WindowPadding::zero}) {
    const std::size_t m = 4, n = 3;
    const auto h = random_history(40, n, 21);
    ConcatWindow<> concat(m, n, padding);
    Window<> window(m, n, padding);
    concat.reset(h[0]);
    window.reset(h[0]);
    for (std::size_t t = 0; t < h.size(); ++t) {
      if (t > 0) {
        concat.update(h[t]);
        window.update(h[t]);
      }
      const std::vector<Observation> seen(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(t + 1));
      const auto expected = stacked_one_hot(padded_window(seen, m, padding), m, n);
      INFO("t = " << t);
      REQUIRE(to_dense(concat.features(), concat.dim()) == expected);
      // The two encodings represent the same window.
      REQUIRE(stacked_one_hot(window.window_at(window.index()), m, n) == expected);
      // Zero padding: one active entry per observation seen, at most m.
      REQUIRE(concat.features().size() == (padding == WindowPadding::zero ? std::min(t + 1, m) : m));
    }
  }
}

TEST_CASE("update on a fresh or cleared window starts the history like reset", "[window]") {
  Window<> a(3, 2), b(3, 2);
  a.update(1);
  b.reset(1);
  CHECK(a.index() == b.index());
  ConcatWindow<> c(3, 2), d(3, 2);
  c.update(1);
  d.reset(1);
  CHECK(to_dense(c.features(), 6) == to_dense(d.features(), 6));
  c.update(0);
  c.clear();
  c.update(1);
  CHECK(to_dense(c.features(), 6) == to_dense(d.features(), 6));
  a.update(0);
  a.clear();
  a.update(1);
  CHECK(a.index() == b.index());
}

TEST_CASE("bad window arguments throw with the value named", "[window][errors]") {
  CHECK_THROWS_WITH(Window<>(0, 3), "Window: m must be at least 1, got 0");
  CHECK_THROWS_WITH(Window<>(2, 0), "Window: num_observations must be at least 1, got 0");
  CHECK_THROWS_WITH((Window<3, 11>(2, 11)), "Window: m is fixed at compile time to 3, got 2");
  CHECK_THROWS_WITH((Window<3, 11>(3, 10)), "Window: num_observations is fixed at compile time to 11, got 10");
  // 11^10 windows fit in std::size_t but not in memory: refused before allocating, with the size.
  CHECK_THROWS_WITH(Window<>(10, 11),
                    Catch::StartsWith("Window: a table of 25937424601 windows (|Y| = 11, m = 10) needs 193.") &&
                        Catch::EndsWith("GiB as double weights and exceeds max_table_size = 268435456"));
  CHECK_THROWS_WITH(Window<>(20, 11),
                    "Window: the table of |Y|^m windows with |Y| = 11 and m = 20 overflows std::size_t");
  CHECK_THROWS_WITH(Window<>(64, 2, WindowPadding::zero), Catch::Contains("overflows std::size_t"));
  CHECK(Window<>(6, 11, WindowPadding::repeat_first, std::size_t{1} << 21).dim() == 1771561);  // a raised budget
  CHECK_THROWS_WITH(Window<>(6, 11, WindowPadding::repeat_first, 1000),
                    Catch::Contains("exceeds max_table_size = 1000"));

  Window<> window(2, 3);
  window.reset(0);
  window.update(1);
  const auto before = window.index();
  CHECK_THROWS_WITH(window.update(3), "Window: observation must be in [0, 3), got 3");
  CHECK(window.index() == before);
  window.update(2);  // still consistent after the refused update
  CHECK(window.window_at(window.index()) == std::vector<Observation>{1, 2});
  CHECK_THROWS_WITH(window.window_at(9), "Window::window_at: index must be below 9, got 9");
  CHECK_THROWS_WITH(window.index_of({}), "Window::index_of: history must hold at least one observation");

  CHECK_THROWS_WITH(ConcatWindow<>(0, 3), "ConcatWindow: m must be at least 1, got 0");
  CHECK_THROWS_WITH(ConcatWindow<>(2, 0), "ConcatWindow: num_observations must be at least 1, got 0");
  ConcatWindow<> concat(2, 3);
  concat.reset(2);
  concat.update(0);
  const Eigen::VectorXd concat_before = to_dense(concat.features(), 6);
  CHECK_THROWS_WITH(concat.update(5), "ConcatWindow: observation must be in [0, 3), got 5");
  CHECK_THROWS_WITH(concat.reset(3), "ConcatWindow: observation must be in [0, 3), got 3");
  CHECK(to_dense(concat.features(), 6) == concat_before);
  CHECK_THROWS_WITH(window.reset(4), "Window: observation must be in [0, 3), got 4");
  CHECK(window.window_at(window.index()) == std::vector<Observation>{1, 2});
  CHECK_THROWS_WITH(ConcatWindow<>(std::size_t{1} << 40, 2),
                    Catch::StartsWith("ConcatWindow: the active indices for m = 1099511627776 needs") &&
                        Catch::EndsWith("refused before allocating"));
  // The ring of a window is refused like its table: a window over one observation and 2^40 steps.
  CHECK_THROWS_WITH(Window<>(std::size_t{1} << 40, 1), "Window: m = 1099511627776 exceeds max_table_size = 268435456");
}

}  // namespace window_test
