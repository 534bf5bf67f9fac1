// Tests of experiment/bootstrap.hpp: the percentile-bootstrap interval of a mean against the normal
// approximation of a long sample, of a ratio of means against a delta-method width, exact
// resampling arithmetic on a two-value sample, determinism, degenerate and undefined statistics,
// and bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/experiment/bootstrap.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <vector>

namespace bootstrap_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

double first(std::span<const double> means) { return means[0]; }

std::vector<double> normal_sample(std::size_t n, double mean, double sd, std::uint64_t seed) {
  DefaultGenerator gen(seed);
  std::vector<double> x(n);
  for (double& v : x) v = mean + sd * standard_normal(gen);
  return x;
}

}  // namespace

TEST_CASE("the bootstrap interval of a mean is the normal interval of a long sample", "[bootstrap]") {
  const std::vector<std::vector<double>> samples = {normal_sample(400, 3.0, 2.0, 1)};
  DefaultGenerator gen(5);
  const BootstrapInterval b = percentile_bootstrap(std::span(samples), first, gen, 20'000);
  double mean = 0, sq = 0;
  for (const double x : samples[0]) mean += x / 400;
  for (const double x : samples[0]) sq += (x - mean) * (x - mean) / 400;
  CHECK(b.estimate == Approx(mean).epsilon(1e-12));
  const double half = 1.959964 * std::sqrt(sq / 400);  // the plug-in standard error
  CHECK(b.low == Approx(mean - half).margin(0.08 * half));
  CHECK(b.high == Approx(mean + half).margin(0.08 * half));
}

TEST_CASE("the bootstrap interval of a ratio of means has the delta method's width", "[bootstrap]") {
  // (a − c) / (b − c) with independent samples: the gap a memory closes between a floor and a ceiling.
  const std::vector<std::vector<double>> samples = {normal_sample(300, 8.0, 1.0, 2), normal_sample(300, 10.0, 1.0, 3),
                                                    normal_sample(300, 0.0, 1.0, 4)};
  const auto gap = [](std::span<const double> m) { return (m[0] - m[2]) / (m[1] - m[2]); };
  DefaultGenerator gen(6);
  const BootstrapInterval b = percentile_bootstrap(std::span(samples), gap, gen, 20'000);
  // Delta method with the plug-in variances: ∂/∂a = 1/(b−c), ∂/∂b = −(a−c)/(b−c)², ∂/∂c = (a−b)/(b−c)².
  std::vector<double> m(3), v(3);
  for (std::size_t g = 0; g < 3; ++g) {
    for (const double x : samples[g]) m[g] += x / 300;
    for (const double x : samples[g]) v[g] += (x - m[g]) * (x - m[g]) / 300 / 300;
  }
  const double d = m[1] - m[2];
  const double se = std::sqrt(v[0] / (d * d) + v[1] * std::pow((m[0] - m[2]) / (d * d), 2) +
                              v[2] * std::pow((m[0] - m[1]) / (d * d), 2));
  CHECK(b.estimate == Approx(gap(m)).epsilon(1e-12));
  CHECK(b.high - b.low == Approx(2 * 1.959964 * se).epsilon(0.08));
  CHECK(b.low < b.estimate);
  CHECK(b.high > b.estimate);
}

TEST_CASE("bootstrap resampling draws each index with uniform_index, and the same generator gives the same interval",
          "[bootstrap]") {
  // Two values {0, 1}: a resampled mean of 2 draws is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4.
  const std::vector<std::vector<double>> samples = {{0.0, 1.0}};
  DefaultGenerator gen(9), replay(9);
  const BootstrapInterval b = percentile_bootstrap(std::span(samples), first, gen, 4001, 0.4);
  // The 30% and 70% quantiles of 4001 draws fall inside the middle value's mass (25% to 75%).
  CHECK(b.low == 0.5);
  CHECK(b.high == 0.5);
  std::size_t at_zero = 0;
  for (int r = 0; r < 4001; ++r) {
    const double m =
        (static_cast<double>(uniform_index(replay, 2)) + static_cast<double>(uniform_index(replay, 2))) / 2;
    at_zero += m == 0.0 ? 1 : 0;
  }
  CHECK(gen == replay);  // exactly two uniform_index draws a resample
  CHECK(at_zero > 850);
  CHECK(at_zero < 1150);
  DefaultGenerator g1(4), g2(4);
  const std::vector<std::vector<double>> noisy = {normal_sample(10, 0.0, 1.0, 8)};
  const BootstrapInterval x = percentile_bootstrap(std::span(noisy), first, g1, 500);
  const BootstrapInterval y = percentile_bootstrap(std::span(noisy), first, g2, 500);
  CHECK(x.low == y.low);
  CHECK(x.high == y.high);
}

TEST_CASE("bootstrap: a constant sample has a point interval, an undefined statistic NaN, bad input is refused",
          "[bootstrap]") {
  DefaultGenerator gen(1);
  const std::vector<std::vector<double>> constant = {{2.5, 2.5, 2.5}};
  const BootstrapInterval c = percentile_bootstrap(std::span(constant), first, gen, 100);
  CHECK(c.low == 2.5);
  CHECK(c.high == 2.5);
  const std::vector<std::vector<double>> same = {{1.0, 1.0}, {1.0, 1.0}};
  const auto ratio = [](std::span<const double> m) { return (m[0] - 1.0) / (m[1] - 1.0); };  // 0 / 0
  const BootstrapInterval u = percentile_bootstrap(std::span(same), ratio, gen, 10);
  CHECK(std::isnan(u.low));
  CHECK(std::isnan(u.high));
  const std::vector<std::vector<double>> none;
  CHECK_THROWS_WITH(percentile_bootstrap(std::span(none), first, gen),
                    "percentile_bootstrap: samples must hold at least one sample, got none");
  const std::vector<std::vector<double>> empty = {{1.0}, {}};
  CHECK_THROWS_WITH(percentile_bootstrap(std::span(empty), first, gen), "percentile_bootstrap: samples[1] is empty");
  CHECK_THROWS_WITH(percentile_bootstrap(std::span(constant), first, gen, 0),
                    "percentile_bootstrap: resamples must be at least 1, got 0");
  CHECK_THROWS_WITH(percentile_bootstrap(std::span(constant), first, gen, std::size_t{1} << 62),
                    Catch::Contains("percentile_bootstrap: the resampled statistics for resamples = "));
  CHECK_THROWS_WITH(percentile_bootstrap(std::span(constant), first, gen, 10, 1.0),
                    "percentile_bootstrap: level must be in (0, 1), got 1");
}

}  // namespace bootstrap_test
