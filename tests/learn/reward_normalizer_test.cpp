// Tests of learn/reward_normalizer.hpp: each normalised reward equals r / sqrt(Var + ε), clipped,
// with Var the population variance of every discounted return seen so far computed in two passes;
// returns restart at episode ends; frozen means frozen; bad input refused with nothing changed.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memtrace/experience.hpp>
#include <memtrace/learn/reward_normalizer.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace reward_normalizer_test {  // a namespace of its own: the folder's tests are compiled as one file

using memtrace::ActedStep;
using memtrace::RewardNormalizer;

namespace {

/// The population variance of xs, in two passes.
double two_pass_variance(const std::vector<double>& xs) {
  double mean = 0;
  for (const double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  double sum = 0;
  for (const double x : xs) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(xs.size());
}

}  // namespace

TEST_CASE("normalised rewards are r / sqrt(Var[R] + eps) with the two-pass variance of every return so far, clipped",
          "[reward_normalizer]") {
  const std::size_t n = 3;
  const double gamma = 0.9, scale = 0.5;
  RewardNormalizer normalizer(n, gamma);
  memtrace::DefaultGenerator gen(7);
  std::vector<double> returns(n, 0.0), seen;
  std::size_t ends = 0;
  for (int t = 0; t < 300; ++t) {
    std::vector<ActedStep> steps(n);
    for (ActedStep& s : steps) {
      s.reward = 40.0 * memtrace::uniform_real(gen) - 20.0;
      s.terminated = memtrace::uniform_real(gen) < 0.05;
      s.truncated = memtrace::uniform_real(gen) < 0.05;
    }
    std::vector<double> got(n, std::numeric_limits<double>::quiet_NaN());
    normalizer.normalize(steps, scale, [&](std::size_t i, double r) { got[i] = r; });
    for (std::size_t i = 0; i < n; ++i) {
      returns[i] = gamma * returns[i] + scale * steps[i].reward;
      seen.push_back(returns[i]);
    }
    const double variance = two_pass_variance(seen);
    CHECK(normalizer.variance() == Approx(variance).epsilon(1e-12));
    for (std::size_t i = 0; i < n; ++i) {
      const double raw = scale * steps[i].reward / std::sqrt(variance + 1e-8);
      CHECK(got[i] == Approx(std::clamp(raw, -10.0, 10.0)).epsilon(1e-11));
      if (steps[i].terminated || steps[i].truncated) {
        returns[i] = 0.0;
        ++ends;
      }
      CHECK(normalizer.returns()[static_cast<Eigen::Index>(i)] == Approx(returns[i]).margin(1e-12));
    }
  }
  CHECK(ends > 20);
  CHECK(normalizer.statistics().count() == 900);

  // The clip: one environment's first return has variance 0, so its reward is ε-scaled to ±c.
  RewardNormalizer single(1, 0.99, {1e-8, 5.0});
  std::vector<ActedStep> one(1);
  one[0].reward = -0.25;
  double r = 0;
  single.normalize(one, 1.0, [&](std::size_t, double x) { r = x; });
  CHECK(r == -5.0);  // the sign is kept: rewards are scaled, never centred

  // Frozen: the statistics and the returns stay; the frozen variance scales; ends still reset.
  normalizer.freeze();
  const RewardNormalizer before = normalizer;
  std::vector<ActedStep> steps(n);
  steps[0].reward = 3.0;
  steps[1].reward = -1.0;
  steps[1].terminated = true;
  std::vector<double> got(n);
  normalizer.normalize(steps, 1.0, [&](std::size_t i, double x) { got[i] = x; });
  CHECK(normalizer.statistics() == before.statistics());
  CHECK(normalizer.returns()[0] == before.returns()[0]);
  CHECK(normalizer.returns()[1] == 0.0);
  CHECK(got[0] == Approx(3.0 / std::sqrt(before.variance() + 1e-8)).epsilon(1e-15));
  normalizer.unfreeze();
  CHECK(!normalizer.frozen());
}

TEST_CASE("RewardNormalizer refuses bad arguments, naming them, and a refused step changes nothing",
          "[reward_normalizer][errors]") {
  CHECK_THROWS_WITH(RewardNormalizer(0, 0.9), "RewardNormalizer: n_envs must be at least 1, got 0");
  CHECK_THROWS_WITH(RewardNormalizer(2, 1.5), "RewardNormalizer: discount must be in [0, 1], got 1.5");
  CHECK_THROWS_WITH(RewardNormalizer(2, 0.9, {1e-8, 0.0}),
                    Catch::Contains("RewardNormalizer: options.clip must be positive"));
  RewardNormalizer normalizer(2, 0.9);
  std::vector<ActedStep> steps(2);
  steps[0].reward = 1.0;
  steps[1].reward = 2.0;
  normalizer.normalize(steps, 1.0, [](std::size_t, double) {});
  const RewardNormalizer before = normalizer;
  std::vector<ActedStep> three(3);
  CHECK_THROWS_WITH(normalizer.normalize(three, 1.0, [](std::size_t, double) {}),
                    "RewardNormalizer::normalize: steps holds 3 entries, expected n_envs = 2");
  steps[1].reward = std::numeric_limits<double>::infinity();
  bool written = false;
  CHECK_THROWS_WITH(normalizer.normalize(steps, 1.0, [&](std::size_t, double) { written = true; }),
                    "RewardNormalizer::normalize: the reward of environment 1 is inf; rewards must be finite");
  CHECK(!written);
  CHECK(normalizer == before);
}

}  // namespace reward_normalizer_test
