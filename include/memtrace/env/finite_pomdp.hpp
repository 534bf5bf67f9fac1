#pragma once
// FinitePomdp: a finite POMDP given by its matrices (paper §3 "POMDPs"), in the standard form of
// the classic problems (Tiger, 4x3, Hallway, ...): transitions T(x'|x,u), emissions O(y|x',u) that
// may depend on the action, rewards R(x,u,x',y) that may depend on the observation, an initial
// distribution. A simulator with O(1) draws (alias tables), the belief update given the action,
// and fixing a policy that does not look at the observations turns it into a FiniteHmm. See
// docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/forward_filter.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A finite POMDP with rewards on transitions (all matrices row-stochastic):
///   transition(u)(x, x') = T(x' | x, u)  (one |X| x |X| sparse matrix per action u),
///   emission(u)(x', y)   = O(y | x', u)  (|X| x |Y|: one matrix for every action, the paper's
///                                          p(y | x), or one per action),
///   initial_emission(x, y) = p(y_0 | x_0) (|X| x |Y|: the first observation, before any action),
///   initial[x]           = p(x_0 = x),
///   reward(x, u, x', y)  = R(x, u, x', y) (r(x, u, x') when it does not depend on y).
/// reset(gen) draws x_0 and returns y_0 ~ initial_emission(x_0, .); step(u, gen) moves
/// x -> x' ~ T(.|x, u), emits y' ~ O(.|x', u) and pays R(x, u, x', y'). Terminal states end the
/// episode as in FiniteHmm. Satisfies Pomdp.
/// (`FinitePomdp` is `BasicFinitePomdp<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicFinitePomdp {
 public:
  /// The general model by name (designated initialisers):
  ///   FinitePomdp pomdp({.transitions = t, .emissions = {o_listen, o_open}, .initial = p0,
  ///                      .rewards = r, .initial_emission = o0});
  struct Matrices {
    /// transitions[u](x, x') = T(x' | x, u): one row-stochastic |X| x |X| matrix per action.
    std::vector<SparseMatrix> transitions{};
    /// One row-stochastic |X| x |Y| matrix, O(y | x') for every action (the paper's case), or one
    /// per action, emissions[u](x', y) = O(y | x', u). With one action, one matrix is action-free.
    std::vector<Eigen::MatrixXd> emissions{};
    /// initial[x] = p(x_0 = x).
    Eigen::VectorXd initial{};
    /// One per action: |X| x |X| with rewards[u](x, x') = r(x, u, x'), or |X| x |X||Y| with
    /// rewards[u](x, x'|Y| + y) = R(x, u, x', y) (every action the same form; with |Y| = 1 the two
    /// coincide). Only entries with T(x'|x,u) > 0 (and O(y|x',u) > 0) are ever paid.
    std::vector<SparseMatrix> rewards{};
    /// p(y_0 | x_0), row-stochastic |X| x |Y|. Empty: the emission, which needs action-free
    /// emissions (with action-dependent emissions there is no action before y_0, so it is required).
    Eigen::MatrixXd initial_emission{};
    /// Empty (a continuing model) or one flag per state: entering it ends the episode.
    std::vector<bool> terminal{};
    /// Rows (and `initial`) may differ from summing to 1 by this much.
    double tolerance = default_row_sum_tolerance;
  };

  /// The general model. Throws std::invalid_argument naming the bad matrix (with its action), its
  /// row or entry and the value. Every shape is checked before anything is built.
  explicit BasicFinitePomdp(Matrices m) : initial_(std::move(m.initial)), terminal_(std::move(m.terminal)) {
    constexpr const char* who = "FinitePomdp";
    detail::check_tolerance(who, m.tolerance);
    auto& transitions = m.transitions;
    if (transitions.empty()) detail::invalid(who, ": transitions must hold one matrix per action, got none");
    const std::size_t actions = transitions.size();
    if (m.rewards.size() != actions)
      detail::invalid(who, ": rewards must hold one matrix per action (", actions, "), got ", m.rewards.size());
    if (m.emissions.size() != 1 && m.emissions.size() != actions)
      detail::invalid(who, ": emissions must hold one matrix (the same for every action) or one per action (", actions,
                      "), got ", m.emissions.size());
    const bool per_action = m.emissions.size() > 1;
    const Eigen::Index n = transitions[0].rows();
    if (n == 0) detail::invalid(who, ": transition(0) must have at least one state, got 0 x ", transitions[0].cols());
    for (std::size_t u = 0; u < actions; ++u)
      detail::check_shape(who, (transition_name(u) + " (|X| x |X|)").c_str(), transitions[u].rows(),
                          transitions[u].cols(), n, n);
    const Eigen::Index ny = m.emissions[0].cols() == 0 ? 1 : m.emissions[0].cols();
    for (std::size_t u = 0; u < m.emissions.size(); ++u)
      detail::check_shape(who, (emission_name(per_action, u) + " (|X| x |Y|)").c_str(), m.emissions[u].rows(),
                          m.emissions[u].cols(), n, ny);
    // The form of the rewards: |X| x |X| (r(x, u, x')) or |X| x |X||Y| (R(x, u, x', y)).
    if (m.rewards[0].rows() != n || (m.rewards[0].cols() != n && m.rewards[0].cols() != n * ny))
      detail::invalid(who, ": rewards(0) must be ", n, " x ", n, " (r(x, u, x')) or ", n, " x ", n * ny,
                      " (R(x, u, x', y) at column x'|Y| + y), got ", m.rewards[0].rows(), " x ", m.rewards[0].cols());
    const bool observation_rewards = m.rewards[0].cols() != n;
    if (observation_rewards && static_cast<std::uint64_t>(n * ny) > 0xffffffffULL)
      detail::invalid(who, ": rewards that depend on the observation need |X||Y| below 2^32, got ", n * ny);
    for (std::size_t u = 1; u < actions; ++u)
      detail::check_shape(
          who, (reward_name(u) + (observation_rewards ? " (|X| x |X||Y|, as rewards(0))" : " (|X| x |X|)")).c_str(),
          m.rewards[u].rows(), m.rewards[u].cols(), n, observation_rewards ? n * ny : n);
    detail::check_shape(who, "initial (|X| x 1)", initial_.rows(), initial_.cols(), n, 1);
    const bool given_initial_emission = m.initial_emission.size() != 0;
    if (given_initial_emission)
      detail::check_shape(who, "initial_emission (|X| x |Y|)", m.initial_emission.rows(), m.initial_emission.cols(), n,
                          ny);
    else if (per_action)
      detail::invalid(who,
                      ": initial_emission (p(y_0 | x_0), |X| x |Y|) is required when the emissions depend on the "
                      "action: no action precedes y_0");

    for (std::size_t u = 0; u < actions; ++u) {
      transitions[u].makeCompressed();
      detail::check_row_stochastic(who, transition_name(u).c_str(), transitions[u], m.tolerance);
      if (observation_rewards)
        check_observation_rewards(who, u, m.rewards[u], static_cast<std::size_t>(ny));
      else
        detail::check_finite(who, reward_name(u).c_str(), m.rewards[u]);
    }
    for (std::size_t u = 0; u < m.emissions.size(); ++u)
      detail::check_row_stochastic(who, emission_name(per_action, u).c_str(), m.emissions[u], m.tolerance);
    if (given_initial_emission) detail::check_row_stochastic(who, "initial_emission", m.initial_emission, m.tolerance);
    detail::check_distribution(who, "initial", initial_, m.tolerance);
    detail::complete_terminal_flags(who, terminal_, initial_);
    // Rows accepted within m.tolerance are made to sum to 1 up to rounding, once, here: every
    // analysis then accepts the model and its HMMs (docs/environments.md, "Tolerance").
    for (SparseMatrix& t : transitions) detail::renormalize_rows(t);
    for (Eigen::MatrixXd& o : m.emissions) detail::renormalize_rows(o);
    if (given_initial_emission) detail::renormalize_rows(m.initial_emission);
    detail::renormalize_entries(initial_);

    emissions_ = std::move(m.emissions);
    std::vector<SparseMatrix> sparse_emissions;
    for (const Eigen::MatrixXd& o : emissions_) {
      sparse_emissions.push_back(detail::pruned(o.sparseView(1.0, 0.0)));
      emission_samplers_.emplace_back(sparse_emissions.back());
    }
    for (std::size_t u = 0; u < actions; ++u) {
      transitions_.push_back(detail::pruned(std::move(transitions[u])));
      const SparseMatrix& p = transitions_.back();
      SparseMatrix r = p;  // r(x, u, x') aligned with the entries of T_u (for R(x, u, x', y): its mean over y)
      if (!observation_rewards) {
        for (Eigen::Index x = 0; x < n; ++x)
          for (SparseMatrix::InnerIterator it(r, x); it; ++it) it.valueRef() = m.rewards[u].coeff(x, it.col());
        transition_samplers_.emplace_back(p, &r);
      } else {
        // One alias table per (x, u) over the pairs (x', y), p(x', y | x, u) = T(x'|x, u) O(y|x', u),
        // paying R(x, u, x', y): a step is one O(1) draw.
        const SparseMatrix& o = sparse_emissions[per_action ? u : 0];
        std::vector<Eigen::Triplet<double>> joint, paid;
        for (Eigen::Index x = 0; x < n; ++x)
          for (SparseMatrix::InnerIterator it(r, x); it; ++it) {
            const double t = it.value();
            double mean = 0.0;
            for (SparseMatrix::InnerIterator e(o, it.col()); e; ++e) {
              const Eigen::Index column = it.col() * ny + e.col();
              const double reward = m.rewards[u].coeff(x, column);
              joint.emplace_back(x, column, t * e.value());
              paid.emplace_back(x, column, reward);
              mean += e.value() * reward;
            }
            it.valueRef() = mean;
          }
        SparseMatrix j(n, n * ny), rj(n, n * ny);
        j.setFromTriplets(joint.begin(), joint.end());
        rj.setFromTriplets(paid.begin(), paid.end());
        j.makeCompressed();
        rj.makeCompressed();
        joint_samplers_.emplace_back(j, &rj);
        observation_rewards_.push_back(std::move(rj));
      }
      rewards_.push_back(std::move(r));
    }
    // An initial emission equal to the (action-free) emission is not kept twice: then the HMM of a
    // policy needs no start states and is the |X|-state HMM.
    if (given_initial_emission && (per_action || m.initial_emission != emissions_[0])) {
      initial_emission_ = std::move(m.initial_emission);
      initial_emission_sampler_ = detail::AliasRows(detail::pruned(initial_emission_.sparseView(1.0, 0.0)));
      own_initial_emission_ = true;
    }
    tolerance_ = m.tolerance;
    emission_stride_ = per_action ? 1 : 0;
    initial_sampler_ = detail::AliasTable(initial_);
  }

  /// The paper's case: one transition and one reward matrix r(x, u, x') per action, one emission
  /// O(y | x') for every action (also the first observation's). Throws std::invalid_argument naming
  /// the bad matrix (with its action), row or entry.
  BasicFinitePomdp(std::vector<SparseMatrix> transitions, Eigen::MatrixXd emission, Eigen::VectorXd initial,
                   const std::vector<SparseMatrix>& rewards, std::vector<bool> terminal = {},
                   double tolerance = default_row_sum_tolerance)
      : BasicFinitePomdp(Matrices{.transitions = std::move(transitions),
                                  .emissions = one(std::move(emission)),
                                  .initial = std::move(initial),
                                  .rewards = rewards,
                                  .initial_emission = {},
                                  .terminal = std::move(terminal),
                                  .tolerance = tolerance}) {}

  /// Draws x_0 ~ initial and returns y_0 ~ initial_emission(x_0, .).
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    state_ = initial_sampler_.sample(gen);
    return (own_initial_emission_ ? initial_emission_sampler_ : emission_samplers_[0]).sample(state_, gen).column;
  }

  /// x -> x' ~ T(.|x, u), y' ~ O(.|x', u), reward R(x, u, x', y'). Throws std::invalid_argument for
  /// an action out of range and std::logic_error in a terminal state.
  template <std::uniform_random_bit_generator G>
  TimeStep<> step(Action u, G& gen) {
    // One well-predicted branch: a bad call, and rewards that depend on y, go the slow way.
    if (u >= transitions_.size() || terminal_[state_] || !joint_samplers_.empty()) [[unlikely]]
      return checked_or_joint_step(u, gen);
    const auto [next, reward] = transition_samplers_[u].sample(state_, gen);
    state_ = next;
    return {emission_samplers_[u * emission_stride_].sample(state_, gen).column, reward, terminal_[state_], false};
  }

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] std::size_t num_states() const noexcept { return static_cast<std::size_t>(initial_.size()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return static_cast<std::size_t>(emissions_[0].cols()); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return transitions_.size(); }

  /// transition(u)(x, x') = T(x' | x, u), row-stochastic; only positive entries are stored.
  [[nodiscard]] const SparseMatrix& transition(Action u) const { return transitions_.at(u); }
  /// emission(x, y) = p(y | x), row-stochastic: the emission of every action. Throws
  /// std::logic_error when the emissions depend on the action (use emission(u)).
  [[nodiscard]] const Eigen::MatrixXd& emission() const {
    if (emissions_depend_on_action())
      throw std::logic_error("FinitePomdp::emission: the emissions depend on the action; call emission(u)");
    return emissions_[0];
  }
  /// emission(u)(x', y) = O(y | x', u), row-stochastic (the same matrix for every u when the
  /// emissions do not depend on the action). Throws std::out_of_range for u >= num_actions().
  [[nodiscard]] const Eigen::MatrixXd& emission(Action u) const {
    if (u >= num_actions())
      throw std::out_of_range(
          detail::message("FinitePomdp::emission: action must be in [0, ", num_actions(), "), got ", u));
    return emissions_[emissions_depend_on_action() ? u : 0];
  }
  /// initial_emission(x, y) = p(y_0 | x_0), row-stochastic (the emission unless one was given).
  [[nodiscard]] const Eigen::MatrixXd& initial_emission() const noexcept {
    return own_initial_emission_ ? initial_emission_ : emissions_[0];
  }
  [[nodiscard]] const Eigen::VectorXd& initial() const noexcept { return initial_; }
  /// rewards(u)(x, x') = r(x, u, x'), with the sparsity pattern of transition(u); when the rewards
  /// depend on the observation, their mean Σ_y O(y | x', u) R(x, u, x', y).
  [[nodiscard]] const SparseMatrix& rewards(Action u) const { return rewards_.at(u); }
  /// R(x, u, x', y): the reward of the step x -> x' under u that emits y (r(x, u, x') when the
  /// rewards do not depend on y). 0 where T(x'|x, u) = 0 (or O(y|x', u) = 0 for rewards that depend
  /// on y): never paid. Throws std::invalid_argument for an index out of range.
  [[nodiscard]] double reward(State x, Action u, State next, Observation y) const {
    constexpr const char* who = "FinitePomdp::reward";
    check_state(who, "x", x);
    check_action(who, u);
    check_state(who, "next", next);
    detail::check_observation(who, y, num_observations());
    const auto row = static_cast<Eigen::Index>(x);
    if (!rewards_depend_on_observation()) return rewards_[u].coeff(row, static_cast<Eigen::Index>(next));
    return observation_rewards_[u].coeff(row, static_cast<Eigen::Index>(next * num_observations() + y));
  }
  [[nodiscard]] const std::vector<bool>& terminal() const noexcept { return terminal_; }
  /// Whether O(y | x', u) was given per action (a separate matrix for each u).
  [[nodiscard]] bool emissions_depend_on_action() const noexcept { return emissions_.size() > 1; }
  /// Whether the rewards were given as R(x, u, x', y) (|X| x |X||Y| per action).
  [[nodiscard]] bool rewards_depend_on_observation() const noexcept { return !observation_rewards_.empty(); }

  /// The belief after acting u from belief b and observing y (the Bayes filter, as POMDPTools'
  /// DiscreteUpdater): b'(x') ∝ O(y | x', u) Σ_x T(x' | x, u) b(x), the forward filter's step
  /// (forward_filter.hpp) with T(·|·, u); a terminal state's row is the model's own. Throws std::invalid_argument
  /// naming the problem for b of the wrong length or not a distribution (within the model's
  /// tolerance), u or y out of range, or y of probability 0 after u from b.
  [[nodiscard]] Eigen::VectorXd update_belief(const Eigen::VectorXd& belief, Action u, Observation y) const {
    constexpr const char* who = "FinitePomdp::update_belief";
    detail::check_shape(who, "belief (|X| x 1)", belief.rows(), belief.cols(), initial_.size(), 1);
    detail::check_distribution(who, "belief", belief, tolerance_);
    check_action(who, u);
    detail::check_observation(who, y, num_observations());
    Eigen::VectorXd next = belief;
    if (!(forward_step(next, transitions_[u].transpose(), emission(u).col(static_cast<Eigen::Index>(y))) > 0.0))
      detail::invalid(who, ": observation ", y, " has probability 0 after action ", u, " from this belief");
    return next;
  }

  /// The belief given the first observation: b_0(x) ∝ initial[x] initial_emission(x, y_0), the
  /// forward filter's conditioning step. Throws
  /// std::invalid_argument for y_0 out of range or of probability 0.
  [[nodiscard]] Eigen::VectorXd initial_belief(Observation y0) const {
    constexpr const char* who = "FinitePomdp::initial_belief";
    detail::check_observation(who, y0, num_observations());
    Eigen::VectorXd b = initial_;
    if (!(condition_belief(b, initial_emission().col(static_cast<Eigen::Index>(y0))) > 0.0))
      detail::invalid(who, ": observation ", y0, " has probability 0 at the start");
    return b;
  }

  /// The HMM of a policy that depends on the state only: policy(x, u) = π(u | x), row-stochastic
  /// |X| x |U| (a policy of the observations is not an HMM: y_t and u_t would be correlated). Its
  /// states (docs/environments.md):
  /// - emissions without the action and no separate initial_emission: the |X| states of the
  ///   POMDP, p(x' | x) = Σ_u π(u|x) T(x'|x, u), and r(x, x') the expected reward of the transition,
  ///   Σ_u π(u|x) T(x'|x, u) r̄(x, u, x') / p(x'|x), r̄ = rewards(u);
  /// - otherwise the state s = hmm_state(x', u) = b |X| + x' holds the action u that led into x'
  ///   (block b = u; b = 0 for every action when the emissions do not depend on it), followed by
  ///   the |X| start states hmm_start_state(x) (no action yet), which emit with initial_emission
  ///   and hold `initial`. p((x, .) -> (x', u)) = π(u|x) T(x'|x, u) (summed over u in the action-free
  ///   block), the reward is r̄(x, u, x') (its policy mean in the action-free block), terminal
  ///   flags are those of x'.
  [[nodiscard]] FiniteHmm with_policy(const Eigen::MatrixXd& policy) const {
    constexpr const char* who = "FinitePomdp::with_policy";
    const auto n = static_cast<Eigen::Index>(num_states());
    detail::check_shape(who, "policy (|X| x |U|)", policy.rows(), policy.cols(), n,
                        static_cast<Eigen::Index>(num_actions()));
    detail::check_row_stochastic(who, "policy", policy, tolerance_);
    if (emissions_depend_on_action()) return action_pair_hmm(policy);
    SparseMatrix p(n, n), paid(n, n);  // paid(x, x') = Σ_u π(u|x) T(x'|x, u) r̄(x, u, x')
    for (std::size_t u = 0; u < num_actions(); ++u) {
      const auto weight = policy.col(static_cast<Eigen::Index>(u)).asDiagonal();
      p += SparseMatrix(weight * transitions_[u]);
      paid += SparseMatrix(weight * SparseMatrix(transitions_[u].cwiseProduct(rewards_[u])));
    }
    p = detail::pruned(std::move(p));
    SparseMatrix r = p;
    for (Eigen::Index x = 0; x < n; ++x)
      for (SparseMatrix::InnerIterator it(r, x); it; ++it) it.valueRef() = paid.coeff(x, it.col()) / it.value();
    if (!own_initial_emission_) return FiniteHmm(std::move(p), emissions_[0], initial_, r, terminal_, tolerance_);
    return with_start_states(p, r);
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

  /// Whether the HMM of a policy has start states: the emissions depend on the action, or a
  /// separate initial_emission was given.
  [[nodiscard]] bool hmm_has_start_states() const noexcept { return own_initial_emission_; }
  /// The number of states of the HMM of a policy: (B + S) |X|, with B = |U| blocks of (x', u) when
  /// the emissions depend on the action (else 1) and S = 1 block of start states if there are any.
  [[nodiscard]] std::size_t num_hmm_states() const noexcept {
    return (emissions_.size() + (own_initial_emission_ ? 1 : 0)) * num_states();
  }
  /// The HMM state of being in x after action u: (emissions_depend_on_action() ? u : 0) |X| + x.
  /// Throws std::invalid_argument for x or u out of range.
  [[nodiscard]] State hmm_state(State x, Action u) const {
    check_state("FinitePomdp::hmm_state", "x", x);
    check_action("FinitePomdp::hmm_state", u);
    return (emissions_depend_on_action() ? u : 0) * num_states() + x;
  }
  /// The HMM state of starting in x (before any action): emissions_.size() |X| + x with start
  /// states, else x. Throws std::invalid_argument for x out of range.
  [[nodiscard]] State hmm_start_state(State x) const {
    check_state("FinitePomdp::hmm_start_state", "x", x);
    return own_initial_emission_ ? emissions_.size() * num_states() + x : x;
  }
  /// The POMDP state of HMM state s: s mod |X|. Throws std::invalid_argument for s out of range.
  [[nodiscard]] State pomdp_state(State s) const {
    if (s >= num_hmm_states())
      detail::invalid("FinitePomdp::pomdp_state: s must be in [0, ", num_hmm_states(), "), got ", s);
    return s % num_states();
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  /// step's checks and the step with rewards R(x, u, x', y): one draw of (x', y) from the joint table.
  template <std::uniform_random_bit_generator G>
  TimeStep<> checked_or_joint_step(Action u, G& gen) {
    if (u >= transitions_.size())
      detail::invalid("FinitePomdp::step: action must be in [0, ", transitions_.size(), "), got ", u);
    if (terminal_[state_]) throw std::logic_error("FinitePomdp::step: the episode has terminated; call reset first");
    const auto [column, reward] = joint_samplers_[u].sample(state_, gen);
    const std::size_t ny = num_observations();
    state_ = column / ny;
    return {column % ny, reward, terminal_[state_], false};
  }

  static std::vector<Eigen::MatrixXd> one(Eigen::MatrixXd m) {
    std::vector<Eigen::MatrixXd> v;
    v.push_back(std::move(m));
    return v;
  }
  static std::string transition_name(std::size_t u) { return "transition(" + std::to_string(u) + ")"; }
  static std::string reward_name(std::size_t u) { return "rewards(" + std::to_string(u) + ")"; }
  static std::string emission_name(bool per_action, std::size_t u) {
    return per_action ? "emission(" + std::to_string(u) + ")" : "emission";
  }

  /// Every stored entry of R(., u, ., .) finite; the message names x, x' and y.
  static void check_observation_rewards(const char* who, std::size_t u, const SparseMatrix& r, std::size_t ny) {
    for (Eigen::Index x = 0; x < r.outerSize(); ++x)
      for (SparseMatrix::InnerIterator it(r, x); it; ++it)
        if (!std::isfinite(it.value()))
          detail::invalid(who, ": rewards(", u, ")(x = ", x, ", x' = ", static_cast<std::size_t>(it.col()) / ny,
                          ", y = ", static_cast<std::size_t>(it.col()) % ny, ") must be a finite reward, got ",
                          it.value());
  }

  void check_state(const char* who, const char* name, State x) const {
    if (x >= num_states()) detail::invalid(who, ": ", name, " must be a state in [0, ", num_states(), "), got ", x);
  }
  void check_action(const char* who, Action u) const {
    if (u >= num_actions()) detail::invalid(who, ": action must be in [0, ", num_actions(), "), got ", u);
  }

  /// The action-free model with start states: block 0 (any action) and the start block, whose rows
  /// are those of block 0.
  [[nodiscard]] FiniteHmm with_start_states(const SparseMatrix& p, const SparseMatrix& r) const {
    const auto n = static_cast<Eigen::Index>(num_states());
    std::vector<Eigen::Triplet<double>> moves, paid;
    for (Eigen::Index block = 0; block < 2; ++block)
      for (Eigen::Index x = 0; x < n; ++x)
        for (SparseMatrix::InnerIterator it(p, x); it; ++it) {
          moves.emplace_back(block * n + x, it.col(), it.value());
          paid.emplace_back(block * n + x, it.col(), r.coeff(x, it.col()));
        }
    return assemble(2, moves, paid);
  }

  /// The action-pair model: (x, b) -> (x', u) with probability π(u|x) T(x'|x, u), for every block b.
  [[nodiscard]] FiniteHmm action_pair_hmm(const Eigen::MatrixXd& policy) const {
    const auto n = static_cast<Eigen::Index>(num_states());
    const auto blocks = static_cast<Eigen::Index>(num_actions() + 1);
    std::vector<Eigen::Triplet<double>> moves, paid;
    for (Eigen::Index x = 0; x < n; ++x)
      for (std::size_t u = 0; u < num_actions(); ++u) {
        const auto ui = static_cast<Eigen::Index>(u);
        const double weight = policy(x, ui);
        if (weight == 0.0) continue;
        for (SparseMatrix::InnerIterator it(transitions_[u], x), r(rewards_[u], x); it; ++it, ++r)
          for (Eigen::Index block = 0; block < blocks; ++block) {
            moves.emplace_back(block * n + x, ui * n + it.col(), weight * it.value());
            paid.emplace_back(block * n + x, ui * n + it.col(), r.value());
          }
      }
    return assemble(blocks, moves, paid);
  }

  /// The HMM of `blocks` blocks of |X| states, the last the start states: emissions per block,
  /// initial on the start block, terminal flags of the POMDP state.
  [[nodiscard]] FiniteHmm assemble(Eigen::Index blocks, const std::vector<Eigen::Triplet<double>>& moves,
                                   const std::vector<Eigen::Triplet<double>>& paid) const {
    const auto n = static_cast<Eigen::Index>(num_states());
    const Eigen::Index size = blocks * n;
    SparseMatrix p(size, size), r(size, size);
    p.setFromTriplets(moves.begin(), moves.end());
    r.setFromTriplets(paid.begin(), paid.end());
    Eigen::MatrixXd emission(size, emissions_[0].cols());
    for (Eigen::Index block = 0; block + 1 < blocks; ++block)
      emission.middleRows(block * n, n) = emissions_[static_cast<std::size_t>(block)];
    emission.bottomRows(n) = initial_emission_;
    Eigen::VectorXd initial = Eigen::VectorXd::Zero(size);
    initial.tail(n) = initial_;
    std::vector<bool> terminal;
    for (Eigen::Index block = 0; block < blocks; ++block)
      terminal.insert(terminal.end(), terminal_.begin(), terminal_.end());
    return FiniteHmm(std::move(p), std::move(emission), std::move(initial), r, std::move(terminal), tolerance_);
  }

  Eigen::VectorXd initial_;
  std::vector<bool> terminal_;
  std::vector<Eigen::MatrixXd> emissions_;  // one (action-free) or one per action
  Eigen::MatrixXd initial_emission_;        // only when it differs from the action-free emission
  std::vector<SparseMatrix> transitions_;
  std::vector<SparseMatrix> rewards_;                   // r(x, u, x') (mean over y), aligned with transitions_
  std::vector<SparseMatrix> observation_rewards_;       // R(x, u, x'|Y| + y) on the pattern of T O, or empty
  std::vector<detail::AliasRows> transition_samplers_;  // x' with payload r(x, u, x') (rewards without y)
  std::vector<detail::AliasRows> joint_samplers_;       // (x', y) with payload R(x, u, x', y) (rewards with y)
  std::vector<detail::AliasRows> emission_samplers_;
  detail::AliasRows initial_emission_sampler_;
  detail::AliasTable initial_sampler_;
  bool own_initial_emission_ = false;
  std::size_t emission_stride_ = 0;  // emission_samplers_[u * emission_stride_] emits after u
  double tolerance_ = default_row_sum_tolerance;
  State state_ = 0;
};

}  // namespace memtrace
