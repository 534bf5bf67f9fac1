#pragma once
// What the acting loop hands to its sink, and what learners read: one environment's step
// (ActedStep), one lockstep step of N environments (RolloutBatch) and an episode that ended
// (EpisodeEnd). Plain data, so that learners (learn/) read experience without depending on the
// loops that produce it (loop/). See docs/control.md.

#include <cstddef>
#include <span>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// What one environment did at one step of a rollout, for actions of type A (an index, or a
/// continuous action such as an Eigen vector: concepts.hpp, action_t). ActedStep is the index one.
template <class A>
struct BasicActedStep {
  A action = initial_action();     ///< u_t as the environment got it (clipped into its box: Rollout)
  double reward = 0.0;             ///< r_{t+1}
  bool terminated = false;         ///< x_{t+1} is terminal: do not bootstrap from next_features[i]
  bool truncated = false;          ///< the episode was cut (time limit): bootstrap from next_features[i]
  double episode_return = 0;       ///< undiscounted sum of the episode's rewards so far, this one included
  std::size_t episode_length = 0;  ///< steps of the episode so far, this one included
  friend bool operator==(const BasicActedStep&, const BasicActedStep&) = default;

 private:
  static A initial_action() {  // 0, or a fixed-size vector of zeros (never uninitialised memory)
    if constexpr (requires {
                    requires A::SizeAtCompileTime >
                    0;
                  })
      return A::Zero();
    else
      return A{};
  }
};

/// The step of an environment whose actions are indices (Action).
using ActedStep = BasicActedStep<Action>;

/// An episode that ended: in a rollout (Ppo's buffer and statistics) or in an evaluation.
struct EpisodeEnd {
  std::size_t env = 0;        ///< the environment it ran in
  std::size_t step = 0;       ///< its last transition's step: in the rollout (0 .. n_steps - 1)
                              ///< when training; counted from evaluate()'s first step in evaluate()
  double episode_return = 0;  ///< undiscounted sum of its rewards
  std::size_t length = 0;     ///< its number of steps
  bool terminated = false;    ///< it reached a terminal state
  bool truncated = false;     ///< it was cut by a time limit
  friend bool operator==(const EpisodeEnd&, const EpisodeEnd&) = default;
};

/// One lockstep step of N environments, as the rollout hands it to its sink. Entry i belongs to
/// environment i. The spans are valid during the sink call only. A is the environments' action type.
template <class Phi, class A = Action>
struct RolloutBatch {
  std::size_t t = 0;                         ///< steps the rollout took before this one
  std::span<const Phi> features;             ///< φ_t: what the policy acted on
  std::span<const BasicActedStep<A>> steps;  ///< action, reward and episode end
  std::span<const Phi> next_features;        ///< φ_{t+1}: the features after absorbing y_{t+1}, taken
                                             ///< before an episode-end reset (the "final observation")
  /// The actions the policy chose, entry i for environment i, before Rollout clipped them into
  /// their box (equal to steps[i].action where nothing was clipped); empty in a batch made by
  /// hand, which means the steps' actions are the policy's.
  std::span<const A> policy_actions = {};
};

}  // namespace memtrace
