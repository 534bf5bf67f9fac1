#pragma once
// The paper's actor-critic for discrete actions (docs/minigrid-tmaze.md, "Network"): two separate
// multilayer perceptrons on the same input, an actor d -> 64 -> tanh -> 64 -> tanh -> |U| (the
// logits of a categorical policy) and a critic d -> 64 -> tanh -> 64 -> tanh -> 1 (the value),
// initialised as flax does it (its distribution, Categorical: learn/distributions.hpp). See
// docs/control.md ("PPO").

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <limits>
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

/// The actor-critic of the paper's PPO agent: an actor {d, h_1, ..., h_n, |U|} (logits) and a critic
/// {d, h_1, ..., h_n, 1} (value), two separate Mlp<Scalar> on the same input (no shared trunk).
/// Hidden sizes default to {64, 64}; none (a linear actor and critic) is allowed. PPO's default
/// ActorCriticNetwork: its parameter blocks are the actor's and the critic's flat vectors.
template <class Scalar = float>
class ActorCritic {
 public:
  using scalar_type = Scalar;
  using network_type = Mlp<Scalar>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

  /// Networks for input dimension input_dim >= 1 and num_actions >= 1 actions, parameters zero
  /// until initialize_orthogonal.
  ActorCritic(std::size_t input_dim, std::size_t num_actions, std::span<const std::size_t> hidden_sizes)
      : actor_(detail::head_sizes("ActorCritic", input_dim, hidden_sizes, num_actions, "num_actions")),
        critic_(detail::head_sizes("ActorCritic", input_dim, hidden_sizes, 1, "num_actions")) {}
  ActorCritic(std::size_t input_dim, std::size_t num_actions,
              std::initializer_list<std::size_t> hidden_sizes = {64, 64})
      : ActorCritic(input_dim, num_actions, std::span(hidden_sizes.begin(), hidden_sizes.size())) {}

  /// flax's initialisation of the paper's networks: orthogonal kernels (Mlp::initialize_orthogonal)
  /// with gain √2 for every hidden layer, 0.01 for the actor's head and 1 for the critic's, biases
  /// zero; the actor's layers are drawn first, then the critic's, from gen.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    std::vector<double> gains(actor_.num_layers(), std::sqrt(2.0));
    gains.back() = 0.01;
    actor_.initialize_orthogonal(gen, gains);
    gains.back() = 1.0;
    critic_.initialize_orthogonal(gen, gains);
  }

  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return actor_; }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return actor_; }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return critic_; }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return critic_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return actor_.input_dim(); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return actor_.output_dim(); }
  /// Parameters of both networks: 2(d + 1)h_1 + ... for the default sizes 128d + 8708 at |U| = 3.
  /// The weights by name for a weights file (learn/ppo_weights.hpp): actor.l.weight, actor.l.bias,
  /// ..., then critic's; and its metadata (activation, hidden sizes).
  template <class Visit>
  void named_blocks(Visit&& visit) {
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
  }
  template <class Visit>
  void named_blocks(Visit&& visit) const {
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
  }
  [[nodiscard]] std::map<std::string, std::string> weights_metadata() const {
    return {{"activation", "tanh"}, {"hidden", actor_.hidden_text()}};
  }
  [[nodiscard]] std::size_t num_parameters() const noexcept {
    return actor_.num_parameters() + critic_.num_parameters();
  }
  /// Makes room in both networks' workspaces for batches of up to `batch` columns.
  void reserve(std::size_t batch) {
    actor_.reserve(batch);
    critic_.reserve(batch);
  }

  // ---- the ActorCriticNetwork interface (docs/control.md, "Your own network") ----

  /// The rows of the policy's output: num_actions() logits.
  [[nodiscard]] std::size_t policy_dim() const noexcept { return num_actions(); }
  /// The actor's logits (num_actions x batch) for a dense or MultiHot batch (Mlp::forward).
  template <class Input>
  typename Mlp<Scalar>::ConstMatrixMap forward_policy(const Input& input) {
    return actor_.forward(input);
  }
  /// The critic's values (1 x batch).
  template <class Input>
  typename Mlp<Scalar>::ConstMatrixMap forward_value(const Input& input) {
    return critic_.forward(input);
  }
  /// Both networks' gradients (Mlp::backward) after forward_policy and forward_value on input.
  template <class Input>
  void backward(const Input& input, const Eigen::Ref<const Matrix>& d_policy,
                const Eigen::Ref<const RowVector>& d_value) {
    actor_.backward(input, d_policy);
    critic_.backward(input, d_value);
  }
  /// backward, and also d_input = dL/dx through both networks (input_dim x batch, resized) for a
  /// dense input: what a network below them (GruActorCritic's GRU) learns from.
  template <class Input>
  void backward(const Input& input, const Eigen::Ref<const Matrix>& d_policy,
                const Eigen::Ref<const RowVector>& d_value, Matrix& d_input) {
    actor_.backward(input, d_policy, d_input);
    critic_.backward(input, d_value, d_critic_input_);
    d_input += d_critic_input_;
  }
  /// The actor's parameters, then the critic's: two blocks (Mlp::parameters' layout each).
  [[nodiscard]] std::array<std::span<Scalar>, 2> parameters() noexcept {
    return {block(actor_.parameters()), block(critic_.parameters())};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 2> parameters() const noexcept {
    return {block(actor_.parameters()), block(critic_.parameters())};
  }
  /// The gradients of the last backward, in the blocks of parameters().
  [[nodiscard]] std::array<std::span<Scalar>, 2> gradients() noexcept {
    return {block(actor_.gradients()), block(critic_.gradients())};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 2> gradients() const noexcept {
    return {block(actor_.gradients()), block(critic_.gradients())};
  }

 private:
  template <class Map>
  static auto block(Map map) noexcept {
    return std::span(map.data(), static_cast<std::size_t>(map.size()));
  }

  Mlp<Scalar> actor_, critic_;
  Matrix d_critic_input_;  // backward with d_input: the critic's part
};

}  // namespace memtrace
