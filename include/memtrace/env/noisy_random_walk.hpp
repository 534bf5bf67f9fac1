#pragma once
// Sutton's noisy random walk (paper §6, "Temporal difference (TD) learning"; Sutton & Barto 2018,
// Example 9.1, made continuing and partially observable): 1001 states in a line, jumps of up to
// 100 states, stepping over an edge pays ∓1 and returns the walker to the centre, and only a noisy
// bracket of the position is observed. A step costs three random draws; model() gives the
// exact FiniteHmm. See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/core.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/random.hpp"

namespace memtrace {

/// The numbers of the noisy random walk; the defaults are the paper's.
struct NoisyRandomWalkParameters {
  std::size_t num_states = 1001;
  /// Each step moves by an offset d drawn uniformly from [-max_step, max_step].
  std::size_t max_step = 100;
  /// Whether d = 0 is one of the offsets (2 max_step + 1 of them, as the issue asks) or not
  /// (2 max_step of them: "one of the 100 states to its left or right", as Sutton's original).
  bool allow_stay = true;
  std::size_t num_observations = 11;
  /// The probability that the observation is uniform over all observations instead of the bracket.
  double noise = 0.5;
  /// Where an episode starts and where stepping over an edge lands; default num_states / 2 (500).
  std::optional<State> start{};
  double left_reward = -1.0;
  double right_reward = 1.0;
};

/// The noisy random walk of paper §6. From x the walker draws an offset d (uniform over the
/// offsets above); if x + d < 0 it steps over the left edge (reward left_reward), if
/// x + d >= num_states over the right edge (reward right_reward), and either way lands on start;
/// otherwise it moves to x + d with reward 0. It never terminates. Observation: with probability
/// 1 - noise the bracket floor(|Y| x / |X|), otherwise uniform over [0, |Y|) (which may also be
/// the bracket). Draws per step, in order: uniform_index for the offset, uniform_real for the
/// noise coin, uniform_index(gen, |Y|) for the noisy observation (drawn even when unused).
/// Satisfies RewardProcess and FiniteModel.
class NoisyRandomWalk {
 public:
  explicit NoisyRandomWalk(const NoisyRandomWalkParameters& parameters = {})
      : parameters_(parameters), start_(parameters.start.value_or(parameters.num_states / 2)) {
    constexpr const char* who = "NoisyRandomWalk";
    const auto& p = parameters_;
    if (p.num_states == 0) detail::invalid(who, ": num_states must be at least 1, got 0");
    if (p.max_step == 0 && !p.allow_stay)
      detail::invalid(who, ": max_step must be at least 1 without allow_stay, got 0");
    if (p.max_step >= (std::size_t{1} << 40)) detail::invalid(who, ": max_step must be below 2^40, got ", p.max_step);
    detail::check_num_observations(who, p.num_observations);
    detail::check_probability(who, "noise", p.noise);
    if (start_ >= p.num_states) detail::invalid(who, ": start must be in [0, ", p.num_states, "), got ", start_);
    if (!std::isfinite(p.left_reward)) detail::invalid(who, ": left_reward must be finite, got ", p.left_reward);
    if (!std::isfinite(p.right_reward)) detail::invalid(who, ": right_reward must be finite, got ", p.right_reward);
    num_offsets_ = 2 * p.max_step + (p.allow_stay ? 1 : 0);
    bracket_.resize(p.num_states);
    for (std::size_t x = 0; x < p.num_states; ++x) bracket_[x] = bracket(x);
    x_ = static_cast<std::int64_t>(start_);
  }

  /// Starts at `start` and returns its (noisy) observation.
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    x_ = static_cast<std::int64_t>(start_);
    return observe(gen);
  }

  template <std::uniform_random_bit_generator G>
  Transition step(G& gen) {
    auto d =
        static_cast<std::int64_t>(uniform_index(gen, num_offsets_)) - static_cast<std::int64_t>(parameters_.max_step);
    if (!parameters_.allow_stay && d >= 0) ++d;  // skip the offset 0
    const std::int64_t next = x_ + d;
    double reward = 0.0;
    if (next < 0) {
      reward = parameters_.left_reward;
      x_ = static_cast<std::int64_t>(start_);
    } else if (next >= static_cast<std::int64_t>(parameters_.num_states)) {
      reward = parameters_.right_reward;
      x_ = static_cast<std::int64_t>(start_);
    } else {
      x_ = next;
    }
    return {observe(gen), reward, false, false};
  }

  [[nodiscard]] State state() const noexcept { return static_cast<State>(x_); }
  [[nodiscard]] std::size_t num_states() const noexcept { return parameters_.num_states; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return parameters_.num_observations; }
  [[nodiscard]] const NoisyRandomWalkParameters& parameters() const noexcept { return parameters_; }
  [[nodiscard]] State start() const noexcept { return start_; }

  /// The bracket of state x, floor(|Y| x / |X|): the observation when there is no noise.
  [[nodiscard]] Observation bracket(State x) const noexcept {
    return static_cast<Observation>((static_cast<detail::uint128>(parameters_.num_observations) * x) /
                                    parameters_.num_states);
  }

  /// The exact FiniteHmm (built in O(|X| max_step)): transition(x, x') = p(x' | x) and
  /// emission(x, y) = p(y | x), both row-stochastic; p(start | x) holds the mass of every offset
  /// that steps over an edge, and r(x, start) is the mean reward of the offsets that land there.
  [[nodiscard]] FiniteHmm model() const {
    const auto& p = parameters_;
    const auto n = static_cast<Eigen::Index>(p.num_states);
    const auto y_count = static_cast<Eigen::Index>(p.num_observations);
    std::vector<Eigen::Triplet<double>> counts, paid;  // per (x, x'): offsets landing there, their total reward
    counts.reserve(p.num_states * num_offsets_);
    const auto max_step = static_cast<std::int64_t>(p.max_step);
    for (std::int64_t x = 0; x < n; ++x) {
      for (std::int64_t d = -max_step; d <= max_step; ++d) {
        if (d == 0 && !p.allow_stay) continue;
        std::int64_t next = x + d;
        double reward = 0.0;
        if (next < 0 || next >= n) {
          reward = next < 0 ? p.left_reward : p.right_reward;
          next = static_cast<std::int64_t>(start_);
        }
        counts.emplace_back(x, next, 1.0);
        if (reward != 0.0) paid.emplace_back(x, next, reward);
      }
    }
    SparseMatrix count(n, n), reward_sum(n, n);
    count.setFromTriplets(counts.begin(), counts.end());  // duplicates are summed: exact integer counts
    reward_sum.setFromTriplets(paid.begin(), paid.end());
    SparseMatrix transition = count / static_cast<double>(num_offsets_);  // count / offsets, rounded once
    SparseMatrix rewards = count;
    for (Eigen::Index x = 0; x < n; ++x)
      for (SparseMatrix::InnerIterator it(rewards, x); it; ++it)
        it.valueRef() = reward_sum.coeff(x, it.col()) / it.value();
    Eigen::MatrixXd emission = Eigen::MatrixXd::Constant(n, y_count, p.noise / static_cast<double>(y_count));
    for (Eigen::Index x = 0; x < n; ++x)
      emission(x, static_cast<Eigen::Index>(bracket_[static_cast<std::size_t>(x)])) += 1.0 - p.noise;
    Eigen::VectorXd initial = Eigen::VectorXd::Zero(n);
    initial[static_cast<Eigen::Index>(start_)] = 1.0;
    return FiniteHmm(std::move(transition), std::move(emission), std::move(initial), rewards);
  }

 private:
  // Both draws every time and a branch-free select: a branch taken at random half the time would
  // be mispredicted at a cost above that of the draw; and the stream advances the same every step.
  template <std::uniform_random_bit_generator G>
  Observation observe(G& gen) const {
    const bool noisy = uniform_real(gen) < parameters_.noise;
    const auto uniform = static_cast<Observation>(uniform_index(gen, parameters_.num_observations));
    const Observation exact = bracket_[static_cast<std::size_t>(x_)];
    const Observation mask = Observation{0} - static_cast<Observation>(noisy);  // all ones if noisy
    return (uniform & mask) | (exact & ~mask);
  }

  NoisyRandomWalkParameters parameters_;
  State start_;
  std::uint64_t num_offsets_ = 0;
  std::vector<Observation> bracket_;
  std::int64_t x_ = 0;
};

}  // namespace memtrace
