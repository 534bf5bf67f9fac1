#pragma once
// The bridge between Cassandra's .pomdp files (PomdpFile, env/pomdp_file.hpp) and memtrace's
// models: to_finite_pomdp turns a file into a FinitePomdp (a simulator, and through a fixed policy
// an HMM the exact analysis solves); to_pomdp_file writes a FinitePomdp or FiniteHmm back as a
// file for other tools. Kept apart from pomdp_file.hpp so that reading files does not pull in the
// simulators. See docs/classic-pomdps.md ("Models").

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/finite_pomdp.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/env/pomdp_file.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The name to_pomdp_file gives the single action of an exported FiniteHmm.
inline constexpr const char* pomdp_hmm_action = "step";

/// The FinitePomdp of a .pomdp file. A file has no observation before the first action, so the
/// model has |Y| + 1 observations: those of the file (same indices) and `start` (index |Y|),
/// emitted at reset only (initial_emission is one-hot on it; every emission(u) gives it
/// probability 0). Emissions that are the same matrix for every action are given once (the HMM of
/// a policy then has 2 |X| states rather than (|U| + 1) |X|). `values: cost` files are negated:
/// the model pays rewards. Rewards that differ between observations that O(. | x', u) can emit
/// take the R(x, u, x', y) form (|Y| + 1 columns per x', 0 for `start`); otherwise r(x, u, x') is
/// the reward R(u, x, x', y) of any observation y that can be emitted (all equal). The format has
/// no terminal states: the model is continuing. Rows are checked with pomdp_file_tolerance, as the
/// file was. Throws std::invalid_argument if `file` is not a valid model.
template <class Lazy = void>
[[nodiscard]] FinitePomdp to_finite_pomdp(const detail::lazy_t<PomdpFile, Lazy>& file) {
  detail::check_pomdp_file(file, "to_finite_pomdp");
  const auto n = static_cast<Eigen::Index>(file.num_states());
  const auto k = static_cast<Eigen::Index>(file.num_observations());
  const std::size_t actions = file.num_actions();
  const double sign = file.costs ? -1.0 : 1.0;

  using Matrix = detail::lazy_t<Eigen::MatrixXd, Lazy>;  // Eigen::MatrixXd (env/fwd.hpp)
  typename BasicFinitePomdp<Lazy>::Matrices m;
  m.tolerance = pomdp_file_tolerance;
  m.initial = file.start;
  bool same_emissions = true;
  for (std::size_t u = 1; u < actions; ++u)
    same_emissions = same_emissions && (file.observation[u].array() == file.observation[0].array()).all();
  for (std::size_t u = 0; u < (same_emissions ? 1 : actions); ++u) {
    Matrix o = Matrix::Zero(n, k + 1);
    o.leftCols(k) = file.observation[u];
    m.emissions.push_back(std::move(o));
  }
  m.initial_emission = Matrix::Zero(n, k + 1);
  m.initial_emission.col(k).setOnes();
  for (std::size_t u = 0; u < actions; ++u)
    m.transitions.push_back(SparseMatrix(file.transition[u].sparseView(1.0, 0.0)));

  // One pass over R(u, x, ., .): the rewards of every step that can happen, and whether any of
  // them depends on the observation.
  std::vector<std::vector<Eigen::Triplet<double>>> by_transition(actions), by_observation(actions);
  bool depends_on_observation = false;
  file.for_each_reward_matrix([&](std::size_t u, std::size_t x, const auto& r) {
    const auto& t = file.transition[u];
    const auto& o = file.observation[u];
    const auto row = static_cast<Eigen::Index>(x);
    for (Eigen::Index next = 0; next < n; ++next) {
      if (t(row, next) == 0.0) continue;
      bool first = true;
      double value = 0.0;
      for (Eigen::Index y = 0; y < k; ++y) {
        if (o(next, y) == 0.0) continue;
        const double paid = sign * r(next, y);
        if (paid != 0.0) by_observation[u].emplace_back(row, next * (k + 1) + y, paid);
        if (first) value = paid;
        depends_on_observation = depends_on_observation || paid != value;
        first = false;
      }
      if (value != 0.0) by_transition[u].emplace_back(row, next, value);
    }
  });
  for (std::size_t u = 0; u < actions; ++u) {
    const auto& entries = depends_on_observation ? by_observation[u] : by_transition[u];
    SparseMatrix r(n, depends_on_observation ? n * (k + 1) : n);
    r.setFromTriplets(entries.begin(), entries.end());
    m.rewards.push_back(std::move(r));
  }
  return BasicFinitePomdp<Lazy>(std::move(m));
}

namespace detail {

/// The parts of a PomdpFile that do not depend on where the model came from: numbered states,
/// actions and observations, the discount, `values: reward`.
template <class Lazy = void>
[[nodiscard]] PomdpFile numbered_pomdp_file(std::size_t states, std::size_t actions, std::size_t observations,
                                            double discount) {
  PomdpFile file;
  for (std::size_t x = 0; x < states; ++x) file.states.push_back(std::to_string(x));
  for (std::size_t u = 0; u < actions; ++u) file.actions.push_back(std::to_string(u));
  for (std::size_t y = 0; y < observations; ++y) file.observations.push_back(std::to_string(y));
  file.discount = discount;
  return file;
}

/// T(. | x) as a dense matrix, a terminal state's row replaced by `initial` (the restart chain the
/// exact analysis uses, StationaryProcess).
template <class Lazy = void>
[[nodiscard]] Eigen::MatrixXd restart_chain(const lazy_t<SparseMatrix, Lazy>& transition,
                                            const lazy_t<Eigen::VectorXd, Lazy>& initial,
                                            const std::vector<bool>& terminal) {
  lazy_t<Eigen::MatrixXd, Lazy> t(transition);
  for (Eigen::Index x = 0; x < t.rows(); ++x)
    if (terminal[static_cast<std::size_t>(x)]) t.row(x) = initial.transpose();
  return t;
}

}  // namespace detail

/// The .pomdp file of a FinitePomdp, for other tools (pomdp-solve, POMDPs.jl, ...), with discount
/// `discount` in [0, 1]. States, actions and observations are numbered. What the format cannot say:
/// - terminal states: the file holds the chain a terminal state continues with, T(. | x, u) =
///   `initial` for every u with reward 0 (the restart the exact analysis uses, StationaryProcess);
///   reading it back gives a continuing model, whose values bootstrap across the restart;
/// - the first observation: the file has none before the first action, so initial_emission is
///   dropped, and an observation that only initial_emission emits (to_finite_pomdp's `start`, the
///   last one, with probability 0 in every emission(u)) is dropped as well, so that a model read
///   from a file comes back as the same model.
/// Rewards are written as entries R: u : x : x' : * (or : y when they depend on the observation),
/// one per nonzero reward of a step that can happen. Throws std::invalid_argument for a discount
/// outside [0, 1].
template <class Lazy = void>
[[nodiscard]] PomdpFile to_pomdp_file(const detail::lazy_t<FinitePomdp, Lazy>& pomdp, double discount) {
  const std::size_t n = pomdp.num_states(), actions = pomdp.num_actions();
  std::size_t k = pomdp.num_observations();
  const auto last = static_cast<Eigen::Index>(k - 1);
  bool start_only = k > 1;  // the last observation is emitted at reset only
  for (std::size_t u = 0; u < actions && start_only; ++u) start_only = pomdp.emission(u).col(last).isZero(0.0);
  start_only = start_only && pomdp.initial_emission().col(last).isOnes(0.0);
  if (start_only) --k;

  PomdpFile file = detail::numbered_pomdp_file(n, actions, k, discount);
  file.start = pomdp.initial();
  for (std::size_t u = 0; u < actions; ++u) {
    file.transition.push_back(detail::restart_chain(pomdp.transition(u), pomdp.initial(), pomdp.terminal()));
    file.observation.push_back(pomdp.emission(u).leftCols(static_cast<Eigen::Index>(k)));
    const auto& o = pomdp.emission(u);
    for (Eigen::Index x = 0; x < static_cast<Eigen::Index>(n); ++x) {
      if (pomdp.terminal()[static_cast<std::size_t>(x)]) continue;  // the restart pays nothing
      for (SparseMatrix::InnerIterator it(pomdp.transition(u), x); it; ++it) {
        const auto next = static_cast<std::size_t>(it.col());
        if (!pomdp.rewards_depend_on_observation()) {
          const double r = pomdp.rewards(u).coeff(x, it.col());
          if (r != 0.0) file.rewards.push_back({u, static_cast<State>(x), next, pomdp_any, r});
          continue;
        }
        for (std::size_t y = 0; y < k; ++y) {
          if (o(it.col(), static_cast<Eigen::Index>(y)) == 0.0) continue;
          const double r = pomdp.reward(static_cast<State>(x), u, next, y);
          if (r != 0.0) file.rewards.push_back({u, static_cast<State>(x), next, y, r});
        }
      }
    }
  }
  detail::check_pomdp_file(file, "to_pomdp_file");
  return file;
}

/// The .pomdp file of a FiniteHmm: one action, named pomdp_hmm_action ("step"), numbered states
/// and observations, O(y | x') = emission, rewards r(x, x'). As for a FinitePomdp, terminal states
/// continue with `initial` (reward 0) and the first observation's own emission is dropped: read
/// back, the model emits to_finite_pomdp's `start` at reset instead of y_0 ~ emission(x_0, .).
/// Throws std::invalid_argument for a discount outside [0, 1].
template <class Lazy = void>
[[nodiscard]] PomdpFile to_pomdp_file(const detail::lazy_t<FiniteHmm, Lazy>& hmm, double discount) {
  const std::size_t n = hmm.num_states(), k = hmm.num_observations();
  PomdpFile file = detail::numbered_pomdp_file(n, 1, k, discount);
  file.actions = {pomdp_hmm_action};
  file.actions_named = true;
  file.start = hmm.initial();
  file.transition.push_back(detail::restart_chain(hmm.transition(), hmm.initial(), hmm.terminal()));
  file.observation.push_back(hmm.emission());
  for (Eigen::Index x = 0; x < static_cast<Eigen::Index>(n); ++x) {
    if (hmm.terminal()[static_cast<std::size_t>(x)]) continue;
    for (SparseMatrix::InnerIterator it(hmm.rewards(), x); it; ++it)
      if (it.value() != 0.0)
        file.rewards.push_back({0, static_cast<State>(x), static_cast<State>(it.col()), pomdp_any, it.value()});
  }
  detail::check_pomdp_file(file, "to_pomdp_file");
  return file;
}

}  // namespace memtrace
