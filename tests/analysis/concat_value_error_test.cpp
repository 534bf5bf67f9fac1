// Tests of analysis/concat_value_error.hpp: the lag-covariance moments against sums over the exact
// window table, the value error against Monte Carlo with a ConcatWindow memory (within 4
// batch-means standard errors), the TD fixed point against long-run TD, and bad input.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memtrace/analysis/concat_value_error.hpp>
#include <memtrace/analysis/linear_estimator.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/monte_carlo.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/features.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/window.hpp>
#include <vector>

namespace concat_value_error_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// The ConcatWindow features of the window with Window index `index` (newest observation = lowest
/// digit), restricted to the newest `blocks` observations, starting at lag `first`.
Eigen::VectorXd concat_features(std::size_t index, std::size_t ny, std::size_t first, std::size_t blocks) {
  Eigen::VectorXd phi = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(blocks * ny));
  for (std::size_t k = 0; k < first + blocks; ++k, index /= ny)
    if (k >= first) phi[static_cast<Eigen::Index>((k - first) * ny + index % ny)] = 1.0;
  return phi;
}

}  // namespace

TEST_CASE("Concat moments equal sums over the exact window table", "[concat_ve]") {
  const StationaryProcess process(NoisyRandomWalk({.num_states = 31, .max_step = 3, .num_observations = 4}), 0.9);
  const std::size_t ny = process.num_observations();
  for (std::size_t m = 1; m <= 3; ++m) {
    const LinearMoments moments = concat_moments(process, m);
    const WindowMoments windows = window_moments(process, m);
    const WindowMoments longer = window_moments(process, m + 1);
    Eigen::MatrixXd second = Eigen::MatrixXd::Zero(moments.second.rows(), moments.second.cols());
    Eigen::MatrixXd next = second;
    Eigen::VectorXd cross = Eigen::VectorXd::Zero(moments.cross.size());
    for (std::size_t w = 0; w < static_cast<std::size_t>(windows.probability.size()); ++w) {
      const Eigen::VectorXd phi = concat_features(w, ny, 0, m);
      second += windows.probability[static_cast<Eigen::Index>(w)] * phi * phi.transpose();
      cross += windows.value_sum[static_cast<Eigen::Index>(w)] * phi;
    }
    // A window of m + 1 observations holds φ_t (the older m) and φ_{t+1} (the newer m).
    for (std::size_t w = 0; w < static_cast<std::size_t>(longer.probability.size()); ++w)
      next += longer.probability[static_cast<Eigen::Index>(w)] * concat_features(w, ny, 1, m) *
              concat_features(w, ny, 0, m).transpose();
    INFO("m = " << m);
    CHECK((moments.second - second).cwiseAbs().maxCoeff() < 1e-15);
    CHECK((moments.cross - cross).cwiseAbs().maxCoeff() < 1e-15);
    CHECK((moments.next - next).cwiseAbs().maxCoeff() < 1e-15);
  }
  // At m = 1 the concat window is the trace with λ = 0, TD fixed point included.
  const TraceMoments trace = trace_moments(process, 0.0);
  const LinearMoments concat = concat_moments(process, 1);
  CHECK((trace.next - concat.next).cwiseAbs().maxCoeff() < 1e-15);
  CHECK((trace.reward - concat.reward).cwiseAbs().maxCoeff() < 1e-15);
  CHECK((trace_td_fixed_point(process, 0.0) - concat_td_fixed_point(process, 1)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("The concat value error equals Monte Carlo with a ConcatWindow memory", "[concat_ve][monte_carlo]") {
  const auto check = [](auto env, double discount, std::size_t steps, std::uint64_t seed) {
    const StationaryProcess process(env, discount);
    for (std::size_t m = 1; m <= 3; ++m) {
      const LinearMoments moments = concat_moments(process, m);
      const Eigen::VectorXd w = optimal_linear_weights(moments);
      const double exact = linear_value_error(moments, w);
      CHECK(concat_value_error(process, m, w) == Approx(exact).epsilon(1e-12));
      ConcatWindow<> window(m, env.num_observations());
      Xoshiro256StarStar gen(seed + m);
      const MonteCarloEstimate mc = monte_carlo_value_error(
          env, window, [&](const MultiHot<>& phi) { return dot(w, phi); }, process, gen,
          MonteCarloRun{.steps = steps, .burn_in = 5000, .batches = 50});
      INFO("|X| = " << env.num_states() << ", m = " << m << ": exact " << exact << ", MC " << mc.mean << " +- "
                    << mc.standard_error);
      CHECK(mc.covers(exact, 4.0));
      CHECK(mc.standard_error < 0.05 * exact);
    }
  };
  check(TwoStateHmm(0.3, 0.2, {-1.0, 1.0}), 0.5, 200000, 30);
  check(NoisyRandomWalk(), 0.9, 200000, 40);
}

TEST_CASE("The concat TD fixed point is where long-run TD settles", "[concat_ve][td]") {
  // As for traces: iterate averaging with batch means, tolerance 4 standard errors plus the O(α)
  // bias allowance 5 α max|r| / (1 - γ). Weights are compared through the values they give each
  // window (the weights themselves are determined only up to constants moved between blocks).
  TwoStateHmm env(0.3, 0.2, {-1.0, 1.0});
  const double discount = 0.5, alpha = 0.005;
  const std::size_t m = 2, steps = 400000;
  const StationaryProcess process(env, discount);
  const Eigen::VectorXd fixed_point = concat_td_fixed_point(process, m);
  ConcatWindow<> window(m, 2);
  LinearTd td(window.dim(), alpha);
  std::vector<std::size_t> record;
  for (std::size_t t = steps / 5; t <= steps; t += 100) record.push_back(t);
  std::vector<BatchMeans> batches(4, BatchMeans(record.size(), 20));
  Xoshiro256StarStar gen(50);
  run_td(env, window, td, gen, TdRun{.steps = steps, .discount = discount}, record,
         [&](std::size_t, const LinearTd<>& l) {
           for (std::size_t w = 0; w < 4; ++w) batches[w].add(concat_features(w, 2, 0, m).dot(l.weights()));
         });
  for (std::size_t w = 0; w < 4; ++w) {
    const double exact = concat_features(w, 2, 0, m).dot(fixed_point);
    const MonteCarloEstimate e = batches[w].estimate();
    INFO("window " << w << ": fixed point " << exact << ", TD " << e.mean << " +- " << e.standard_error);
    CHECK(std::abs(e.mean - exact) <= 4.0 * e.standard_error + 5.0 * alpha / (1.0 - discount));
  }
}

TEST_CASE("Concat analysis refuses bad input with a clear message", "[concat_ve]") {
  const StationaryProcess process(TwoStateHmm(0.3, 0.2), 0.5);
  CHECK_THROWS_WITH(concat_moments(process, 0), "concat_moments: m must be at least 1, got 0");
  CHECK_THROWS_WITH(concat_value_error(process, 2, Eigen::VectorXd::Zero(3)),
                    "concat_value_error: weights must have 4 entries, got 3");
  CHECK_THROWS_WITH(concat_moments(process, 40000), Catch::Contains("exceed 65536"));
}

}  // namespace concat_value_error_test
