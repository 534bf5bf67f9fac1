// Tests of Ppo's network concept (ActorCriticNetwork, concepts.hpp): a network of the test's own
// (tests/learn/relu_actor_critic.hpp: one shared ReLU layer, one flat parameter vector) has its whole
// PPO loss gradient checked against central finite differences, is trained by Ppo on a task that
// needs memory and evaluated through the agent's policy; a network whose blocks do not match is
// refused. The default network's numbers are the subject of ppo_test.cpp.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/core.hpp>
#include <span>
#include <vector>

#include "cue_task.hpp"
#include "loss_gradient_check.hpp"
#include "relu_actor_critic.hpp"

namespace ppo_network_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

using test_tasks::Cue;

template <class Scalar>
auto make_rollout(std::size_t n, const TraceBank<dynamic, Scalar>& traces, std::uint64_t seed) {
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) gens.push_back(make_stream(seed, i));
  return Rollout(std::vector<Cue>(n), std::vector(n, traces), std::move(gens));
}

/// A network whose gradient blocks are not its parameter blocks.
struct Mismatched : ReluActorCritic<double> {
  using ReluActorCritic<double>::ReluActorCritic;
  std::span<double> gradients() { return ReluActorCritic<double>::gradients().first(3); }
};

}  // namespace

TEST_CASE("the whole PPO loss gradient through a network of one's own equals central finite differences",
          "[ppo][network][gradient]") {
  using Vec = Eigen::VectorXd;
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 8;
  o.minibatches = 2;
  o.anneal_lr = false;
  const TraceBank<dynamic, double> traces({0.0, 0.8}, 4, TraceInit::zero);
  ReluActorCritic<double> net(static_cast<Eigen::Index>(traces.dim()), 6, 2);
  DefaultGenerator init = make_stream(7, 100);
  net.initialize(init);
  Ppo<Vec, double, ReluActorCritic<double>> agent(std::move(net), o, 7);
  auto rollout = make_rollout(4, traces, 3);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  rollout.collect(acting, o.n_steps, acting);
  acting.bootstrap(rollout.features());
  agent.compute_advantages(buffer);
  // Away from the acting parameters, so that the ratios are not 1 and some are clipped.
  Xoshiro256StarStar noise(5);
  for (double& p : agent.networks().parameters()) p += 0.1 * standard_normal(noise);

  const std::vector<std::size_t> samples = {3, 14, 0, 7, 9, 12, 1, 5, 15, 10, 6, 22, 30, 27};
  PpoMinibatch<Vec, double> minibatch;
  minibatch.gather(buffer, samples);
  const PpoLossCoefficients coefficients = agent.loss_coefficients();
  ReluActorCritic<double>& nets = agent.networks();
  const PpoLoss at = ppo_loss(nets, minibatch, coefficients, false);
  INFO("clip fraction " << at.clip_fraction << ", entropy " << at.entropy << ", value loss " << at.value_loss);
  REQUIRE(at.clip_fraction > 0.0);
  REQUIRE(at.clip_fraction < 1.0);
  REQUIRE(at.value_loss > 0.01);
  const test_gradients::GradientCheck check = test_gradients::check_loss_gradient(nets, minibatch, coefficients, 1e-7);
  INFO("worst relative error " << check.worst << ", nonzero entries " << check.nonzero << " of " << check.count);
  CHECK(check.count == nets.parameters().size());
  CHECK(check.worst < 1e-7);
  CHECK(check.nonzero > check.count / 2);  // the check covered the network, not a dead one
}

TEST_CASE("Ppo trains a network of one's own through the concept: it learns a task that needs memory",
          "[ppo][network][learning]") {
  // ppo_basics' recipe (8 environments x 32 steps, 4 minibatches, lr 3e-3, normalised features,
  // 80 updates) with the shared ReLU network of 16 units in place of the two tanh MLPs. Calibration
  // over seeds 1-10 (GCC 12, -O2): the 200-episode evaluation sampled 0.765 (seed 8), else
  // 0.975-1.000 (seed 1: 0.975), greedy 1.000 for every seed; without memory 0.5.
  const std::uint64_t seed = 1;
  PpoOptions o;
  o.n_envs = 8;
  o.n_steps = 32;
  o.minibatches = 4;
  o.learning_rate = 3e-3;
  o.normalize_features = true;
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);
  ReluActorCritic<float> net(static_cast<Eigen::Index>(traces.dim()), 16, 2);
  DefaultGenerator init = make_stream(seed, 100);
  net.initialize(init);
  Ppo<Eigen::VectorXf, float, ReluActorCritic<float>> agent(std::move(net), o, seed);
  CHECK(agent.num_actions() == 2);
  CHECK(agent.input_dim() == 8);
  CHECK(agent.optimizer().num_parameters() == 16 * 8 + 16 + 2 * 16 + 2 + 16 + 1);
  auto rollout = make_rollout(8, traces, seed);
  double last = 0;
  train(agent, rollout, 20'480, [&](const PpoStats& s) { last = s.mean_episode_return(); });
  CHECK(agent.adam_steps() == 80 * 2 * 4);

  DefaultGenerator eval = make_stream(seed, 1000);
  double sampled = 0, greedy = 0;
  for (const EpisodeEnd& e : evaluate(agent, Cue{}, traces, eval, 200)) sampled += e.episode_return / 200;
  for (const EpisodeEnd& e : evaluate(agent, Cue{}, traces, eval, 200, ActionSelection::greedy))
    greedy += e.episode_return / 200;
  INFO("last update's training success " << last << ", evaluation " << sampled << " sampled, " << greedy << " greedy");
  CHECK(sampled > 0.9);
  CHECK(greedy > 0.9);
}

TEST_CASE("a network whose gradient blocks are not its parameter blocks is refused, naming both", "[ppo][network]") {
  Mismatched net(3, 4, 2);
  CHECK_THROWS_WITH((Ppo<Eigen::VectorXd, double, Mismatched>(net)),
                    "Ppo (the network): gradients' block 0 has 3 entries, expected the parameters' 31");
}

}  // namespace ppo_network_test
