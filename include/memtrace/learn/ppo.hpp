#pragma once
// Proximal policy optimisation for discrete actions, as the paper's official code runs it
// (docs/minigrid-tmaze.md, "PPO recipe"): an actor-critic acting for N environments in lockstep
// into a buffer of n_steps x N samples (learn/ppo_buffer.hpp), GAE, and per update `epochs` passes
// over fresh random permutations in `minibatches` minibatches, each one step of Adam on the clipped
// surrogate + 0.5 MSE value loss − 0.01 entropy after one global gradient-norm clip over the
// network's parameter blocks, with a learning rate that decays linearly to 0. The network is the
// paper's two MLPs or any ActorCriticNetwork. Dense (Eigen) and sparse (MultiHot) features; float
// or double. Opt-in: a running normalisation of the (dense) features it acts on.
// See docs/control.md ("PPO").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
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
#include "memtrace/learn/gaussian_actor_critic.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/learn/ppo_loss.hpp"
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
  double max_grad_norm = 0.5;                            ///< the global gradient-norm clip over all parameters, > 0
  double learning_rate = 3e-4;                           ///< Adam's initial learning rate, >= 0
  bool anneal_lr = true;                                 ///< decay the learning rate linearly to 0 over total_updates
  std::size_t total_updates = 0;  ///< the schedule's horizon in updates; 0: set_total_updates or the first train()
  std::vector<std::size_t> hidden_sizes = {64, 64};  ///< hidden layers of the actor and of the critic
  AdamOptions adam = {};                             ///< β1 0.9, β2 0.999, ε 1e-8 (outside the sqrt)
  /// Normalise every feature with running statistics of all the features the agent acted on (a
  /// FeatureNormalizer the agent owns; not in the official code). Dense features only.
  bool normalize_features = false;
  NormalizerOptions normalizer = {};  ///< ε 1e-8, clip 10 (used with normalize_features)
  /// Every reward is multiplied by it before GAE (what the agent learns from; episode returns and
  /// statistics stay unscaled), > 0 and finite: reward scaling for returns far from 1 (the
  /// pendulum's reach −1,600 a episode).
  double reward_scale = 1.0;
  /// The initial log standard deviation of the default Gaussian network (GaussianActorCritic), finite.
  double initial_log_std = 0.0;
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
  std::span<const EpisodeEnd> episodes;  ///< the rollout's, valid until the agent's next update

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
/// The last update's statistics with a copy of its episodes of their own: the span in stats()
/// points into this object, also after a copy (which keeps the capacity, so that the copy's
/// updates allocate nothing either).
class PpoStatsRecord {
 public:
  PpoStatsRecord() = default;
  PpoStatsRecord(const PpoStatsRecord& other) { *this = other; }
  PpoStatsRecord& operator=(const PpoStatsRecord& other) {
    if (this == &other) return *this;
    episodes_.reserve(other.episodes_.capacity());
    set(other.stats_, other.episodes_);
    return *this;
  }
  PpoStatsRecord(PpoStatsRecord&&) noexcept = default;  // the vector's storage moves: the span stays valid
  PpoStatsRecord& operator=(PpoStatsRecord&&) noexcept = default;
  ~PpoStatsRecord() = default;

  void reserve(std::size_t episodes) { episodes_.reserve(episodes); }
  void set(const PpoStats& stats, std::span<const EpisodeEnd> episodes) {
    episodes_.assign(episodes.begin(), episodes.end());
    stats_ = stats;
    stats_.episodes = episodes_;
  }
  [[nodiscard]] const PpoStats& stats() const noexcept { return stats_; }

 private:
  std::vector<EpisodeEnd> episodes_;
  PpoStats stats_;
};
}  // namespace detail

/// How a policy picks an action from its actor's logits: draws from softmax(ℓ) (sample_categorical
/// with the environment's generator: the policy PPO learns), or takes the most probable action
/// (greedy_action, drawing nothing).
enum class ActionSelection { sample, greedy };

/// The policy of a Ppo agent, for acting outside training (evaluation, rendering): a Policy and a
/// BatchPolicy that samples from the actor or acts greedily (ActionSelection) and records nothing.
/// It refers to the agent's actor and, if the agent normalises its features, to its normaliser,
/// which it only reads (it sees the statistics of the moment, and more training moves them): keep
/// the agent alive.
///
/// Net is the actor: an Mlp<Scalar> (its output is the logits), or an agent's whole network (an
/// ActorCriticNetwork, whose forward_policy gives the logits, or, for a network whose
/// policy_distribution is DiagonalGaussian, the means and log standard deviations: then the policy
/// is a BatchPolicy of continuous actions, sampled or the mean).
template <class Phi, class Scalar = float, class Net = Mlp<Scalar>>
class PpoPolicy {
  static constexpr bool gaussian = detail::gaussian_policy<Net>;
  static_assert(detail::known_policy_distribution<Net>,
                "PpoPolicy: the network's policy_distribution must be Categorical or DiagonalGaussian");

 public:
  /// Acts with `actor` on features normalised by `normalizer` (nullptr: the features as they are),
  /// which must have the actor's input dimension (dense features only), choosing as `selection` says.
  explicit PpoPolicy(Net& actor, const FeatureNormalizer* normalizer = nullptr,
                     ActionSelection selection = ActionSelection::sample)
      : actor_(&actor), normalizer_(normalizer), selection_(selection) {
    if (selection != ActionSelection::sample && selection != ActionSelection::greedy)
      detail::invalid("PpoPolicy: selection must be sample or greedy, got ", static_cast<int>(selection));
    if constexpr (gaussian)
      if (actor.policy_dim() == 0 || actor.policy_dim() % 2 != 0)
        detail::invalid("PpoPolicy: a Gaussian policy's output has 2k rows (means, log standard deviations), got ",
                        actor.policy_dim());
    if (normalizer == nullptr) return;
    if constexpr (detail::ppo_sparse<Phi>)
      detail::invalid("PpoPolicy: a normalizer needs dense features, got MultiHot");
    if (normalizer->dim() != actor.input_dim())
      detail::invalid("PpoPolicy: normalizer has dim ", normalizer->dim(),
                      ", expected the actor's input_dim = ", actor.input_dim());
  }

  /// One environment: an action drawn from softmax(actor(φ)) with one uniform_real(gen), or the
  /// greedy one (gen untouched).
  template <std::uniform_random_bit_generator G>
  Action act(const Phi& features, G& gen) requires(!gaussian) {
    const std::span<const Phi> one(&features, 1);
    detail::check_ppo_features("PpoPolicy::act", "features", one, actor_->input_dim());
    inputs_.resize(actor_->input_dim(), 1);
    inputs_.set(0, features);
    normalize(1);
    const auto& out = logits(inputs_.block(0, 1));
    detail::check_network_output("PpoPolicy::act", "policy output", out, num_actions(), 1);
    return choose(out.col(0), gen);
  }

  /// A batch: actions[i] from features[i] with gens[i] (one forward pass of the actor).
  template <std::uniform_random_bit_generator G>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<Action> actions) requires(!gaussian) {
    act_batch(features, gens, actions);
  }

  /// A batch of continuous actions (a Gaussian policy): actions[i] drawn with
  /// sample_diagonal_gaussian from the network's mean and log standard deviation for features[i]
  /// with gens[i], or the mean (greedy, gens untouched), cast to the actions' scalar. Throws
  /// std::invalid_argument if A cannot hold the network's action dimension.
  template <std::uniform_random_bit_generator G, ContinuousAction A>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<A> actions) requires gaussian {
    detail::check_action_type<A>("PpoPolicy::act", static_cast<std::size_t>(actor_->policy_dim()) / 2);
    act_batch(features, gens, actions);
  }

  [[nodiscard]] ActionSelection selection() const noexcept { return selection_; }

 private:
  template <class G, class A>
  void act_batch(std::span<const Phi> features, std::span<G> gens, std::span<A> actions) {
    if (gens.size() != features.size() || actions.size() != features.size())
      detail::invalid("PpoPolicy::act: features, gens and actions must have one size, got ", features.size(), ", ",
                      gens.size(), " and ", actions.size());
    detail::check_ppo_features("PpoPolicy::act", "features", features, actor_->input_dim());
    if (inputs_.size() != features.size()) inputs_.resize(actor_->input_dim(), features.size());
    for (std::size_t i = 0; i < features.size(); ++i) inputs_.set(i, features[i]);
    normalize(features.size());
    const auto& out = logits(inputs_.block(0, features.size()));
    detail::check_network_output("PpoPolicy::act", "policy output", out, num_actions(), features.size());
    for (std::size_t i = 0; i < features.size(); ++i) {
      if constexpr (gaussian) {
        (void)detail::gaussian_action("PpoPolicy::act", out.col(static_cast<Eigen::Index>(i)),
                                      selection_ == ActionSelection::greedy, gens[i], actions[i], sample_);
      } else {
        actions[i] = choose(out.col(static_cast<Eigen::Index>(i)), gens[i]);
      }
    }
  }

  std::size_t num_actions() const {
    if constexpr (ActorCriticNetwork<Net, Phi>)
      return static_cast<std::size_t>(actor_->policy_dim());
    else
      return actor_->output_dim();
  }

  void normalize(std::size_t count) {
    if constexpr (!detail::ppo_sparse<Phi>)
      if (normalizer_ != nullptr) inputs_.normalize(0, count, *normalizer_);
  }

  template <class Input>
  decltype(auto) logits(const Input& input) {
    if constexpr (ActorCriticNetwork<Net, Phi>)
      return actor_->forward_policy(input);
    else
      return actor_->forward(input);
  }

  template <class Logits, class G>
  Action choose(const Logits& logits, G& gen) const {
    return selection_ == ActionSelection::greedy ? greedy_action(logits) : sample_categorical(logits, gen).action;
  }

  Net* actor_;
  const FeatureNormalizer* normalizer_;
  ActionSelection selection_;
  FeatureColumns<Phi, Scalar> inputs_;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> sample_;  // a Gaussian policy's action, in Scalar
};

namespace detail {
/// Selects, by argument-dependent lookup, the loops of memtrace/loop/ppo.hpp for the deprecated
/// members Ppo::train and Ppo::evaluate (learn/ does not include loop/).
struct PpoLoopTag {};
/// Reads and restores an agent's private state for learn/ppo_checkpoint.hpp (defined there only).
struct PpoStateAccess;
}  // namespace detail

template <class Phi, class Scalar, class Network>
class Ppo;

/// The acting side of a Ppo agent bound to one buffer, for Rollout: a BatchPolicy (act) and the
/// rollout's sink (operator()), so that `rollout.collect(acting, n_steps, acting)` fills the buffer;
/// then bootstrap(rollout.features()) and agent.update(buffer). Refers to both: keep them alive.
template <class Phi, class Scalar = float, class Network = ActorCritic<Scalar>>
class PpoActing {
  static constexpr bool gaussian = detail::gaussian_policy<Network>;

 public:
  PpoActing(Ppo<Phi, Scalar, Network>& agent, PpoBuffer<Phi, Scalar>& buffer) : agent_(&agent), buffer_(&buffer) {}

  /// agent.act(buffer, features, gens, actions): index actions (a categorical policy) ...
  template <std::uniform_random_bit_generator G>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<Action> actions) requires(!gaussian) {
    agent_->act(*buffer_, features, gens, actions);
  }
  /// ... or continuous ones (a Gaussian policy).
  template <std::uniform_random_bit_generator G, ContinuousAction A>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<A> actions) requires gaussian {
    agent_->act(*buffer_, features, gens, actions);
  }
  /// agent.record(buffer, batch).
  void operator()(const RolloutBatch<Phi>& batch) requires(!gaussian) { agent_->record(*buffer_, batch); }
  template <ContinuousAction A>
  void operator()(const RolloutBatch<Phi, A>& batch) requires gaussian {
    agent_->record(*buffer_, batch);
  }
  /// agent.bootstrap(buffer, features).
  void bootstrap(std::span<const Phi> features) { agent_->bootstrap(*buffer_, features); }

 private:
  Ppo<Phi, Scalar, Network>* agent_;
  PpoBuffer<Phi, Scalar>* buffer_;
};

/// A PPO agent for features of type Phi (a dense Eigen column vector of Scalar, e.g. the
/// Eigen::VectorXf of a float TraceBank, or a MultiHot<C>, e.g. a FrameStack of one-hot views, fed
/// to the networks' sparse first layer) in float (the default) or double, with the network Network:
/// the paper's two MLPs (ActorCritic, the default) or any ActorCriticNetwork whose policy output is
/// the logits of a categorical policy (docs/control.md, "Your own network").
///
/// Its data path (docs/control.md, "PPO's data path"): the agent writes a PpoBuffer while acting,
/// one step at a time, and learns from it:
///   act(buffer, features, gens, actions)  samples the actions, stores the features, log π and V;
///   record(buffer, batch)                 stores the step's actions, rewards and episode ends;
///   ... n_steps times, then
///   bootstrap(buffer, features)           stores the features the environments continue from;
///   update(buffer)                        learns, and empties the buffer.
/// The buffer's fill levels (acted, recorded) say what comes next; a call out of turn is refused.
/// acting(buffer) binds the first three for Rollout, and memtrace::train(agent, rollout,
/// total_env_steps, on_update) (memtrace/loop/ppo.hpp) runs the whole loop. After the first update
/// of a buffer, act, record, bootstrap and update allocate nothing (MultiHot<dynamic> columns keep
/// the capacity they got).
///
/// Randomness: the initial parameters of the default network (actor, then critic) and every
/// epoch's permutation come from the agent's own Xoshiro256StarStar(seed); actions from the
/// environments' generators. Same seed, same environments: the same parameters, bit for bit.
///
/// With options.normalize_features, act first folds the n_envs features into the agent's
/// FeatureNormalizer and then stores them normalised (acting changes the agent's statistics: the
/// one change outside update); the bootstrap and final-observation features are normalised with
/// the statistics of the moment, without updating them, and policy() only reads them. Off (the
/// default), nothing of it runs. A step that Rollout refuses after act (an environment with fewer
/// actions than the agent) has already been counted by the normaliser.
template <class Phi, class Scalar = float, class Network = ActorCritic<Scalar>>
class Ppo {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Ppo: Scalar must be float or double");
  static_assert(detail::PpoFeatures<Phi, Scalar>,
                "Ppo: features must be a dense Eigen column vector of the agent's Scalar (e.g. Eigen::VectorXf for "
                "Ppo<Eigen::VectorXf, float>) or a MultiHot<C>");
  static_assert(ActorCriticNetwork<Network, Phi>,
                "Ppo: Network must model ActorCriticNetwork for these features: forward_policy, forward_value, "
                "backward, parameters, gradients, input_dim and policy_dim (docs/control.md, \"Your own network\")");
  static_assert(std::same_as<typename Network::scalar_type, Scalar>, "Ppo: Network's scalar_type must be Scalar");

 public:
  using features_type = Phi;
  using scalar_type = Scalar;
  using network_type = Network;
  using buffer_type = PpoBuffer<Phi, Scalar>;
  /// What policy() returns: for the default network a policy of the actor alone.
  using policy_type = std::conditional_t<std::same_as<Network, ActorCritic<Scalar>>, PpoPolicy<Phi, Scalar>,
                                         PpoPolicy<Phi, Scalar, Network>>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  static constexpr bool sparse = detail::ppo_sparse<Phi>;
  /// The network's policy is a diagonal Gaussian over continuous actions (its policy_distribution).
  static constexpr bool gaussian = detail::gaussian_policy<Network>;
  static_assert(detail::known_policy_distribution<Network>,
                "Ppo: the network's policy_distribution must be Categorical or DiagonalGaussian");

  /// An agent for features of dimension input_dim and num_actions actions with the default network
  /// (ActorCritic of options.hidden_sizes), initialised (ActorCritic::initialize_orthogonal) from
  /// Xoshiro256StarStar(seed); for Network = GaussianActorCritic<Scalar>, num_actions is the
  /// dimension of the continuous actions (GaussianActorCritic::initialize_orthogonal, log standard
  /// deviation options.initial_log_std). Bad options throw std::invalid_argument naming the option and its value,
  /// before anything is allocated.
  Ppo(std::size_t input_dim, std::size_t num_actions, PpoOptions options = {},
      std::uint64_t seed = 0) requires(std::same_as<Network, ActorCritic<Scalar>> ||
                                       std::same_as<Network, GaussianActorCritic<Scalar>>)
      : options_(checked(std::move(options), input_dim, num_actions)),
        samples_(options_.n_envs * options_.n_steps),
        minibatch_size_(samples_ / options_.minibatches),
        gen_(seed),
        nets_(make_default_network(input_dim, num_actions, options_)),
        adam_(parameter_count(nets_), options_.adam) {
    nets_.initialize_orthogonal(gen_);
    prepare();
  }

  /// An agent that trains `network` as it is (its parameters are not initialised again: that is
  /// the caller's), with features of dimension network.input_dim() and network.policy_dim()
  /// actions; Xoshiro256StarStar(seed) draws the epochs' permutations. options.hidden_sizes is not
  /// used (it shapes the default network only). Throws std::invalid_argument for bad options or a
  /// network whose gradient blocks do not have the sizes of its parameter blocks.
  explicit Ppo(Network network, PpoOptions options = {}, std::uint64_t seed = 0)
      : options_(checked(std::move(options), network.input_dim(), network.policy_dim())),
        samples_(options_.n_envs * options_.n_steps),
        minibatch_size_(samples_ / options_.minibatches),
        gen_(seed),
        nets_(std::move(network)),
        adam_(parameter_count(nets_), options_.adam) {
    prepare();
  }

  // ---- acting and recording: the data path ----

  /// An empty buffer for this agent: n_envs x n_steps samples of features of dimension input_dim().
  [[nodiscard]] PpoBuffer<Phi, Scalar> make_buffer() const {
    return PpoBuffer<Phi, Scalar>(input_dim(), options_.n_envs, options_.n_steps, gaussian ? action_dim() : 0);
  }

  /// The BatchPolicy and sink that fill buffer for Rollout (PpoActing).
  [[nodiscard]] PpoActing<Phi, Scalar, Network> acting(PpoBuffer<Phi, Scalar>& buffer) {
    check_buffer("Ppo::acting", buffer);
    return PpoActing<Phi, Scalar, Network>(*this, buffer);
  }

  /// Step buffer.recorded of the rollout: stores the n_envs features, runs one forward pass of both
  /// networks over them, and draws actions[i] = sample_categorical(logits_i, gens[i]), keeping its
  /// log-probability and the value. Acting again before record acts anew on the same step. Throws
  /// std::invalid_argument for a buffer not made for this agent (make_buffer), spans whose size is
  /// not n_envs or features that do not fit input_dim(), std::logic_error when the buffer holds
  /// n_steps recorded steps (bootstrap and update it); a refused call changes nothing.
  template <std::uniform_random_bit_generator G>
  void act(PpoBuffer<Phi, Scalar>& buffer, std::span<const Phi> features, std::span<G> gens,
           std::span<Action> actions) requires(!gaussian) {
    act_on(buffer, features, gens, actions);
  }

  /// act for a Gaussian policy: actions[i] = the sample of sample_diagonal_gaussian from the
  /// network's mean and log standard deviation for features[i] with gens[i] (action_dim()
  /// standard_normal draws), rounded to Scalar and to A's scalar (so that the buffer keeps, with
  /// its log-density, exactly the action the environment gets): unclipped (the environment clips
  /// to its box). Throws std::invalid_argument also if A cannot hold action_dim() entries.
  template <std::uniform_random_bit_generator G, ContinuousAction A>
  void act(PpoBuffer<Phi, Scalar>& buffer, std::span<const Phi> features, std::span<G> gens,
           std::span<A> actions) requires gaussian {
    detail::check_action_type<A>("Ppo::act", action_dim());
    act_on(buffer, features, gens, actions);
  }

 private:
  template <class G, class A>
  void act_on(PpoBuffer<Phi, Scalar>& buffer, std::span<const Phi> features, std::span<G> gens, std::span<A> actions) {
    const std::size_t n = options_.n_envs;
    check_buffer("Ppo::act", buffer);
    if (features.size() != n)
      detail::invalid("Ppo::act: features holds ", features.size(), " entries, expected options.n_envs = ", n);
    if (gens.size() != n)
      detail::invalid("Ppo::act: gens holds ", gens.size(), " entries, expected options.n_envs = ", n);
    if (actions.size() != n)
      detail::invalid("Ppo::act: actions holds ", actions.size(), " entries, expected options.n_envs = ", n);
    if (buffer.full())
      throw std::logic_error(detail::message("Ppo::act: the buffer already holds n_steps = ", options_.n_steps,
                                             " recorded steps; bootstrap and update it first"));
    detail::check_ppo_features("Ppo::act", "features", features, input_dim());
    buffer.acted = buffer.recorded;  // until this step is complete (a throw below leaves it unacted)
    const std::size_t base = buffer.recorded * n;
    if constexpr (!sparse)
      if (options_.normalize_features) normalizer_.update(features);  // refuses non-finite features
    for (std::size_t i = 0; i < n; ++i) buffer.features.set(base + i, features[i]);
    normalize(buffer.features, base, n);
    const auto input = buffer.features.block(base, n);
    const auto& logits = nets_.forward_policy(input);
    detail::check_network_output("Ppo::act", "policy output", logits, nets_.policy_dim(), n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (gaussian) {
        const double log_prob = detail::gaussian_action("Ppo::act", logits.col(static_cast<Eigen::Index>(i)), false,
                                                        gens[i], actions[i], action_);
        // record checks that the batch took this action
        buffer.continuous_actions.col(static_cast<Eigen::Index>(base + i)) = action_;
        buffer.steps[base + i].action = 0;
        buffer.log_probs[static_cast<Eigen::Index>(base + i)] = static_cast<Scalar>(log_prob);
      } else {
        const CategoricalSample s = sample_categorical(logits.col(static_cast<Eigen::Index>(i)), gens[i]);
        actions[i] = s.action;
        buffer.steps[base + i].action = s.action;  // record checks that the batch took it
        buffer.log_probs[static_cast<Eigen::Index>(base + i)] = static_cast<Scalar>(s.log_prob);
      }
    }
    const auto& value_output = nets_.forward_value(input);
    detail::check_network_output("Ppo::act", "value output", value_output, 1, n);
    buffer.values.segment(static_cast<Eigen::Index>(base), static_cast<Eigen::Index>(n)) =
        value_output.row(0).transpose();
    buffer.acted = buffer.recorded + 1;
  }

 public:
  /// The rollout's sink: stores the step that the last act acted on (actions, rewards, episode
  /// ends; in textbook truncation mode also the value of the final observation of every episode
  /// truncated and not terminated, from batch.next_features) and lists the episodes that ended
  /// (the first step of a rollout clears the list of the last). Throws std::logic_error unless act
  /// stored this step, std::invalid_argument for a batch of the wrong size or whose actions are not
  /// the ones act chose; a refused call changes nothing.
  void record(PpoBuffer<Phi, Scalar>& buffer, const RolloutBatch<Phi>& batch) requires(!gaussian) {
    record_on(buffer, batch);
  }
  /// record for a Gaussian policy: the batch's continuous actions must be the ones act chose.
  template <ContinuousAction A>
  void record(PpoBuffer<Phi, Scalar>& buffer, const RolloutBatch<Phi, A>& batch) requires gaussian {
    record_on(buffer, batch);
  }

 private:
  template <class A>
  void record_on(PpoBuffer<Phi, Scalar>& buffer, const RolloutBatch<Phi, A>& batch) {
    const std::size_t n = options_.n_envs;
    check_buffer("Ppo::record", buffer);
    if (buffer.acted != buffer.recorded + 1 || buffer.full())
      throw std::logic_error("Ppo::record: no act for this step (call act on batch.features first)");
    if (batch.steps.size() != n)
      detail::invalid("Ppo::record: batch.steps holds ", batch.steps.size(), " entries, expected options.n_envs = ", n);
    const bool textbook = options_.truncation == TruncationMode::textbook;
    if (textbook) {
      if (batch.next_features.size() != n)
        detail::invalid("Ppo::record: batch.next_features holds ", batch.next_features.size(),
                        " entries, expected options.n_envs = ", n);
      detail::check_ppo_features("Ppo::record", "batch.next_features", batch.next_features, input_dim());
    }
    const std::size_t base = buffer.recorded * n;
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (gaussian) {
        const auto& u = batch.steps[i].action;
        const auto chosen = buffer.continuous_actions.col(static_cast<Eigen::Index>(base + i));
        if (u.size() != chosen.size() || !(u.template cast<Scalar>() == chosen))
          detail::invalid("Ppo::record: batch.steps[", i, "].action is not the action act chose for environment ", i);
      } else if (batch.steps[i].action != buffer.steps[base + i].action) {
        detail::invalid("Ppo::record: batch.steps[", i, "].action = ", batch.steps[i].action, ", but act chose action ",
                        buffer.steps[base + i].action, " for environment ", i);
      }
    }
    if (buffer.recorded == 0) buffer.episodes.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const BasicActedStep<A>& s = batch.steps[i];
      if constexpr (gaussian)
        buffer.steps[base + i] = {0, s.reward, s.terminated, s.truncated, s.episode_return, s.episode_length};
      else
        buffer.steps[base + i] = s;
      buffer.steps[base + i].reward *= options_.reward_scale;  // exact for the default 1
      if (s.terminated || s.truncated)
        buffer.episodes.push_back({i, buffer.recorded, s.episode_return, s.episode_length, s.terminated, s.truncated});
      if (textbook && s.truncated && !s.terminated)
        buffer.final_values[static_cast<Eigen::Index>(base + i)] = value(batch.next_features[i]);
    }
    ++buffer.recorded;
  }

 public:
  /// After n_steps recorded steps: stores the n_envs features the environments continue from
  /// (after any episode-end reset: Rollout::features()), normalised with the statistics of the
  /// moment, as the columns the advantages bootstrap from. Throws std::logic_error unless the
  /// buffer holds n_steps recorded steps, std::invalid_argument for a span of the wrong size or
  /// features that do not fit input_dim().
  void bootstrap(PpoBuffer<Phi, Scalar>& buffer, std::span<const Phi> bootstrap_features) {
    const std::size_t n = options_.n_envs;
    check_buffer("Ppo::bootstrap", buffer);
    if (!buffer.full())
      throw std::logic_error(detail::message("Ppo::bootstrap: the buffer holds ", buffer.recorded,
                                             " recorded steps, expected n_steps = ", options_.n_steps));
    if (buffer.bootstrapped()) throw std::logic_error("Ppo::bootstrap: the buffer is already bootstrapped (update it)");
    if (bootstrap_features.size() != n)
      detail::invalid("Ppo::bootstrap: bootstrap_features holds ", bootstrap_features.size(),
                      " entries, expected options.n_envs = ", n);
    detail::check_ppo_features("Ppo::bootstrap", "bootstrap_features", bootstrap_features, input_dim());
    for (std::size_t i = 0; i < n; ++i) buffer.features.set(samples_ + i, bootstrap_features[i]);
    normalize(buffer.features, samples_, n);
    buffer.acted = options_.n_steps + 1;  // the bootstrap features are step n_steps's
  }

  // ---- learning ----

  /// Advantages and targets of a full, bootstrapped buffer (generalized_advantages with the options'
  /// γ, gae_lambda and truncation), bootstrapping from the critic's values of the bootstrap
  /// features, into buffer.bootstrap_values, buffer.advantages and buffer.targets. update does this
  /// first; call it to read them (or a minibatch's ppo_loss) without updating. Throws
  /// std::logic_error for a buffer that is not full and bootstrapped.
  void compute_advantages(PpoBuffer<Phi, Scalar>& buffer) {
    check_learnable("Ppo::compute_advantages", buffer);
    const std::size_t n = options_.n_envs;
    const auto& value_output = nets_.forward_value(buffer.features.block(samples_, n));
    detail::check_network_output("Ppo::compute_advantages", "value output", value_output, 1, n);
    buffer.bootstrap_values = value_output.row(0).transpose();
    const GaeOptions gae{options_.discount, options_.gae_lambda, options_.truncation};
    generalized_advantages<Scalar>(gae, n, buffer.steps, as_span(buffer.values), as_span(buffer.bootstrap_values),
                                   as_span(buffer.final_values), as_span(buffer.advantages), as_span(buffer.targets));
  }

  /// The one learning step, from a full, bootstrapped buffer: compute_advantages(buffer), then
  /// `epochs` times a fresh permutation (identity shuffled by Fisher–Yates with uniform_index on the
  /// agent's generator) cut into `minibatches` minibatches, each: ppo_loss with gradients on the
  /// minibatch gathered from the buffer, clip_by_global_norm(max_grad_norm) over the network's
  /// gradient blocks (the actor's and the critic's together), and one Adam step of all its parameters
  /// with the learning rate of the schedule. Empties the buffer (its episodes stay listed until the next rollout's
  /// first record; the stats keep a copy). Throws std::logic_error for a buffer that is not full and bootstrapped, or
  /// when the learning rate anneals and no horizon is set (options.total_updates, set_total_updates or the first
  /// train()); a refused call changes nothing.
  const PpoStats& update(PpoBuffer<Phi, Scalar>& buffer) {
    check_learnable("Ppo::update", buffer);
    if (options_.anneal_lr && horizon_ == 0)
      throw std::logic_error(
          "Ppo::update: the annealed learning rate needs a horizon: set options.total_updates, call "
          "set_total_updates or use train()");
    compute_advantages(buffer);
    const std::size_t count = options_.epochs * options_.minibatches;
    PpoStats stats;
    const double advantage_mean = buffer.advantages.template cast<double>().mean();
    stats.advantage_std =
        std::sqrt((buffer.advantages.template cast<double>().array() - advantage_mean).square().mean());
    double sums[7] = {};
    for (std::size_t epoch = 0; epoch < options_.epochs; ++epoch) {
      for (std::size_t s = 0; s < samples_; ++s) permutation_[s] = s;
      for (std::size_t s = samples_; s-- > 1;)
        std::swap(permutation_[s], permutation_[static_cast<std::size_t>(uniform_index(gen_, s + 1))]);
      for (std::size_t m = 0; m < options_.minibatches; ++m) {
        minibatch_.gather(buffer,
                          std::span<const std::size_t>(permutation_.data() + m * minibatch_size_, minibatch_size_));
        const PpoLoss l = ppo_loss(nets_, minibatch_, loss_coefficients(), true, workspace_);
        const double norm = clip_by_global_norm(options_.max_grad_norm, nets_.gradients());
        const double rate = learning_rate();
        if (epoch == 0 && m == 0) stats.first_learning_rate = rate;
        stats.last_learning_rate = rate;
        adam_.step(nets_.parameters(), nets_.gradients(), rate);
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
    stats.adam_steps = adam_.count();
    stats_.set(stats, buffer.episodes);  // a copy: the stats outlive the buffer
    buffer.clear();
    return stats_.stats();
  }

  /// The loss's coefficients of the options (ε, vf_coef, ent_coef), for ppo_loss.
  [[nodiscard]] PpoLossCoefficients loss_coefficients() const noexcept {
    return {options_.clip_epsilon, options_.vf_coef, options_.ent_coef};
  }

  // ---- deprecated in 0.3.0, removed in 0.4.0: the agent's own buffer ----

  /// Deprecated: act(buffer, ...) on a buffer of make_buffer() (acting(buffer) for Rollout).
  template <std::uniform_random_bit_generator G>
  [[deprecated("Ppo::act: keep a buffer (make_buffer) and call act(buffer, ...), or acting(buffer) for Rollout")]] void
  act(std::span<const Phi> features, std::span<G> gens, std::span<Action> actions) {
    act(own_buffer(), features, gens, actions);
  }
  /// Deprecated: record(buffer, batch).
  [[deprecated("Ppo::record: call record(buffer, batch) on the buffer act wrote")]] void record(
      const RolloutBatch<Phi>& batch) {
    record(own_buffer(), batch);
    own_advantages_ = false;
  }
  /// Deprecated: bootstrap(buffer, features), then compute_advantages(buffer).
  [[deprecated("Ppo::compute_advantages: call bootstrap(buffer, features), then compute_advantages(buffer)")]] void
  compute_advantages(std::span<const Phi> bootstrap_features) {
    rebootstrap(bootstrap_features);
    compute_advantages(own_buffer());
    own_advantages_ = true;
  }
  /// Deprecated: ppo_loss(networks(), minibatch, loss_coefficients(), gradients) on a minibatch gathered
  /// from the buffer (PpoMinibatch::gather).
  [[deprecated("Ppo::minibatch_loss: gather a PpoMinibatch from the buffer and call ppo_loss")]] PpoLoss minibatch_loss(
      std::span<const std::size_t> samples, bool gradients) {
    if (!own_advantages_)
      throw std::logic_error("Ppo::minibatch_loss: no advantages for the recorded rollout (call compute_advantages)");
    if (samples.empty()) detail::invalid("Ppo::minibatch_loss: samples must hold at least one index, got none");
    for (std::size_t j = 0; j < samples.size(); ++j)
      if (samples[j] >= samples_)
        detail::invalid("Ppo::minibatch_loss: samples[", j, "] = ", samples[j], " is out of range for ", samples_,
                        " samples");
    minibatch_.gather(*own_, samples);
    return ppo_loss(nets_, minibatch_, loss_coefficients(), gradients, workspace_);
  }
  /// Deprecated: bootstrap(buffer, features), then update(buffer).
  [[deprecated("Ppo::update: call bootstrap(buffer, features), then update(buffer)")]] const PpoStats& update(
      std::span<const Phi> bootstrap_features) {
    if (options_.anneal_lr && horizon_ == 0)
      throw std::logic_error(
          "Ppo::update: the annealed learning rate needs a horizon: set options.total_updates, call "
          "set_total_updates or use train()");
    rebootstrap(bootstrap_features);
    const PpoStats& stats = update(own_buffer());
    own_advantages_ = true;  // 0.2 kept them readable after the update
    return stats;
  }
  /// Deprecated: buffer.recorded of the buffer you keep.
  [[deprecated("Ppo::recorded_steps: read buffer.recorded of the buffer you keep")]] [[nodiscard]] std::size_t
  recorded_steps() const noexcept {
    return own_ ? own_->recorded : 0;
  }
  /// Deprecated: the buffer's log_probs, values, steps, advantages and targets.
  [[deprecated("Ppo::log_probs: read buffer.log_probs")]] [[nodiscard]] const Vector& log_probs() const {
    return own_buffer().log_probs;
  }
  [[deprecated("Ppo::values: read buffer.values")]] [[nodiscard]] const Vector& values() const {
    return own_buffer().values;
  }
  [[deprecated("Ppo::steps: read buffer.steps")]] [[nodiscard]] std::span<const ActedStep> steps() const {
    return own_buffer().steps;
  }
  [[deprecated("Ppo::advantages: read buffer.advantages")]] [[nodiscard]] const Vector& advantages() const {
    return own_buffer().advantages;
  }
  [[deprecated("Ppo::targets: read buffer.targets")]] [[nodiscard]] const Vector& targets() const {
    return own_buffer().targets;
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

  /// The policy (the network's policy head, sampled or greedy), recording nothing: for evaluation
  /// and replays.
  [[nodiscard]] policy_type policy(ActionSelection selection = ActionSelection::sample) {
    const FeatureNormalizer* normalizer = options_.normalize_features ? &normalizer_ : nullptr;
    if constexpr (std::same_as<Network, ActorCritic<Scalar>>)
      return policy_type(nets_.actor(), normalizer, selection);
    else
      return policy_type(nets_, normalizer, selection);
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
  [[nodiscard]] std::size_t input_dim() const noexcept { return static_cast<std::size_t>(nets_.input_dim()); }
  /// The number of actions of a categorical policy (the network's policy_dim()); for a Gaussian
  /// policy, the dimension of its actions (action_dim()).
  [[nodiscard]] std::size_t num_actions() const noexcept {
    return gaussian ? action_dim() : static_cast<std::size_t>(nets_.policy_dim());
  }
  /// The dimension of a Gaussian policy's continuous actions: half the network's policy_dim() (0 for
  /// a categorical policy).
  [[nodiscard]] std::size_t action_dim() const noexcept {
    return gaussian ? static_cast<std::size_t>(nets_.policy_dim()) / 2 : 0;
  }
  /// The network (the paper's two MLPs by default).
  [[nodiscard]] Network& networks() noexcept { return nets_; }
  [[nodiscard]] const Network& networks() const noexcept { return nets_; }
  /// The default network's actor and critic.
  [[nodiscard]] Mlp<Scalar>& actor() noexcept requires std::same_as<Network, ActorCritic<Scalar>> {
    return nets_.actor();
  }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept requires std::same_as<Network, ActorCritic<Scalar>> {
    return nets_.critic();
  }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept requires std::same_as<Network, ActorCritic<Scalar>> {
    return nets_.actor();
  }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept requires std::same_as<Network, ActorCritic<Scalar>> {
    return nets_.critic();
  }
  /// The optimiser: one Adam over the network's parameter blocks.
  [[nodiscard]] const Adam<Scalar>& optimizer() const noexcept { return adam_; }
  [[nodiscard]] std::size_t updates() const noexcept { return updates_; }
  [[nodiscard]] std::size_t adam_steps() const noexcept { return adam_.count(); }
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
    return LinearSchedule(options_.learning_rate, horizon_ * options_.epochs * options_.minibatches)(adam_.count());
  }
  /// The feature normaliser (dim 0 unless options.normalize_features).
  [[nodiscard]] const FeatureNormalizer& normalizer() const noexcept { return normalizer_; }
  /// Replaces the normaliser (a saved agent's, say: FeatureNormalizer's constructor from
  /// statistics), frozen or not. Throws std::invalid_argument, changing nothing, unless the agent
  /// normalises its features (options.normalize_features) and normalizer has input_dim() features
  /// and the options of options().normalizer.
  void set_normalizer(const FeatureNormalizer& normalizer) {
    if (!options_.normalize_features)
      detail::invalid("Ppo::set_normalizer: the agent does not normalise its features (options.normalize_features)");
    if (normalizer.dim() != input_dim())
      detail::invalid("Ppo::set_normalizer: normalizer has ", normalizer.dim(), " features, the agent ", input_dim());
    if (!(normalizer.options() == options_.normalizer))
      detail::invalid("Ppo::set_normalizer: normalizer has epsilon ", normalizer.options().epsilon, " and clip ",
                      normalizer.options().clip, ", the agent's options.normalizer ", options_.normalizer.epsilon,
                      " and ", options_.normalizer.clip);
    normalizer_ = normalizer;
  }
  /// Stops (and resumes) act's updates of the normaliser's statistics (FeatureNormalizer::freeze).
  void freeze_normalizer() noexcept { normalizer_.freeze(); }
  void unfreeze_normalizer() noexcept { normalizer_.unfreeze(); }
  /// The statistics of the last update.
  [[nodiscard]] const PpoStats& last_stats() const noexcept { return stats_.stats(); }
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
    if (!(o.reward_scale > 0.0 && finite(o.reward_scale)))
      detail::invalid(who, ": options.reward_scale must be positive and finite, got ", o.reward_scale);
    if (!finite(o.initial_log_std))
      detail::invalid(who, ": options.initial_log_std must be finite, got ", o.initial_log_std);
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

  static Network make_default_network(std::size_t input_dim, std::size_t num_actions, const PpoOptions& o) {
    if constexpr (std::same_as<Network, GaussianActorCritic<Scalar>>)
      return Network(input_dim, num_actions, o.hidden_sizes, o.initial_log_std);
    else
      return Network(input_dim, num_actions, o.hidden_sizes);
  }

  /// The number of parameters of a network whose gradient blocks have the sizes of its parameter
  /// blocks (else std::invalid_argument).
  static std::size_t parameter_count(Network& nets) {
    const std::size_t count = detail::matching_blocks_total("Ppo (the network)", nets.parameters(), nets.gradients());
    if (count == 0) detail::invalid("Ppo: the network has no parameters");
    return count;
  }

  /// What both constructors do once the network exists: the normaliser and the workspaces.
  void prepare() {
    if (options_.normalize_features) normalizer_ = FeatureNormalizer(input_dim(), options_.normalizer);
    permutation_.resize(samples_);
    stats_.reserve(samples_);
    minibatch_.reserve(input_dim(), minibatch_size_, action_dim());
    workspace_.reserve(static_cast<std::size_t>(nets_.policy_dim()), minibatch_size_);
    if constexpr (gaussian) {
      if (nets_.policy_dim() % 2 != 0)
        detail::invalid("Ppo: a Gaussian policy's output has 2k rows (means, log standard deviations), got ",
                        nets_.policy_dim());
      action_.resize(static_cast<Eigen::Index>(action_dim()));
    }
    if constexpr (requires { nets_.reserve(std::size_t{}); }) nets_.reserve(std::max(minibatch_size_, options_.n_envs));
  }

  /// The critic's value of one feature vector (a forward pass of batch 1 through the first column of
  /// the minibatch workspace, which every update fills: no allocation for MultiHot<dynamic> either).
  Scalar value(const Phi& phi) {
    minibatch_.features.set(0, phi);
    normalize(minibatch_.features, 0, 1);
    const auto& out = nets_.forward_value(minibatch_.features.block(0, 1));
    detail::check_network_output("Ppo::record", "value output", out, 1, 1);
    return out(0, 0);
  }

  /// Normalises columns [first, first + count) of `store` if the options ask for it.
  void normalize(FeatureColumns<Phi, Scalar>& store, std::size_t first, std::size_t count) const {
    if constexpr (!sparse)
      if (options_.normalize_features) store.normalize(first, count, normalizer_);
  }

  /// Throws unless buffer was made for this agent (make_buffer).
  void check_buffer(const char* who, const PpoBuffer<Phi, Scalar>& buffer) const {
    const auto shape = [&](const char* member, std::size_t got, std::size_t expected) {
      if (got != expected)
        detail::invalid(who, ": buffer.", member, " is ", got, ", expected ", expected,
                        " for this agent: make the buffer with make_buffer()");
    };
    shape("n_envs", buffer.n_envs, options_.n_envs);
    shape("n_steps", buffer.n_steps, options_.n_steps);
    shape("features.size()", buffer.features.size(), samples_ + options_.n_envs);
    shape("features.dim()", buffer.features.dim(), input_dim());
    shape("steps.size()", buffer.steps.size(), samples_);
    shape("log_probs.size()", static_cast<std::size_t>(buffer.log_probs.size()), samples_);
    shape("values.size()", static_cast<std::size_t>(buffer.values.size()), samples_);
    shape("final_values.size()", static_cast<std::size_t>(buffer.final_values.size()), samples_);
    shape("advantages.size()", static_cast<std::size_t>(buffer.advantages.size()), samples_);
    shape("targets.size()", static_cast<std::size_t>(buffer.targets.size()), samples_);
    shape("bootstrap_values.size()", static_cast<std::size_t>(buffer.bootstrap_values.size()), options_.n_envs);
    shape("continuous_actions.rows()", static_cast<std::size_t>(buffer.continuous_actions.rows()), action_dim());
    if (gaussian)
      shape("continuous_actions.cols()", static_cast<std::size_t>(buffer.continuous_actions.cols()), samples_);
    if (buffer.recorded > buffer.n_steps || (buffer.acted != buffer.recorded && buffer.acted != buffer.recorded + 1))
      detail::invalid(who, ": buffer's fill levels are inconsistent (recorded = ", buffer.recorded,
                      ", acted = ", buffer.acted, "; expected acted = recorded or recorded + 1 <= n_steps + 1)");
  }

  /// Throws unless buffer is full and bootstrapped.
  void check_learnable(const char* who, const PpoBuffer<Phi, Scalar>& buffer) const {
    check_buffer(who, buffer);
    if (!buffer.full())
      throw std::logic_error(detail::message(who, ": the buffer holds ", buffer.recorded,
                                             " recorded steps, expected n_steps = ", options_.n_steps));
    if (!buffer.bootstrapped())
      throw std::logic_error(detail::message(who, ": the buffer has no bootstrap features (call bootstrap)"));
  }

  /// The deprecated members' bootstrap: 0.2 took the bootstrap features at every call.
  void rebootstrap(std::span<const Phi> bootstrap_features) {
    PpoBuffer<Phi, Scalar>& own = own_buffer();
    if (own.bootstrapped()) own.acted = own.n_steps;
    bootstrap(own, bootstrap_features);
  }

  /// The buffer of the deprecated members, made on first use.
  PpoBuffer<Phi, Scalar>& own_buffer() const {
    if (!own_) own_.emplace(make_buffer());
    return *own_;
  }

  friend struct detail::PpoStateAccess;

  PpoOptions options_;
  std::size_t samples_;         // n_envs·n_steps
  std::size_t minibatch_size_;  // samples per minibatch
  DefaultGenerator gen_;
  Network nets_;
  Adam<Scalar> adam_;             // over nets_.parameters(), block after block
  FeatureNormalizer normalizer_;  // dim 0 unless options_.normalize_features
  std::size_t horizon_ = options_.total_updates;

  mutable std::optional<PpoBuffer<Phi, Scalar>> own_;  // the deprecated members' buffer
  bool own_advantages_ = false;                        // own_ holds advantages for minibatch_loss

  std::vector<std::size_t> permutation_;
  PpoMinibatch<Phi, Scalar> minibatch_;  // also the scratch column of value()
  Vector action_;                        // a Gaussian policy's sample, before it is stored
  PpoLossWorkspace<Scalar> workspace_;

  std::size_t updates_ = 0;
  detail::PpoStatsRecord stats_;
};

}  // namespace memtrace
