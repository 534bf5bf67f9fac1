// Tests of learn/ppo.hpp, learn/ppo_acting.hpp, learn/ppo_policy.hpp and loop/ppo.hpp: the
// learning-rate schedule, the global-norm clip across both networks, greedy acting, the
// entropy-only update, learning a small task, determinism, sparse = dense, feature normalisation,
// no allocation after the first update, and bad input. (The loss: ppo_loss_test.cpp; GAE:
// gae_test.cpp; the distributions: distributions_test.cpp.)
//
// Heap allocations are counted in this program (a replaced global operator new) and Eigen's are
// made to throw inside an AllocationGuard (EIGEN_RUNTIME_NO_MALLOC with eigen_assert throwing).
#include "eigen_throws.hpp"  // first: before Eigen

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/learn/actor_critic.hpp>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/gae.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_buffer.hpp>
#include <memtrace/learn/ppo_loss.hpp>
#include <memtrace/loop/learning_curve.hpp>
#include <memtrace/loop/ppo.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "ppo_fixtures.hpp"

#include "allocation_counting.hpp"  // this program's one replaced operator new

namespace ppo_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using namespace ppo_fixtures;
using allocation_counting::AllocationGuard;
using allocation_counting::allocations;

namespace {}  // namespace

// ---------------------------------------------------------------------------------------------
// Schedule, clipping, sampling

TEST_CASE("the learning rate decays linearly over updates x epochs x minibatches Adam steps: lr0 first, lr0/T last",
          "[ppo][schedule]") {
  PpoOptions o = small_options();
  o.epochs = 2;
  o.anneal_lr = true;
  o.learning_rate = 1e-3;
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 1);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  CHECK(agent.learning_rate() == 1e-3);
  std::vector<PpoStats> stats;
  train(agent, rollout, 3 * 16 + 5, [&](const PpoStats& s) { stats.push_back(s); });  // 3 updates; 5 steps dropped
  REQUIRE(stats.size() == 3);
  CHECK(agent.total_updates() == 3);
  const double T = 3 * 2 * 2;  // updates x epochs x minibatches
  for (std::size_t u = 0; u < 3; ++u) {
    CHECK(stats[u].update == u + 1);
    CHECK(stats[u].env_steps == 16 * (u + 1));
    CHECK(stats[u].adam_steps == 4 * (u + 1));
    CHECK(stats[u].first_learning_rate == Approx(1e-3 * (1 - 4.0 * static_cast<double>(u) / T)).epsilon(1e-15));
    CHECK(stats[u].last_learning_rate == Approx(1e-3 * (1 - (4.0 * static_cast<double>(u) + 3) / T)).epsilon(1e-15));
  }
  CHECK(stats[0].first_learning_rate == 1e-3);
  CHECK(stats[2].last_learning_rate == Approx(1e-3 / T).epsilon(1e-15));
  CHECK(agent.learning_rate() == 0.0);

  // Without annealing the rate stays; with an explicit horizon update() runs without train().
  o.anneal_lr = false;
  Ppo<Eigen::VectorXd, double> constant(5, 3, o, 1);
  auto rollout2 = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  train(constant, rollout2, 32, [&](const PpoStats& s) {
    CHECK(s.first_learning_rate == 1e-3);
    CHECK(s.last_learning_rate == 1e-3);
  });
  o.anneal_lr = true;
  o.total_updates = 10;
  Ppo<Eigen::VectorXd, double> manual(5, 3, o, 1);
  auto rollout3 = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  auto buffer3 = manual.make_buffer();
  auto acting3 = manual.acting(buffer3);
  rollout3.collect(acting3, 8, acting3);
  REQUIRE(rollout3.features().size() == 2);
  CHECK(rollout3.features()[1] == rollout3.features(1));
  acting3.bootstrap(rollout3.features());
  const PpoStats& s = manual.update(buffer3);
  CHECK(s.last_learning_rate == Approx(1e-3 * (1 - 3.0 / 40)).epsilon(1e-15));

  // A horizon set by hand: train keeps it; 0 is refused and changes nothing.
  o.total_updates = 0;
  Ppo<Eigen::VectorXd, double> set(5, 3, o, 1);
  CHECK_THROWS_WITH(set.set_total_updates(0), "Ppo::set_total_updates: total_updates must be at least 1, got 0");
  CHECK_THROWS_WITH(set.set_total_updates(std::numeric_limits<std::size_t>::max()),
                    Catch::Contains("Ppo::set_total_updates: total_updates·epochs·minibatches overflows"));
  CHECK(set.total_updates() == 0);
  // train refuses a budget whose schedule would overflow before it takes a step, naming itself:
  // (2^64 − 1) / 16 updates of 32 Adam steps each do not fit in 64 bits.
  PpoOptions many = o;
  many.epochs = 16;
  Ppo<Eigen::VectorXd, double> overflowing(5, 3, many, 1);
  auto rollout5 = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  CHECK_THROWS_WITH(train(overflowing, rollout5, std::numeric_limits<std::size_t>::max()),
                    Catch::Contains("train: the schedule's Adam steps overflow"));
  CHECK(rollout5.steps_taken() == 0);
  CHECK(overflowing.total_updates() == 0);
  set.set_total_updates(10);
  auto rollout4 = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  train(set, rollout4, 16, [&](const PpoStats& stats4) {
    CHECK(stats4.last_learning_rate == Approx(1e-3 * (1 - 3.0 / 40)).epsilon(1e-15));
  });
  CHECK(set.total_updates() == 10);
  CHECK(same_parameters(set, manual));
}

TEST_CASE(
    "target_kl stops an update at the minibatch whose approx_kl exceeds 1.5 target_kl, before its step, and the "
    "schedule goes on as if nothing was skipped",
    "[ppo][schedule]") {
  PpoOptions o = small_options();
  o.epochs = 4;
  o.minibatches = 2;
  o.anneal_lr = true;
  o.total_updates = 3;
  o.learning_rate = 0.05;  // large steps: the policy moves far within one update
  PpoOptions kl = o;
  kl.target_kl = 1e-4;
  Ppo<Eigen::VectorXd, double> plain(5, 3, o, 4), stopped(5, 3, kl, 4);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 6);
  auto buffer = collect(stopped, rollout);
  auto same_buffer = buffer;
  const DefaultGenerator before = stopped.generator();  // to replay the update's permutations
  const PpoStats stats = stopped.update(buffer);
  plain.update(same_buffer);
  REQUIRE(stats.stopped_at_target_kl);
  const std::size_t k = stats.minibatches;  // the minibatch that stopped it, counted from 1
  INFO("stopped at minibatch " << k << " of 8");
  REQUIRE(k >= 2);  // the first minibatch sees the acting policy: approx_kl 0
  REQUIRE(k < 8);
  CHECK(stopped.adam_steps() == k - 1);
  CHECK(stats.adam_steps == k - 1);
  CHECK(stopped.skipped_steps() == 8 - (k - 1));
  CHECK(plain.skipped_steps() == 0);
  CHECK(!plain.last_stats().stopped_at_target_kl);
  CHECK(plain.last_stats().minibatches == 8);
  // The learning rate goes on from update 1's end, as the agent that took every step.
  CHECK(stopped.learning_rate() == plain.learning_rate());
  CHECK(stopped.learning_rate() == Approx(0.05 * (1 - 8.0 / 24)).epsilon(1e-15));
  // Minibatch k, at the parameters the update ended with (no step after it), exceeds the limit.
  DefaultGenerator gen = before;
  std::vector<std::size_t> permutation(16);
  for (std::size_t epoch = 0; epoch <= (k - 1) / 2; ++epoch) {
    for (std::size_t s = 0; s < 16; ++s) permutation[s] = s;
    for (std::size_t s = 16; s-- > 1;) std::swap(permutation[s], permutation[uniform_index(gen, s + 1)]);
  }
  PpoMinibatch<Eigen::VectorXd, double> last;
  last.gather(same_buffer, std::span<const std::size_t>(permutation.data() + (k - 1) % 2 * 8, 8));
  CHECK(ppo_loss(stopped.networks(), last, stopped.loss_coefficients(), false).approx_kl > 1.5e-4);
  CHECK(stopped.generator() == gen);  // no permutation drawn after the stop
  // The next update starts at the scheduled rate.
  auto next = collect(stopped, rollout);
  const PpoStats second = stopped.update(next);
  CHECK(second.first_learning_rate == Approx(0.05 * (1 - 8.0 / 24)).epsilon(1e-15));

  // A limit never reached changes nothing, bit for bit.
  PpoOptions loose = o;
  loose.target_kl = 1e9;
  Ppo<Eigen::VectorXd, double> a(5, 3, o, 8), b(5, 3, loose, 8);
  auto ra = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 2);
  auto rb = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 2);
  train(a, ra, 48);
  train(b, rb, 48);
  CHECK(same_parameters(a, b));
  CHECK(b.skipped_steps() == 0);

  CHECK_THROWS_WITH((Ppo<Eigen::VectorXd, double>(
                        5, 3,
                        [&] {
                          PpoOptions bad = o;
                          bad.target_kl = -1;
                          return bad;
                        }(),
                        1)),
                    Catch::Contains("Ppo: options.target_kl must be finite and >= 0, got -1"));
}

TEST_CASE("an update reports the critic's explained variance of its rollout's targets", "[ppo]") {
  PpoOptions o = small_options();
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 3);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 5);
  auto buffer = collect(agent, rollout);
  double tm = 0, em = 0;
  for (Eigen::Index s = 0; s < 16; ++s) {
    tm += buffer.targets[s] / 16;
    em += (buffer.targets[s] - buffer.values[s]) / 16;
  }
  double tv = 0, ev = 0;
  for (Eigen::Index s = 0; s < 16; ++s) {
    tv += (buffer.targets[s] - tm) * (buffer.targets[s] - tm);
    ev += (buffer.targets[s] - buffer.values[s] - em) * (buffer.targets[s] - buffer.values[s] - em);
  }
  REQUIRE(tv > 0);
  const PpoStats& stats = agent.update(buffer);
  CHECK(stats.explained_variance == Approx(1 - ev / tv).epsilon(1e-12));
  CHECK(stats.explained_variance < 1.0);
  CHECK(stats.minibatches == o.epochs * o.minibatches);
  CHECK(!stats.stopped_at_target_kl);
}

TEST_CASE(
    "with normalize_rewards the buffer holds the rewards a RewardNormalizer of the agent's environments and discount "
    "gives, after reward_scale, and refuses a reward that is not finite",
    "[ppo]") {
  PpoOptions o = small_options();
  o.normalize_rewards = true;
  o.reward_scale = 0.5;
  o.discount = 0.9;
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 2);
  RewardNormalizer expected(2, 0.9);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 4);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  std::vector<double> rewards;
  double raw_sum = 0;
  rollout.collect(acting, o.n_steps, [&](const RolloutBatch<Eigen::VectorXd>& batch) {
    expected.normalize(batch.steps, 0.5, [&](std::size_t, double r) { rewards.push_back(r); });
    for (const ActedStep& s : batch.steps) raw_sum += s.reward;
    acting(batch);
  });
  REQUIRE(rewards.size() == 16);
  for (std::size_t s = 0; s < 16; ++s) CHECK(buffer.steps[s].reward == rewards[s]);
  CHECK(agent.reward_normalizer() == expected);
  double episodes = 0;
  for (const EpisodeEnd& e : buffer.episodes) episodes += e.episode_return;
  CHECK(std::isfinite(episodes));
  CHECK(raw_sum != 0.0);
  // A reward that is not finite is refused before anything is written.
  auto next = agent.make_buffer();
  auto next_acting = agent.acting(next);
  std::vector<Eigen::VectorXd> phis(2, Eigen::VectorXd::Zero(5));
  std::vector<DefaultGenerator> gens{DefaultGenerator(1), DefaultGenerator(2)};
  std::vector<Action> actions(2);
  next_acting.act(std::span<const Eigen::VectorXd>(phis), std::span(gens), std::span(actions));
  std::vector<ActedStep> steps(2);
  steps[0].action = actions[0];
  steps[1].action = actions[1];
  steps[1].reward = std::numeric_limits<double>::quiet_NaN();
  const RewardNormalizer before = agent.reward_normalizer();
  CHECK_THROWS_WITH(next_acting.record(RolloutBatch<Eigen::VectorXd>{0, phis, steps, phis}),
                    Catch::Contains("RewardNormalizer::normalize: the reward of environment 1 is nan"));
  CHECK(next.recorded() == 0);
  CHECK(agent.reward_normalizer() == before);
  PpoOptions bad = o;
  bad.reward_normalizer.epsilon = 0;
  CHECK_THROWS_WITH((Ppo<Eigen::VectorXd, double>(5, 3, bad, 1)),
                    Catch::Contains("options.reward_normalizer.epsilon must be positive"));
}

TEST_CASE("one global gradient-norm clip acts on both networks together", "[ppo][clip]") {
  // The unclipped gradients of the first (and only) minibatch, from an agent that never clips.
  PpoOptions o = small_options();
  o.minibatches = 1;
  o.max_grad_norm = 1e9;
  Ppo<Eigen::VectorXd, double> reference(5, 3, o, 6);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 4);
  const auto full = collect(reference, rollout);
  std::vector<std::size_t> all(16);
  for (std::size_t s = 0; s < 16; ++s) all[s] = s;
  (void)loss_on(reference, full, all, true);
  const Eigen::VectorXd actor = reference.actor().gradients(), critic = reference.critic().gradients();
  const double na = actor.norm(), nc = critic.norm(), global = std::sqrt(na * na + nc * nc);
  // A threshold above each network's norm but below the global one: only a joint clip acts.
  o.max_grad_norm = (std::max(na, nc) + global) / 2;
  INFO("actor norm " << na << ", critic norm " << nc << ", global " << global << ", clip " << o.max_grad_norm);
  REQUIRE(std::max(na, nc) < o.max_grad_norm);
  REQUIRE(o.max_grad_norm < global);
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 6);
  auto same = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 4);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  same.collect(acting, 8, acting);
  std::vector<Eigen::VectorXd> bootstrap = {same.features(0), same.features(1)};
  acting.bootstrap(bootstrap);
  const PpoStats& stats = agent.update(buffer);
  CHECK(stats.grad_norm == Approx(global).epsilon(1e-12));
  const double scale = o.max_grad_norm / global;
  CHECK((agent.actor().gradients() - scale * actor).norm() < 1e-12 * na);
  CHECK((agent.critic().gradients() - scale * critic).norm() < 1e-12 * nc);
  const double after = std::sqrt(agent.actor().gradients().squaredNorm() + agent.critic().gradients().squaredNorm());
  CHECK(after == Approx(o.max_grad_norm).epsilon(1e-12));
}

TEST_CASE(
    "a greedy policy acts by the argmax of the actor's logits and leaves the generators alone, and evaluate "
    "with it is reproducible",
    "[ppo][greedy]") {
  PpoOptions o = small_options();
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 4);
  Xoshiro256StarStar noise(3);
  for (auto& p : agent.actor().parameters()) p += 0.5 * standard_normal(noise);
  PpoPolicy<Eigen::VectorXd, double> greedy = agent.policy(ActionSelection::greedy);
  PpoPolicy<Eigen::VectorXd, double> sampled = agent.policy();
  CHECK(greedy.selection() == ActionSelection::greedy);
  CHECK(sampled.selection() == ActionSelection::sample);
  std::vector<Eigen::VectorXd> phis;
  for (int k = 0; k < 6; ++k) phis.push_back(Eigen::VectorXd::Random(5));
  std::vector<DefaultGenerator> gens(6, DefaultGenerator(8));
  std::vector<Action> actions(6);
  greedy.act(std::span<const Eigen::VectorXd>(phis), std::span(gens), std::span(actions));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const Eigen::MatrixXd x = phis[i];
    const Eigen::VectorXd logits = agent.actor().forward(x).col(0);
    Eigen::Index best = 0;
    logits.maxCoeff(&best);
    CHECK(actions[i] == static_cast<Action>(best));
    CHECK(gens[i] == DefaultGenerator(8));  // nothing drawn
    DefaultGenerator one(8);
    CHECK(greedy.act(phis[i], one) == actions[i]);
    CHECK(one == DefaultGenerator(8));
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      DefaultGenerator g(seed);
      differ += sampled.act(phis[i], g) != actions[i];
    }
  }
  CHECK(differ > 0);  // the sampled policy is not the greedy one

  DefaultGenerator a(5), b(5), c(5);
  const auto first = evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, a, 20, ActionSelection::greedy);
  const auto second = evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, b, 20,
                               std::numeric_limits<std::size_t>::max(), ActionSelection::greedy);
  CHECK(first.size() == 20);
  CHECK(first == second);
  CHECK(a == b);
  CHECK(evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, c, 20) != first);  // sampling differs
  using Policy = PpoPolicy<Eigen::VectorXd, double>;
  CHECK_THROWS_WITH(Policy(agent.actor(), nullptr, static_cast<ActionSelection>(7)),
                    Catch::Contains("PpoPolicy: selection must be sample or greedy, got 7"));
}

// ---------------------------------------------------------------------------------------------
// Updates

TEST_CASE("with zero advantages and exact values an update moves only the actor, through the entropy term", "[ppo]") {
  // Rewards are 0 and the critic outputs exactly 0 (zero head): advantages, value errors and
  // their gradients are exactly 0, and Adam's step on a zero gradient is exactly 0.
  for (const double ent_coef : {0.0, 0.01}) {
    PpoOptions o = small_options();
    o.ent_coef = ent_coef;
    o.epochs = 2;
    Ppo<Eigen::VectorXd, double> agent(4, 3, o, 3);
    agent.critic().weights(agent.critic().num_layers() - 1).setZero();
    Xoshiro256StarStar noise(2);
    for (auto& p : agent.actor().parameters()) p += 0.3 * standard_normal(noise);  // a policy of low entropy
    const Eigen::VectorXd actor_before = agent.actor().parameters(), critic_before = agent.critic().parameters();
    auto rollout = make_rollout(2, Silent{}, DenseTrace<Eigen::VectorXd>{4, 0.5}, 1);
    auto buffer = agent.make_buffer();
    auto acting = agent.acting(buffer);
    rollout.collect(acting, 8, acting);
    acting.bootstrap(rollout.features());
    std::vector<std::size_t> all(16);
    for (std::size_t s = 0; s < 16; ++s) all[s] = s;
    agent.compute_advantages(buffer);
    CHECK(buffer.advantages.cwiseAbs().maxCoeff() == 0.0);
    const double entropy_before = loss_on(agent, buffer, all, false).entropy;
    // compute_advantages ran once already; update runs it again on the same buffer (the same result).
    const PpoStats& stats = agent.update(buffer);
    CHECK(stats.policy_loss == 0.0);
    CHECK(stats.value_loss == 0.0);
    CHECK(agent.critic().parameters() == critic_before);
    if (ent_coef == 0.0) {
      CHECK(agent.actor().parameters() == actor_before);
    } else {
      CHECK(agent.actor().parameters() != actor_before);
      CHECK(loss_on(agent, buffer, all, false).entropy > entropy_before);  // the same samples, new actor
    }
  }
}

TEST_CASE("PPO learns a one-step task whose best action depends on the observation", "[ppo][learning]") {
  // The official hyperparameters (64 x 64 tanh networks, lr 3e-4 annealed to 0, 2 epochs, clip 0.2,
  // entropy 0.01), 8 environments x 16 steps, 4 minibatches, 64 updates (8,192 steps); random play
  // succeeds half the time. Calibration over agent and rollout seeds 1-10 (GCC 12, -O2): the
  // 200-episode evaluation reached 0.990-0.995 and the last update's training episodes 0.98-1.00;
  // with half the budget (32 updates) 0.945-0.960 and 0.90-0.95; with 16 updates 0.73-0.75.
  PpoOptions o;
  o.n_envs = 8;
  o.n_steps = 16;
  o.minibatches = 4;
  Ppo<Eigen::VectorXf, float> agent(2, 2, o, 1);
  const DenseTrace<Eigen::VectorXf> onehot{2, 0.0};
  auto rollout = make_rollout(8, ContextBandit{}, onehot, 1);
  double last = 0;
  train(agent, rollout, 64 * 128, [&](const PpoStats& s) { last = s.mean_episode_return(); });
  DefaultGenerator gen(99);
  const std::vector<EpisodeEnd> episodes = evaluate(agent, ContextBandit{}, onehot, gen, 200);
  REQUIRE(episodes.size() == 200);
  double success = 0;
  for (const EpisodeEnd& e : episodes) success += e.episode_return / 200;
  INFO("evaluation success " << success << ", last update's training success " << last);
  CHECK(success > 0.9);
  CHECK(last > 0.9);
}

TEST_CASE("a learning curve of train() holds every episode and update once, in the bins of their steps",
          "[ppo][curve]") {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 8;
  o.minibatches = 2;
  Ppo<Eigen::VectorXf, float> agent(2, 2, o, 3);
  const DenseTrace<Eigen::VectorXf> onehot{2, 0.0};
  auto rollout = make_rollout(4, ContextBandit{}, onehot, 3);
  const std::size_t updates = 13, steps = updates * 32 + 5;  // a remainder that is not run
  LearningCurve curve(steps, 32, {.points = 5, .success_return = 0.5, .recent_episodes = 7});
  std::vector<PpoStats> seen;
  std::vector<std::vector<EpisodeEnd>> episodes;
  train(agent, rollout, steps, [&](const PpoStats& s) {
    curve.record(s);
    seen.push_back(s);
    episodes.emplace_back(s.episodes.begin(), s.episodes.end());
  });
  REQUIRE(seen.size() == updates);
  REQUIRE(curve.points().size() == 5);
  std::size_t u = 0, all = 0, all_successes = 0;
  std::vector<bool> order;
  for (const CurvePoint& point : curve.points()) {
    std::size_t n = 0, successes = 0, bin_updates = 0;
    double entropy = 0;
    for (; u < updates && seen[u].env_steps <= point.env_steps; ++u) {
      ++bin_updates;
      entropy += seen[u].entropy;
      for (const EpisodeEnd& e : episodes[u]) {
        ++n;
        successes += e.episode_return > 0.5;
        order.push_back(e.episode_return > 0.5);
      }
    }
    CHECK(point.updates == bin_updates);
    CHECK(point.episodes_ended == n);
    CHECK(point.successes == successes);
    if (point.updates > 0) CHECK(point.entropy == Approx(entropy / static_cast<double>(point.updates)));
    all += n;
    all_successes += successes;
  }
  CHECK(u == updates);
  CHECK(curve.points().back().env_steps == updates * 32);
  CHECK(curve.episodes_ended() == all);
  CHECK(curve.successes() == all_successes);
  REQUIRE(all >= 7);  // a one-step task: every step ends an episode
  std::size_t recent = 0;
  for (std::size_t i = all - 7; i < all; ++i) recent += order[i];
  CHECK(curve.recent_success_rate() == static_cast<double>(recent) / 7.0);
}

TEST_CASE("the same seed gives the same parameters after an update, bit for bit, and another seed does not",
          "[ppo][determinism]") {
  const auto trained = [](std::uint64_t seed) {
    PpoOptions o = small_options();
    o.epochs = 2;
    Ppo<Eigen::VectorXf, float> agent(5, 3, o, seed);
    auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXf>{}, 7);
    train(agent, rollout, 32);
    Eigen::VectorXf all(agent.actor().num_parameters() + agent.critic().num_parameters());
    all << agent.actor().parameters(), agent.critic().parameters();
    return all;
  };
  const Eigen::VectorXf a = trained(5), b = trained(5), c = trained(6);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("MultiHot features train like their dense vectors (the sparse first layer), up to rounding",
          "[ppo][sparse]") {
  PpoOptions o = small_options();
  o.epochs = 2;
  Ppo<MultiHot<2>, double> sparse(10, 3, o, 8);
  Ppo<Eigen::VectorXd, double> dense(10, 3, o, 8);
  auto rs = make_rollout(2, Wander{}, SparseStack{}, 2);
  auto rd = make_rollout(2, Wander{}, DenseStack{}, 2);
  std::vector<Action> actions_sparse, actions_dense;
  auto sparse_buffer = sparse.make_buffer();
  auto dense_buffer = dense.make_buffer();
  learn(sparse, sparse_buffer, rs, 3, [&](const auto& buffer) {
    actions_sparse.insert(actions_sparse.end(), buffer.actions.begin(), buffer.actions.end());
  });
  learn(dense, dense_buffer, rd, 3, [&](const auto& buffer) {
    actions_dense.insert(actions_dense.end(), buffer.actions.begin(), buffer.actions.end());
  });
  REQUIRE(actions_dense.size() == 48);
  CHECK(actions_sparse == actions_dense);
  CHECK((sparse.actor().parameters() - dense.actor().parameters()).cwiseAbs().maxCoeff() < 1e-12);
  CHECK((sparse.critic().parameters() - dense.critic().parameters()).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE(
    "after the first update, training on the Minigrid T-maze allocates nothing (float TraceBank, "
    "MultiHot FrameStack)",
    "[ppo][allocation]") {
  PpoOptions o = small_options();
  o.n_envs = 4;
  o.epochs = 2;
  o.hidden_sizes = {8, 8};
  o.total_updates = 10;
  o.anneal_lr = true;
  // train on a buffer the caller keeps: its first call's first update grows everything.
  const auto run = [](auto& agent, auto memory) {
    auto rollout = make_rollout(4, MinigridTMaze(2), memory, 1);
    auto buffer = agent.make_buffer();
    train(agent, buffer, rollout, 32);
    std::size_t updates = 0, truncations = 0;
    {
      AllocationGuard guard;
      train(agent, buffer, rollout, 40 * 32, [&](const PpoStats& s) {
        ++updates;
        for (const EpisodeEnd& e : s.episodes) truncations += e.truncated;
      });
    }
    CHECK(updates == 40);
    CHECK(allocations == 0);
    return truncations;
  };
  o.truncation = TruncationMode::official;
  Ppo<Eigen::VectorXf> traces(90, 3, o, 1);  // dense float features, official truncation
  run(traces, TraceBank<dynamic, float>({0.0, 0.5}, 45, TraceInit::zero));
  PpoOptions normalised = o;
  normalised.normalize_features = true;
  normalised.truncation = TruncationMode::bootstrap;
  Ppo<Eigen::VectorXf> normalised_traces(90, 3, normalised, 1);
  run(normalised_traces, TraceBank<dynamic, float>({0.0, 0.5}, 45, TraceInit::zero));
  o.truncation = TruncationMode::bootstrap;  // the final observations' values too
  Ppo<MultiHot<>> frames(180, 3, o, 1);      // MultiHot<dynamic> features of 4 frames
  CHECK(run(frames, FrameStack<MultiHot<9>>(4, 45, WindowPadding::zero)) > 0);
}

TEST_CASE(
    "train reports every episode that ended in the rollout with its return and length, and evaluate runs K "
    "episodes reproducibly",
    "[ppo]") {
  PpoOptions o = small_options();
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 1);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 5);
  // The same rollout watched by a second sink: the episodes it sees end.
  std::vector<EpisodeEnd> seen, reported;
  std::size_t t = 0;
  Ppo<Eigen::VectorXd, double> twin(5, 3, o, 1);
  auto watched = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 5);
  train(twin, watched, 16 * 3,
        [&](const PpoStats& s) { reported.insert(reported.end(), s.episodes.begin(), s.episodes.end()); });
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  for (std::size_t u = 0; u < 3; ++u) {
    rollout.collect(acting, 8, [&](const RolloutBatch<Eigen::VectorXd>& b) {
      for (std::size_t i = 0; i < 2; ++i)
        if (b.steps[i].terminated || b.steps[i].truncated)
          seen.push_back({i, t % 8, b.steps[i].episode_return, b.steps[i].episode_length, b.steps[i].terminated,
                          b.steps[i].truncated});
      ++t;
      acting(b);
    });
    std::vector<Eigen::VectorXd> bootstrap = {rollout.features(0), rollout.features(1)};
    acting.bootstrap(bootstrap);
    agent.update(buffer);
  }
  REQUIRE(seen.size() > 3);
  CHECK(reported == seen);

  // The policy view: one environment at a time draws what the batch draws.
  PpoPolicy<Eigen::VectorXd, double> pi = agent.policy();
  const std::vector<Eigen::VectorXd> phis = {rollout.features(0), rollout.features(1), rollout.features(0)};
  std::vector<DefaultGenerator> batch_gens = {DefaultGenerator(1), DefaultGenerator(2), DefaultGenerator(3)};
  std::vector<DefaultGenerator> single_gens = batch_gens;
  std::vector<Action> batch_actions(3);
  for (int round = 0; round < 20; ++round) {
    pi.act(std::span<const Eigen::VectorXd>(phis), std::span(batch_gens), std::span(batch_actions));
    for (std::size_t i = 0; i < 3; ++i) CHECK(pi.act(phis[i], single_gens[i]) == batch_actions[i]);
  }

  DefaultGenerator gen(3), same(3);
  const auto a = evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, gen, 25);
  const auto b = evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, same, 25);
  REQUIRE(a.size() == 25);
  CHECK(a == b);
  CHECK(gen == same);
  CHECK(gen != DefaultGenerator(3));  // the generator advanced
  std::size_t steps = 0;              // the episodes run one after another: each ends at the steps so far - 1
  for (const EpisodeEnd& e : a) {
    CHECK(e.length >= 1);
    CHECK(e.length <= 6);
    CHECK((e.terminated || e.truncated));
    steps += e.length;
    CHECK(e.step + 1 == steps);
  }

  // A step cap: the same episodes up to the cap, and none that was still running at it.
  const std::size_t cap = a[9].step + 1 + a[10].length / 2;  // within episode 10, before its last step
  DefaultGenerator capped_gen(3);
  const auto capped = evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, capped_gen, 25, cap);
  REQUIRE(capped.size() == 10);
  CHECK(std::equal(capped.begin(), capped.end(), a.begin()));
  DefaultGenerator uncapped_gen(3);
  CHECK(evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{}, uncapped_gen, 25, steps) == a);
}

TEST_CASE(
    "after the first update, a Gaussian agent on the pendulum with every recipe option on allocates nothing "
    "(clipped actions, normalised rewards and features, target_kl, clipped value loss, cut truncation)",
    "[ppo][allocation]") {
  PpoOptions o = small_options();
  o.n_envs = 4;
  o.n_steps = 64;
  o.epochs = 2;
  o.minibatches = 4;
  o.hidden_sizes = {8, 8};
  o.total_updates = 20;
  o.learning_rate = 0.05;  // large steps: target_kl stops some updates
  o.normalize_features = true;
  o.normalize_rewards = true;
  o.clip_value_loss = true;
  o.target_kl = 1e-3;
  o.truncation = TruncationMode::cut;
  o.initial_log_std = 1.0;  // samples beyond the torque box: clipping works every step
  PendulumOptions hidden;
  hidden.observe_velocity = false;
  hidden.max_episode_steps = 50;
  Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> agent(4, 1, o, 3);
  auto rollout = make_rollout(4, Pendulum(hidden), TraceBank<dynamic, float>({0.0, 0.8}, 2), 2);
  auto buffer = agent.make_buffer();
  train(agent, buffer, rollout, 256);
  std::size_t updates = 0, stopped = 0;
  {
    AllocationGuard guard;
    train(agent, buffer, rollout, 19 * 256, [&](const PpoStats& s) {
      ++updates;
      stopped += s.stopped_at_target_kl ? 1 : 0;
    });
  }
  CHECK(updates == 19);
  CHECK(allocations == 0);
  CHECK(stopped > 0);
  CHECK(agent.reward_normalizer().statistics().count() == 20 * 256);
}

TEST_CASE("a copy of an agent keeps its own copy of the last update's episodes", "[ppo]") {
  PpoOptions o = small_options();
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 1);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 5);
  train(agent, rollout, 16);
  const std::vector<EpisodeEnd> first(agent.last_stats().episodes.begin(), agent.last_stats().episodes.end());
  REQUIRE(!first.empty());
  const Ppo<Eigen::VectorXd, double> copy = agent;
  CHECK(copy.last_stats().episodes.data() != agent.last_stats().episodes.data());
  CHECK(std::equal(first.begin(), first.end(), copy.last_stats().episodes.begin(), copy.last_stats().episodes.end()));
  train(agent, rollout, 16);  // the original's next update does not touch the copy's episodes
  CHECK(std::equal(first.begin(), first.end(), copy.last_stats().episodes.begin(), copy.last_stats().episodes.end()));
  Ppo<Eigen::VectorXd, double> moved = Ppo<Eigen::VectorXd, double>(copy);
  CHECK(std::equal(first.begin(), first.end(), moved.last_stats().episodes.begin(), moved.last_stats().episodes.end()));
}

// ---------------------------------------------------------------------------------------------
// Feature normalisation (options.normalize_features)

TEST_CASE(
    "with normalize_features the agent acts on features normalised by running statistics of every feature it "
    "acted on, and bootstrap, final-observation and policy features only read them",
    "[ppo][normalizer]") {
  PpoOptions o = small_options();
  o.normalize_features = true;
  o.truncation = TruncationMode::bootstrap;  // the final observations' values are normalised too
  Ppo<Eigen::VectorXd, double> agent(5, 3, o, 3);
  // A slow trace: entries in [0, 1] whose variances are far from 1.
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{5, 0.9}, 4);
  FeatureNormalizer expected(5);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  for (std::size_t u = 0; u < 3; ++u) {
    rollout.collect(acting, 8, [&](const RolloutBatch<Eigen::VectorXd>& b) {
      expected.update(b.features);  // what act saw, one batch a step
      acting(b);  // writes the step; bootstrap truncation: the final observations' values read the statistics
      for (std::size_t i = 0; i < 2; ++i) {
        // The value act kept is the critic's value of the normalised features.
        const auto s = static_cast<Eigen::Index>((buffer.recorded() - 1) * 2 + i);
        const Eigen::MatrixXd x = expected.normalized(b.features[i]);
        CHECK(buffer.values[s] == Approx(agent.critic().forward(x)(0, 0)).epsilon(1e-12));
        // ... and the features it stored are the normalised ones.
        CHECK((buffer.features.block(static_cast<std::size_t>(s), 1).col(0) - x.col(0)).cwiseAbs().maxCoeff() < 1e-12);
      }
    });
    CHECK(agent.normalizer() == expected);
    std::vector<Eigen::VectorXd> bootstrap = {rollout.features(0), rollout.features(1)};
    acting.bootstrap(bootstrap);
    agent.compute_advantages(buffer);
    CHECK(agent.normalizer() == expected);  // the bootstrap features are not acted on
    agent.update(buffer);
    CHECK(agent.normalizer() == expected);
  }
  CHECK(agent.normalizer().count() == 3 * 8 * 2);
  const FeatureNormalizer before = agent.normalizer();
  DefaultGenerator gen(1);
  (void)evaluate(agent, Wander{}, DenseTrace<Eigen::VectorXd>{5, 0.9}, gen, 10);
  CHECK(agent.normalizer() == before);  // evaluation reads the statistics and never updates them

  // policy() acts on normalised features: the same draws as an agent-free actor fed normalised
  // features, and other draws than it makes from the raw features. (The actor's output layer is
  // scaled up first: its orthogonal init of gain 0.01 makes the logits nearly independent of the input.)
  agent.actor().weights(agent.actor().num_layers() - 1) *= 1000.0;
  PpoPolicy<Eigen::VectorXd, double> pi = agent.policy();
  PpoPolicy<Eigen::VectorXd, double> raw(agent.actor());
  const Eigen::VectorXd phi = rollout.features(0);
  const Eigen::VectorXd normalised = agent.normalizer().normalized(phi);
  std::size_t differ = 0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    DefaultGenerator a(seed), b(seed), c(seed);
    const Action u = pi.act(phi, a);
    CHECK(u == raw.act(normalised, b));
    differ += u != raw.act(phi, c);
  }
  CHECK(differ > 0);

  // Frozen: act no longer updates.
  agent.freeze_normalizer();
  rollout.collect(acting, 8, acting);
  CHECK(agent.normalizer() == [&] {
    FeatureNormalizer f = before;
    f.freeze();
    return f;
  }());
}

TEST_CASE("while normalize_features is off the normaliser's options change nothing, and on, the trajectory changes",
          "[ppo][normalizer]") {
  const auto trained = [](bool normalize, NormalizerOptions n) {
    PpoOptions o = small_options();
    o.epochs = 2;
    o.normalize_features = normalize;
    o.normalizer = n;
    Ppo<Eigen::VectorXf, float> agent(5, 3, o, 5);
    auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXf>{}, 7);
    train(agent, rollout, 64);
    Eigen::VectorXf all(agent.actor().num_parameters() + agent.critic().num_parameters());
    all << agent.actor().parameters(), agent.critic().parameters();
    return all;
  };
  const Eigen::VectorXf off = trained(false, {}), off_other = trained(false, {.epsilon = 1.0, .clip = 0.5});
  CHECK(off == off_other);  // the normaliser's options do nothing while it is off
  CHECK(off != trained(true, {}));
  CHECK(trained(true, {}) == trained(true, {}));
}

TEST_CASE("set_normalizer replaces the statistics an agent acts with, and is refused where it does not fit",
          "[ppo][normalizer]") {
  PpoOptions o = small_options();
  o.normalize_features = true;
  Ppo<Eigen::VectorXf, float> agent(5, 3, o, 5);
  FeatureNormalizer stats(5);
  stats.update(Eigen::MatrixXd::Random(5, 12));
  stats.freeze();
  agent.set_normalizer(stats);
  CHECK(agent.normalizer() == stats);
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXf>{}, 7);
  train(agent, rollout, 64);
  CHECK(agent.normalizer() == stats);  // frozen as given: acting folded nothing in

  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(agent.set_normalizer(FeatureNormalizer(4)),
                    Contains("Ppo::set_normalizer: normalizer has 4 features, the agent 5"));
  CHECK_THROWS_WITH(agent.set_normalizer(FeatureNormalizer(5, {.clip = 3.0})),
                    Contains("Ppo::set_normalizer: normalizer has epsilon 1e-08 and clip 3"));
  Ppo<Eigen::VectorXf, float> plain(5, 3, small_options(), 5);
  CHECK_THROWS_WITH(plain.set_normalizer(stats), Contains("the agent does not normalise its features"));
  CHECK(agent.normalizer() == stats);
  CHECK(plain.normalizer().dim() == 0);
}

TEST_CASE("PPO with normalised features learns a one-step task whose cue is a small entry beside large ones",
          "[ppo][normalizer][learning]") {
  // As the learning test above, with features 5 + 0.01 e_c (the cue a small difference beside large
  // constant entries, as in a slow memory trace): the normalised features differ by order 1.
  // Calibration over agent and rollout seeds 1-10 (GCC 12, -O2): the 200-episode evaluation reached
  // 0.995 for every seed with normalisation and 0.500-0.535 without (the same budget).
  struct Scaled {
    Eigen::VectorXf z = Eigen::VectorXf::Constant(2, 5.0f);
    void reset(Observation y) { update(y); }
    void update(Observation y) {
      z.setConstant(5.0f);
      z[static_cast<Eigen::Index>(y)] += 0.01f;
    }
    [[nodiscard]] std::size_t dim() const { return 2; }
    [[nodiscard]] const Eigen::VectorXf& features() const { return z; }
  };
  PpoOptions o;
  o.n_envs = 8;
  o.n_steps = 16;
  o.minibatches = 4;
  const auto success = [&](bool normalize) {
    o.normalize_features = normalize;
    Ppo<Eigen::VectorXf, float> agent(2, 2, o, 1);
    auto rollout = make_rollout(8, ContextBandit{}, Scaled{}, 1);
    train(agent, rollout, 64 * 128);
    DefaultGenerator gen(99);
    const std::vector<EpisodeEnd> episodes = evaluate(agent, ContextBandit{}, Scaled{}, gen, 200);
    double rate = 0;
    for (const EpisodeEnd& e : episodes) rate += e.episode_return / 200;
    return rate;
  };
  const double with = success(true), without = success(false);
  INFO("evaluation success " << with << " normalised, " << without << " not");
  CHECK(with > 0.9);
  CHECK(without < 0.6);
}

// ---------------------------------------------------------------------------------------------
// Bad input

TEST_CASE("bad options and arguments are refused with the function, the argument and the value named",
          "[ppo][errors]") {
  using Agent = Ppo<Eigen::VectorXd, double>;
  const auto refused = [](auto change, const char* message) {
    PpoOptions o = small_options();
    change(o);
    CHECK_THROWS_WITH(Agent(5, 3, o), Catch::Contains(message));
    CHECK_THROWS_AS(Agent(5, 3, o), std::invalid_argument);
  };
  refused([](PpoOptions& o) { o.n_envs = 0; }, "Ppo: options.n_envs must be at least 1, got 0");
  refused([](PpoOptions& o) { o.n_steps = 0; }, "Ppo: options.n_steps must be at least 1, got 0");
  refused([](PpoOptions& o) { o.epochs = 0; }, "Ppo: options.epochs must be at least 1, got 0");
  refused([](PpoOptions& o) { o.minibatches = 0; }, "Ppo: options.minibatches must be at least 1, got 0");
  refused([](PpoOptions& o) { o.minibatches = 3; }, "Ppo: options.minibatches must divide n_envs·n_steps = 16, got 3");
  refused([](PpoOptions& o) { o.discount = 1.5; }, "Ppo: options.discount must be in [0, 1], got 1.5");
  refused([](PpoOptions& o) { o.discount = std::nan(""); }, "Ppo: options.discount must be in [0, 1], got nan");
  refused([](PpoOptions& o) { o.gae_lambda = -0.1; }, "Ppo: options.gae_lambda must be in [0, 1], got -0.1");
  refused([](PpoOptions& o) { o.clip_epsilon = 0; }, "Ppo: options.clip_epsilon must be positive and finite, got 0");
  refused([](PpoOptions& o) { o.vf_coef = std::numeric_limits<double>::infinity(); },
          "Ppo: options.vf_coef must be finite and >= 0, got inf");
  refused([](PpoOptions& o) { o.ent_coef = -0.01; }, "Ppo: options.ent_coef must be finite and >= 0, got -0.01");
  refused([](PpoOptions& o) { o.max_grad_norm = 0; }, "Ppo: options.max_grad_norm must be positive and finite, got 0");
  refused([](PpoOptions& o) { o.learning_rate = -1; }, "Ppo: options.learning_rate must be finite and >= 0, got -1");
  refused([](PpoOptions& o) { o.adam.beta1 = 1; }, "Ppo: options.adam.beta1 must be in [0, 1), got 1");
  refused([](PpoOptions& o) { o.adam.epsilon = -1; }, "Ppo: options.adam.epsilon must be finite and >= 0, got -1");
  refused([](PpoOptions& o) { o.hidden_sizes = {4, 0}; }, "Ppo: options.hidden_sizes[1] must be at least 1, got 0");
  refused(
      [](PpoOptions& o) {
        o.normalize_features = true;
        o.normalizer.epsilon = 0;
      },
      "Ppo: options.normalizer.epsilon must be positive and finite, got 0");
  PpoOptions normalised = small_options();
  normalised.normalize_features = true;
  CHECK_THROWS_WITH((Ppo<MultiHot<2>, double>(10, 3, normalised)),
                    Catch::Contains("Ppo: options.normalize_features needs dense features; MultiHot features"));
  PpoOptions off = small_options();
  off.normalizer.epsilon = std::nan("");
  CHECK_NOTHROW(Agent(5, 3, off));  // the options of a normaliser that is off are not checked
  Agent normalising(5, 3, normalised);
  const FeatureNormalizer four(4);
  CHECK_THROWS_WITH((PpoPolicy<Eigen::VectorXd, double>(normalising.actor(), &four)),
                    Catch::Contains("PpoPolicy: normalizer has dim 4, expected the network's input_dim = 5"));
  Mlp<double> ten({10, 4, 3});
  const FeatureNormalizer ten_features(10);
  CHECK_THROWS_WITH((PpoPolicy<MultiHot<2>, double>(ten, &ten_features)),
                    Catch::Contains("PpoPolicy: a normalizer needs dense features, got MultiHot"));
  DefaultGenerator eval_gen(1);
  CHECK_THROWS_WITH(evaluate(normalising, Wander{}, DenseTrace<Eigen::VectorXd>{}, eval_gen, 5, 0),
                    Catch::Contains("evaluate: max_steps must be at least 1, got 0"));
  CHECK(eval_gen == DefaultGenerator(1));
  CHECK_THROWS_WITH(Agent(0, 3), Catch::Contains("Ppo: input_dim must be at least 1, got 0"));
  CHECK_THROWS_WITH(Agent(5, 0), Catch::Contains("Ppo: num_actions must be at least 1, got 0"));
  CHECK_THROWS_WITH((Ppo<Eigen::VectorXd, double, GaussianActorCritic<double>>(5, 0)),
                    Catch::Contains("Ppo: action_dim must be at least 1, got 0"));
  CHECK_THROWS_WITH(ActorCritic<float>(5, 3, {64, 0}),
                    Catch::Contains("ActorCritic: hidden_sizes[1] must be at least 1, got 0"));

  Agent agent(5, 3, small_options());
  // The rollout must have n_envs environments whose memories have dim input_dim.
  auto three = make_rollout(3, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  CHECK_THROWS_WITH(train(agent, three, 64), Catch::Contains("train: rollout has 3 environments, expected "
                                                             "options.n_envs = 2"));
  auto wide = make_rollout(2, Wander{6, 3, 6}, DenseTrace<Eigen::VectorXd>{6, 0.5}, 1);
  CHECK_THROWS_WITH(train(agent, wide, 64), Catch::Contains("train: rollout's memory 0 has dim 6, expected "
                                                            "input_dim = 5"));
  auto fine = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  CHECK_THROWS_WITH(train(agent, fine, 15),
                    Catch::Contains("train: total_env_steps must be at least n_envs·n_steps = 16, got 15"));
  CHECK(fine.steps_taken() == 0);

  // act: spans of n_envs, features of input_dim; nothing changes when refused.
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  std::vector<Eigen::VectorXd> features = {Eigen::VectorXd::Zero(5), Eigen::VectorXd::Zero(4)};
  std::vector<DefaultGenerator> gens = {DefaultGenerator(1), DefaultGenerator(2)};
  std::vector<Action> actions(2, 7);
  CHECK_THROWS_WITH(acting.act(std::span<const Eigen::VectorXd>(features), std::span(gens), std::span(actions)),
                    Catch::Contains("PpoActing::act: features[1] has size 4, expected input_dim = 5"));
  CHECK(actions[0] == 7);
  CHECK(gens[0] == DefaultGenerator(1));
  CHECK(!acting.acted());
  CHECK_THROWS_WITH(
      acting.act(std::span<const Eigen::VectorXd>(features).first(1), std::span(gens), std::span(actions)),
      Catch::Contains("PpoActing::act: features holds 1 entries, expected options.n_envs = 2"));
  // A buffer is checked where it is bound (acting) and where the agent learns from it (update).
  PpoBuffer<Eigen::VectorXd, double> foreign;  // made for no agent
  CHECK_THROWS_WITH(
      agent.acting(foreign),
      Catch::Contains(
          "Ppo::acting: buffer.n_envs() is 0, expected 2 for this agent: make the buffer with make_buffer()"));
  PpoOptions three_envs = small_options();
  three_envs.n_envs = 3;
  auto other = Agent(5, 3, three_envs).make_buffer();
  CHECK_THROWS_WITH(agent.acting(other), Catch::Contains("Ppo::acting: buffer.n_envs() is 3, expected 2"));
  auto wider = Agent(6, 3, small_options()).make_buffer();
  CHECK_THROWS_WITH(agent.update(wider), Catch::Contains("Ppo::update: buffer.features.dim() is 6, expected 5"));
  auto resized = agent.make_buffer();
  resized.values.resize(3);  // a member resized by hand
  CHECK_THROWS_WITH(agent.acting(resized), Catch::Contains("Ppo::acting: buffer.values.size() is 3, expected 16"));
  resized = agent.make_buffer();
  resized.actions.resize(3);
  CHECK_THROWS_WITH(agent.acting(resized), Catch::Contains("Ppo::acting: buffer.actions' count is 3, expected 16"));
  Ppo<MultiHot<2>, double> sparse(10, 3, small_options());
  auto sparse_buffer = sparse.make_buffer();
  auto sparse_acting = sparse.acting(sparse_buffer);
  std::vector<MultiHot<2>> hot(2);
  hot[1][0] = 10;
  hot[1].set_size(1);
  CHECK_THROWS_WITH(sparse_acting.act(std::span<const MultiHot<2>>(hot), std::span(gens), std::span(actions)),
                    Catch::Contains("PpoActing::act: features[1] has active index 10, expected < input_dim = 10"));
  CHECK(!sparse_acting.acted());

  // Out of turn: record without act, or twice; bootstrap or update before n_steps; update without
  // bootstrap; act on a full buffer; update without a schedule horizon.
  auto rollout = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 1);
  CHECK_THROWS_WITH(acting.record(RolloutBatch<Eigen::VectorXd>{}),
                    Catch::Contains("PpoActing::record: no act for this step (call act on batch.features first)"));
  CHECK_THROWS_AS(rollout.step(acting,
                               [&](const RolloutBatch<Eigen::VectorXd>& b) {
                                 acting(b);
                                 acting(b);
                               }),
                  std::logic_error);
  CHECK(buffer.recorded() == 1);
  CHECK(!acting.acted());
  CHECK_THROWS_WITH(acting.bootstrap(rollout.features()),
                    Catch::Contains("PpoActing::bootstrap: the buffer holds 1 steps, expected n_steps = 8"));
  CHECK_THROWS_WITH(agent.update(buffer),
                    Catch::Contains("Ppo::update: the buffer holds 1 recorded steps, expected n_steps = 8"));
  rollout.collect(acting, 7, acting);
  CHECK_THROWS_WITH(acting.act(rollout.features(), std::span(gens), std::span(actions)),
                    Catch::Contains("PpoActing::act: the buffer already holds n_steps = 8 steps; bootstrap and "
                                    "update it first"));
  CHECK_THROWS_WITH(agent.update(buffer),
                    Catch::Contains("Ppo::update: the buffer has no bootstrap features (call bootstrap)"));
  CHECK_THROWS_WITH(agent.compute_advantages(buffer),
                    Catch::Contains("Ppo::compute_advantages: the buffer has no bootstrap features"));
  CHECK_THROWS_WITH(
      acting.bootstrap(rollout.features().first(1)),
      Catch::Contains("PpoActing::bootstrap: bootstrap_features holds 1 entries, expected options.n_envs = 2"));
  acting.bootstrap(rollout.features());
  PpoOptions annealed = small_options();
  annealed.anneal_lr = true;
  Agent no_horizon(5, 3, annealed);
  CHECK_THROWS_WITH(no_horizon.update(buffer), Catch::Contains("Ppo::update: the annealed learning rate needs a "
                                                               "horizon"));
  CHECK(buffer.bootstrapped());  // refused: the buffer is as it was

  // Bootstrapped: no act, record or second bootstrap until the update; a refused call changes no
  // member of the buffer.
  const auto snapshot = buffer;
  CHECK_THROWS_WITH(acting.act(rollout.features(), std::span(gens), std::span(actions)),
                    Catch::Contains("PpoActing::act: the buffer already holds n_steps = 8 steps"));
  CHECK_THROWS_WITH(acting.record(RolloutBatch<Eigen::VectorXd>{}),
                    Catch::Contains("PpoActing::record: no act for this step"));
  CHECK_THROWS_WITH(acting.bootstrap(rollout.features()),
                    Catch::Contains("PpoActing::bootstrap: the buffer is already bootstrapped (update it)"));
  CHECK(same_contents(buffer, snapshot));
  CHECK(agent.update(buffer).update == 1);
  CHECK_THROWS_WITH(agent.update(buffer), Catch::Contains("Ppo::update: the buffer holds 0 recorded steps"));

  // A batch whose actions are not the ones act chose: refused, nothing written. Acting anew on the
  // same step replaces it; a refused act leaves the buffer as it was.
  std::vector<Eigen::VectorXd> fitting = {Eigen::VectorXd::Zero(5), Eigen::VectorXd::Ones(5)};
  acting.act(std::span<const Eigen::VectorXd>(fitting), std::span(gens), std::span(actions));
  std::vector<ActedStep> taken(2);
  taken[0].action = actions[0];
  taken[1].action = (actions[1] + 1) % 3;
  const auto acted = buffer;
  CHECK_THROWS_WITH(acting.record(RolloutBatch<Eigen::VectorXd>{0, fitting, taken, fitting}),
                    Catch::Contains("PpoActing::record: batch.steps[1].action is not the action act chose for "
                                    "environment 1"));
  CHECK(same_contents(buffer, acted));
  CHECK(buffer.recorded() == 0);
  const std::vector<Eigen::VectorXd> bad = {Eigen::VectorXd::Zero(5), Eigen::VectorXd::Zero(4)};
  CHECK_THROWS_WITH(acting.act(std::span<const Eigen::VectorXd>(bad), std::span(gens), std::span(actions)),
                    Catch::Contains("PpoActing::act: features[1] has size 4"));
  CHECK(same_contents(buffer, acted));
  CHECK(acting.acted());         // the step acted on stays: a refused act changes nothing
  taken[1].action = actions[1];  // the actions act chose
  acting.record(RolloutBatch<Eigen::VectorXd>{0, fitting, taken, fitting});
  CHECK(buffer.recorded() == 1);
  CHECK(buffer.actions[0] == actions[0]);
  CHECK(buffer.actions[1] == actions[1]);
  CHECK(buffer.features.block(1, 1).col(0) == fitting[1]);
  // Bootstrap truncation: a final observation the normaliser refuses (non-finite) refuses the whole
  // step before any of it is written; the step acted on stays, and the corrected batch is written.
  PpoOptions bootstrapping = small_options();
  bootstrapping.truncation = TruncationMode::bootstrap;
  bootstrapping.normalize_features = true;
  Agent finals(5, 3, bootstrapping);
  auto finals_buffer = finals.make_buffer();
  auto finals_acting = finals.acting(finals_buffer);
  finals_acting.act(std::span<const Eigen::VectorXd>(fitting), std::span(gens), std::span(actions));
  taken[0].action = actions[0];
  taken[1].action = actions[1];
  taken[1].truncated = true;
  std::vector<Eigen::VectorXd> next = {Eigen::VectorXd::Zero(5), Eigen::VectorXd::Zero(5)};
  next[1][2] = std::numeric_limits<double>::infinity();
  const FeatureNormalizer statistics = finals.normalizer();
  CHECK_THROWS_AS(finals_acting.record(RolloutBatch<Eigen::VectorXd>{0, fitting, taken, next}), std::invalid_argument);
  CHECK(finals_buffer.recorded() == 0);
  CHECK(finals_buffer.episodes.empty());
  CHECK(finals_acting.acted());
  CHECK(finals.normalizer() == statistics);
  next[1][2] = 0.5;
  finals_acting.record(RolloutBatch<Eigen::VectorXd>{0, fitting, taken, next});
  CHECK(finals_buffer.recorded() == 1);
  CHECK(finals_buffer.episodes.size() == 1);
  CHECK((finals_buffer.features.block(1, 1).col(0) - finals.normalizer().normalized(fitting[1])).cwiseAbs().maxCoeff() <
        1e-12);
  Eigen::MatrixXd final_features = finals.normalizer().normalized(next[1]);
  CHECK(finals_buffer.final_values[1] == Approx(finals.critic().forward(final_features)(0, 0)).epsilon(1e-12));

  PpoBuffer<Eigen::VectorXd, double> full_buffer = agent.make_buffer();
  auto refill = agent.acting(full_buffer);
  auto rollout2 = make_rollout(2, Wander{}, DenseTrace<Eigen::VectorXd>{}, 3);
  rollout2.collect(refill, 8, refill);
  std::vector<Eigen::VectorXd> narrow = {Eigen::VectorXd::Zero(5), Eigen::VectorXd::Zero(3)};
  CHECK_THROWS_WITH(refill.bootstrap(std::span<const Eigen::VectorXd>(narrow)),
                    Catch::Contains("PpoActing::bootstrap: bootstrap_features[1] has size 3, expected input_dim = 5"));
  CHECK(!full_buffer.bootstrapped());
  // train starts from an empty buffer only.
  CHECK_THROWS_WITH(train(agent, full_buffer, rollout2, 16),
                    Catch::Contains("train: the buffer holds 8 steps (update or clear it first)"));
  full_buffer.clear();
  CHECK(full_buffer.recorded() == 0);
  CHECK(!full_buffer.bootstrapped());

  // GAE's own checks.
  std::vector<ActedStep> steps(4);
  std::vector<double> v(4), out(4), boot(2), wrong(3);
  CHECK_THROWS_WITH(
      generalized_advantages<double>({1.5, 0.95, TruncationMode::official}, 2, steps, v, boot, {}, out, out),
      Catch::Contains("generalized_advantages: options.discount must be in [0, 1], got 1.5"));
  CHECK_THROWS_WITH(generalized_advantages<double>({}, 2, steps, v, wrong, {}, out, out),
                    Catch::Contains("generalized_advantages: bootstrap_values has 3 entries, expected n_envs = 2"));
  CHECK_THROWS_WITH(
      generalized_advantages<double>({0.9, 0.9, TruncationMode::bootstrap}, 2, steps, v, boot, {}, out, out),
      Catch::Contains("generalized_advantages: final_values has 0 entries, expected 4 (bootstrap truncation)"));
  CHECK_THROWS_WITH(
      generalized_advantages<double>({0.9, 0.9, TruncationMode{7}}, 2, steps, v, boot, {}, out, out),
      Catch::Contains("generalized_advantages: options.truncation must be official, bootstrap or cut, got 7"));
  PpoOptions unknown = small_options();
  unknown.truncation = TruncationMode{3};
  CHECK_THROWS_WITH((Ppo<Eigen::VectorXd, double>(5, 3, unknown, 1)),
                    Catch::Contains("options.truncation must be official, bootstrap or cut, got 3"));
  CHECK(std::string(truncation_name(TruncationMode::textbook)) == "bootstrap");  // 0.3's name is an alias
  CHECK(static_cast<int>(TruncationMode::bootstrap) == 1);  // checkpoints' codes: official 0, bootstrap 1, cut 2
  CHECK(static_cast<int>(TruncationMode::official) == 0);
  CHECK(static_cast<int>(TruncationMode::cut) == 2);
  CHECK(std::string(truncation_name(TruncationMode::cut)) == "cut");
  CHECK(std::string(truncation_name(TruncationMode{3})) == "unknown");
}

}  // namespace ppo_test
