// Tests of analysis/tmaze_complexity.hpp, the T-maze of the paper's Theorem 5.8: the proof's
// constants and the growth of both entropies, the histories of Table 2, episode_histories
// against labelled_histories, a path sum and the simulator (with a terminal state), the minimal
// Lipschitz constant on the T-maze's histories against √2 e k, and bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/analysis/lipschitz.hpp>
#include <memtrace/analysis/metric_entropy.hpp>
#include <memtrace/analysis/tmaze_complexity.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/random.hpp>
#include <numbers>
#include <vector>

#include "env_test_support.hpp"

namespace tmaze_complexity_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {
const double sqrt2ek = std::numbers::sqrt2 * std::numbers::e;
}  // namespace

TEST_CASE(
    "Theorem 5.8: the proof's constants, and window entropy grows exponentially in k, the trace bound polynomially",
    "[entropy][tmaze]") {
  CHECK(tmaze_window_length(7) == 7);
  CHECK(tmaze_lambda(4) == 0.75);
  CHECK(tmaze_lipschitz(3) == Approx(3 * sqrt2ek));
  // The proof's second display: log⌈2/ε⌉ ⌈2√2 e k √(|Y| − 1) / ε⌉^{|Y|−1}; k = 10, ε = 0.1:
  // ⌈2 · 38.44 · 2 / 0.1⌉ = ⌈1537.7⌉ = 1538, so 1538^4 log 20.
  CHECK(trace_entropy_bound_subspace(tmaze_lipschitz(10), 5, 0.1, 2.0) ==
        Approx(std::pow(1538.0, 4.0) * std::log(20.0)).epsilon(1e-12));
  // Exponential against polynomial: one more corridor tile multiplies the window entropy by |Y| = 5;
  // doubling k multiplies the subspace bound by about 2^{|Y|−1} = 16.
  for (std::size_t k = 2; k <= 64; ++k) {
    CHECK(log_window_entropy(k + 1, 5, 0.1, 2.0) - log_window_entropy(k, 5, 0.1, 2.0) == Approx(std::log(5.0)));
    const double doubling = trace_entropy_bound_subspace(tmaze_lipschitz(2 * k), 5, 0.1, 2.0) /
                            trace_entropy_bound_subspace(tmaze_lipschitz(k), 5, 0.1, 2.0);
    CHECK(doubling == Approx(16.0).epsilon(0.01));
  }
}

TEST_CASE("tmaze_histories are the histories of Table 2", "[tmaze]") {
  using tmaze::a, tmaze::b, tmaze::o, tmaze::x, tmaze::y;
  for (std::size_t k = 2; k <= 16; ++k) {
    INFO("k = " << k);
    const auto histories = tmaze_histories(k);
    REQUIRE(histories.size() == 2 * k + 2);
    std::size_t corridor = 0, junction = 0;
    for (const auto& h : histories) {
      REQUIRE(!h.history.empty());
      REQUIRE(h.history.size() <= k);
      const Observation cue = h.history.front();
      REQUIRE((cue == a || cue == b));
      for (std::size_t t = 1; t + 1 < h.history.size(); ++t) CHECK(h.history[t] == o);
      if (h.history.size() < k) {  // ao^i, bo^i: value 0, probability 1/2
        if (h.history.size() > 1) CHECK(h.history.back() == o);
        CHECK(h.value == 0.0);
        CHECK(h.probability == Approx(0.5));
        ++corridor;
      } else {  // ao^{k−2}x, bo^{k−2}y: +1; bo^{k−2}x, ao^{k−2}y: −1; probability 1/4
        const Observation sign = h.history.back();
        REQUIRE((sign == x || sign == y));
        CHECK(h.value == ((cue == a) == (sign == x) ? 1.0 : -1.0));
        CHECK(h.probability == Approx(0.25));
        ++junction;
      }
    }
    CHECK(corridor == 2 * (k - 1));
    CHECK(junction == 4);
    // The values do not depend on γ (the only reward is the final one).
    const auto discounted = episode_histories(TMazeAlwaysUp(k), 0.9, k + 5);
    REQUIRE(discounted.size() == histories.size());
    for (std::size_t i = 0; i < histories.size(); ++i) {
      CHECK(discounted[i].history == histories[i].history);
      CHECK(discounted[i].value == Approx(histories[i].value).margin(1e-12));
    }
  }
}

TEST_CASE("episode_histories agrees with labelled_histories on a continuing model", "[tmaze]") {
  // No terminal state: the length-n histories from `initial` are labelled_histories(…, initial).
  const TwoStateHmm env(0.2, 0.1);
  const auto all = episode_histories(env, 0.9, 3);
  REQUIRE(all.size() == 2 + 4 + 8);
  const auto three = labelled_histories(env, 3, 0.9, HistoryStart::initial);
  REQUIRE(three.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    const LabelledHistory& mine = all[6 + i];
    CHECK(mine.history == three[i].history);
    CHECK(mine.value == Approx(three[i].value).epsilon(1e-12));
    CHECK(mine.probability == Approx(three[i].probability).epsilon(1e-12));
  }
  double total = 0.0;  // the probabilities of one length sum to 1
  for (std::size_t i = 0; i < 8; ++i) total += all[6 + i].probability;
  CHECK(total == Approx(1.0));
}

TEST_CASE(
    "episode_histories of a model with a terminal state: a path sum over the episode's states and the "
    "frequencies of independent episodes",
    "[tmaze][terminal][monte_carlo]") {
  // A history of an episode holds no terminal state, at its end either (the terminal step is not
  // weighed): p(h) sums the paths x_0..x_t through non-terminal states only, from `initial`.
  FiniteHmm env = test::episodic_hmm();
  const double discount = 0.9;
  const std::size_t max_length = 3;
  const auto histories = episode_histories(env, discount, max_length);
  REQUIRE(histories.size() == 3 + 9 + 27);  // state 0 emits every observation
  const Eigen::MatrixXd p = detail::to_dense(env.model().transition());
  const Eigen::MatrixXd& o = env.model().emission();
  const Eigen::VectorXd v = state_values(env, discount);
  for (const LabelledHistory& h : histories) {
    const auto [probability, value_sum] =
        test::path_sum(p, o, env.model().initial(), v, h.history, env.terminal(), /*episode=*/true);
    CHECK(h.probability == Approx(probability).epsilon(1e-13));
    CHECK(h.value == Approx(value_sum / probability).epsilon(1e-12));
  }
  // Independent episodes of the simulator: the frequency of each prefix that ends in a
  // non-terminal state, and the mean of v(x_t) there.
  const std::size_t episodes = 40'000;
  std::vector<double> count(histories.size(), 0.0), value_sum(histories.size(), 0.0);
  const auto index_of = [&](const std::vector<Observation>& h) {
    std::size_t i = 0;
    while (histories[i].history != h) ++i;  // every prefix of a sampled episode is listed
    return i;
  };
  Xoshiro256StarStar gen(14);
  for (std::size_t e = 0; e < episodes; ++e) {
    std::vector<Observation> h{env.reset(gen)};
    for (;;) {
      const std::size_t i = index_of(h);
      count[i] += 1.0;
      value_sum[i] += v[static_cast<Eigen::Index>(env.state())];
      if (h.size() == max_length) break;
      const TimeStep<> step = env.step(gen);
      if (step.terminated) break;
      h.push_back(step.observation);
    }
  }
  const double lo = v.head(3).minCoeff(), hi = v.head(3).maxCoeff();
  const test::Agreement agreement =
      test::history_agreement(histories, count, value_sum, static_cast<double>(episodes), hi - lo);
  INFO("worst: the " << agreement.worst_cell << " at " << agreement.worst << " of its bound; " << agreement.impossible
                     << " histories never drawn");
  CHECK(agreement.ok());
}

TEST_CASE("the T-maze: episode_histories and labelled_histories from `initial` agree until the episode ends",
          "[tmaze][terminal]") {
  // One filter, one convention: up to the junction (n <= k) no state is terminal and the two lists
  // are the same; at n = k + 1 every history ends in the terminal state, so neither lists any; at
  // n = k + 2 the stationary history has restarted (o, then a or b) while an episode has ended.
  const std::size_t k = 4;
  const TMazeAlwaysUp maze(k);
  const auto episodes = episode_histories(maze, 0.9, k + 2);
  REQUIRE(episodes.size() == 2 * k + 2);
  for (std::size_t n = 1; n <= k + 2; ++n) {
    INFO("n = " << n);
    std::vector<LabelledHistory> of_length;
    for (const auto& h : episodes)
      if (h.history.size() == n) of_length.push_back(h);
    const auto windows = labelled_histories(maze, n, 0.9, HistoryStart::initial);
    if (n <= k) {
      REQUIRE(windows.size() == of_length.size());
      for (std::size_t i = 0; i < windows.size(); ++i) {
        CHECK(windows[i].history == of_length[i].history);
        CHECK(windows[i].value == Approx(of_length[i].value).margin(1e-12));
        CHECK(windows[i].probability == Approx(of_length[i].probability).epsilon(1e-15));
      }
    } else {
      CHECK(of_length.empty());
      CHECK(windows.size() == (n == k + 1 ? 0 : 8));  // a o o x o a, …: the next episode's cue
    }
  }
}

TEST_CASE("Theorem 5.8: the minimal Lipschitz constant on the T-maze histories is below sqrt(2) e k",
          "[tmaze][theorem]") {
  std::vector<std::size_t> lengths;  // 2 … 32, then a few up to 64 (the pairs cost O(k²) each)
  for (std::size_t k = 2; k <= 32; ++k) lengths.push_back(k);
  lengths.insert(lengths.end(), {40, 48, 64});
  for (const std::size_t k : lengths) {
    INFO("k = " << k);
    const double lambda = tmaze_lambda(k);
    const auto histories = tmaze_histories(k);
    const double minimal = minimal_lipschitz_constant(histories, lambda, tmaze::num_observations);
    // The worst pair is ao^{k−2}x (+1) against bo^{k−2}x (−1), √2 (1 − λ) λ^{k−1} apart, so
    // L = 2 / (√2 (1 − λ) λ^{k−1}) = √2 k (k / (k − 1))^{k−1}; the proof bounds λ^{−(k−1)} by e.
    const auto kd = static_cast<double>(k);
    CHECK(minimal == Approx(std::numbers::sqrt2 * kd * std::pow(kd / (kd - 1), kd - 1)).epsilon(1e-9));
    CHECK(minimal <= tmaze_lipschitz(k));
    // Measured: the ratio L / (√2 e k) = (1 + 1/(k−1))^{k−1} / e rises from 2/e ≈ 0.736 (k = 2) to
    // 0.992 (k = 64). A set without the cue-b histories would give √2 k, a ratio of 1/e ≈ 0.37.
    CHECK(minimal >= 0.73 * tmaze_lipschitz(k));
    if (k == 2) CHECK(minimal / tmaze_lipschitz(k) == Approx(2 / std::numbers::e));
  }
  // A wrong history set fails the lower bound: without the cue-b histories only the sign (x against
  // y) has to be told apart, √2/k apart with values ±1, so L = √2 k.
  const std::size_t k = 16;
  std::vector<LabelledHistory> only_a;
  for (const auto& h : tmaze_histories(k))
    if (h.history.front() == tmaze::a) only_a.push_back(h);
  const double wrong = minimal_lipschitz_constant(only_a, tmaze_lambda(k), tmaze::num_observations);
  CHECK(wrong == Approx(std::numbers::sqrt2 * 16));
  CHECK(wrong < 0.73 * tmaze_lipschitz(k));
}

TEST_CASE("bad T-maze arguments throw with the argument and the value named", "[tmaze][errors]") {
  using Catch::Contains;
  REQUIRE_THROWS_WITH(tmaze_window_length(1),
                      Contains("tmaze_window_length: corridor_length must be at least 2, got 1"));
  REQUIRE_THROWS_WITH(tmaze_lambda(0), Contains("tmaze_lambda: corridor_length must be at least 2, got 0"));
  REQUIRE_THROWS_WITH(tmaze_lipschitz(1), Contains("tmaze_lipschitz: corridor_length must be at least 2, got 1"));
  REQUIRE_THROWS_WITH(tmaze_histories(1), Contains("corridor_length must be at least 2, got 1"));
  // Refused before the ~k² observations of its histories are allocated.
  REQUIRE_THROWS_WITH(tmaze_histories(tmaze_max_corridor_length + 1),
                      Contains("tmaze_histories: corridor_length must be at most 8192 (its 2k + 2 histories hold "
                               "about k^2 observations), got 8193"));
  REQUIRE_THROWS_WITH(tmaze_histories(std::size_t{1} << 40), Contains("got 1099511627776"));
  REQUIRE_THROWS_WITH(episode_histories(TMazeAlwaysUp(4), 1.0, 4), Contains("discount"));
  REQUIRE_THROWS_WITH(episode_histories(TMazeAlwaysUp(40), 0.5, 40, 10),
                      Contains("episode_histories: more than max_histories = 10 histories of length <= 40"));
}

TEST_CASE("episode_histories keeps to a budget of stored observations", "[tmaze][errors]") {
  // One observation and no terminal state: the histories of length <= L hold L(L + 1)/2
  // observations, which grew until the allocator failed for a large max_length.
  const Eigen::Matrix2d p{{0.5, 0.5}, {0.5, 0.5}};
  const FiniteHmm one(p, Eigen::MatrixXd::Ones(2, 1), Eigen::Vector2d(0.5, 0.5), Eigen::Matrix2d::Ones());
  CHECK(episode_histories(one, 0.5, 100).size() == 100);
  CHECK_THROWS_WITH(episode_histories(one, 0.5, std::size_t{1} << 40, std::size_t{1} << 20, 5000),
                    Catch::Contains("episode_histories: the histories of length <= max_length = 1099511627776 hold "
                                    "more than max_observations = 5000 observations (reached at length 100)"));
}

}  // namespace tmaze_complexity_test
