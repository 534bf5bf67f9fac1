// Tests of learn/gae.hpp: GAE against hand-computed sequences with terminations, truncations (both
// modes) and the rollout boundary, and the agent's advantages as GAE of its rollout.
//
// Compiled into the program of ppo_test.cpp, whose Eigen makes allocations and assertions throw
// (eigen_throws.hpp, first in every file of that program).
#include "eigen_throws.hpp"  // first: before Eigen

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/gae.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_buffer.hpp>
#include <memtrace/learn/ppo_loss.hpp>
#include <memtrace/loop/ppo.hpp>
#include <memtrace/loop/rollout.hpp>
#include <span>
#include <vector>

#include "ppo_fixtures.hpp"

namespace gae_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using namespace ppo_fixtures;

// ---------------------------------------------------------------------------------------------
// GAE

namespace {
ActedStep step_of(double reward, bool terminated = false, bool truncated = false) {
  ActedStep s;
  s.reward = reward;
  s.terminated = terminated;
  s.truncated = truncated;
  return s;
}
}  // namespace

TEST_CASE(
    "GAE equals hand-computed sequences with termination, truncation (official, bootstrap and cut) and the "
    "rollout boundary",
    "[gae]") {
  // 3 environments x 4 steps, γ = 0.9, GAE λ = 0.8 (γλ = 0.72); sample s = 3t + i.
  //   env 0: terminated at t = 1;  env 1: truncated at t = 2;  env 2: truncated at the last step.
  const std::size_t n = 3;
  std::vector<ActedStep> steps(12);
  std::vector<double> values(12), finals(12, 0.0);
  const double r[3][4] = {{1, 0, 2, 0}, {0, 1, 0.5, -1}, {0, 0, 0, 1}};
  const double v[3][4] = {{0.5, 0.2, 0.1, 0.3}, {1.0, -0.5, 0.25, 0.4}, {0.1, 0.2, 0.3, 0.4}};
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t i = 0; i < n; ++i) {
      steps[3 * t + i] = step_of(r[i][t], i == 0 && t == 1, (i == 1 && t == 2) || (i == 2 && t == 3));
      values[3 * t + i] = v[i][t];
    }
  finals[3 * 2 + 1] = 0.6;  // V(final observation) of env 1's truncated episode
  finals[3 * 3 + 2] = 0.9;  // and of env 2's
  const std::vector<double> bootstrap = {0.7, 0.2, 0.5};
  std::vector<double> adv(12), target(12);

  // Official: only termination cuts; env 1 chains its truncation into the next episode, env 2
  // bootstraps its last step from the next episode's first state (bootstrap value 0.5).
  const double official[3][4] = {
      // env 0: A3 = 0 + 0.9*0.7 - 0.3 = 0.33; A2 = 2 + 0.9*0.3 - 0.1 + 0.72*0.33 = 2.4076;
      //        A1 = 0 - 0.2 = -0.2 (terminated); A0 = 1 + 0.9*0.2 - 0.5 + 0.72*(-0.2) = 0.536
      {0.536, -0.2, 2.4076, 0.33},
      // env 1: A3 = -1 + 0.9*0.2 - 0.4 = -1.22; A2 = 0.5 + 0.9*0.4 - 0.25 + 0.72*(-1.22) = -0.2684;
      //        A1 = 1 + 0.9*0.25 + 0.5 + 0.72*(-0.2684) = 1.531752; A0 = -0.45 - 1 + 0.72*1.531752
      {-0.34713856, 1.531752, -0.2684, -1.22},
      // env 2: A3 = 1 + 0.9*0.5 - 0.4 = 1.05; A2 = 0.27 - 0.3 + 0.72*1.05 = 0.816;
      //        A1 = 0.27 - 0.2 + 0.72*0.816 = 0.65752; A0 = 0.18 - 0.1 + 0.72*0.65752 = 0.5534144
      {0.5534144, 0.65752, 0.816, 1.05}};
  // Bootstrap: a truncation bootstraps from V(final observation) and cuts the recursion.
  const double bootstrapped[3][4] = {
      {0.536, -0.2, 2.4076, 0.33},  // no truncation: as official
      // env 1: A3 = -1.22; A2 = 0.5 + 0.9*0.6 - 0.25 = 0.79 (cut); A1 = 1.725 + 0.72*0.79 = 2.2938;
      //        A0 = -1.45 + 0.72*2.2938 = 0.201536
      {0.201536, 2.2938, 0.79, -1.22},
      // env 2: A3 = 1 + 0.9*0.9 - 0.4 = 1.41; A2 = 0.06 + 0.72*1.41 = 1.0752;
      //        A1 = 0.07 + 0.72*1.0752 = 0.844144; A0 = 0.08 + 0.72*0.844144 = 0.68778368
      {0.68778368, 0.844144, 1.0752, 1.41}};
  // Cut: a truncation is a termination (neither the final value nor the next episode).
  const double cut[3][4] = {
      {0.536, -0.2, 2.4076, 0.33},  // no truncation: as official
      // env 1: A3 = -1.22; A2 = 0.5 - 0.25 = 0.25 (cut); A1 = 1.725 + 0.72*0.25 = 1.905;
      //        A0 = -1.45 + 0.72*1.905 = -0.0784
      {-0.0784, 1.905, 0.25, -1.22},
      // env 2: A3 = 1 - 0.4 = 0.6; A2 = 0.06 + 0.72*0.6 = 0.492; A1 = 0.07 + 0.72*0.492 = 0.42424;
      //        A0 = 0.08 + 0.72*0.42424 = 0.3854528
      {0.3854528, 0.42424, 0.492, 0.6}};

  for (const TruncationMode mode : {TruncationMode::official, TruncationMode::bootstrap, TruncationMode::cut}) {
    const GaeOptions options{0.9, 0.8, mode};
    // Only bootstrap reads the final values: the other modes take an empty span.
    generalized_advantages<double>(
        options, n, steps, values, bootstrap,
        mode == TruncationMode::bootstrap ? std::span<const double>(finals) : std::span<const double>(), adv, target);
    const auto& expected =
        mode == TruncationMode::official ? official : (mode == TruncationMode::cut ? cut : bootstrapped);
    for (std::size_t t = 0; t < 4; ++t)
      for (std::size_t i = 0; i < n; ++i) {
        INFO("mode " << static_cast<int>(mode) << ", env " << i << ", t " << t);
        CHECK(adv[3 * t + i] == Approx(expected[i][t]).epsilon(1e-12));
        CHECK(target[3 * t + i] == Approx(v[i][t] + expected[i][t]).epsilon(1e-12));
      }
  }
}

TEST_CASE(
    "GAE: a step both terminated and truncated does not bootstrap, and γ = 0, GAE λ = 0 and GAE λ = 1 give r − v, the "
    "TD error and the return − v",
    "[gae]") {
  const std::vector<ActedStep> steps = {step_of(1.0), step_of(2.0, true, true)};
  const std::vector<double> values = {0.25, 0.5}, bootstrap = {10.0}, finals = {0.0, 7.0};
  std::vector<double> adv(2), target(2);
  for (const TruncationMode mode : {TruncationMode::official, TruncationMode::bootstrap, TruncationMode::cut}) {
    generalized_advantages<double>({0.5, 1.0, mode}, 1, steps, values, bootstrap, finals, adv, target);
    CHECK(adv[1] == 1.5);                                 // 2 - 0.5: neither the bootstrap (10) nor the final value (7)
    CHECK(adv[0] == 1.0 + 0.5 * 0.5 - 0.25 + 0.5 * 1.5);  // λ = 1: the full discounted return minus v
  }
  generalized_advantages<double>({0.0, 0.95, TruncationMode::official}, 1, steps, values, bootstrap, finals, adv,
                                 target);
  CHECK(adv[0] == 0.75);  // γ = 0: r − v
  generalized_advantages<double>({0.5, 0.0, TruncationMode::official}, 1, steps, values, bootstrap, finals, adv,
                                 target);
  CHECK(adv[0] == 1.0 + 0.5 * 0.5 - 0.25);  // GAE λ = 0: the one-step TD error
}

TEST_CASE(
    "the agent's advantages are GAE of its rollout, bootstrapping from the given features and, in bootstrap "
    "mode, from the final observations (normalised with the statistics of the moment when the agent normalises)",
    "[gae][ppo]") {
  for (const auto& variant : {std::pair{TruncationMode::official, false}, std::pair{TruncationMode::bootstrap, false},
                              std::pair{TruncationMode::bootstrap, true}, std::pair{TruncationMode::cut, false}}) {
    const TruncationMode mode = variant.first;
    const bool normalize = variant.second;  // a plain variable: Clang 14 cannot capture a structured binding
    PpoOptions o = small_options();
    o.truncation = mode;
    o.n_steps = 16;
    o.normalize_features = normalize;
    Ppo<Eigen::VectorXd, double> agent(5, 3, o, 2);
    Ppo<Eigen::VectorXd, double> values_only(5, 3, o, 2);  // same parameters: an independent critic
    FeatureNormalizer statistics(5);                       // what the agent's normaliser should hold
    const auto input = [&](const Eigen::VectorXd& phi) -> Eigen::VectorXd {
      return normalize ? statistics.normalized(phi) : phi;
    };
    auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 9);
    std::vector<double> finals(32, 0.0);
    std::size_t truncations = 0;
    auto buffer = agent.make_buffer();
    auto acting = agent.acting(buffer);
    rollout.collect(acting, 16, [&](const RolloutBatch<Eigen::VectorXd>& batch) {
      statistics.update(batch.features);  // act folded them in before acting
      for (std::size_t i = 0; i < 2; ++i)
        if (batch.steps[i].truncated && !batch.steps[i].terminated) {
          ++truncations;
          Eigen::MatrixXd x = input(batch.next_features[i]);
          finals[2 * buffer.recorded() + i] = values_only.critic().forward(x)(0, 0);
        }
      acting(batch);
    });
    REQUIRE(truncations > 0);
    std::vector<Eigen::VectorXd> bootstrap = {rollout.features(0), rollout.features(1)};
    acting.bootstrap(bootstrap);
    agent.compute_advantages(buffer);
    Eigen::MatrixXd x(5, 2);
    x << input(bootstrap[0]), input(bootstrap[1]);
    const Eigen::RowVectorXd boot = values_only.critic().forward(x);
    std::vector<double> adv(32), target(32);
    generalized_advantages<double>({o.discount, o.gae_lambda, mode}, 2, buffer.steps, copy_of(buffer.values),
                                   copy_of(boot), finals, adv, target);
    for (std::size_t s = 0; s < 32; ++s) {
      CHECK(buffer.advantages[static_cast<Eigen::Index>(s)] == Approx(adv[s]).epsilon(1e-12));
      CHECK(buffer.targets[static_cast<Eigen::Index>(s)] == Approx(target[s]).epsilon(1e-12));
    }
  }
}

}  // namespace gae_test
