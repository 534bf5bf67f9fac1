#pragma once
// FinitePomdp: a finite POMDP given by its matrices (paper §3 "POMDPs"), one transition matrix
// and one reward matrix per action. A simulator with O(1) draws (alias tables), and fixing a
// policy that does not look at the observations turns it into a FiniteHmm. See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <concepts>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/core.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/random.hpp"

namespace memtrace {

/// A finite POMDP with rewards on transitions:
///   transition(u)(x, x') = p(x' | x, u)  (one row-stochastic |X| x |X| sparse matrix per action u),
///   emission(x, y)       = p(y | x)      (row-stochastic, |X| x |Y|),
///   initial[x]           = p(x_0 = x),
///   rewards(u)(x, x')    = r(x, u, x')   (stored where p(x' | x, u) > 0).
/// reset(gen) draws x_0 and returns y_0 ~ O(.|x_0); step(u, gen) moves x -> x' ~ P(.|x, u), pays
/// r(x, u, x') and returns y' ~ O(.|x'). Terminal states end the episode as in FiniteHmm.
/// Satisfies Pomdp.
class FinitePomdp {
 public:
  /// One transition and one reward matrix per action (at least one action). Throws
  /// std::invalid_argument naming the bad matrix (with its action), row or entry.
  FinitePomdp(std::vector<SparseMatrix> transitions, Eigen::MatrixXd emission, Eigen::VectorXd initial,
              const std::vector<SparseMatrix>& rewards, std::vector<bool> terminal = {},
              double tolerance = default_row_sum_tolerance)
      : emission_(std::move(emission)), initial_(std::move(initial)), terminal_(std::move(terminal)) {
    constexpr const char* who = "FinitePomdp";
    detail::check_tolerance(who, tolerance);
    if (transitions.empty()) detail::invalid(who, ": transitions must hold one matrix per action, got none");
    if (rewards.size() != transitions.size())
      detail::invalid(who, ": rewards must hold one matrix per action (", transitions.size(), "), got ",
                      rewards.size());
    const Eigen::Index n = transitions[0].rows();
    if (n == 0) detail::invalid(who, ": transition(0) must have at least one state, got 0 x ", transitions[0].cols());
    for (std::size_t u = 0; u < transitions.size(); ++u) {
      const std::string t = "transition(" + std::to_string(u) + ")", r = "rewards(" + std::to_string(u) + ")";
      detail::check_shape(who, (t + " (|X| x |X|)").c_str(), transitions[u].rows(), transitions[u].cols(), n, n);
      detail::check_shape(who, (r + " (|X| x |X|)").c_str(), rewards[u].rows(), rewards[u].cols(), n, n);
      transitions[u].makeCompressed();
      detail::check_row_stochastic(who, t.c_str(), transitions[u], tolerance);
      detail::check_finite(who, r.c_str(), rewards[u]);
    }
    detail::check_shape(who, "emission (|X| x |Y|)", emission_.rows(), emission_.cols(), n,
                        emission_.cols() == 0 ? 1 : emission_.cols());
    detail::check_shape(who, "initial (|X| x 1)", initial_.rows(), initial_.cols(), n, 1);
    if (!terminal_.empty() && terminal_.size() != static_cast<std::size_t>(n))
      detail::invalid(who, ": terminal must be empty or have one flag per state (", n, "), got ", terminal_.size());
    detail::check_row_stochastic(who, "emission", emission_, tolerance);
    detail::check_distribution(who, "initial", initial_, tolerance);
    if (terminal_.empty()) terminal_.assign(static_cast<std::size_t>(n), false);
    for (Eigen::Index x = 0; x < n; ++x)
      if (terminal_[static_cast<std::size_t>(x)] && initial_[x] > 0.0)
        detail::invalid(who, ": initial puts probability ", initial_[x], " on terminal state ", x);

    for (std::size_t u = 0; u < transitions.size(); ++u) {
      transitions_.push_back(detail::pruned(std::move(transitions[u])));
      SparseMatrix r = transitions_.back();  // r(x, u, x') aligned with the entries of P_u
      for (Eigen::Index x = 0; x < n; ++x)
        for (SparseMatrix::InnerIterator it(r, x); it; ++it) it.valueRef() = rewards[u].coeff(x, it.col());
      rewards_.push_back(std::move(r));
      transition_samplers_.emplace_back(transitions_.back(), &rewards_.back());
    }
    tolerance_ = tolerance;
    emission_sampler_ = detail::AliasRows(detail::pruned(emission_.sparseView(1.0, 0.0)));
    initial_sampler_ = detail::AliasTable(initial_);
  }

  /// Draws x_0 ~ initial and returns y_0 ~ O(.|x_0).
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    state_ = initial_sampler_.sample(gen);
    return emit(gen);
  }

  /// x -> x' ~ P(.|x, u) with reward r(x, u, x'), then y' ~ O(.|x'). Throws std::invalid_argument
  /// for an action out of range and std::logic_error in a terminal state.
  template <std::uniform_random_bit_generator G>
  TimeStep<> step(Action u, G& gen) {
    if (u >= transitions_.size())
      detail::invalid("FinitePomdp::step: action must be in [0, ", transitions_.size(), "), got ", u);
    if (terminal_[state_]) throw std::logic_error("FinitePomdp::step: the episode has terminated; call reset first");
    const auto [next, reward] = transition_samplers_[u].sample(state_, gen);
    state_ = next;
    return {emit(gen), reward, terminal_[state_], false};
  }

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] std::size_t num_states() const noexcept { return static_cast<std::size_t>(initial_.size()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return static_cast<std::size_t>(emission_.cols()); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return transitions_.size(); }

  /// transition(u)(x, x') = p(x' | x, u), row-stochastic; only positive entries are stored.
  [[nodiscard]] const SparseMatrix& transition(Action u) const { return transitions_.at(u); }
  /// emission(x, y) = p(y | x), row-stochastic.
  [[nodiscard]] const Eigen::MatrixXd& emission() const noexcept { return emission_; }
  [[nodiscard]] const Eigen::VectorXd& initial() const noexcept { return initial_; }
  /// rewards(u)(x, x') = r(x, u, x'), with the sparsity pattern of transition(u).
  [[nodiscard]] const SparseMatrix& rewards(Action u) const { return rewards_.at(u); }
  [[nodiscard]] const std::vector<bool>& terminal() const noexcept { return terminal_; }

  /// The HMM of a policy that depends on the state only: policy(x, u) = π(u | x), row-stochastic
  /// |X| x |U|. Then p(x' | x) = Σ_u π(u|x) p(x'|x, u) and r(x, x') is the expected reward of the
  /// transition, Σ_u π(u|x) p(x'|x, u) r(x, u, x') / p(x'|x). (A policy of the observations is not
  /// an HMM with these emissions: y_t and u_t would be correlated.)
  [[nodiscard]] FiniteHmm with_policy(const Eigen::MatrixXd& policy) const {
    constexpr const char* who = "FinitePomdp::with_policy";
    const auto n = static_cast<Eigen::Index>(num_states());
    detail::check_shape(who, "policy (|X| x |U|)", policy.rows(), policy.cols(), n,
                        static_cast<Eigen::Index>(num_actions()));
    detail::check_row_stochastic(who, "policy", policy, tolerance_);
    SparseMatrix p(n, n), paid(n, n);  // paid(x, x') = Σ_u π(u|x) p(x'|x, u) r(x, u, x')
    for (std::size_t u = 0; u < num_actions(); ++u) {
      const auto weight = policy.col(static_cast<Eigen::Index>(u)).asDiagonal();
      p += SparseMatrix(weight * transitions_[u]);
      paid += SparseMatrix(weight * SparseMatrix(transitions_[u].cwiseProduct(rewards_[u])));
    }
    p = detail::pruned(std::move(p));
    SparseMatrix r = p;
    for (Eigen::Index x = 0; x < n; ++x)
      for (SparseMatrix::InnerIterator it(r, x); it; ++it) it.valueRef() = paid.coeff(x, it.col()) / it.value();
    return FiniteHmm(std::move(p), emission_, initial_, r, terminal_, tolerance_);
  }

  /// The HMM of the policy that draws u with probability action_probabilities[u] in every state.
  [[nodiscard]] FiniteHmm with_action_probabilities(const Eigen::VectorXd& action_probabilities) const {
    detail::check_shape("FinitePomdp::with_action_probabilities", "action_probabilities (|U| x 1)",
                        action_probabilities.rows(), action_probabilities.cols(),
                        static_cast<Eigen::Index>(num_actions()), 1);
    detail::check_distribution("FinitePomdp::with_action_probabilities", "action_probabilities", action_probabilities,
                               tolerance_);
    return with_policy(Eigen::MatrixXd(action_probabilities.transpose().replicate(initial_.size(), 1)));
  }

 private:
  template <std::uniform_random_bit_generator G>
  Observation emit(G& gen) const {
    return emission_sampler_.sample(state_, gen).column;
  }

  Eigen::MatrixXd emission_;
  Eigen::VectorXd initial_;
  std::vector<bool> terminal_;
  std::vector<SparseMatrix> transitions_;
  std::vector<SparseMatrix> rewards_;
  std::vector<detail::AliasRows> transition_samplers_;
  detail::AliasRows emission_sampler_;
  detail::AliasTable initial_sampler_;
  double tolerance_ = default_row_sum_tolerance;
  State state_ = 0;
};

}  // namespace memtrace
