#pragma once
// Proximal policy optimisation as the paper's official code runs it (docs/minigrid-tmaze.md, "PPO
// recipe"): an actor-critic acting for N environments in lockstep into a buffer of n_steps x N
// samples (learn/ppo_buffer.hpp, written by the agent's acting side, learn/ppo_acting.hpp), GAE,
// and per update `epochs` passes over fresh random permutations in `minibatches` minibatches, each
// one step of Adam on the clipped surrogate + 0.5 MSE value loss − 0.01 entropy after one global
// gradient-norm clip over the network's parameter blocks, with a learning rate that decays
// linearly to 0. The network is the paper's two MLPs, the Gaussian actor-critic for continuous
// actions, or any ActorCriticNetwork; its policy distribution (learn/distributions.hpp) reads its
// output. Dense (Eigen) and sparse (MultiHot) features; float or double. Opt-in: a running
// normalisation of the (dense) features it acts on. See docs/control.md ("PPO").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
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
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/learn/gaussian_actor_critic.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/learn/ppo_loss.hpp"
#include "memtrace/learn/ppo_options.hpp"
#include "memtrace/learn/ppo_policy.hpp"
#include "memtrace/learn/recurrent_ppo.hpp"
#include "memtrace/learn/reward_normalizer.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {
/// Reads and restores an agent's private state for learn/ppo_checkpoint.hpp (defined there only).
struct PpoStateAccess;
}  // namespace detail

/// A PPO agent for features of type Phi (a dense Eigen column vector of Scalar, e.g. the
/// Eigen::VectorXf of a float TraceBank, or a MultiHot<C>, e.g. a FrameStack of one-hot views, fed
/// to the networks' sparse first layer) in float (the default) or double, with the network Network:
/// the paper's two MLPs (ActorCritic, the default), GaussianActorCritic for continuous actions, or
/// any ActorCriticNetwork (docs/control.md, "Your own network"). The network's policy_distribution
/// (Categorical unless it says DiagonalGaussian) picks the actions and gives the loss its
/// log-probabilities and entropies; the agent never branches on it.
///
/// Its data path (docs/control.md, "PPO's data path"): the agent's acting side fills a PpoBuffer,
/// one step at a time, and the agent learns from it:
///   auto acting = agent.acting(buffer);   binds the buffer (make_buffer());
///   acting.act(features, gens, actions)   picks the actions, keeps log π and V (a recurrent agent:
///                                         act(features, starts, gens, actions), told where episodes start);
///   acting(batch)                         writes the step with its rewards and episode ends;
///   ... n_steps times, then
///   acting.bootstrap(features)            stores the features the environments continue from (a
///                                         recurrent agent: bootstrap(features, starts));
///   agent.update(buffer)                  learns, and empties the buffer.
/// `acting` is the BatchPolicy and the sink of Rollout, and memtrace::train(agent, rollout,
/// total_env_steps, on_update) (memtrace/loop/ppo.hpp) runs the whole loop. After the first update
/// of a buffer, acting and updating allocate nothing (MultiHot<dynamic> columns keep the capacity
/// they got).
///
/// Randomness: the initial parameters of the default network (actor, then critic) and every
/// epoch's permutation come from the agent's own Xoshiro256StarStar(seed); actions from the
/// environments' generators. Same seed, same environments: the same parameters, bit for bit.
///
/// With options.normalize_features, acting first folds the n_envs features into the agent's
/// FeatureNormalizer and then keeps them normalised (acting changes the agent's statistics: the
/// one change outside update); the bootstrap and final-observation features are normalised with
/// the statistics of the moment, without updating them, and policy() only reads them. Off (the
/// default), nothing of it runs.
template <class Phi, class Scalar = float, class Network = ActorCritic<Scalar>>
class Ppo {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Ppo: Scalar must be float or double");
  static_assert(detail::PpoFeatures<Phi, Scalar>,
                "Ppo: features must be a dense Eigen column vector of the agent's Scalar (e.g. Eigen::VectorXf for "
                "Ppo<Eigen::VectorXf, float>) or a MultiHot<C>");
  static_assert(ActorCriticNetwork<Network, Phi> || RecurrentActorCriticNetwork<Network, Phi>,
                "Ppo: Network must model ActorCriticNetwork for these features: forward_policy, forward_value, "
                "backward, parameters, gradients, input_dim and policy_dim (docs/control.md, \"Your own network\"); "
                "or RecurrentActorCriticNetwork (a state: forward_step, forward_sequence, backward_sequence, "
                "state_dim)");
  static_assert(std::same_as<typename Network::scalar_type, Scalar>, "Ppo: Network's scalar_type must be Scalar");
  static_assert(PolicyDistribution<policy_distribution_t<Network>, Scalar>,
                "Ppo: the network's policy_distribution must model PolicyDistribution (Categorical or "
                "DiagonalGaussian, learn/distributions.hpp)");

 public:
  /// The network carries a state from step to step (RecurrentActorCriticNetwork): the agent keeps
  /// one per environment, and learns from minibatches of whole sequences (docs/control.md, "A
  /// recurrent agent").
  static constexpr bool recurrent = RecurrentActorCriticNetwork<Network, Phi>;
  using features_type = Phi;
  using scalar_type = Scalar;
  using network_type = Network;
  /// The network's policy distribution (Categorical or DiagonalGaussian).
  using distribution_type = policy_distribution_t<Network>;
  using buffer_type = PpoBuffer<Phi, Scalar, distribution_type>;
  using acting_type = PpoActing<Phi, Scalar, Network>;
  /// What an update's loss reads: samples, or a recurrent agent's whole sequences.
  using minibatch_type = std::conditional_t<recurrent, RecurrentPpoMinibatch<Phi, Scalar, distribution_type>,
                                            PpoMinibatch<Phi, Scalar, distribution_type>>;
  /// What policy() returns: for the default network a policy of the actor alone.
  using policy_type = std::conditional_t<recurrent, RecurrentPpoPolicy<Phi, Scalar, Network>,
                                         std::conditional_t<std::same_as<Network, ActorCritic<Scalar>>,
                                                            PpoPolicy<Phi, Scalar>, PpoPolicy<Phi, Scalar, Network>>>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  static constexpr bool sparse = detail::ppo_sparse<Phi>;

  /// An agent for features of dimension input_dim with the default network (options.hidden_sizes),
  /// initialised from Xoshiro256StarStar(seed): ActorCritic (ActorCritic::initialize_orthogonal)
  /// with `actions` = the number of actions, or GaussianActorCritic
  /// (GaussianActorCritic::initialize_orthogonal, log standard deviation options.initial_log_std)
  /// with `actions` = the dimension of the continuous actions. Bad options throw
  /// std::invalid_argument naming the option and its value, before anything is allocated.
  Ppo(std::size_t input_dim, std::size_t actions, PpoOptions options = {},
      std::uint64_t seed = 0) requires(std::same_as<Network, ActorCritic<Scalar>> ||
                                       std::same_as<Network, GaussianActorCritic<Scalar>>)
      : options_(checked(std::move(options), input_dim, actions)),
        samples_(options_.n_envs * options_.n_steps),
        minibatch_size_(samples_ / options_.minibatches),
        gen_(seed),
        nets_(make_default_network(input_dim, actions, options_)),
        adam_(parameter_count(nets_), options_.adam) {
    nets_.initialize_orthogonal(gen_);
    prepare();
  }

  /// An agent that trains `network` as it is (its parameters are not initialised again: that is
  /// the caller's), with features of dimension network.input_dim(); Xoshiro256StarStar(seed) draws
  /// the epochs' permutations. options.hidden_sizes is not used (it shapes the default network
  /// only). Throws std::invalid_argument for bad options, a policy_dim() its distribution refuses or
  /// a network whose gradient blocks do not have the sizes of its parameter blocks.
  explicit Ppo(Network network, PpoOptions options = {}, std::uint64_t seed = 0)
      : options_(checked(std::move(options), network.input_dim(), network.policy_dim())),
        samples_(options_.n_envs * options_.n_steps),
        minibatch_size_(samples_ / options_.minibatches),
        gen_(seed),
        nets_(std::move(network)),
        adam_(parameter_count(nets_), options_.adam) {
    prepare();
  }

  /// An empty buffer for this agent: n_envs x n_steps samples of features of dimension input_dim().
  [[nodiscard]] buffer_type make_buffer() const {
    return buffer_type(input_dim(), options_.n_envs, options_.n_steps, stored_action_dim(), state_dim());
  }

  /// The acting side bound to buffer (PpoActing): the BatchPolicy and the sink that fill it, step
  /// by step, for Rollout. Throws std::invalid_argument for a buffer not made for this agent
  /// (make_buffer).
  [[nodiscard]] acting_type acting(buffer_type& buffer) {
    check_buffer("Ppo::acting", buffer);
    return acting_type(*this, buffer);
  }

  /// Advantages and targets of a full, bootstrapped buffer (generalized_advantages with the options'
  /// γ, gae_lambda and truncation), bootstrapping from the critic's values of the bootstrap
  /// features, into buffer.bootstrap_values, buffer.advantages and buffer.targets. update does this
  /// first; call it to read them (or a minibatch's ppo_loss) without updating. Throws
  /// std::logic_error for a buffer that is not full and bootstrapped.
  void compute_advantages(buffer_type& buffer) {
    check_learnable("Ppo::compute_advantages", buffer);
    const std::size_t n = options_.n_envs;
    const auto keep = [&](const auto& value_output) {
      detail::check_network_output("Ppo::compute_advantages", "value output", value_output, 1, n);
      buffer.bootstrap_values = value_output.row(0).transpose();
    };
    if constexpr (recurrent) {
      scratch_states_ = buffer.bootstrap_states;
      keep(nets_.forward_step(buffer.features.block(samples_, n), scratch_states_).value);
    } else {
      keep(nets_.forward_value(buffer.features.block(samples_, n)));
    }
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
  const PpoStats& update(buffer_type& buffer) {
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
    stats.explained_variance = explained_variance(buffer);
    double sums[7] = {};
    std::size_t losses = 0, steps = 0;
    const double kl_limit = 1.5 * options_.target_kl;  // Stable-Baselines3's margin
    // Samples are shuffled; a recurrent agent's whole environments (each a sequence of n_steps).
    const std::size_t units = recurrent ? options_.n_envs : samples_;
    const std::size_t unit_count = units / options_.minibatches;
    for (std::size_t epoch = 0; epoch < options_.epochs && !stats.stopped_at_target_kl; ++epoch) {
      for (std::size_t s = 0; s < units; ++s) permutation_[s] = s;
      for (std::size_t s = units; s-- > 1;)
        std::swap(permutation_[s], permutation_[static_cast<std::size_t>(uniform_index(gen_, s + 1))]);
      for (std::size_t m = 0; m < options_.minibatches; ++m) {
        minibatch_.gather(buffer, std::span<const std::size_t>(permutation_.data() + m * unit_count, unit_count));
        const PpoLoss l = loss(minibatch_);
        ++losses;
        const double terms[6] = {l.loss, l.policy_loss, l.value_loss, l.entropy, l.approx_kl, l.clip_fraction};
        for (int k = 0; k < 6; ++k) sums[k] += terms[k];
        if (options_.target_kl > 0.0 && l.approx_kl > kl_limit) {  // before this minibatch's step
          stats.stopped_at_target_kl = true;
          break;
        }
        const double norm = clip_by_global_norm(options_.max_grad_norm, nets_.gradients());
        const double rate = learning_rate();
        if (steps == 0) stats.first_learning_rate = rate;
        stats.last_learning_rate = rate;
        adam_.step(nets_.parameters(), nets_.gradients(), rate);
        ++steps;
        sums[6] += norm;
      }
    }
    skipped_steps_ += count - steps;  // the schedule goes on as if they were taken
    const auto c = static_cast<double>(losses);
    stats.minibatches = losses;
    stats.loss = sums[0] / c;
    stats.policy_loss = sums[1] / c;
    stats.value_loss = sums[2] / c;
    stats.entropy = sums[3] / c;
    stats.approx_kl = sums[4] / c;
    stats.clip_fraction = sums[5] / c;
    stats.grad_norm = steps == 0 ? std::numeric_limits<double>::quiet_NaN() : sums[6] / static_cast<double>(steps);
    ++updates_;
    stats.update = updates_;
    stats.env_steps = updates_ * samples_;
    stats.adam_steps = adam_.count();
    stats_.set(stats, buffer.episodes);  // a copy: the stats outlive the buffer
    buffer.clear();
    return stats_.stats();
  }

  /// The states of a recurrent agent's environments (state_dim x n_envs) after the last step its
  /// acting side recorded; empty for a feed-forward agent.
  [[nodiscard]] const Matrix& states() const noexcept { return states_; }
  /// The entries of one environment's state (0 for a feed-forward agent).
  [[nodiscard]] std::size_t state_dim() const noexcept {
    if constexpr (recurrent)
      return static_cast<std::size_t>(nets_.state_dim());
    else
      return 0;
  }

  /// The loss's coefficients of the options (ε, vf_coef, ent_coef, clip_value_loss), for ppo_loss.
  [[nodiscard]] PpoLossCoefficients loss_coefficients() const noexcept {
    return {options_.clip_epsilon, options_.vf_coef, options_.ent_coef, options_.clip_value_loss};
  }

  /// The policy (the network's policy head, sampled or greedy), recording nothing: for evaluation
  /// and replays.
  [[nodiscard]] policy_type policy(ActionSelection selection = ActionSelection::sample) {
    const FeatureNormalizer* normalizer = options_.normalize_features ? &normalizer_ : nullptr;
    if constexpr (std::same_as<Network, ActorCritic<Scalar>>)
      return policy_type(nets_.actor(), normalizer, selection);
    else
      return policy_type(nets_, normalizer, selection);
  }

  [[nodiscard]] const PpoOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return static_cast<std::size_t>(nets_.input_dim()); }
  /// The number of actions of a categorical policy (the network's policy_dim()).
  [[nodiscard]] std::size_t num_actions() const noexcept requires std::same_as<distribution_type, Categorical> {
    return static_cast<std::size_t>(nets_.policy_dim());
  }
  /// The dimension of a Gaussian policy's continuous actions (half the network's policy_dim()).
  [[nodiscard]] std::size_t action_dim() const noexcept requires std::same_as<distribution_type, DiagonalGaussian> {
    return distribution_type::action_dim(static_cast<std::size_t>(nets_.policy_dim()));
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
  /// The learning rate of the next Adam step: lr0·(1 − min(c, T)/T) with c = adam_steps() +
  /// skipped_steps() and T = total_updates()·epochs·minibatches when annealing, lr0 otherwise.
  [[nodiscard]] double learning_rate() const noexcept {
    if (!options_.anneal_lr) return options_.learning_rate;
    if (horizon_ == 0) return options_.learning_rate;
    return LinearSchedule(options_.learning_rate,
                          horizon_ * options_.epochs * options_.minibatches)(adam_.count() + skipped_steps_);
  }
  /// Adam steps that target_kl skipped so far (0 without it): adam_steps() + skipped_steps() =
  /// updates()·epochs·minibatches.
  [[nodiscard]] std::size_t skipped_steps() const noexcept { return skipped_steps_; }
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
  /// The reward normaliser (of no environments unless options.normalize_rewards).
  [[nodiscard]] const RewardNormalizer& reward_normalizer() const noexcept { return reward_normalizer_; }
  /// Stops (and resumes) record's updates of the returns and their statistics.
  void freeze_reward_normalizer() noexcept { reward_normalizer_.freeze(); }
  void unfreeze_reward_normalizer() noexcept { reward_normalizer_.unfreeze(); }
  /// The statistics of the last update.
  [[nodiscard]] const PpoStats& last_stats() const noexcept { return stats_.stats(); }
  /// The agent's generator (parameters at construction, permutations at every epoch).
  [[nodiscard]] const DefaultGenerator& generator() const noexcept { return gen_; }

 private:
  template <class, class, class>
  friend class PpoActing;
  friend struct detail::PpoStateAccess;

  static PpoOptions checked(PpoOptions o, std::size_t input_dim, std::size_t actions) {
    if (input_dim == 0) detail::invalid("Ppo: input_dim must be at least 1, got 0");
    if (actions == 0) detail::invalid("Ppo: ", distribution_type::size_name, " must be at least 1, got 0");
    detail::check_ppo_options("Ppo", o, sparse);
    if (recurrent && o.n_envs % o.minibatches != 0)
      detail::invalid("Ppo: a recurrent agent's minibatches hold whole environments: options.minibatches = ",
                      o.minibatches, " must divide options.n_envs = ", o.n_envs);
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

  /// Entries of one stored action (1 for an index).
  [[nodiscard]] std::size_t stored_action_dim() const noexcept {
    return distribution_type::action_dim(static_cast<std::size_t>(nets_.policy_dim()));
  }

  /// What both constructors do once the network exists: the normaliser and the workspaces.
  void prepare() {
    distribution_type::check_policy_dim("Ppo", static_cast<std::size_t>(nets_.policy_dim()));
    if (options_.normalize_features) normalizer_ = FeatureNormalizer(input_dim(), options_.normalizer);
    if (options_.normalize_rewards)
      reward_normalizer_ = RewardNormalizer(options_.n_envs, options_.discount, options_.reward_normalizer);
    permutation_.resize(samples_);
    if constexpr (recurrent) {
      states_ = Matrix::Zero(static_cast<Eigen::Index>(state_dim()), static_cast<Eigen::Index>(options_.n_envs));
      scratch_states_ = states_;
      minibatch_.reserve_sequences(input_dim(), options_.n_steps, options_.n_envs / options_.minibatches, state_dim(),
                                   stored_action_dim());
    }
    stats_.reserve(samples_);
    minibatch_.reserve(input_dim(), minibatch_size_, stored_action_dim());
    workspace_.reserve(static_cast<std::size_t>(nets_.policy_dim()), minibatch_size_);
    if constexpr (requires { nets_.reserve(std::size_t{}); }) nets_.reserve(std::max(minibatch_size_, options_.n_envs));
  }

  /// Normalises columns [first, first + count) of `store` if the options ask for it.
  void normalize(FeatureColumns<Phi, Scalar>& store, std::size_t first, std::size_t count) const {
    if constexpr (!sparse)
      if (options_.normalize_features) store.normalize(first, count, normalizer_);
  }

  /// Throws unless buffer was made for this agent (make_buffer): where a buffer enters (acting,
  /// compute_advantages, update), not at every step.
  void check_buffer(const char* who, const buffer_type& buffer) const {
    const auto shape = [&](const char* member, std::size_t got, std::size_t expected) {
      if (got != expected)
        detail::invalid(who, ": buffer.", member, " is ", got, ", expected ", expected,
                        " for this agent: make the buffer with make_buffer()");
    };
    const auto size = [](const Vector& v) { return static_cast<std::size_t>(v.size()); };
    shape("n_envs()", buffer.n_envs(), options_.n_envs);
    shape("n_steps()", buffer.n_steps(), options_.n_steps);
    shape("features.size()", buffer.features.size(), samples_ + options_.n_envs);
    shape("features.dim()", buffer.features.dim(), input_dim());
    shape("actions' count", distribution_type::count(buffer.actions), samples_);
    shape("actions' dimension", distribution_type::dim(buffer.actions), stored_action_dim());
    shape("steps.size()", buffer.steps.size(), samples_);
    for (const auto& [name, v] : {std::pair{"log_probs.size()", &buffer.log_probs},
                                  {"values.size()", &buffer.values},
                                  {"final_values.size()", &buffer.final_values},
                                  {"advantages.size()", &buffer.advantages},
                                  {"targets.size()", &buffer.targets}})
      shape(name, size(*v), samples_);
    shape("bootstrap_values.size()", size(buffer.bootstrap_values), options_.n_envs);
    if constexpr (recurrent) {
      shape("starts.size()", static_cast<std::size_t>(buffer.starts.size()), samples_);
      for (const auto& [name, m] :
           {std::pair{"initial_states", &buffer.initial_states}, {"bootstrap_states", &buffer.bootstrap_states}}) {
        shape(name, static_cast<std::size_t>(m->rows()), state_dim());
        shape(name, static_cast<std::size_t>(m->cols()), options_.n_envs);
      }
    }
  }

  /// The loss with gradients on a minibatch: ppo_loss, or recurrent_ppo_loss through time.
  PpoLoss loss(const minibatch_type& minibatch) {
    if constexpr (recurrent)
      return recurrent_ppo_loss(nets_, minibatch, loss_coefficients(), true, workspace_);
    else
      return ppo_loss(nets_, minibatch, loss_coefficients(), true, workspace_);
  }

  /// 1 − Var[target − v] / Var[target] over the buffer (population variances, in double; NaN when
  /// Var[target] = 0). Two passes, no allocation.
  static double explained_variance(const buffer_type& buffer) {
    const Eigen::Index n = buffer.targets.size();
    const auto target = [&](Eigen::Index s) { return static_cast<double>(buffer.targets[s]); };
    const auto error = [&](Eigen::Index s) { return target(s) - static_cast<double>(buffer.values[s]); };
    double target_mean = 0, error_mean = 0;
    for (Eigen::Index s = 0; s < n; ++s) {
      target_mean += target(s);
      error_mean += error(s);
    }
    target_mean /= static_cast<double>(n);
    error_mean /= static_cast<double>(n);
    double target_var = 0, error_var = 0;
    for (Eigen::Index s = 0; s < n; ++s) {
      target_var += (target(s) - target_mean) * (target(s) - target_mean);
      error_var += (error(s) - error_mean) * (error(s) - error_mean);
    }
    if (target_var == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return 1.0 - error_var / target_var;
  }

  /// Throws unless buffer is full and bootstrapped.
  void check_learnable(const char* who, const buffer_type& buffer) const {
    check_buffer(who, buffer);
    if (!buffer.full())
      throw std::logic_error(detail::message(who, ": the buffer holds ", buffer.recorded(),
                                             " recorded steps, expected n_steps = ", options_.n_steps));
    if (!buffer.bootstrapped())
      throw std::logic_error(detail::message(who, ": the buffer has no bootstrap features (call bootstrap)"));
  }

  PpoOptions options_;
  std::size_t samples_;         // n_envs·n_steps
  std::size_t minibatch_size_;  // samples per minibatch
  DefaultGenerator gen_;
  Network nets_;
  Adam<Scalar> adam_;                   // over nets_.parameters(), block after block
  FeatureNormalizer normalizer_;        // dim 0 unless options_.normalize_features
  RewardNormalizer reward_normalizer_;  // of no environments unless options_.normalize_rewards
  std::size_t horizon_ = options_.total_updates;

  std::vector<std::size_t> permutation_;  // of the samples, or of a recurrent agent's environments
  minibatch_type minibatch_;
  Matrix states_, scratch_states_;  // a recurrent agent's: per environment; the bootstrap's step
  PpoLossWorkspace<Scalar, distribution_type> workspace_;

  std::size_t updates_ = 0;
  std::size_t skipped_steps_ = 0;  // Adam steps target_kl skipped: the schedule counts them
  detail::PpoStatsRecord stats_;
};

}  // namespace memtrace

#include "memtrace/learn/ppo_acting.hpp"
