#pragma once
// The learning curve of a PPO training run, recorded from the statistics train() hands to its
// on_update: at points evenly spaced in environment steps, the success rate and mean return of
// the episodes that ended since the previous point and the means of the updates' diagnostics
// (entropy, value loss, the advantages' spread, approximate KL, clip fraction), so that a collapse
// can be seen when it starts; and the success rate of the most recent episodes, for a progress
// line. See docs/control.md ("Learning curves").

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "memtrace/experience.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The most points a learning curve may have (curve_steps; each is kept in memory).
inline constexpr std::size_t max_curve_points = 1'000'000;

/// The environment steps at which a run of `total_env_steps` (whole updates of `update_env_steps`
/// each; a remainder is not run, as in train()) records the `points` points of its learning curve:
/// point p = 1 ... points at the end of the first update that reaches p/points of the steps run.
/// Points that fall on one update share its step count (a run of fewer updates than points).
/// Throws std::invalid_argument for update_env_steps = 0, points = 0 or above max_curve_points, or
/// fewer steps than one update.
[[nodiscard]] inline std::vector<std::size_t> curve_steps(std::size_t total_env_steps, std::size_t update_env_steps,
                                                          std::size_t points) {
  if (update_env_steps == 0) detail::invalid("curve_steps: update_env_steps must be positive, got 0");
  if (points == 0) detail::invalid("curve_steps: points must be positive, got 0");
  const std::size_t total = total_env_steps / update_env_steps * update_env_steps;
  if (total == 0)
    detail::invalid("curve_steps: total_env_steps (", total_env_steps, ") is less than one update of ",
                    update_env_steps, " steps");
  if (points > max_curve_points)  // sizes before allocating
    detail::invalid("curve_steps: points must be at most ", max_curve_points, ", got ", points);
  std::vector<std::size_t> at;
  at.reserve(points);
  for (std::size_t p = 1; p <= points; ++p) {
    // ceil(p·total/points) in two parts, so that p·total cannot overflow; then up to a whole update,
    // which cannot pass total (a multiple of update_env_steps)
    const std::size_t q = total / points, r = total % points;
    const std::size_t reach = p * q + (p * r + points - 1) / points;
    at.push_back(reach / update_env_steps * update_env_steps + (reach % update_env_steps != 0 ? update_env_steps : 0));
  }
  return at;
}

/// curve_steps without the repeats, increasing: the steps at which a curve's files have a row (the
/// points that share an update's steps are one row there; distinct_points).
[[nodiscard]] inline std::vector<std::size_t> distinct_curve_steps(std::size_t total_env_steps,
                                                                   std::size_t update_env_steps, std::size_t points) {
  std::vector<std::size_t> at = curve_steps(total_env_steps, update_env_steps, points);
  at.erase(std::unique(at.begin(), at.end()), at.end());
  return at;
}

/// What happened between two points of a learning curve: the episodes that ended and the means of
/// the updates' statistics (PpoStats) since the previous point.
struct CurvePoint {
  std::size_t env_steps = 0;       ///< the environment steps at this point (the end of an update)
  std::size_t updates = 0;         ///< updates since the previous point (0 when points share an update)
  std::size_t episodes_ended = 0;  ///< episodes that ended since the previous point
  std::size_t successes = 0;       ///< of them, those whose return exceeded CurveOptions::success_return
  double return_sum = 0;           ///< the sum of their returns
  /// Means over the `updates` updates (NaN when there were none; explained_variance also when an
  /// update's was NaN).
  double entropy = std::numeric_limits<double>::quiet_NaN(), value_loss = std::numeric_limits<double>::quiet_NaN(),
         advantage_std = std::numeric_limits<double>::quiet_NaN(), approx_kl = std::numeric_limits<double>::quiet_NaN(),
         clip_fraction = std::numeric_limits<double>::quiet_NaN(),
         explained_variance = std::numeric_limits<double>::quiet_NaN();

  /// successes / episodes_ended, NaN when no episode ended.
  [[nodiscard]] double success_rate() const noexcept {
    return episodes_ended == 0 ? std::numeric_limits<double>::quiet_NaN()
                               : static_cast<double>(successes) / static_cast<double>(episodes_ended);
  }
  /// return_sum / episodes_ended, NaN when no episode ended.
  [[nodiscard]] double mean_return() const noexcept {
    return episodes_ended == 0 ? std::numeric_limits<double>::quiet_NaN()
                               : return_sum / static_cast<double>(episodes_ended);
  }
  /// Equal fields; a NaN mean equals a NaN mean (a point without updates equals itself).
  friend bool operator==(const CurvePoint& a, const CurvePoint& b) noexcept {
    const auto same = [](double x, double y) { return x == y || (x != x && y != y); };
    return a.env_steps == b.env_steps && a.updates == b.updates && a.episodes_ended == b.episodes_ended &&
           a.successes == b.successes && same(a.return_sum, b.return_sum) && same(a.entropy, b.entropy) &&
           same(a.value_loss, b.value_loss) && same(a.advantage_std, b.advantage_std) &&
           same(a.approx_kl, b.approx_kl) && same(a.clip_fraction, b.clip_fraction) &&
           same(a.explained_variance, b.explained_variance);
  }
};

/// The points of a curve (in order) with distinct environment steps: of points that share an
/// update's steps, the first, which holds the update (the others hold nothing). One per step of
/// distinct_curve_steps once the run is trained.
[[nodiscard]] inline std::vector<CurvePoint> distinct_points(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> out;
  for (const CurvePoint& p : points)
    if (out.empty() || out.back().env_steps != p.env_steps) out.push_back(p);
  return out;
}

struct CurveOptions {
  std::size_t points = 20;  ///< points of the curve, evenly spaced in environment steps (curve_steps)
  /// An episode succeeds when its return exceeds this (the T-maze: 0.5, its reward is 1 exactly on
  /// the success cell); the default counts no episode as a success.
  double success_return = std::numeric_limits<double>::infinity();
  std::size_t recent_episodes = 100;  ///< the window of recent_success_rate()
};

/// Records a training run's learning curve: construct it with the run's budget and the agent's
/// n_envs·n_steps, and hand it every update's statistics (record(stats) in train()'s on_update).
/// Its numbers depend only on the statistics, so that two runs with the same seed have the same
/// curve.
class LearningCurve {
 public:
  /// Throws std::invalid_argument as curve_steps does, or for options.recent_episodes = 0 or a NaN
  /// options.success_return.
  LearningCurve(std::size_t total_env_steps, std::size_t update_env_steps, CurveOptions options = {})
      : at_(curve_steps(total_env_steps, update_env_steps, options.points)), options_(options) {
    if (options.recent_episodes == 0) detail::invalid("LearningCurve: options.recent_episodes must be positive, got 0");
    if (options.success_return != options.success_return)
      detail::invalid("LearningCurve: options.success_return must not be NaN");
    points_.reserve(at_.size());
  }

  /// Adds one update's statistics: its episodes, its diagnostics, and the points its environment
  /// steps reach. Throws std::invalid_argument (changing nothing) if stats.env_steps is less than
  /// the last update's.
  void record(const PpoStats& stats) {
    if (stats.env_steps < last_env_steps_)
      detail::invalid("LearningCurve::record: stats.env_steps (", stats.env_steps, ") is less than the last update's (",
                      last_env_steps_, ")");
    last_env_steps_ = stats.env_steps;
    ++bin_.updates;
    sums_[0] += stats.entropy;
    sums_[1] += stats.value_loss;
    sums_[2] += stats.advantage_std;
    sums_[3] += stats.approx_kl;
    sums_[4] += stats.clip_fraction;
    sums_[5] += stats.explained_variance;
    for (const EpisodeEnd& e : stats.episodes) {
      const bool success = e.episode_return > options_.success_return;
      ++episodes_ended_;
      successes_ += success;
      ++bin_.episodes_ended;
      bin_.successes += success;
      bin_.return_sum += e.episode_return;
      if (recent_.size() < options_.recent_episodes) {
        recent_.push_back(success);
      } else {
        recent_successes_ -= recent_[recent_next_];
        recent_[recent_next_] = success;
        recent_next_ = (recent_next_ + 1) % recent_.size();
      }
      recent_successes_ += success;
    }
    while (points_.size() < at_.size() && stats.env_steps >= at_[points_.size()]) {
      CurvePoint point = bin_;
      point.env_steps = stats.env_steps;
      if (point.updates > 0) {
        const double n = static_cast<double>(point.updates);
        point.entropy = sums_[0] / n;
        point.value_loss = sums_[1] / n;
        point.advantage_std = sums_[2] / n;
        point.approx_kl = sums_[3] / n;
        point.clip_fraction = sums_[4] / n;
        point.explained_variance = sums_[5] / n;
      }
      points_.push_back(point);
      bin_ = {};
      for (double& s : sums_) s = 0;
    }
  }

  /// The points reached so far (all of them once the run's budget is trained).
  [[nodiscard]] const std::vector<CurvePoint>& points() const noexcept { return points_; }
  /// The environment steps of every point (curve_steps).
  [[nodiscard]] const std::vector<std::size_t>& point_steps() const noexcept { return at_; }
  /// The options it was constructed with.
  [[nodiscard]] const CurveOptions& options() const noexcept { return options_; }
  /// Episodes ended, and those that succeeded, over all updates recorded.
  [[nodiscard]] std::size_t episodes_ended() const noexcept { return episodes_ended_; }
  [[nodiscard]] std::size_t successes() const noexcept { return successes_; }
  /// successes() / episodes_ended(), NaN when no episode ended.
  [[nodiscard]] double success_rate() const noexcept {
    return episodes_ended_ == 0 ? std::numeric_limits<double>::quiet_NaN()
                                : static_cast<double>(successes_) / static_cast<double>(episodes_ended_);
  }
  /// The success rate of the last options.recent_episodes episodes (fewer before there were that
  /// many), NaN when none ended.
  [[nodiscard]] double recent_success_rate() const noexcept {
    return recent_.empty() ? std::numeric_limits<double>::quiet_NaN()
                           : static_cast<double>(recent_successes_) / static_cast<double>(recent_.size());
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // loop/checkpoint.hpp

  std::vector<std::size_t> at_;
  CurveOptions options_;
  std::vector<CurvePoint> points_;
  CurvePoint bin_;       // the episodes and updates since the last point
  double sums_[6] = {};  // the bin's sums of entropy, value loss, advantage std, approximate KL, clip fraction and
                         // explained variance
  std::size_t last_env_steps_ = 0, episodes_ended_ = 0, successes_ = 0;
  std::vector<bool> recent_;  // a ring of the last episodes' successes
  std::size_t recent_next_ = 0, recent_successes_ = 0;
};

}  // namespace memtrace
