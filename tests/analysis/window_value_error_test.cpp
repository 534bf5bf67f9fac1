// Tests of analysis/window_value_error.hpp and analysis/belief.hpp: the depth-first window moments
// against a direct forward pass per window, the optimal table against the belief filter and against
// Monte Carlo with a Window memory (within 4 batch-means standard errors), the orderings of the
// optimal value errors, the T-maze of Theorem 5.8, and bad input.
#include <Eigen/Dense>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memtrace/analysis/belief.hpp>
#include <memtrace/analysis/concat_value_error.hpp>
#include <memtrace/analysis/linear_estimator.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/monte_carlo.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/features.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#include <vector>

namespace window_value_error_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// p(w), Σ p(x, w) v(x), Σ p(x, w) v(x)² for one chronological window, by the forward algorithm.
Eigen::Vector3d forward_sums(const StationaryProcess& process, const std::vector<Observation>& window) {
  const Eigen::MatrixXd p = process.transition();
  Eigen::VectorXd f = process.stationary();
  for (std::size_t j = 0; j < window.size(); ++j) {
    if (j > 0) f = p.transpose() * f;
    f = f.cwiseProduct(process.emission().col(static_cast<Eigen::Index>(window[j])));
  }
  const Eigen::VectorXd& v = process.values();
  return {f.sum(), f.dot(v), f.dot(v.cwiseAbs2())};
}

/// E[1{w_t = w} r_{t+1}] = Σ_x p(x_t = x, w_t = w) r̄(x) for one chronological window, by the
/// forward algorithm on the sparse chain (the right-hand side of the window TD equations).
double forward_reward_sum(const StationaryProcess& process, const std::vector<Observation>& window) {
  Eigen::VectorXd f = process.stationary();
  for (std::size_t j = 0; j < window.size(); ++j) {
    if (j > 0) f = process.transition().transpose() * f;
    f = f.cwiseProduct(process.emission().col(static_cast<Eigen::Index>(window[j])));
  }
  return f.dot(process.rewards());
}

}  // namespace

TEST_CASE("Window moments by the depth-first pass equal a forward pass per window", "[window_ve]") {
  const TwoStateHmm two(0.3, 0.2, {-1.0, 1.0});
  const StationaryProcess processes[] = {
      StationaryProcess(two, 0.5),
      StationaryProcess(NoisyRandomWalk({.num_states = 15, .max_step = 2, .num_observations = 3}), 0.9)};
  for (const auto& process : processes) {
    for (std::size_t m = 1; m <= 4; ++m) {
      const WindowMoments moments = window_moments(process, m);
      const Window<> layout(m, process.num_observations());
      REQUIRE(static_cast<std::size_t>(moments.probability.size()) == layout.dim());
      CHECK(moments.probability.sum() == Approx(1.0).epsilon(1e-14));
      const Eigen::VectorXd table = optimal_window_table(moments);
      double worst = 0.0, worst_belief = 0.0;
      for (std::size_t index = 0; index < layout.dim(); ++index) {
        const auto window = layout.window_at(index);
        REQUIRE(layout.index_of(window) == index);
        const Eigen::Vector3d direct = forward_sums(process, window);
        const auto i = static_cast<Eigen::Index>(index);
        worst =
            std::max({worst, std::abs(direct[0] - moments.probability[i]), std::abs(direct[1] - moments.value_sum[i]),
                      std::abs(direct[2] - moments.value_square_sum[i])});
        // The optimal table is the belief-weighted value, and the residual p Var(v | w).
        worst_belief = std::max(worst_belief, std::abs(belief_value(process, window) - table[i]));
        const double variance = direct[2] / direct[0] - (direct[1] / direct[0]) * (direct[1] / direct[0]);
        CHECK(moments.residual[i] == Approx(direct[0] * variance).margin(1e-14));
      }
      INFO("|X| = " << process.num_states() << ", m = " << m);
      CHECK(worst < 1e-15);
      CHECK(worst_belief < 1e-13);
    }
  }
}

TEST_CASE("The optimal window value error equals Monte Carlo with a Window memory", "[window_ve][monte_carlo]") {
  // 50 batches of >= 4000 steps each, far beyond the correlation time of either chain.
  const auto check = [](auto env, double discount, std::size_t steps, std::uint64_t seed) {
    const StationaryProcess process(env, discount);
    for (std::size_t m = 1; m <= 3; ++m) {
      const WindowMoments moments = window_moments(process, m);
      const Eigen::VectorXd table = optimal_window_table(moments);
      const double exact = window_value_error(moments, table);
      CHECK(exact == Approx(optimal_window_value_error(moments)).epsilon(1e-12));
      Window<> window(m, env.num_observations());
      Xoshiro256StarStar gen(seed + m);
      const MonteCarloEstimate mc = monte_carlo_value_error(
          env, window, [&](const OneHot& phi) { return table[static_cast<Eigen::Index>(phi.index)]; }, process, gen,
          MonteCarloRun{.steps = steps, .burn_in = 5000, .batches = 50});
      INFO("|X| = " << env.num_states() << ", m = " << m << ": exact " << exact << ", MC " << mc.mean << " +- "
                    << mc.standard_error);
      CHECK(mc.covers(exact, 4.0));
      CHECK(mc.standard_error < 0.05 * exact);
    }
  };
  check(TwoStateHmm(0.3, 0.2, {-1.0, 1.0}), 0.5, 200000, 10);
  check(NoisyRandomWalk(), 0.9, 200000, 20);
}

TEST_CASE("Optimal value errors: trace at lambda 0 = window at m 1 = concat at m 1, and windows improve with m",
          "[window_ve][concat_ve]") {
  const StationaryProcess process(NoisyRandomWalk({.num_states = 201, .max_step = 20, .num_observations = 11}), 0.99);
  const double trace0 = optimal_trace_value_error(process, 0.0);
  double previous = 0.0;
  for (std::size_t m = 1; m <= 4; ++m) {
    const double window = optimal_window_value_error(window_moments(process, m));
    const double concat = optimal_concat_value_error(process, m);
    INFO("m = " << m << ": window " << window << ", concat " << concat);
    if (m == 1) {
      CHECK(window == Approx(trace0).epsilon(1e-12));
      CHECK(concat == Approx(trace0).epsilon(1e-12));
    } else {
      CHECK(window <= previous);
      CHECK(window < previous);  // strictly, on this walk
    }
    CHECK(window <= concat * (1 + 1e-12));
    previous = window;
  }
  // The same on the two-state HMM, where windows keep improving up to numerical equality.
  const StationaryProcess two(TwoStateHmm(0.1, 0.25), 0.9);
  previous = optimal_trace_value_error(two, 0.0);
  for (std::size_t m = 1; m <= 8; ++m) {
    const double window = optimal_window_value_error(window_moments(two, m));
    CHECK(window <= previous * (1 + 1e-12));
    CHECK(window <= optimal_concat_value_error(two, m) * (1 + 1e-12));
    previous = window;
  }
}

TEST_CASE("T-maze under always up: a window of length k has VE 0, a shorter one does not", "[window_ve][tmaze]") {
  for (const std::size_t k : {2, 3, 5}) {
    const StationaryProcess process(TMazeAlwaysUp(k), 0.9);
    for (std::size_t m = 1; m <= k + 1; ++m) {
      const double value_error = optimal_window_value_error(window_moments(process, m));
      INFO("k = " << k << ", m = " << m << ": VE " << value_error);
      if (m >= k) {
        CHECK(value_error < 1e-15);
      } else {
        // The junction (weight 1 of the k non-terminal steps) has value ±1 and the window cannot
        // tell which: VE = 1/k exactly.
        CHECK(value_error == Approx(1.0 / static_cast<double>(k)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("Episodic models: trace, window and concat value errors equal Monte Carlo on the T-maze",
          "[window_ve][trace_ve][concat_ve][tmaze][monte_carlo]") {
  // The simulation resets the environment but not the memory at an episode end and skips terminal
  // steps, as the analysis does; 4 batch-means standard errors as elsewhere.
  const std::size_t k = 3;
  TMazeAlwaysUp env(k);
  const StationaryProcess process(env, 0.9);
  const MonteCarloRun run{.steps = 200000, .burn_in = 1000, .batches = 50};
  const auto check = [](const char* what, double exact, const MonteCarloEstimate& mc) {
    INFO(what << ": exact " << exact << ", MC " << mc.mean << " +- " << mc.standard_error);
    CHECK(mc.covers(exact, 4.0));
    CHECK(mc.standard_error < 0.05 * exact);
  };
  {
    const TraceMoments moments = trace_moments(process, 0.5);
    const Eigen::VectorXd w = optimal_linear_weights(moments);
    MemoryTrace<> trace(0.5, env.num_observations());
    Xoshiro256StarStar gen(70);
    check("trace", linear_value_error(moments, w),
          monte_carlo_value_error(
              env, trace, [&](const Eigen::VectorXd& z) { return w.dot(z); }, process, gen, run));
  }
  {
    const WindowMoments moments = window_moments(process, 2);
    const Eigen::VectorXd table = optimal_window_table(moments);
    Window<> window(2, env.num_observations());
    Xoshiro256StarStar gen(71);
    check("window", optimal_window_value_error(moments),
          monte_carlo_value_error(
              env, window, [&](const OneHot& phi) { return table[static_cast<Eigen::Index>(phi.index)]; }, process, gen,
              run));
  }
  {
    const LinearMoments moments = concat_moments(process, 2);
    const Eigen::VectorXd w = optimal_linear_weights(moments);
    ConcatWindow<> window(2, env.num_observations());
    Xoshiro256StarStar gen(72);
    check("concat", linear_value_error(moments, w),
          monte_carlo_value_error(
              env, window, [&](const MultiHot<>& phi) { return dot(w, phi); }, process, gen, run));
  }
}

TEST_CASE("The belief filter follows belief() of the history, and belief() refuses bad input", "[belief]") {
  const NoisyRandomWalk env = NoisyRandomWalk({.num_states = 101, .max_step = 10, .num_observations = 5});
  const StationaryProcess process(env, 0.9);
  NoisyRandomWalk sim = env;
  Xoshiro256StarStar gen(7);
  std::vector<Observation> history{sim.reset(gen)};
  for (int t = 0; t < 30; ++t) history.push_back(sim.step(gen).observation);
  BeliefFilter filter(process);
  filter.reset(history[0]);
  for (std::size_t t = 1; t < history.size(); ++t) filter.update(history[t]);
  const Eigen::VectorXd b = belief(process, history);
  CHECK(b.sum() == Approx(1.0).epsilon(1e-14));
  CHECK((filter.features() - b).cwiseAbs().maxCoeff() < 1e-14);
  CHECK(filter.value() == Approx(b.dot(process.values())).epsilon(1e-12));
  // A prior concentrated on the true start state gives a different, equally valid belief.
  Eigen::VectorXd prior = Eigen::VectorXd::Zero(101);
  prior[50] = 1.0;
  CHECK(belief(process, std::vector<Observation>{history[0]}, prior) == prior);

  CHECK_THROWS_WITH(belief(process, std::vector<Observation>{}), "belief: window must hold at least one observation");
  CHECK_THROWS_WITH(belief(process, std::vector<Observation>{5}), "belief: observation must be in [0, 5), got 5");
  CHECK_THROWS_WITH(belief(process, history, Eigen::VectorXd::Ones(3)),
                    "belief: prior must have |X| = 101 entries, got 3");
  const StationaryProcess tmaze(TMazeAlwaysUp(3), 0.9);
  CHECK_THROWS_WITH(belief(tmaze, std::vector<Observation>{tmaze::a, tmaze::a}),
                    "belief: observation 0 has probability 0 given the observations before it");
}

TEST_CASE("The belief filter gives the strong guarantee: a refused observation changes nothing", "[belief][errors]") {
  // update used to predict before it checked: a refused update left the belief advanced, and an
  // observation of probability 0 left it all zero, so that every later update threw.
  const StationaryProcess tmaze(TMazeAlwaysUp(4), 0.9);
  BeliefFilter filter(tmaze);
  filter.reset(tmaze::a);
  const Eigen::VectorXd before = filter.features();
  CHECK_THROWS_WITH(filter.update(tmaze::a),
                    "BeliefFilter::update: observation 0 has probability 0 given the observations before it");
  CHECK(filter.features() == before);
  CHECK_THROWS_WITH(filter.update(5), "BeliefFilter::update: observation must be in [0, 5), got 5");
  CHECK(filter.features() == before);
  CHECK_THROWS_WITH(filter.reset(7), "BeliefFilter::reset: observation must be in [0, 5), got 7");
  CHECK(filter.features() == before);
  filter.update(tmaze::o);  // the history goes on as if nothing had been refused
  BeliefFilter fresh(tmaze);
  fresh.reset(tmaze::a);
  fresh.update(tmaze::o);
  CHECK(filter.features() == fresh.features());
}

TEST_CASE("The window TD fixed point solves the TD equations window by window, and long-run TD settles there",
          "[window_ve][td]") {
  // m = 1: the table is a linear function of e_{y_t}, the trace with λ = 0.
  const StationaryProcess walk(NoisyRandomWalk({.num_states = 201, .max_step = 20, .num_observations = 11}), 0.9);
  const Eigen::VectorXd one = window_td_fixed_point(walk, 1);
  CHECK((one - trace_td_fixed_point(walk, 0.0)).cwiseAbs().maxCoeff() < 1e-12);
  // m = 2, 3: it solves its equations, p(w) θ(w) - γ Σ_y p(w, y_{t+1} = y) θ(w') = E[1{w_t = w} r_{t+1}],
  // every one of them: the left side from the moments of windows of length m + 1, the right side by
  // a forward pass per window (the walk is continuing: no terminal state, every step bootstraps).
  for (std::size_t m = 2; m <= 3; ++m) {
    const Eigen::VectorXd theta = window_td_fixed_point(walk, m);
    const WindowMoments moments = window_moments(walk, m);
    const WindowMoments longer = window_moments(walk, m + 1);  // p(w_t, y_{t+1}): index y_{t+1} + |Y| w_t
    const auto size = moments.probability.size();
    const Window<> layout(m, 11);
    double worst = 0.0;
    for (Eigen::Index w = 0; w < size; ++w) {
      double residual = moments.probability[w] * theta[w];
      for (Eigen::Index y = 0; y < 11; ++y)
        residual -= 0.9 * longer.probability[y + 11 * w] * theta[(w % (size / 11)) * 11 + y];
      const double reward = forward_reward_sum(walk, layout.window_at(static_cast<std::size_t>(w)));
      worst = std::max(worst, std::abs(residual - reward));
    }
    INFO("m = " << m);
    CHECK(worst < 1e-12);
    // Its value error, E[v²] - 2 E[θ(w) v] + E[θ(w)²] expanded over states and windows (not the
    // library's Σ_w p(w) Var(v | w) + p(w) (θ(w) - θ*(w))²), and TD is strictly worse than the optimum here.
    const Eigen::VectorXd& v = walk.values();
    const double expanded = walk.weights().dot(v.cwiseAbs2()) - 2.0 * theta.dot(moments.value_sum) +
                            moments.probability.dot(theta.cwiseAbs2());
    CHECK(window_value_error(moments, theta) == Approx(expanded).epsilon(1e-10));
    CHECK(window_value_error(moments, theta) > optimal_window_value_error(moments) * (1 + 1e-6));
  }
  // Against long-run TD with a Window memory on the two-state HMM (as for traces: batch means,
  // 4 standard errors plus the O(α) bias allowance 5 α max|r| / (1 - γ)).
  TwoStateHmm env(0.3, 0.2, {-1.0, 1.0});
  const double discount = 0.5, alpha = 0.005;
  const std::size_t steps = 400000;
  const StationaryProcess process(env, discount);
  const Eigen::VectorXd fixed_point = window_td_fixed_point(process, 2);
  Window<> window(2, 2);
  LinearTd td(window.dim(), alpha);
  std::vector<std::size_t> record;
  for (std::size_t t = steps / 5; t <= steps; t += 100) record.push_back(t);
  std::vector<BatchMeans> batches(4, BatchMeans(record.size(), 20));
  Xoshiro256StarStar gen(60);
  run_td(env, window, td, gen, TdRun{.steps = steps, .discount = discount}, record,
         [&](std::size_t, const LinearTd<>& l) {
           for (std::size_t w = 0; w < 4; ++w) batches[w].add(l.weights()[static_cast<Eigen::Index>(w)]);
         });
  for (std::size_t w = 0; w < 4; ++w) {
    const MonteCarloEstimate e = batches[w].estimate();
    INFO("window " << w << ": fixed point " << fixed_point[static_cast<Eigen::Index>(w)] << ", TD " << e.mean << " +- "
                   << e.standard_error);
    CHECK(std::abs(e.mean - fixed_point[static_cast<Eigen::Index>(w)]) <=
          4.0 * e.standard_error + 5.0 * alpha / (1.0 - discount));
  }
}

TEST_CASE("Window analysis refuses bad input with a clear message", "[window_ve]") {
  const StationaryProcess process(TwoStateHmm(0.3, 0.2), 0.5);
  CHECK_THROWS_WITH(window_moments(process, 0), "window_moments: m must be at least 1, got 0");
  CHECK_THROWS_WITH(
      window_moments(process, 30, 1000),
      Catch::StartsWith("window_moments: a table of |Y|^m windows with |Y| = 2 and m = 30 has 1073741824 entries"));
  CHECK_THROWS_WITH(window_moments(process, 70), Catch::Contains("overflows std::size_t"));
  CHECK_THROWS_WITH(window_td_fixed_point(process, 0), "window_td_fixed_point: m must be at least 1, got 0");
  CHECK_THROWS_WITH(window_moments(TwoStateHmm(0.3, 0.2), 3, 1.5),
                    "StationaryProcess: discount must be in [0, 1), got 1.5");
  const WindowMoments moments = window_moments(process, 2);
  CHECK_THROWS_WITH(window_value_error(moments, Eigen::VectorXd::Zero(3)),
                    "window_value_error: table must have |Y|^m = 4 entries, got 3");
}

TEST_CASE("A table's value error grows by p(w) δ² when entry w moves by δ, and the zero table's is E(v(x_t)²)",
          "[window_ve]") {
  const StationaryProcess process(NoisyRandomWalk({.num_states = 15, .max_step = 2, .num_observations = 3}), 0.9);
  const WindowMoments moments = window_moments(process, 2);
  const Eigen::VectorXd best = optimal_window_table(moments);
  const double optimum = window_value_error(moments, best);
  CHECK(optimum == Approx(optimal_window_value_error(moments)).epsilon(1e-12));
  for (Eigen::Index w = 0; w < best.size(); ++w) {
    REQUIRE(moments.probability[w] > 0.0);
    for (const double delta : {-0.5, 0.25, 2.0}) {
      Eigen::VectorXd moved = best;
      moved[w] += delta;
      INFO("window " << w << ", delta " << delta);
      CHECK(window_value_error(moments, moved) - optimum ==
            Approx(moments.probability[w] * delta * delta).epsilon(1e-9).margin(1e-15));
    }
  }
  // The zero table predicts 0 everywhere: its value error is E[v(x_t)²], from the states alone.
  const Eigen::VectorXd& v = process.values();
  CHECK(window_value_error(moments, Eigen::VectorXd::Zero(best.size())) ==
        Approx(process.weights().dot(v.cwiseAbs2())).epsilon(1e-12));
}

TEST_CASE("Value errors of several tables or weight vectors at once equal one at a time", "[window_ve][concat_ve]") {
  const StationaryProcess process(NoisyRandomWalk({.num_states = 15, .max_step = 2, .num_observations = 3}), 0.9);
  const WindowMoments moments = window_moments(process, 3);
  const auto size = moments.probability.size();
  // Columns: the optimum, two perturbations of it, zero, and a learner that diverged.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tables(size, 5);
  tables.col(0) = optimal_window_table(moments);
  tables.col(1) = tables.col(0) + Eigen::VectorXd::LinSpaced(size, -0.3, 0.3);
  tables.col(2) = tables.col(0) * 1.5;
  tables.col(3).setZero();
  tables.col(4) = tables.col(0);
  tables(7, 4) = std::numeric_limits<double>::infinity();
  const Eigen::VectorXd errors = window_value_errors(moments, tables);
  REQUIRE(errors.size() == 5);
  for (Eigen::Index c = 0; c < 4; ++c)
    CHECK(errors[c] == Approx(window_value_error(moments, Eigen::VectorXd(tables.col(c)))).epsilon(1e-12));
  CHECK(errors[0] == Approx(optimal_window_value_error(moments)).epsilon(1e-12));
  CHECK(errors[1] > errors[0]);
  CHECK(std::isinf(errors[4]));
  CHECK_THROWS_WITH(window_value_errors(moments, Eigen::MatrixXd::Zero(size - 1, 2)),
                    Catch::Contains("tables must have |Y|^m = 27 rows, got 26"));

  const LinearMoments concat = concat_moments(process, 2);
  Eigen::MatrixXd weights(concat.cross.size(), 5);
  weights.col(0) = optimal_linear_weights(concat);
  weights.col(1) = weights.col(0) + Eigen::VectorXd::LinSpaced(weights.rows(), -1.0, 1.0);
  weights.col(2).setConstant(0.25);
  weights.col(3).setConstant(std::numeric_limits<double>::quiet_NaN());
  // Finite weights of a learner on its way to diverging, large enough that the quadratic form
  // overflows to inf - inf: their value error is +inf, not a NaN clamped to 0.
  weights.col(4) = 1e200 * Eigen::VectorXd::LinSpaced(weights.rows(), -1.0, 1.0);
  const Eigen::VectorXd linear = linear_value_errors(concat, weights);
  for (Eigen::Index c = 0; c < 3; ++c)
    CHECK(linear[c] == Approx(linear_value_error(concat, weights.col(c))).epsilon(1e-12));
  CHECK(std::isinf(linear[3]));
  CHECK(std::isinf(linear[4]));
  CHECK(std::isinf(linear_value_error(concat, weights.col(4))));
  CHECK_THROWS_WITH(linear_value_errors(concat, Eigen::MatrixXd::Zero(5, 1)),
                    Catch::Contains("weights must have 6 rows, got 5"));
}

TEST_CASE("Windows of a one-observation model: any length, no recursion, the depth bounded", "[window_ve][errors]") {
  // |Y| = 1: the table has one entry for every m, so the size guard passed any length and the
  // recursive pass overflowed the stack (SIGSEGV in Release) at a few hundred thousand levels.
  const Eigen::Matrix2d p{{0.5, 0.5}, {0.5, 0.5}};
  const FiniteHmm one(p, Eigen::MatrixXd::Ones(2, 1), Eigen::Vector2d(0.5, 0.5), Eigen::Matrix2d::Ones());
  const StationaryProcess process(one, 0.5);
  const std::size_t m = 300'000;
  const WindowMoments moments = window_moments(process, m);
  REQUIRE(moments.probability.size() == 1);
  CHECK(moments.probability[0] == Approx(1.0));
  CHECK(window_td_fixed_point(process, m).size() == 1);
  // The pass keeps m |X| |Y| entries: the depth is bounded by max_table_size with a clear message.
  CHECK_THROWS_WITH(window_moments(process, std::size_t{1} << 40),
                    Catch::Contains("window_moments: m = 1099511627776 exceeds max_table_size = 268435456"));
  CHECK_THROWS_WITH(window_moments(process, 1000, 1500),
                    Catch::Contains("window_moments: the pass over windows of length m = 1000 keeps m·|X|·|Y| entries "
                                    "with |X| = 2 and |Y| = 1, 2000, more than max_table_size = 1500"));
  CHECK_THROWS_WITH(window_td_fixed_point(process, 1000, 1500), Catch::Contains("window_td_fixed_point: the pass"));
}

}  // namespace window_value_error_test
