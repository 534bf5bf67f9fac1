#pragma once
// The forward filter of a finite model (the forward algorithm, normalised at every step): the one
// step shared by the belief filter (analysis/belief.hpp), both history enumerators
// (labelled_histories in analysis/lipschitz.hpp, episode_histories in analysis/tmaze_complexity.hpp)
// and FinitePomdp's belief update, with its convention for terminal states and for observations of
// probability 0. Below the environments (it needs only Eigen), so env headers can use it. See
// docs/analysis.md ("The forward filter").
//
// The convention:
// - The filter treats every state of the chain it is given alike: a terminal state emits its
//   observation on entry like any other (FiniteHmm, Gymnasium's final observation), and the
//   chain's row says what follows it (StationaryProcess: the restart from `initial`).
// - What the value error weighs is decided after the step, not in it: the value of a history is
//   E[v(x_t) | h, x_t non-terminal] with weight p(h, x_t non-terminal) (non_terminal_value).
// - A history of one episode has no terminal state before its end: its filter conditions on the
//   event {y_t = y, x_t non-terminal}, whose likelihood is O(y | x) [x non-terminal].
// - An event of probability 0 given the past: condition_belief returns 0 and the belief is no
//   distribution. Callers that enumerate skip it; callers given a history throw.

#include <Eigen/Core>
#include <cstddef>
#include <vector>

namespace memtrace {

/// b ← Pᵀ b: the distribution of x_{t+1} from the belief over x_t, for a row-stochastic transition
/// matrix P (P(x, x') = p(x' | x)). `transposed` is Pᵀ: a matrix or an expression such as
/// p.transpose() (sparse or dense).
template <class Transposed>
[[nodiscard]] Eigen::VectorXd predict_belief(const Transposed& transposed, const Eigen::VectorXd& belief) {
  return Eigen::VectorXd(transposed * belief);
}

/// Conditions a prediction p(x_t | past) on an event of likelihood ℓ(x) = p(event | x_t = x), such
/// as a column O(·, y) of the emission matrix: b ← b ∘ ℓ / p(event | past). Returns
/// p(event | past) = Σ_x b(x) ℓ(x); when that is not positive, b is left as b ∘ ℓ (no
/// distribution) and the caller skips or refuses the event.
template <class Likelihood>
[[nodiscard]] double condition_belief(Eigen::VectorXd& belief, const Eigen::MatrixBase<Likelihood>& likelihood) {
  belief = belief.cwiseProduct(likelihood);
  const double mass = belief.sum();
  if (mass > 0.0) belief /= mass;
  return mass;
}

/// One step of the forward filter: b ← Pᵀ b, then conditioned on ℓ (condition_belief). Returns
/// p(event | past); b is changed even when that is 0, so a caller that must keep its belief on a
/// refused observation steps a copy.
template <class Transposed, class Likelihood>
[[nodiscard]] double forward_step(Eigen::VectorXd& belief, const Transposed& transposed,
                                  const Eigen::MatrixBase<Likelihood>& likelihood) {
  belief = predict_belief(transposed, belief);
  return condition_belief(belief, likelihood);
}

/// The part of a belief the value error weighs (x_t non-terminal).
struct NonTerminalValue {
  /// p(x_t non-terminal | h) = Σ_{x non-terminal} b(x).
  double probability = 0.0;
  /// E[v(x_t) | h, x_t non-terminal]; 0 when probability is 0 (a step the value error does not weigh).
  double value = 0.0;
};

/// p(x_t non-terminal | h) and E[v(x_t) | h, x_t non-terminal] for the belief b = p(x_t | h), state
/// values v and terminal flags (empty, or one a state: a continuing model has none).
[[nodiscard]] inline NonTerminalValue non_terminal_value(const Eigen::VectorXd& belief, const Eigen::VectorXd& values,
                                                         const std::vector<bool>& terminal) {
  NonTerminalValue out;
  double value = 0.0;
  for (Eigen::Index x = 0; x < belief.size(); ++x) {
    const auto i = static_cast<std::size_t>(x);
    if (i < terminal.size() && terminal[i]) continue;
    out.probability += belief[x];
    value += belief[x] * values[x];
  }
  if (out.probability > 0.0) out.value = value / out.probability;
  return out;
}

}  // namespace memtrace
