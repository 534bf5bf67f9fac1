#pragma once
// PPO's loss on one minibatch, a function of the networks, the minibatch and three coefficients:
// the clipped surrogate, the value loss and the entropy bonus, with its gradient by hand (dL/dlogits
// and dL/dv, then Mlp::backward). See docs/control.md ("The loss").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/actor_critic.hpp"
#include "memtrace/learn/gaussian_actor_critic.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The loss's coefficients (PpoOptions holds them with the same names and defaults).
struct PpoLossCoefficients {
  double clip_epsilon = 0.2;  ///< ε of the clipped ratio, > 0
  double vf_coef = 0.5;       ///< weight of the value loss, >= 0
  double ent_coef = 0.01;     ///< weight of the entropy bonus, >= 0
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

/// Scratch space of ppo_loss (softmax, entropy, the gradients with respect to logits and values);
/// it grows to the largest minibatch and is kept, so that a loop of updates allocates nothing.
template <class Scalar>
struct PpoLossWorkspace {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  Matrix probs, log_probs, d_logits;  ///< categorical: softmax, log-softmax; d loss / d policy output (either)
  Matrix standardized;                ///< Gaussian: (a − μ)/σ
  RowVector d_values, row_max, row_sum, entropy, coef, action_log_probs;

  /// Room for minibatches of b samples of a policy output of policy_dim rows.
  void reserve(std::size_t policy_dim, std::size_t b) {
    if (static_cast<std::size_t>(coef.size()) >= b && static_cast<std::size_t>(probs.rows()) == policy_dim) return;
    const auto k = static_cast<Eigen::Index>(policy_dim), cols = static_cast<Eigen::Index>(b);
    probs.resize(k, cols);
    log_probs.resize(k, cols);
    d_logits.resize(k, cols);
    standardized.resize(k / 2, cols);
    d_values.resize(1, cols);
    row_max.resize(cols);
    row_sum.resize(cols);
    entropy.resize(cols);
    coef.resize(cols);
    action_log_probs.resize(cols);
  }
};

/// The PPO loss of docs/minigrid-tmaze.md ("PPO recipe") on a minibatch of B samples at the current
/// parameters of nets (an ActorCriticNetwork whose policy output is the logits of a categorical
/// policy, e.g. ActorCritic, or, if its policy_distribution is DiagonalGaussian, the means and log
/// standard deviations of a Gaussian over minibatch.continuous_actions, e.g. GaussianActorCritic):
/// one forward pass of both heads,
///   r = exp(log π(a|φ) − log π_old(a|φ)),   Â = (A − mean A) / (std A + 1e-8)  (over the minibatch,
///   population std, in double),   loss = −mean min(r Â, clip(r, 1 ± ε) Â) + vf_coef·mean 0.5 (v − target)²
///   − ent_coef·mean H(π).
/// With gradients = true the networks' gradients() are overwritten with d loss / dθ (through
/// nets.backward); nothing is clipped or stepped. Nothing else changes but the networks' forward
/// caches and the workspace. Throws std::invalid_argument for an empty minibatch, a count beyond
/// what it holds, an action out of range (continuous actions: of another dimension), or features
/// whose dimension is not the networks' input_dim(), before any gradient is written.
template <class Phi, class Scalar, class Network>
PpoLoss ppo_loss(Network& nets, const PpoMinibatch<Phi, Scalar>& minibatch, const PpoLossCoefficients& coefficients,
                 bool gradients, PpoLossWorkspace<Scalar>& workspace) {
  static_assert(ActorCriticNetwork<Network, Phi>,
                "ppo_loss: nets must model ActorCriticNetwork for these features (docs/control.md, \"Your own "
                "network\")");
  static_assert(std::same_as<typename Network::scalar_type, Scalar>,
                "ppo_loss: the networks' scalar_type must be the minibatch's Scalar");
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  constexpr bool gaussian = detail::gaussian_policy<Network>;
  static_assert(detail::known_policy_distribution<Network>,
                "ppo_loss: the network's policy_distribution must be Categorical or DiagonalGaussian");
  const std::size_t num_actions = nets.policy_dim();  // categorical: logits; Gaussian: 2 x the action dimension
  const std::size_t b = minibatch.count;
  if (b == 0) detail::invalid("ppo_loss: minibatch.count must be at least 1, got 0");
  if (b > minibatch.features.size() || (!gaussian && b > minibatch.actions.size()) ||
      b > static_cast<std::size_t>(
              std::min({minibatch.old_log_probs.size(), minibatch.advantages.size(), minibatch.targets.size()})))
    detail::invalid("ppo_loss: minibatch.count = ", b, " exceeds the samples the minibatch holds");
  if (minibatch.features.dim() != static_cast<std::size_t>(nets.input_dim()))
    detail::invalid("ppo_loss: minibatch.features has dimension ", minibatch.features.dim(),
                    ", expected the networks' input_dim = ", nets.input_dim());
  if constexpr (gaussian) {
    if (num_actions % 2 != 0 || num_actions == 0)
      detail::invalid("ppo_loss: a Gaussian policy's output has 2k rows (means, log standard deviations), got ",
                      num_actions);
    if (static_cast<std::size_t>(minibatch.continuous_actions.rows()) != num_actions / 2 ||
        static_cast<std::size_t>(minibatch.continuous_actions.cols()) < b)
      detail::invalid("ppo_loss: minibatch.continuous_actions is ", minibatch.continuous_actions.rows(), " x ",
                      minibatch.continuous_actions.cols(), ", expected ", num_actions / 2, " rows and at least ", b,
                      " columns");
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(b); ++j)
      for (Eigen::Index r = 0; r < minibatch.continuous_actions.rows(); ++r)
        if (!std::isfinite(minibatch.continuous_actions(r, j)))
          detail::invalid("ppo_loss: minibatch.continuous_actions(", r, ", ", j,
                          ") = ", minibatch.continuous_actions(r, j), ", expected a finite action");
  } else {
    for (std::size_t j = 0; j < b; ++j)
      if (minibatch.actions[j] >= num_actions)
        detail::invalid("ppo_loss: minibatch.actions[", j, "] = ", minibatch.actions[j],
                        ", expected < num_actions = ", num_actions);
  }
  workspace.reserve(num_actions, b);
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

  const auto input = minibatch.features.block(0, b);
  const auto& logits = nets.forward_policy(input);
  const auto& v_new = nets.forward_value(input);
  detail::check_network_output("ppo_loss", "policy output", logits, num_actions, b);
  detail::check_network_output("ppo_loss", "value output", v_new, 1, b);

  // log π(a_j | φ_j) and the entropy of every column, vectorised over the minibatch.
  auto h = workspace.entropy.head(cols);
  auto logp_a = workspace.action_log_probs.head(cols);
  auto m = workspace.row_max.head(cols);
  auto sum = workspace.row_sum.head(cols);
  auto p = workspace.probs.leftCols(cols);
  auto logp = workspace.log_probs.leftCols(cols);
  const auto k = static_cast<Eigen::Index>(num_actions / 2);
  auto z = workspace.standardized.leftCols(cols);
  if constexpr (gaussian) {
    // z = (a − μ) e^{−s}; log π(a) = Σ_k (−z²/2 − s) − k ½ log 2π; H = Σ_k s + k ½ (1 + log 2π).
    const auto mu = logits.topRows(k);
    const auto log_std = logits.bottomRows(k);
    z = ((minibatch.continuous_actions.leftCols(cols) - mu).array() * (-log_std.array()).exp()).matrix();
    const auto constant = static_cast<Scalar>(static_cast<double>(k) * detail::half_log_two_pi);
    logp_a = (Scalar(-0.5) * z.array().square() - log_std.array()).colwise().sum().matrix();
    logp_a.array() -= constant;
    h = log_std.colwise().sum();
    h.array() += static_cast<Scalar>(static_cast<double>(k) * (0.5 + detail::half_log_two_pi));
  } else {
    // log-softmax and entropy of every column.
    m = logits.colwise().maxCoeff();
    p = (logits.rowwise() - m).array().exp().matrix();
    sum = p.colwise().sum();
    p.array().rowwise() /= sum.array();
    sum.array() = m.array() + sum.array().log();  // log Z (in place: broadcasting an expression would allocate)
    logp = logits.rowwise() - sum;
    h = -(p.array() * logp.array()).colwise().sum().matrix();
    for (std::size_t j = 0; j < b; ++j)
      logp_a[static_cast<Eigen::Index>(j)] =
          logp(static_cast<Eigen::Index>(minibatch.actions[j]), static_cast<Eigen::Index>(j));
  }

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
    const Scalar error = v_new(0, jj) - minibatch.targets[jj];
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
  out.loss = out.policy_loss + coefficients.vf_coef * out.value_loss - coefficients.ent_coef * out.entropy;
  if (!gradients) return out;

  auto dl = workspace.d_logits.leftCols(cols);
  const auto ent = static_cast<Scalar>(coefficients.ent_coef) * scale;
  if constexpr (gaussian) {
    // d log π(a)/dμ = z e^{−s}, d log π(a)/ds = z² − 1, dH/dμ = 0, dH/ds = 1:
    // dL/dμ = coef_j z e^{−s};  dL/ds = coef_j (z² − 1) − ent_coef / B.
    const auto log_std = logits.bottomRows(k);
    dl.topRows(k) = (z.array() * (-log_std.array()).exp()).matrix();
    dl.topRows(k).array().rowwise() *= coef.array();
    dl.bottomRows(k) = (z.array().square() - Scalar(1)).matrix();
    dl.bottomRows(k).array().rowwise() *= coef.array();
    dl.bottomRows(k).array() -= ent;
  } else {
    // dL/dlogits = coef_j (e_a − π_j) + (ent_coef / B) π_j ⊙ (log π_j + H_j)
    // (the surrogate through d log π(a)/dℓ = e_a − π; the entropy through dH/dℓ = −π ⊙ (log π + H)).
    dl = ((logp.array().rowwise() + h.array()) * ent).matrix();
    dl.array().rowwise() -= coef.array();
    dl.array() *= p.array();
    for (std::size_t j = 0; j < b; ++j)
      dl(static_cast<Eigen::Index>(minibatch.actions[j]), static_cast<Eigen::Index>(j)) +=
          coef[static_cast<Eigen::Index>(j)];
  }
  nets.backward(input, Eigen::Ref<const Matrix>(dl), Eigen::Ref<const RowVector>(dv));
  return out;
}

/// ppo_loss with a workspace of its own (allocates; for tests and one-off evaluations).
template <class Phi, class Scalar, class Network>
PpoLoss ppo_loss(Network& nets, const PpoMinibatch<Phi, Scalar>& minibatch, const PpoLossCoefficients& coefficients,
                 bool gradients) {
  PpoLossWorkspace<Scalar> workspace;
  return ppo_loss(nets, minibatch, coefficients, gradients, workspace);
}

}  // namespace memtrace
