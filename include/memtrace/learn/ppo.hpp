#pragma once
// Proximal policy optimisation for discrete actions, as the paper's official code runs it
// (docs/minigrid-tmaze.md, "PPO recipe"): an actor-critic acting for N environments in lockstep (a
// BatchPolicy for Rollout), a buffer of n_steps x N samples, GAE, and per update `epochs` passes
// over fresh random permutations in `minibatches` minibatches, each one step of Adam on the clipped
// surrogate + 0.5 MSE value loss − 0.01 entropy after one global gradient-norm clip over both
// networks, with a learning rate that decays linearly to 0. Dense (Eigen) and sparse (MultiHot)
// features; float or double. Opt-in: a running normalisation of the (dense) features it acts on.
// See docs/control.md ("PPO").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/actor_critic.hpp"
#include "memtrace/learn/adam.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Every constant of PPO, with the official defaults (the README run of the paper's code:
/// docs/minigrid-tmaze.md, "PPO recipe").
struct PpoOptions {
  std::size_t n_envs = 16;    ///< environments acting in lockstep (the rollout's size)
  std::size_t n_steps = 128;  ///< rollout steps per update: an update learns from n_envs·n_steps samples
  double discount = 0.99;     ///< γ, in [0, 1]
  double gae_lambda = 0.95;   ///< GAE's λ, in [0, 1] (not the memory trace's λ)
  TruncationMode truncation = TruncationMode::official;  ///< what a truncated episode bootstraps from
  std::size_t epochs = 2;                                ///< passes over the samples per update
  std::size_t minibatches = 8;                           ///< minibatches per pass; must divide n_envs·n_steps
  double clip_epsilon = 0.2;                             ///< ε of the clipped ratio, > 0
  double vf_coef = 0.5;                                  ///< weight of the value loss, >= 0
  double ent_coef = 0.01;                                ///< weight of the entropy bonus, >= 0
  double max_grad_norm = 0.5;                            ///< the global gradient-norm clip over both networks, > 0
  double learning_rate = 3e-4;                           ///< Adam's initial learning rate, >= 0
  bool anneal_lr = true;                                 ///< decay the learning rate linearly to 0 over total_updates
  std::size_t total_updates = 0;  ///< the schedule's horizon in updates; 0: set_total_updates or the first train()
  std::vector<std::size_t> hidden_sizes = {64, 64};  ///< hidden layers of the actor and of the critic
  AdamOptions adam = {};                             ///< β1 0.9, β2 0.999, ε 1e-8 (outside the sqrt)
  /// Normalise every feature with running statistics of all the features the agent acted on (a
  /// FeatureNormalizer the agent owns; not in the official code). Dense features only.
  bool normalize_features = false;
  NormalizerOptions normalizer = {};  ///< ε 1e-8, clip 10 (used with normalize_features)
};

/// An episode that ended during a rollout.
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

/// The terms of the PPO loss on one minibatch (means over its samples), and two diagnostics.
struct PpoLoss {
  double loss = 0;           ///< policy_loss + vf_coef·value_loss − ent_coef·entropy
  double policy_loss = 0;    ///< −mean min(r Â, clip(r, 1 − ε, 1 + ε) Â)
  double value_loss = 0;     ///< mean 0.5 (v − target)²
  double entropy = 0;        ///< mean entropy of the policy
  double approx_kl = 0;      ///< mean (r − 1) − log r
  double clip_fraction = 0;  ///< fraction of samples with |r − 1| > ε
};

/// What one update did: the means of the loss terms over its epochs x minibatches, the learning
/// rates of its first and last Adam steps, and the episodes that ended in its rollout.
struct PpoStats {
  std::size_t update = 0;      ///< updates done, this one included
  std::size_t env_steps = 0;   ///< environment steps learned from so far (update x n_envs x n_steps)
  std::size_t adam_steps = 0;  ///< Adam steps taken so far
  double first_learning_rate = 0, last_learning_rate = 0;
  double loss = 0, policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
  double grad_norm = 0;                  ///< mean global gradient norm before clipping
  double advantage_std = 0;              ///< population std of the rollout's advantages (before any normalisation)
  std::span<const EpisodeEnd> episodes;  ///< valid until the next rollout step is recorded

  /// The mean return of the episodes that ended in the rollout (the official mean_tot_rew; the
  /// success rate in the T-maze), NaN if none ended.
  [[nodiscard]] double mean_episode_return() const noexcept {
    if (episodes.empty()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (const EpisodeEnd& e : episodes) sum += e.episode_return;
    return sum / static_cast<double>(episodes.size());
  }
};

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

/// Feature storage of the agent: a dense (dim x n) matrix, or a vector of MultiHot (indices only).
template <class Phi, class Scalar>
class FeatureStore {
 public:
  static constexpr bool sparse = ppo_sparse<Phi>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  void resize(std::size_t dim, std::size_t n) {
    if constexpr (sparse) {
      (void)dim;
      columns_.resize(n);
    } else {
      columns_.resize(static_cast<Eigen::Index>(dim), static_cast<Eigen::Index>(n));
    }
  }
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
  void copy_from(std::size_t j, const FeatureStore& other, std::size_t k) {
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
};
}  // namespace detail

/// The stochastic policy of a Ppo agent, for acting outside training (evaluation, rendering): a
/// Policy and a BatchPolicy that samples from the actor (sample_categorical with the environment's
/// generator) and records nothing. It refers to the agent's actor and, if the agent normalises its
/// features, to its normaliser, which it only reads (it sees the statistics of the moment, and more
/// training moves them): keep the agent alive.
template <class Phi, class Scalar = float>
class PpoPolicy {
 public:
  /// Acts with `actor` on features normalised by `normalizer` (nullptr: the features as they are),
  /// which must have the actor's input dimension (dense features only).
  explicit PpoPolicy(Mlp<Scalar>& actor, const FeatureNormalizer* normalizer = nullptr)
      : actor_(&actor), normalizer_(normalizer) {
    if (normalizer == nullptr) return;
    if constexpr (detail::ppo_sparse<Phi>)
      detail::invalid("PpoPolicy: a normalizer needs dense features, got MultiHot");
    if (normalizer->dim() != actor.input_dim())
      detail::invalid("PpoPolicy: normalizer has dim ", normalizer->dim(),
                      ", expected the actor's input_dim = ", actor.input_dim());
  }

  /// One environment: an action drawn from softmax(actor(φ)) with one uniform_real(gen).
  template <std::uniform_random_bit_generator G>
  Action act(const Phi& features, G& gen) {
    const std::span<const Phi> one(&features, 1);
    detail::check_ppo_features("PpoPolicy::act", "features", one, actor_->input_dim());
    inputs_.resize(actor_->input_dim(), 1);
    inputs_.set(0, features);
    normalize(1);
    return sample_categorical(actor_->forward(inputs_.block(0, 1)).col(0), gen).action;
  }

  /// A batch: actions[i] from features[i] with gens[i] (one forward pass of the actor).
  template <std::uniform_random_bit_generator G>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<Action> actions) {
    if (gens.size() != features.size() || actions.size() != features.size())
      detail::invalid("PpoPolicy::act: features, gens and actions must have one size, got ", features.size(), ", ",
                      gens.size(), " and ", actions.size());
    detail::check_ppo_features("PpoPolicy::act", "features", features, actor_->input_dim());
    if (inputs_.size() != features.size()) inputs_.resize(actor_->input_dim(), features.size());
    for (std::size_t i = 0; i < features.size(); ++i) inputs_.set(i, features[i]);
    normalize(features.size());
    const auto logits = actor_->forward(inputs_.block(0, features.size()));
    for (std::size_t i = 0; i < features.size(); ++i)
      actions[i] = sample_categorical(logits.col(static_cast<Eigen::Index>(i)), gens[i]).action;
  }

 private:
  void normalize(std::size_t count) {
    if constexpr (!detail::ppo_sparse<Phi>)
      if (normalizer_ != nullptr) inputs_.normalize(0, count, *normalizer_);
  }

  Mlp<Scalar>* actor_;
  const FeatureNormalizer* normalizer_;
  detail::FeatureStore<Phi, Scalar> inputs_;
};

namespace detail {
/// Selects, by argument-dependent lookup, the loops of memtrace/loop/ppo.hpp for the deprecated
/// members Ppo::train and Ppo::evaluate (learn/ does not include loop/).
struct PpoLoopTag {};
}  // namespace detail

/// A PPO agent for features of type Phi (a dense Eigen column vector of Scalar, e.g. the
/// Eigen::VectorXf of a float TraceBank, or a MultiHot<C>, e.g. a FrameStack of one-hot views, fed
/// to the networks' sparse first layer) in float (the default) or double.
///
/// Stepped by the caller: act (a BatchPolicy: Rollout calls it with the n_envs features of a step)
/// samples the actions and stores the features, log-probabilities and values; record(batch) (the
/// rollout's sink) stores the step's actions, rewards and episode ends; after n_steps of both,
/// update(bootstrap_features) learns. Or driven: memtrace::train(agent, rollout, total_env_steps,
/// on_update) (memtrace/loop/ppo.hpp) does exactly that in a loop. Everything is allocated by the
/// constructor and the first update; after it act, record and update allocate nothing
/// (MultiHot<dynamic> columns keep the capacity they got).
///
/// Randomness: the initial parameters (actor, then critic) and every epoch's permutation come from
/// the agent's own Xoshiro256StarStar(seed); actions from the environments' generators. Same seed,
/// same environments: the same parameters, bit for bit.
///
/// With options.normalize_features, act first folds the n_envs features into the agent's
/// FeatureNormalizer and then stores them normalised; the bootstrap and final-observation features
/// are normalised with the statistics of the moment, without updating them, and policy() only
/// reads them. Off (the default), nothing of it runs. A step that Rollout refuses after act (an
/// environment with fewer actions than the agent) has already been counted by the normaliser.
template <class Phi, class Scalar = float>
class Ppo {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Ppo: Scalar must be float or double");
  static_assert(detail::PpoFeatures<Phi, Scalar>,
                "Ppo: features must be a dense Eigen column vector of the agent's Scalar (e.g. Eigen::VectorXf for "
                "Ppo<Eigen::VectorXf, float>) or a MultiHot<C>");

 public:
  using features_type = Phi;
  using scalar_type = Scalar;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  static constexpr bool sparse = detail::ppo_sparse<Phi>;

  /// An agent for features of dimension input_dim and num_actions actions; networks initialised
  /// (ActorCritic::initialize_orthogonal) from Xoshiro256StarStar(seed). Bad options throw
  /// std::invalid_argument naming the option and its value, before anything is allocated.
  Ppo(std::size_t input_dim, std::size_t num_actions, PpoOptions options = {}, std::uint64_t seed = 0)
      : options_(checked(std::move(options), input_dim, num_actions)),
        samples_(options_.n_envs * options_.n_steps),
        batch_(samples_ / options_.minibatches),
        gen_(seed),
        nets_(input_dim, num_actions, options_.hidden_sizes),
        actor_adam_(nets_.actor().num_parameters(), options_.adam),
        critic_adam_(nets_.critic().num_parameters(), options_.adam) {
    if (options_.normalize_features) normalizer_ = FeatureNormalizer(input_dim, options_.normalizer);
    nets_.initialize_orthogonal(gen_);
    const std::size_t n = options_.n_envs;
    features_.resize(input_dim, samples_ + n);  // the last n columns: the bootstrap features
    steps_.resize(samples_);
    log_probs_ = Vector::Zero(static_cast<Eigen::Index>(samples_));
    values_ = Vector::Zero(static_cast<Eigen::Index>(samples_));
    final_values_ = Vector::Zero(static_cast<Eigen::Index>(samples_));
    advantages_ = Vector::Zero(static_cast<Eigen::Index>(samples_));
    targets_ = Vector::Zero(static_cast<Eigen::Index>(samples_));
    bootstrap_values_ = Vector::Zero(static_cast<Eigen::Index>(n));
    permutation_.resize(samples_);
    episodes_.reserve(samples_);
    grow_minibatch(batch_);
    nets_.reserve(std::max(batch_, n));
  }

  // ---- acting and recording ----

  /// BatchPolicy: for the current rollout step, stores the n_envs features, runs one forward pass
  /// of both networks over them, and draws actions[i] = sample_categorical(logits_i, gens[i]),
  /// keeping its log-probability and the value. Throws std::invalid_argument for spans whose size
  /// is not n_envs or features that do not fit input_dim(), std::logic_error when n_steps steps are
  /// already recorded (call update); a refused call changes nothing.
  template <std::uniform_random_bit_generator G>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<Action> actions) {
    const std::size_t n = options_.n_envs;
    if (features.size() != n)
      detail::invalid("Ppo::act: features holds ", features.size(), " entries, expected options.n_envs = ", n);
    if (gens.size() != n)
      detail::invalid("Ppo::act: gens holds ", gens.size(), " entries, expected options.n_envs = ", n);
    if (actions.size() != n)
      detail::invalid("Ppo::act: actions holds ", actions.size(), " entries, expected options.n_envs = ", n);
    if (recorded_ == options_.n_steps)
      throw std::logic_error(detail::message("Ppo::act: the buffer already holds n_steps = ", options_.n_steps,
                                             " steps; call update first"));
    detail::check_ppo_features("Ppo::act", "features", features, input_dim());
    const std::size_t base = recorded_ * n;
    if constexpr (!sparse)
      if (options_.normalize_features) normalizer_.update(features);  // refuses non-finite features
    for (std::size_t i = 0; i < n; ++i) features_.set(base + i, features[i]);
    normalize(features_, base, n);
    const auto input = features_.block(base, n);
    const auto logits = nets_.actor().forward(input);
    for (std::size_t i = 0; i < n; ++i) {
      const CategoricalSample s = sample_categorical(logits.col(static_cast<Eigen::Index>(i)), gens[i]);
      actions[i] = s.action;
      log_probs_[static_cast<Eigen::Index>(base + i)] = static_cast<Scalar>(s.log_prob);
    }
    values_.segment(static_cast<Eigen::Index>(base), static_cast<Eigen::Index>(n)) =
        nets_.critic().forward(input).row(0).transpose();
    acted_ = true;
  }

  /// The rollout's sink: stores the step that the last act acted on (actions, rewards, episode
  /// ends; in textbook truncation mode also the value of the final observation of every episode
  /// truncated and not terminated, from batch.next_features) and lists the episodes that ended. Throws
  /// std::logic_error without a preceding act, std::invalid_argument for a batch of the wrong size.
  void record(const RolloutBatch<Phi>& batch) {
    const std::size_t n = options_.n_envs;
    if (!acted_) throw std::logic_error("Ppo::record: no act for this step (call act on batch.features first)");
    if (batch.steps.size() != n)
      detail::invalid("Ppo::record: batch.steps holds ", batch.steps.size(), " entries, expected options.n_envs = ", n);
    const bool textbook = options_.truncation == TruncationMode::textbook;
    if (textbook) {
      if (batch.next_features.size() != n)
        detail::invalid("Ppo::record: batch.next_features holds ", batch.next_features.size(),
                        " entries, expected options.n_envs = ", n);
      detail::check_ppo_features("Ppo::record", "batch.next_features", batch.next_features, input_dim());
    }
    if (recorded_ == 0) episodes_.clear();
    const std::size_t base = recorded_ * n;
    for (std::size_t i = 0; i < n; ++i) {
      const ActedStep& s = batch.steps[i];
      steps_[base + i] = s;
      if (s.terminated || s.truncated)
        episodes_.push_back({i, recorded_, s.episode_return, s.episode_length, s.terminated, s.truncated});
      if (textbook && s.truncated && !s.terminated)
        final_values_[static_cast<Eigen::Index>(base + i)] = value(batch.next_features[i]);
    }
    ++recorded_;
    acted_ = false;
    advantages_ready_ = false;
  }

  // ---- learning ----

  /// Advantages and targets of the recorded rollout (generalized_advantages with the options'
  /// γ, gae_lambda and truncation), bootstrapping from the critic's values of bootstrap_features,
  /// the n_envs features the environments continue from (after any episode-end reset).
  void compute_advantages(std::span<const Phi> bootstrap_features) {
    const std::size_t n = options_.n_envs;
    if (recorded_ != options_.n_steps)
      throw std::logic_error(detail::message("Ppo::compute_advantages: the buffer holds ", recorded_,
                                             " steps, expected n_steps = ", options_.n_steps));
    if (bootstrap_features.size() != n)
      detail::invalid("Ppo::compute_advantages: bootstrap_features holds ", bootstrap_features.size(),
                      " entries, expected options.n_envs = ", n);
    detail::check_ppo_features("Ppo::compute_advantages", "bootstrap_features", bootstrap_features, input_dim());
    for (std::size_t i = 0; i < n; ++i) features_.set(samples_ + i, bootstrap_features[i]);
    normalize(features_, samples_, n);
    bootstrap_values_ = nets_.critic().forward(features_.block(samples_, n)).row(0).transpose();
    const GaeOptions gae{options_.discount, options_.gae_lambda, options_.truncation};
    generalized_advantages<Scalar>(gae, n, steps_, as_span(values_), as_span(bootstrap_values_), as_span(final_values_),
                                   as_span(advantages_), as_span(targets_));
    advantages_ready_ = true;
  }

  /// The PPO loss of docs/minigrid-tmaze.md ("PPO recipe") on the given samples (indices into the
  /// rollout, s = t·n_envs + i), at the current parameters, after compute_advantages: one forward
  /// pass of both networks,
  ///   r = exp(log π(a|φ) − log π_old(a|φ)),   Â = (A − mean A) / (std A + 1e-8)  (over these samples,
  ///   population std),   loss = −mean min(r Â, clip(r, 1 ± ε) Â) + vf_coef·mean 0.5 (v − target)²
  ///   − ent_coef·mean H(π).
  /// With gradients = true the networks' gradients() are overwritten with d loss / dθ (dL/dlogits
  /// and dL/dv by hand, then Mlp::backward); nothing is clipped or stepped.
  PpoLoss minibatch_loss(std::span<const std::size_t> samples, bool gradients) {
    if (!advantages_ready_)
      throw std::logic_error("Ppo::minibatch_loss: no advantages for the recorded rollout (call compute_advantages)");
    if (samples.empty()) detail::invalid("Ppo::minibatch_loss: samples must hold at least one index, got none");
    for (std::size_t j = 0; j < samples.size(); ++j)
      if (samples[j] >= samples_)
        detail::invalid("Ppo::minibatch_loss: samples[", j, "] = ", samples[j], " is out of range for ", samples_,
                        " samples");
    grow_minibatch(samples.size());
    return loss(samples, gradients);
  }

  /// One update from the n_steps recorded steps: compute_advantages(bootstrap_features), then
  /// `epochs` times a fresh permutation (identity shuffled by Fisher–Yates with uniform_index on the
  /// agent's generator) cut into `minibatches` minibatches, each: minibatch_loss with gradients,
  /// clip_by_global_norm(max_grad_norm) over the actor's and the critic's gradients together, and
  /// one Adam step of both networks with the learning rate of the schedule. Empties the buffer.
  /// Throws std::logic_error unless n_steps steps are recorded, or when the learning rate anneals
  /// and no horizon is set (options.total_updates, set_total_updates or the first train()).
  const PpoStats& update(std::span<const Phi> bootstrap_features) {
    if (options_.anneal_lr && horizon_ == 0)
      throw std::logic_error(
          "Ppo::update: the annealed learning rate needs a horizon: set options.total_updates, call "
          "set_total_updates or use train()");
    compute_advantages(bootstrap_features);
    const std::size_t count = options_.epochs * options_.minibatches;
    PpoStats stats;
    const double advantage_mean = advantages_.template cast<double>().mean();
    stats.advantage_std = std::sqrt((advantages_.template cast<double>().array() - advantage_mean).square().mean());
    double sums[7] = {};
    for (std::size_t epoch = 0; epoch < options_.epochs; ++epoch) {
      for (std::size_t s = 0; s < samples_; ++s) permutation_[s] = s;
      for (std::size_t s = samples_; s-- > 1;)
        std::swap(permutation_[s], permutation_[static_cast<std::size_t>(uniform_index(gen_, s + 1))]);
      for (std::size_t m = 0; m < options_.minibatches; ++m) {
        const PpoLoss l = loss(std::span<const std::size_t>(permutation_.data() + m * batch_, batch_), true);
        const double norm =
            clip_by_global_norm(options_.max_grad_norm, nets_.actor().gradients(), nets_.critic().gradients());
        const double rate = learning_rate();
        if (epoch == 0 && m == 0) stats.first_learning_rate = rate;
        stats.last_learning_rate = rate;
        actor_adam_.step(nets_.actor().parameters(), nets_.actor().gradients(), rate);
        critic_adam_.step(nets_.critic().parameters(), nets_.critic().gradients(), rate);
        const double terms[7] = {l.loss, l.policy_loss, l.value_loss, l.entropy, l.approx_kl, l.clip_fraction, norm};
        for (int k = 0; k < 7; ++k) sums[k] += terms[k];
      }
    }
    const auto c = static_cast<double>(count);
    stats.loss = sums[0] / c;
    stats.policy_loss = sums[1] / c;
    stats.value_loss = sums[2] / c;
    stats.entropy = sums[3] / c;
    stats.approx_kl = sums[4] / c;
    stats.clip_fraction = sums[5] / c;
    stats.grad_norm = sums[6] / c;
    ++updates_;
    stats.update = updates_;
    stats.env_steps = updates_ * samples_;
    stats.adam_steps = actor_adam_.count();
    stats.episodes = episodes_;
    stats_ = stats;
    recorded_ = 0;
    return stats_;
  }

  /// Deprecated in 0.3.0, removed in 0.4.0: the loop is memtrace::train(agent, rollout,
  /// total_env_steps[, on_update]) of memtrace/loop/ppo.hpp.
  template <class R, class... OnUpdate>
  [[deprecated("Ppo::train: use memtrace::train(agent, rollout, total_env_steps) of memtrace/loop/ppo.hpp")]] void
  train(R& rollout, std::size_t total_env_steps, OnUpdate&&... on_update) {
    if constexpr (requires { ppo_loop(detail::PpoLoopTag{}, *this, rollout, total_env_steps, on_update...); })
      ppo_loop(detail::PpoLoopTag{}, *this, rollout, total_env_steps, std::forward<OnUpdate>(on_update)...);
    else
      static_assert(sizeof(R) == 0,
                    "Ppo::train: the loop moved to memtrace/loop/ppo.hpp: include it (or "
                    "memtrace/core.hpp) and call memtrace::train(agent, rollout, total_env_steps)");
  }

  // ---- acting outside training ----

  /// The stochastic policy (the actor, sampled), recording nothing: for evaluation and replays.
  [[nodiscard]] PpoPolicy<Phi, Scalar> policy() {
    return PpoPolicy<Phi, Scalar>(nets_.actor(), options_.normalize_features ? &normalizer_ : nullptr);
  }

  /// Deprecated in 0.3.0, removed in 0.4.0: memtrace::evaluate(agent, env, memory, gen,
  /// episodes[, max_steps]) of memtrace/loop/ppo.hpp.
  template <class Env, class M, class G, class... MaxSteps>
  [[deprecated(
      "Ppo::evaluate: use memtrace::evaluate(agent, env, ...) of memtrace/loop/ppo.hpp")]] std::vector<EpisodeEnd>
  evaluate(const Env& env, const M& memory, G& gen, std::size_t episodes, MaxSteps... max_steps) {
    if constexpr (requires { ppo_loop(detail::PpoLoopTag{}, *this, env, memory, gen, episodes, max_steps...); })
      return ppo_loop(detail::PpoLoopTag{}, *this, env, memory, gen, episodes, max_steps...);
    else
      static_assert(sizeof(Env) == 0,
                    "Ppo::evaluate: the loop moved to memtrace/loop/ppo.hpp: include it (or "
                    "memtrace/core.hpp) and call memtrace::evaluate(agent, env, memory, gen, episodes)");
  }

  // ---- inspection ----

  [[nodiscard]] const PpoOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return nets_.input_dim(); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return nets_.num_actions(); }
  [[nodiscard]] ActorCritic<Scalar>& networks() noexcept { return nets_; }
  [[nodiscard]] const ActorCritic<Scalar>& networks() const noexcept { return nets_; }
  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return nets_.actor(); }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return nets_.critic(); }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return nets_.actor(); }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return nets_.critic(); }
  /// Steps recorded in the buffer (0 .. n_steps).
  [[nodiscard]] std::size_t recorded_steps() const noexcept { return recorded_; }
  [[nodiscard]] std::size_t updates() const noexcept { return updates_; }
  [[nodiscard]] std::size_t adam_steps() const noexcept { return actor_adam_.count(); }
  /// The schedule's horizon in updates (0 until set).
  [[nodiscard]] std::size_t total_updates() const noexcept { return horizon_; }
  /// Sets the schedule's horizon: the learning rate anneals to 0 over total_updates updates
  /// (train() sets it to its number of updates when it is still 0). Throws std::invalid_argument
  /// for 0 or a horizon whose Adam steps (·epochs·minibatches) overflow.
  void set_total_updates(std::size_t total_updates) {
    if (total_updates == 0) detail::invalid("Ppo::set_total_updates: total_updates must be at least 1, got 0");
    set_horizon("Ppo::set_total_updates", total_updates);
  }
  /// The learning rate of the next Adam step: lr0·(1 − min(c, T)/T) with c = adam_steps() and
  /// T = total_updates()·epochs·minibatches when annealing, lr0 otherwise.
  [[nodiscard]] double learning_rate() const noexcept {
    if (!options_.anneal_lr) return options_.learning_rate;
    if (horizon_ == 0) return options_.learning_rate;
    return LinearSchedule(options_.learning_rate,
                          horizon_ * options_.epochs * options_.minibatches)(actor_adam_.count());
  }
  /// Per sample s = t·n_envs + i of the recorded rollout: the log-probability of the action taken
  /// and the value, at acting time; the steps; advantages and targets (after compute_advantages).
  [[nodiscard]] const Vector& log_probs() const noexcept { return log_probs_; }
  [[nodiscard]] const Vector& values() const noexcept { return values_; }
  [[nodiscard]] std::span<const ActedStep> steps() const noexcept { return steps_; }
  [[nodiscard]] const Vector& advantages() const noexcept { return advantages_; }
  [[nodiscard]] const Vector& targets() const noexcept { return targets_; }
  /// The feature normaliser (dim 0 unless options.normalize_features).
  [[nodiscard]] const FeatureNormalizer& normalizer() const noexcept { return normalizer_; }
  /// Stops (and resumes) act's updates of the normaliser's statistics (FeatureNormalizer::freeze).
  void freeze_normalizer() noexcept { normalizer_.freeze(); }
  void unfreeze_normalizer() noexcept { normalizer_.unfreeze(); }
  /// The statistics of the last update.
  [[nodiscard]] const PpoStats& last_stats() const noexcept { return stats_; }
  /// The agent's generator (parameters at construction, permutations at every epoch).
  [[nodiscard]] const DefaultGenerator& generator() const noexcept { return gen_; }

 private:
  static PpoOptions checked(PpoOptions o, std::size_t input_dim, std::size_t num_actions) {
    constexpr const char* who = "Ppo";
    if (input_dim == 0) detail::invalid(who, ": input_dim must be at least 1, got 0");
    if (num_actions == 0) detail::invalid(who, ": num_actions must be at least 1, got 0");
    if (o.n_envs == 0) detail::invalid(who, ": options.n_envs must be at least 1, got 0");
    if (o.n_steps == 0) detail::invalid(who, ": options.n_steps must be at least 1, got 0");
    if (o.epochs == 0) detail::invalid(who, ": options.epochs must be at least 1, got 0");
    if (o.minibatches == 0) detail::invalid(who, ": options.minibatches must be at least 1, got 0");
    const std::size_t samples = detail::checked_mul(o.n_envs, o.n_steps);
    if (samples == 0 || samples > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      detail::invalid(who, ": options.n_envs·n_steps = ", o.n_envs, "·", o.n_steps, " is too large");
    if (samples % o.minibatches != 0)
      detail::invalid(who, ": options.minibatches must divide n_envs·n_steps = ", samples, ", got ", o.minibatches);
    if (detail::checked_mul(o.epochs, o.minibatches) == 0)
      detail::invalid(who, ": options.epochs·minibatches overflows");
    if (!(o.discount >= 0.0 && o.discount <= 1.0))
      detail::invalid(who, ": options.discount must be in [0, 1], got ", o.discount);
    if (!(o.gae_lambda >= 0.0 && o.gae_lambda <= 1.0))
      detail::invalid(who, ": options.gae_lambda must be in [0, 1], got ", o.gae_lambda);
    if (o.truncation != TruncationMode::official && o.truncation != TruncationMode::textbook)
      detail::invalid(who, ": options.truncation must be official or textbook, got ", static_cast<int>(o.truncation));
    const auto finite = [](double x) { return std::isfinite(x); };
    if (!(o.clip_epsilon > 0.0 && finite(o.clip_epsilon)))
      detail::invalid(who, ": options.clip_epsilon must be positive and finite, got ", o.clip_epsilon);
    if (!(o.vf_coef >= 0.0 && finite(o.vf_coef)))
      detail::invalid(who, ": options.vf_coef must be finite and >= 0, got ", o.vf_coef);
    if (!(o.ent_coef >= 0.0 && finite(o.ent_coef)))
      detail::invalid(who, ": options.ent_coef must be finite and >= 0, got ", o.ent_coef);
    if (!(o.max_grad_norm > 0.0 && finite(o.max_grad_norm)))
      detail::invalid(who, ": options.max_grad_norm must be positive and finite, got ", o.max_grad_norm);
    if (!(o.learning_rate >= 0.0 && finite(o.learning_rate)))
      detail::invalid(who, ": options.learning_rate must be finite and >= 0, got ", o.learning_rate);
    if (!(o.adam.beta1 >= 0.0 && o.adam.beta1 < 1.0))
      detail::invalid(who, ": options.adam.beta1 must be in [0, 1), got ", o.adam.beta1);
    if (!(o.adam.beta2 >= 0.0 && o.adam.beta2 < 1.0))
      detail::invalid(who, ": options.adam.beta2 must be in [0, 1), got ", o.adam.beta2);
    if (!(o.adam.epsilon >= 0.0 && finite(o.adam.epsilon)))
      detail::invalid(who, ": options.adam.epsilon must be finite and >= 0, got ", o.adam.epsilon);
    if (o.normalize_features) {
      if constexpr (sparse)
        detail::invalid(who,
                        ": options.normalize_features needs dense features; MultiHot features (a frame stack) "
                        "are refused, since centring would make them dense (docs/control.md)");
      FeatureNormalizer::check_options(who, "options.normalizer.", o.normalizer);
    }
    for (std::size_t l = 0; l < o.hidden_sizes.size(); ++l)
      if (o.hidden_sizes[l] == 0) detail::invalid(who, ": options.hidden_sizes[", l, "] must be at least 1, got 0");
    if (o.anneal_lr && o.total_updates != 0 && detail::checked_mul(o.total_updates, o.epochs * o.minibatches) == 0)
      detail::invalid(who, ": options.total_updates·epochs·minibatches overflows, total_updates = ", o.total_updates);
    return o;
  }

  void set_horizon(const char* who, std::size_t updates) {
    if (detail::checked_mul(updates, options_.epochs * options_.minibatches) == 0)
      detail::invalid(who, ": total_updates·epochs·minibatches overflows, total_updates = ", updates);
    horizon_ = updates;
  }

  template <class V>
  static std::span<typename V::Scalar> as_span(V& v) noexcept {
    return {v.data(), static_cast<std::size_t>(v.size())};
  }
  template <class V>
  static std::span<const typename V::Scalar> as_span(const V& v) noexcept {
    return {v.data(), static_cast<std::size_t>(v.size())};
  }

  /// The critic's value of one feature vector (a forward pass of batch 1 through the first column of
  /// the minibatch workspace, which every update fills: no allocation for MultiHot<dynamic> either).
  Scalar value(const Phi& phi) {
    minibatch_.set(0, phi);
    normalize(minibatch_, 0, 1);
    return nets_.critic().forward(minibatch_.block(0, 1))(0, 0);
  }

  /// Normalises columns [first, first + count) of `store` if the options ask for it.
  void normalize(detail::FeatureStore<Phi, Scalar>& store, std::size_t first, std::size_t count) const {
    if constexpr (!sparse)
      if (options_.normalize_features) store.normalize(first, count, normalizer_);
  }

  /// Makes the minibatch workspace hold at least b samples.
  void grow_minibatch(std::size_t b) {
    if (b <= capacity_) return;
    const auto k = static_cast<Eigen::Index>(num_actions()), cols = static_cast<Eigen::Index>(b);
    minibatch_.resize(input_dim(), b);
    actions_.resize(b);
    probs_.resize(k, cols);
    log_probs_all_.resize(k, cols);
    d_logits_.resize(k, cols);
    d_values_.resize(1, cols);
    row_max_.resize(cols);
    row_sum_.resize(cols);
    entropy_.resize(cols);
    coef_.resize(cols);
    capacity_ = b;
  }

  /// The loss (and gradients) on the given samples; indices already checked.
  PpoLoss loss(std::span<const std::size_t> samples, bool gradients) {
    const std::size_t b = samples.size();
    const auto cols = static_cast<Eigen::Index>(b);
    const auto scale = static_cast<Scalar>(1.0 / static_cast<double>(b));
    // Gather the minibatch and normalise its advantages (population std, + 1e-8), in double.
    double mean = 0;
    for (std::size_t j = 0; j < b; ++j) {
      minibatch_.copy_from(j, features_, samples[j]);
      actions_[j] = steps_[samples[j]].action;
      mean += static_cast<double>(advantages_[static_cast<Eigen::Index>(samples[j])]);
    }
    mean /= static_cast<double>(b);
    double var = 0;
    for (std::size_t j = 0; j < b; ++j) {
      const double d = static_cast<double>(advantages_[static_cast<Eigen::Index>(samples[j])]) - mean;
      var += d * d;
    }
    const double denominator = std::sqrt(var / static_cast<double>(b)) + 1e-8;

    const auto input = minibatch_.block(0, b);
    const auto logits = nets_.actor().forward(input);
    const auto v_new = nets_.critic().forward(input);

    // log-softmax and entropy of every column, vectorised over the minibatch.
    auto m = row_max_.head(cols);
    auto sum = row_sum_.head(cols);
    auto p = probs_.leftCols(cols);
    auto logp = log_probs_all_.leftCols(cols);
    auto h = entropy_.head(cols);
    m = logits.colwise().maxCoeff();
    p = (logits.rowwise() - m).array().exp().matrix();
    sum = p.colwise().sum();
    p.array().rowwise() /= sum.array();
    sum.array() = m.array() + sum.array().log();  // log Z (in place: broadcasting an expression would allocate)
    logp = logits.rowwise() - sum;
    h = -(p.array() * logp.array()).colwise().sum().matrix();

    const auto lo = static_cast<Scalar>(1.0 - options_.clip_epsilon),
               hi = static_cast<Scalar>(1.0 + options_.clip_epsilon);
    const auto vf = static_cast<Scalar>(options_.vf_coef);
    double policy_loss = 0, value_loss = 0, entropy = 0, kl = 0, clipped = 0;
    auto coef = coef_.head(cols);
    auto dv = d_values_.leftCols(cols);
    for (std::size_t j = 0; j < b; ++j) {
      const auto s = static_cast<Eigen::Index>(samples[j]);
      const auto jj = static_cast<Eigen::Index>(j);
      const Scalar adv = static_cast<Scalar>((static_cast<double>(advantages_[s]) - mean) / denominator);
      const Scalar log_ratio = logp(static_cast<Eigen::Index>(actions_[j]), jj) - log_probs_[s];
      const Scalar ratio = std::exp(log_ratio);
      const Scalar surrogate = ratio * adv, clipped_surrogate = std::clamp(ratio, lo, hi) * adv;
      const bool unclipped = surrogate <= clipped_surrogate;  // the min is the unclipped term: it has a gradient
      policy_loss -= static_cast<double>(unclipped ? surrogate : clipped_surrogate);
      coef[jj] = unclipped ? -adv * scale * ratio : Scalar(0);  // d loss / d log π(a)
      kl += static_cast<double>((ratio - Scalar(1)) - log_ratio);
      clipped += std::abs(static_cast<double>(ratio) - 1.0) > options_.clip_epsilon ? 1.0 : 0.0;
      const Scalar error = v_new(0, jj) - targets_[s];
      value_loss += 0.5 * static_cast<double>(error) * static_cast<double>(error);
      dv(0, jj) = vf * error * scale;
      entropy += static_cast<double>(h[jj]);
    }
    const double nb = static_cast<double>(b);
    PpoLoss out;
    out.policy_loss = policy_loss / nb;
    out.value_loss = value_loss / nb;
    out.entropy = entropy / nb;
    out.approx_kl = kl / nb;
    out.clip_fraction = clipped / nb;
    out.loss = out.policy_loss + options_.vf_coef * out.value_loss - options_.ent_coef * out.entropy;
    if (!gradients) return out;

    // dL/dlogits = coef_j (e_a − π_j) + (ent_coef / B) π_j ⊙ (log π_j + H_j)
    // (the surrogate through d log π(a)/dℓ = e_a − π; the entropy through dH/dℓ = −π ⊙ (log π + H)).
    auto dl = d_logits_.leftCols(cols);
    const auto ent = static_cast<Scalar>(options_.ent_coef) * scale;
    dl = ((logp.array().rowwise() + h.array()) * ent).matrix();
    dl.array().rowwise() -= coef.array();
    dl.array() *= p.array();
    for (std::size_t j = 0; j < b; ++j)
      dl(static_cast<Eigen::Index>(actions_[j]), static_cast<Eigen::Index>(j)) += coef[static_cast<Eigen::Index>(j)];
    nets_.actor().backward(input, dl);
    nets_.critic().backward(input, dv);
    return out;
  }

  PpoOptions options_;
  std::size_t samples_;  // n_envs·n_steps
  std::size_t batch_;    // samples per minibatch
  DefaultGenerator gen_;
  ActorCritic<Scalar> nets_;
  Adam<Scalar> actor_adam_, critic_adam_;
  FeatureNormalizer normalizer_;  // dim 0 unless options_.normalize_features
  std::size_t horizon_ = options_.total_updates;

  // The rollout buffer, sample s = t·n_envs + i (features: n_envs more columns for the bootstrap).
  detail::FeatureStore<Phi, Scalar> features_;
  std::vector<ActedStep> steps_;
  Vector log_probs_, values_, final_values_, advantages_, targets_, bootstrap_values_;
  std::vector<EpisodeEnd> episodes_;
  std::size_t recorded_ = 0;
  bool acted_ = false;
  bool advantages_ready_ = false;

  // Minibatch workspace.
  std::vector<std::size_t> permutation_;
  detail::FeatureStore<Phi, Scalar> minibatch_;
  std::vector<Action> actions_;
  Matrix probs_, log_probs_all_, d_logits_;
  RowVector d_values_, row_max_, row_sum_, entropy_, coef_;
  std::size_t capacity_ = 0;

  std::size_t updates_ = 0;
  PpoStats stats_;
};

}  // namespace memtrace
