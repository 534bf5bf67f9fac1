// Tests of analysis/lipschitz.hpp: the pair formula of the minimal Lipschitz constant against a hand
// computation, coinciding traces and equal values, the enumerated histories against a brute-force
// sum over hidden state paths and, for a model with a terminal state, against the simulator, the
// bound that Lemma 4.3 implies, λ* of the two-state HMM (§5.2, Figure 3) on both sides of 1/2, and
// bad input.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/analysis/lipschitz.hpp>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/random.hpp>
#include <numbers>
#include <vector>

#include "env_test_support.hpp"

namespace lipschitz_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

/// Every history of length m over |Y| observations, in Window<>(m, |Y|) index order (oldest
/// observation the most significant digit).
std::vector<std::vector<Observation>> all_histories(std::size_t num_observations, std::size_t m) {
  std::vector<std::vector<Observation>> level{{}};
  for (std::size_t length = 0; length < m; ++length) {
    std::vector<std::vector<Observation>> next;
    for (const auto& h : level)
      for (Observation y = 0; y < num_observations; ++y) {
        next.push_back(h);
        next.back().push_back(y);
      }
    level = std::move(next);
  }
  return level;
}

/// A three-state HMM where some histories have probability 0 (state 0 only emits 0, state 2 only 1).
FiniteHmm three_state() {
  Eigen::MatrixXd p{{0.5, 0.5, 0.0}, {0.0, 0.5, 0.5}, {0.5, 0.0, 0.5}};
  Eigen::MatrixXd o{{1.0, 0.0}, {0.5, 0.5}, {0.0, 1.0}};
  Eigen::MatrixXd r{{1.0, -1.0, 0.0}, {0.0, 2.0, 0.5}, {-2.0, 0.0, 1.0}};
  return FiniteHmm(p, o, Eigen::Vector3d(1.0, 0.0, 0.0), r);
}

}  // namespace

TEST_CASE("The minimal Lipschitz constant is the largest value gap over trace distance", "[lipschitz]") {
  // λ = 1/2, |Y| = 2: z(0) = (1/2, 0), z(1) = (0, 1/2), z(0, 1) = (1/4, 1/2).
  const std::vector<LabelledHistory> histories{{{0}, 0.0, 0.2}, {{1}, 1.0, 0.3}, {{0, 1}, 3.0, 0.5}};
  const double ab = 1.0 / std::sqrt(0.5 * 0.5 + 0.5 * 0.5);    // √2
  const double ac = 3.0 / std::sqrt(0.25 * 0.25 + 0.5 * 0.5);  // 3 / 0.559
  const double bc = 2.0 / 0.25;                                // 8
  CHECK(ab == Approx(std::numbers::sqrt2));
  const LipschitzPair pair = minimal_lipschitz_pair(histories, 0.5, 2);
  CHECK(pair.constant == Approx(std::max({ab, ac, bc})).epsilon(1e-14));
  CHECK(pair.constant == Approx(8.0).epsilon(1e-14));
  CHECK(pair.first == 1);
  CHECK(pair.second == 2);
  CHECK(minimal_lipschitz_constant(histories, 0.5, 2) == pair.constant);
  // Without the third history only the pair (0), (1) is left; with λ = 0.2 the traces move.
  CHECK(minimal_lipschitz_constant(std::span(histories).first(2), 0.5, 2) == Approx(ab).epsilon(1e-14));
  const double lambda = 0.2;  // z(0) = (0.8, 0), z(0, 1) = (0.16, 0.8)
  CHECK(minimal_lipschitz_constant(std::span(histories).subspan(0, 3), lambda, 2) ==
        Approx(std::max({1.0 / (0.8 * std::numbers::sqrt2), 3.0 / std::hypot(0.64, 0.8), 2.0 / 0.16})).epsilon(1e-14));
  // The traces are trace_of's (eq. (2)), bit for bit.
  for (const double l : {0.0, 0.3, 0.5, 0.95}) {
    const Eigen::MatrixXd z = detail::trace_matrix(histories, l, 2);
    for (std::size_t i = 0; i < histories.size(); ++i)
      CHECK(Eigen::VectorXd(z.col(static_cast<Eigen::Index>(i))) == trace_of(histories[i].history, l, 2));
  }
  // Scaling the values scales the constant; shifting them does not change it.
  std::vector<LabelledHistory> scaled = histories;
  for (auto& h : scaled) h.value = -2.5 * h.value + 7.0;
  CHECK(minimal_lipschitz_constant(scaled, 0.5, 2) == Approx(2.5 * 8.0).epsilon(1e-12));
}

TEST_CASE("Coinciding traces with different values need an infinite constant, equal values none", "[lipschitz]") {
  // λ = 0: the trace is the newest observation, so (0, 1) and (1, 1) coincide.
  std::vector<LabelledHistory> histories{{{0, 1}, 0.0, 0.5}, {{1, 1}, 1.0, 0.5}, {{1, 0}, 5.0, 0.0}};
  const LipschitzPair pair = minimal_lipschitz_pair(histories, 0.0, 2);
  CHECK(std::isinf(pair.constant));
  CHECK(pair.first == 0);
  CHECK(pair.second == 1);
  // Equal values (up to rounding) are no constraint: any constant function fits them.
  for (auto& h : histories) h.value = 0.1 + 0.2;
  histories[1].value = 0.3;  // 0.1 + 0.2 != 0.3 in binary, by one ulp
  CHECK(minimal_lipschitz_constant(histories, 0.0, 2) == 0.0);
  CHECK(minimal_lipschitz_constant(histories, 0.7, 2) == 0.0);
  // Fewer than two histories.
  CHECK(minimal_lipschitz_constant(std::span(histories).first(1), 0.5, 2) == 0.0);
  CHECK(minimal_lipschitz_constant(std::span<const LabelledHistory>{}, 0.5, 2) == 0.0);
  // A history and its own copy with another value.
  const std::vector<LabelledHistory> twins{{{1, 0, 1}, 0.0, 0.5}, {{1, 0, 1}, 1e-3, 0.5}};
  CHECK(std::isinf(minimal_lipschitz_constant(twins, 0.9, 2)));
}

TEST_CASE("Enumerated histories carry the belief value and probability of a brute-force path sum", "[lipschitz]") {
  const TwoStateHmm two(0.2, 0.3, {-1.0, 2.0});
  const FiniteHmm three = three_state();
  const FiniteHmm episodic = test::episodic_hmm();
  const auto check = [](const auto& env, double discount) {
    const StationaryProcess process(env, discount);
    const Eigen::MatrixXd p = process.transition();  // the restart chain of an episodic model
    const Eigen::MatrixXd& o = process.emission();
    const Eigen::VectorXd v = state_values(env, discount);
    for (const HistoryStart start : {HistoryStart::stationary, HistoryStart::initial}) {
      const Eigen::VectorXd prior = start == HistoryStart::stationary ? process.stationary() : env.model().initial();
      for (std::size_t m = 1; m <= 4; ++m) {
        INFO("|X| = " << env.num_states() << ", m = " << m << ", start " << static_cast<int>(start));
        const auto histories = labelled_histories(env, m, discount, start);
        std::size_t next = 0;
        double total = 0.0, expected_total = 0.0;
        for (const auto& h : all_histories(env.num_observations(), m)) {
          const auto [probability, value_sum] = test::path_sum(p, o, prior, v, h, process.terminal());
          if (probability <= 0.0) continue;  // omitted
          REQUIRE(next < histories.size());
          const LabelledHistory& got = histories[next++];
          CHECK(got.history == h);
          CHECK(got.probability == Approx(probability).epsilon(1e-13));
          CHECK(got.value == Approx(value_sum / probability).epsilon(1e-12));
          total += got.probability;
          expected_total += probability;
        }
        CHECK(next == histories.size());
        CHECK(total == Approx(expected_total).epsilon(1e-13));  // p(x_t non-terminal): 1 without terminal states
      }
    }
  };
  check(two, 0.8);
  check(three, 0.9);
  check(episodic, 0.9);
  // The terminal state emits only 1 or 2: a window ending in 0 is never terminal, one ending in 1 or
  // 2 sometimes, and none ends in it surely, so all 3^m windows are listed with weights below p(h).
  CHECK(labelled_histories(episodic, 3, 0.9).size() == 27);
  // From the initial distribution (1, 0, 0) the first observation is 0: half the histories are gone.
  CHECK(labelled_histories(three, 3, 0.9, HistoryStart::initial).size() < 8);
  CHECK(labelled_histories(three, 3, 0.9).size() == 8);
  // The conveniences agree with the generic core.
  const StationaryProcess process(two, 0.8);
  const auto histories = labelled_histories(process, 4);
  CHECK(minimal_lipschitz_constant(two, 0.6, 4, 0.8) == minimal_lipschitz_constant(histories, 0.6, 2));
  CHECK(minimal_lipschitz_constant(process, 0.6, 4) == minimal_lipschitz_constant(histories, 0.6, 2));
}

TEST_CASE(
    "Windows of the stationary history of an episodic model: labelled_histories equals the simulator's "
    "frequencies and conditional means",
    "[lipschitz][terminal][monte_carlo]") {
  // Independent runs of the simulator, each RUN chain steps long (a terminal state is one step, the
  // reset the next, as in the restart chain; the observations run on across episodes), and at
  // the end the last m observations and v(x_t) if x_t is not terminal: the frequency of a window is
  // p(h, x_t non-terminal), its mean value E[v(x_t) | h, x_t non-terminal].
  FiniteHmm env = test::episodic_hmm();
  const double discount = 0.9;
  const std::size_t m = 2, runs = 40'000, run_length = 60;  // the chain mixes to ~1e-20 in 60 steps
  const auto histories = labelled_histories(env, m, discount);
  REQUIRE(histories.size() == 9);
  const Eigen::VectorXd v = state_values(env, discount);
  const double lo = v.head(3).minCoeff(), hi = v.head(3).maxCoeff();
  std::vector<double> count(9, 0.0), value_sum(9, 0.0);
  Xoshiro256StarStar gen(20261126);
  for (std::size_t run = 0; run < runs; ++run) {
    std::vector<Observation> ys{env.reset(gen)};
    for (std::size_t t = 1; t < run_length; ++t)
      ys.push_back(env.is_terminal(env.state()) ? env.reset(gen) : env.step(gen).observation);
    if (env.is_terminal(env.state())) continue;
    const std::size_t w = ys[run_length - 2] * 3 + ys[run_length - 1];  // Window<>(2, 3) index order
    count[w] += 1.0;
    value_sum[w] += v[static_cast<Eigen::Index>(env.state())];
  }
  const test::Agreement agreement =
      test::history_agreement(histories, count, value_sum, static_cast<double>(runs), hi - lo);
  INFO("worst: the " << agreement.worst_cell << " at " << agreement.worst << " of its bound; " << agreement.impossible
                     << " histories never drawn");
  CHECK(agreement.ok());
}

TEST_CASE("labelled_histories leaves out the windows that end in a terminal state for sure", "[lipschitz][terminal]") {
  // The T-maze with k = 2 under "always up": cue (a or b), junction (x or y), terminal (o), restart.
  // Of the 8 windows of length 2, x o and y o end in the terminal state, a step the value error
  // does not weigh; they used to be listed with value 0 and weight 1/6.
  using tmaze::a, tmaze::b, tmaze::o, tmaze::x, tmaze::y;
  const auto histories = labelled_histories(TMazeAlwaysUp(2), 2, 0.9);
  const std::vector<std::vector<Observation>> expected{{a, x}, {a, y}, {b, x}, {b, y}, {o, a}, {o, b}};
  REQUIRE(histories.size() == expected.size());
  // μ = 1/3 on each of the three steps, split in two by the cue or the sign: a x has 1/3 · 1/2 · 1/2,
  // o a has 1/3 · 1/2; the six sum to P(x_t non-terminal) = 2/3.
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(histories[i].history == expected[i]);
    CHECK(histories[i].probability == Approx(i < 4 ? 1.0 / 12.0 : 1.0 / 6.0));
  }
  CHECK(histories[0].value == 1.0);
  CHECK(histories[1].value == -1.0);
  CHECK(histories[4].value == 0.0);
}

TEST_CASE("a start state the chain never returns to keeps its value in histories from `initial`", "[lipschitz]") {
  // State 2 holds the start only (μ = 0 there); the value of y_0 = 2 is v(2), not 0.
  const Eigen::Matrix3d p{{0.3, 0.7, 0.0}, {0.6, 0.4, 0.0}, {0.5, 0.5, 0.0}};
  const Eigen::MatrixXd o{{0.8, 0.2, 0.0}, {0.3, 0.7, 0.0}, {0.0, 0.0, 1.0}};
  const Eigen::Matrix3d r{{1.0, 0.0, 0.0}, {0.0, -1.0, 0.0}, {4.0, 2.0, 0.0}};
  const FiniteHmm env(p, o, Eigen::Vector3d(0.0, 0.0, 1.0), r);
  const StationaryProcess process(env, 0.5);
  REQUIRE(process.stationary()[2] == 0.0);
  const auto first = labelled_histories(env, 1, 0.5, HistoryStart::initial);
  REQUIRE(first.size() == 1);
  CHECK(first[0].history == std::vector<Observation>{2});
  CHECK(first[0].value == Approx(process.values()[2]));
  CHECK(first[0].value != 0.0);
}

TEST_CASE("For λ < 1/2 Lemma 4.3 (separation) bounds the constant of length-m histories", "[lipschitz]") {
  // Distinct length-m histories differ in win_m, so their traces are at least √2 (1 - 2λ) λ^{m-1}
  // apart: L <= (v_max - v_min) / that.
  const TwoStateHmm env(0.1, 0.35);
  const StationaryProcess process(env, 0.9);
  for (std::size_t m = 1; m <= 5; ++m) {
    const auto histories = labelled_histories(process, m);
    double lo = histories.front().value, hi = lo;
    for (const auto& h : histories) {
      lo = std::min(lo, h.value);
      hi = std::max(hi, h.value);
    }
    for (const double lambda : {0.05, 0.2, 1.0 / 3.0, 0.45}) {
      INFO("m = " << m << ", lambda = " << lambda);
      CHECK(minimal_lipschitz_constant(histories, lambda, 2) <= (hi - lo) / separation_bound(lambda, m) * (1 + 1e-12));
    }
  }
}

TEST_CASE("λ* of the two-state HMM is at least 1/2 for small p and large q, below 1/2 for large p",
          "[lipschitz][figure3]") {
  // §5.2 and Figure 3 (right), length-4 histories from the stationary distribution. Observations that
  // are noisy (q large) but slowly outdated (p small) are worth averaging: λ* >= 1/2.
  const auto optimum = [](double p, double q) {
    const StationaryProcess process(TwoStateHmm(p, q), 0.9);
    return lipschitz_optimal_lambda(labelled_histories(process, 4), 2);
  };
  for (const auto& [p, q] : {std::pair{0.05, 0.4}, std::pair{0.02, 0.3}, std::pair{0.1, 0.45}}) {
    const LipschitzOptimum best = optimum(p, q);
    INFO("p = " << p << ", q = " << q << ": lambda* = " << best.lambda << ", L = " << best.constant);
    CHECK(best.lambda >= 0.5);
    CHECK(best.lambda < 1.0);
    CHECK(std::isfinite(best.constant));
  }
  for (const auto& [p, q] : {std::pair{0.4, 0.1}, std::pair{0.45, 0.4}, std::pair{0.3, 0.05}}) {
    const LipschitzOptimum best = optimum(p, q);
    INFO("p = " << p << ", q = " << q << ": lambda* = " << best.lambda << ", L = " << best.constant);
    CHECK(best.lambda < 0.5);
  }
  // The search's optimum is no worse than any grid point of a finer grid, up to the refinement.
  const StationaryProcess process(TwoStateHmm(0.05, 0.4), 0.9);
  const auto histories = labelled_histories(process, 4);
  const LipschitzOptimum best = lipschitz_optimal_lambda(histories, 2);
  CHECK(best.constant == Approx(minimal_lipschitz_constant(histories, best.lambda, 2)));
  for (int k = 0; k < 1000; ++k)
    CHECK(best.constant <= minimal_lipschitz_constant(histories, k / 1000.0, 2) * (1 + 1e-9));
}

TEST_CASE("Bad input to the Lipschitz tools is refused with a message naming it", "[lipschitz]") {
  const std::vector<LabelledHistory> good{{{0, 1}, 0.0, 0.5}, {{1, 1}, 1.0, 0.5}};
  CHECK_THROWS_WITH(minimal_lipschitz_constant(good, 1.0, 2), Contains("lambda must be in [0, 1), got 1"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(good, -0.5, 2), Contains("got -0.5"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(good, std::nan(""), 2), Contains("lambda must be in [0, 1)"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(good, 0.5, 0), Contains("num_observations must be at least 1"));
  const std::vector<LabelledHistory> bad_observation{{{0, 1}, 0.0, 0.5}, {{2, 1}, 1.0, 0.5}};
  CHECK_THROWS_WITH(minimal_lipschitz_constant(bad_observation, 0.5, 2),
                    Contains("histories[1].history[0] must be an observation in [0, 2), got 2"));
  const std::vector<LabelledHistory> nan_value{{{0, 1}, std::nan(""), 0.5}, {{1, 1}, 1.0, 0.5}};
  CHECK_THROWS_WITH(minimal_lipschitz_constant(nan_value, 0.5, 2),
                    Contains("histories[0].value must be finite, got nan"));
  // An infinite value must not pass as "all values equal" (an infinite tolerance would give L = 0).
  const std::vector<LabelledHistory> inf_value{{{0, 1}, 0.0, 0.5},
                                               {{1, 1}, -std::numeric_limits<double>::infinity(), 0.5}};
  CHECK_THROWS_WITH(minimal_lipschitz_constant(inf_value, 0.5, 2),
                    Contains("histories[1].value must be finite, got -inf"));
  CHECK_THROWS_WITH(minimal_lipschitz_pair(good, 0.5, 2, -1.0),
                    "minimal_lipschitz_pair: value_tolerance must be in [0, 1), got -1");
  CHECK_THROWS_WITH(minimal_lipschitz_pair(good, 1.0, 2), Contains("minimal_lipschitz_pair: lambda must be"));
  CHECK_THROWS_WITH(lipschitz_optimal_lambda(good, 2, 1), Contains("grid_points must be at least 2, got 1"));
  CHECK_THROWS_WITH(lipschitz_optimal_lambda(nan_value, 2), Contains("histories[0].value must be finite"));

  const TwoStateHmm env(0.2, 0.3);
  const StationaryProcess process(env, 0.9);
  CHECK_THROWS_WITH(labelled_histories(process, 0), Contains("m must be at least 1, got 0"));
  CHECK_THROWS_WITH(labelled_histories(process, 17),
                    Contains("|Y|^m = 131072 histories with |Y| = 2 and m = 17 exceed max_histories = 65536"));
  CHECK_THROWS_WITH(labelled_histories(env, 5, 0.9, HistoryStart::stationary, 16),
                    Contains("|Y|^m = 32 histories with |Y| = 2 and m = 5 exceed max_histories = 16"));
  CHECK_THROWS_WITH(labelled_histories(process, 200), Contains("m = 200 overflow"));
  CHECK_THROWS_WITH(labelled_histories(process, 3, Eigen::VectorXd::Ones(3) / 3.0),
                    Contains("start must have |X| = 2 entries, got 3"));
  CHECK_THROWS_WITH(labelled_histories(process, 3, Eigen::Vector2d(0.7, 0.7)), Contains("start sums to 1.4"));
  CHECK_THROWS_WITH(labelled_histories(env, 3, 1.0), Contains("discount must be in [0, 1), got 1"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(process, 1.5, 3), Contains("lambda must be in [0, 1), got 1.5"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(env, 0.5, 3, -0.1), Contains("discount must be in [0, 1), got -0.1"));
}

TEST_CASE("labelled_histories of a one-observation model: any length, no recursion, the depth bounded",
          "[lipschitz][errors]") {
  // |Y| = 1: one history for every m, so the count guard passed any m and the recursive enumeration
  // overflowed the stack.
  const Eigen::Matrix2d p{{0.5, 0.5}, {0.5, 0.5}};
  const FiniteHmm one(p, Eigen::MatrixXd::Ones(2, 1), Eigen::Vector2d(0.5, 0.5), Eigen::Matrix2d::Ones());
  const StationaryProcess process(one, 0.5);
  const std::size_t m = 300'000;
  const auto histories = labelled_histories(process, m, std::size_t{1} << 20);
  REQUIRE(histories.size() == 1);
  CHECK(histories[0].history.size() == m);
  CHECK(histories[0].probability == Approx(1.0));
  CHECK_THROWS_WITH(labelled_histories(process, m),
                    Contains("labelled_histories: m = 300000 exceeds max_histories = 65536"));
  CHECK_THROWS_WITH(minimal_lipschitz_constant(one, 0.5, m, 0.5), Contains("labelled_histories: m = 300000 exceeds"));
}

}  // namespace lipschitz_test
