#pragma once
// The T-maze theory in one place (the paper's Theorem 5.8): the constants of
// its proof (the window length m = k, the forgetting factor λ = (k − 1)/k and the Lipschitz
// constant L = √2 e k) beside the histories the proof is about (Table 2), built from the
// model by episode_histories: every prefix of an episode of positive probability, labelled with
// its value E[v(x_t) | h]. With minimal_lipschitz_constant (lipschitz.hpp) they give the smallest
// Lipschitz constant that represents the T-maze's value function exactly, to compare with √2 e k.
// See docs/theory.md.

#include <Eigen/Core>
#include <cstddef>
#include <numbers>
#include <utility>
#include <vector>

#include "memtrace/analysis/lipschitz.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/env/tmaze.hpp"
#include "memtrace/forward_filter.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The most observations episode_histories holds in all its histories by default: 2^27 (1 GiB).
inline constexpr std::size_t default_max_history_observations = std::size_t{1} << 27;

/// Every history of an episode of env, from the episode start, of positive probability and at most
/// max_length observations long: each chronological (oldest first), shorter ones before longer
/// ones, each length in lexicographic order of the observations. Each is labelled with value =
/// E[v(x_t) | h] (v the state values with discount γ) and probability = p(y_0, ..., y_t, x_0,
/// ..., x_t non-terminal) from the episode start (a prefix's probability: they sum to more than 1
/// over all lengths), by the forward filter (forward_filter.hpp) from the model's `initial`,
/// conditioned at every step on x_t non-terminal: a history of an episode holds no terminal state,
/// so the terminal step ends it and is not part of it (the value error weighs non-terminal steps
/// only). The count can grow like |Y|^max_length: more than max_histories throws
/// std::invalid_argument, and so do histories holding more than max_observations observations in
/// all (long histories of a model with few observations), both before the list grows further.
/// Unlike labelled_histories (lipschitz.hpp), which lists all |Y|^n windows of one length n of the
/// stationary history, this follows the episodes, so the T-maze's 2k + 2 prefixes cost O(k).
template <class E>
requires FiniteModel<E>
[[nodiscard]] std::vector<LabelledHistory> episode_histories(
    const E& env, double discount, std::size_t max_length, std::size_t max_histories = std::size_t{1} << 20,
    std::size_t max_observations = default_max_history_observations) {
  constexpr const char* who = "episode_histories";
  const detail::lazy_t<Eigen::VectorXd, E> values = state_values(env, discount);  // checks discount
  const auto& model = env.model();
  const detail::lazy_t<SparseMatrix, E> pt = SparseMatrix(detail::to_sparse(model.transition()).transpose());
  const detail::lazy_t<Eigen::MatrixXd, E> o = detail::to_dense(model.emission());
  const Eigen::MatrixXd initial = detail::to_dense(model.initial());
  const Eigen::Index n = pt.rows();
  std::vector<bool> terminal(static_cast<std::size_t>(n), false);
  detail::lazy_t<Eigen::VectorXd, E> live = Eigen::VectorXd::Ones(n);  // 0 at terminal states
  if constexpr (requires { model.terminal(); }) {
    const auto& flags = model.terminal();
    for (std::size_t x = 0; x < flags.size() && static_cast<Eigen::Index>(x) < n; ++x)
      if (flags[x]) {
        terminal[x] = true;
        live[static_cast<Eigen::Index>(x)] = 0.0;
      }
  }
  struct Partial {
    std::vector<Observation> history;
    Eigen::VectorXd predicted;  // p(x_{t+1} | y_0, ..., y_t): `initial` for the empty history
    double probability = 1.0;   // p(y_0, ..., y_t)
  };
  std::vector<LabelledHistory> out;
  std::size_t stored = 0;  // observations held in out
  std::vector<Partial> level{{{}, Eigen::VectorXd(initial.col(0)), 1.0}};
  for (std::size_t length = 1; length <= max_length && !level.empty(); ++length) {
    std::vector<Partial> next;
    for (const Partial& partial : level) {
      for (Eigen::Index y = 0; y < o.cols(); ++y) {
        // The forward filter on the event {y_t = y, x_t non-terminal}: the episode goes on.
        Eigen::VectorXd b = partial.predicted;
        const double mass = condition_belief(b, o.col(y).cwiseProduct(live));
        if (!(mass > 0.0)) continue;
        if (out.size() >= max_histories)
          detail::invalid(who, ": more than max_histories = ", max_histories, " histories of length <= ", max_length);
        stored += length;
        if (stored > max_observations)
          detail::invalid(who, ": the histories of length <= max_length = ", max_length,
                          " hold more than max_observations = ", max_observations, " observations (reached at length ",
                          length, ")");
        std::vector<Observation> h = partial.history;
        h.push_back(static_cast<Observation>(y));
        out.push_back({h, non_terminal_value(b, values, terminal).value, partial.probability * mass});
        next.push_back({std::move(h), predict_belief(pt, b), partial.probability * mass});
      }
    }
    level = std::move(next);
  }
  return out;
}

namespace detail {
/// Theorem 5.8's environments E_k have a corridor of length k >= 2.
inline void check_corridor_length(const char* who, std::size_t corridor_length) {
  if (corridor_length < 2) invalid(who, ": corridor_length must be at least 2, got ", corridor_length);
}
}  // namespace detail

/// Theorem 5.8: the shortest window with zero return error in the T-maze of corridor length k is
/// m = k (ao^{k−2}x and bo^{k−2}x differ only in y_{−k+1}).
[[nodiscard]] inline std::size_t tmaze_window_length(std::size_t corridor_length) {
  detail::check_corridor_length("tmaze_window_length", corridor_length);
  return corridor_length;
}

/// Theorem 5.8: the forgetting factor of the proof, λ = (k − 1)/k.
[[nodiscard]] inline double tmaze_lambda(std::size_t corridor_length) {
  detail::check_corridor_length("tmaze_lambda", corridor_length);
  const auto k = static_cast<double>(corridor_length);
  return (k - 1.0) / k;
}

/// Theorem 5.8: the Lipschitz constant of the proof, L = √2 e k, which suffices at λ = (k − 1)/k.
[[nodiscard]] inline double tmaze_lipschitz(std::size_t corridor_length) {
  detail::check_corridor_length("tmaze_lipschitz", corridor_length);
  return std::numbers::sqrt2 * std::numbers::e * static_cast<double>(corridor_length);
}

/// The longest corridor tmaze_histories accepts: k² = 2^26 observations (512 MB) in its histories.
inline constexpr std::size_t tmaze_max_corridor_length = std::size_t{1} << 13;

/// The histories of Table 2: every prefix of an episode of the T-maze of corridor length k
/// under the "always up" policy (TMazeAlwaysUp's model), ao^i and bo^i (i = 0 … k − 2) with value 0
/// and ao^{k−2}x, bo^{k−2}y (+1), bo^{k−2}x, ao^{k−2}y (−1): 2k + 2 histories. These are the
/// histories the proof of Theorem 5.8 checks (all others have probability 0, their value is ⊥). The
/// values are taken with γ = 0: the only reward is paid on the step after the junction, so the
/// values are the same for every γ, and γ = 0 makes them exactly 0 and ±1. The histories hold about
/// k² observations in all: corridor_length above tmaze_max_corridor_length throws
/// std::invalid_argument before anything is allocated. (A template only so that including this
/// header does not compile the T-maze's model and its enumeration: see docs/design.md, compile time.)
template <class Lazy = void>
[[nodiscard]] std::vector<LabelledHistory> tmaze_histories(std::size_t corridor_length) {
  if (corridor_length > tmaze_max_corridor_length)
    detail::invalid("tmaze_histories: corridor_length must be at most ", tmaze_max_corridor_length,
                    " (its 2k + 2 histories hold about k^2 observations), got ", corridor_length);
  const TMazeAlwaysUp maze(corridor_length);  // checks corridor_length >= 2
  // k observations reach the junction; the next state is terminal, which ends the enumeration.
  return episode_histories(maze, 0.0, corridor_length + 1);
}

}  // namespace memtrace
