#pragma once
// PPO's data: the rollout buffer an agent fills while acting (features, steps, log π, V, the
// bootstrap features, the episodes that ended) and the minibatch its loss reads (learn/ppo_loss.hpp).
// Plain data with a documented layout, so that an update, a test or a checkpoint reads one place.
// See docs/control.md ("PPO's data path").

#include <Eigen/Core>
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
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

/// The rollout buffer of PPO: n_steps lockstep steps of n_envs environments, sample s = t·n_envs + i
/// (step t, environment i). Ppo::act writes a step's features (normalised, if the agent normalises),
/// log-probabilities and values; Ppo::record its steps, the episodes that ended and, in textbook
/// truncation, the final values; Ppo::bootstrap the bootstrap features (the n_envs columns after the
/// samples); Ppo::update their values, the advantages and the targets, and empties it. Two fill
/// levels say what comes next: `recorded` steps are complete, `acted` steps have their features
/// stored (recorded or recorded + 1; the bootstrap features count as step n_steps, so n_steps + 1
/// means bootstrapped). The members are public for reading (tests, diagnostics, checkpoints); the
/// agent checks the buffer's shape and fill levels at every call, but data written by hand is
/// the writer's responsibility.
template <class Phi, class Scalar = float>
struct PpoBuffer {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  std::size_t n_envs = 0;
  std::size_t n_steps = 0;
  FeatureColumns<Phi, Scalar> features;  ///< n_envs·n_steps sample columns, then n_envs bootstrap columns
  /// per sample: action (an index; 0 for continuous actions), reward (times options.reward_scale:
  /// what GAE reads), episode end (with the unscaled return)
  std::vector<ActedStep> steps;
  Matrix continuous_actions;   ///< per sample (a column): the continuous action (k x samples; 0 rows for index actions)
  Vector log_probs;            ///< per sample: log π_old(a|φ) at acting time
  Vector values;               ///< per sample: V(φ) at acting time
  Vector final_values;         ///< per sample: V of a truncated episode's final features (textbook)
  Vector bootstrap_values;     ///< per environment: V of the bootstrap features
  Vector advantages, targets;  ///< per sample: GAE's advantages and the value targets
  std::vector<EpisodeEnd> episodes;  ///< the episodes that ended in the recorded steps
  std::size_t recorded = 0;          ///< steps recorded (0 .. n_steps)
  std::size_t acted = 0;             ///< steps whose features are stored (0 .. n_steps + 1)

  PpoBuffer() = default;
  /// A buffer for features of dimension input_dim (and continuous actions of dimension action_dim,
  /// 0 for index actions), everything allocated (sizes checked by the agent).
  PpoBuffer(std::size_t input_dim, std::size_t envs, std::size_t rollout_steps, std::size_t action_dim = 0)
      : n_envs(envs), n_steps(rollout_steps) {
    const std::size_t n = samples();
    features.resize(input_dim, n + n_envs);
    steps.resize(n);
    continuous_actions = Matrix::Zero(static_cast<Eigen::Index>(action_dim), static_cast<Eigen::Index>(n));
    log_probs = Vector::Zero(static_cast<Eigen::Index>(n));
    values = Vector::Zero(static_cast<Eigen::Index>(n));
    final_values = Vector::Zero(static_cast<Eigen::Index>(n));
    advantages = Vector::Zero(static_cast<Eigen::Index>(n));
    targets = Vector::Zero(static_cast<Eigen::Index>(n));
    bootstrap_values = Vector::Zero(static_cast<Eigen::Index>(n_envs));
    episodes.reserve(n);
  }

  /// n_envs·n_steps.
  [[nodiscard]] std::size_t samples() const noexcept { return n_envs * n_steps; }
  /// n_steps steps recorded.
  [[nodiscard]] bool full() const noexcept { return recorded == n_steps; }
  /// The bootstrap features are stored: update may learn.
  [[nodiscard]] bool bootstrapped() const noexcept { return acted == n_steps + 1; }
  /// Empties the buffer (a rollout abandoned halfway, e.g. after an environment threw); the
  /// episodes of the last rollout stay listed until the next record.
  void clear() noexcept { recorded = acted = 0; }
};

/// A minibatch gathered from a buffer: what the loss reads, contiguous (column j = sample samples[j]).
/// Its capacity grows to the largest minibatch gathered and is kept.
template <class Phi, class Scalar = float>
struct PpoMinibatch {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  FeatureColumns<Phi, Scalar> features;  ///< the samples' features (normalised as stored)
  std::vector<Action> actions;           ///< the actions taken (index actions)
  Matrix continuous_actions;             ///< the continuous actions taken, one per column (0 rows for index actions)
  Vector old_log_probs;                  ///< log π_old(a|φ)
  Vector advantages;                     ///< GAE's advantages (not yet normalised)
  Vector targets;                        ///< value targets
  std::size_t count = 0;                 ///< samples gathered (the columns in use)

  /// Makes room for b samples of dimension dim, with continuous actions of dimension action_dim (0
  /// for index actions): no allocation if there is room.
  void reserve(std::size_t dim, std::size_t b, std::size_t action_dim = 0) {
    if (b <= actions.size() && dim == features.dim() &&
        static_cast<Eigen::Index>(action_dim) == continuous_actions.rows())
      return;
    const std::size_t capacity = std::max(b, actions.size());
    const auto cols = static_cast<Eigen::Index>(capacity);
    features.resize(dim, capacity);
    actions.resize(capacity);
    continuous_actions.resize(static_cast<Eigen::Index>(action_dim), cols);
    old_log_probs.resize(cols);
    advantages.resize(cols);
    targets.resize(cols);
  }

  /// Gathers buffer's samples (indices s = t·n_envs + i, in any order, repeats allowed). Throws
  /// std::invalid_argument for an index out of range or a buffer whose members do not have its
  /// shape; a refused call changes nothing.
  void gather(const PpoBuffer<Phi, Scalar>& buffer, std::span<const std::size_t> samples) {
    const std::size_t n = buffer.samples();
    const auto sized = [n](const Vector& v) { return static_cast<std::size_t>(v.size()) == n; };
    if (buffer.features.size() != n + buffer.n_envs || buffer.steps.size() != n || !sized(buffer.log_probs) ||
        !sized(buffer.advantages) || !sized(buffer.targets) ||
        (buffer.continuous_actions.rows() > 0 && static_cast<std::size_t>(buffer.continuous_actions.cols()) != n))
      detail::invalid("PpoMinibatch::gather: buffer's members do not have its shape (", n,
                      " samples): make it with Ppo::make_buffer()");
    for (std::size_t j = 0; j < samples.size(); ++j)
      if (samples[j] >= n)
        detail::invalid("PpoMinibatch::gather: samples[", j, "] = ", samples[j], " is out of range for ", n,
                        " samples");
    const Eigen::Index k = buffer.continuous_actions.rows();
    reserve(buffer.features.dim(), samples.size(), static_cast<std::size_t>(k));
    for (std::size_t j = 0; j < samples.size(); ++j) {
      const std::size_t s = samples[j];
      const auto jj = static_cast<Eigen::Index>(j), ss = static_cast<Eigen::Index>(s);
      features.copy_from(j, buffer.features, s);
      actions[j] = buffer.steps[s].action;
      if (k > 0) continuous_actions.col(jj) = buffer.continuous_actions.col(ss);
      old_log_probs[jj] = buffer.log_probs[ss];
      advantages[jj] = buffer.advantages[ss];
      targets[jj] = buffer.targets[ss];
    }
    count = samples.size();
  }
};

}  // namespace memtrace
