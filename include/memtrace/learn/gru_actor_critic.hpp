#pragma once
// GruActorCritic, the network of a recurrent PPO agent: a GRU (learn/gru.hpp) over the features
// the agent acts on, then the paper's two MLP heads on its state, so that a GRU takes the place of
// a memory and everything after it is the traces' recipe. A RecurrentActorCriticNetwork
// (concepts.hpp). See docs/control.md ("A recurrent agent").

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/gru.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A GRU of state_dim() = hidden_dim entries over inputs of dimension input_dim (dense or MultiHot),
/// shared by an actor Mlp {hidden_dim, h_1, ..., h_n, |U|} (the logits of a categorical policy)
/// and a critic Mlp {hidden_dim, h_1, ..., h_n, 1}, as CleanRL's recurrent agent shares its LSTM.
/// Both heads' gradients reach the GRU. Parameter blocks: the GRU's input layer, its recurrent
/// weights, the actor's, the critic's.
template <class Scalar = float>
class GruActorCritic {
 public:
  using scalar_type = Scalar;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  using ConstMatrixMap = typename Mlp<Scalar>::ConstMatrixMap;
  using output_type = RecurrentOutput<ConstMatrixMap, ConstMatrixMap>;

  /// Parameters zero until initialize_orthogonal. head_hidden_sizes: the heads' hidden layers (the
  /// paper's {64, 64} by default; none is allowed: linear heads on the state, CleanRL's).
  GruActorCritic(std::size_t input_dim, std::size_t num_actions, std::size_t hidden_dim,
                 std::span<const std::size_t> head_hidden_sizes)
      : gru_(input_dim, hidden_dim),
        actor_(detail::head_sizes("GruActorCritic", hidden_dim, head_hidden_sizes, num_actions, "num_actions")),
        critic_(detail::head_sizes("GruActorCritic", hidden_dim, head_hidden_sizes, 1, "num_actions")) {}
  GruActorCritic(std::size_t input_dim, std::size_t num_actions, std::size_t hidden_dim,
                 std::initializer_list<std::size_t> head_hidden_sizes = {64, 64})
      : GruActorCritic(input_dim, num_actions, hidden_dim,
                       std::span(head_hidden_sizes.begin(), head_hidden_sizes.size())) {}

  /// The GRU as CleanRL initialises its cell (Gru::initialize_orthogonal), then the heads as
  /// ActorCritic's (gains √2 for hidden layers, 0.01 for the actor's output, 1 for the critic's), in
  /// that order from gen.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    gru_.initialize_orthogonal(gen);
    std::vector<double> gains(actor_.num_layers(), std::sqrt(2.0));
    gains.back() = 0.01;
    actor_.initialize_orthogonal(gen, gains);
    gains.back() = 1.0;
    critic_.initialize_orthogonal(gen, gains);
  }

  [[nodiscard]] Gru<Scalar>& gru() noexcept { return gru_; }
  [[nodiscard]] const Gru<Scalar>& gru() const noexcept { return gru_; }
  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return actor_; }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return actor_; }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return critic_; }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return critic_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return gru_.input_dim(); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return actor_.output_dim(); }
  /// The rows of the policy output: num_actions() logits.
  [[nodiscard]] std::size_t policy_dim() const noexcept { return num_actions(); }
  /// The entries of one environment's state: the GRU's hidden_dim.
  [[nodiscard]] std::size_t state_dim() const noexcept { return gru_.hidden_dim(); }
  [[nodiscard]] std::size_t num_parameters() const noexcept {
    return gru_.num_parameters() + actor_.num_parameters() + critic_.num_parameters();
  }
  /// Room for sequences and steps of up to `columns` columns.
  void reserve(std::size_t columns) {
    gru_.reserve(columns, columns);
    actor_.reserve(columns);
    critic_.reserve(columns);
  }

  /// One step: states advance through the GRU, then both heads read them.
  template <class Input>
  output_type forward_step(const Input& x, Eigen::Ref<Matrix> states) {
    gru_.step(x, states);
    // Copied into contiguous columns, so that the heads' products read it in place; the copy only
    // grows (a one-column step between n-column steps allocates nothing).
    if (trunk_.size() < states.size()) trunk_.resize(states.size());
    typename Mlp<Scalar>::MatrixMap trunk(trunk_.data(), states.rows(), states.cols());
    trunk = states;
    const ConstMatrixMap input(trunk_.data(), states.rows(), states.cols());
    return {actor_.forward(input), critic_.forward(input)};
  }

  /// T steps of B environments (Gru::forward), then both heads on every column's state.
  template <class Input>
  output_type forward_sequence(const Input& x, std::span<const bool> starts, const Eigen::Ref<const Matrix>& initial) {
    const auto states = gru_.forward(x, starts, initial);
    return {actor_.forward(states), critic_.forward(states)};
  }

  /// After forward_sequence on x (and no step since): the heads' gradients, then the GRU's through
  /// time with the sum of what both heads send back to the states.
  template <class Input>
  void backward_sequence(const Input& x, const Eigen::Ref<const Matrix>& d_policy,
                         const Eigen::Ref<const RowVector>& d_value) {
    const auto states = gru_.outputs();
    actor_.backward(states, d_policy, d_states_);
    critic_.backward(states, d_value, d_critic_states_);
    d_states_ += d_critic_states_;
    gru_.backward(x, d_states_);
  }

  /// The GRU's two blocks, the actor's, the critic's.
  [[nodiscard]] std::array<std::span<Scalar>, 4> parameters() noexcept {
    const auto g = gru_.parameters();
    return {g[0], g[1], block(actor_.parameters()), block(critic_.parameters())};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 4> parameters() const noexcept {
    const auto g = gru_.parameters();
    return {g[0], g[1], block(actor_.parameters()), block(critic_.parameters())};
  }
  [[nodiscard]] std::array<std::span<Scalar>, 4> gradients() noexcept {
    const auto g = gru_.gradients();
    return {g[0], g[1], block(actor_.gradients()), block(critic_.gradients())};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 4> gradients() const noexcept {
    const auto g = gru_.gradients();
    return {g[0], g[1], block(actor_.gradients()), block(critic_.gradients())};
  }

  /// The weights by name: gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0
  /// (torch.nn.GRU's), then actor.l.* and critic.l.*; metadata: activation, the heads' hidden
  /// sizes, recurrent = gru and its state_dim.
  template <class Visit>
  void named_blocks(Visit&& visit) {
    gru_.named_blocks("gru", visit);
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
  }
  template <class Visit>
  void named_blocks(Visit&& visit) const {
    gru_.named_blocks("gru", visit);
    actor_.named_blocks("actor", visit);
    critic_.named_blocks("critic", visit);
  }
  [[nodiscard]] std::map<std::string, std::string> weights_metadata() const {
    return {{"activation", "tanh"},
            {"hidden", actor_.hidden_text()},
            {"recurrent", "gru"},
            {"state_dim", std::to_string(state_dim())}};
  }

 private:
  template <class Map>
  static auto block(Map map) noexcept {
    return std::span(map.data(), static_cast<std::size_t>(map.size()));
  }

  Gru<Scalar> gru_;
  Mlp<Scalar> actor_, critic_;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> trunk_;  // a step's states
  Matrix d_states_, d_critic_states_;               // what the heads send back
};

}  // namespace memtrace
