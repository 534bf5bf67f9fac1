#pragma once
// Shared by the env_*_test programs (and the analysis tests of episodic models): does a simulator
// sample what its model says? Every cell of P, O, the initial distribution and the rewards is
// compared with its empirical frequency (mean) within a deviation bound computed from the number
// of samples behind it, with a union bound over all cells, so a correct simulator fails with
// probability below 1e-6 (and a fixed seed makes the outcome deterministic).
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memtrace/concepts.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/random.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace memtrace::test {

/// A random row-stochastic rows x cols matrix with some zeros (so sparsity is exercised).
inline Eigen::MatrixXd random_stochastic(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = uniform_real(g) < 0.3 ? 0.0 : uniform_real(g);
    m(i, (i + 1) % cols) += 0.1;  // never an empty row
    m.row(i) /= m.row(i).sum();
  }
  return m;
}

/// Left-to-right chain 0 -> 1 -> 2 -> terminal 3 with chances to stay: episodes of random length >= 3.
inline FiniteHmm episodic_chain() {
  Eigen::MatrixXd p(4, 4), r(4, 4);
  p << 0.3, 0.7, 0, 0, 0, 0.2, 0.8, 0, 0, 0, 0.5, 0.5, 1, 0, 0, 0;
  r << 1, -1, 0, 0, 0, 0.5, 2, 0, 0, 0, -0.5, 3, 0, 0, 0, 0;
  return FiniteHmm(p, Eigen::MatrixXd::Identity(4, 4), Eigen::Vector4d(1, 0, 0, 0), r, {false, false, false, true});
}

/// An episodic HMM for the forward filter's terminal convention: state 3 is terminal (its own row
/// absorbs; the analysis restarts it from `initial`) and shares observations 1 and 2 with the
/// others, so a history can end in it with any probability between 0 and 1.
inline FiniteHmm episodic_hmm() {
  Eigen::MatrixXd p{{0.2, 0.3, 0.3, 0.2}, {0.1, 0.4, 0.2, 0.3}, {0.3, 0.2, 0.1, 0.4}, {0.0, 0.0, 0.0, 1.0}};
  Eigen::MatrixXd o{{0.7, 0.2, 0.1}, {0.1, 0.6, 0.3}, {0.2, 0.2, 0.6}, {0.0, 0.5, 0.5}};
  Eigen::MatrixXd r{{1.0, -1.0, 0.5, 2.0}, {0.0, 2.0, 0.5, -1.0}, {-2.0, 0.0, 1.0, 3.0}, {0.0, 0.0, 0.0, 0.0}};
  return FiniteHmm(p, o, Eigen::Vector4d(0.6, 0.4, 0.0, 0.0), r, {false, false, false, true});
}

/// p(h, x_t non-terminal) and Σ_{x non-terminal} p(h, x_t = x) v(x) by summing over every hidden
/// path x_0..x_t (|X|^n terms) of the chain p from `start` (for an episodic model, its restart
/// chain: what the forward filter's convention says). With `episode`, only the paths whose states
/// are all non-terminal (one episode, as episode_histories has it).
inline std::pair<double, double> path_sum(const Eigen::MatrixXd& p, const Eigen::MatrixXd& o,
                                          const Eigen::VectorXd& start, const Eigen::VectorXd& v,
                                          const std::vector<Observation>& h, const std::vector<bool>& terminal,
                                          bool episode = false) {
  const auto nx = static_cast<std::size_t>(p.rows());
  std::size_t paths = 1;
  for (std::size_t j = 0; j < h.size(); ++j) paths *= nx;
  double probability = 0.0, value_sum = 0.0;
  for (std::size_t path = 0; path < paths; ++path) {
    std::size_t rest = path;
    Eigen::Index previous = 0;
    double weight = 1.0;
    bool ended = false;  // a terminal state before the last step
    for (std::size_t j = 0; j < h.size(); ++j, rest /= nx) {
      const auto x = static_cast<Eigen::Index>(rest % nx);
      if (j + 1 < h.size() && terminal[static_cast<std::size_t>(x)]) ended = true;
      weight *= (j == 0 ? start[x] : p(previous, x)) * o(x, static_cast<Eigen::Index>(h[j]));
      previous = x;
    }
    if (terminal[static_cast<std::size_t>(previous)] || (episode && ended)) continue;  // not weighed
    probability += weight;
    value_sum += weight * v[previous];
  }
  return {probability, value_sum};
}

/// Bernstein: the mean of n Bernoulli(p) draws deviates from p by more than this with probability
/// at most delta. From 2 exp(-n e^2 / (2 p(1-p) + 2e/3)) = delta, solved for e.
inline double bernstein_halfwidth(double p, double n, double delta) {
  const double l = std::log(2.0 / delta);
  return (l / 3.0 + std::sqrt(l * l / 9.0 + 2.0 * n * p * (1.0 - p) * l)) / n;
}

/// Hoeffding: the mean of n draws in an interval of width `range` deviates from its expectation
/// by more than this with probability at most delta.
inline double hoeffding_halfwidth(double range, double n, double delta) {
  return range * std::sqrt(std::log(2.0 / delta) / (2.0 * n));
}

struct Agreement {
  std::size_t steps = 0, episodes = 0;
  double worst = 0.0;          // the largest |empirical - model| / bound over all cells (pass: <= 1)
  std::string worst_cell;      // which cell it was
  std::size_t impossible = 0;  // samples of probability 0 (agreement), histories never drawn (history_agreement)
  [[nodiscard]] bool ok() const { return worst <= 1.0 && impossible == 0; }
};

/// Simulates `steps` steps of `env` (resetting at episode ends) and compares with `model`.
/// Rewards of one transition (x, x') lie in an interval of width `reward_range` (0: deterministic).
template <class Env>
Agreement agreement(Env env, const FiniteHmm& model, std::uint64_t seed, std::size_t steps, double reward_range) {
  const std::size_t n = model.num_states(), m = model.num_observations();
  std::vector<std::uint32_t> moves(n * n, 0), emissions(n * m, 0), starts(n, 0), leaving(n, 0), arriving(n, 0);
  std::vector<double> paid(n * n, 0.0);
  Agreement result;
  Xoshiro256StarStar gen(seed);
  auto start = [&] {
    const Observation y = env.reset(gen);
    ++starts[env.state()];
    ++arriving[env.state()];
    ++emissions[env.state() * m + y];
    ++result.episodes;
  };
  start();
  for (std::size_t t = 0; t < steps; ++t) {
    const State x = env.state();
    const TimeStep<> tr = env.step(gen);
    const State next = env.state();
    ++moves[x * n + next];
    paid[x * n + next] += tr.reward;
    ++leaving[x];
    ++arriving[next];
    ++emissions[next * m + tr.observation];
    if (tr.terminated || tr.truncated) start();
  }
  result.steps = steps;

  const Eigen::MatrixXd p = model.transition(), r = model.rewards(), o = model.emission();
  const double delta = 1e-6 / static_cast<double>(n * n * 2 + n * m + n);
  auto compare = [&](double expected, double count, double total, const std::string& cell) {
    if (expected == 0.0) {
      if (count > 0) ++result.impossible;
      return;
    }
    if (total == 0) return;
    const double ratio = std::abs(count / total - expected) / bernstein_halfwidth(expected, total, delta);
    if (ratio > result.worst) result.worst = ratio, result.worst_cell = cell;
  };
  auto name = [](const char* what, std::size_t i, std::size_t j) {
    std::ostringstream s;
    s << what << "(" << i << ", " << j << ")";
    return s.str();
  };
  for (std::size_t x = 0; x < n; ++x) {
    const auto xi = static_cast<Eigen::Index>(x);
    compare(model.initial()[xi], starts[x], static_cast<double>(result.episodes), name("initial", x, 0));
    for (std::size_t y = 0; y < m; ++y)
      compare(o(xi, static_cast<Eigen::Index>(y)), emissions[x * m + y], arriving[x], name("emission", x, y));
    for (std::size_t next = 0; next < n; ++next) {
      const auto ni = static_cast<Eigen::Index>(next);
      const double count = moves[x * n + next];
      compare(p(xi, ni), count, leaving[x], name("transition", x, next));
      if (count == 0) continue;
      const double error = std::abs(paid[x * n + next] / count - r(xi, ni));
      const double bound = reward_range == 0.0 ? 1e-12 : hoeffding_halfwidth(reward_range, count, delta);
      if (error / bound > result.worst) result.worst = error / bound, result.worst_cell = name("rewards", x, next);
    }
  }
  return result;
}

/// Labelled histories (.history, .probability = p(h), .value = v(h)) against `samples` independent
/// draws: count[i] of them drew history i, and value_sum[i] sums the values drawn with it. Every
/// frequency must lie within Bernstein's half-width of p(h) and every mean within Hoeffding's of
/// v(h) (values in an interval of width value_range), one union bound of 1e-6 over the 2N checks;
/// a listed history never drawn counts as impossible (its mean cannot be checked).
template <class History>
Agreement history_agreement(const std::vector<History>& histories, const std::vector<double>& count,
                            const std::vector<double>& value_sum, double samples, double value_range) {
  Agreement result;
  result.steps = static_cast<std::size_t>(samples);
  const double delta = 1e-6 / (2.0 * static_cast<double>(histories.size()));
  auto name = [&](const char* what, std::size_t i) {
    std::ostringstream s;
    s << what << " of history " << i << " (";
    for (const auto y : histories[i].history) s << y;
    s << ", " << count[i] << " draws)";
    return s.str();
  };
  for (std::size_t i = 0; i < histories.size(); ++i) {
    const double p = histories[i].probability;
    const double frequency = std::abs(count[i] / samples - p) / bernstein_halfwidth(p, samples, delta);
    if (!(frequency <= result.worst)) result.worst = frequency, result.worst_cell = name("frequency", i);  // NaN too
    if (count[i] == 0.0) {
      ++result.impossible;
      continue;
    }
    const double mean =
        std::abs(value_sum[i] / count[i] - histories[i].value) / hoeffding_halfwidth(value_range, count[i], delta);
    if (!(mean <= result.worst)) result.worst = mean, result.worst_cell = name("mean value", i);
  }
  return result;
}

}  // namespace memtrace::test
