// The acting loop (loop/rollout.hpp): N = 1 is the hand-written loop, resets happen exactly
// at episode ends, each environment's trajectory depends only on its own generator (not on N nor
// on the order of the environments), memories that remember actions get them, bad input throws.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memtrace/checkpoint.hpp>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/loop/checkpoint.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/memory/with_actions.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <stdexcept>
#include <vector>

namespace rollout_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// Uniformly random actions, one at a time (Policy).
struct UniformPolicy {
  std::size_t num_actions;
  template <class Phi, class G>
  Action act(const Phi&, G& gen) const {
    return static_cast<Action>(uniform_index(gen, num_actions));
  }
};
static_assert(Policy<UniformPolicy, OneHot>);
static_assert(!BatchPolicy<UniformPolicy, OneHot>);

/// The same policy acting for a whole batch (BatchPolicy).
struct UniformBatchPolicy {
  std::size_t num_actions;
  std::size_t calls = 0;
  template <class Phi, class G>
  void act(std::span<const Phi> phis, std::span<G> gens, std::span<Action> actions) {
    ++calls;
    for (std::size_t i = 0; i < phis.size(); ++i) actions[i] = static_cast<Action>(uniform_index(gens[i], num_actions));
  }
};
static_assert(BatchPolicy<UniformBatchPolicy, OneHot>);

/// Always the same action.
struct ConstantPolicy {
  Action u;
  template <class Phi, class G>
  Action act(const Phi&, G&) const {
    return u;
  }
};

/// One environment's trajectory: (window index before the step, action, reward, terminated, truncated).
struct Record {
  std::size_t phi, action;
  double reward;
  bool terminated, truncated;
  std::size_t next_phi;
  bool operator==(const Record&) const = default;
};

using Nav = TMazeNavigation;
constexpr std::size_t k = 3;
constexpr std::size_t limit = 7;  // short episodes, so that both truncations and terminations occur

std::vector<std::vector<Record>> run_rollout(std::span<const std::uint64_t> streams, std::size_t steps) {
  std::vector<Nav> envs;
  std::vector<Window<>> memories;
  std::vector<DefaultGenerator> gens;
  for (const std::uint64_t s : streams) {
    envs.emplace_back(k, limit);
    memories.emplace_back(2, tmaze::num_observations);
    gens.push_back(make_stream(7, s));
  }
  Rollout rollout(std::move(envs), std::move(memories), std::move(gens));
  std::vector<std::vector<Record>> out(streams.size());
  UniformPolicy policy{tmaze::num_navigation_actions};
  rollout.collect(policy, steps, [&](const RolloutBatch<OneHot>& batch) {
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const ActedStep& s = batch.steps[i];
      out[i].push_back(
          {batch.features[i].index, s.action, s.reward, s.terminated, s.truncated, batch.next_features[i].index});
    }
  });
  return out;
}

}  // namespace

TEST_CASE("Rollout with one environment equals the hand-written loop step for step", "[rollout]") {
  const std::size_t steps = 500;
  // The hand-written loop: act on the features, step, absorb, record, reset at an episode end.
  std::vector<Record> by_hand;
  {
    Nav env(k, limit);
    Window<> memory(2, tmaze::num_observations);
    DefaultGenerator gen = make_stream(7, 0);
    UniformPolicy policy{tmaze::num_navigation_actions};
    memory.reset(env.reset(gen));
    for (std::size_t t = 0; t < steps; ++t) {
      const OneHot phi = memory.features();
      const Action u = policy.act(phi, gen);
      const TimeStep<> step = env.step(u, gen);
      memory.update(step.observation);
      by_hand.push_back({phi.index, u, step.reward, step.terminated, step.truncated, memory.features().index});
      if (step.terminated || step.truncated) memory.reset(env.reset(gen));
    }
  }
  const std::uint64_t stream = 0;
  const auto rolled = run_rollout(std::span(&stream, 1), steps);
  REQUIRE(rolled.size() == 1);
  CHECK(rolled[0] == by_hand);
  // The run had both kinds of episode end.
  std::size_t terminated = 0, truncated = 0;
  for (const Record& r : by_hand) {
    terminated += r.terminated;
    truncated += r.truncated;
  }
  CHECK(terminated > 10);
  CHECK(truncated > 10);
}

TEST_CASE("Rollout: each environment's trajectory depends only on its own generator", "[rollout]") {
  const std::size_t steps = 300;
  const std::vector<std::uint64_t> one{0}, three{0, 1, 2}, permuted{2, 0, 1};
  const auto alone = run_rollout(one, steps);
  const auto together = run_rollout(three, steps);
  const auto reordered = run_rollout(permuted, steps);
  CHECK(together[0] == alone[0]);   // N = 1 vs N = 3
  CHECK(reordered[1] == alone[0]);  // stream 0 visited second
  CHECK(reordered[0] == together[2]);
  CHECK(reordered[2] == together[1]);
  CHECK(together[1] != together[0]);  // different streams give different trajectories
}

TEST_CASE("Rollout resets an environment and its memory exactly at its episode ends", "[rollout]") {
  // Always "right": the episode is cut at the limit (truncated) without ever reaching a terminal.
  std::vector<Nav> envs{Nav(k, limit), Nav(k, 5)};
  std::vector<Window<>> memories{Window<>(2, tmaze::num_observations), Window<>(2, tmaze::num_observations)};
  Rollout rollout(std::move(envs), std::move(memories), std::vector{make_stream(1, 0), make_stream(1, 1)});
  CHECK_THROWS_WITH(rollout.features(), "Rollout::features: no episode started yet (call reset or step first)");
  ConstantPolicy right{tmaze::right};
  for (std::size_t t = 0; t < 3 * limit * 5; ++t) {
    rollout.step(right, [&](const RolloutBatch<OneHot>& batch) {
      for (std::size_t i = 0; i < 2; ++i) {
        const std::size_t cut = i == 0 ? limit : 5;
        const ActedStep& s = batch.steps[i];
        CHECK(s.episode_length == t % cut + 1);
        CHECK(s.truncated == (s.episode_length == cut));
        CHECK_FALSE(s.terminated);
        CHECK(s.episode_return == 0.0);
      }
    });
    for (std::size_t i = 0; i < 2; ++i) {
      const std::size_t cut = i == 0 ? limit : 5;
      // After the step that ends an episode the environment is back at the start and the memory
      // holds the start's observation alone (a window of 2 repeats it: index y0 + y0·|Y|).
      if ((t + 1) % cut == 0) {
        CHECK(rollout.env(i).state() / 4 == 0);
        const std::size_t y0 = rollout.env(i).state() % 2;  // position 0 shows the cue: state 2 sign + cue
        CHECK(rollout.features(i).index == y0 + y0 * tmaze::num_observations);
        // The span of all N is the same features, after the reset as well.
        REQUIRE(rollout.features().size() == 2);
        CHECK(rollout.features()[i] == rollout.features(i));
      } else {
        CHECK(rollout.env(i).state() / 4 == std::min((t + 1) % cut, k - 1));
      }
    }
  }
  CHECK(rollout.steps_taken() == 3 * limit * 5);
}

TEST_CASE("Rollout: a BatchPolicy gives the same trajectories as a Policy, one call a step", "[rollout]") {
  const auto make = [] {
    std::vector<Nav> envs(3, Nav(k, limit));
    std::vector<Window<>> memories(3, Window<>(2, tmaze::num_observations));
    return Rollout(std::move(envs), std::move(memories),
                   std::vector{make_stream(3, 0), make_stream(3, 1), make_stream(3, 2)});
  };
  auto a = make();
  auto b = make();
  UniformPolicy single{tmaze::num_navigation_actions};
  UniformBatchPolicy batch{tmaze::num_navigation_actions};
  std::vector<ActedStep> seen_a, seen_b;
  a.collect(single, 200,
            [&](const RolloutBatch<OneHot>& x) { seen_a.insert(seen_a.end(), x.steps.begin(), x.steps.end()); });
  b.collect(batch, 200,
            [&](const RolloutBatch<OneHot>& x) { seen_b.insert(seen_b.end(), x.steps.begin(), x.steps.end()); });
  CHECK(seen_a == seen_b);
  CHECK(batch.calls == 200);
}

namespace {
/// BatchPolicy's uniform actions, keeping what the rollout says of episode starts (EpisodeStartPolicy).
struct StartRecordingPolicy {
  std::size_t num_actions;
  std::vector<std::vector<bool>> starts;  // per call
  template <class Phi, class G>
  void act(std::span<const Phi> phis, std::span<const bool> start, std::span<G> gens, std::span<Action> actions) {
    starts.emplace_back(start.begin(), start.end());
    for (std::size_t i = 0; i < phis.size(); ++i) actions[i] = static_cast<Action>(uniform_index(gens[i], num_actions));
  }
};
static_assert(EpisodeStartPolicy<StartRecordingPolicy, OneHot>);
static_assert(!EpisodeStartPolicy<UniformBatchPolicy, OneHot>);
}  // namespace

TEST_CASE("Rollout tells an EpisodeStartPolicy where episodes start: the first step, after every end and reset",
          "[rollout]") {
  const auto make = [] {
    std::vector<Nav> envs{Nav(k, limit), Nav(k, 5), Nav(k, limit)};
    std::vector<Window<>> memories(3, Window<>(2, tmaze::num_observations));
    return Rollout(std::move(envs), std::move(memories),
                   std::vector{make_stream(4, 0), make_stream(4, 1), make_stream(4, 2)});
  };
  auto a = make();
  auto b = make();
  StartRecordingPolicy told{tmaze::num_navigation_actions, {}};
  UniformBatchPolicy batch{tmaze::num_navigation_actions};
  std::vector<ActedStep> seen_a, seen_b;
  std::vector<std::vector<bool>> expected{{true, true, true}};  // the first step starts every episode
  a.collect(told, 60, [&](const RolloutBatch<OneHot>& x) {
    seen_a.insert(seen_a.end(), x.steps.begin(), x.steps.end());
    std::vector<bool> next;
    for (const ActedStep& s : x.steps) next.push_back(s.terminated || s.truncated);
    expected.push_back(next);
  });
  b.collect(batch, 60,
            [&](const RolloutBatch<OneHot>& x) { seen_b.insert(seen_b.end(), x.steps.begin(), x.steps.end()); });
  CHECK(seen_a == seen_b);  // the same actions and trajectories as the BatchPolicy's
  expected.pop_back();      // the 61st step was not taken
  CHECK(told.starts == expected);
  std::size_t ends = 0;
  for (const ActedStep& s : seen_a) ends += s.terminated || s.truncated;
  CHECK(ends >= 10);  // starts other than the first were seen
  // What the next step will be told, and after reset() every environment starts again.
  std::vector<bool> next(a.episode_starts().begin(), a.episode_starts().end());
  a.step(told);
  CHECK(told.starts.back() == next);
  a.reset();
  CHECK(std::ranges::all_of(a.episode_starts(), [](bool s) { return s; }));
  a.step(told);
  CHECK(told.starts.back() == std::vector<bool>{true, true, true});
  CHECK(std::ranges::none_of(a.episode_starts(), [](bool s) { return s; }));
}

TEST_CASE("Rollout's checkpoint keeps where episodes start", "[rollout][checkpoint]") {
  std::vector<Nav> envs{Nav(k, 4), Nav(k, limit)};
  std::vector<Window<>> memories(2, Window<>(2, tmaze::num_observations));
  Rollout rollout(std::move(envs), std::move(memories), std::vector{make_stream(5, 0), make_stream(5, 1)});
  ConstantPolicy right{tmaze::right};
  for (int t = 0; t < 4; ++t) rollout.step(right);  // environment 0 truncated at its 4th step
  REQUIRE(rollout.episode_starts()[0]);
  REQUIRE_FALSE(rollout.episode_starts()[1]);
  TensorFile file;
  save_state(file, "rollout.", rollout);
  auto restored = rollout;
  restored.reset();  // every entry true
  load_state(file, "rollout.", restored);
  CHECK(restored.episode_starts()[0]);
  CHECK_FALSE(restored.episode_starts()[1]);
  // A file of 0.3 has none: derived from the last step's episode ends.
  std::erase_if(file.tensors, [](const Tensor& t) { return t.name == "rollout.episode_start"; });
  restored.reset();
  load_state(file, "rollout.", restored);
  CHECK(restored.episode_starts()[0]);
  CHECK_FALSE(restored.episode_starts()[1]);
}

TEST_CASE("Rollout feeds (action, observation) to memories that remember actions", "[rollout]") {
  using Joint = WithActions<Window<>>;
  constexpr std::size_t num_y = tmaze::num_observations, num_u = tmaze::num_navigation_actions;
  std::vector<Nav> envs{Nav(k, limit)};
  std::vector<Joint> memories{Joint(Window<>(1, Joint::num_symbols(num_y, num_u)), num_y, num_u)};
  Rollout rollout(std::move(envs), std::move(memories), std::vector{make_stream(5, 0)});
  UniformPolicy policy{num_u};
  Nav mirror(k, limit);  // replays the rollout's draws to know each observation
  DefaultGenerator mirror_gen = make_stream(5, 0);
  const Observation y0 = mirror.reset(mirror_gen);
  rollout.reset();
  CHECK(rollout.features(0).index == y0 + num_y * num_u);  // the first observation: "no action" (u = |U|)
  std::size_t episodes = 0;
  for (std::size_t t = 0; t < 200; ++t) {
    bool ended = false;
    rollout.step(policy, [&](const RolloutBatch<OneHot>& batch) {
      const Action u = batch.steps[0].action;
      CHECK(u == uniform_index(mirror_gen, num_u));  // the policy's draw, from the environment's generator
      const TimeStep<> step = mirror.step(u, mirror_gen);
      CHECK(batch.next_features[0].index == step.observation + num_y * u);  // a window of one joint symbol
      ended = step.terminated || step.truncated;
    });
    if (ended) {
      ++episodes;
      const Observation start = mirror.reset(mirror_gen);
      CHECK(rollout.features(0).index == start + num_y * num_u);
    }
  }
  CHECK(episodes > 10);
}

TEST_CASE("Rollout refuses mismatched sizes and out-of-range actions, and a refused step moves nothing",
          "[rollout][errors]") {
  const auto nav = [] { return std::vector<Nav>{Nav(k, limit), Nav(k, limit)}; };
  const auto windows = [](std::size_t n) { return std::vector<Window<>>(n, Window<>(1, tmaze::num_observations)); };
  const auto gens = [](std::size_t n) { return std::vector<DefaultGenerator>(n, make_stream(0, 0)); };
  CHECK_THROWS_WITH(Rollout(std::vector<Nav>{}, windows(0), gens(0)),
                    "Rollout: envs must hold at least one environment, got none");
  CHECK_THROWS_WITH(Rollout(nav(), windows(1), gens(2)),
                    "Rollout: memories must hold one memory per environment (2), got 1");
  CHECK_THROWS_WITH(Rollout(nav(), windows(2), gens(3)),
                    "Rollout: gens must hold one generator per environment (2), got 3");

  Rollout rollout(nav(), windows(2), gens(2));
  ConstantPolicy right{tmaze::right}, bad{4};
  rollout.step(right);
  const auto before0 = rollout.env(0).state();
  const auto before1 = rollout.env(1).state();
  CHECK_THROWS_WITH(rollout.step(bad),
                    "Rollout::step: the policy chose action 4 for environment 0, which has 4 actions");
  CHECK(rollout.env(0).state() == before0);
  CHECK(rollout.env(1).state() == before1);
  CHECK(rollout.steps_taken() == 1);
}

namespace {

/// TMazeNavigation that throws on its `fail_at`-th step (counted over its life).
struct Faulty : Nav {
  std::size_t fail_at;
  std::size_t taken = 0;
  explicit Faulty(std::size_t fail) : Nav(k, limit), fail_at(fail) {}
  template <class G>
  TimeStep<> step(Action u, G& gen) {
    if (++taken == fail_at) throw std::runtime_error("Faulty: simulated failure");
    return Nav::step(u, gen);
  }
};

/// A batch policy that forgets to write the last entry.
struct ForgetfulPolicy {
  template <class Phi, class G>
  void act(std::span<const Phi> phis, std::span<G>, std::span<Action> actions) {
    for (std::size_t i = 0; i + 1 < phis.size(); ++i) actions[i] = tmaze::right;
  }
};

}  // namespace

TEST_CASE("Rollout: after a throw mid-step every episode restarts, so no batch pairs features with a foreign step",
          "[rollout][errors]") {
  std::vector<Faulty> envs{Faulty(1000), Faulty(4)};
  std::vector<Window<>> memories(2, Window<>(1, tmaze::num_observations));
  Rollout rollout(std::move(envs), std::move(memories), std::vector{make_stream(9, 0), make_stream(9, 1)});
  ConstantPolicy right{tmaze::right};
  for (int t = 0; t < 3; ++t) rollout.step(right);
  CHECK_THROWS_WITH(rollout.step(right), "Faulty: simulated failure");  // environment 0 had stepped already
  std::size_t calls = 0;
  rollout.step(right, [&](const RolloutBatch<OneHot>& batch) {
    ++calls;
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(batch.steps[i].episode_length == 1);                     // both episodes started afresh
      CHECK(batch.features[i].index == rollout.env(i).state() % 2);  // φ_t is the start's cue...
    }
  });
  CHECK(calls == 1);
  CHECK(rollout.env(0).state() / 4 == 1);  // ...and one step right of the start
}

TEST_CASE("Rollout: a refused step leaves generators, features and environments as they were", "[rollout][errors]") {
  std::vector<Nav> envs(2, Nav(k, limit));
  std::vector<Window<>> memories(2, Window<>(2, tmaze::num_observations));
  Rollout rollout(std::move(envs), std::move(memories), std::vector{make_stream(4, 0), make_stream(4, 1)});
  UniformPolicy wide{9};  // draws from the generators, then picks actions the maze does not have
  UniformPolicy fine{tmaze::num_navigation_actions};
  for (int t = 0; t < 5; ++t) rollout.step(fine);
  const DefaultGenerator g0 = rollout.generator(0), g1 = rollout.generator(1);
  const OneHot f0 = rollout.features(0), f1 = rollout.features(1);
  const auto s0 = rollout.env(0).state(), s1 = rollout.env(1).state();
  bool refused = false;
  for (int attempt = 0; attempt < 50 && !refused; ++attempt) {
    try {
      rollout.step(wide);
    } catch (const std::invalid_argument& e) {
      refused = true;
      CHECK_THAT(e.what(), Catch::Contains("Rollout::step: the policy chose action"));
    }
    if (!refused) continue;
    CHECK(rollout.generator(0) == g0);
    CHECK(rollout.generator(1) == g1);
    CHECK(rollout.features(0) == f0);
    CHECK(rollout.features(1) == f1);
    CHECK(rollout.env(0).state() == s0);
    CHECK(rollout.env(1).state() == s1);
  }
  REQUIRE(refused);  // 9 actions drawn for 4: a refusal comes quickly (and the first try changes nothing)
  ForgetfulPolicy forgetful;
  CHECK_THROWS_WITH(rollout.step(forgetful), "Rollout::step: the policy chose no action for environment 1");
  CHECK_THROWS_WITH(rollout.features(2), "Rollout::features: i must be below the number of environments 2, got 2");
}

TEST_CASE("Rollout refuses a memory that remembers another number of actions than its environment has",
          "[rollout][errors]") {
  using Joint = WithActions<Window<>>;
  std::vector<Joint> memories{
      Joint(Window<>(1, Joint::num_symbols(tmaze::num_observations, 3)), tmaze::num_observations, 3)};
  CHECK_THROWS_WITH(Rollout(std::vector<Nav>{Nav(k, limit)}, std::move(memories), std::vector{make_stream(0, 0)}),
                    "Rollout: memories[0] remembers 3 actions but envs[0] has 4");
}

TEST_CASE("Rollout with vector observations feeds (y, e_u) to a float trace bank exactly as by hand", "[rollout]") {
  using Bank = TraceBank<dynamic, float>;
  using Memory = AppendAction<Bank>;
  constexpr std::size_t d = MinigridTMaze::observation_dim, u = minigrid::num_actions;
  const Memory prototype(Bank({0.0, 0.875}, d + u, TraceInit::zero), d, u);
  Rollout rollout(std::vector<MinigridTMaze>(2, MinigridTMaze(3)), std::vector<Memory>(2, prototype),
                  std::vector{make_stream(6, 0), make_stream(6, 1)});
  static_assert(std::is_same_v<decltype(rollout)::features_type, Eigen::VectorXf>);
  // Environment 1 by hand, with its own generator: the same draws, so the same trajectory.
  MinigridTMaze env(3);
  Memory memory = prototype;
  DefaultGenerator gen = make_stream(6, 1);
  memory.reset(env.reset(gen));
  UniformPolicy policy{u};
  std::size_t ends = 0;
  for (int t = 0; t < 300; ++t) {
    rollout.step(policy, [&](const RolloutBatch<Eigen::VectorXf>& batch) {
      CHECK(batch.features[1] == memory.features());
      const Action a = policy.act(memory.features(), gen);
      CHECK(batch.steps[1].action == a);
      const TimeStep<MultiHot<9>> step = env.step(a, gen);
      memory.update(a, step.observation);
      CHECK(batch.next_features[1] == memory.features());  // bit for bit
      if (step.terminated || step.truncated) {
        ++ends;
        memory.reset(env.reset(gen));
      }
    });
  }
  CHECK(ends > 3);
}

namespace {

/// A point in the plane pushed by 2-dimensional actions (continuous, in the box [-1, 1]^2, which
/// the environment clips to): it observes its position as floats, is paid −|p|², and is truncated
/// after 5 steps. Its step draws one uniform_real (the noise of the push), so that the generators
/// matter.
struct Plane {
  using action_type = Eigen::Vector2d;
  Eigen::Vector2d p = Eigen::Vector2d::Zero();
  std::size_t t = 0;
  template <class G>
  Eigen::Vector2f reset(G& gen) {
    p = Eigen::Vector2d(uniform_real(gen), uniform_real(gen));
    t = 0;
    return p.cast<float>();
  }
  template <class G>
  TimeStep<Eigen::Vector2f> step(const action_type& u, G& gen) {
    p += u.cwiseMax(-1.0).cwiseMin(1.0) * (1.0 + 0.1 * uniform_real(gen));
    ++t;
    return {p.cast<float>(), -p.squaredNorm(), false, t == 5};
  }
  [[nodiscard]] action_type action_low() const { return action_type::Constant(-1.0); }
  [[nodiscard]] action_type action_high() const { return action_type::Constant(1.0); }
};
static_assert(Pomdp<Plane>);
static_assert(ContinuousActions<Plane>);
static_assert(!FiniteActions<Plane>);
static_assert(std::same_as<action_t<Plane>, Eigen::Vector2d>);
static_assert(std::same_as<action_t<MinigridTMaze>, Action>);
static_assert(FiniteActions<MinigridTMaze>);

/// A Gaussian push toward the origin from the features (a trace of the position), one at a time.
struct PushBack {
  double scale = 1.0;
  template <class G>
  Eigen::Vector2d act(const Eigen::VectorXf& phi, G& gen) const {
    return Eigen::Vector2d(-scale * phi[0] + 0.3 * standard_normal(gen), -scale * phi[1] + 0.3 * standard_normal(gen));
  }
};
static_assert(Policy<PushBack, Eigen::VectorXf, DefaultGenerator, Eigen::Vector2d>);
static_assert(!Policy<PushBack, Eigen::VectorXf>);                                 // no index action
static_assert(!Policy<UniformPolicy, OneHot, DefaultGenerator, Eigen::Vector2d>);  // no vector action

/// The same for a batch; writes action `bad` (if set) for environment 1.
struct PushBackBatch {
  double bad_value = 0.0;
  bool write_bad = false, skip_last = false;
  template <class G>
  void act(std::span<const Eigen::VectorXf> phis, std::span<G> gens, std::span<Eigen::Vector2d> actions) const {
    for (std::size_t i = 0; i < phis.size(); ++i)
      if (!(skip_last && i + 1 == phis.size())) actions[i] = PushBack{}.act(phis[i], gens[i]);
    if (write_bad) actions[1][1] = bad_value;
  }
};
static_assert(BatchPolicy<PushBackBatch, Eigen::VectorXf, DefaultGenerator, Eigen::Vector2d>);
static_assert(!BatchPolicy<PushBackBatch, Eigen::VectorXf>);

using PlaneTrace = MemoryTrace<dynamic_lambda, dynamic, float>;

/// A policy whose actions have a run-time size of 3, for 2-dimensional actions.
struct WrongSize {
  template <class G>
  Eigen::VectorXd act(const Eigen::VectorXf&, G&) const {
    return Eigen::VectorXd::Zero(3);
  }
};
static_assert(Policy<WrongSize, Eigen::VectorXf, DefaultGenerator, Eigen::Vector2d>);  // the size is known at run time

/// The plane without a box: Rollout cannot check the dimension, only finiteness.
struct Unboxed {
  using action_type = Eigen::Vector2d;
  Plane plane;
  template <class G>
  Eigen::Vector2f reset(G& gen) {
    return plane.reset(gen);
  }
  template <class G>
  TimeStep<Eigen::Vector2f> step(const action_type& u, G& gen) {
    return plane.step(u, gen);
  }
};
static_assert(Pomdp<Unboxed> && !ContinuousActions<Unboxed>);

/// A plane that does not clip: it pays −|u|² for the action it gets, whatever its size (as MuJoCo's
/// control costs do), and remembers the largest entry it got.
struct Loose {
  using action_type = Eigen::Vector2d;
  double largest = 0.0;
  template <class G>
  Eigen::Vector2f reset(G&) {
    return Eigen::Vector2f::Zero();
  }
  template <class G>
  TimeStep<Eigen::Vector2f> step(const action_type& u, G&) {
    largest = std::max(largest, u.cwiseAbs().maxCoeff());
    return {u.cast<float>(), -u.squaredNorm(), false, false};
  }
  [[nodiscard]] action_type action_low() const { return action_type(-1.0, -0.5); }
  [[nodiscard]] action_type action_high() const { return action_type(1.0, 0.5); }
};

/// A box whose low end lies above its high end.
struct Inverted : Loose {
  [[nodiscard]] action_type action_low() const { return action_type(0.0, 1.0); }
  [[nodiscard]] action_type action_high() const { return action_type(1.0, 0.0); }
};

/// Torques of ±3 from the sign of sin θ's trace: beyond the box, so the pendulum clips them.
struct Swing {
  template <class G>
  Pendulum::action_type act(const Eigen::VectorXf& phi, G& gen) const {
    return Pendulum::action_type::Constant((phi[1] > 0 ? 3.0 : -3.0) + 0.5 * standard_normal(gen));
  }
};

}  // namespace

TEST_CASE("Rollout with 2-dimensional continuous actions equals the hand-written loop", "[rollout][continuous]") {
  const PlaneTrace prototype(0.5, 2);
  for (const bool batch_policy : {false, true}) {
    Rollout rollout(std::vector<Plane>(3), std::vector<PlaneTrace>(3, prototype),
                    std::vector{make_stream(4, 0), make_stream(4, 1), make_stream(4, 2)});
    static_assert(std::same_as<decltype(rollout)::action_type, Eigen::Vector2d>);
    Plane env;
    PlaneTrace memory = prototype;
    DefaultGenerator gen = make_stream(4, 2);
    memory.reset(env.reset(gen));
    std::size_t ends = 0;
    for (int t = 0; t < 40; ++t) {
      const auto check = [&](const RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>& batch) {
        REQUIRE(batch.steps.size() == 3);
        CHECK(batch.features[2] == memory.features());
        const Eigen::Vector2d u = PushBack{}.act(memory.features(), gen);
        CHECK(batch.policy_actions[2] == u);                             // bit for bit
        CHECK(batch.steps[2].action == u.cwiseMax(-1.0).cwiseMin(1.0));  // what the plane got
        const auto step = env.step(u, gen);
        memory.update(step.observation);
        CHECK(batch.steps[2].reward == step.reward);
        CHECK(batch.steps[2].truncated == step.truncated);
        CHECK(batch.next_features[2] == memory.features());
        if (step.truncated) {
          ++ends;
          memory.reset(env.reset(gen));
        }
      };
      if (batch_policy) {
        PushBackBatch policy;
        rollout.step(policy, check);
      } else {
        PushBack policy;
        rollout.step(policy, check);
      }
    }
    CHECK(ends == 8);
  }
}

TEST_CASE("Rollout refuses a continuous action that is missing or not finite, and the refused step moves nothing",
          "[rollout][continuous][errors]") {
  const PlaneTrace prototype(0.5, 2);
  Rollout rollout(std::vector<Plane>(2), std::vector<PlaneTrace>(2, prototype),
                  std::vector{make_stream(5, 0), make_stream(5, 1)});
  PushBackBatch good;
  rollout.step(good);
  const Eigen::Vector2d p0 = rollout.env(0).p, p1 = rollout.env(1).p;
  const DefaultGenerator g0 = rollout.generator(0);
  PushBackBatch forgetful{.skip_last = true};
  CHECK_THROWS_WITH(rollout.step(forgetful),
                    "Rollout::step: the policy chose action entry 0 = nan for environment 1 (or wrote none)");
  PushBackBatch infinite{.bad_value = std::numeric_limits<double>::infinity(), .write_bad = true};
  CHECK_THROWS_WITH(rollout.step(infinite), "Rollout::step: the policy chose action entry 1 = inf for environment 1");
  PushBackBatch nan{.bad_value = std::nan(""), .write_bad = true};
  CHECK_THROWS_AS(rollout.step(nan), std::invalid_argument);
  // A one-at-a-time policy whose action has another size is refused before the action is stored.
  WrongSize wrong;
  CHECK_THROWS_WITH(rollout.step(wrong),
                    "Rollout::step: the policy chose an action of dimension 3 for environment 0, whose actions have "
                    "dimension 2");
  CHECK(rollout.env(0).p == p0);
  CHECK(rollout.env(1).p == p1);
  CHECK(rollout.generator(0) == g0);
  CHECK(rollout.steps_taken() == 1);

  // Without a box the actions are still marked and checked: NaN where a BatchPolicy wrote nothing.
  Rollout unboxed(std::vector<Unboxed>(2), std::vector<PlaneTrace>(2, prototype),
                  std::vector{make_stream(5, 0), make_stream(5, 1)});
  CHECK_THROWS_WITH(unboxed.step(forgetful),
                    "Rollout::step: the policy chose action entry 0 = nan for environment 1 (or wrote none)");
  unboxed.step(good);
  CHECK(unboxed.steps_taken() == 1);
}

TEST_CASE(
    "Rollout clips continuous actions into the box of an environment that does not clip them, and with "
    "ActionClipping::off hands them over unchanged",
    "[rollout][continuous]") {
  const PlaneTrace prototype(0.5, 2);
  PushBack wild{.scale = -30.0};  // pushes away from the origin: actions far beyond the box
  for (const ActionClipping clipping : {ActionClipping::to_box, ActionClipping::off}) {
    Rollout rollout(std::vector<Loose>(2), std::vector<PlaneTrace>(2, prototype),
                    std::vector{make_stream(6, 0), make_stream(6, 1)}, clipping);
    std::size_t clipped = 0;
    for (int t = 0; t < 20; ++t)
      rollout.step(wild, [&](const RolloutBatch<Eigen::VectorXf, Eigen::Vector2d>& batch) {
        for (std::size_t i = 0; i < 2; ++i) {
          const Eigen::Vector2d chosen = batch.policy_actions[i], got = batch.steps[i].action;
          const Eigen::Vector2d boxed =
              chosen.cwiseMax(Eigen::Vector2d(-1.0, -0.5)).cwiseMin(Eigen::Vector2d(1.0, 0.5));
          CHECK(got == (clipping == ActionClipping::to_box ? boxed : chosen));
          CHECK(batch.steps[i].reward == -got.squaredNorm());  // the environment got `got`
          const Eigen::Vector2f trace = 0.5f * batch.features[i] + 0.5f * got.cast<float>();  // y = u
          CHECK((batch.next_features[i] - trace).cwiseAbs().maxCoeff() < 1e-5f);              // and so did the memory
          clipped += got != chosen ? 1 : 0;
        }
      });
    if (clipping == ActionClipping::to_box) {
      CHECK(clipped > 0);
      CHECK(rollout.env(0).largest <= 1.0);
      CHECK(rollout.env(1).largest <= 1.0);
    } else {
      CHECK(clipped == 0);
      CHECK(rollout.env(0).largest > 1.0);
    }
  }
  // The setting is part of the rollout's state: a rollout of the other setting refuses the file.
  const auto pendulums = [](ActionClipping c) {
    return Rollout(std::vector<Pendulum>(2), std::vector<PlaneTrace>(2, PlaneTrace(0.5, 3)),
                   std::vector{make_stream(6, 0), make_stream(6, 1)}, c);
  };
  auto clipped = pendulums(ActionClipping::to_box);
  Swing swing;
  clipped.step(swing);
  TensorFile file;
  save_state(file, "rollout.", clipped);
  auto unclipped = pendulums(ActionClipping::off);
  CHECK_THROWS_WITH(load_state(file, "rollout.", unclipped), Catch::Contains("action_clipping"));
  CHECK(unclipped.steps_taken() == 0);
  auto again = pendulums(ActionClipping::to_box);
  load_state(file, "rollout.", again);
  CHECK(again.steps_taken() == 1);
  CHECK_THROWS_WITH(Rollout(std::vector<Inverted>(2), std::vector<PlaneTrace>(2, prototype),
                            std::vector{make_stream(6, 0), make_stream(6, 1)}),
                    "Rollout: envs[0] has the box [1, 0] in entry 1: action_low() must be <= action_high()");
  CHECK_THROWS_WITH(Rollout(std::vector<Loose>(1), std::vector<PlaneTrace>(1, prototype),
                            std::vector{make_stream(6, 0)}, ActionClipping{2}),
                    "Rollout: clipping must be to_box or off, got 2");
}

TEST_CASE("Rollout over the pendulum with a trace: actions clipped by the environment, state checkpointed",
          "[rollout][continuous][checkpoint]") {
  using Trace = MemoryTrace<dynamic_lambda, dynamic, float>;
  PendulumOptions hidden;
  hidden.observe_velocity = false;
  const auto make = [&] {
    return Rollout(std::vector<Pendulum>(2, Pendulum(hidden)), std::vector<Trace>(2, Trace(0.8, 2)),
                   std::vector{make_stream(9, 0), make_stream(9, 1)});
  };
  auto a = make();
  Swing swing;
  double sum = 0;
  for (int t = 0; t < 150; ++t) a.step(swing, [&](const auto& batch) { sum += batch.steps[0].reward; });
  CHECK(sum < 0);
  TensorFile file;
  save_state(file, "rollout.", a);
  auto b = make();
  b.step(swing);
  load_state(file, "rollout.", b);
  for (int t = 0; t < 300; ++t) {  // across the truncation at step 200
    std::vector<BasicActedStep<Pendulum::action_type>> steps_a, steps_b;
    a.step(swing, [&](const auto& batch) { steps_a.assign(batch.steps.begin(), batch.steps.end()); });
    b.step(swing, [&](const auto& batch) { steps_b.assign(batch.steps.begin(), batch.steps.end()); });
    REQUIRE(steps_a == steps_b);
    REQUIRE(b.features(1) == a.features(1));
  }
  CHECK(a.env(0).angle() == b.env(0).angle());
}

}  // namespace rollout_test
