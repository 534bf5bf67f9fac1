// Learning curves (loop/learning_curve.hpp): the points fall at the end of the first update that
// reaches p/points of the steps run, each holds exactly the episodes and the updates since the
// previous one, the recent window is the last episodes, and bad input changes nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memtrace/loop/learning_curve.hpp>
#include <stdexcept>
#include <vector>

namespace learning_curve_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// ceil(a / b), computed the obvious way (the sizes here cannot overflow).
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// An update's statistics with the given episodes' returns and diagnostics derived from its index.
PpoStats stats_of(std::size_t update, std::size_t update_steps, const std::vector<EpisodeEnd>& episodes) {
  PpoStats s;
  s.update = update;
  s.env_steps = update * update_steps;
  s.entropy = 1.0 + static_cast<double>(update);
  s.value_loss = 0.5 * static_cast<double>(update);
  s.advantage_std = 2.0;
  s.approx_kl = 0.01 * static_cast<double>(update);
  s.clip_fraction = 0.1;
  s.explained_variance = 1.0 - 0.1 * static_cast<double>(update);
  s.episodes = episodes;
  return s;
}

EpisodeEnd episode(double episode_return) {
  EpisodeEnd e;
  e.episode_return = episode_return;
  e.length = 10;
  e.terminated = true;
  return e;
}

}  // namespace

TEST_CASE("curve_steps puts point p at the end of the first update reaching p/points of the steps run") {
  for (const std::size_t update : {1u, 7u, 2048u})
    for (const std::size_t total : {update, 3 * update + update / 2, 100 * update + 1, 488 * update})
      for (const std::size_t points : {1u, 3u, 20u, 150u, 1000u}) {
        const std::vector<std::size_t> at = curve_steps(total, update, points);
        REQUIRE(at.size() == points);
        const std::size_t run = total / update * update;  // whole updates only
        for (std::size_t p = 1; p <= points; ++p) {
          INFO("update " << update << " total " << total << " points " << points << " p " << p);
          CHECK(at[p - 1] % update == 0);
          CHECK(at[p - 1] * points >= p * run);            // reaches p/points of the steps run
          CHECK((at[p - 1] - update) * points < p * run);  // the first update that does
          CHECK(at[p - 1] == ceil_div(ceil_div(p * run, points), update) * update);
        }
        CHECK(at.back() == run);
      }
}

TEST_CASE("curve_steps refuses sizes it cannot honour") {
  CHECK_THROWS_WITH(curve_steps(100, 0, 5), "curve_steps: update_env_steps must be positive, got 0");
  CHECK_THROWS_WITH(curve_steps(100, 10, 0), "curve_steps: points must be positive, got 0");
  CHECK_THROWS_WITH(curve_steps(9, 10, 5), "curve_steps: total_env_steps (9) is less than one update of 10 steps");
  CHECK_THROWS_WITH(curve_steps(100, 10, max_curve_points + 1),
                    "curve_steps: points must be at most 1000000, got 1000001");
  CHECK_NOTHROW(curve_steps(100, 10, max_curve_points));
  // Near the largest size the points stay within the steps run (no wrap-around).
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  for (const std::size_t update : {std::size_t{1}, std::size_t{3}, std::size_t{2048}}) {
    const std::vector<std::size_t> at = curve_steps(huge, update, 7);
    CHECK(std::is_sorted(at.begin(), at.end()));
    CHECK(at.front() > 0);
    CHECK(at.back() == huge / update * update);
  }
}

TEST_CASE("a learning curve's points hold the episodes and the updates since the previous point") {
  // 10 updates of 4 steps, 5 points: at updates 2, 4, 6, 8, 10.
  LearningCurve curve(40, 4, {.points = 5, .success_return = 0.5, .recent_episodes = 3});
  const std::vector<std::vector<double>> returns{{1.0}, {}, {0.0, 1.0}, {1.0, 1.0}, {}, {}, {0.0}, {}, {1.0}, {0.25}};
  for (std::size_t u = 1; u <= 10; ++u) {
    std::vector<EpisodeEnd> episodes;
    for (const double r : returns[u - 1]) episodes.push_back(episode(r));
    curve.record(stats_of(u, 4, episodes));
  }
  const std::vector<CurvePoint>& points = curve.points();
  REQUIRE(points.size() == 5);
  const std::vector<std::size_t> steps{8, 16, 24, 32, 40}, episodes{1, 4, 0, 1, 2}, successes{1, 3, 0, 0, 1};
  const std::vector<double> return_sums{1.0, 3.0, 0.0, 0.0, 1.25};
  for (std::size_t p = 0; p < 5; ++p) {
    INFO("point " << p);
    CHECK(points[p].env_steps == steps[p]);
    CHECK(points[p].updates == 2);
    CHECK(points[p].episodes_ended == episodes[p]);
    CHECK(points[p].successes == successes[p]);
    CHECK(points[p].return_sum == return_sums[p]);
    // Means over the bin's two updates, 2p + 1 and 2p + 2.
    const double u = 2.0 * static_cast<double>(p) + 1.5;
    CHECK(points[p].entropy == Approx(1.0 + u));
    CHECK(points[p].value_loss == Approx(0.5 * u));
    CHECK(points[p].advantage_std == 2.0);
    CHECK(points[p].approx_kl == Approx(0.01 * u));
    CHECK(points[p].clip_fraction == Approx(0.1));
    CHECK(points[p].explained_variance == Approx(1.0 - 0.1 * u));
  }
  CHECK(points[1].success_rate() == 0.75);
  CHECK(points[1].mean_return() == 0.75);
  CHECK(std::isnan(points[2].success_rate()));  // no episode ended in it
  CHECK(std::isnan(points[2].mean_return()));
  CHECK(curve.episodes_ended() == 8);
  CHECK(curve.successes() == 5);
  CHECK(curve.success_rate() == 5.0 / 8.0);
  CHECK(curve.recent_success_rate() == 1.0 / 3.0);  // the last three episodes: 0, 1, 0.25
  CHECK(curve.point_steps() == steps);
}

TEST_CASE("points that fall on one update share its step count, and only the first holds its updates") {
  // 2 updates of 10 steps, 5 points: p/5 of 20 steps is reached at update 1 (points 1, 2) and 2.
  LearningCurve curve(20, 10, {.points = 5, .success_return = 0.5});
  CHECK(curve.point_steps() == std::vector<std::size_t>{10, 10, 20, 20, 20});
  curve.record(stats_of(1, 10, {episode(1.0)}));
  REQUIRE(curve.points().size() == 2);
  CHECK(curve.points()[0].updates == 1);
  CHECK(curve.points()[0].episodes_ended == 1);
  CHECK(curve.points()[1].env_steps == 10);
  CHECK(curve.points()[1].updates == 0);
  CHECK(curve.points()[1].episodes_ended == 0);
  CHECK(std::isnan(curve.points()[1].entropy));  // no update: no means
  CHECK(std::isnan(curve.points()[1].clip_fraction));
  CHECK(std::isnan(curve.points()[1].explained_variance));
  CHECK(curve.points()[1] == curve.points()[1]);  // NaN means compare equal: a curve equals its copy
  CHECK(!(curve.points()[1] == curve.points()[0]));
  curve.record(stats_of(2, 10, {}));
  CHECK(curve.points().size() == 5);
  CHECK(curve.points()[2].updates == 1);
  CHECK(curve.points()[4].updates == 0);
  // What a curve's files hold: one row per distinct step count, the point that holds the update.
  CHECK(distinct_curve_steps(20, 10, 5) == std::vector<std::size_t>{10, 20});
  const std::vector<CurvePoint> rows = distinct_points(curve.points());
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == curve.points()[0]);
  CHECK(rows[1] == curve.points()[2]);
  CHECK(distinct_curve_steps(100, 10, 4) == curve_steps(100, 10, 4));  // no repeats: the same
}

TEST_CASE("a learning curve counts no success by default, and its recent window is the last episodes") {
  LearningCurve curve(100, 10, {.points = 2, .recent_episodes = 2});
  CHECK(std::isnan(curve.recent_success_rate()));
  CHECK(std::isnan(curve.success_rate()));
  curve.record(stats_of(1, 10, {episode(1e300), episode(5.0)}));
  CHECK(curve.successes() == 0);
  CHECK(curve.recent_success_rate() == 0.0);

  LearningCurve window(100, 10, {.points = 2, .success_return = 0.0, .recent_episodes = 2});
  window.record(stats_of(1, 10, {episode(1.0)}));
  CHECK(window.recent_success_rate() == 1.0);  // fewer episodes than the window
  window.record(stats_of(2, 10, {episode(-1.0), episode(-1.0), episode(1.0)}));
  CHECK(window.recent_success_rate() == 0.5);  // the last two: -1, 1
  CHECK(window.success_rate() == 0.5);
}

TEST_CASE("a learning curve refuses bad options and steps that go back, changing nothing") {
  CHECK_THROWS_WITH(LearningCurve(100, 10, {.recent_episodes = 0}),
                    "LearningCurve: options.recent_episodes must be positive, got 0");
  CHECK_THROWS_WITH(LearningCurve(100, 10, {.success_return = std::nan("")}),
                    "LearningCurve: options.success_return must not be NaN");
  CHECK_THROWS_WITH(LearningCurve(5, 10), "curve_steps: total_env_steps (5) is less than one update of 10 steps");

  LearningCurve curve(100, 10, {.points = 5, .success_return = 0.5});
  curve.record(stats_of(2, 10, {episode(1.0)}));  // one point (at 20 steps), of one update
  const LearningCurve before = curve;
  CHECK_THROWS_WITH(curve.record(stats_of(1, 10, {episode(1.0)})),
                    "LearningCurve::record: stats.env_steps (10) is less than the last update's (20)");
  CHECK(curve.points() == before.points());
  CHECK(curve.episodes_ended() == before.episodes_ended());
  CHECK(curve.recent_success_rate() == before.recent_success_rate());
}

}  // namespace learning_curve_test
