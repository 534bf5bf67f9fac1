#pragma once
// GruActorCritic, the network of a recurrent PPO agent: a GRU (learn/gru.hpp) over the features
// the agent acts on, under a feed-forward actor-critic that reads its state (the paper's two MLPs
// by default, or the Gaussian actor-critic for continuous actions), so that a GRU takes the place
// of a memory and everything after it is the traces' recipe. A RecurrentActorCriticNetwork
// (concepts.hpp). See docs/control.md ("A recurrent agent").

#include <Eigen/Core>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <random>
#include <span>
#include <string>
#include <utility>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/actor_critic.hpp"
#include "memtrace/learn/gru.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A GRU of state_dim() = hidden_dim entries over inputs of dimension input_dim (dense or
/// MultiHot), shared by the two heads of Heads, a feed-forward actor-critic on dense inputs of
/// dimension hidden_dim with a backward that also gives dL/d(input) (ActorCritic, the default:
/// an actor {h, h_1, ..., |U|} and a critic {h, h_1, ..., 1}; GaussianActorCritic for continuous
/// actions), as CleanRL's recurrent agent shares its LSTM. Both heads' gradients reach the GRU. Its
/// policy distribution is the heads'. Parameter blocks: the GRU's input layer, its recurrent
/// weights, then the heads' blocks.
template <class Scalar = float, class Heads = ActorCritic<Scalar>>
class GruActorCritic {
  static_assert(std::same_as<typename Heads::scalar_type, Scalar>, "GruActorCritic: Heads' scalar_type must be Scalar");

 public:
  using scalar_type = Scalar;
  using heads_type = Heads;
  using policy_distribution = policy_distribution_t<Heads>;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;
  using output_type = RecurrentOutput<ConstMatrixMap, ConstMatrixMap>;

  /// A GRU from input_dim to heads.input_dim() entries under `heads` (initialised by
  /// initialize_orthogonal, or as they come).
  GruActorCritic(std::size_t input_dim, Heads heads)
      : gru_(input_dim, static_cast<std::size_t>(heads.input_dim())), heads_(std::move(heads)) {}
  /// The paper's heads ({64, 64} by default; none is allowed: linear heads on the state, CleanRL's)
  /// for num_actions actions on a GRU of hidden_dim; parameters zero until initialize_orthogonal.
  GruActorCritic(std::size_t input_dim, std::size_t num_actions, std::size_t hidden_dim,
                 std::span<const std::size_t> head_hidden_sizes) requires std::same_as<Heads, ActorCritic<Scalar>>
      : GruActorCritic(input_dim, Heads(checked_hidden(hidden_dim), num_actions, head_hidden_sizes)) {}
  GruActorCritic(
      std::size_t input_dim, std::size_t num_actions, std::size_t hidden_dim,
      std::initializer_list<std::size_t> head_hidden_sizes = {64, 64}) requires std::same_as<Heads, ActorCritic<Scalar>>
      : GruActorCritic(input_dim, num_actions, hidden_dim,
                       std::span(head_hidden_sizes.begin(), head_hidden_sizes.size())) {}

  /// The GRU as CleanRL initialises its cell (Gru::initialize_orthogonal), then the heads'
  /// initialize_orthogonal (ActorCritic's: gains √2 for hidden layers, 0.01 for the actor's output,
  /// 1 for the critic's), in that order from gen.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    gru_.initialize_orthogonal(gen);
    heads_.initialize_orthogonal(gen);
  }

  [[nodiscard]] Gru<Scalar>& gru() noexcept { return gru_; }
  [[nodiscard]] const Gru<Scalar>& gru() const noexcept { return gru_; }
  [[nodiscard]] Heads& heads() noexcept { return heads_; }
  [[nodiscard]] const Heads& heads() const noexcept { return heads_; }
  /// The heads' actor and critic.
  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return heads_.actor(); }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return heads_.actor(); }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return heads_.critic(); }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return heads_.critic(); }
  [[nodiscard]] std::size_t input_dim() const noexcept { return gru_.input_dim(); }
  /// The rows of the policy output: the heads' (the logits of |U| actions, or a Gaussian's [μ; s]).
  [[nodiscard]] std::size_t policy_dim() const noexcept { return static_cast<std::size_t>(heads_.policy_dim()); }
  /// The entries of one environment's state: the GRU's hidden_dim.
  [[nodiscard]] std::size_t state_dim() const noexcept { return gru_.hidden_dim(); }
  [[nodiscard]] std::size_t num_parameters() const noexcept { return gru_.num_parameters() + heads_.num_parameters(); }
  /// Room for sequences and steps of up to `columns` columns.
  void reserve(std::size_t columns) {
    gru_.reserve(columns, columns);
    heads_.reserve(columns);
  }

  /// One step: states advance through the GRU, then both heads read them.
  template <class Input>
  output_type forward_step(const Input& x, Eigen::Ref<Matrix> states) {
    gru_.step(x, states);
    // Copied into contiguous columns, so that the heads' products read it in place; the copy only
    // grows (a one-column step between n-column steps allocates nothing).
    if (trunk_.size() < states.size()) trunk_.resize(states.size());
    Eigen::Map<Matrix>(trunk_.data(), states.rows(), states.cols()) = states;
    const ConstMatrixMap input(trunk_.data(), states.rows(), states.cols());
    return {heads_.forward_policy(input), heads_.forward_value(input)};
  }

  /// T steps of B environments (Gru::forward), then both heads on every column's state.
  template <class Input>
  output_type forward_sequence(const Input& x, std::span<const bool> starts, const Eigen::Ref<const Matrix>& initial) {
    const ConstMatrixMap states = gru_.forward(x, starts, initial);
    return {heads_.forward_policy(states), heads_.forward_value(states)};
  }

  /// After forward_sequence on x (and no step since): the heads' gradients, then the GRU's through
  /// time with what both heads send back to the states.
  template <class Input>
  void backward_sequence(const Input& x, const Eigen::Ref<const Matrix>& d_policy,
                         const Eigen::Ref<const RowVector>& d_value) {
    const ConstMatrixMap states = gru_.outputs();
    heads_.backward(states, d_policy, d_value, d_states_);
    gru_.backward(x, d_states_);
  }

  /// The GRU's two blocks, then the heads'.
  [[nodiscard]] auto parameters() noexcept { return join(gru_.parameters(), heads_.parameters()); }
  [[nodiscard]] auto parameters() const noexcept { return join(gru_.parameters(), heads_.parameters()); }
  [[nodiscard]] auto gradients() noexcept { return join(gru_.gradients(), heads_.gradients()); }
  [[nodiscard]] auto gradients() const noexcept { return join(gru_.gradients(), heads_.gradients()); }

  /// The weights by name: gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0
  /// (torch.nn.GRU's), then the heads' (actor.l.*, critic.l.*, a Gaussian's log_std); metadata:
  /// the heads', recurrent = gru and its state_dim.
  template <class Visit>
  void named_blocks(Visit&& visit) {
    gru_.named_blocks("gru", visit);
    heads_.named_blocks(visit);
  }
  template <class Visit>
  void named_blocks(Visit&& visit) const {
    gru_.named_blocks("gru", visit);
    heads_.named_blocks(visit);
  }
  [[nodiscard]] std::map<std::string, std::string> weights_metadata() const {
    std::map<std::string, std::string> out = heads_.weights_metadata();
    out["recurrent"] = "gru";
    out["state_dim"] = std::to_string(state_dim());
    return out;
  }

 private:
  /// hidden_dim >= 1, checked before the heads are built on it (with Gru's message).
  static std::size_t checked_hidden(std::size_t hidden_dim) {
    if (hidden_dim == 0) detail::invalid("Gru: hidden_dim must be at least 1, got 0");
    return hidden_dim;
  }
  template <class T, std::size_t A, std::size_t B>
  static std::array<T, A + B> join(const std::array<T, A>& a, const std::array<T, B>& b) noexcept {
    std::array<T, A + B> out{};
    for (std::size_t i = 0; i < A; ++i) out[i] = a[i];
    for (std::size_t i = 0; i < B; ++i) out[A + i] = b[i];
    return out;
  }

  Gru<Scalar> gru_;
  Heads heads_;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> trunk_;  // a step's states
  Matrix d_states_;                                 // what the heads send back to the states
};

}  // namespace memtrace
