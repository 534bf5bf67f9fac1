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
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The numbers of the noisy random walk; the defaults are the paper's.
struct NoisyRandomWalkParameters {
  std::size_t num_states = 1001;
  /// Each step moves by an offset d drawn uniformly from [-max_step, max_step].
  std::size_t max_step = 100;
  /// Whether d = 0 is one of the offsets (2 max_step + 1 of them, the default) or not
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
/// the bracket).
///
/// Draws: when 2 max_step + 1 and |Y| are at most 2^21 (the paper's walk and any like it), a step
/// takes ONE 64-bit word from random_bits: bits [43, 64) choose the offset and bits [22, 43) the
/// noisy observation, each by Lemire's multiply-shift on 21 bits (the whole word is drawn again
/// in the rare case, below 2^-13 for the defaults, that either field falls in the rejection zone,
/// so both stay exactly uniform), and bits [0, 22) the coin: noisy iff they are below
/// round(noise 2^22). The noise is thus realised in steps of 2^-22 (0.5 exactly); noise() and
/// model() use that realised value, so simulator and model agree exactly. Larger walks take three
/// draws: uniform_index for the offset, uniform_real < noise, uniform_index(gen, |Y|).
/// Satisfies RewardProcess and FiniteModel.
/// (`NoisyRandomWalk` is `BasicNoisyRandomWalk<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
class BasicNoisyRandomWalk {
 public:
  BasicNoisyRandomWalk() : BasicNoisyRandomWalk(NoisyRandomWalkParameters{}) {}
  explicit BasicNoisyRandomWalk(const NoisyRandomWalkParameters& parameters)
      : parameters_(parameters), start_(parameters.start.value_or(parameters.num_states / 2)) {
    constexpr const char* who = "NoisyRandomWalk";
    const auto& p = parameters_;
    if (p.num_states == 0) detail::invalid(who, ": num_states must be at least 1, got 0");
    if (p.num_states > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
      detail::invalid(who, ": num_states must be below 2^63, got ", p.num_states);
    detail::check_storage(who, "the bracket of every state", p.num_states, sizeof(Observation), "num_states",
                          p.num_states);
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
    packed_ = num_offsets_ <= field_size && p.num_observations <= field_size;
    if (packed_) {
      noise_threshold_ = static_cast<std::uint64_t>(std::llround(p.noise * static_cast<double>(coin_size)));
      noise_ = static_cast<double>(noise_threshold_) / static_cast<double>(coin_size);
      offset_reject_ = field_size % num_offsets_;
      observation_reject_ = field_size % p.num_observations;
    } else {
      noise_ = p.noise;
    }
  }

  /// Starts at `start` and returns its (noisy) observation.
  template <std::uniform_random_bit_generator G>
  Observation reset(G& gen) {
    x_ = static_cast<std::int64_t>(start_);
    return observe(gen);
  }

  template <std::uniform_random_bit_generator G>
  TimeStep<> step(G& gen) {
    if (packed_) {
      const Draw draw = packed_draw(gen);
      move(draw.offset);
      return {observation(draw), reward_, false, false};
    }
    move(uniform_index(gen, num_offsets_));
    return {observe(gen), reward_, false, false};
  }

  [[nodiscard]] State state() const noexcept { return static_cast<State>(x_); }
  [[nodiscard]] std::size_t num_states() const noexcept { return parameters_.num_states; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return parameters_.num_observations; }
  [[nodiscard]] const NoisyRandomWalkParameters& parameters() const noexcept { return parameters_; }
  [[nodiscard]] State start() const noexcept { return start_; }
  /// The probability of a noisy observation as realised by the simulator (see the class comment).
  [[nodiscard]] double noise() const noexcept { return noise_; }

  /// The bracket of state x, floor(|Y| x / |X|): the observation when there is no noise.
  [[nodiscard]] Observation bracket(State x) const noexcept {
    return static_cast<Observation>((static_cast<detail::uint128>(parameters_.num_observations) * x) /
                                    parameters_.num_states);
  }

  /// The exact FiniteHmm (built in O(|X| max_step)): transition(x, x') = p(x' | x) and
  /// emission(x, y) = p(y | x), both row-stochastic; p(start | x) holds the mass of every offset
  /// that steps over an edge, and r(x, start) is the mean reward of the offsets that land there.
  /// Refuses, before allocating, a model whose transition entries (|X| (2 max_step + 1)) or dense
  /// emission matrix (|X| |Y|) would not fit memtrace::default_max_bytes.
  [[nodiscard]] FiniteHmm model() const {
    const auto& p = parameters_;
    // A triplet and two sparse entries per (x, offset); |X| |Y| doubles of emission.
    detail::check_storage("NoisyRandomWalk::model", "the transition entries |X| (2 max_step + 1)",
                          detail::checked_mul(p.num_states, num_offsets_), 3 * sizeof(Eigen::Triplet<double>),
                          "num_states", p.num_states);
    detail::check_storage("NoisyRandomWalk::model", "the emission matrix |X| x |Y|",
                          detail::checked_mul(p.num_states, p.num_observations), sizeof(double), "num_observations",
                          p.num_observations);
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
    Eigen::MatrixXd emission = Eigen::MatrixXd::Constant(n, y_count, noise_ / static_cast<double>(y_count));
    for (Eigen::Index x = 0; x < n; ++x)
      emission(x, static_cast<Eigen::Index>(bracket_[static_cast<std::size_t>(x)])) += 1.0 - noise_;
    Eigen::VectorXd initial = Eigen::VectorXd::Zero(n);
    initial[static_cast<Eigen::Index>(start_)] = 1.0;
    return FiniteHmm(std::move(transition), std::move(emission), std::move(initial), rewards);
  }

 private:
  static constexpr std::uint64_t field_size = std::uint64_t{1} << 21;  // offset and observation fields
  static constexpr std::uint64_t coin_size = std::uint64_t{1} << 22;   // the coin's field

  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp

  struct Draw {
    std::uint64_t offset;
    Observation uniform;
    bool noisy;
  };

  /// One word for the whole step (see the class comment).
  template <std::uniform_random_bit_generator G>
  Draw packed_draw(G& gen) const {
    for (;;) {
      const std::uint64_t word = random_bits(gen);
      const std::uint64_t offset = (word >> 43) * num_offsets_;
      const std::uint64_t uniform = ((word >> 22) & (field_size - 1)) * parameters_.num_observations;
      if ((offset & (field_size - 1)) < offset_reject_ || (uniform & (field_size - 1)) < observation_reject_)
          [[unlikely]]
        continue;
      return {offset >> 21, static_cast<Observation>(uniform >> 21), (word & (coin_size - 1)) < noise_threshold_};
    }
  }

  /// Moves by offset index k (d = k - max_step, skipping 0 without allow_stay); sets reward_.
  void move(std::uint64_t k) {
    auto d = static_cast<std::int64_t>(k) - static_cast<std::int64_t>(parameters_.max_step);
    if (!parameters_.allow_stay && d >= 0) ++d;  // skip the offset 0
    const std::int64_t next = x_ + d;
    reward_ = 0.0;
    if (next < 0) {
      reward_ = parameters_.left_reward;
      x_ = static_cast<std::int64_t>(start_);
    } else if (next >= static_cast<std::int64_t>(parameters_.num_states)) {
      reward_ = parameters_.right_reward;
      x_ = static_cast<std::int64_t>(start_);
    } else {
      x_ = next;
    }
  }

  // A branch-free select: a branch taken at random half the time would be mispredicted at a cost
  // above that of the draw.
  [[nodiscard]] Observation observation(const Draw& draw) const {
    const Observation exact = bracket_[static_cast<std::size_t>(x_)];
    const Observation mask = Observation{0} - static_cast<Observation>(draw.noisy);  // all ones if noisy
    return (draw.uniform & mask) | (exact & ~mask);
  }

  template <std::uniform_random_bit_generator G>
  Observation observe(G& gen) {
    if (packed_) return observation(packed_draw(gen));
    const bool noisy = uniform_real(gen) < noise_;
    const auto uniform = static_cast<Observation>(uniform_index(gen, parameters_.num_observations));
    return observation({0, uniform, noisy});
  }

  NoisyRandomWalkParameters parameters_;
  State start_;
  std::uint64_t num_offsets_ = 0;
  std::vector<Observation> bracket_;
  std::int64_t x_ = 0;
  double reward_ = 0.0;
  bool packed_ = false;
  double noise_ = 0.5;  // as realised by the simulator
  std::uint64_t noise_threshold_ = 0, offset_reject_ = 0, observation_reject_ = 0;
};

}  // namespace memtrace
