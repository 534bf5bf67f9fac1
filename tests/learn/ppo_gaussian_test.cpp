// PPO with a diagonal Gaussian policy (learn/gaussian_actor_critic.hpp): the log-density, entropy and
// sampling against their closed forms and Monte Carlo; GaussianActorCritic's policy output and
// gradients; the whole PPO loss gradient against central finite differences; acting and recording
// through Rollout with 2-dimensional continuous actions; and learning a continuous task that needs
// memory. The categorical path is the subject of ppo_test.cpp.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/core.hpp>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/loop/checkpoint.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <numbers>
#include <span>
#include <vector>

#include "loss_gradient_check.hpp"
#include "temp_dir.hpp"

namespace ppo_gaussian_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

static_assert(ActorCriticNetwork<GaussianActorCritic<float>, Eigen::VectorXf>);
static_assert(ActorCriticNetwork<GaussianActorCritic<double>, MultiHot<2>>);
static_assert(std::same_as<policy_distribution_t<GaussianActorCritic<float>>, DiagonalGaussian>);
static_assert(std::same_as<policy_distribution_t<ActorCritic<float>>, Categorical>);

namespace {

/// A continuous task that needs memory: the first observation shows a cue c = ±1 (y = (c, 1)),
/// then two blank observations (0, 0); the third action, a 2-vector, is paid −|a − c (1, −1)|²
/// (clipped to the box [−2, 2]²) and ends the episode; the first two are paid 0. A memoryless
/// policy cannot do better than −2 (the mean action 0); one that remembers the cue gets 0.
/// (Observations of the scalar T, for agents in float and in double.)
template <class T = float>
struct BasicContinuousCue {
  using action_type = Eigen::Vector2d;
  using Y = Eigen::Matrix<T, 2, 1>;
  int t = 0;
  double cue = 1;
  template <class G>
  Y reset(G& gen) {
    t = 0;
    cue = uniform_index(gen, 2) == 0 ? -1.0 : 1.0;
    return {static_cast<T>(cue), T(1)};
  }
  template <class G>
  TimeStep<Y> step(const action_type& u, G&) {
    if (++t < 3) return {Y::Zero()};
    const Eigen::Vector2d a = u.cwiseMax(-2.0).cwiseMin(2.0);
    return {Y::Zero(), -(a - cue * Eigen::Vector2d(1, -1)).squaredNorm(), true};
  }
  [[nodiscard]] action_type action_low() const { return action_type::Constant(-2.0); }
  [[nodiscard]] action_type action_high() const { return action_type::Constant(2.0); }
};
using ContinuousCue = BasicContinuousCue<float>;
static_assert(ContinuousActions<ContinuousCue>);

/// The cue task in double observations with float actions.
struct FloatCue : BasicContinuousCue<double> {
  using action_type = Eigen::Vector2f;
  template <class G>
  TimeStep<Eigen::Vector2d> step(const action_type& u, G& gen) {
    return BasicContinuousCue<double>::step(u.cast<double>(), gen);
  }
  [[nodiscard]] action_type action_low() const { return action_type::Constant(-2.0f); }
  [[nodiscard]] action_type action_high() const { return action_type::Constant(2.0f); }
};
static_assert(ContinuousActions<FloatCue>);

using Trace = MemoryTrace<dynamic_lambda, dynamic, float>;
using TraceD = MemoryTrace<dynamic_lambda, dynamic, double>;

template <class Memory>
auto make_rollout(std::size_t n, const Memory& memory, std::uint64_t seed) {
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) gens.push_back(make_stream(seed, i));
  using Env = BasicContinuousCue<typename features_t<Memory>::Scalar>;
  return Rollout(std::vector<Env>(n), std::vector(n, memory), std::move(gens));
}

}  // namespace

TEST_CASE("the diagonal Gaussian's log-density and entropy are the closed forms, and samples follow it",
          "[ppo][gaussian]") {
  const Eigen::Vector2d mean(0.5, -1.0), log_std(-0.3, 0.4);
  const Eigen::Vector2d a(1.0, 0.25);
  const double s0 = std::exp(-0.3), s1 = std::exp(0.4);
  const double by_hand = -0.5 * std::pow((1.0 - 0.5) / s0, 2) - std::log(s0) - 0.5 * std::log(2 * std::numbers::pi) -
                         0.5 * std::pow((0.25 + 1.0) / s1, 2) - std::log(s1) - 0.5 * std::log(2 * std::numbers::pi);
  CHECK(diagonal_gaussian_log_prob(a, mean, log_std) == Approx(by_hand).epsilon(1e-14));
  CHECK(diagonal_gaussian_entropy(log_std) ==
        Approx(0.1 + std::log(2 * std::numbers::pi * std::numbers::e)).epsilon(1e-14));

  // Samples: k standard_normal draws in order; mean, spread and −E log π (the entropy) by Monte Carlo.
  DefaultGenerator gen(3), copy(3);
  const int n = 100000;
  Eigen::Vector2d sum = Eigen::Vector2d::Zero(), sum2 = Eigen::Vector2d::Zero();
  double neg_log = 0, neg_log2 = 0;
  Eigen::Vector2f sample;
  for (int i = 0; i < n; ++i) {
    const double lp = sample_diagonal_gaussian(mean, log_std, gen, sample);
    const double e0 = standard_normal(copy), e1 = standard_normal(copy);
    REQUIRE(sample[0] == static_cast<float>(0.5 + s0 * e0));
    REQUIRE(sample[1] == static_cast<float>(-1.0 + s1 * e1));
    REQUIRE(lp == diagonal_gaussian_log_prob(sample, mean, log_std));  // of the rounded action
    const Eigen::Vector2d x = sample.cast<double>();
    sum += x;
    sum2 += x.cwiseProduct(x);
    neg_log -= lp;
    neg_log2 += lp * lp;
  }
  const Eigen::Vector2d m = sum / n, var = sum2 / n - m.cwiseProduct(m);
  CHECK(std::abs(m[0] - 0.5) < 5 * s0 / std::sqrt(n));
  CHECK(std::abs(m[1] + 1.0) < 5 * s1 / std::sqrt(n));
  CHECK(std::abs(var[0] / (s0 * s0) - 1) < 5 * std::sqrt(2.0 / n));
  CHECK(std::abs(var[1] / (s1 * s1) - 1) < 5 * std::sqrt(2.0 / n));
  const double h = neg_log / n, sd = std::sqrt(neg_log2 / n - h * h);
  CHECK(std::abs(h - diagonal_gaussian_entropy(log_std)) < 5 * sd / std::sqrt(n));

  // An action type that cannot hold the mean is refused before anything is drawn.
  Eigen::Matrix<float, 1, 1> narrow;
  DefaultGenerator before = gen;
  CHECK_THROWS_WITH(sample_diagonal_gaussian(mean, log_std, gen, narrow),
                    "sample_diagonal_gaussian: actions of dimension 2 do not fit the action type, of dimension 1");
  CHECK(gen == before);

  // A diverged network is refused.
  const Eigen::Vector2d bad(std::nan(""), 0.0);
  CHECK_THROWS_WITH(sample_diagonal_gaussian(bad, log_std, gen, sample),
                    "sample_diagonal_gaussian: mean[0] must be finite, got nan");
  CHECK_THROWS_WITH(diagonal_gaussian_log_prob(a, mean, Eigen::Vector3d::Zero()),
                    "diagonal_gaussian_log_prob: log_std has 3 entries, expected the mean's 2");
}

TEST_CASE("GaussianActorCritic: the policy output is (mean, log std), and its gradients are the networks' and the sum",
          "[ppo][gaussian]") {
  GaussianActorCritic<double> net(3, 2, {5}, -0.5);
  DefaultGenerator gen(1);
  net.initialize_orthogonal(gen);
  CHECK(net.policy_dim() == 4);
  CHECK(net.num_parameters() == (3 * 5 + 5 + 5 * 2 + 2) + (3 * 5 + 5 + 5 + 1) + 2);
  CHECK(net.log_std() == Eigen::Vector2d::Constant(-0.5));
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(3, 4);
  const Eigen::MatrixXd out = net.forward_policy(x.leftCols(4));
  const Eigen::MatrixXd mean = net.actor().forward(x);
  CHECK(out.topRows(2) == mean);
  CHECK(out.bottomRows(2) == Eigen::MatrixXd::Constant(2, 4, -0.5));
  (void)net.forward_value(x.leftCols(4));
  const Eigen::MatrixXd d_policy = Eigen::MatrixXd::Random(4, 4);
  const Eigen::RowVectorXd d_value = Eigen::RowVectorXd::Random(4);
  net.backward(x.leftCols(4), d_policy, d_value);
  const auto grads = net.gradients();
  CHECK(grads.size() == 3);
  CHECK(grads[2][0] == Approx(d_policy.row(2).sum()).epsilon(1e-15));
  CHECK(grads[2][1] == Approx(d_policy.row(3).sum()).epsilon(1e-15));
  CHECK_THROWS_WITH(GaussianActorCritic<float>(3, 0), "GaussianActorCritic: action_dim must be at least 1, got 0");
  CHECK_THROWS_WITH(GaussianActorCritic<float>(3, 1, {4}, INFINITY),
                    "GaussianActorCritic: initial_log_std must be finite in the network's scalar, got inf");
}

TEST_CASE("the whole PPO loss gradient of a Gaussian policy equals central finite differences",
          "[ppo][gaussian][gradient]") {
  struct Setting {
    double clip_epsilon, vf_coef, ent_coef;
  };
  const Setting setting = GENERATE(Setting{0.2, 0.5, 0.0}, Setting{0.1, 0.5, 0.05});
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 6;
  o.minibatches = 2;
  o.anneal_lr = false;
  o.hidden_sizes = {6};
  o.clip_epsilon = setting.clip_epsilon;
  o.vf_coef = setting.vf_coef;
  o.ent_coef = setting.ent_coef;
  Ppo<Eigen::VectorXd, double, GaussianActorCritic<double>> agent(2, 2, o, 7);
  CHECK(agent.action_dim() == 2);
  auto rollout = make_rollout(4, TraceD(0.5, 2), 3);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  rollout.collect(acting, o.n_steps, acting);
  acting.bootstrap(rollout.features());
  agent.compute_advantages(buffer);
  CHECK(buffer.actions.rows() == 2);
  // Away from the acting parameters (the log std too), so that the ratios are not 1 and some are clipped.
  Xoshiro256StarStar noise(5);
  const auto parameters = agent.networks().parameters();
  for (const auto block : parameters)
    for (double& p : block) p += 0.2 * standard_normal(noise);

  const std::vector<std::size_t> samples = {3, 14, 0, 7, 9, 12, 1, 5, 15, 10, 6, 22, 20, 18};
  PpoMinibatch<Eigen::VectorXd, double, DiagonalGaussian> minibatch;
  minibatch.gather(buffer, samples);
  const PpoLossCoefficients coefficients = agent.loss_coefficients();
  const PpoLoss at = ppo_loss(agent.networks(), minibatch, coefficients, false);
  INFO("clip fraction " << at.clip_fraction << ", entropy " << at.entropy << ", value loss " << at.value_loss);
  REQUIRE(at.clip_fraction > 0.0);
  REQUIRE(at.clip_fraction < 1.0);
  REQUIRE(at.value_loss > 0.001);
  // The entropy is the closed form of the current log std.
  CHECK(at.entropy == Approx(diagonal_gaussian_entropy(agent.networks().log_std())).epsilon(1e-12));
  const test_gradients::GradientCheck check =
      test_gradients::check_loss_gradient(agent.networks(), minibatch, coefficients, 1e-7);
  INFO("worst relative error " << check.worst << ", nonzero " << check.nonzero << " of " << check.count);
  CHECK(check.count == agent.networks().num_parameters());
  CHECK(check.worst < 1e-7);
  CHECK(check.nonzero > check.count / 2);
}

TEST_CASE(
    "Ppo with a Gaussian policy acts through Rollout: the environment gets the action clipped into its box, the "
    "buffer the unclipped sample and its log-density",
    "[ppo][gaussian]") {
  PpoOptions o;
  o.n_envs = 3;
  o.n_steps = 4;
  o.minibatches = 2;
  o.total_updates = 1;
  o.hidden_sizes = {4};
  for (const ActionClipping clipping : {ActionClipping::off, ActionClipping::to_box}) {
    Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> other(2, 2, o, 1);
    other.networks().log_std().setConstant(1.0f);
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < 3; ++i) gens.push_back(make_stream(9, i));
    Rollout rollout(std::vector<ContinuousCue>(3), std::vector(3, Trace(0.5, 2)), std::move(gens), clipping);
    CHECK(rollout.clipping() == clipping);
    auto other_buffer = other.make_buffer();
    auto other_acting = other.acting(other_buffer);
    std::size_t beyond = 0;
    rollout.collect(other_acting, o.n_steps, [&](const RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>& batch) {
      REQUIRE(batch.policy_actions.size() == 3);
      for (std::size_t i = 0; i < 3; ++i) {
        const Eigen::Vector2d sample = batch.policy_actions[i];
        beyond += sample.cwiseAbs().maxCoeff() > 2.0 ? 1 : 0;
        if (clipping == ActionClipping::off)
          CHECK(batch.steps[i].action == sample);
        else
          CHECK(batch.steps[i].action == sample.cwiseMax(-2.0).cwiseMin(2.0));
      }
      other_acting(batch);
      for (std::size_t i = 0; i < 3; ++i)  // the sample, kept unclipped
        CHECK(
            other_buffer.actions.col(static_cast<Eigen::Index>((other_buffer.recorded() - 1) * 3 + i)).cast<double>() ==
            batch.policy_actions[i]);
    });
    CHECK(beyond > 0);
  }

  Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> agent(2, 2, o, 1);
  agent.networks().log_std().setConstant(1.0f);  // σ = e: samples beyond the box [−2, 2] are common
  auto rollout = make_rollout(3, Trace(0.5, 2), 9);
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  std::vector<Eigen::Vector2d> applied, sampled;
  const auto record = [&](const RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>& batch) {
    for (const auto& s : batch.steps) applied.push_back(s.action);
    sampled.insert(sampled.end(), batch.policy_actions.begin(), batch.policy_actions.end());
    acting(batch);
  };
  rollout.collect(acting, o.n_steps, record);
  REQUIRE(applied.size() == 12);
  REQUIRE(sampled.size() == 12);
  std::size_t beyond = 0;
  for (std::size_t s = 0; s < 12; ++s) {
    const Eigen::Vector2f stored = buffer.actions.col(static_cast<Eigen::Index>(s));
    CHECK(stored.cast<double>() == sampled[s]);  // the policy's sample, not the clipped action
    CHECK(applied[s] == sampled[s].cwiseMax(-2.0).cwiseMin(2.0));
    beyond += sampled[s].cwiseAbs().maxCoeff() > 2.0 ? 1 : 0;
  }
  CHECK(beyond > 0);
  // The stored log-densities are those of the stored actions under the acting policy.
  const Eigen::MatrixXf features = [&] {
    Eigen::MatrixXf f(2, 12);
    for (std::size_t s = 0; s < 12; ++s) f.col(static_cast<Eigen::Index>(s)) = buffer.features.block(s, 1).col(0);
    return f;
  }();
  const Eigen::MatrixXf out = agent.networks().forward_policy(features.leftCols(12));
  for (Eigen::Index s = 0; s < 12; ++s)
    CHECK(buffer.log_probs[s] ==
          Approx(diagonal_gaussian_log_prob(buffer.actions.col(s), out.col(s).head(2), out.col(s).tail(2)))
              .epsilon(1e-5));
  acting.bootstrap(rollout.features());
  const PpoStats& stats = agent.update(buffer);
  CHECK(stats.update == 1);
  CHECK(std::isfinite(stats.loss));

  // A batch whose actions are not the ones act chose is refused.
  std::vector<Eigen::VectorXf> phis(3, Eigen::VectorXf::Zero(2));
  std::vector<DefaultGenerator> gens(3, DefaultGenerator(1));
  std::vector<Eigen::Vector2d> actions(3);
  acting.act(std::span<const Eigen::VectorXf>(phis), std::span<DefaultGenerator>(gens),
             std::span<Eigen::Vector2d>(actions));
  std::vector<BasicActedStep<Eigen::Vector2d>> steps(3);
  for (std::size_t i = 0; i < 3; ++i) steps[i].action = actions[i];
  steps[1].action[0] += 0.5;
  const RolloutBatch<Eigen::VectorXf, Eigen::Vector2d> batch{0, phis, steps, phis};
  CHECK_THROWS_WITH(acting.record(batch),
                    "PpoActing::record: batch.steps[1].action is not the action act chose for environment 1");
  // With policy_actions (Rollout's batches) those are compared; the steps may hold them clipped.
  std::vector<Eigen::Vector2d> chosen(actions.begin(), actions.end());
  chosen[2][1] -= 0.25;
  CHECK_THROWS_WITH(acting.record(RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>{0, phis, steps, phis, chosen}),
                    "PpoActing::record: batch.policy_actions[2] is not the action act chose for environment 2");
  CHECK_THROWS_WITH(acting.record(RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>{
                        0, phis, steps, phis, std::span<const Eigen::Vector2d>(chosen).first(2)}),
                    "PpoActing::record: batch.policy_actions holds 2 entries, expected options.n_envs = 3");
  CHECK(buffer.recorded() == 0);
  // Actions that cannot hold the policy's dimension are refused before anything changes: the step
  // acted on before stays, and is written as it was.
  std::vector<Eigen::Matrix<double, 1, 1>> narrow(3);
  const std::vector<DefaultGenerator> before = gens;
  CHECK_THROWS_WITH(acting.act(std::span<const Eigen::VectorXf>(phis), std::span<DefaultGenerator>(gens),
                               std::span<Eigen::Matrix<double, 1, 1>>(narrow)),
                    "PpoActing::act: actions of dimension 2 do not fit the action type, of dimension 1");
  CHECK(gens == before);
  CHECK(acting.acted());
  steps[1].action = actions[1];
  acting.record(RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>{0, phis, steps, phis});
  CHECK(buffer.recorded() == 1);
  CHECK(buffer.actions.col(1).cast<double>() == actions[1]);
  auto policy = agent.policy();
  CHECK_THROWS_WITH(policy.act(std::span<const Eigen::VectorXf>(phis), std::span<DefaultGenerator>(gens),
                               std::span<Eigen::Matrix<double, 1, 1>>(narrow)),
                    "PpoPolicy::act: actions of dimension 2 do not fit the action type, of dimension 1");
  CHECK(gens == before);
}

TEST_CASE("Ppo with a Gaussian policy learns a continuous task that needs memory, and without memory it cannot",
          "[ppo][gaussian][learning]") {
  // 8 environments x 24 steps, 4 epochs of 4 minibatches, lr 3e-3, no entropy bonus, 60 updates
  // (11,520 steps), hidden {16}. Greedy evaluation (the mean action) over 100 episodes: with a trace
  // (λ = 0.5) the cue is remembered; memoryless (λ = 0) the best is the mean action 0, a return of −2.
  const auto run = [](double lambda, std::uint64_t seed) {
    PpoOptions o;
    o.n_envs = 8;
    o.n_steps = 24;
    o.epochs = 4;
    o.minibatches = 4;
    o.learning_rate = 3e-3;
    o.ent_coef = 0.0;
    o.hidden_sizes = {16};
    Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> agent(2, 2, o, seed);
    const Trace trace(lambda, 2);
    auto rollout = make_rollout(8, trace, seed);
    train(agent, rollout, 60 * 8 * 24);
    DefaultGenerator eval = make_stream(seed, 1000);
    double greedy = 0;
    const auto episodes = evaluate(agent, ContinuousCue{}, trace, eval, 100, ActionSelection::greedy);
    for (const EpisodeEnd& e : episodes) greedy += e.episode_return / static_cast<double>(episodes.size());
    return greedy;
  };
  const double remembered = run(0.5, 1), memoryless = run(0.0, 1);
  INFO("greedy return with a trace " << remembered << ", memoryless " << memoryless);
  CHECK(remembered > -0.5);
  CHECK(memoryless < -1.5);
}

TEST_CASE("a Gaussian agent's run on the pendulum, checkpointed and resumed, ends as the run never stopped",
          "[ppo][gaussian][checkpoint]") {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 16;
  o.minibatches = 2;
  o.hidden_sizes = {8};
  o.normalize_features = true;
  o.reward_scale = 0.1;
  o.initial_log_std = -0.5;
  o.total_updates = 6;
  PendulumOptions hidden;
  hidden.observe_velocity = false;
  using Bank = TraceBank<dynamic, float>;
  const auto make_rollout_of = [&](std::uint64_t seed) {
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < 4; ++i) gens.push_back(make_stream(seed, i));
    return Rollout(std::vector<Pendulum>(4, Pendulum(hidden)), std::vector<Bank>(4, Bank({0.0, 0.8}, 2)),
                   std::move(gens));
  };
  using Agent = Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>>;
  Agent never(4, 1, o, 3);
  CHECK(never.networks().log_std()[0] == -0.5f);
  auto rollout = make_rollout_of(2);
  train(never, rollout, 6 * 64);

  const memtrace::test::TempDir dir("ppo_gaussian_test");
  Agent first(4, 1, o, 3);
  auto first_rollout = make_rollout_of(2);
  train(first, first_rollout, 3 * 64);
  save_ppo_run(dir / "run.ckpt", first, first_rollout);
  Agent resumed(4, 1, o, 99);  // other parameters and generators: the checkpoint replaces them
  auto resumed_rollout = make_rollout_of(77);
  load_ppo_run(dir / "run.ckpt", resumed, resumed_rollout);
  train(resumed, resumed_rollout, 3 * 64);
  CHECK(resumed.updates() == 6);
  const auto a = never.networks().parameters(), b = resumed.networks().parameters();
  for (std::size_t block = 0; block < 3; ++block)
    CHECK(std::equal(a[block].begin(), a[block].end(), b[block].begin(), b[block].end()));
  CHECK(resumed.last_stats().loss == never.last_stats().loss);

  // An agent of another initial log standard deviation refuses the checkpoint, naming the option.
  PpoOptions other = o;
  other.initial_log_std = 0.0;
  Agent wrong(4, 1, other, 3);
  auto wrong_rollout = make_rollout_of(2);
  CHECK_THROWS_WITH(load_ppo_run(dir / "run.ckpt", wrong, wrong_rollout), Catch::Contains("initial_log_std"));
}

TEST_CASE("a double agent acting in float actions keeps exactly the float action it chose", "[ppo][gaussian]") {
  // The sample is rounded to the coarser scalar (float) before it is stored: record accepts it, and
  // the stored log-density is that of the float action.
  PpoOptions o;
  o.n_envs = 2;
  o.n_steps = 6;
  o.minibatches = 2;
  o.total_updates = 1;
  o.hidden_sizes = {4};
  Ppo<Eigen::VectorXd, double, GaussianActorCritic<double>> agent(2, 2, o, 5);
  std::vector<DefaultGenerator> gens{make_stream(3, 0), make_stream(3, 1)};
  Rollout rollout(std::vector<FloatCue>(2), std::vector<TraceD>(2, TraceD(0.5, 2)), std::move(gens));
  auto buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  std::vector<Eigen::Vector2f> sampled;
  rollout.collect(acting, o.n_steps, [&](const RolloutBatch<Eigen::VectorXd, Eigen::Vector2f>& batch) {
    for (std::size_t i = 0; i < 2; ++i)  // the environment got the float action clipped into its box
      CHECK(batch.steps[i].action == batch.policy_actions[i].cwiseMax(-2.0f).cwiseMin(2.0f));
    sampled.insert(sampled.end(), batch.policy_actions.begin(), batch.policy_actions.end());
    acting(batch);
  });
  REQUIRE(sampled.size() == 12);
  for (std::size_t s = 0; s < 12; ++s)
    CHECK(buffer.actions.col(static_cast<Eigen::Index>(s)) == sampled[s].cast<double>());
  acting.bootstrap(rollout.features());
  CHECK(std::isfinite(agent.update(buffer).loss));
}

}  // namespace ppo_gaussian_test
