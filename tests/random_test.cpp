// Tests of random.hpp: reference vectors of the generators, pinned outputs of the sampling
// functions (a change in any stream is noticed), exactness, the normal's distribution, bad input.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memtrace/random.hpp>
#include <random>
#include <set>
#include <vector>

namespace random_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

TEST_CASE("SplitMix64 and xoshiro256** reproduce their reference vectors", "[random]") {
  // Published reference outputs: SplitMix64 from seed 1234567; xoshiro256** from state {1, 2, 3, 4}.
  SplitMix64 sm(1234567);
  CHECK(sm() == 6457827717110365317ULL);
  CHECK(sm() == 3203168211198807973ULL);
  CHECK(sm() == 9817491932198370423ULL);
  auto x = Xoshiro256StarStar::from_state({1, 2, 3, 4});
  CHECK(x() == 11520ULL);
  CHECK(x() == 0ULL);
  CHECK(x() == 1509978240ULL);
  CHECK(x() == 1215971899390074240ULL);
}

TEST_CASE("seeded generators and streams give pinned numbers", "[random]") {
  // Pinned from an independent implementation; a change here changes every experiment's numbers.
  Xoshiro256StarStar g(42);
  CHECK(g() == 1546998764402558742ULL);
  CHECK(g() == 6990951692964543102ULL);
  CHECK(g() == 12544586762248559009ULL);
  CHECK(make_stream(42, 0)() == 606188962970143553ULL);
  CHECK(make_stream(42, 1)() == 10472034962190877855ULL);
  CHECK(make_stream(42, 2)() == 10414184744391717200ULL);
}

TEST_CASE("sampling functions give pinned numbers", "[random]") {
  Xoshiro256StarStar g(2024);
  std::vector<std::uint64_t> indices;
  for (int i = 0; i < 10; ++i) indices.push_back(uniform_index(g, 11));
  CHECK(indices == std::vector<std::uint64_t>{0, 8, 0, 1, 8, 2, 4, 2, 6, 0});

  Xoshiro256StarStar r(7);
  CHECK(uniform_real(r) == 0x1.66b1f5ee9df2ep-1);
  CHECK(uniform_real(r) == 0x1.1d70f6593d20ap-2);
  CHECK(uniform_real(r) == 0x1.ade3a6932a58fp-1);

  Xoshiro256StarStar s(99);
  std::vector<std::int64_t> steps;
  for (int i = 0; i < 8; ++i) steps.push_back(uniform_int(s, -100, 100));
  CHECK(steps == std::vector<std::int64_t>{-30, 13, -24, 71, 57, -59, -45, -89});
}

TEST_CASE("streams are distinct for every run index and repeatable", "[random]") {
  std::set<std::uint64_t> first;
  for (std::uint64_t run = 0; run < 10000; ++run) first.insert(make_stream(5, run)());
  CHECK(first.size() == 10000);
  CHECK(make_stream(5, 17) == make_stream(5, 17));
  CHECK(make_stream(5, 17) != make_stream(6, 17));
  CHECK(stream_key(5, 17) != stream_key(17, 5));  // seed and run index are not interchangeable
  // Neighbouring streams are uncorrelated: E[u v] = 1/4 within 6 standard errors (sd of u v is 0.22).
  const int n = 100000;
  double sum = 0.0;
  for (int run = 0; run < n; ++run) {
    auto a = make_stream(1, static_cast<std::uint64_t>(run));
    auto b = make_stream(1, static_cast<std::uint64_t>(run) + 1);
    sum += uniform_real(a) * uniform_real(b);
  }
  CHECK(std::abs(sum / n - 0.25) < 6 * 0.22 / std::sqrt(n));
}

TEST_CASE("uniform_index is uniform (chi-square) for several n", "[random]") {
  Xoshiro256StarStar g(3);
  for (std::uint64_t n : {2ULL, 3ULL, 11ULL, 201ULL}) {
    const int draws = 200000;
    std::vector<double> counts(n, 0.0);
    for (int i = 0; i < draws; ++i) {
      const auto k = uniform_index(g, n);
      REQUIRE(k < n);
      counts[k] += 1.0;
    }
    double chi2 = 0.0;
    const double expected = static_cast<double>(draws) / static_cast<double>(n);
    for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
    // Mean n-1, sd sqrt(2(n-1)): 6 sd above the mean is never reached by a uniform sampler.
    const double df = static_cast<double>(n - 1);
    INFO("n = " << n << ", chi2 = " << chi2);
    CHECK(chi2 < df + 6.0 * std::sqrt(2.0 * df));
  }
}

TEST_CASE("uniform_index is exact where the rejection matters", "[random]") {
  // n = 3 * 2^62: multiply-shift without rejection maps two words to every k = 0 mod 3 and one word
  // to the others, so P(k = 0 mod 3) would be 1/2; the rejection step makes it exactly 1/3.
  Xoshiro256StarStar g(11);
  const std::uint64_t n = 3 * (std::uint64_t{1} << 62);
  const int draws = 30000;
  int multiples = 0;
  for (int i = 0; i < draws; ++i) multiples += uniform_index(g, n) % 3 == 0 ? 1 : 0;
  CHECK(std::abs(multiples / double(draws) - 1.0 / 3.0) < 6 * std::sqrt(2.0 / 9.0 / draws));
  CHECK(uniform_index(g, 1) == 0);
}

TEST_CASE("uniform_int covers its closed range", "[random]") {
  Xoshiro256StarStar g(12);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const auto v = uniform_int(g, -3, 3);
    REQUIRE(v >= -3);
    REQUIRE(v <= 3);
    seen.insert(v);
  }
  CHECK(seen.size() == 7);
  CHECK(uniform_int(g, 5, 5) == 5);
  // The ends of the 64-bit range: no overflow, and the whole range is the generator's raw word.
  for (int i = 0; i < 100; ++i) {
    const auto low = uniform_int(g, INT64_MIN, INT64_MIN + 2);
    REQUIRE((low >= INT64_MIN && low <= INT64_MIN + 2));
    const auto high = uniform_int(g, INT64_MAX - 1, INT64_MAX);
    REQUIRE((high == INT64_MAX - 1 || high == INT64_MAX));
  }
  Xoshiro256StarStar a(5), b(5);
  CHECK(uniform_int(a, INT64_MIN, INT64_MAX) == static_cast<std::int64_t>(b() + (std::uint64_t{1} << 63)));
}

TEST_CASE(
    "uniform_real gives multiples of 2^-53 in 0 to 1 (1 excluded) with mean 1/2, and bernoulli(p) comes up with "
    "frequency p",
    "[random]") {
  Xoshiro256StarStar g(13);
  const int n = 200000;
  double sum = 0.0;
  int heads = 0;
  for (int i = 0; i < n; ++i) {
    const double u = uniform_real(g);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    REQUIRE(u * 0x1.0p53 == std::floor(u * 0x1.0p53));  // a multiple of 2^-53
    sum += u;
    heads += bernoulli(g, 0.3) ? 1 : 0;
  }
  CHECK(std::abs(sum / n - 0.5) < 6 * std::sqrt(1.0 / 12.0 / n));
  CHECK(std::abs(heads / double(n) - 0.3) < 6 * std::sqrt(0.3 * 0.7 / n));
  for (int i = 0; i < 1000; ++i) {
    REQUIRE_FALSE(bernoulli(g, 0.0));
    REQUIRE(bernoulli(g, 1.0));
  }
}

TEST_CASE("standard_normal gives pinned numbers and draws two words a try", "[random][normal]") {
  // Pinned from an independent implementation (Python, exact rational s); the third value needed a
  // second try (its first pair fell outside the unit disc), so four values took 10 words.
  Xoshiro256StarStar g(42);
  CHECK(standard_normal(g) == -0x1.73d2feb0fb375p-1);
  CHECK(standard_normal(g) == 0x1.c5e21f7812a51p-3);
  CHECK(standard_normal(g) == 0x1.db514bfac5b4ep-2);
  CHECK(standard_normal(g) == 0x1.79eb7c13cfccdp+0);
  Xoshiro256StarStar words(42);
  for (int i = 0; i < 2 + 2 + 4 + 2; ++i) (void)words();
  CHECK(g == words);
}

TEST_CASE("standard_normal has the moments, tails and distribution function of N(0, 1) over 10^6 draws",
          "[random][normal]") {
  Xoshiro256StarStar g(17);
  const int n = 1000000;
  std::vector<double> x(n);
  for (auto& v : x) v = standard_normal(g);
  // Sample moments k = 1..4 against E x^k = 0, 1, 0, 3, within 6 standard errors sqrt(Var(x^k) / n)
  // with Var(x^k) = E x^2k - (E x^k)^2 = 1, 2, 15, 96.
  const std::array<double, 4> expected{0.0, 1.0, 0.0, 3.0}, variance{1.0, 2.0, 15.0, 96.0};
  for (int k = 1; k <= 4; ++k) {
    double sum = 0.0;
    for (const double v : x) sum += std::pow(v, k);
    INFO("moment " << k << " = " << sum / n);
    CHECK(std::abs(sum / n - expected[k - 1]) < 6.0 * std::sqrt(variance[k - 1] / n));
  }
  // Tails: P(|x| > 4) = erfc(4 / sqrt 2) = 6.33e-5, a binomial count of mean 63.
  const double p4 = std::erfc(4.0 / std::sqrt(2.0));
  const auto beyond = std::count_if(x.begin(), x.end(), [](double v) { return std::abs(v) > 4.0; });
  CHECK(std::abs(static_cast<double>(beyond) - n * p4) < 6.0 * std::sqrt(n * p4));
  // Kolmogorov-Smirnov: P(sqrt(n) D_n > 2.7) ~ 2 exp(-2 * 2.7^2) < 10^-6 for a true N(0, 1) sample.
  std::sort(x.begin(), x.end());
  double d = 0.0;
  for (int i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-x[static_cast<std::size_t>(i)] / std::sqrt(2.0));
    d = std::max({d, cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf});
  }
  INFO("sqrt(n) D = " << std::sqrt(double(n)) * d);
  CHECK(std::sqrt(double(n)) * d < 2.7);
}

TEST_CASE("random_bits works with any uniform random bit generator", "[random]") {
  // Full 64-bit range: one call.
  std::mt19937_64 a(1), a_copy(1);
  CHECK(random_bits(a) == a_copy());
  // 32-bit range (mt19937's result_type may be 64 bits wide, its range is not): high word first.
  std::mt19937 b(1), b_copy(1);
  const std::uint64_t high = b_copy(), low = b_copy();
  CHECK(random_bits(b) == ((high << 32) | low));
  // An odd range (minstd_rand gives [1, 2^31 - 2]): 30 bits a call, values above rejected.
  std::minstd_rand c(1), c_copy(1);
  std::uint64_t expected = 0;
  for (int have = 0; have < 64; have += 30) {
    std::uint64_t v;
    do v = c_copy() - 1;
    while (v >= (1u << 30));
    expected = (expected << 30) | v;
  }
  CHECK(random_bits(c) == expected);
  // A 2^32-value range that does not start at 0: the offset is removed from each word.
  struct Offset32 {
    using result_type = std::uint64_t;
    std::mt19937 inner{3};
    static constexpr result_type min() { return 100; }
    static constexpr result_type max() { return 100 + 0xffffffffULL; }
    result_type operator()() { return 100 + inner(); }
  };
  Offset32 d;
  std::mt19937 d_copy(3);
  const std::uint64_t d_high = d_copy(), d_low = d_copy();
  CHECK(random_bits(d) == ((d_high << 32) | d_low));
  // Sampling through any of them stays in range.
  for (int i = 0; i < 1000; ++i) REQUIRE(uniform_index(c, 7) < 7);
}

TEST_CASE("bad arguments to the samplers throw with the value named", "[random][errors]") {
  Xoshiro256StarStar g(1);
  CHECK_THROWS_WITH(uniform_index(g, 0), "uniform_index: n must be at least 1, got 0");
  CHECK_THROWS_WITH(uniform_int(g, 3, 2), "uniform_int: lo must not exceed hi, got lo = 3, hi = 2");
  CHECK_THROWS_WITH(bernoulli(g, 1.5), "bernoulli: p must be in [0, 1], got 1.5");
  CHECK_THROWS_WITH(bernoulli(g, std::nan("")), Catch::Contains("bernoulli: p must be in [0, 1], got nan"));
  CHECK_THROWS_WITH(Xoshiro256StarStar::from_state({0, 0, 0, 0}), Catch::Contains("must not be all zero"));
}

}  // namespace random_test
