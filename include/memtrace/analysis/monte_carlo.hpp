#pragma once
// Monte Carlo estimates of stationary expectations (value errors, moments) from one simulated
// trajectory, with a standard error by batch means (the samples of a Markov chain are correlated,
// so the plain sample variance would understate it). For cross-checks of the exact analysis and
// for models too big to solve exactly. See docs/analysis.md.

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <random>
#include <type_traits>
#include <vector>

#include "memtrace/analysis/markov.hpp"
#include "memtrace/concepts.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A Monte Carlo estimate: the sample mean and its standard error by batch means.
struct MonteCarloEstimate {
  double mean = 0.0;
  double standard_error = 0.0;
  std::size_t samples = 0;
  std::size_t batches = 0;
  /// Whether `exact` lies within `errors` standard errors of the mean.
  [[nodiscard]] bool covers(double exact, double errors) const noexcept {
    return std::abs(exact - mean) <= errors * standard_error;
  }
};

/// Batch means: the samples are cut into `batches` consecutive batches of equal length; when a
/// batch is much longer than the chain's correlation time the batch means are nearly independent,
/// and their spread gives the standard error of the overall mean.
class BatchMeans {
 public:
  /// Throws unless samples >= batches >= 2.
  BatchMeans(std::size_t samples, std::size_t batches) : batch_length_(samples / (batches == 0 ? 1 : batches)) {
    if (batches < 2) detail::invalid("BatchMeans: batches must be at least 2, got ", batches);
    if (samples < batches)
      detail::invalid("BatchMeans: samples must be at least batches = ", batches, ", got ", samples);
    means_.reserve(batches);
    batches_ = batches;
  }
  void add(double sample) {
    if (means_.size() == batches_) return;  // the remainder of samples / batches is dropped
    sum_ += sample;
    if (++count_ == batch_length_) {
      means_.push_back(sum_ / static_cast<double>(batch_length_));
      sum_ = 0.0;
      count_ = 0;
    }
  }
  [[nodiscard]] MonteCarloEstimate estimate() const {
    const auto b = static_cast<double>(means_.size());
    double mean = 0.0;
    for (const double m : means_) mean += m;
    mean /= b;
    double spread = 0.0;
    for (const double m : means_) spread += (m - mean) * (m - mean);
    return {mean, std::sqrt(spread / (b - 1.0) / b), means_.size() * batch_length_, means_.size()};
  }

 private:
  std::size_t batch_length_;
  std::size_t batches_ = 0;
  std::vector<double> means_;
  double sum_ = 0.0;
  std::size_t count_ = 0;
};

/// How long to simulate.
struct MonteCarloRun {
  /// Steps recorded.
  std::size_t steps = 1000000;
  /// Steps simulated first and not recorded, so that the state and the memory forget their start.
  std::size_t burn_in = 10000;
  std::size_t batches = 50;
};

/// E[sample(features_t, x_t)] over the stationary process, from one trajectory: the environment
/// is reset once, the memory absorbs every observation (an episode end resets the environment but
/// not the memory: histories run across episodes, as in the exact analysis), and steps whose state
/// x_t is terminal are not recorded. `is_terminal(x)` says which states are; for a continuing model
/// pass a function returning false.
template <class Env, class M, class Sample, class IsTerminal, std::uniform_random_bit_generator G>
requires RewardProcess<Env, G> && ExposedState<Env, G> && Memory<M, observation_t<Env, G>>
[[nodiscard]] MonteCarloEstimate monte_carlo_mean(Env& env, M& memory, Sample&& sample, IsTerminal&& is_terminal,
                                                  G& gen, const MonteCarloRun& run) {
  BatchMeans batches(run.steps, run.batches);
  memory.reset(env.reset(gen));
  for (std::size_t t = 0, recorded = 0; recorded < run.steps; ++t) {
    if (t >= run.burn_in && !is_terminal(env.state())) {
      batches.add(static_cast<double>(sample(memory.features(), env.state())));
      ++recorded;
    }
    const auto step = env.step(gen);
    memory.update(step.observation);
    if (step.terminated || step.truncated) memory.update(env.reset(gen));
  }
  return batches.estimate();
}

/// VE = E[(f(features_t) - v(x_t))²] of the estimate f(features) against the true values of the
/// process, over its non-terminal states, from one stationary trajectory of env (which must be
/// the model the process was built from).
template <class Env, class M, class Estimator, std::uniform_random_bit_generator G>
requires RewardProcess<Env, G> && ExposedState<Env, G> && Memory<M, observation_t<Env, G>>
[[nodiscard]] MonteCarloEstimate monte_carlo_value_error(Env& env, M& memory, Estimator&& estimate,
                                                         const StationaryProcess& process, G& gen,
                                                         const MonteCarloRun& run) {
  if (process.num_states() != env.num_states())
    detail::invalid("monte_carlo_value_error: the process has ", process.num_states(), " states, the environment ",
                    env.num_states());
  const Eigen::VectorXd& values = process.values();
  return monte_carlo_mean(
      env, memory,
      [&](const auto& phi, State x) {
        const double error = static_cast<double>(estimate(phi)) - values[static_cast<Eigen::Index>(x)];
        return error * error;
      },
      [&](State x) { return static_cast<bool>(process.terminal()[x]); }, gen, run);
}

}  // namespace memtrace
