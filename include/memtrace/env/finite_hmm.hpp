#pragma once
// FiniteHmm: a Markov reward process seen through a noisy channel, given by its matrices (paper
// §3 "POMDPs": a POMDP under a fixed policy is an HMM). It is at once a simulator (alias tables:
// O(1) per draw, whatever |X|) and the explicit model the exact analysis solves. See
// docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <concepts>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A finite hidden Markov model with rewards on transitions:
///   transition(x, x') = p(x' | x)   (row-stochastic, |X| x |X|, sparse row-major),
///   emission(x, y)    = p(y | x)    (row-stochastic, |X| x |Y|, dense),
///   initial[x]        = p(x_0 = x),
///   rewards(x, x')    = r(x, x'), the reward of the transition x -> x' (stored where p(x'|x) > 0).
/// reset(gen) draws x_0 ~ initial and returns y_0 ~ O(.|x_0); step(gen) moves x -> x' ~ P(.|x),
/// pays r(x, x') and returns y' ~ O(.|x'). Entering a terminal state ends the episode
/// (terminated = true); the next step must follow a reset. A terminal state's row of P is used
/// only by analysis (e.g. restarting from `initial` turns an episodic model into one Markov chain).
/// Satisfies RewardProcess and FiniteModel (model() is the HMM itself).
/// (`FiniteHmm` is `BasicFiniteHmm<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicFiniteHmm {
 public:
  /// Sparse transition matrix and rewards. `terminal` is empty (a continuing model) or has one
  /// flag per state. Throws std::invalid_argument naming the bad matrix, row or entry.
  BasicFiniteHmm(SparseMatrix transition, Eigen::MatrixXd emission, Eigen::VectorXd initial,
                 const SparseMatrix& rewards, std::vector<bool> terminal = {},
                 double tolerance = default_row_sum_tolerance)
      : emission_(std::move(emission)), initial_(std::move(initial)), terminal_(std::move(terminal)) {
    constexpr const char* who = "FiniteHmm";
    detail::check_tolerance(who, tolerance);
    const Eigen::Index n = transition.rows();
    if (n == 0) detail::invalid(who, ": transition must have at least one state, got 0 x ", transition.cols());
    detail::check_shape(who, "transition (|X| x |X|)", n, transition.cols(), n, n);
    detail::check_shape(who, "emission (|X| x |Y|)", emission_.rows(), emission_.cols(), n,
                        emission_.cols() == 0 ? 1 : emission_.cols());
    detail::check_shape(who, "initial (|X| x 1)", initial_.rows(), initial_.cols(), n, 1);
    detail::check_shape(who, "rewards (|X| x |X|)", rewards.rows(), rewards.cols(), n, n);
    transition.makeCompressed();
    detail::check_row_stochastic(who, "transition", transition, tolerance);
    detail::check_row_stochastic(who, "emission", emission_, tolerance);
    detail::check_distribution(who, "initial", initial_, tolerance);
    detail::check_finite(who, "rewards", rewards);
    detail::complete_terminal_flags(who, terminal_, initial_);
    // Rows accepted within `tolerance` are made to sum to 1 up to rounding, once, here: every
    // analysis then accepts the model (docs/environments.md, "Tolerance").
    detail::renormalize_rows(transition);
    detail::renormalize_rows(emission_);
    detail::renormalize_entries(initial_);

    transition_ = detail::pruned(std::move(transition));
    // r(x, x') aligned with the entries of P, so a sampled entry carries its reward.
    rewards_ = transition_;
    for (Eigen::Index x = 0; x < n; ++x)
      for (SparseMatrix::InnerIterator it(rewards_, x); it; ++it) it.valueRef() = rewards.coeff(x, it.col());
    expected_rewards_ = transition_.cwiseProduct(rewards_) * Eigen::VectorXd::Ones(n);
    transition_sampler_ = detail::AliasRows(transition_, &rewards_);
    emission_sampler_ = detail::AliasRows(detail::pruned(emission_.sparseView(1.0, 0.0)));
    initial_sampler_ = detail::AliasTable(initial_);
  }

  /// Dense transition matrix and rewards (converted to sparse: only p(x'|x) > 0 is stored).
  BasicFiniteHmm(const Eigen::MatrixXd& transition, Eigen::MatrixXd emission, Eigen::VectorXd initial,
                 const Eigen::MatrixXd& rewards, std::vector<bool> terminal = {},
                 double tolerance = default_row_sum_tolerance)
      : BasicFiniteHmm(SparseMatrix(transition.sparseView(1.0, 0.0)), std::move(emission), std::move(initial),
                       SparseMatrix(rewards.sparseView(1.0, 0.0)), std::move(terminal), tolerance) {}

  /// Draws x_0 ~ initial and returns y_0 ~ O(.|x_0).
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    state_ = initial_sampler_.sample(gen);
    return emit(gen);
  }

  /// x -> x' ~ P(.|x) with reward r(x, x'), then y' ~ O(.|x'). Throws std::logic_error in a terminal state.
  template <std::uniform_random_bit_generator G>
  TimeStep<> step(G& gen) {
    if (terminal_[state_]) throw std::logic_error("FiniteHmm::step: the episode has terminated; call reset first");
    const auto [next, reward] = transition_sampler_.sample(state_, gen);
    state_ = next;
    return {emit(gen), reward, terminal_[state_], false};
  }

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] std::size_t num_states() const noexcept { return static_cast<std::size_t>(transition_.rows()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return static_cast<std::size_t>(emission_.cols()); }

  /// The explicit model: the HMM itself.
  [[nodiscard]] const BasicFiniteHmm& model() const noexcept { return *this; }

  /// transition(x, x') = p(x' | x), row-stochastic; only positive entries are stored.
  [[nodiscard]] const SparseMatrix& transition() const noexcept { return transition_; }
  /// emission(x, y) = p(y | x), row-stochastic.
  [[nodiscard]] const Eigen::MatrixXd& emission() const noexcept { return emission_; }
  /// initial[x] = p(x_0 = x).
  [[nodiscard]] const Eigen::VectorXd& initial() const noexcept { return initial_; }
  /// rewards(x, x') = r(x, x'), with the sparsity pattern of transition().
  [[nodiscard]] const SparseMatrix& rewards() const noexcept { return rewards_; }
  /// The expected reward of leaving x: r̄(x) = Σ_x' p(x' | x) r(x, x').
  [[nodiscard]] const Eigen::VectorXd& expected_rewards() const noexcept { return expected_rewards_; }
  [[nodiscard]] bool is_terminal(State x) const { return terminal_.at(x); }
  /// One flag per state: entering it ends the episode.
  [[nodiscard]] const std::vector<bool>& terminal() const noexcept { return terminal_; }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  template <std::uniform_random_bit_generator G>
  Observation emit(G& gen) const {
    return emission_sampler_.sample(state_, gen).column;
  }

  SparseMatrix transition_;
  Eigen::MatrixXd emission_;
  Eigen::VectorXd initial_;
  std::vector<bool> terminal_;
  SparseMatrix rewards_;
  Eigen::VectorXd expected_rewards_;
  detail::AliasRows transition_sampler_;
  detail::AliasRows emission_sampler_;
  detail::AliasTable initial_sampler_;
  State state_ = 0;
};

}  // namespace memtrace
