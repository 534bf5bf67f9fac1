// Tests of learn/ppo_loss.hpp and learn/ppo_buffer.hpp's minibatch: the whole PPO loss gradient
// (ppo_loss) against central finite differences, the loss terms against their formulas, the
// agent's update as ppo_loss on gathered minibatches, and the refusals of ppo_loss and gather.
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

#include "loss_gradient_check.hpp"
#include "ppo_fixtures.hpp"

namespace ppo_loss_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using namespace ppo_fixtures;

// ---------------------------------------------------------------------------------------------
// The loss gradient

TEST_CASE("the whole PPO loss gradient equals central finite differences for every parameter of both networks",
          "[ppo][gradient]") {
  // Three settings: the official coefficients; a narrow clip (most ratios clipped); a large entropy
  // weight with a small value weight. In each, the ratios straddle the clip range (some samples
  // have a gradient through the surrogate, some not), advantages are normalised over the 11 chosen
  // samples, and the value and entropy terms are non-zero. The loss is ppo_loss itself, on a
  // minibatch gathered from the agent's buffer: a function of the networks, the minibatch and the
  // coefficients.
  // A fourth clips the value loss (CleanRL's clip_vloss): some samples' values moved more than ε
  // from the rollout's, so both terms of its max and the flat part of the clip are exercised.
  struct Setting {
    double clip_epsilon, vf_coef, ent_coef;
    bool clip_value_loss = false;
  };
  const Setting setting = GENERATE(Setting{0.2, 0.5, 0.01}, Setting{0.05, 0.5, 0.01}, Setting{0.2, 0.1, 0.3},
                                   Setting{0.2, 0.5, 0.01, true});
  PpoOptions o = small_options();
  o.clip_epsilon = setting.clip_epsilon;
  o.vf_coef = setting.vf_coef;
  o.ent_coef = setting.ent_coef;
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 11);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 3);
  const auto buffer = collect(agent, rollout);
  // Move away from the acting parameters so that the ratios are not 1.
  Xoshiro256StarStar noise(5);
  for (auto& p : agent.actor().parameters()) p += 0.4 * standard_normal(noise);
  for (auto& p : agent.critic().parameters()) p += 0.4 * standard_normal(noise);

  const std::vector<std::size_t> samples = {3, 14, 0, 7, 9, 12, 1, 5, 15, 10, 6};
  PpoMinibatch<Eigen::VectorXd, double> minibatch;
  minibatch.gather(buffer, samples);
  const PpoLossCoefficients coefficients{setting.clip_epsilon, setting.vf_coef, setting.ent_coef,
                                         setting.clip_value_loss};
  ActorCritic<double>& nets = agent.networks();
  const PpoLoss at = ppo_loss(nets, minibatch, coefficients, false);
  if (setting.clip_value_loss) {  // the value term is the documented max, and larger than unclipped
    const Eigen::RowVectorXd v = nets.critic().forward(minibatch.features.block(0, samples.size()));
    double expected = 0;
    std::size_t clipped = 0, flat = 0;
    for (Eigen::Index j = 0; j < v.size(); ++j) {
      const double old = minibatch.old_values[j], target = minibatch.targets[j];
      const double clipped_v = old + std::clamp(v[j] - old, -setting.clip_epsilon, setting.clip_epsilon);
      const double a = (v[j] - target) * (v[j] - target), b = (clipped_v - target) * (clipped_v - target);
      expected += 0.5 * std::max(a, b);
      clipped += b > a ? 1 : 0;
      flat += b > a && std::abs(v[j] - old) >= setting.clip_epsilon ? 1 : 0;
    }
    CHECK(at.value_loss == Approx(expected / static_cast<double>(v.size())).epsilon(1e-12));
    INFO("samples whose clipped term is the larger: " << clipped << ", of them flat: " << flat);
    CHECK(clipped > 0);
    CHECK(flat > 0);
    CHECK(clipped < samples.size());
    CHECK(at.value_loss >
          ppo_loss(nets, minibatch, PpoLossCoefficients{setting.clip_epsilon, setting.vf_coef, setting.ent_coef}, false)
              .value_loss);
  }
  INFO("clip fraction " << at.clip_fraction << ", entropy " << at.entropy << ", value loss " << at.value_loss);
  REQUIRE(at.clip_fraction > 0.0);
  REQUIRE(at.clip_fraction < 1.0);
  REQUIRE(at.entropy > 0.1);
  REQUIRE(at.value_loss > 0.01);
  // Every parameter of both networks (the actor's block, then the critic's).
  const test_gradients::GradientCheck check = test_gradients::check_loss_gradient(nets, minibatch, coefficients, 1e-7);
  INFO("worst relative error " << check.worst);
  CHECK(check.count == agent.actor().num_parameters() + agent.critic().num_parameters());
  CHECK(check.worst < 1e-7);
}

TEST_CASE("the loss terms are the documented formulas: ratio, per-minibatch normalised advantages, 0.5 MSE, entropy",
          "[ppo][gradient]") {
  // An independent evaluation of the loss from the networks' outputs, sample by sample.
  PpoOptions o = small_options();
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 4);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 8);
  const auto buffer = collect(agent, rollout);
  Xoshiro256StarStar noise(6);
  for (auto& p : agent.actor().parameters()) p += 0.3 * standard_normal(noise);
  const std::vector<std::size_t> samples = {2, 4, 6, 8, 10, 11, 13};
  const PpoLoss got = loss_on(agent, buffer, samples, false);

  std::vector<double> adv;
  for (const std::size_t s : samples) adv.push_back(buffer.advantages[static_cast<Eigen::Index>(s)]);
  double mean = 0, var = 0;
  for (const double a : adv) mean += a / 7;
  for (const double a : adv) var += (a - mean) * (a - mean) / 7;
  double pi = 0, v = 0, ent = 0, kl = 0, clipped = 0;
  for (std::size_t j = 0; j < samples.size(); ++j) {
    // A minibatch of one forwards sample s through both networks (its stored features).
    const std::size_t s = samples[j];
    const std::array<std::size_t, 1> one = {s};
    (void)loss_on(agent, buffer, one, false);
    const auto logits = agent.actor().output().col(0);
    const double value = agent.critic().output()(0, 0);
    const double m = logits.maxCoeff();
    const double lse = m + std::log((logits.array() - m).exp().sum());
    const Eigen::VectorXd logp = logits.array() - lse;
    const Action a = buffer.actions[s];
    const double ratio = std::exp(logp[static_cast<Eigen::Index>(a)] - buffer.log_probs[static_cast<Eigen::Index>(s)]);
    const double hat = (adv[j] - mean) / (std::sqrt(var) + 1e-8);
    pi -= std::min(ratio * hat, std::clamp(ratio, 0.8, 1.2) * hat) / 7;
    v += 0.5 * std::pow(value - buffer.targets[static_cast<Eigen::Index>(s)], 2) / 7;
    ent -= (logp.array().exp() * logp.array()).sum() / 7;
    kl += ((ratio - 1) - std::log(ratio)) / 7;
    clipped += (std::abs(ratio - 1) > 0.2 ? 1.0 : 0.0) / 7;
  }
  CHECK(got.policy_loss == Approx(pi).epsilon(1e-12));
  CHECK(got.value_loss == Approx(v).epsilon(1e-12));
  CHECK(got.entropy == Approx(ent).epsilon(1e-12));
  CHECK(got.approx_kl == Approx(kl).epsilon(1e-9));
  CHECK(got.clip_fraction == Approx(clipped));
  CHECK(got.loss == Approx(pi + 0.5 * v - 0.01 * ent).epsilon(1e-12));
}

TEST_CASE("a minibatch gathers the buffer's samples, and the agent's update is ppo_loss on them", "[ppo][gradient]") {
  PpoOptions o = small_options();
  o.ent_coef = 0.05;
  Ppo<Eigen::VectorXf, float> agent(5, 3, o, 9);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXf>{}, 2);
  const auto buffer = collect(agent, rollout);
  REQUIRE(buffer.samples() == 16);
  REQUIRE(buffer.full());
  REQUIRE(buffer.bootstrapped());
  const std::vector<std::size_t> samples = {15, 1, 8, 8, 3};  // a repeated sample counts twice
  PpoMinibatch<Eigen::VectorXf, float> minibatch;
  minibatch.gather(buffer, samples);
  REQUIRE(minibatch.count == 5);
  for (std::size_t j = 0; j < samples.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j), s = static_cast<Eigen::Index>(samples[j]);
    CHECK(minibatch.actions[j] == buffer.actions[samples[j]]);
    CHECK(minibatch.old_log_probs[jj] == buffer.log_probs[s]);
    CHECK(minibatch.old_values[jj] == buffer.values[s]);
    CHECK(minibatch.advantages[jj] == buffer.advantages[s]);
    CHECK(minibatch.targets[jj] == buffer.targets[s]);
    CHECK(minibatch.features.block(0, 5).col(jj) == buffer.features.block(samples[j], 1).col(0));
  }
  // One workspace for minibatches of two sizes: only the gathered samples count.
  PpoLossWorkspace<float> workspace;
  const PpoLoss five = ppo_loss(agent.networks(), minibatch, agent.loss_coefficients(), true, workspace);
  const std::vector<double> gradient = copy_of(agent.actor().gradients());
  minibatch.gather(buffer, std::vector<std::size_t>{15});
  const PpoLoss one = ppo_loss(agent.networks(), minibatch, agent.loss_coefficients(), false, workspace);
  CHECK(one.loss == loss_on(agent, buffer, std::vector<std::size_t>{15}, false).loss);
  CHECK(five.loss == loss_on(agent, buffer, samples, true).loss);
  CHECK(copy_of(agent.actor().gradients()) == gradient);

  // With one minibatch and one epoch, the update's statistics are ppo_loss on all samples (in the
  // permuted order: the mean over them is the same up to rounding).
  PpoOptions single = o;
  single.minibatches = 1;
  single.epochs = 1;
  single.total_updates = 1;
  Ppo<Eigen::VectorXf, float> learner(5, 3, single, 9);
  auto again = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXf>{}, 2);
  auto full = collect(learner, again);
  std::vector<std::size_t> all(16);
  for (std::size_t k = 0; k < 16; ++k) all[k] = k;
  const PpoLoss before = loss_on(learner, full, all, false);
  const PpoStats& stats = learner.update(full);
  CHECK(stats.loss == Approx(before.loss).epsilon(1e-5));
  CHECK(stats.entropy == Approx(before.entropy).epsilon(1e-5));
  CHECK(full.recorded() == 0);
  CHECK(!full.bootstrapped());
}

TEST_CASE("ppo_loss refuses an empty minibatch, an action out of range and features of another dimension",
          "[ppo][errors]") {
  ActorCritic<double> nets(4, 3, {8});
  PpoMinibatch<Eigen::VectorXd, double> minibatch;
  const PpoLossCoefficients c;
  CHECK_THROWS_WITH(ppo_loss(nets, minibatch, c, false),
                    Catch::Contains("ppo_loss: minibatch.count must be at least 1, got 0"));
  minibatch.reserve(4, 2);
  minibatch.count = 3;
  CHECK_THROWS_WITH(ppo_loss(nets, minibatch, c, false),
                    Catch::Contains("ppo_loss: minibatch.count = 3 exceeds the samples the minibatch holds"));
  minibatch.count = 2;
  minibatch.features.set(0, Eigen::VectorXd::Ones(4));
  minibatch.features.set(1, Eigen::VectorXd::Zero(4));
  minibatch.old_log_probs.setZero();
  minibatch.advantages << 1.0, -1.0;
  minibatch.targets.setZero();
  minibatch.actions = {0, 3};
  CHECK_THROWS_WITH(ppo_loss(nets, minibatch, c, false),
                    Catch::Contains("ppo_loss: minibatch.actions[1] = 3, expected < num_actions = 3"));
  minibatch.actions = {0, 2};
  CHECK(std::isfinite(ppo_loss(nets, minibatch, c, true).loss));
  // Features that do not fit the networks: refused before any forward pass or gradient.
  ActorCritic<double> wider(5, 3, {8});
  wider.actor().gradients().setConstant(7.0);
  CHECK_THROWS_WITH(
      ppo_loss(wider, minibatch, c, true),
      Catch::Contains("ppo_loss: minibatch.features has dimension 4, expected the networks' input_dim = 5"));
  CHECK(wider.actor().gradients().cwiseEqual(7.0).all());

  ActorCritic<float> sparse_nets(4, 2, {8});
  PpoMinibatch<MultiHot<2>, float> sparse;
  sparse.reserve(4, 1);
  sparse.count = 1;
  sparse.features.set(0, MultiHot<2>{1, 4});
  sparse.old_log_probs.setZero();
  sparse.advantages.setZero();
  sparse.targets.setZero();
  sparse.actions = {1};
  CHECK_THROWS_WITH(ppo_loss(sparse_nets, sparse, c, false),
                    Catch::Contains("column 0 of the input has index 4, expected < input_dim = 4"));
}

TEST_CASE("PpoMinibatch::gather refuses a sample out of range and a buffer of another shape, changing nothing",
          "[ppo][errors]") {
  Ppo<Eigen::VectorXd, double> agent(5, 3, small_options(), 2);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 2);
  auto buffer = collect(agent, rollout);
  PpoMinibatch<Eigen::VectorXd, double> minibatch;
  minibatch.gather(buffer, std::vector<std::size_t>{3, 4});
  const Eigen::MatrixXd before = minibatch.features.block(0, 2);
  CHECK_THROWS_WITH(minibatch.gather(buffer, std::vector<std::size_t>{1, 16}),
                    Catch::Contains("PpoMinibatch::gather: samples[1] = 16 is out of range for 16 samples"));
  CHECK(minibatch.count == 2);
  CHECK(minibatch.features.block(0, 2) == before);
  buffer.targets.resize(3);
  CHECK_THROWS_WITH(minibatch.gather(buffer, std::vector<std::size_t>{0}),
                    Catch::Contains("PpoMinibatch::gather: buffer's members do not have its shape (16 samples)"));
  // Gathering from a buffer of another dimension reshapes the minibatch.
  Ppo<Eigen::VectorXd, double> wide(7, 3, small_options(), 2);
  auto wide_rollout = make_rollout(2, Wander{7, 3, 6}, DenseTrace<Eigen::VectorXd>{7, 0.5}, 2);
  const auto wide_buffer = collect(wide, wide_rollout);
  minibatch.gather(wide_buffer, std::vector<std::size_t>{0, 1, 2});
  CHECK(minibatch.features.dim() == 7);
  CHECK(minibatch.features.block(0, 3).col(2) == wide_buffer.features.block(2, 1).col(0));
  CHECK(std::isfinite(ppo_loss(wide.networks(), minibatch, wide.loss_coefficients(), false).loss));
}

}  // namespace ppo_loss_test
