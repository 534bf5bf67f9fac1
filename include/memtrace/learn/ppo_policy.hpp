#pragma once
// The policy of a PPO agent for acting outside training (evaluation, rendering): the network's
// policy output read by its distribution (learn/distributions.hpp), sampled or greedy, recording
// nothing. See docs/control.md ("Evaluation").

#include <Eigen/Core>
#include <cstddef>
#include <random>
#include <span>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The policy of a Ppo agent, for acting outside training: a BatchPolicy (and, for index actions, a
/// Policy) that samples from the network's policy distribution with the environments' generators
/// or acts greedily (ActionSelection), and records nothing. It refers to the agent's network and,
/// if the agent normalises its features, to its normaliser, which it only reads (it sees the
/// statistics of the moment, and more training moves them): keep the agent alive.
///
/// Net is an Mlp<Scalar> (an actor whose output is the logits of a categorical policy) or an
/// agent's whole network (an ActorCriticNetwork, read through forward_policy by its
/// policy_distribution: Categorical gives index actions, DiagonalGaussian continuous ones).
template <class Phi, class Scalar = float, class Net = Mlp<Scalar>>
class PpoPolicy {
  using D = policy_distribution_t<Net>;
  static_assert(PolicyDistribution<D, Scalar>,
                "PpoPolicy: the network's policy_distribution must model PolicyDistribution");

 public:
  /// Acts with `net` on features normalised by `normalizer` (nullptr: the features as they are),
  /// which must have the network's input dimension (dense features only), choosing as `selection` says.
  explicit PpoPolicy(Net& net, const FeatureNormalizer* normalizer = nullptr,
                     ActionSelection selection = ActionSelection::sample)
      : net_(&net), normalizer_(normalizer), selection_(selection) {
    if (selection != ActionSelection::sample && selection != ActionSelection::greedy)
      detail::invalid("PpoPolicy: selection must be sample or greedy, got ", static_cast<int>(selection));
    D::check_policy_dim("PpoPolicy", policy_dim());
    if (normalizer == nullptr) return;
    if constexpr (detail::ppo_sparse<Phi>)
      detail::invalid("PpoPolicy: a normalizer needs dense features, got MultiHot");
    if (normalizer->dim() != net.input_dim())
      detail::invalid("PpoPolicy: normalizer has dim ", normalizer->dim(),
                      ", expected the network's input_dim = ", net.input_dim());
  }

  /// One environment (index actions): an action drawn from softmax(logits(φ)) with one
  /// uniform_real(gen), or the greedy one (gen untouched).
  template <std::uniform_random_bit_generator G>
  Action act(const Phi& features, G& gen) requires D::template acts_with<Action> {
    Action action = 0;
    act(std::span<const Phi>(&features, 1), std::span<G>(&gen, 1), std::span<Action>(&action, 1));
    return action;
  }

  /// A batch, one forward pass: actions[i] from features[i] with gens[i] (Distribution::act: for a
  /// Gaussian, the sample rounded to Scalar and to A's scalar, or the mean). Throws
  /// std::invalid_argument for spans of different sizes, features that do not fit the network or
  /// an action type that cannot hold the network's actions.
  template <std::uniform_random_bit_generator G, class A>
  void act(std::span<const Phi> features, std::span<G> gens, std::span<A> actions) requires D::template acts_with<A> {
    const std::size_t n = features.size();
    if (gens.size() != n || actions.size() != n)
      detail::invalid("PpoPolicy::act: features, gens and actions must have one size, got ", n, ", ", gens.size(),
                      " and ", actions.size());
    detail::check_ppo_features("PpoPolicy::act", "features", features, net_->input_dim());
    D::template check_action_type<A>("PpoPolicy::act", policy_dim());
    if (inputs_.size() != n) inputs_.resize(net_->input_dim(), n);
    if (D::count(chosen_) < n) D::resize(chosen_, D::action_dim(policy_dim()), n);
    for (std::size_t i = 0; i < n; ++i) inputs_.set(i, features[i]);
    if constexpr (!detail::ppo_sparse<Phi>)
      if (normalizer_ != nullptr) inputs_.normalize(0, n, *normalizer_);
    const auto& out = output(inputs_.block(0, n));
    detail::check_network_output("PpoPolicy::act", "policy output", out, policy_dim(), n);
    for (std::size_t i = 0; i < n; ++i)
      (void)D::template act<Scalar>("PpoPolicy::act", out.col(static_cast<Eigen::Index>(i)), selection_, gens[i],
                                    actions[i], chosen_, i);
  }

  [[nodiscard]] ActionSelection selection() const noexcept { return selection_; }

 private:
  [[nodiscard]] std::size_t policy_dim() const {
    if constexpr (ActorCriticNetwork<Net, Phi>)
      return static_cast<std::size_t>(net_->policy_dim());
    else
      return net_->output_dim();
  }

  template <class Input>
  decltype(auto) output(const Input& input) {
    if constexpr (ActorCriticNetwork<Net, Phi>)
      return net_->forward_policy(input);
    else
      return net_->forward(input);
  }

  Net* net_;
  const FeatureNormalizer* normalizer_;
  ActionSelection selection_;
  FeatureColumns<Phi, Scalar> inputs_;
  typename D::template actions_type<Scalar> chosen_;  // the actions as the distribution keeps them
};

}  // namespace memtrace
