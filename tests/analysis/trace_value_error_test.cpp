// Tests of analysis/trace_value_error.hpp and analysis/linear_estimator.hpp: the closed-form trace
// moments against a direct fixed-point iteration and against Monte Carlo (within 4 batch-means
// standard errors), the optimum (gradient zero, VE >= 0), accuracy at λ = 0.99, the TD fixed point
// against long-run TD with iterate averaging, and bad input.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memtrace/analysis/concat_value_error.hpp>
#include <memtrace/analysis/linear_estimator.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/monte_carlo.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/learn/trace_td.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <vector>

namespace trace_value_error_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// The trace moments by iterating their fixed-point equations (contractions by λ and λ²) until
/// λ^iterations is below rounding: an independent reference (a fixed-point iteration), for dense models.
struct ReferenceMoments {
  Eigen::MatrixXd zz, zz_next, mean;
  Eigen::VectorXd zr;
};
ReferenceMoments reference_moments(const FiniteHmm& hmm, double lambda, int iterations) {
  const Eigen::MatrixXd p = hmm.transition();
  const Eigen::MatrixXd& o = hmm.emission();
  const auto nx = p.rows(), ny = o.cols();
  const Eigen::VectorXd mu = stationary_distribution(p);
  std::vector<Eigen::VectorXd> m(static_cast<std::size_t>(nx), Eigen::VectorXd::Zero(ny));
  std::vector<Eigen::MatrixXd> mm(static_cast<std::size_t>(nx), Eigen::MatrixXd::Zero(ny, ny));
  for (int iteration = 0; iteration < iterations; ++iteration) {
    auto m_next = m;
    auto mm_next = mm;
    for (Eigen::Index x2 = 0; x2 < nx; ++x2) {
      const Eigen::VectorXd o2 = o.row(x2).transpose();
      Eigen::VectorXd mx = (1 - lambda) * mu[x2] * o2;
      Eigen::MatrixXd mmx = (1 - lambda) * (1 - lambda) * mu[x2] * Eigen::MatrixXd(o2.asDiagonal());
      for (Eigen::Index x1 = 0; x1 < nx; ++x1) {
        const double w = p(x1, x2);
        if (w == 0.0) continue;
        const Eigen::VectorXd& m1 = m[static_cast<std::size_t>(x1)];
        mx += lambda * w * m1;
        mmx += w * (lambda * lambda * mm[static_cast<std::size_t>(x1)] +
                    lambda * (1 - lambda) * (m1 * o2.transpose() + o2 * m1.transpose()));
      }
      m_next[static_cast<std::size_t>(x2)] = mx;
      mm_next[static_cast<std::size_t>(x2)] = mmx;
    }
    m = m_next;
    mm = mm_next;
  }
  ReferenceMoments out{Eigen::MatrixXd::Zero(ny, ny), Eigen::MatrixXd::Zero(ny, ny), Eigen::MatrixXd(nx, ny),
                       Eigen::VectorXd::Zero(ny)};
  for (Eigen::Index x1 = 0; x1 < nx; ++x1) {
    const auto& m1 = m[static_cast<std::size_t>(x1)];
    out.mean.row(x1) = m1.transpose() / mu[x1];
    out.zz += mm[static_cast<std::size_t>(x1)];
    out.zr += hmm.expected_rewards()[x1] * m1;
    for (Eigen::Index x2 = 0; x2 < nx; ++x2) out.zz_next += p(x1, x2) * (1 - lambda) * m1 * o.row(x2);
  }
  out.zz_next += lambda * out.zz;
  return out;
}

double max_abs(const Eigen::MatrixXd& m) { return m.cwiseAbs().maxCoeff(); }

}  // namespace

TEST_CASE("Trace moments in closed form equal the fixed-point iteration, up to lambda = 0.99", "[trace_ve]") {
  const FiniteHmm two = TwoStateHmm(0.3, 0.2, {-1.0, 1.0}).model();
  const FiniteHmm walk = NoisyRandomWalk({.num_states = 15, .max_step = 2, .num_observations = 3}).model();
  for (const FiniteHmm* model : {&two, &walk}) {
    const StationaryProcess process(*model, 0.9);
    for (const double lambda : {0.0, 0.5, 0.9, 0.99}) {
      // 0.99^4000 < 1e-17: the iteration has converged to rounding.
      const int iterations = lambda > 0.95 ? 4000 : 400;
      const ReferenceMoments reference = reference_moments(*model, lambda, iterations);
      const TraceMoments moments = trace_moments(process, lambda);
      INFO("|X| = " << model->num_states() << ", lambda = " << lambda);
      CHECK(max_abs(moments.second - reference.zz) < 1e-13);
      CHECK(max_abs(moments.next - reference.zz_next) < 1e-13);
      CHECK(max_abs(moments.reward - reference.zr) < 1e-13);
      CHECK(max_abs(moments.conditional_mean - reference.mean) < 1e-12);
      const Eigen::VectorXd fixed_point = (reference.zz - 0.9 * reference.zz_next).lu().solve(reference.zr);
      CHECK(max_abs(trace_td_fixed_point(process, lambda) - fixed_point) < 1e-11 * (1 + max_abs(fixed_point)));
      // Every trace of an infinite history sums to 1 (eq. (4) with m -> infinity).
      CHECK(moments.second.sum() == Approx(1.0).epsilon(1e-13));
      CHECK((moments.conditional_mean.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-13);
    }
  }
}

TEST_CASE("The optimal trace weights: VE >= 0, zero gradient, and no better weights nearby", "[trace_ve]") {
  const StationaryProcess process(NoisyRandomWalk({.num_states = 201, .max_step = 20, .num_observations = 11}), 0.99);
  for (const double lambda : {0.0, 0.5, 0.9, 0.99}) {
    const TraceMoments moments = trace_moments(process, lambda);
    const Eigen::VectorXd w = optimal_linear_weights(moments);
    const double best = linear_value_error(moments, w);
    INFO("lambda = " << lambda << ", VE* = " << best);
    CHECK(best > 0.0);
    CHECK(best < moments.value_second);  // better than predicting 0
    // The gradient 2 (E[zzᵀ] w - E[z v]) vanishes, relative to the size of its terms.
    const Eigen::VectorXd gradient = 2.0 * (moments.second * w - moments.cross);
    CHECK(gradient.cwiseAbs().maxCoeff() < 1e-12 * moments.cross.cwiseAbs().maxCoeff());
    // The direct quadratic form agrees with the stable one, and every perturbation costs.
    const double direct = w.dot(moments.second * w) - 2.0 * w.dot(moments.cross) + moments.value_second;
    CHECK(direct == Approx(best).epsilon(1e-9));
    CHECK(optimal_trace_value_error(process, lambda) == Approx(best).epsilon(1e-12));
    Eigen::VectorXd nudged = w;
    for (Eigen::Index i = 0; i < w.size(); ++i) {
      nudged[i] += 1e-3;
      CHECK(linear_value_error(moments, nudged) > best);
      nudged[i] = w[i];
    }
  }
  // The conditioning at λ = 0.99: E[zzᵀ] has condition number ~1/(1 - λ) (the trace concentrates
  // at its mean, Cov(z) = O(1 - λ)); the weights still solve their system to 1e-12 (above).
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(trace_moments(process, 0.99).second);
  CHECK(trace_value_error(process, 0.5, optimal_trace_weights(process, 0.5)) ==
        Approx(optimal_trace_value_error(process, 0.5)).epsilon(1e-12));
  const double condition = svd.singularValues()[0] / svd.singularValues().tail(1)[0];
  INFO("cond(E[zzᵀ]) at lambda = 0.99: " << condition);
  CHECK(condition < 1e6);
}

TEST_CASE("The trace value error equals Monte Carlo within 4 standard errors", "[trace_ve][monte_carlo]") {
  // Batch means with 50 batches; batches are >= 4000 steps, far beyond the correlation time of
  // either chain (the walk forgets its position in ~100 steps; the trace in 1/(1 - λ) = 10).
  const auto check = [](auto env, double discount, std::size_t steps, std::uint64_t seed,
                        std::initializer_list<double> lambdas) {
    const StationaryProcess process(env, discount);
    for (const double lambda : lambdas) {
      const TraceMoments moments = trace_moments(process, lambda);
      const Eigen::VectorXd w = optimal_linear_weights(moments);
      const double exact = linear_value_error(moments, w);
      MemoryTrace<> trace(lambda, env.num_observations());
      Xoshiro256StarStar gen(seed);
      const MonteCarloEstimate mc = monte_carlo_value_error(
          env, trace, [&](const Eigen::VectorXd& z) { return w.dot(z); }, process, gen,
          MonteCarloRun{.steps = steps, .burn_in = 5000, .batches = 50});
      INFO("|X| = " << env.num_states() << ", lambda = " << lambda << ": exact " << exact << ", MC " << mc.mean
                    << " +- " << mc.standard_error);
      CHECK(mc.covers(exact, 4.0));
      CHECK(mc.standard_error < 0.05 * exact);  // the check has teeth
    }
  };
  check(TwoStateHmm(0.3, 0.2, {-1.0, 1.0}), 0.5, 200000, 1, {0.0, 0.5, 0.9});
  check(NoisyRandomWalk({.num_states = 201, .max_step = 20, .num_observations = 11}), 0.9, 200000, 2, {0.0, 0.5, 0.9});
  check(NoisyRandomWalk(), 0.9, 200000, 3, {0.9});  // the paper's walk: one λ, as a sparse LU takes ~1 s in Debug
}

TEST_CASE("The trace TD fixed point is where long-run TD settles, and its value error is strictly above the optimum",
          "[trace_ve][td]") {
  // TraceTd with a small step, iterates averaged over the last 4/5 of the run (every 100 steps);
  // the standard error is by batch means over 20 batches of the recorded iterates, each many
  // times longer than TD's relaxation time 1/(α λ_min(E[z (z - γz')ᵀ])). Constant-step TD also has
  // an O(α) bias; the tolerance is 4 standard errors plus 5 α max|r| / (1 - γ) (runs at
  // α = 0.005 ... 0.02 on both models deviated by at most 3 α max|r| / (1 - γ), noise included).
  const auto check = [](auto env, double lambda, double discount, double alpha, std::size_t steps, std::uint64_t seed) {
    const StationaryProcess process(env, discount);
    const TraceMoments moments = trace_moments(process, lambda);
    const Eigen::VectorXd fixed_point = linear_td_fixed_point(moments, discount);
    TraceTd<> td(lambda, env.num_observations(), alpha);
    std::vector<std::size_t> record;
    for (std::size_t t = steps / 5; t <= steps; t += 100) record.push_back(t);
    const auto k = static_cast<Eigen::Index>(env.num_observations());
    std::vector<BatchMeans> batches(static_cast<std::size_t>(k), BatchMeans(record.size(), 20));
    Xoshiro256StarStar gen(seed);
    run_td(env, td, gen, TdRun{.steps = steps, .discount = discount}, record, [&](std::size_t, const TraceTd<>& l) {
      for (Eigen::Index i = 0; i < k; ++i) batches[static_cast<std::size_t>(i)].add(l.weights()[i]);
    });
    const double bias = 5.0 * alpha * 1.0 / (1.0 - discount);  // both models pay |r| <= 1
    for (Eigen::Index i = 0; i < k; ++i) {
      const MonteCarloEstimate e = batches[static_cast<std::size_t>(i)].estimate();
      INFO("|Y| = " << k << ", lambda = " << lambda << ", weight " << i << ": fixed point " << fixed_point[i] << ", TD "
                    << e.mean << " +- " << e.standard_error);
      CHECK(std::abs(e.mean - fixed_point[i]) <= 4.0 * e.standard_error + bias);
    }
    // The fixed point's value error, wᵀE[zzᵀ]w - 2 wᵀE[z v] + E[v²] expanded directly (the library
    // evaluates VE* + (w - w*)ᵀE[zzᵀ](w - w*)), and under partial observability TD does not
    // minimise the VE: the fixed point is strictly worse than the optimum.
    const double expanded =
        fixed_point.dot(moments.second * fixed_point) - 2.0 * fixed_point.dot(moments.cross) + moments.value_second;
    const double td_error = linear_value_error(moments, fixed_point);
    CHECK(td_error == Approx(expanded).epsilon(1e-9));
    CHECK(td_error > optimal_trace_value_error(process, lambda) * (1 + 1e-6));
  };
  check(TwoStateHmm(0.3, 0.2, {-1.0, 1.0}), 0.5, 0.5, 0.005, 400000, 4);
  check(NoisyRandomWalk(), 0.5, 0.5, 0.01, 1000000, 5);
}

TEST_CASE("Trace analysis refuses bad input with a clear message", "[trace_ve]") {
  const TwoStateHmm env(0.3, 0.2);
  const StationaryProcess process(env, 0.5);
  CHECK_THROWS_WITH(trace_moments(process, 1.0), "trace_moments: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(trace_moments(process, -0.5), "trace_moments: lambda must be in [0, 1), got -0.5");
  CHECK_THROWS_WITH(trace_value_error(process, 0.5, Eigen::VectorXd::Zero(3)),
                    "trace_value_error: weights must have 2 entries, got 3");
  CHECK_THROWS_WITH(trace_value_error(env, 0.5, Eigen::VectorXd::Zero(2), 1.0),
                    "StationaryProcess: discount must be in [0, 1), got 1");
  CHECK_THROWS_WITH(optimal_trace_weights(env, 1.5, 0.5), "optimal_trace_weights: lambda must be in [0, 1), got 1.5");
  CHECK_THROWS_WITH(linear_td_fixed_point(trace_moments(process, 0.5), 1.0),
                    "linear_td_fixed_point: discount must be in [0, 1), got 1");
  // Messages name the function the user called, not the internal trace_moments / concat_moments.
  CHECK_THROWS_WITH(trace_value_error(process, 1.5, Eigen::VectorXd::Zero(2)),
                    "trace_value_error: lambda must be in [0, 1), got 1.5");
  CHECK_THROWS_WITH(optimal_trace_weights(process, 1.0), "optimal_trace_weights: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(optimal_trace_value_error(process, 1.0),
                    "optimal_trace_value_error: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(trace_td_fixed_point(process, -1.0), "trace_td_fixed_point: lambda must be in [0, 1), got -1");
  CHECK_THROWS_WITH(concat_value_error(process, 0, Eigen::VectorXd::Zero(2)),
                    "concat_value_error: m must be at least 1, got 0");
  CHECK_THROWS_WITH(optimal_concat_value_error(process, 0), "optimal_concat_value_error: m must be at least 1, got 0");
  CHECK_THROWS_WITH(concat_td_fixed_point(process, 0), "concat_td_fixed_point: m must be at least 1, got 0");
  // A value just outside its range is printed with the digits that show it (not "got 1").
  CHECK_THROWS_WITH(trace_moments(process, std::nextafter(1.0, 2.0)),
                    "trace_moments: lambda must be in [0, 1), got 1.0000000000000002");
}

}  // namespace trace_value_error_test
