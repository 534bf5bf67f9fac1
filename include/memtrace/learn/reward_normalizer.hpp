#pragma once
// Reward normalisation as Stable-Baselines3's VecNormalize(norm_reward=True) does it: each
// environment accumulates its discounted return R ← γR + r, one running variance of all those
// returns (shared by the environments) scales every reward, r -> clip(r / sqrt(Var[R] + ε), -c, c),
// and R restarts at 0 when an episode ends, terminated or truncated (Gymnasium's NormalizeReward
// restarts it at terminations only). Rewards are
// scaled, never centred, so that their sign (a cost, a bonus) is kept. See docs/control.md
// ("Reward normalisation").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The reward normaliser of n_envs environments acting in lockstep with discount γ. A value type,
/// owned by whoever learns (Ppo with options.normalize_rewards).
///
/// normalize(steps, scale, write), once per lockstep step with the n_envs rewards r_i (each
/// times scale):
///   R_i ← γ R_i + r_i for every i;  the statistics fold the n_envs returns R_i in (Chan's update,
///   FeatureNormalizer of one feature: the population variance of every return seen, to rounding);
///   write(i, clip(r_i / sqrt(Var + ε), −c, c));  R_i ← 0 where the step ended the episode.
/// Unlike Stable-Baselines3's RunningMeanStd, which starts from a prior of weight 1e-4 with
/// variance 1, the statistics hold the returns only. freeze() stops the returns and the statistics
/// (normalisation goes on with the frozen variance; returns still restart at episode ends).
class RewardNormalizer {
 public:
  /// A normaliser of no environments (assign a real one before use).
  RewardNormalizer() = default;

  /// Throws std::invalid_argument for n_envs = 0, a discount outside [0, 1], or options a
  /// FeatureNormalizer refuses (ε positive and finite, c positive).
  RewardNormalizer(std::size_t n_envs, double discount, NormalizerOptions options = {})
      : stats_(checked(n_envs, discount, options), options),
        returns_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n_envs))),
        next_returns_(returns_),
        discount_(discount) {}

  /// A normaliser restored from its state (statistics, returns, discount): a checkpoint. Throws
  /// std::invalid_argument for statistics FeatureNormalizer refuses or a non-finite return.
  RewardNormalizer(FeatureNormalizer statistics, Eigen::VectorXd returns, double discount)
      : stats_(std::move(statistics)), returns_(std::move(returns)), next_returns_(returns_), discount_(discount) {
    checked(static_cast<std::size_t>(returns_.size()), discount, stats_.options());
    if (stats_.dim() != 1)
      detail::invalid("RewardNormalizer: the statistics must be of one feature, got ", stats_.dim());
    if (!returns_.allFinite()) detail::invalid("RewardNormalizer: returns must be finite");
  }

  /// One lockstep step: steps[i] has reward, terminated and truncated (an ActedStep, a
  /// StepOutcome); write(i, r) receives environment i's normalised reward. Throws
  /// std::invalid_argument, changing nothing, for another number of steps than n_envs, a reward
  /// (times scale) that is not finite, or a return that overflows.
  template <class Steps, class Write>
  void normalize(const Steps& steps, double scale, Write&& write) {
    const std::size_t n = n_envs();
    if (static_cast<std::size_t>(std::size(steps)) != n)
      detail::invalid("RewardNormalizer::normalize: steps holds ", std::size(steps), " entries, expected n_envs = ", n);
    const auto reward = [&](std::size_t i) { return static_cast<double>(steps[i].reward) * scale; };
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(reward(i)))
        detail::invalid("RewardNormalizer::normalize: the reward of environment ", i, " is ", reward(i),
                        "; rewards must be finite");
    if (!stats_.frozen()) {  // the new returns, checked, before anything changes
      for (std::size_t i = 0; i < n; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        next_returns_[ii] = discount_ * returns_[ii] + reward(i);
        if (!std::isfinite(next_returns_[ii]))
          detail::invalid("RewardNormalizer::normalize: the return of environment ", i, " overflows to ",
                          next_returns_[ii]);
      }
      stats_.update(next_returns_.transpose());
      returns_.swap(next_returns_);
    }
    const double inverse_std = 1.0 / std::sqrt(variance() + stats_.options().epsilon);
    const double c = stats_.options().clip;
    for (std::size_t i = 0; i < n; ++i) {
      write(i, std::clamp(reward(i) * inverse_std, -c, c));
      if (steps[i].terminated || steps[i].truncated) returns_[static_cast<Eigen::Index>(i)] = 0.0;
    }
  }

  /// The running variance of the returns (1 before the first step).
  [[nodiscard]] double variance() const noexcept {
    return stats_.count() == 0 ? 1.0 : stats_.squared_deviations()[0] / static_cast<double>(stats_.count());
  }
  [[nodiscard]] std::size_t n_envs() const noexcept { return static_cast<std::size_t>(returns_.size()); }
  [[nodiscard]] double discount() const noexcept { return discount_; }
  /// The statistics of the returns (a FeatureNormalizer of one feature).
  [[nodiscard]] const FeatureNormalizer& statistics() const noexcept { return stats_; }
  /// Each environment's discounted return so far (0 at an episode start).
  [[nodiscard]] const Eigen::VectorXd& returns() const noexcept { return returns_; }
  void freeze() noexcept { stats_.freeze(); }
  void unfreeze() noexcept { stats_.unfreeze(); }
  [[nodiscard]] bool frozen() const noexcept { return stats_.frozen(); }

  friend bool operator==(const RewardNormalizer& a, const RewardNormalizer& b) {  // the workspace aside
    return a.stats_ == b.stats_ && a.returns_ == b.returns_ && a.discount_ == b.discount_;
  }

 private:
  static std::size_t checked(std::size_t n_envs, double discount, const NormalizerOptions& options) {
    if (n_envs == 0) detail::invalid("RewardNormalizer: n_envs must be at least 1, got 0");
    if (!(discount >= 0.0 && discount <= 1.0))
      detail::invalid("RewardNormalizer: discount must be in [0, 1], got ", discount);
    FeatureNormalizer::check_options("RewardNormalizer", "options.", options);
    return 1;
  }

  FeatureNormalizer stats_;       // one feature: the returns
  Eigen::VectorXd returns_;       // R_i per environment
  Eigen::VectorXd next_returns_;  // workspace: the step's returns before they are committed
  double discount_ = 0.99;
};

}  // namespace memtrace
