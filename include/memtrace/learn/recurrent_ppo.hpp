#pragma once
// What PPO needs beside its feed-forward parts when its network carries a state
// (RecurrentActorCriticNetwork, e.g. GruActorCritic): minibatches of whole per-environment
// sequences (CleanRL's recurrent scheme), the loss on them through time (the same loss terms as
// ppo_loss), and a policy that keeps one state per environment for acting outside training.
// Included by learn/ppo.hpp. See docs/control.md ("A recurrent agent").

#include <Eigen/Core>
#include <cstddef>
#include <random>
#include <span>
#include <stdexcept>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/learn/ppo_loss.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A minibatch of whole sequences: the n_steps samples of each of E environments of a buffer,
/// time-major (column t·E + j is step t of the minibatch's environment j), with where episodes
/// start inside them and the states the environments' sequences start from.
template <class Phi, class Scalar = float, class Distribution = Categorical>
struct RecurrentPpoMinibatch : PpoMinibatch<Phi, Scalar, Distribution> {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  Eigen::Array<bool, Eigen::Dynamic, 1> starts;  ///< per column: the state is reset before it
  Matrix initial_states;                         ///< state_dim x E (in its first E columns)
  std::size_t sequences = 0;                     ///< E, the environments gathered

  /// Room for E = sequences sequences of n_steps steps, states of state_dim entries.
  void reserve_sequences(std::size_t dim, std::size_t n_steps, std::size_t sequences_, std::size_t state_dim,
                         std::size_t action_dim = 1) {
    const std::size_t b = n_steps * sequences_;
    this->reserve(dim, b, action_dim);
    if (static_cast<std::size_t>(starts.size()) < b) starts.resize(static_cast<Eigen::Index>(b));
    if (static_cast<std::size_t>(initial_states.rows()) != state_dim ||
        static_cast<std::size_t>(initial_states.cols()) < sequences_)
      initial_states.resize(static_cast<Eigen::Index>(state_dim), static_cast<Eigen::Index>(sequences_));
  }

  /// Gathers the sequences of the buffer's environments envs (indices < n_envs, in any order).
  /// Throws std::invalid_argument for an environment out of range or a buffer without the
  /// recurrent members (made for a recurrent agent: Ppo::make_buffer); a refused call changes nothing.
  void gather(const PpoBuffer<Phi, Scalar, Distribution>& buffer, std::span<const std::size_t> envs) {
    const std::size_t n = buffer.n_envs(), steps = buffer.n_steps(), e = envs.size();
    if (static_cast<std::size_t>(buffer.starts.size()) != buffer.samples() ||
        static_cast<std::size_t>(buffer.initial_states.cols()) != n)
      detail::invalid(
          "RecurrentPpoMinibatch::gather: the buffer has no recurrent members (starts, initial_states): "
          "make it with a recurrent agent's make_buffer()");
    for (std::size_t j = 0; j < e; ++j)
      if (envs[j] >= n)
        detail::invalid("RecurrentPpoMinibatch::gather: envs[", j, "] = ", envs[j], " is out of range for ", n,
                        " environments");
    const auto state_dim = static_cast<std::size_t>(buffer.initial_states.rows());
    reserve_sequences(buffer.features.dim(), steps, e, state_dim, Distribution::dim(buffer.actions));
    for (std::size_t t = 0; t < steps; ++t)
      for (std::size_t j = 0; j < e; ++j) {
        const std::size_t s = t * n + envs[j], c = t * e + j;
        const auto cc = static_cast<Eigen::Index>(c), ss = static_cast<Eigen::Index>(s);
        this->features.copy_from(c, buffer.features, s);
        Distribution::copy(this->actions, c, buffer.actions, s);
        this->old_log_probs[cc] = buffer.log_probs[ss];
        this->old_values[cc] = buffer.values[ss];
        this->advantages[cc] = buffer.advantages[ss];
        this->targets[cc] = buffer.targets[ss];
        starts[cc] = buffer.starts[ss];
      }
    for (std::size_t j = 0; j < e; ++j)
      initial_states.col(static_cast<Eigen::Index>(j)) = buffer.initial_states.col(static_cast<Eigen::Index>(envs[j]));
    this->count = steps * e;
    sequences = e;
  }
};

/// The PPO loss (ppo_loss's terms, the same function) on a minibatch of sequences, through a
/// recurrent network: one forward_sequence from the minibatch's initial states with its resets,
/// the loss terms on every column, and with gradients = true backward_sequence (the gradient
/// through time, cut where an episode starts). Throws std::invalid_argument as ppo_loss does, and
/// for a count that is not a multiple of the sequences or states of another size.
template <class Phi, class Scalar, class Network>
PpoLoss recurrent_ppo_loss(Network& nets,
                           const RecurrentPpoMinibatch<Phi, Scalar, policy_distribution_t<Network>>& minibatch,
                           const PpoLossCoefficients& coefficients, bool gradients,
                           PpoLossWorkspace<Scalar, policy_distribution_t<Network>>& workspace) {
  static_assert(RecurrentActorCriticNetwork<Network, Phi>,
                "recurrent_ppo_loss: nets must model RecurrentActorCriticNetwork for these features");
  static_assert(std::same_as<typename Network::scalar_type, Scalar>,
                "recurrent_ppo_loss: the networks' scalar_type must be the minibatch's Scalar");
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  const std::size_t policy_dim = nets.policy_dim(), b = minibatch.count, e = minibatch.sequences;
  detail::check_ppo_minibatch("recurrent_ppo_loss", minibatch, coefficients, static_cast<std::size_t>(nets.input_dim()),
                              policy_dim);
  if (e == 0 || b % e != 0)
    detail::invalid("recurrent_ppo_loss: minibatch.count = ", b,
                    " is not a positive multiple of minibatch.sequences = ", e);
  if (static_cast<std::size_t>(minibatch.starts.size()) < b ||
      static_cast<std::size_t>(minibatch.initial_states.cols()) < e ||
      static_cast<std::size_t>(minibatch.initial_states.rows()) != static_cast<std::size_t>(nets.state_dim()))
    detail::invalid("recurrent_ppo_loss: minibatch.starts or minibatch.initial_states do not fit ", e,
                    " sequences of states of state_dim = ", nets.state_dim());
  workspace.reserve(policy_dim, b);
  const auto input = minibatch.features.block(0, b);
  const auto out = nets.forward_sequence(input, std::span<const bool>(minibatch.starts.data(), b),
                                         minibatch.initial_states.leftCols(static_cast<Eigen::Index>(e)));
  detail::check_network_output("recurrent_ppo_loss", "policy output", out.policy, policy_dim, b);
  detail::check_network_output("recurrent_ppo_loss", "value output", out.value, 1, b);
  const PpoLoss loss = detail::ppo_loss_terms(out.policy, out.value, minibatch, coefficients, gradients, workspace);
  if (!gradients) return loss;
  const auto cols = static_cast<Eigen::Index>(b);
  nets.backward_sequence(input, Eigen::Ref<const Matrix>(workspace.d_policy.leftCols(cols)),
                         Eigen::Ref<const RowVector>(workspace.d_values.leftCols(cols)));
  return loss;
}

/// recurrent_ppo_loss with a workspace of its own (allocates; for tests and one-off evaluations).
template <class Phi, class Scalar, class Network>
PpoLoss recurrent_ppo_loss(Network& nets,
                           const RecurrentPpoMinibatch<Phi, Scalar, policy_distribution_t<Network>>& minibatch,
                           const PpoLossCoefficients& coefficients, bool gradients) {
  PpoLossWorkspace<Scalar, policy_distribution_t<Network>> workspace;
  return recurrent_ppo_loss(nets, minibatch, coefficients, gradients, workspace);
}

/// The policy of a recurrent Ppo agent, for acting outside training (evaluation): an
/// EpisodeStartPolicy that keeps one state per environment (zero at first, and reset to zero where
/// the rollout says an episode starts), samples from the network's policy distribution or acts
/// greedily, and records nothing. Refers to the agent's network (and normaliser): keep the agent
/// alive, and do not run it between an update's forward and backward.
template <class Phi, class Scalar, class Net>
class RecurrentPpoPolicy {
  using D = policy_distribution_t<Net>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

 public:
  explicit RecurrentPpoPolicy(Net& net, const FeatureNormalizer* normalizer = nullptr,
                              ActionSelection selection = ActionSelection::sample)
      : net_(&net), normalizer_(normalizer), selection_(selection) {
    if (selection != ActionSelection::sample && selection != ActionSelection::greedy)
      detail::invalid("RecurrentPpoPolicy: selection must be sample or greedy, got ", static_cast<int>(selection));
    if (normalizer != nullptr && normalizer->dim() != net.input_dim())
      detail::invalid("RecurrentPpoPolicy: normalizer has dim ", normalizer->dim(),
                      ", expected the network's input_dim = ", net.input_dim());
  }

  /// One step of B environments: states reset where starts says, advanced on features, actions[i]
  /// drawn with gens[i] (or greedy). The number of environments is fixed by the first call (or
  /// reset(B)). Throws std::invalid_argument for spans of different sizes or another number of
  /// environments, features that do not fit the network or an action type that cannot hold its actions.
  template <std::uniform_random_bit_generator G, class A>
  void act(std::span<const Phi> features, std::span<const bool> starts, std::span<G> gens,
           std::span<A> actions) requires D::template acts_with<A> {
    const std::size_t n = features.size();
    if (starts.size() != n || gens.size() != n || actions.size() != n)
      detail::invalid("RecurrentPpoPolicy::act: features, starts, gens and actions must have one size, got ", n, ", ",
                      starts.size(), ", ", gens.size(), " and ", actions.size());
    if (states_.cols() != 0 && static_cast<std::size_t>(states_.cols()) != n)
      detail::invalid("RecurrentPpoPolicy::act: it keeps the states of ", states_.cols(), " environments, got ", n,
                      " (reset(n) starts anew)");
    detail::check_ppo_features("RecurrentPpoPolicy::act", "features", features, net_->input_dim());
    D::template check_action_type<A>("RecurrentPpoPolicy::act", net_->policy_dim());
    if (states_.cols() == 0) reset(n);
    if (inputs_.size() != n) inputs_.resize(net_->input_dim(), n);
    if (D::count(chosen_) < n) D::resize(chosen_, D::action_dim(net_->policy_dim()), n);
    next_ = states_;  // stepped aside: a refused call keeps the states
    for (std::size_t i = 0; i < n; ++i) {
      inputs_.set(i, features[i]);
      if (starts[i]) next_.col(static_cast<Eigen::Index>(i)).setZero();
    }
    if constexpr (!detail::ppo_sparse<Phi>)
      if (normalizer_ != nullptr) inputs_.normalize(0, n, *normalizer_);
    const auto out = net_->forward_step(inputs_.block(0, n), next_);
    detail::check_network_output("RecurrentPpoPolicy::act", "policy output", out.policy, net_->policy_dim(), n);
    for (std::size_t i = 0; i < n; ++i)
      (void)D::template act<Scalar>("RecurrentPpoPolicy::act", out.policy.col(static_cast<Eigen::Index>(i)), selection_,
                                    gens[i], actions[i], chosen_, i);
    states_.swap(next_);
  }

  /// Forgets every state: the next act starts n environments from zero states.
  void reset(std::size_t n) {
    states_ = Matrix::Zero(static_cast<Eigen::Index>(net_->state_dim()), static_cast<Eigen::Index>(n));
  }
  /// The states (state_dim x B) after the last act.
  [[nodiscard]] const Matrix& states() const noexcept { return states_; }
  [[nodiscard]] ActionSelection selection() const noexcept { return selection_; }

 private:
  Net* net_;
  const FeatureNormalizer* normalizer_;
  ActionSelection selection_;
  Matrix states_, next_;
  FeatureColumns<Phi, Scalar> inputs_;
  typename D::template actions_type<Scalar> chosen_;
};

}  // namespace memtrace
