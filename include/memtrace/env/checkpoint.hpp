#pragma once
// The environments' states for checkpoints (checkpoint.hpp): detail::CheckpointState of every
// environment of env/, so that save_state and load_state take them. A state holds what changes as
// the environment steps (hidden state, position, counters, episode flags) and an identification of
// what does not (sizes, parameters, a fingerprint of the matrices), so that it is loaded only into
// an environment built like the one saved. Opt-in. See docs/environments.md ("Checkpoints").

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/finite_pomdp.hpp"
#include "memtrace/env/minigrid_tmaze.hpp"
#include "memtrace/env/noisy_random_walk.hpp"
#include "memtrace/env/pendulum.hpp"
#include "memtrace/env/tmaze.hpp"
#include "memtrace/env/two_state_hmm.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace::detail {

/// A FiniteHmm's state, under `prefix`: `state` (U64 [], the hidden state x_t, below |X|); and, to
/// identify the model, `sizes` (U64 [2]: |X|, |Y|) and `fingerprint` (U64 [], of P, r, O, the
/// initial distribution and the terminal flags). A state of another model is refused.
template <class Lazy>
struct CheckpointState<BasicFiniteHmm<Lazy>> {
  using Env = BasicFiniteHmm<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {2}, sizes(env));
    put_integers(file, prefix + "fingerprint", {}, {fingerprint(env)});
    put_integers(file, prefix + "state", {}, {env.state_});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    check_parameters<std::uint64_t>(file, prefix + "sizes", "a FiniteHmm", {"num_states", "num_observations"},
                                    sizes(env));
    check_fingerprint(file, prefix + "fingerprint", "a FiniteHmm", "the same sizes but other matrices",
                      fingerprint(env));
    const std::uint64_t state = state_integer_below(file, prefix + "state", env.num_states(), "the hidden states");
    env.state_ = static_cast<State>(state);
  }

 private:
  static std::vector<std::uint64_t> sizes(const Env& env) { return {env.num_states(), env.num_observations()}; }
  // Everything the samplers are built from.
  static std::uint64_t fingerprint(const Env& env) {
    Fnv1a f;
    add_matrix(f, env.transition_);
    add_matrix(f, env.rewards_);
    add_matrix(f, env.emission_);
    add_matrix(f, env.initial_);
    add_flags(f, env.terminal_);
    return f.value();
  }
};

/// A FinitePomdp's state, under `prefix`: `state` (U64 [], the hidden state x_t, below |X|); and,
/// to identify the model, `sizes` (U64 [3]: |X|, |U|, |Y|) and `fingerprint` (U64 [], of every
/// transition, reward and emission matrix, the initial emission and distribution and the terminal
/// flags). A state of another model is refused.
template <class Lazy>
struct CheckpointState<BasicFinitePomdp<Lazy>> {
  using Env = BasicFinitePomdp<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {3}, sizes(env));
    put_integers(file, prefix + "fingerprint", {}, {fingerprint(env)});
    put_integers(file, prefix + "state", {}, {env.state_});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    check_parameters<std::uint64_t>(file, prefix + "sizes", "a FinitePomdp",
                                    {"num_states", "num_actions", "num_observations"}, sizes(env));
    check_fingerprint(file, prefix + "fingerprint", "a FinitePomdp", "the same sizes but other matrices",
                      fingerprint(env));
    const std::uint64_t state = state_integer_below(file, prefix + "state", env.num_states(), "the hidden states");
    env.state_ = static_cast<State>(state);
  }

 private:
  static std::vector<std::uint64_t> sizes(const Env& env) {
    return {env.num_states(), env.num_actions(), env.num_observations()};
  }
  // Everything the samplers are built from.
  static std::uint64_t fingerprint(const Env& env) {
    Fnv1a f;
    f.word(env.transitions_.size());
    for (const SparseMatrix& t : env.transitions_) add_matrix(f, t);
    for (const SparseMatrix& r : env.rewards_) add_matrix(f, r);
    f.word(env.observation_rewards_.size());
    for (const SparseMatrix& r : env.observation_rewards_) add_matrix(f, r);
    f.word(env.emissions_.size());
    for (const Eigen::MatrixXd& o : env.emissions_) add_matrix(f, o);
    f.word(env.own_initial_emission_ ? 1 : 0);
    if (env.own_initial_emission_) add_matrix(f, env.initial_emission_);
    add_matrix(f, env.initial_);
    add_flags(f, env.terminal_);
    return f.value();
  }
};

/// A NoisyRandomWalk's state, under `prefix`: `state` (U64 [], the walker's position, below |X|);
/// and its parameters, `sizes` (U64 [5]: num_states, max_step, allow_stay, num_observations,
/// start) and `parameters` (F64 [3]: noise as given, left_reward, right_reward). A state of a walk
/// of other parameters is refused. (The reward of the last move is written by every step before it
/// is read: not state.)
template <class Lazy>
struct CheckpointState<BasicNoisyRandomWalk<Lazy>> {
  using Env = BasicNoisyRandomWalk<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {5}, sizes(env));
    put_reals(file, prefix + "parameters", {3}, parameters(env));
    put_integers(file, prefix + "state", {}, {env.state()});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    check_parameters<std::uint64_t>(file, prefix + "sizes", "a NoisyRandomWalk",
                                    {"num_states", "max_step", "allow_stay", "num_observations", "start"}, sizes(env));
    check_parameters<double>(file, prefix + "parameters", "a NoisyRandomWalk", {"noise", "left_reward", "right_reward"},
                             parameters(env));
    const std::uint64_t state = state_integer_below(file, prefix + "state", env.num_states(), "the positions");
    env.x_ = static_cast<std::int64_t>(state);
  }

 private:
  static std::vector<std::uint64_t> sizes(const Env& env) {
    const NoisyRandomWalkParameters& p = env.parameters();
    return {p.num_states, p.max_step, p.allow_stay ? 1u : 0u, p.num_observations, env.start()};
  }
  static std::vector<double> parameters(const Env& env) {
    const NoisyRandomWalkParameters& p = env.parameters();
    return {p.noise, p.left_reward, p.right_reward};
  }
};

/// A TMaze's state, under `prefix`: `cue` (0 a, 1 b), `sign` (0 x, 1 y: drawn on entering the
/// junction), `position` (0 .. k - 1 in the corridor, k after the final action), each U64 []; and
/// `sizes` (U64 [1]: the corridor length k). A state of another corridor length is refused.
template <class Lazy>
struct CheckpointState<BasicTMaze<Lazy>> {
  using Env = BasicTMaze<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {1}, {env.k_});
    put_integers(file, prefix + "cue", {}, {env.cue_});
    put_integers(file, prefix + "sign", {}, {env.sign_});
    put_integers(file, prefix + "position", {}, {env.position_});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    check_parameters<std::uint64_t>(file, prefix + "sizes", "a TMaze", {"corridor_length"}, {env.k_});
    const std::uint64_t cue = state_integer_below(file, prefix + "cue", 2, "0 for a, 1 for b");
    const std::uint64_t sign = state_integer_below(file, prefix + "sign", 2, "0 for x, 1 for y");
    const std::uint64_t position = state_integer_below(file, prefix + "position", env.k_ + 1,
                                                       "0 .. k - 1 in the corridor, k after the final action");
    env.cue_ = static_cast<std::size_t>(cue);
    env.sign_ = static_cast<std::size_t>(sign);
    env.position_ = static_cast<std::size_t>(position);
  }
};

/// A TMazeAlwaysUp's state: that of the TMaze it steps (the same tensors).
template <class Lazy>
struct CheckpointState<BasicTMazeAlwaysUp<Lazy>> {
  using Env = BasicTMazeAlwaysUp<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    CheckpointState<TMaze>::save(file, prefix, env.maze_);
  }
  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    CheckpointState<TMaze>::load(file, prefix, env.maze_);
  }
};

/// A TMazeNavigation's state, under `prefix`: `cue` (0 a, 1 b), `sign` (0 x, 1 y), `position`
/// (0 .. k - 1, k after up or down at the junction), `steps` (in this episode), `done` (0/1: the
/// episode ended), each U64 []; and its parameters, `sizes` (U64 [2]: corridor length k,
/// max_episode_steps) and `parameters` (F64 [1]: wrong_reward). Refused: other parameters, values
/// out of range, steps beyond the limit, and a `done` that disagrees with the position and steps.
template <class Lazy>
struct CheckpointState<BasicTMazeNavigation<Lazy>> {
  using Env = BasicTMazeNavigation<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {2}, {env.k_, env.max_steps_});
    put_reals(file, prefix + "parameters", {1}, {env.wrong_reward_});
    put_integers(file, prefix + "cue", {}, {env.cue_});
    put_integers(file, prefix + "sign", {}, {env.sign_});
    put_integers(file, prefix + "position", {}, {env.position_});
    put_integers(file, prefix + "steps", {}, {env.steps_});
    put_integers(file, prefix + "done", {}, {env.done_ ? 1u : 0u});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    constexpr const char* type = "a TMazeNavigation";
    check_parameters<std::uint64_t>(file, prefix + "sizes", type, {"corridor_length", "max_episode_steps"},
                                    {env.k_, env.max_steps_});
    check_parameters<double>(file, prefix + "parameters", type, {"wrong_reward"}, {env.wrong_reward_});
    const std::uint64_t cue = state_integer_below(file, prefix + "cue", 2, "0 for a, 1 for b");
    const std::uint64_t sign = state_integer_below(file, prefix + "sign", 2, "0 for x, 1 for y");
    const std::uint64_t position =
        state_integer_below(file, prefix + "position", env.k_ + 1, "0 .. k - 1 in the corridor, k after up or down");
    const bool limited = env.max_steps_ != 0;  // max_steps_ is below 2^64 - 1 (TMazeNavigation's default marker)
    const std::uint64_t steps = limited
                                    ? state_integer_below(file, prefix + "steps", env.max_steps_ + 1,
                                                          "at most max_episode_steps: an episode is cut at the limit")
                                    : state_integer(file, prefix + "steps");
    const bool done = state_flag(file, prefix + "done");
    // An episode ends exactly when the agent leaves by the junction or reaches the limit.
    if (done != (position == env.k_ || (limited && steps == env.max_steps_)))
      invalid("load_state: ", prefix, "done: ", done ? 1 : 0, " contradicts position ", position, " and steps ", steps,
              " (the episode ends at position ", env.k_, " or after ", env.max_steps_, " steps)");
    env.cue_ = static_cast<std::size_t>(cue);
    env.sign_ = static_cast<std::size_t>(sign);
    env.position_ = static_cast<std::size_t>(position);
    env.steps_ = static_cast<std::size_t>(steps);
    env.done_ = done;
  }
};

/// A TwoStateHmm's state, under `prefix`: `state` (U64 [], the hidden bit x_t); and its parameters,
/// `parameters` (F64 [4]: p, q, observation_rewards[0], observation_rewards[1]). A state of other
/// parameters is refused.
template <class Lazy>
struct CheckpointState<BasicTwoStateHmm<Lazy>> {
  using Env = BasicTwoStateHmm<Lazy>;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_reals(file, prefix + "parameters", {4}, parameters(env));
    put_integers(file, prefix + "state", {}, {env.x_});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    check_parameters<double>(file, prefix + "parameters", "a TwoStateHmm",
                             {"p", "q", "observation_rewards[0]", "observation_rewards[1]"}, parameters(env));
    const std::uint64_t state = state_integer_below(file, prefix + "state", 2, "the states are 0 and 1");
    env.x_ = static_cast<State>(state);
  }

 private:
  static std::vector<double> parameters(const Env& env) { return {env.p_, env.q_, env.rewards_[0], env.rewards_[1]}; }
};

/// A MinigridTMaze's state, under `prefix`: `cue` (minigrid::green 1 or blue 2), `sides` (1: green
/// goal up), `row`, `col` (the agent's cell), `direction` (minigrid::up, right, down, left = 0 .. 3),
/// `steps` (in this episode), `done` (0/1: no episode runs), each U64 []; and `sizes` (U64 [1]: the
/// corridor length k). The grid and the current observation follow from these and are rebuilt.
/// Refused: another corridor length; values out of range; a cell the agent cannot occupy (only the
/// corridor, row 2, columns 1 .. k, and the goals, rows 1 and 3 of column k); and `done`, `steps`
/// and the cell in disagreement (an episode ends exactly at a goal or after max_steps() steps;
/// `done` elsewhere only before the first reset, at the start, with 0 steps).
template <>
struct CheckpointState<MinigridTMaze> {
  using Env = MinigridTMaze;

  static void save(TensorFile& file, const std::string& prefix, const Env& env) {
    put_integers(file, prefix + "sizes", {1}, {env.k_});
    put_integers(file, prefix + "cue", {}, {env.cue_});
    put_integers(file, prefix + "sides", {}, {env.sides_});
    put_integers(file, prefix + "row", {}, {env.row_});
    put_integers(file, prefix + "col", {}, {env.col_});
    put_integers(file, prefix + "direction", {}, {env.dir_});
    put_integers(file, prefix + "steps", {}, {env.steps_});
    put_integers(file, prefix + "done", {}, {env.done_ ? 1u : 0u});
  }

  static void load(const TensorFile& file, const std::string& prefix, Env& env) {
    const std::size_t k = env.k_;
    check_parameters<std::uint64_t>(file, prefix + "sizes", "a MinigridTMaze", {"corridor_length"}, {k});
    const std::uint64_t cue = state_integer(file, prefix + "cue");
    if (cue != minigrid::green && cue != minigrid::blue)
      invalid("load_state: ", prefix, "cue: must be green (1) or blue (2), got ", cue);
    const std::uint64_t sides = state_flag(file, prefix + "sides") ? 1 : 0;
    const std::uint64_t row = state_integer_below(file, prefix + "row", 5, "the grid's rows are 0 .. 4");
    const std::uint64_t col = state_integer_below(file, prefix + "col", k + 2, "the grid's columns are 0 .. k + 1");
    const std::uint64_t direction =
        state_integer_below(file, prefix + "direction", 4, "up, right, down, left = 0 .. 3");
    const std::uint64_t steps = state_integer_below(file, prefix + "steps", env.max_steps_ + 1,
                                                    "at most max_steps(): an episode is cut at the limit");
    const bool done = state_flag(file, prefix + "done");
    const bool in_corridor = row == 2 && col >= 1 && col <= k;
    const bool at_goal = (row == 1 || row == 3) && col == k;
    if (!in_corridor && !at_goal)
      invalid("load_state: ", prefix, "row, col: (", row, ", ", col,
              ") is a wall: the agent is in the corridor (row 2, columns 1 .. ", k,
              ") or on a goal (rows 1, 3 of column ", k, ")");
    const bool at_start = row == 2 && col == 1 && direction == minigrid::right;
    if (steps == 0 && !at_start)
      invalid("load_state: ", prefix, "steps: 0 with the agent at (", row, ", ", col, ") facing ", direction,
              ": an episode starts at (2, 1) facing right (1)");
    const bool ended = at_goal || steps == env.max_steps_;
    if (done != ended && !(done && steps == 0))
      invalid("load_state: ", prefix, "done: ", done ? 1 : 0, " contradicts the agent at (", row, ", ", col, ") after ",
              steps, " steps (an episode ends exactly on a goal or after ", env.max_steps_, " steps)");
    env.reset(static_cast<std::size_t>(cue), static_cast<std::size_t>(sides));  // the layout: cannot throw now
    env.row_ = static_cast<std::size_t>(row);
    env.col_ = static_cast<std::size_t>(col);
    env.dir_ = static_cast<std::size_t>(direction);
    env.steps_ = static_cast<std::size_t>(steps);
    env.done_ = done;
    env.observe();
  }
};

/// A Pendulum's state, under `prefix`: `options` (U64 [2]: observe_velocity, max_episode_steps)
/// and `gravity` (F64 [1]), which must equal the pendulum's own; `angle` and `angular_velocity`
/// (F64 []: θ as integrated and θ̇, |θ̇| <= 8); `steps` (U64 [], at most max_episode_steps) and
/// `running` (a flag).
template <>
struct CheckpointState<Pendulum> {
  static void save(TensorFile& file, const std::string& prefix, const Pendulum& env) {
    put_integers(file, prefix + "options", {2},
                 {env.options_.observe_velocity ? 1u : 0u, env.options_.max_episode_steps});
    put_reals(file, prefix + "gravity", {1}, {env.options_.gravity});
    put_reals(file, prefix + "angle", {}, {env.theta_});
    put_reals(file, prefix + "angular_velocity", {}, {env.theta_dot_});
    put_integers(file, prefix + "steps", {}, {env.steps_});
    put_integers(file, prefix + "running", {}, {env.running_ ? 1u : 0u});
  }

  static void load(const TensorFile& file, const std::string& prefix, Pendulum& env) {
    check_parameters<std::uint64_t>(file, prefix + "options", "a Pendulum", {"observe_velocity", "max_episode_steps"},
                                    {env.options_.observe_velocity ? 1u : 0u, env.options_.max_episode_steps});
    check_parameters<double>(file, prefix + "gravity", "a Pendulum", {"gravity"}, {env.options_.gravity});
    const double theta = state_reals(file, prefix + "angle", {})[0];
    const double theta_dot = state_reals(file, prefix + "angular_velocity", {})[0];
    if (!(std::abs(theta_dot) <= Pendulum::max_speed))
      invalid("load_state: ", prefix, "angular_velocity: must be in [-8, 8], got ", theta_dot);
    const std::uint64_t steps = state_integer_below(file, prefix + "steps", env.options_.max_episode_steps + 1,
                                                    "at most max_episode_steps: an episode is cut at the limit");
    const bool running = state_flag(file, prefix + "running");
    if (running && steps == env.options_.max_episode_steps)
      invalid("load_state: ", prefix, "running: 1 after ", steps, " steps, where the episode is truncated");
    env.theta_ = theta;
    env.theta_dot_ = theta_dot;
    env.steps_ = static_cast<std::size_t>(steps);
    env.running_ = running;
  }
};

}  // namespace memtrace::detail
