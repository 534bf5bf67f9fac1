#pragma once
// PPO's data: the rollout buffer an agent fills while acting (features, actions, log π, V, rewards
// and episode ends, the bootstrap features, the episodes that ended) and the minibatch its loss
// reads (learn/ppo_loss.hpp).
// Public data with a documented layout (and read-only sizes and fill level), so that an update or a
// test reads one place.
// See docs/control.md ("PPO's data path").

#include <Eigen/Core>
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {
template <class Phi>
inline constexpr bool ppo_sparse = is_multi_hot<Phi>::value;

template <class Phi, class Scalar>
concept PpoFeatures = ppo_sparse<Phi> ||(requires {
  typename Phi::Scalar;
  Phi::ColsAtCompileTime;
} && DenseVector<Phi> && std::same_as<typename Phi::Scalar, Scalar>);

/// Throws unless every feature vector fits a network of input dimension dim.
template <class Phi>
void check_ppo_features(const char* who, const char* name, std::span<const Phi> features, std::size_t dim) {
  for (std::size_t i = 0; i < features.size(); ++i) {
    if constexpr (ppo_sparse<Phi>) {
      for (const std::size_t k : features[i])
        if (k >= dim) [[unlikely]]
          invalid(who, ": ", name, "[", i, "] has active index ", k, ", expected < input_dim = ", dim);
    } else {
      if (static_cast<std::size_t>(features[i].size()) != dim) [[unlikely]]
        invalid(who, ": ", name, "[", i, "] has size ", features[i].size(), ", expected input_dim = ", dim);
    }
  }
}
}  // namespace detail

/// Feature vectors as columns, in the form the networks read: a dense (dim x n) matrix of Scalar,
/// or a vector of MultiHot (indices only, for the networks' sparse first layer).
template <class Phi, class Scalar>
class FeatureColumns {
 public:
  static constexpr bool sparse = detail::ppo_sparse<Phi>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  /// Room for n columns of dimension dim (their values unspecified until set).
  void resize(std::size_t dim, std::size_t n) {
    if constexpr (sparse)
      columns_.resize(n);
    else
      columns_.resize(static_cast<Eigen::Index>(dim), static_cast<Eigen::Index>(n));
    dim_ = dim;
  }
  /// The dimension of the feature vectors (a MultiHot's active indices are below it).
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  [[nodiscard]] std::size_t size() const noexcept {
    if constexpr (sparse)
      return columns_.size();
    else
      return static_cast<std::size_t>(columns_.cols());
  }
  void set(std::size_t j, const Phi& phi) {
    if constexpr (sparse)
      columns_[j] = phi;
    else
      columns_.col(static_cast<Eigen::Index>(j)) = phi;
  }
  /// Column j of `this` = column k of `other`.
  void copy_from(std::size_t j, const FeatureColumns& other, std::size_t k) {
    if constexpr (sparse)
      columns_[j] = other.columns_[k];
    else
      columns_.col(static_cast<Eigen::Index>(j)) = other.columns_.col(static_cast<Eigen::Index>(k));
  }
  /// Normalises columns [first, first + count) in place (dense features).
  void normalize(std::size_t first, std::size_t count, const FeatureNormalizer& normalizer) requires(!sparse) {
    auto block = columns_.middleCols(static_cast<Eigen::Index>(first), static_cast<Eigen::Index>(count));
    normalizer.normalize(block, block);
  }
  /// Columns [first, first + count) as a network input: a block of the matrix, or a span.
  [[nodiscard]] auto block(std::size_t first, std::size_t count) const {
    if constexpr (sparse)
      return std::span<const Phi>(columns_.data() + first, count);
    else
      return columns_.middleCols(static_cast<Eigen::Index>(first), static_cast<Eigen::Index>(count));
  }

 private:
  std::conditional_t<sparse, std::vector<Phi>, Matrix> columns_;
  std::size_t dim_ = 0;
};

template <class Scalar>
class ActorCritic;
template <class Phi, class Scalar = float, class Network = ActorCritic<Scalar>>
class PpoActing;  // learn/ppo_acting.hpp

/// The rollout buffer of PPO: n_steps lockstep steps of n_envs environments, sample s = t·n_envs + i
/// (step t, environment i), for a policy of distribution Distribution (Categorical: index actions;
/// DiagonalGaussian: continuous ones). The agent's acting side (PpoActing) writes each step once,
/// when its outcome is known: the features it acted on (normalised, if the agent normalises), the
/// actions, log-probabilities and values, the rewards and episode ends, the episodes that ended
/// and, in bootstrap truncation, the final values; then the bootstrap features (the n_envs columns
/// after the samples). Ppo::update computes their values, the advantages and the targets, and
/// empties it. The sizes and the fill level are read-only; the data are public for reading (tests,
/// diagnostics): the agent checks their shapes where a buffer is bound (Ppo::acting) and where it
/// learns from one (Ppo::update), but data written by hand are the writer's responsibility.
template <class Phi, class Scalar = float, class Distribution = Categorical>
class PpoBuffer {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using distribution_type = Distribution;
  /// The actions of the samples (Distribution::actions_type: a std::vector<Action> of indices, or a
  /// k x samples matrix of continuous actions).
  using actions_type = typename Distribution::template actions_type<Scalar>;

  FeatureColumns<Phi, Scalar> features;  ///< n_envs·n_steps sample columns, then n_envs bootstrap columns
  actions_type actions;                  ///< per sample: the action taken (as the policy sampled it)
  std::vector<StepOutcome> steps;        ///< per sample: the reward (times options.reward_scale, normalised with
                                         ///< options.normalize_rewards: what GAE reads) and episode end
  Vector log_probs;                      ///< per sample: log π_old(a|φ) at acting time
  Vector values;                         ///< per sample: V(φ) at acting time
  Vector final_values;               ///< per sample: V of a truncated episode's final features (bootstrap truncation)
  Vector bootstrap_values;           ///< per environment: V of the bootstrap features
  Vector advantages, targets;        ///< per sample: GAE's advantages and the value targets
  std::vector<EpisodeEnd> episodes;  ///< the episodes that ended in the recorded steps (with unscaled returns)
  // A recurrent agent's (RecurrentActorCriticNetwork; empty for others):
  Eigen::Array<bool, Eigen::Dynamic, 1> starts;  ///< per sample: an episode starts there (the state was reset)
  Matrix initial_states;    ///< state_dim x n_envs: the states before the rollout's first step (and its resets)
  Matrix bootstrap_states;  ///< state_dim x n_envs: the states the bootstrap features are read with

  PpoBuffer() = default;
  /// A buffer for features of dimension input_dim and actions of action_dim entries (1 for an
  /// index action, k for a continuous one: Distribution::action_dim of the network's policy_dim),
  /// and, for a recurrent agent, states of state_dim entries; everything allocated. Throws
  /// std::invalid_argument if n_envs·n_steps overflows.
  PpoBuffer(std::size_t input_dim, std::size_t n_envs, std::size_t n_steps, std::size_t action_dim = 1,
            std::size_t state_dim = 0)
      : n_envs_(n_envs), n_steps_(n_steps) {
    const std::size_t n = detail::checked_mul(n_envs, n_steps);
    if (n == 0 && n_envs != 0 && n_steps != 0) detail::invalid("PpoBuffer: n_envs·n_steps overflows");
    features.resize(input_dim, n + n_envs);
    Distribution::resize(actions, action_dim, n);
    steps.resize(n);
    for (Vector* v : {&log_probs, &values, &final_values, &advantages, &targets})
      *v = Vector::Zero(static_cast<Eigen::Index>(n));
    bootstrap_values = Vector::Zero(static_cast<Eigen::Index>(n_envs));
    episodes.reserve(n);
    pending_.features.resize(input_dim, n_envs);
    Distribution::resize(pending_.actions, action_dim, n_envs);
    pending_.log_probs = Vector::Zero(static_cast<Eigen::Index>(n_envs));
    pending_.values = Vector::Zero(static_cast<Eigen::Index>(n_envs));
    if (state_dim > 0) {
      const auto h = static_cast<Eigen::Index>(state_dim), e = static_cast<Eigen::Index>(n_envs);
      starts = Eigen::Array<bool, Eigen::Dynamic, 1>::Zero(static_cast<Eigen::Index>(n));
      initial_states = bootstrap_states = pending_.states = pending_.states_before = Matrix::Zero(h, e);
      pending_.starts = Eigen::Array<bool, Eigen::Dynamic, 1>::Zero(e);
      pending_.state = Matrix::Zero(h, 1);
    }
  }

  [[nodiscard]] std::size_t n_envs() const noexcept { return n_envs_; }
  [[nodiscard]] std::size_t n_steps() const noexcept { return n_steps_; }
  /// n_envs·n_steps.
  [[nodiscard]] std::size_t samples() const noexcept { return n_envs_ * n_steps_; }
  /// The fill level: steps written (0 .. n_steps).
  [[nodiscard]] std::size_t recorded() const noexcept { return recorded_; }
  /// n_steps steps written.
  [[nodiscard]] bool full() const noexcept { return recorded_ == n_steps_; }
  /// The bootstrap features are stored: update may learn.
  [[nodiscard]] bool bootstrapped() const noexcept { return bootstrapped_; }
  /// Empties the buffer (after an update, or a rollout abandoned halfway, e.g. after an
  /// environment threw); the episodes of the last rollout stay listed until the next step is written.
  void clear() noexcept {
    recorded_ = 0;
    bootstrapped_ = false;
    pending_.acted = false;
  }

 private:
  template <class, class, class>
  friend class PpoActing;

  /// What PpoActing::act keeps of the step it acted on until the step's outcome comes and the step
  /// is written: here, so that binding the buffer anew (each train call) allocates nothing.
  struct Pending {
    FeatureColumns<Phi, Scalar> features;  // n_envs columns, normalised
    actions_type actions;
    Vector log_probs, values;
    // A recurrent agent's: the states before the step (unreset), after it, where it started episodes,
    // and one column of scratch.
    Matrix states_before, states, state;
    Eigen::Array<bool, Eigen::Dynamic, 1> starts;
    bool acted = false;
  };

  std::size_t n_envs_ = 0, n_steps_ = 0;
  std::size_t recorded_ = 0;
  bool bootstrapped_ = false;
  Pending pending_;
};

/// A minibatch gathered from a buffer: what the loss reads, contiguous (column j = sample samples[j]).
/// Its capacity grows to the largest minibatch gathered and is kept.
template <class Phi, class Scalar = float, class Distribution = Categorical>
struct PpoMinibatch {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using distribution_type = Distribution;
  using actions_type = typename Distribution::template actions_type<Scalar>;

  FeatureColumns<Phi, Scalar> features;  ///< the samples' features (normalised as stored)
  actions_type actions;                  ///< the actions taken
  Vector old_log_probs;                  ///< log π_old(a|φ)
  Vector old_values;                     ///< V_old(φ): the values the rollout acted with
  Vector advantages;                     ///< GAE's advantages (not yet normalised)
  Vector targets;                        ///< value targets
  std::size_t count = 0;                 ///< samples gathered (the columns in use)

  /// Makes room for b samples of dimension dim with actions of action_dim entries: no allocation
  /// if there is room.
  void reserve(std::size_t dim, std::size_t b, std::size_t action_dim = 1) {
    if (b <= features.size() && dim == features.dim() && action_dim == Distribution::dim(actions)) return;
    const std::size_t capacity = std::max(b, features.size());
    const auto cols = static_cast<Eigen::Index>(capacity);
    features.resize(dim, capacity);
    Distribution::resize(actions, action_dim, capacity);
    old_log_probs.resize(cols);
    old_values.resize(cols);
    advantages.resize(cols);
    targets.resize(cols);
  }

  /// Gathers buffer's samples (indices s = t·n_envs + i, in any order, repeats allowed). Throws
  /// std::invalid_argument for an index out of range or a buffer whose members do not have its
  /// shape; a refused call changes nothing.
  void gather(const PpoBuffer<Phi, Scalar, Distribution>& buffer, std::span<const std::size_t> samples) {
    const std::size_t n = buffer.samples();
    const auto sized = [n](const Vector& v) { return static_cast<std::size_t>(v.size()) == n; };
    if (buffer.features.size() != n + buffer.n_envs() || Distribution::count(buffer.actions) != n ||
        !sized(buffer.log_probs) || !sized(buffer.values) || !sized(buffer.advantages) || !sized(buffer.targets))
      detail::invalid("PpoMinibatch::gather: buffer's members do not have its shape (", n,
                      " samples): make it with Ppo::make_buffer()");
    for (std::size_t j = 0; j < samples.size(); ++j)
      if (samples[j] >= n)
        detail::invalid("PpoMinibatch::gather: samples[", j, "] = ", samples[j], " is out of range for ", n,
                        " samples");
    reserve(buffer.features.dim(), samples.size(), Distribution::dim(buffer.actions));
    for (std::size_t j = 0; j < samples.size(); ++j) {
      const std::size_t s = samples[j];
      const auto jj = static_cast<Eigen::Index>(j), ss = static_cast<Eigen::Index>(s);
      features.copy_from(j, buffer.features, s);
      Distribution::copy(actions, j, buffer.actions, s);
      old_log_probs[jj] = buffer.log_probs[ss];
      old_values[jj] = buffer.values[ss];
      advantages[jj] = buffer.advantages[ss];
      targets[jj] = buffer.targets[ss];
    }
    count = samples.size();
  }
};

}  // namespace memtrace
