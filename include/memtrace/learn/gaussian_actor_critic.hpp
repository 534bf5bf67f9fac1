#pragma once
// GaussianActorCritic, PPO's network for continuous actions (the standard continuous PPO recipe,
// CleanRL's ppo_continuous_action): an actor MLP for the mean of a diagonal Gaussian
// (DiagonalGaussian, learn/distributions.hpp), a state-independent log standard deviation, and a
// critic MLP. See docs/control.md ("Continuous actions").

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The actor-critic of continuous PPO (CleanRL's ppo_continuous_action): an actor Mlp
/// {d, h_1, ..., h_n, k} whose output is the mean μ of a diagonal Gaussian over k-dimensional
/// actions, a log standard deviation s ∈ R^k that does not depend on the input (a parameter of its
/// own, initially initial_log_std), and a critic Mlp {d, h_1, ..., h_n, 1}. Its policy output is
/// the 2k x B matrix [μ; s] (s repeated in every column); policy_distribution = DiagonalGaussian
/// tells Ppo to read it so. Parameter blocks: the actor's, the critic's, then s.
template <class Scalar = float>
class GaussianActorCritic {
 public:
  using scalar_type = Scalar;
  using policy_distribution = DiagonalGaussian;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;

  /// Networks for input dimension input_dim >= 1 and actions of dimension action_dim >= 1, weights
  /// zero until initialize_orthogonal; the log standard deviation initial_log_std (finite).
  GaussianActorCritic(std::size_t input_dim, std::size_t action_dim, std::span<const std::size_t> hidden_sizes,
                      double initial_log_std = 0.0)
      : actor_(detail::head_sizes("GaussianActorCritic", input_dim, hidden_sizes, action_dim, "action_dim")),
        critic_(detail::head_sizes("GaussianActorCritic", input_dim, hidden_sizes, 1, "action_dim")),
        initial_log_std_(checked_log_std(initial_log_std)),
        log_std_(Vector::Constant(static_cast<Eigen::Index>(action_dim), static_cast<Scalar>(initial_log_std))),
        log_std_gradient_(Vector::Zero(static_cast<Eigen::Index>(action_dim))) {}
  GaussianActorCritic(std::size_t input_dim, std::size_t action_dim,
                      std::initializer_list<std::size_t> hidden_sizes = {64, 64}, double initial_log_std = 0.0)
      : GaussianActorCritic(input_dim, action_dim, std::span(hidden_sizes.begin(), hidden_sizes.size()),
                            initial_log_std) {}

  /// CleanRL's initialisation: orthogonal kernels with gain √2 for every hidden layer, 0.01 for the
  /// actor's head and 1 for the critic's, biases zero (the actor's layers drawn first, then the
  /// critic's, from gen), and the log standard deviation back to initial_log_std.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    std::vector<double> gains(actor_.num_layers(), std::sqrt(2.0));
    gains.back() = 0.01;
    actor_.initialize_orthogonal(gen, gains);
    gains.back() = 1.0;
    critic_.initialize_orthogonal(gen, gains);
    log_std_.setConstant(static_cast<Scalar>(initial_log_std_));
  }

  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return actor_; }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return actor_; }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return critic_; }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return critic_; }
  /// The log standard deviation s (one entry per action dimension).
  [[nodiscard]] Vector& log_std() noexcept { return log_std_; }
  [[nodiscard]] const Vector& log_std() const noexcept { return log_std_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return actor_.input_dim(); }
  [[nodiscard]] std::size_t action_dim() const noexcept { return actor_.output_dim(); }
  /// The weights by name for a weights file (learn/ppo_weights.hpp): actor.l.weight, actor.l.bias,
  /// ..., critic's, then log_std [k]; and its metadata (activation, hidden sizes).
  template <class Visit>
  void named_blocks(Visit&& visit) {
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
    visit(std::string("log_std"), log_std_);
  }
  template <class Visit>
  void named_blocks(Visit&& visit) const {
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
    visit(std::string("log_std"), log_std_);
  }
  [[nodiscard]] std::map<std::string, std::string> weights_metadata() const {
    return {{"activation", "tanh"}, {"hidden", actor_.hidden_text()}};
  }
  [[nodiscard]] std::size_t num_parameters() const noexcept {
    return actor_.num_parameters() + critic_.num_parameters() + action_dim();
  }
  /// Makes room for batches of up to `batch` columns (no forward allocates after it).
  void reserve(std::size_t batch) {
    actor_.reserve(batch);
    critic_.reserve(batch);
    grow(batch);
  }

  // ---- the ActorCriticNetwork interface (docs/control.md, "Your own network") ----

  /// 2 action_dim(): the mean, then the log standard deviation.
  [[nodiscard]] std::size_t policy_dim() const noexcept { return 2 * action_dim(); }
  /// [μ; s] (2k x batch) for a dense or MultiHot batch.
  template <class Input>
  ConstMatrixMap forward_policy(const Input& input) {
    const auto mean = actor_.forward(input);
    const Eigen::Index k = mean.rows(), b = mean.cols();
    grow(static_cast<std::size_t>(b));
    Eigen::Map<Matrix> out(policy_.data(), 2 * k, b);
    out.topRows(k) = mean;
    out.bottomRows(k) = log_std_.replicate(1, b);
    return ConstMatrixMap(policy_.data(), 2 * k, b);
  }
  /// The critic's values (1 x batch).
  template <class Input>
  ConstMatrixMap forward_value(const Input& input) {
    return critic_.forward(input);
  }
  /// The gradients after forward_policy and forward_value on input: the mean's rows of d_policy go
  /// back through the actor, the log standard deviation's are summed over the batch.
  template <class Input>
  void backward(const Input& input, const Eigen::Ref<const Matrix>& d_policy,
                const Eigen::Ref<const RowVector>& d_value) {
    const Eigen::Index k = static_cast<Eigen::Index>(action_dim());
    actor_.backward(input, d_policy.topRows(k));
    log_std_gradient_ = d_policy.bottomRows(k).rowwise().sum();
    critic_.backward(input, d_value);
  }
  /// backward, and also d_input = dL/dx through the actor and the critic (input_dim x batch,
  /// resized) for a dense input: what a network below them (GruActorCritic's GRU) learns from.
  template <class Input>
  void backward(const Input& input, const Eigen::Ref<const Matrix>& d_policy,
                const Eigen::Ref<const RowVector>& d_value, Matrix& d_input) {
    const Eigen::Index k = static_cast<Eigen::Index>(action_dim());
    actor_.backward(input, d_policy.topRows(k), d_input);
    log_std_gradient_ = d_policy.bottomRows(k).rowwise().sum();
    critic_.backward(input, d_value, d_critic_input_);
    d_input += d_critic_input_;
  }
  /// The actor's parameters, the critic's, then s: three blocks.
  [[nodiscard]] std::array<std::span<Scalar>, 3> parameters() noexcept {
    return {block(actor_.parameters()), block(critic_.parameters()), block(log_std_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 3> parameters() const noexcept {
    return {block(actor_.parameters()), block(critic_.parameters()), block(log_std_)};
  }
  /// The gradients of the last backward, in the blocks of parameters().
  [[nodiscard]] std::array<std::span<Scalar>, 3> gradients() noexcept {
    return {block(actor_.gradients()), block(critic_.gradients()), block(log_std_gradient_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 3> gradients() const noexcept {
    return {block(actor_.gradients()), block(critic_.gradients()), block(log_std_gradient_)};
  }

 private:
  static double checked_log_std(double s) {
    if (!std::isfinite(s) || !std::isfinite(static_cast<Scalar>(s)))
      detail::invalid("GaussianActorCritic: initial_log_std must be finite in the network's scalar, got ", s);
    return s;
  }
  void grow(std::size_t batch) {
    const auto rows = static_cast<Eigen::Index>(policy_dim());
    if (policy_.rows() != rows || policy_.cols() < static_cast<Eigen::Index>(batch))
      policy_.resize(rows, static_cast<Eigen::Index>(batch));
  }
  template <class V>
  static auto block(V& v) noexcept {
    return std::span(v.data(), static_cast<std::size_t>(v.size()));
  }
  template <class V>
  static auto block(V&& v) noexcept {
    return std::span(v.data(), static_cast<std::size_t>(v.size()));
  }

  Mlp<Scalar> actor_, critic_;
  double initial_log_std_;
  Vector log_std_, log_std_gradient_;
  Matrix policy_;          // [μ; s] of the last forward_policy, in its first columns
  Matrix d_critic_input_;  // backward with d_input: the critic's part
};

}  // namespace memtrace
