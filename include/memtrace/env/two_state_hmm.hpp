#pragma once
// The two-state HMM (paper §5.2, the illustrative environment of the introduction): a hidden bit
// that switches with probability p, seen through a channel that flips it with probability q,
// with a reward that is a function of the observation. See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <random>

#include "memtrace/concepts.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// States {0, 1} and one-hot observations {0, 1}. x_0 is 0 or 1 with probability 1/2 (the
/// stationary distribution); each step switches the state with probability p, then emits
/// y = x with probability 1 - q and y = 1 - x with probability q. The reward of a step is
/// observation_rewards[y'] of the observation it emits (paper §3: rewards are observed), so the
/// model's r(x, x') is its expectation, (1 - q) r(x') + q r(1 - x'). Draws: reset one
/// uniform_index(gen, 2) and one uniform_real; step two uniform_real (switch, then flip).
/// Satisfies RewardProcess and FiniteModel.
/// (`TwoStateHmm` is `BasicTwoStateHmm<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicTwoStateHmm {
 public:
  /// Throws std::invalid_argument unless p and q are in [0, 1] and both rewards are finite.
  BasicTwoStateHmm(double p, double q, std::array<double, 2> observation_rewards = {0.0, 1.0})
      : p_(p), q_(q), rewards_(observation_rewards) {
    detail::check_probability("TwoStateHmm", "p", p);
    detail::check_probability("TwoStateHmm", "q", q);
    for (std::size_t y = 0; y < 2; ++y)
      if (!std::isfinite(rewards_[y]))
        detail::invalid("TwoStateHmm: observation_rewards[", y, "] must be finite, got ", rewards_[y]);
  }

  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    x_ = static_cast<State>(uniform_index(gen, 2));
    return emit(gen);
  }

  template <std::uniform_random_bit_generator G>
  TimeStep<> step(G& gen) {
    if (uniform_real(gen) < p_) x_ = 1 - x_;
    const Observation y = emit(gen);
    return {y, rewards_[y], false, false};
  }

  [[nodiscard]] State state() const noexcept { return x_; }
  [[nodiscard]] std::size_t num_states() const noexcept { return 2; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return 2; }
  [[nodiscard]] double p() const noexcept { return p_; }
  [[nodiscard]] double q() const noexcept { return q_; }
  [[nodiscard]] const std::array<double, 2>& observation_rewards() const noexcept { return rewards_; }

  /// The exact FiniteHmm: transition(x, x') = p(x' | x) = [[1-p, p], [p, 1-p]] and emission(x, y)
  /// = p(y | x) = [[1-q, q], [q, 1-q]] (both row-stochastic); r(x, x') = E[r(y') | x'].
  [[nodiscard]] FiniteHmm model() const {
    Eigen::Matrix2d transition, emission, rewards;
    transition << 1.0 - p_, p_, p_, 1.0 - p_;
    emission << 1.0 - q_, q_, q_, 1.0 - q_;
    const double r0 = (1.0 - q_) * rewards_[0] + q_ * rewards_[1];  // E[r(y) | x = 0]
    const double r1 = q_ * rewards_[0] + (1.0 - q_) * rewards_[1];
    rewards << r0, r1, r0, r1;
    return FiniteHmm(Eigen::MatrixXd(transition), emission, Eigen::Vector2d(0.5, 0.5), Eigen::MatrixXd(rewards));
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  template <std::uniform_random_bit_generator G>
  Observation emit(G& gen) const {
    return uniform_real(gen) < q_ ? 1 - x_ : x_;
  }

  double p_, q_;
  std::array<double, 2> rewards_;
  State x_ = 0;
};

}  // namespace memtrace
