#pragma once
// A percentile-bootstrap interval of a statistic of the means of several independent samples (a
// ratio of mean returns over seeds, say), drawn through the library's own sampling
// (uniform_index), so that the same generator gives the same interval on every compiler.
// See docs/experiments.md.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A statistic's point estimate and its interval.
struct BootstrapInterval {
  double estimate = 0.0;  ///< the statistic of the samples' own means
  double low = 0.0;       ///< the (1 − level)/2 quantile of the resampled statistics
  double high = 0.0;      ///< the (1 + level)/2 quantile
};

/// statistic(means), where means[g] is the mean of samples[g], with a percentile-bootstrap
/// interval: `resamples` times, every sample is redrawn with replacement (its size kept; index j
/// of sample g by uniform_index(gen, size), sample after sample) and the statistic of the redrawn
/// means kept; low and high are the (1 − level)/2 and (1 + level)/2 quantiles of those, linearly
/// interpolated between order statistics (NumPy's default percentile). If any resampled
/// statistic is NaN (a ratio 0/0), low and high are NaN. Throws std::invalid_argument for no
/// samples, an empty sample, resamples = 0 or too many to store, or level outside (0, 1).
template <class Statistic, std::uniform_random_bit_generator G>
[[nodiscard]] BootstrapInterval percentile_bootstrap(std::span<const std::vector<double>> samples,
                                                     Statistic&& statistic, G& gen, std::size_t resamples = 10'000,
                                                     double level = 0.95) {
  constexpr const char* who = "percentile_bootstrap";
  if (samples.empty()) detail::invalid(who, ": samples must hold at least one sample, got none");
  for (std::size_t g = 0; g < samples.size(); ++g)
    if (samples[g].empty()) detail::invalid(who, ": samples[", g, "] is empty");
  if (resamples == 0) detail::invalid(who, ": resamples must be at least 1, got 0");
  if (!(level > 0.0 && level < 1.0)) detail::invalid(who, ": level must be in (0, 1), got ", level);
  detail::check_storage(who, "the resampled statistics", resamples, sizeof(double), "resamples", resamples);
  std::vector<double> means(samples.size());
  const auto mean_of = [&](std::size_t g, auto&& value) {
    double sum = 0.0;
    for (std::size_t j = 0; j < samples[g].size(); ++j) sum += value(j);
    return sum / static_cast<double>(samples[g].size());
  };
  for (std::size_t g = 0; g < samples.size(); ++g) means[g] = mean_of(g, [&](std::size_t j) { return samples[g][j]; });
  BootstrapInterval out;
  out.estimate = static_cast<double>(statistic(std::span<const double>(means)));
  std::vector<double> stats(resamples);
  bool undefined = false;
  for (double& s : stats) {
    for (std::size_t g = 0; g < samples.size(); ++g) {
      const auto n = static_cast<std::uint64_t>(samples[g].size());
      means[g] = mean_of(g, [&](std::size_t) { return samples[g][static_cast<std::size_t>(uniform_index(gen, n))]; });
    }
    s = static_cast<double>(statistic(std::span<const double>(means)));
    undefined = undefined || std::isnan(s);
  }
  if (undefined) {
    out.low = out.high = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::sort(stats.begin(), stats.end());
  const auto quantile = [&](double q) {
    const double at = q * static_cast<double>(resamples - 1);
    const auto below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, resamples - 1);
    const double w = at - static_cast<double>(below);
    return w == 0.0 ? stats[below] : stats[below] + w * (stats[above] - stats[below]);
  };
  out.low = quantile(0.5 - 0.5 * level);
  out.high = quantile(0.5 + 0.5 * level);
  return out;
}

}  // namespace memtrace
