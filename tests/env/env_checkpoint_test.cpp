// Tests of env/checkpoint.hpp: for every environment, a state saved after a random number of loop
// iterations (across episode ends) and loaded into an environment of the same parameters driven
// elsewhere continues exactly as the saved one (every TimeStep and state equal, for thousands of
// steps with resets); a state of other parameters, a missing tensor, a tensor of another dtype or
// shape and values out of range are refused with "load_state: " and the tensor's name, leaving the
// environment as it was; and which types are Checkpointable (ADL functions of a user's own type).
#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <memtrace/checkpoint.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/finite_pomdp.hpp>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/env/pomdp_file.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/features.hpp>
#include <memtrace/matrix.hpp>
#include <memtrace/random.hpp>
#include <memtrace/safetensors.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_support.hpp"

namespace env_checkpoint_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// A user's types: one without functions of its own, one with save_state and load_state found by
// argument-dependent lookup.
namespace user {
struct Plain {
  int x = 0;
};
struct Counter {
  std::uint64_t count = 0;
};
void save_state(TensorFile& file, const std::string& prefix, const Counter& c) {
  file.tensors.push_back({prefix + "count", TensorDtype::u64, {}, {}, {c.count}});
}
void load_state(const TensorFile& file, const std::string& prefix, Counter& c) {
  c.count = detail::expected_tensor("load_state", file, prefix + "count", TensorDtype::u64, {}).integers[0];
}
}  // namespace user

static_assert(!Checkpointable<int>);
static_assert(!Checkpointable<user::Plain>);
static_assert(Checkpointable<user::Counter>);
static_assert(Checkpointable<Xoshiro256StarStar>);
static_assert(Checkpointable<FiniteHmm>);
static_assert(Checkpointable<FinitePomdp>);
static_assert(Checkpointable<NoisyRandomWalk>);
static_assert(Checkpointable<TMaze>);
static_assert(Checkpointable<TMazeAlwaysUp>);
static_assert(Checkpointable<TMazeNavigation>);
static_assert(Checkpointable<TwoStateHmm>);
static_assert(Checkpointable<MinigridTMaze>);
static_assert(!Checkpointable<PomdpFile>);  // a parsed model, never stepped: nothing to save

namespace {

using Gen = Xoshiro256StarStar;
const std::string prefix = "rollout.env.3.";

/// What a loop sees of one iteration: a reset's y_0 or a step's TimeStep, and the environment's
/// state afterwards (state(), or what MinigridTMaze exposes of it).
struct Event {
  bool reset = false;
  std::vector<std::size_t> observation;
  double reward = 0.0;
  bool terminated = false, truncated = false;
  std::vector<std::uint64_t> state;
  friend bool operator==(const Event&, const Event&) = default;
};

std::ostream& operator<<(std::ostream& out, const Event& e) {
  out << (e.reset ? "reset" : "step") << " y = {";
  for (const std::size_t i : e.observation) out << ' ' << i;
  out << " } r = " << e.reward << " terminated = " << e.terminated << " truncated = " << e.truncated << " state = {";
  for (const std::uint64_t s : e.state) out << ' ' << s;
  return out << " }";
}

std::vector<std::size_t> indices(Observation y) { return {y}; }
std::vector<std::size_t> indices(const MultiHot<9>& y) { return {y.begin(), y.end()}; }

template <class Env>
std::vector<std::uint64_t> visible_state(const Env& env) {
  if constexpr (ExposedState<Env, Gen>) {
    return {env.state()};
  } else if constexpr (std::same_as<Env, Pendulum>) {
    return {std::bit_cast<std::uint64_t>(env.angle()), std::bit_cast<std::uint64_t>(env.angular_velocity()),
            env.steps(), env.running()};
  } else {  // MinigridTMaze
    std::vector<std::uint64_t> s = {env.row(),   env.col(), env.direction(), env.steps(),
                                    env.ended(), env.cue(), env.sides()};
    for (const std::size_t i : env.observation()) s.push_back(i);
    return s;
  }
}

/// A loop over episodes: reset when none runs (at first, and after a step that terminated or was
/// truncated), else step with a random action (for a Pomdp) drawn from `policy`.
template <class Env>
struct Loop {
  bool reset_due = true;

  Event next(Env& env, Gen& gen, Gen& policy) {
    Event e;
    if (reset_due) {
      e.reset = true;
      e.observation = indices(env.reset(gen));
      reset_due = false;
    } else {
      const auto step = [&] {
        if constexpr (Pomdp<Env, Gen>)
          return env.step(static_cast<Action>(uniform_index(policy, env.num_actions())), gen);
        else
          return env.step(gen);
      }();
      e.observation = indices(step.observation);
      e.reward = step.reward;
      e.terminated = step.terminated;
      e.truncated = step.truncated;
      reset_due = step.terminated || step.truncated;
    }
    e.state = visible_state(env);
    return e;
  }
};

template <class Env>
TensorFile saved(const Env& env) {
  TensorFile file;
  save_state(file, prefix, env);
  return file;
}

/// The property: env A runs a random number of loop iterations and is saved; env B (same
/// parameters) is driven to another state and loads A's; then both run on copies of A's generators
/// and loop: every event is equal. Returns the resets seen after the load (episode ends crossed).
template <class Env, class Make>
std::size_t check_continues_exactly(const Make& make, std::uint64_t seed) {
  Gen setup(seed);
  Env a = make();
  Loop<Env> loop_a;
  Gen gen_a(1000 + seed), policy_a(2000 + seed);
  const std::uint64_t before = uniform_index(setup, 400);  // 0: a fresh environment
  for (std::uint64_t t = 0; t < before; ++t) loop_a.next(a, gen_a, policy_a);
  const TensorFile file = saved(a);

  Env b = make();
  Loop<Env> loop_b;
  Gen gen_b(3000 + seed), policy_b(4000 + seed);
  const std::uint64_t elsewhere = 1 + uniform_index(setup, 400);
  for (std::uint64_t t = 0; t < elsewhere || (saved(b) == file && t < 10'000); ++t) loop_b.next(b, gen_b, policy_b);
  REQUIRE_FALSE(saved(b) == file);
  load_state(file, prefix, b);
  REQUIRE(saved(b) == file);  // saving the restored environment gives the same tensors
  REQUIRE(visible_state(b) == visible_state(a));

  // What the loop and the generators hold travels with their own checkpoints.
  loop_b = loop_a;
  gen_b = gen_a;
  policy_b = policy_a;
  std::size_t resets = 0;
  for (int t = 0; t < 3000; ++t) {
    const Event ea = loop_a.next(a, gen_a, policy_a);
    const Event eb = loop_b.next(b, gen_b, policy_b);
    INFO("seed " << seed << ", " << before << " iterations before the save, " << t << " after");
    REQUIRE(ea == eb);
    resets += ea.reset ? 1 : 0;
  }
  return resets;
}

template <class Env, class Make>
void check_continues_exactly_for_seeds(const Make& make, bool episodic) {
  std::size_t resets = 0;
  for (std::uint64_t seed = 0; seed < 12; ++seed) resets += check_continues_exactly<Env>(make, seed);
  if (episodic) CHECK(resets > 12);  // the continuations crossed episode ends
}

/// `file` refused by `env` with a message starting "load_state: " that names the prefix and
/// contains `what`; env's state unchanged.
template <class Env>
void check_refused(const TensorFile& file, Env& env, const std::string& what) {
  const TensorFile before = saved(env);
  const std::vector<std::uint64_t> visible = visible_state(env);
  try {
    load_state(file, prefix, env);
    FAIL("load_state accepted a state it should refuse (" << what << ")");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(std::string(e.what()), StartsWith("load_state: ") && Contains(prefix) && Contains(what));
  }
  CHECK(saved(env) == before);
  CHECK(visible_state(env) == visible);
}

/// Every tensor of a saved state is needed: without it, or with another dtype or shape, the file
/// is refused, naming it.
template <class Env>
void check_every_tensor_required(const TensorFile& file, Env& env) {
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const Tensor& t = file.tensors[i];
    INFO("tensor " << t.name);
    TensorFile missing = file;
    missing.tensors.erase(missing.tensors.begin() + static_cast<std::ptrdiff_t>(i));
    check_refused(missing, env, "has no tensor \"" + t.name + "\"");

    TensorFile other_dtype = file;
    Tensor& d = other_dtype.tensors[i];
    if (d.dtype == TensorDtype::u64) {
      d.values.assign(d.integers.begin(), d.integers.end());
      d.integers.clear();
      d.dtype = TensorDtype::f64;
    } else {
      d.integers.assign(d.values.size(), 0);
      d.values.clear();
      d.dtype = TensorDtype::u64;
    }
    check_refused(other_dtype, env, t.name);

    TensorFile other_shape = file;
    other_shape.tensors[i].shape.push_back(1);
    check_refused(other_shape, env, t.name);
  }
}

/// `file` with the U64 tensor `member` set to `values`.
TensorFile with_integers(TensorFile file, const std::string& member, const std::vector<std::uint64_t>& values) {
  for (Tensor& t : file.tensors)
    if (t.name == prefix + member) t.integers = values;
  return file;
}

/// Steps `env` through a loop with fixed generators, for an environment in mid-episode.
template <class Env>
void advance(Env& env, std::size_t iterations, std::uint64_t seed = 7) {
  Loop<Env> loop;
  Gen gen(seed), policy(seed + 1);
  for (std::size_t t = 0; t < iterations; ++t) loop.next(env, gen, policy);
}

FiniteHmm random_hmm(std::uint64_t seed) {
  const Eigen::MatrixXd p = test::random_stochastic(5, 5, seed);
  const Eigen::MatrixXd o = test::random_stochastic(5, 3, seed + 1);
  const Eigen::MatrixXd r = test::random_stochastic(5, 5, seed + 2) * 4.0 - Eigen::MatrixXd::Ones(5, 5);
  const Eigen::VectorXd initial = test::random_stochastic(1, 5, seed + 3).transpose();
  return FiniteHmm(p, o, initial, r);
}

std::vector<SparseMatrix> sparse_matrices(std::size_t count, Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                                          double scale = 1.0) {
  std::vector<SparseMatrix> out;
  for (std::size_t i = 0; i < count; ++i)
    out.emplace_back((test::random_stochastic(rows, cols, seed + i) * scale).sparseView(1.0, 0.0));
  return out;
}

/// The paper's form: |U| actions on 4 states, 3 observations, one emission for every action.
FinitePomdp random_pomdp(std::size_t actions, std::uint64_t seed) {
  return FinitePomdp(sparse_matrices(actions, 4, 4, seed), test::random_stochastic(4, 3, seed + 10),
                     test::random_stochastic(1, 4, seed + 11).transpose(),
                     sparse_matrices(actions, 4, 4, seed + 20, 3.0));
}

/// The general form: emissions per action, rewards R(x, u, x', y), an initial emission, and a
/// terminal state (3), so that episodes end.
FinitePomdp general_pomdp(std::uint64_t seed) {
  std::vector<SparseMatrix> transitions = sparse_matrices(2, 4, 4, seed);
  for (SparseMatrix& t : transitions) {
    Eigen::MatrixXd dense(t);
    dense.row(3) = Eigen::RowVector4d(0, 0, 0, 1);
    t = dense.sparseView(1.0, 0.0);
  }
  return FinitePomdp({.transitions = transitions,
                      .emissions = {test::random_stochastic(4, 3, seed + 10), test::random_stochastic(4, 3, seed + 11)},
                      .initial = Eigen::Vector4d(0.5, 0.3, 0.2, 0.0),
                      .rewards = sparse_matrices(2, 4, 12, seed + 20, 5.0),
                      .initial_emission = test::random_stochastic(4, 3, seed + 12),
                      .terminal = {false, false, false, true}});
}

NoisyRandomWalkParameters small_walk() {
  NoisyRandomWalkParameters p;
  p.num_states = 21;
  p.max_step = 3;
  p.num_observations = 4;
  p.noise = 0.3;
  return p;
}

}  // namespace

TEST_CASE("a user's type with save_state and load_state of its own is checkpointable", "[env][checkpoint]") {
  TensorFile file;
  save_state(file, "c.", user::Counter{42});
  user::Counter c;
  load_state(file, "c.", c);
  CHECK(c.count == 42);
}

TEST_CASE("a restored FiniteHmm continues exactly as the saved one", "[env][checkpoint]") {
  check_continues_exactly_for_seeds<FiniteHmm>([] { return test::episodic_chain(); }, true);
  check_continues_exactly_for_seeds<FiniteHmm>([] { return random_hmm(1); }, false);

  FiniteHmm b = random_hmm(1);
  advance(b, 50);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(random_hmm(2)), b, "fingerprint: the state was saved from a FiniteHmm of the same sizes");
  check_refused(saved(test::episodic_chain()), b, "sizes: the state was saved from a FiniteHmm with num_states = 4");
  check_refused(with_integers(file, "state", {5}), b, "state: 5 is out of range [0, 5)");
}

TEST_CASE("a restored FinitePomdp continues exactly as the saved one", "[env][checkpoint]") {
  check_continues_exactly_for_seeds<FinitePomdp>([] { return random_pomdp(2, 1); }, false);
  check_continues_exactly_for_seeds<FinitePomdp>([] { return general_pomdp(1); }, true);

  FinitePomdp b = general_pomdp(1);
  advance(b, 30);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(general_pomdp(2)), b, "fingerprint");
  check_refused(saved(random_pomdp(3, 1)), b,
                "sizes: the state was saved from a FinitePomdp with num_states = 4, "
                "num_actions = 3");
  check_refused(with_integers(file, "state", {4}), b, "state: 4 is out of range [0, 4)");
}

TEST_CASE("a restored NoisyRandomWalk continues exactly as the saved one", "[env][checkpoint]") {
  check_continues_exactly_for_seeds<NoisyRandomWalk>([] { return NoisyRandomWalk(small_walk()); }, false);
  // More than 2^21 observations: the walk draws three numbers a step instead of one word.
  NoisyRandomWalkParameters wide = small_walk();
  wide.num_observations = (std::size_t{1} << 21) + 1;
  check_continues_exactly_for_seeds<NoisyRandomWalk>([&] { return NoisyRandomWalk(wide); }, false);

  NoisyRandomWalk b(small_walk());
  advance(b, 30);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  NoisyRandomWalkParameters noisier = small_walk();
  noisier.noise = 0.31;
  check_refused(saved(NoisyRandomWalk(noisier)), b,
                "parameters: the state was saved from a NoisyRandomWalk with noise = 0.31");
  NoisyRandomWalkParameters no_stay = small_walk();
  no_stay.allow_stay = false;
  check_refused(saved(NoisyRandomWalk(no_stay)), b, "allow_stay = 0");
  check_refused(with_integers(file, "state", {21}), b, "state: 21 is out of range [0, 21)");
}

TEST_CASE("a restored TMaze and TMazeAlwaysUp continue exactly as the saved ones", "[env][checkpoint]") {
  for (const std::size_t k : {2u, 5u}) {
    check_continues_exactly_for_seeds<TMaze>([k] { return TMaze(k); }, true);
    check_continues_exactly_for_seeds<TMazeAlwaysUp>([k] { return TMazeAlwaysUp(k); }, true);
  }

  TMaze b(5);
  advance(b, 4);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(TMaze(6)), b,
                "sizes: the state was saved from a TMaze with corridor_length = 6; this one has "
                "corridor_length = 5");
  check_refused(with_integers(file, "position", {6}), b, "position: 6 is out of range [0, 6)");
  check_refused(with_integers(file, "cue", {2}), b, "cue: 2 is out of range [0, 2)");
  check_refused(with_integers(file, "sign", {7}), b, "sign: 7 is out of range [0, 2)");
  check_refused(saved(TMazeNavigation(5)), b, "sizes");  // another environment's state

  TMazeAlwaysUp up(5);
  advance(up, 3);
  check_every_tensor_required(saved(up), up);
  check_refused(saved(TMazeAlwaysUp(3)), up, "corridor_length = 3");

  // Two environments in one file, under their own prefixes.
  TensorFile both;
  save_state(both, "rollout.env.0.", TMaze(5));
  save_state(both, "rollout.env.1.", b);
  TMaze c(5);
  load_state(both, "rollout.env.1.", c);
  CHECK(c.state() == b.state());
  load_state(both, "rollout.env.0.", c);
  CHECK(c.state() == TMaze(5).state());
}

TEST_CASE("a restored TMazeNavigation continues exactly as the saved one", "[env][checkpoint]") {
  check_continues_exactly_for_seeds<TMazeNavigation>([] { return TMazeNavigation(3); }, true);
  check_continues_exactly_for_seeds<TMazeNavigation>([] { return TMazeNavigation(4, 12, 0.0); }, true);
  check_continues_exactly_for_seeds<TMazeNavigation>([] { return TMazeNavigation(3, 0); }, true);  // no limit

  TMazeNavigation b(4, 12);
  advance(b, 2);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(TMazeNavigation(4)), b, "max_episode_steps = 180");
  check_refused(saved(TMazeNavigation(4, 12, 0.0)), b,
                "parameters: the state was saved from a TMazeNavigation with wrong_reward = 0");
  check_refused(with_integers(file, "steps", {13}), b, "steps: 13 is out of range [0, 13)");
  check_refused(with_integers(file, "position", {5}), b, "position: 5 is out of range [0, 5)");
  check_refused(with_integers(file, "done", {2}), b, "done: 2 is out of range [0, 2) (a flag: 0 or 1)");
  // An episode ends exactly at position k or after the limit.
  check_refused(with_integers(file, "done", {1}), b, "done: 1 contradicts position");
  check_refused(with_integers(file, "position", {4}), b, "done: 0 contradicts position 4");
  check_refused(with_integers(file, "steps", {12}), b, "and steps 12");
}

TEST_CASE("a restored MinigridTMaze continues exactly as the saved one", "[env][checkpoint]") {
  for (const std::size_t k : {2u, 3u, 10u})  // 10: the compressed grid
    check_continues_exactly_for_seeds<MinigridTMaze>([k] { return MinigridTMaze(k); }, true);

  MinigridTMaze b(3);
  Gen g(7);
  b.reset(g);
  b.step(minigrid::forward);
  b.step(minigrid::forward);  // at the junction (2, 3) after 2 steps
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(MinigridTMaze(4)), b, "corridor_length = 4");
  check_refused(with_integers(file, "cue", {0}), b, "cue: must be green (1) or blue (2), got 0");
  check_refused(with_integers(file, "sides", {2}), b, "sides: 2 is out of range [0, 2)");
  check_refused(with_integers(file, "direction", {4}), b, "direction: 4 is out of range [0, 4)");
  check_refused(with_integers(file, "row", {5}), b, "row: 5 is out of range [0, 5)");
  check_refused(with_integers(file, "col", {5}), b, "col: 5 is out of range [0, 5)");
  check_refused(with_integers(file, "steps", {126}), b, "steps: 126 is out of range [0, 126)");
  check_refused(with_integers(with_integers(file, "row", {1}), "col", {1}), b, "(1, 1) is a wall");
  // An episode ends exactly on a goal or at the limit; steps 0 only at the start.
  check_refused(with_integers(with_integers(file, "row", {1}), "col", {3}), b,
                "done: 0 contradicts the agent at (1, 3)");
  check_refused(with_integers(file, "steps", {125}), b, "done: 0 contradicts");
  check_refused(with_integers(file, "done", {1}), b, "done: 1 contradicts");
  check_refused(with_integers(file, "steps", {0}), b, "steps: 0 with the agent at");

  // Before the first reset no episode runs: that state too is restored.
  MinigridTMaze fresh(3);
  load_state(saved(MinigridTMaze(3)), prefix, b);
  CHECK(b.ended());
  CHECK(visible_state(b) == visible_state(fresh));
  CHECK_THROWS_AS(b.step(minigrid::forward), std::logic_error);
}

TEST_CASE("a restored TwoStateHmm continues exactly as the saved one", "[env][checkpoint]") {
  check_continues_exactly_for_seeds<TwoStateHmm>([] { return TwoStateHmm(0.1, 0.2); }, false);
  check_continues_exactly_for_seeds<TwoStateHmm>([] { return TwoStateHmm(0.3, 0.4, {-1.0, 2.5}); }, false);

  TwoStateHmm b(0.1, 0.2);
  advance(b, 5);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(TwoStateHmm(0.1, 0.25)), b, "with p = 0.1, q = 0.25, observation_rewards[0] = 0");
  check_refused(saved(TwoStateHmm(0.1, 0.2, {0.0, 2.0})), b, "observation_rewards[1] = 2; this one has");
  check_refused(with_integers(file, "state", {2}), b, "state: 2 is out of range [0, 2)");
}

TEST_CASE("a restored Pendulum continues exactly as the saved one", "[env][checkpoint]") {
  for (const bool observe_velocity : {true, false}) {
    PendulumOptions options;
    options.observe_velocity = observe_velocity;
    options.max_episode_steps = 30;  // the continuation crosses episode ends
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      Pendulum a(options), b(options);
      Gen gen_a(seed), torques_a(seed + 100), gen_b(seed + 50);
      a.reset(gen_a);
      b.reset(gen_b);  // elsewhere: loading must overwrite it
      const std::size_t before = static_cast<std::size_t>(uniform_index(torques_a, 70));
      const auto torque = [](Gen& g) { return Pendulum::action_type::Constant(8.0 * uniform_real(g) - 4.0); };
      for (std::size_t t = 0; t < before; ++t)
        if (a.step(torque(torques_a), gen_a).truncated) a.reset(gen_a);
      load_state(saved(a), prefix, b);
      CHECK(b.angle() == a.angle());
      CHECK(b.angular_velocity() == a.angular_velocity());
      CHECK(b.steps() == a.steps());
      CHECK(b.running() == a.running());
      Gen torques_b = torques_a;
      gen_b = gen_a;
      for (int t = 0; t < 100; ++t) {
        INFO("seed " << seed << ", " << before << " steps before the save, " << t << " after");
        const auto sa = a.step(torque(torques_a), gen_a);
        const auto sb = b.step(torque(torques_b), gen_b);
        REQUIRE(sa == sb);
        if (sa.truncated) REQUIRE(a.reset(gen_a) == b.reset(gen_b));
      }
    }
  }

  Pendulum b;
  Gen g(3);
  b.reset(g);
  b.step(Pendulum::action_type::Constant(1.0), g);
  const TensorFile file = saved(b);
  check_every_tensor_required(file, b);
  check_refused(saved(Pendulum(PendulumOptions{.observe_velocity = false})), b, "observe_velocity = 0");
  check_refused(saved(Pendulum(PendulumOptions{.observe_velocity = true, .gravity = 9.81})), b, "gravity = 9.81");
  check_refused(with_integers(file, "steps", {201}), b, "steps: 201 is out of range [0, 201)");
  check_refused(with_integers(with_integers(file, "steps", {200}), "running", {1}), b, "running: 1 after 200 steps");
  check_refused(with_integers(file, "running", {2}), b, "running: 2");
  TensorFile fast = file;
  for (Tensor& t : fast.tensors)
    if (t.name == prefix + "angular_velocity") t.values = {8.5};
  check_refused(fast, b, "angular_velocity: must be in [-8, 8], got 8.5");

  // Before the first reset no episode runs: that state too is restored.
  load_state(saved(Pendulum()), prefix, b);
  CHECK_FALSE(b.running());
  CHECK_THROWS_AS(b.step(Pendulum::action_type::Constant(0.0), g), std::logic_error);
}

}  // namespace env_checkpoint_test
