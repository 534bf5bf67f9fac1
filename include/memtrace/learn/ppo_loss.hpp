#pragma once
// PPO's loss on one minibatch, a function of the networks, the minibatch and three coefficients:
// the clipped surrogate, the value loss and the entropy bonus, with its gradient by hand (dL/d policy
// output from the policy distribution, dL/dv, then the network's backward). See docs/control.md
// ("The loss").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The loss's coefficients (PpoOptions holds them with the same names and defaults).
struct PpoLossCoefficients {
  double clip_epsilon = 0.2;     ///< ε of the clipped ratio, > 0
  double vf_coef = 0.5;          ///< weight of the value loss, >= 0
  double ent_coef = 0.01;        ///< weight of the entropy bonus, >= 0
  bool clip_value_loss = false;  ///< CleanRL's clip_vloss (reads the minibatch's old_values)
};

/// The terms of the PPO loss on one minibatch (means over its samples), and two diagnostics.
struct PpoLoss {
  double loss = 0;         ///< policy_loss + vf_coef·value_loss − ent_coef·entropy
  double policy_loss = 0;  ///< −mean min(r Â, clip(r, 1 − ε, 1 + ε) Â)
  double value_loss = 0;  ///< mean 0.5 (v − target)² (clipped: mean 0.5 max((v − target)², (v_clip − target)²))
  double entropy = 0;     ///< mean entropy of the policy
  double approx_kl = 0;   ///< mean (r − 1) − log r
  double clip_fraction = 0;  ///< fraction of samples with |r − 1| > ε
};

/// Scratch space of ppo_loss (the distribution's, the entropies, log-probabilities and the
/// gradients with respect to the policy output and the values); it grows to the largest minibatch
/// and is kept, so that a loop of updates allocates nothing.
template <class Scalar, class Distribution = Categorical>
struct PpoLossWorkspace {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  typename Distribution::template workspace_type<Scalar> distribution;
  Matrix d_policy;  ///< d loss / d policy output
  RowVector d_values, entropy, coef, action_log_probs;

  /// Room for minibatches of b samples of a policy output of policy_dim rows.
  void reserve(std::size_t policy_dim, std::size_t b) {
    distribution.reserve(policy_dim, b);
    if (static_cast<std::size_t>(coef.size()) >= b && static_cast<std::size_t>(d_policy.rows()) == policy_dim) return;
    const auto cols = static_cast<Eigen::Index>(b);
    d_policy.resize(static_cast<Eigen::Index>(policy_dim), cols);
    d_values.resize(1, cols);
    entropy.resize(cols);
    coef.resize(cols);
    action_log_probs.resize(cols);
  }
};

namespace detail {

/// Refuses a minibatch the loss cannot read for a network of input_dim and policy_dim (before any
/// gradient is written).
template <class D, class Phi, class Scalar>
void check_ppo_minibatch(const char* who, const PpoMinibatch<Phi, Scalar, D>& minibatch,
                         const PpoLossCoefficients& coefficients, std::size_t input_dim, std::size_t policy_dim) {
  const std::size_t b = minibatch.count;
  if (b == 0) invalid(who, ": minibatch.count must be at least 1, got 0");
  if (b > minibatch.features.size() ||
      b > static_cast<std::size_t>(
              std::min({minibatch.old_log_probs.size(), minibatch.advantages.size(), minibatch.targets.size()})))
    invalid(who, ": minibatch.count = ", b, " exceeds the samples the minibatch holds");
  if (coefficients.clip_value_loss && b > static_cast<std::size_t>(minibatch.old_values.size()))
    invalid(who, ": coefficients.clip_value_loss reads minibatch.old_values, which holds ", minibatch.old_values.size(),
            " values for ", b, " samples");
  if (minibatch.features.dim() != input_dim)
    invalid(who, ": minibatch.features has dimension ", minibatch.features.dim(),
            ", expected the networks' input_dim = ", input_dim);
  D::check_policy_dim(who, policy_dim);
  D::check_actions(who, minibatch.actions, b, policy_dim);
}

/// The loss's terms from the networks' outputs on the minibatch's columns (policy: policy_dim x B,
/// values: 1 x B) and, with gradients, d loss / d policy output and d loss / d value into
/// workspace.d_policy and workspace.d_values (their first B columns): ppo_loss without the
/// networks' forward and backward, so that a recurrent network's loss is the same function.
template <class D, class Phi, class Scalar, class PolicyOutput, class ValueOutput>
PpoLoss ppo_loss_terms(const PolicyOutput& policy, const ValueOutput& v_new,
                       const PpoMinibatch<Phi, Scalar, D>& minibatch, const PpoLossCoefficients& coefficients,
                       bool gradients, PpoLossWorkspace<Scalar, D>& workspace) {
  const std::size_t b = minibatch.count;
  const auto cols = static_cast<Eigen::Index>(b);
  const auto scale = static_cast<Scalar>(1.0 / static_cast<double>(b));
  // Normalise the minibatch's advantages (population std, + 1e-8), in double.
  double mean = 0;
  for (std::size_t j = 0; j < b; ++j) mean += static_cast<double>(minibatch.advantages[static_cast<Eigen::Index>(j)]);
  mean /= static_cast<double>(b);
  double var = 0;
  for (std::size_t j = 0; j < b; ++j) {
    const double d = static_cast<double>(minibatch.advantages[static_cast<Eigen::Index>(j)]) - mean;
    var += d * d;
  }
  const double denominator = std::sqrt(var / static_cast<double>(b)) + 1e-8;

  // log π(a_j | φ_j) and the entropy of every column, vectorised over the minibatch.
  auto h = workspace.entropy.head(cols);
  auto logp_a = workspace.action_log_probs.head(cols);
  D::template log_prob_entropy<Scalar>(policy, minibatch.actions, b, workspace.distribution, logp_a, h);
  const auto lo = static_cast<Scalar>(1.0 - coefficients.clip_epsilon),
             hi = static_cast<Scalar>(1.0 + coefficients.clip_epsilon);
  const auto vf = static_cast<Scalar>(coefficients.vf_coef);
  double policy_loss = 0, value_loss = 0, entropy = 0, kl = 0, clipped = 0;
  auto coef = workspace.coef.head(cols);
  auto dv = workspace.d_values.leftCols(cols);
  for (std::size_t j = 0; j < b; ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    const Scalar adv = static_cast<Scalar>((static_cast<double>(minibatch.advantages[jj]) - mean) / denominator);
    const Scalar log_ratio = logp_a[jj] - minibatch.old_log_probs[jj];
    const Scalar ratio = std::exp(log_ratio);
    const Scalar surrogate = ratio * adv, clipped_surrogate = std::clamp(ratio, lo, hi) * adv;
    const bool unclipped = surrogate <= clipped_surrogate;  // the min is the unclipped term: it has a gradient
    policy_loss -= static_cast<double>(unclipped ? surrogate : clipped_surrogate);
    coef[jj] = unclipped ? -adv * scale * ratio : Scalar(0);  // d loss / d log π(a)
    kl += static_cast<double>((ratio - Scalar(1)) - log_ratio);
    clipped += std::abs(static_cast<double>(ratio) - 1.0) > coefficients.clip_epsilon ? 1.0 : 0.0;
    Scalar error = v_new(0, jj) - minibatch.targets[jj];
    bool flat = false;  // the clipped term is the larger and clip() is flat there: no gradient
    if (coefficients.clip_value_loss) {
      const auto eps = static_cast<Scalar>(coefficients.clip_epsilon);
      const Scalar change = v_new(0, jj) - minibatch.old_values[jj];
      const Scalar clipped_error = minibatch.old_values[jj] + std::clamp(change, -eps, eps) - minibatch.targets[jj];
      if (clipped_error * clipped_error > error * error) {
        flat = !(std::abs(change) < eps);
        error = clipped_error;
      }
    }
    value_loss += 0.5 * static_cast<double>(error) * static_cast<double>(error);
    dv(0, jj) = flat ? Scalar(0) : vf * error * scale;
    entropy += static_cast<double>(h[jj]);
  }
  const double nb = static_cast<double>(b);
  PpoLoss out;
  out.policy_loss = policy_loss / nb;
  out.value_loss = value_loss / nb;
  out.entropy = entropy / nb;
  out.approx_kl = kl / nb;
  out.clip_fraction = clipped / nb;
  out.loss = out.policy_loss + coefficients.vf_coef * out.value_loss - coefficients.ent_coef * out.entropy;
  if (!gradients) return out;

  auto dl = workspace.d_policy.leftCols(cols);
  const auto ent = static_cast<Scalar>(coefficients.ent_coef) * scale;
  // dL/d out_j = coef_j ∂log π(a_j)/∂out_j − (ent_coef / B) ∂H_j/∂out_j
  D::template gradient<Scalar>(policy, minibatch.actions, b, coef, ent, workspace.distribution, h, dl);
  return out;
}

}  // namespace detail

/// The PPO loss of docs/minigrid-tmaze.md ("PPO recipe") on a minibatch of B samples at the current
/// parameters of nets (an ActorCriticNetwork whose policy output its policy_distribution reads:
/// the logits of a Categorical policy, e.g. ActorCritic, or the means and log standard deviations
/// of a DiagonalGaussian, e.g. GaussianActorCritic): one forward pass of both heads,
///   r = exp(log π(a|φ) − log π_old(a|φ)),   Â = (A − mean A) / (std A + 1e-8)  (over the minibatch,
///   population std, in double),   loss = −mean min(r Â, clip(r, 1 ± ε) Â) + vf_coef·mean 0.5 (v − target)²
///   − ent_coef·mean H(π);
/// with coefficients.clip_value_loss the value term is mean 0.5 max((v − target)², (v_clip − target)²),
/// v_clip = v_old + clip(v − v_old, −ε, ε) (CleanRL's clip_vloss; its gradient is 0 where the
/// clipped term is larger and |v − v_old| >= ε).
/// With gradients = true the networks' gradients() are overwritten with d loss / dθ (through
/// nets.backward); nothing is clipped or stepped. Nothing else changes but the networks' forward
/// caches and the workspace. Throws std::invalid_argument for an empty minibatch, a count beyond
/// what it holds, an action out of range (continuous actions: of another dimension), or features
/// whose dimension is not the networks' input_dim(), before any gradient is written.
template <class Phi, class Scalar, class Network>
PpoLoss ppo_loss(Network& nets, const PpoMinibatch<Phi, Scalar, policy_distribution_t<Network>>& minibatch,
                 const PpoLossCoefficients& coefficients, bool gradients,
                 PpoLossWorkspace<Scalar, policy_distribution_t<Network>>& workspace) {
  static_assert(ActorCriticNetwork<Network, Phi>,
                "ppo_loss: nets must model ActorCriticNetwork for these features (docs/control.md, \"Your own "
                "network\")");
  static_assert(std::same_as<typename Network::scalar_type, Scalar>,
                "ppo_loss: the networks' scalar_type must be the minibatch's Scalar");
  using D = policy_distribution_t<Network>;
  static_assert(PolicyDistribution<D, Scalar>,
                "ppo_loss: the network's policy_distribution must model PolicyDistribution");
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  const std::size_t policy_dim = nets.policy_dim();
  const std::size_t b = minibatch.count;
  detail::check_ppo_minibatch("ppo_loss", minibatch, coefficients, static_cast<std::size_t>(nets.input_dim()),
                              policy_dim);
  workspace.reserve(policy_dim, b);
  const auto input = minibatch.features.block(0, b);
  const auto& policy = nets.forward_policy(input);
  const auto& v_new = nets.forward_value(input);
  detail::check_network_output("ppo_loss", "policy output", policy, policy_dim, b);
  detail::check_network_output("ppo_loss", "value output", v_new, 1, b);
  const PpoLoss out = detail::ppo_loss_terms(policy, v_new, minibatch, coefficients, gradients, workspace);
  if (!gradients) return out;
  const auto cols = static_cast<Eigen::Index>(b);
  nets.backward(input, Eigen::Ref<const Matrix>(workspace.d_policy.leftCols(cols)),
                Eigen::Ref<const RowVector>(workspace.d_values.leftCols(cols)));
  return out;
}

/// ppo_loss with a workspace of its own (allocates; for tests and one-off evaluations).
template <class Phi, class Scalar, class Network>
PpoLoss ppo_loss(Network& nets, const PpoMinibatch<Phi, Scalar, policy_distribution_t<Network>>& minibatch,
                 const PpoLossCoefficients& coefficients, bool gradients) {
  PpoLossWorkspace<Scalar, policy_distribution_t<Network>> workspace;
  return ppo_loss(nets, minibatch, coefficients, gradients, workspace);
}

}  // namespace memtrace
