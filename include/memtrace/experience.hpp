#pragma once
// What the acting loop hands to its sink, and what learners read: one environment's step
// (ActedStep) and one lockstep step of N environments (RolloutBatch). Plain data, so that learners
// (learn/) read experience without depending on the loops that produce it (loop/). See
// docs/control.md.

#include <cstddef>
#include <span>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// What one environment did at one step of a rollout.
struct ActedStep {
  Action action = 0;               ///< u_t, picked by the policy from features[i]
  double reward = 0.0;             ///< r_{t+1}
  bool terminated = false;         ///< x_{t+1} is terminal: do not bootstrap from next_features[i]
  bool truncated = false;          ///< the episode was cut (time limit): bootstrap from next_features[i]
  double episode_return = 0;       ///< undiscounted sum of the episode's rewards so far, this one included
  std::size_t episode_length = 0;  ///< steps of the episode so far, this one included
  friend bool operator==(const ActedStep&, const ActedStep&) = default;
};

/// One lockstep step of N environments, as the rollout hands it to its sink. Entry i belongs to
/// environment i. The spans are valid during the sink call only.
template <class Phi>
struct RolloutBatch {
  std::size_t t = 0;                   ///< steps the rollout took before this one
  std::span<const Phi> features;       ///< φ_t: what the policy acted on
  std::span<const ActedStep> steps;    ///< action, reward and episode end
  std::span<const Phi> next_features;  ///< φ_{t+1}: the features after absorbing y_{t+1}, taken
                                       ///< before an episode-end reset (the "final observation")
};

}  // namespace memtrace
