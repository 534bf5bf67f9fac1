#pragma once
// The T-maze of Figure 1 as defined in the proof of Theorem 5.8: a corridor of length k
// whose first observation (a or b) decides, together with the observation at its end (x or y),
// whether going up or down pays +1. TMaze is the POMDP; TMazeAlwaysUp is the HMM of the
// "always up" policy, whose values are those of Table 2; TMazeNavigation is the version for control
// (the agent walks the corridor itself, §6 PPO). See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/finite_pomdp.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {
/// a k + b, or 0 when it overflows std::size_t.
[[nodiscard]] constexpr std::size_t checked_affine(std::size_t a, std::size_t k, std::size_t b) noexcept {
  const std::size_t product = checked_mul(a, k);
  return product == 0 ? 0 : checked_add(product, b);
}

/// A number of states `formula` of corridor_length k, computed with checked_mul/checked_add (0 on
/// overflow): it must fit std::size_t and the index type of the model's matrices.
inline void check_state_count(const char* who, const char* formula, std::size_t states, std::size_t k) {
  if (states == 0 || states > static_cast<std::size_t>(std::numeric_limits<Eigen::Index>::max()))
    invalid(who, ": corridor_length k = ", k, " is too large: the ", formula,
            " states overflow the index type (at most 2^63 - 1)");
}
}  // namespace detail

/// The T-maze's observations Y = {a, b, o, x, y} and actions {up, down}, as indices.
namespace tmaze {
inline constexpr Observation a = 0;  // first observation: cue a
inline constexpr Observation b = 1;  // first observation: cue b
inline constexpr Observation o = 2;  // the corridor (and the terminal state)
inline constexpr Observation x = 3;  // end of the corridor: sign x
inline constexpr Observation y = 4;  // end of the corridor: sign y
inline constexpr std::size_t num_observations = 5;
inline constexpr Action up = 0;
inline constexpr Action down = 1;
inline constexpr std::size_t num_actions = 2;
}  // namespace tmaze

namespace detail {
/// The explicit POMDP of a T-maze (TMaze, TMazeNavigation) while it is built: a zero emission
/// matrix and initial distribution, one transition and one reward matrix per action to come, and
/// a terminal state that emits o and whose row restarts an episode. Refuses, before allocating, a
/// dense emission matrix (|X| x 5) beyond memtrace::default_max_bytes. A class template, and the
/// models name it as TMazeModel<BasicFinitePomdp<Lazy>>, so it is compiled only where a model() is.
template <class Pomdp>
struct TMazeModel {
  TMazeModel(const char* who, const char* shape, std::size_t num_states, std::size_t terminal_state,
             std::size_t corridor_length)
      : terminal(static_cast<Eigen::Index>(terminal_state)) {
    check_storage(who, shape, checked_mul(num_states, tmaze::num_observations), sizeof(double), "corridor_length",
                  corridor_length);
    const auto n = static_cast<Eigen::Index>(num_states);
    emission = Eigen::MatrixXd::Zero(n, tmaze::num_observations);
    initial = Eigen::VectorXd::Zero(n);
  }

  /// The terminal state emits o; the model as a FinitePomdp.
  Pomdp finish() && {
    emission(terminal, static_cast<Eigen::Index>(tmaze::o)) = 1.0;
    std::vector<bool> is_terminal(static_cast<std::size_t>(emission.rows()), false);
    is_terminal[static_cast<std::size_t>(terminal)] = true;
    return Pomdp(std::move(transitions), std::move(emission), std::move(initial), rewards, std::move(is_terminal));
  }

  Eigen::MatrixXd emission;
  Eigen::VectorXd initial;
  std::vector<SparseMatrix> transitions, rewards;
  Eigen::Index terminal;
};
}  // namespace detail

/// The T-maze E_k of Theorem 5.8 with corridor length k >= 2. y_0 is a or b with probability 1/2;
/// the agent then moves right by itself (actions are ignored in the corridor) and observes o
/// until t = k - 1, where it observes x or y with probability 1/2. Its action there ends the
/// episode with reward +1 if (up and (a, x) or (b, y)) or (down and (a, y) or (b, x)), else -1;
/// all other transitions pay 0.
///
/// States (2k + 3): corridor_state(i, cue) for positions i in [0, k - 2] and cue 0 (a) or 1 (b);
/// junction_state(cue, sign) at position k - 1 with sign 0 (x) or 1 (y); terminal_state(), which
/// emits o and whose row of the model restarts an episode. Satisfies Pomdp.
/// (`TMaze` is `BasicTMaze<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicTMaze {
 public:
  explicit BasicTMaze(std::size_t corridor_length) : k_(corridor_length) {
    if (corridor_length < 2) detail::invalid("TMaze: corridor_length must be at least 2, got ", corridor_length);
    detail::check_state_count("TMaze", "2k + 3", detail::checked_affine(2, corridor_length, 3), corridor_length);
  }

  /// Draws the cue (one uniform_index(gen, 2)) and returns y_0 = a or b.
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    cue_ = static_cast<std::size_t>(uniform_index(gen, 2));
    position_ = 0;
    sign_ = 0;
    return cue_ == 0 ? tmaze::a : tmaze::b;
  }

  /// In the corridor: one step right (the action is ignored; entering the junction draws its sign
  /// with uniform_index(gen, 2)). At the junction: up or down ends the episode with reward ±1.
  template <std::uniform_random_bit_generator G>
  TimeStep<> step(Action u, G& gen) {
    if (u >= tmaze::num_actions) detail::invalid("TMaze::step: action must be up (0) or down (1), got ", u);
    if (position_ == k_) throw std::logic_error("TMaze::step: the episode has terminated; call reset first");
    if (position_ == k_ - 1) {
      position_ = k_;
      return {tmaze::o, reward(cue_, sign_, u), true, false};
    }
    if (++position_ < k_ - 1) return {tmaze::o, 0.0, false, false};
    sign_ = static_cast<std::size_t>(uniform_index(gen, 2));
    return {sign_ == 0 ? tmaze::x : tmaze::y, 0.0, false, false};
  }

  [[nodiscard]] State state() const noexcept {
    if (position_ == k_) return terminal_state();
    if (position_ == k_ - 1) return junction_state(cue_, sign_);
    return corridor_state(position_, cue_);
  }
  [[nodiscard]] std::size_t num_states() const noexcept { return 2 * k_ + 3; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return tmaze::num_observations; }
  [[nodiscard]] std::size_t num_actions() const noexcept { return tmaze::num_actions; }
  [[nodiscard]] std::size_t corridor_length() const noexcept { return k_; }

  /// The state at corridor position i in [0, k - 2] with cue 0 (a) or 1 (b).
  [[nodiscard]] State corridor_state(std::size_t i, std::size_t cue) const noexcept { return 2 * i + cue; }
  /// The state at the end of the corridor with cue 0 (a) or 1 (b) and sign 0 (x) or 1 (y).
  [[nodiscard]] State junction_state(std::size_t cue, std::size_t sign) const noexcept {
    return 2 * (k_ - 1) + 2 * sign + cue;
  }
  [[nodiscard]] State terminal_state() const noexcept { return 2 * k_ + 2; }

  /// The reward table of the proof of Theorem 5.8: +1 when up matches (a, x) or (b, y), or down
  /// matches (a, y) or (b, x); -1 otherwise.
  [[nodiscard]] static double reward(std::size_t cue, std::size_t sign, Action u) noexcept {
    return (cue == sign) == (u == tmaze::up) ? 1.0 : -1.0;
  }

  /// The explicit POMDP: transition(u)(x, x') = p(x' | x, u) and emission(x, y) = p(y | x), both
  /// row-stochastic; the terminal state's row restarts an episode. Refuses, before allocating, a
  /// dense emission matrix (|X| x 5) beyond memtrace::default_max_bytes.
  [[nodiscard]] FinitePomdp model() const {
    detail::TMazeModel<BasicFinitePomdp<Lazy>> m("TMaze::model", "the emission matrix |X| x |Y| = (2k + 3) x 5",
                                                 num_states(), terminal_state(), k_);
    const auto n = static_cast<Eigen::Index>(num_states());
    const Eigen::Index terminal = m.terminal;
    for (Action u = 0; u < tmaze::num_actions; ++u) {
      SparseMatrix p(n, n), r(n, n);
      for (std::size_t cue = 0; cue < 2; ++cue) {
        for (std::size_t i = 0; i + 2 < k_; ++i)
          p.insert(idx(corridor_state(i, cue)), idx(corridor_state(i + 1, cue))) = 1;
        for (std::size_t sign = 0; sign < 2; ++sign) {
          p.insert(idx(corridor_state(k_ - 2, cue)), idx(junction_state(cue, sign))) = 0.5;
          p.insert(idx(junction_state(cue, sign)), terminal) = 1.0;
          r.insert(idx(junction_state(cue, sign)), terminal) = reward(cue, sign, u);
        }
        p.insert(terminal, idx(corridor_state(0, cue))) = 0.5;
      }
      m.transitions.push_back(p);
      m.rewards.push_back(r);
    }
    for (std::size_t cue = 0; cue < 2; ++cue) {
      m.initial[idx(corridor_state(0, cue))] = 0.5;
      for (std::size_t i = 0; i + 1 < k_; ++i)
        m.emission(idx(corridor_state(i, cue)), i == 0 ? idx(cue) : idx(tmaze::o)) = 1;
      for (std::size_t sign = 0; sign < 2; ++sign) m.emission(idx(junction_state(cue, sign)), idx(tmaze::x + sign)) = 1;
    }
    return std::move(m).finish();
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  static Eigen::Index idx(std::size_t i) noexcept { return static_cast<Eigen::Index>(i); }

  std::size_t k_;
  std::size_t cue_ = 0;       // 0: a, 1: b
  std::size_t sign_ = 0;      // 0: x, 1: y (drawn on entering the junction)
  std::size_t position_ = 0;  // 0 .. k - 1 in the corridor, k after the final action
};

/// The T-maze under the fixed policy that always goes up (the proof of Theorem 5.8): an HMM whose
/// state values are those of Table 2 (0 before the junction, ±1 at it). Satisfies FiniteModel.
/// (`TMazeAlwaysUp` is `BasicTMazeAlwaysUp<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicTMazeAlwaysUp {
 public:
  explicit BasicTMazeAlwaysUp(std::size_t corridor_length) : maze_(corridor_length) {}

  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    return maze_.reset(gen);
  }
  template <std::uniform_random_bit_generator G>
  TimeStep<> step(G& gen) {
    return maze_.step(tmaze::up, gen);
  }

  [[nodiscard]] State state() const noexcept { return maze_.state(); }
  [[nodiscard]] std::size_t num_states() const noexcept { return maze_.num_states(); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return maze_.num_observations(); }
  [[nodiscard]] const TMaze& maze() const noexcept { return maze_; }

  /// The explicit HMM: the POMDP with the action up in every state.
  [[nodiscard]] FiniteHmm model() const {
    Eigen::VectorXd always_up = Eigen::VectorXd::Zero(tmaze::num_actions);
    always_up[static_cast<Eigen::Index>(tmaze::up)] = 1.0;
    return maze_.model().with_action_probabilities(always_up);
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  TMaze maze_;
};

/// The T-maze's moves in the navigation variant.
namespace tmaze {
inline constexpr Action left = 2;
inline constexpr Action right = 3;
inline constexpr std::size_t num_navigation_actions = 4;
}  // namespace tmaze

/// The T-maze for control (the paper's PPO experiment, §6): the agent walks the corridor itself.
/// Positions 0 .. k - 1 with the junction at k - 1; actions up, down, left, right (tmaze::up = 0,
/// down = 1, left = 2, right = 3). Both the cue (a or b) and the sign at the junction (x or y) are
/// drawn at reset, each with probability 1/2 (two uniform_index(gen, 2)); the agent observes the cue
/// at position 0, o in between and the sign at the junction, every time it is there. left and
/// right move along the corridor (against the wall it stays), up and down do nothing except at the
/// junction, where they end the episode with TMaze::reward(cue, sign, u) (the same table; the
/// paper's Minigrid version pays 0 instead of -1, which is wrong_reward). An episode is cut
/// (truncated, reward 0) after max_episode_steps steps, by default 5(k + 2)^2 as in the paper's
/// footnote; 0 means no limit.
///
/// States (4k + 1): position(i, cue, sign) = 4i + 2 sign + cue, and terminal_state() = 4k.
/// model() is the FinitePomdp without the time limit (a truncation, not part of the dynamics).
/// Satisfies Pomdp.
/// (`TMazeNavigation` is `BasicTMazeNavigation<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicTMazeNavigation {
 public:
  explicit BasicTMazeNavigation(std::size_t corridor_length, std::size_t max_episode_steps = limit_of_paper,
                                double wrong_reward = -1.0)
      : k_(corridor_length), wrong_reward_(wrong_reward) {
    if (corridor_length < 2)
      detail::invalid("TMazeNavigation: corridor_length must be at least 2, got ", corridor_length);
    if (!std::isfinite(wrong_reward))
      detail::invalid("TMazeNavigation: wrong_reward must be finite, got ", wrong_reward);
    detail::check_state_count("TMazeNavigation", "4k + 1", detail::checked_affine(4, corridor_length, 1),
                              corridor_length);
    if (max_episode_steps == limit_of_paper) {
      const std::size_t width = detail::checked_add(corridor_length, 2);
      max_steps_ = detail::checked_mul(5, detail::checked_mul(width, width));
      if (width == 0 || max_steps_ == 0)
        detail::invalid("TMazeNavigation: corridor_length k = ", corridor_length,
                        " is too large: the episode limit 5(k + 2)^2 overflows std::size_t");
    } else {
      max_steps_ = max_episode_steps;
    }
  }

  /// Selects the paper's episode limit 5(k + 2)^2.
  static constexpr std::size_t limit_of_paper = static_cast<std::size_t>(-1);

  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    cue_ = static_cast<std::size_t>(uniform_index(gen, 2));
    sign_ = static_cast<std::size_t>(uniform_index(gen, 2));
    position_ = 0;
    steps_ = 0;
    done_ = false;
    return observation();
  }

  template <std::uniform_random_bit_generator G>
  TimeStep<> step(Action u, [[maybe_unused]] G& gen) {
    if (u >= tmaze::num_navigation_actions)
      detail::invalid("TMazeNavigation::step: action must be in [0, 4) (up, down, left, right), got ", u);
    if (done_) throw std::logic_error("TMazeNavigation::step: the episode has ended; call reset first");
    ++steps_;
    if (position_ == k_ - 1 && (u == tmaze::up || u == tmaze::down)) {
      done_ = true;
      position_ = k_;
      return {tmaze::o, reward(u), true, false};
    }
    if (u == tmaze::left && position_ > 0) --position_;
    if (u == tmaze::right && position_ + 1 < k_) ++position_;
    done_ = max_steps_ != 0 && steps_ >= max_steps_;
    return {observation(), 0.0, false, done_};
  }

  [[nodiscard]] State state() const noexcept {
    return position_ == k_ ? terminal_state() : position(position_, cue_, sign_);
  }
  [[nodiscard]] std::size_t num_states() const noexcept { return 4 * k_ + 1; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return tmaze::num_observations; }
  [[nodiscard]] std::size_t num_actions() const noexcept { return tmaze::num_navigation_actions; }
  [[nodiscard]] std::size_t corridor_length() const noexcept { return k_; }
  [[nodiscard]] std::size_t max_episode_steps() const noexcept { return max_steps_; }

  /// The state at corridor position i in [0, k - 1] with cue 0 (a) / 1 (b) and sign 0 (x) / 1 (y).
  [[nodiscard]] static State position(std::size_t i, std::size_t cue, std::size_t sign) noexcept {
    return 4 * i + 2 * sign + cue;
  }
  [[nodiscard]] State terminal_state() const noexcept { return 4 * k_; }

  /// The explicit POMDP without the time limit: transition(u)(x, x') = p(x' | x, u) and
  /// emission(x, y) = p(y | x), both row-stochastic; the terminal state's row restarts an episode.
  /// Refuses, before allocating, a dense emission matrix (|X| x 5) beyond memtrace::default_max_bytes.
  [[nodiscard]] FinitePomdp model() const {
    detail::TMazeModel<BasicFinitePomdp<Lazy>> m(
        "TMazeNavigation::model", "the emission matrix |X| x |Y| = (4k + 1) x 5", num_states(), terminal_state(), k_);
    const auto n = static_cast<Eigen::Index>(num_states());
    const Eigen::Index terminal = m.terminal;
    auto at = [](std::size_t i, std::size_t cue, std::size_t sign) {
      return static_cast<Eigen::Index>(position(i, cue, sign));
    };
    for (Action u = 0; u < tmaze::num_navigation_actions; ++u) {
      SparseMatrix p(n, n), r(n, n);
      for (std::size_t cue = 0; cue < 2; ++cue) {
        for (std::size_t sign = 0; sign < 2; ++sign) {
          for (std::size_t i = 0; i < k_; ++i) {
            if (i + 1 == k_ && (u == tmaze::up || u == tmaze::down)) {
              p.insert(at(i, cue, sign), terminal) = 1.0;
              r.insert(at(i, cue, sign), terminal) = TMaze::reward(cue, sign, u) > 0 ? 1.0 : wrong_reward_;
              continue;
            }
            std::size_t next = i;
            if (u == tmaze::left && i > 0) --next;
            if (u == tmaze::right && i + 1 < k_) ++next;
            p.insert(at(i, cue, sign), at(next, cue, sign)) = 1.0;
          }
          p.insert(terminal, at(0, cue, sign)) = 0.25;
        }
      }
      m.transitions.push_back(p);
      m.rewards.push_back(r);
    }
    for (std::size_t cue = 0; cue < 2; ++cue) {
      for (std::size_t sign = 0; sign < 2; ++sign) {
        m.initial[at(0, cue, sign)] = 0.25;
        for (std::size_t i = 0; i < k_; ++i)
          m.emission(at(i, cue, sign), static_cast<Eigen::Index>(observation_at(i, cue, sign))) = 1.0;
      }
    }
    return std::move(m).finish();
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  [[nodiscard]] Observation observation_at(std::size_t i, std::size_t cue, std::size_t sign) const noexcept {
    if (i == 0) return cue == 0 ? tmaze::a : tmaze::b;
    if (i + 1 == k_) return sign == 0 ? tmaze::x : tmaze::y;
    return tmaze::o;
  }
  [[nodiscard]] Observation observation() const noexcept { return observation_at(position_, cue_, sign_); }
  [[nodiscard]] double reward(Action u) const noexcept {
    return TMaze::reward(cue_, sign_, u) > 0 ? 1.0 : wrong_reward_;
  }

  std::size_t k_;
  double wrong_reward_;
  std::size_t max_steps_ = 0;
  std::size_t cue_ = 0, sign_ = 0;
  std::size_t position_ = 0;  // 0 .. k - 1 in the corridor, k after up or down at the junction
  std::size_t steps_ = 0;
  bool done_ = false;
};

}  // namespace memtrace
