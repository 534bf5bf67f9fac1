#pragma once
// The loop that acts: N environments stepped in lockstep, each with its own memory and generator.
// At each step the policy picks an action from every environment's features (told where episodes start, if it
// keeps a state of its own: EpisodeStartPolicy), a continuous action
// is clipped into the environment's box, every environment steps, every memory absorbs (u, y) (or y alone if it does
// not remember actions), the step's batch goes to a sink (a learner, a buffer, a logger), and environments whose
// episode ended (terminated or truncated, the Gymnasium split) are reset together with their memory. See
// docs/control.md.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// What Rollout does with a continuous action outside the environment's box
/// [action_low(), action_high()] (ContinuousActions). See docs/control.md ("Actions in their box").
enum class ActionClipping {
  /// Clip it into the box before the environment steps (Stable-Baselines3's and CleanRL's rule):
  /// the environment, the batch's steps and every memory that remembers actions get the clipped
  /// action; the batch's policy_actions (and so a learner's buffer) keep the policy's sample.
  to_box = 0,
  /// Pass it on as the policy chose it (an environment that charges for large actions, as
  /// MuJoCo's do, or clips them itself).
  off = 1,
};

/// N environments (Pomdp), N memories of their observations and N generators, stepped in
/// lockstep; N = 1 is allowed. Environment i draws everything (its resets, its steps and its
/// policy's actions) from generator i, so its trajectory is the same whatever N is and in whatever
/// order the loop visits the environments. The first step resets every environment and memory.
/// Actions are of the environments' type action_t<Env>: indices (FiniteActions, checked against
/// num_actions()), continuous (checked for their dimension and finiteness; with ContinuousActions
/// clipped into the environment's box unless ActionClipping::off) or a user's own type (passed on
/// unchecked).
template <class Env, class M, std::uniform_random_bit_generator G = DefaultGenerator>
requires Pomdp<Env, G>
class Rollout {
  static_assert(!std::unsigned_integral<action_t<Env>> || FiniteActions<Env, G>,
                "Rollout: an environment with index actions must say how many it has (num_actions(): FiniteActions)");
  static_assert(Memory<M, observation_t<Env, G>> || ObservationActionMemory<M, observation_t<Env, G>, action_t<Env>>,
                "Rollout: the memory cannot absorb the environment's observations (observation_t<Env>): it must be a "
                "Memory<M, observation_t<Env>> or an ObservationActionMemory of them. Index memories (Window, "
                "ConcatWindow, WithActions) take index observations only; a float trace takes float vectors and a "
                "double trace double vectors (MemoryTrace<dynamic_lambda, dynamic, float> for Eigen::VectorXf)");

 public:
  using observation_type = observation_t<Env, G>;
  using action_type = action_t<Env>;
  using step_type = BasicActedStep<action_type>;
  using features_type = features_t<M>;
  using batch_type = RolloutBatch<features_type, action_type>;

  /// Environment i is stepped with memory i and generator i; the three must have one size >= 1.
  /// With ContinuousActions, `clipping` says whether actions are clipped into each environment's
  /// box, which is read here and must not change afterwards (every entry of action_low() must be
  /// <= that of action_high(); a checkpoint whose environments have other boxes is refused).
  Rollout(std::vector<Env> envs, std::vector<M> memories, std::vector<G> gens,
          ActionClipping clipping = ActionClipping::to_box)
      : envs_(std::move(envs)), memories_(std::move(memories)), gens_(std::move(gens)), clipping_(clipping) {
    if (clipping != ActionClipping::to_box && clipping != ActionClipping::off)
      detail::invalid("Rollout: clipping must be to_box or off, got ", static_cast<int>(clipping));
    if (envs_.empty()) detail::invalid("Rollout: envs must hold at least one environment, got none");
    if (memories_.size() != envs_.size())
      detail::invalid("Rollout: memories must hold one memory per environment (", envs_.size(), "), got ",
                      memories_.size());
    if (gens_.size() != envs_.size())
      detail::invalid("Rollout: gens must hold one generator per environment (", envs_.size(), "), got ", gens_.size());
    for (std::size_t i = 0; i < envs_.size(); ++i)
      if constexpr (requires {
                      memories_[i].num_actions();
                      envs_[i].num_actions();
                    })
        if (static_cast<std::size_t>(memories_[i].num_actions()) != static_cast<std::size_t>(envs_[i].num_actions()))
          detail::invalid("Rollout: memories[", i, "] remembers ", memories_[i].num_actions(), " actions but envs[", i,
                          "] has ", envs_[i].num_actions());
    if constexpr (ContinuousActions<Env, G>) {
      for (std::size_t i = 1; i < envs_.size(); ++i)
        if (envs_[i].action_low().size() != envs_[0].action_low().size())
          detail::invalid("Rollout: envs[", i, "] has actions of dimension ", envs_[i].action_low().size(),
                          ", envs[0] ", envs_[0].action_low().size(), ": one policy acts for all of them");
      read_boxes();
    }
    steps_.resize(envs_.size());
    starts_.resize(static_cast<Eigen::Index>(envs_.size()));
    starts_.setConstant(true);
    actions_.resize(envs_.size(), step_type{}.action);  // never uninitialised memory
    saved_gens_.reserve(gens_.size());
  }

  /// Resets every environment and memory: the next step starts new episodes.
  void reset() {
    features_.clear();
    next_features_.clear();
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      memories_[i].reset(envs_[i].reset(gens_[i]));
      features_.push_back(memories_[i].features());
      steps_[i] = step_type{};
      starts_[i] = true;
    }
    next_features_ = features_;
    started_ = true;
  }

  /// One step of every environment: the policy acts on each environment's features, continuous
  /// actions are clipped into their box (ActionClipping::to_box), the environments step, the memories absorb,
  /// sink(batch) is called (if given), then environments whose episode ended are reset with their memory. P is a
  /// BatchPolicy or a Policy.
  ///
  /// An action out of range (or none written by a BatchPolicy) is refused before any environment
  /// moves, with the generators restored: the refused step changes nothing. If an environment, a
  /// memory or the sink throws, every environment and memory is reset (new episodes) and the
  /// exception propagates: environments that had already stepped cannot be rolled back, and a
  /// batch must never pair features with a transition that did not follow them.
  template <class P, class Sink>
  void step(P& policy, Sink&& sink) {
    if (!started_) reset();
    const std::size_t n = envs_.size();
    saved_gens_.assign(gens_.begin(), gens_.end());
    mark_unchosen();
    if constexpr (EpisodeStartPolicy<P, features_type, G, action_type>) {
      policy.act(std::span<const features_type>(features_), episode_starts(), std::span<G>(gens_),
                 std::span<action_type>(actions_));
    } else if constexpr (BatchPolicy<P, features_type, G, action_type>) {
      policy.act(std::span<const features_type>(features_), std::span<G>(gens_), std::span<action_type>(actions_));
    } else {
      static_assert(Policy<P, features_type, G, action_type>,
                    "Rollout::step: the policy needs act(features, gen) -> an action of the environment's type "
                    "action_t<Env> (an integral index for index actions: Policy), act(span<const features>, "
                    "span<G>, span<action_t<Env>>) (BatchPolicy) or act(span<const features>, span<const bool>, "
                    "span<G>, span<action_t<Env>>) (EpisodeStartPolicy)");
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (continuous_actions) {
          auto&& u = policy.act(features_[i], gens_[i]);
          check_dimension(i, u.size());  // before the assignment, which could not hold another size
          actions_[i] = u;
        } else {
          actions_[i] = static_cast<action_type>(policy.act(features_[i], gens_[i]));
        }
      }
    }
    check_actions();  // before any environment moves
    const std::vector<action_type>& taken = clip_to_boxes();
    try {
      for (std::size_t i = 0; i < n; ++i) {
        const action_type& u = taken[i];
        const auto result = envs_[i].step(u, gens_[i]);
        if constexpr (ObservationActionMemory<M, observation_type, action_type>)
          memories_[i].update(u, result.observation);
        else
          memories_[i].update(result.observation);
        step_type& s = steps_[i];
        const bool continuing = !(s.terminated || s.truncated);  // the previous step did not end an episode
        s.action = u;
        s.reward = static_cast<double>(result.reward);
        s.terminated = static_cast<bool>(result.terminated);
        s.truncated = static_cast<bool>(result.truncated);
        s.episode_return = (continuing ? s.episode_return : 0.0) + s.reward;
        s.episode_length = (continuing ? s.episode_length : 0) + 1;
        next_features_[i] = memories_[i].features();
      }
      const batch_type batch{t_, features_, steps_, next_features_, actions_};
      sink(batch);
    } catch (...) {
      try {
        reset();  // every episode restarts: no later batch may pair φ_t with a step that did not follow it
      } catch (...) {
        started_ = false;  // then the next step resets
      }
      throw;
    }
    ++t_;
    features_.swap(next_features_);
    for (std::size_t i = 0; i < n; ++i) {
      starts_[static_cast<Eigen::Index>(i)] = steps_[i].terminated || steps_[i].truncated;
      if (starts_[static_cast<Eigen::Index>(i)]) {
        memories_[i].reset(envs_[i].reset(gens_[i]));
        features_[i] = memories_[i].features();
      }
    }
  }
  template <class P>
  void step(P& policy) {
    step(policy, [](const batch_type&) {});
  }

  /// Collects `steps` lockstep steps (each of every environment), each batch handed to sink.
  template <class P, class Sink>
  void collect(P& policy, std::size_t steps, Sink&& sink) {
    for (std::size_t k = 0; k < steps; ++k) step(policy, sink);
  }

  [[nodiscard]] std::size_t size() const noexcept { return envs_.size(); }
  /// Whether continuous actions are clipped into the environments' boxes.
  [[nodiscard]] ActionClipping clipping() const noexcept { return clipping_; }
  /// Lockstep steps taken so far.
  [[nodiscard]] std::size_t steps_taken() const noexcept { return t_; }
  /// The features environment i's policy acts on next (after the first step or reset()).
  [[nodiscard]] const features_type& features(std::size_t i) const {
    if (!started_) throw std::logic_error("Rollout::features: no episode started yet (call reset or step first)");
    check_index("Rollout::features", i);
    return features_[i];
  }
  /// The features every environment's policy acts on next, entry i for environment i (after the
  /// first step or reset()): what a learner bootstraps from at the end of a rollout. The span is
  /// valid until the next step or reset.
  [[nodiscard]] std::span<const features_type> features() const {
    if (!started_) throw std::logic_error("Rollout::features: no episode started yet (call reset or step first)");
    return features_;
  }
  /// Whether environment i's next features start an episode (after reset(), or an episode end at
  /// the last step): what an EpisodeStartPolicy is told at the next step. Entry i for environment i.
  [[nodiscard]] std::span<const bool> episode_starts() const noexcept {
    return {starts_.data(), static_cast<std::size_t>(starts_.size())};
  }
  [[nodiscard]] const Env& env(std::size_t i) const {
    check_index("Rollout::env", i);
    return envs_[i];
  }
  [[nodiscard]] const M& memory(std::size_t i) const {
    check_index("Rollout::memory", i);
    return memories_[i];
  }
  [[nodiscard]] G& generator(std::size_t i) {
    check_index("Rollout::generator", i);
    return gens_[i];
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // loop/checkpoint.hpp

  static constexpr bool index_actions = std::unsigned_integral<action_type>;
  static constexpr bool continuous_actions = ContinuousAction<action_type>;
  static constexpr action_type no_action_index() noexcept {
    if constexpr (index_actions)
      return std::numeric_limits<action_type>::max();
    else
      return action_type{};
  }

  /// Refuses a step before any environment moves: the generators are restored, so the refused
  /// step changes nothing.
  template <class... Parts>
  [[noreturn]] void refuse(const Parts&... parts) {
    std::copy(saved_gens_.begin(), saved_gens_.end(), gens_.begin());
    detail::invalid("Rollout::step: ", parts...);
  }

  /// The dimension of environment i's continuous actions: its box's, else what the action type
  /// holds (a fixed size), else 0 (unknown: any size is taken).
  Eigen::Index action_dimension([[maybe_unused]] std::size_t i) const {
    if constexpr (ContinuousActions<Env, G>)
      return envs_[i].action_low().size();
    else if constexpr (action_type::SizeAtCompileTime != Eigen::Dynamic)
      return action_type::SizeAtCompileTime;
    else
      return 0;
  }

  /// Refuses a continuous action of `size` entries for environment i if the environment's box or
  /// the action type cannot hold it.
  void check_dimension(std::size_t i, Eigen::Index size) {
    const Eigen::Index dim = action_dimension(i);
    const bool too_large =
        action_type::MaxSizeAtCompileTime != Eigen::Dynamic && size > action_type::MaxSizeAtCompileTime;
    if ((dim != 0 && size != dim) || too_large)
      refuse("the policy chose an action of dimension ", size, " for environment ", i,
             ", whose actions have dimension ",
             dim != 0 ? dim : static_cast<Eigen::Index>(action_type::MaxSizeAtCompileTime));
  }

  /// Fills the actions with what no policy chooses (the largest index, NaN), so that a BatchPolicy
  /// that writes nothing is caught.
  void mark_unchosen() {
    if constexpr (index_actions) {
      std::fill(actions_.begin(), actions_.end(), no_action_index());
    } else if constexpr (continuous_actions) {
      for (std::size_t i = 0; i < actions_.size(); ++i) {
        if (const Eigen::Index dim = action_dimension(i); dim != 0) actions_[i].resize(dim);
        actions_[i].setConstant(std::numeric_limits<typename action_type::Scalar>::quiet_NaN());
      }
    }
  }

  /// Refuses an index out of range, and a continuous action of another dimension than the
  /// environment's or with a non-finite entry (NaN also where a BatchPolicy wrote nothing).
  void check_actions() {
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      if constexpr (index_actions) {
        if (actions_[i] >= static_cast<std::size_t>(envs_[i].num_actions())) {
          if (actions_[i] == no_action_index()) refuse("the policy chose no action for environment ", i);
          refuse("the policy chose action ", actions_[i], " for environment ", i, ", which has ",
                 envs_[i].num_actions(), " actions");
        }
      } else if constexpr (continuous_actions) {
        const action_type& u = actions_[i];
        if (u.size() == 0) refuse("the policy chose no action for environment ", i);
        check_dimension(i, u.size());
        for (Eigen::Index k = 0; k < u.size(); ++k)
          if (!std::isfinite(u[k]))
            refuse("the policy chose action entry ", k, " = ", u[k], " for environment ", i,
                   std::isnan(u[k]) ? " (or wrote none)" : "");
      }
    }
  }

  /// The environments' boxes, read once: clipping allocates nothing per step.
  void read_boxes() {
    low_.clear();
    high_.clear();
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      low_.push_back(static_cast<action_type>(envs_[i].action_low()));
      high_.push_back(static_cast<action_type>(envs_[i].action_high()));
      if (low_[i].size() != high_[i].size())
        detail::invalid("Rollout: envs[", i, "].action_low() has ", low_[i].size(), " entries, action_high() ",
                        high_[i].size());
      for (Eigen::Index k = 0; k < low_[i].size(); ++k)
        if (!(low_[i][k] <= high_[i][k]))
          detail::invalid("Rollout: envs[", i, "] has the box [", low_[i][k], ", ", high_[i][k], "] in entry ", k,
                          ": action_low() must be <= action_high()");
    }
    clipped_ = low_;  // the capacity of every clipped action
  }

  /// The actions the environments get: the policy's, clipped into their boxes with
  /// ActionClipping::to_box and ContinuousActions.
  const std::vector<action_type>& clip_to_boxes() {
    if constexpr (ContinuousActions<Env, G>) {
      if (clipping_ == ActionClipping::to_box) {
        for (std::size_t i = 0; i < actions_.size(); ++i)
          clipped_[i] = actions_[i].cwiseMax(low_[i]).cwiseMin(high_[i]);
        return clipped_;
      }
    }
    return actions_;
  }

  void check_index(const char* who, std::size_t i) const {
    if (i >= envs_.size())
      detail::invalid(who, ": i must be below the number of environments ", envs_.size(), ", got ", i);
  }

  std::vector<Env> envs_;
  std::vector<M> memories_;
  std::vector<G> gens_, saved_gens_;
  std::vector<features_type> features_, next_features_;
  std::vector<step_type> steps_;
  Eigen::Array<bool, Eigen::Dynamic, 1> starts_;   // the next step starts an episode (contiguous, unlike vector<bool>)
  std::vector<action_type> actions_;               // what the policy chose
  std::vector<action_type> low_, high_, clipped_;  // ContinuousActions: the boxes and the clipped actions
  ActionClipping clipping_ = ActionClipping::to_box;
  std::size_t t_ = 0;
  bool started_ = false;
};

}  // namespace memtrace
