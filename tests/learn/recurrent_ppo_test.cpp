// The recurrent PPO agent (learn/recurrent_ppo.hpp, learn/gru_actor_critic.hpp): its loss's
// gradient through time and across an episode start inside a sequence against finite differences,
// the states it keeps and stores while acting, minibatches of whole environments, and a small run
// that learns a cue task no memoryless agent can; no allocation after the first update.
#include "eigen_throws.hpp"  // first: before Eigen

#include <Eigen/Core>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/gru_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_checkpoint.hpp>
#include <memtrace/loop/ppo.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <vector>

#include "allocation_counting.hpp"  // this program's one replaced operator new
#include "cue_task.hpp"
#include "loss_gradient_check.hpp"

namespace recurrent_ppo_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

static_assert(RecurrentActorCriticNetwork<GruActorCritic<float>, Eigen::VectorXf>);
static_assert(RecurrentActorCriticNetwork<GruActorCritic<double>, MultiHot<>>);
static_assert(!ActorCriticNetwork<GruActorCritic<float>, Eigen::VectorXf>);
static_assert(!RecurrentActorCriticNetwork<ActorCritic<float>, Eigen::VectorXf>);
static_assert(Ppo<Eigen::VectorXf, float, GruActorCritic<float>>::recurrent);
static_assert(!Ppo<Eigen::VectorXf, float>::recurrent);

/// A GRU agent's network with every parameter set (biases too, which start at zero).
GruActorCritic<double> make_network(std::size_t d, std::size_t actions, std::size_t h, std::uint64_t seed) {
  GruActorCritic<double> nets(d, actions, h, {5});
  auto gen = make_stream(seed, 0);
  nets.initialize_orthogonal(gen);
  nets.gru().input_layer().bias(0).setLinSpaced(-0.3, 0.4);
  nets.gru().bias_hh().setLinSpaced(0.2, -0.2);
  nets.actor().bias(1).setLinSpaced(-0.1, 0.1);
  return nets;
}

/// The memoryless view of the cue task (the current observation, one-hot, as a dense vector): a
/// trace with λ = 0.
using Memoryless = TraceBank<dynamic, float>;
Memoryless memoryless() { return Memoryless({0.0}, 4); }

/// The cue task cut by a time limit at its third step (truncated, never terminated): every episode
/// ends in a truncation, whose final value PPO reads in bootstrap truncation.
struct CutCue : test_tasks::Cue {
  template <class G>
  TimeStep<> step(Action u, G& gen) {
    TimeStep<> s = Cue::step(u, gen);
    s.truncated = t == 3;
    return s;
  }
};

/// An EpisodeStartPolicy that acts twice on every step with an agent's acting side, the first time
/// with copies of the generators (what a repeated act must not change).
template <class Acting, class Phi>
struct ActTwice {
  Acting& acting;
  template <class G>
  void act(std::span<const Phi> phis, std::span<const bool> starts, std::span<G> gens, std::span<Action> actions) {
    std::vector<G> copies(gens.begin(), gens.end());
    std::vector<Action> discarded(actions.size());
    acting.act(phis, starts, std::span<G>(copies), std::span<Action>(discarded));
    acting.act(phis, starts, gens, actions);
  }
};

}  // namespace

TEST_CASE("recurrent_ppo_loss's gradient through time, across an episode start, equals finite differences",
          "[recurrent][gradient]") {
  auto nets = make_network(3, 3, 4, 1);
  // 2 sequences of 5 steps; sequence 1 starts an episode at step 2, sequence 0 at step 0.
  RecurrentPpoMinibatch<Eigen::VectorXd, double> minibatch;
  minibatch.reserve_sequences(3, 5, 2, 4);
  auto gen = make_stream(2, 0);
  const auto uniform = [&] { return 2 * uniform_real(gen) - 1; };
  for (std::size_t c = 0; c < 10; ++c) {
    const auto cc = static_cast<Eigen::Index>(c);
    minibatch.features.set(c, Eigen::Vector3d(uniform(), uniform(), uniform()));
    minibatch.actions[c] = static_cast<Action>(uniform_index(gen, 3));
    minibatch.old_log_probs[cc] = std::log(1.0 / 3.0) + 0.01 * uniform();  // ratios near 1: nothing clipped
    minibatch.old_values[cc] = uniform();
    minibatch.advantages[cc] = uniform();
    minibatch.targets[cc] = uniform();
    minibatch.starts[cc] = c == 0 || c == 5;
  }
  minibatch.initial_states = Eigen::MatrixXd::NullaryExpr(4, 2, [&](Eigen::Index, Eigen::Index) { return uniform(); });
  minibatch.count = 10;
  minibatch.sequences = 2;
  for (const bool clip_value_loss : {false, true}) {
    const PpoLossCoefficients coefficients{0.2, 0.5, 0.01, clip_value_loss};
    const auto check = test_gradients::check_gradient(
        nets, [&](bool gradients) { return recurrent_ppo_loss(nets, minibatch, coefficients, gradients); }, 1e-7);
    CHECK(check.count == nets.num_parameters());
    CHECK(check.nonzero == check.count);  // the GRU, both heads: every parameter moves the loss
  }
  // The loss is the feed-forward loss's terms on the recurrent outputs: with a GRU whose state is
  // reset at every step and W_hh = 0, the sequence loss does not depend on the sequences' split.
  auto reset = minibatch;
  reset.starts.setConstant(true);
  const PpoLoss a = recurrent_ppo_loss(nets, reset, {}, false);
  reset.sequences = 5;
  reset.initial_states = Eigen::MatrixXd::Zero(4, 5);
  const PpoLoss b = recurrent_ppo_loss(nets, reset, {}, false);
  CHECK(a.loss == Approx(b.loss).epsilon(1e-12));
  CHECK_THROWS_WITH(
      [&] {
        auto bad = minibatch;
        bad.sequences = 3;
        (void)recurrent_ppo_loss(nets, bad, {}, false);
      }(),
      "recurrent_ppo_loss: minibatch.count = 10 is not a positive multiple of minibatch.sequences = 3");
}

TEST_CASE("a GRU under the Gaussian heads: recurrent_ppo_loss's gradient through time equals finite differences",
          "[recurrent][gradient][continuous]") {
  using Heads = GaussianActorCritic<double>;
  GruActorCritic<double, Heads> nets(3, Heads(4, 2, {5}, -0.3));
  static_assert(std::same_as<policy_distribution_t<decltype(nets)>, DiagonalGaussian>);
  auto init = make_stream(41, 0);
  nets.initialize_orthogonal(init);
  nets.gru().input_layer().bias(0).setLinSpaced(-0.3, 0.4);
  nets.heads().log_std() << -0.2, 0.1;
  RecurrentPpoMinibatch<Eigen::VectorXd, double, DiagonalGaussian> minibatch;
  minibatch.reserve_sequences(3, 4, 2, 4, 2);
  auto gen = make_stream(42, 0);
  const auto uniform = [&] { return 2 * uniform_real(gen) - 1; };
  for (std::size_t c = 0; c < 8; ++c) {
    minibatch.features.set(c, Eigen::Vector3d(uniform(), uniform(), uniform()));
    minibatch.actions.col(static_cast<Eigen::Index>(c)) = Eigen::Vector2d(uniform(), uniform());
    minibatch.starts[static_cast<Eigen::Index>(c)] = c < 2 || c == 5;
  }
  minibatch.initial_states = Eigen::MatrixXd::Zero(4, 2);
  minibatch.count = 8;
  minibatch.sequences = 2;
  // The old log-probabilities near the current ones (ratios near 1: no sample near a clip's kink).
  Eigen::MatrixXd x(3, 8);
  for (std::size_t c = 0; c < 8; ++c) x.col(static_cast<Eigen::Index>(c)) = minibatch.features.block(c, 1);
  const auto out =
      nets.forward_sequence(x, std::span<const bool>(minibatch.starts.data(), 8), minibatch.initial_states);
  for (Eigen::Index c = 0; c < 8; ++c) {
    minibatch.old_log_probs[c] =
        diagonal_gaussian_log_prob(minibatch.actions.col(c), out.policy.col(c).head(2), out.policy.col(c).tail(2)) +
        0.05 * uniform();
    minibatch.old_values[c] = uniform();
    minibatch.advantages[c] = uniform();
    minibatch.targets[c] = uniform();
  }
  const auto check = test_gradients::check_gradient(
      nets, [&](bool gradients) { return recurrent_ppo_loss(nets, minibatch, PpoLossCoefficients{}, gradients); },
      1e-7);
  CHECK(check.count == nets.num_parameters());
  CHECK(check.nonzero == check.count);  // the GRU, the mean's and the critic's layers, the log standard deviation
}

TEST_CASE("a recurrent agent keeps one state per environment, reset where episodes start, and stores them",
          "[recurrent]") {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 8;
  o.minibatches = 2;
  o.hidden_sizes = {8};
  o.total_updates = 1;
  using Agent = Ppo<Eigen::VectorXf, float, GruActorCritic<float>>;
  GruActorCritic<float> nets(4, 2, 6, {8});
  auto gen = make_stream(3, 0);
  nets.initialize_orthogonal(gen);
  Agent agent(std::move(nets), o, 4);
  CHECK(agent.state_dim() == 6);
  CHECK(agent.states() == Eigen::MatrixXf::Zero(6, 4));
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 4; ++i) gens.push_back(make_stream(5, i));
  Rollout rollout(std::vector<test_tasks::Cue>(4), std::vector<Memoryless>(4, memoryless()), gens);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  static_assert(EpisodeStartPolicy<decltype(acting), Eigen::VectorXf>);
  std::vector<std::vector<bool>> starts;
  std::vector<Eigen::MatrixXf> states{agent.states()};
  for (std::size_t t = 0; t < 8; ++t) {
    starts.emplace_back(rollout.episode_starts().begin(), rollout.episode_starts().end());
    rollout.step(acting, acting);
    states.push_back(agent.states());
  }
  acting.bootstrap(rollout.features(), rollout.episode_starts());
  // The cue task's episodes are 6 steps long: every environment starts at steps 0 and 6.
  for (std::size_t t = 0; t < 8; ++t)
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(starts[t][i] == (t == 0 || t == 6));
      CHECK(buffer.starts[static_cast<Eigen::Index>(t * 4 + i)] == starts[t][i]);
    }
  CHECK(buffer.initial_states == states[0]);
  CHECK((states[1] - states[0]).norm() > 0);
  // The network replayed over the stored sequence gives the states the agent acted with.
  GruActorCritic<float>& network = agent.networks();
  Eigen::MatrixXf x(4, 32);
  for (std::size_t s = 0; s < 32; ++s) x.col(static_cast<Eigen::Index>(s)) = buffer.features.block(s, 1);
  network.forward_sequence(x, std::span<const bool>(buffer.starts.data(), 32), buffer.initial_states);
  const auto replayed = network.gru().outputs();
  for (std::size_t t = 0; t < 8; ++t)
    CHECK((replayed.middleCols(static_cast<Eigen::Index>(4 * t), 4) - states[t + 1]).cwiseAbs().maxCoeff() < 1e-6);
  CHECK(buffer.bootstrap_states == states[8]);  // no episode starts at step 8
  agent.update(buffer);
  CHECK(agent.last_stats().minibatches == o.epochs * 2);
}

TEST_CASE("a recurrent agent's checkpoint keeps its states: the restored agent trains on bit for bit",
          "[recurrent][checkpoint]") {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 10;  // not a multiple of the episodes' 6 steps: the states are mid-episode at a checkpoint
  o.minibatches = 2;
  o.hidden_sizes = {8};
  using Agent = Ppo<Eigen::VectorXf, float, GruActorCritic<float>>;
  const auto make = [&] {
    GruActorCritic<float> nets(4, 2, 6, {8});
    auto gen = make_stream(21, 0);
    nets.initialize_orthogonal(gen);
    return Agent(std::move(nets), o, 22);
  };
  Agent a = make();
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 4; ++i) gens.push_back(make_stream(23, i));
  Rollout first(std::vector<test_tasks::Cue>(4), std::vector<Memoryless>(4, memoryless()), gens);
  train(a, first, 3 * 40);
  REQUIRE(a.states().norm() > 0);
  TensorFile file;
  save_state(file, "agent.", a);
  Agent b = make();
  load_state(file, "agent.", b);
  CHECK(b.states() == a.states());
  Rollout second = first;
  a.set_total_updates(5);  // train() set a's horizon to its 3 updates: continue both on one schedule
  b.set_total_updates(5);
  train(a, first, 2 * 40);
  train(b, second, 2 * 40);
  const auto pa = a.networks().parameters(), pb = b.networks().parameters();
  for (std::size_t k = 0; k < pa.size(); ++k) CHECK(std::equal(pa[k].begin(), pa[k].end(), pb[k].begin(), pb[k].end()));
  CHECK(b.states() == a.states());
  // A file without the states is refused.
  std::erase_if(file.tensors, [](const Tensor& t) { return t.name == "agent.states"; });
  CHECK_THROWS_WITH(load_state(file, "agent.", b), Catch::Contains("agent.states"));
}

TEST_CASE(
    "a recurrent agent reads a truncated episode's final value from the state after the step, acting twice "
    "changes nothing, and after the first update training allocates nothing",
    "[recurrent][allocation]") {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 16;
  o.minibatches = 2;
  o.hidden_sizes = {8};
  o.total_updates = 50;
  o.truncation = TruncationMode::bootstrap;
  using Phi = Eigen::VectorXf;
  using Agent = Ppo<Phi, float, GruActorCritic<float>>;
  GruActorCritic<float> nets(4, 2, 8, {8});
  auto gen = make_stream(31, 0);
  nets.initialize_orthogonal(gen);
  Agent agent(std::move(nets), o, 32);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 4; ++i) gens.push_back(make_stream(33, i));
  Rollout rollout(std::vector<CutCue>(4), std::vector<Memoryless>(4, memoryless()), gens);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  // One rollout by hand: at every truncation, the final value is the critic's on the final view
  // from the environment's state after the step; a second act on a step changes nothing.
  std::size_t truncations = 0;
  Eigen::MatrixXf state(8, 1);
  // Acts twice on every step (the first time with copies of the generators): the states must move once.
  ActTwice<decltype(acting), Phi> twice{acting};
  for (std::size_t t = 0; t < 16; ++t)
    rollout.step(twice, [&](const RolloutBatch<Phi>& batch) {
      acting(batch);
      for (std::size_t i = 0; i < 4; ++i)
        if (batch.steps[i].truncated && !batch.steps[i].terminated) {
          ++truncations;
          state = agent.states().col(static_cast<Eigen::Index>(i));
          const Eigen::MatrixXf final_features = batch.next_features[i];
          const auto out = agent.networks().forward_step(final_features, state);
          CHECK(buffer.final_values[static_cast<Eigen::Index>(t * 4 + i)] == out.value(0, 0));
        }
    });
  REQUIRE(truncations > 0);
  acting.bootstrap(rollout.features(), rollout.episode_starts());
  // Replaying the stored sequence gives the states the agent ends with: each step moved them once.
  agent.networks().forward_sequence(buffer.features.block(0, 64), std::span<const bool>(buffer.starts.data(), 64),
                                    buffer.initial_states);
  CHECK((agent.networks().gru().outputs().rightCols(4) - agent.states()).cwiseAbs().maxCoeff() < 1e-6);
  agent.update(buffer);
  std::size_t updates = 0;
  {
    allocation_counting::AllocationGuard guard;
    train(agent, buffer, rollout, 40 * 64, [&](const PpoStats&) { ++updates; });
  }
  CHECK(updates == 40);
  CHECK(allocation_counting::allocations == 0);
}

TEST_CASE("a recurrent agent on the memoryless view learns the cue task, which a memoryless agent cannot",
          "[recurrent][learning]") {
  PpoOptions o;
  o.n_envs = 8;
  o.n_steps = 24;
  o.minibatches = 2;
  o.epochs = 4;
  o.hidden_sizes = {16};
  o.learning_rate = 3e-3;
  o.truncation = TruncationMode::official;
  const std::size_t steps = 40 * o.n_envs * o.n_steps;
  const auto success = [&](auto& agent) {
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < o.n_envs; ++i) gens.push_back(make_stream(11, i));
    Rollout rollout(std::vector<test_tasks::Cue>(o.n_envs), std::vector<Memoryless>(o.n_envs, memoryless()), gens);
    train(agent, rollout, steps);
    auto eval_gen = make_stream(12, 0);
    const auto episodes = evaluate(agent, test_tasks::Cue{}, memoryless(), eval_gen, 200, ActionSelection::greedy);
    double solved = 0;
    for (const EpisodeEnd& e : episodes) solved += e.episode_return;
    return solved / static_cast<double>(episodes.size());
  };
  GruActorCritic<float> nets(4, 2, 16, {16});
  auto gen = make_stream(13, 0);
  nets.initialize_orthogonal(gen);
  Ppo<Eigen::VectorXf, float, GruActorCritic<float>> gru(std::move(nets), o, 14);
  Ppo<Eigen::VectorXf, float> feed_forward(4, 2, o, 14);
  const double gru_success = success(gru);
  const double memoryless_success = success(feed_forward);
  INFO("GRU " << gru_success << ", memoryless " << memoryless_success);
  CHECK(gru_success > 0.95);
  CHECK(memoryless_success < 0.65);  // 0.5 in expectation: the cue is gone at the junction
}

}  // namespace recurrent_ppo_test
