// Tests of env/minigrid_tmaze.hpp against the official Minigrid T-maze (traces/tmaze.py on
// xland-minigrid) as docs/minigrid-tmaze.md describes it: the grid, the goldens of the worked
// example for every layout, the view's closed form on the full grid, bumps, termination, rewards and
// truncation, scripted policies, the uniform-random baselines (exactly, and by simulation), the
// rendering, refusal of bad input and a pinned sequence of layouts.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memtrace/concepts.hpp>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/random.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "env_test_support.hpp"

namespace minigrid_tmaze_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

static_assert(MinigridTMaze::observation_dim == 45);

namespace {

using minigrid::forward;
using minigrid::turn_left;
using minigrid::turn_right;

/// The view as docs/minigrid-tmaze.md writes it: three rows from the farthest, separated by '/'.
std::string view_string(const MinigridTMaze& env) {
  std::string s = env.render_view();
  s.pop_back();
  std::replace(s.begin(), s.end(), '\n', '/');
  return s;
}

std::vector<std::size_t> indices(const MultiHot<9>& y) { return {y.begin(), y.end()}; }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

/// The view by the closed form of docs/minigrid-tmaze.md ("Observation"), evaluated on the full
/// grid (env.tile) with signed coordinates:
/// obs[r][c] = tile_at(pos + (2 - r) F[d] + (1 - c) F[(d + 3) % 4]), empty outside.
std::array<std::size_t, 9> reference_view(const MinigridTMaze& env) {
  constexpr std::ptrdiff_t dr[4] = {-1, 0, 1, 0}, dc[4] = {0, 1, 0, -1};
  const auto d = env.direction(), l = (d + 3) % 4;
  std::array<std::size_t, 9> view{};
  for (std::ptrdiff_t r = 0; r < 3; ++r) {
    for (std::ptrdiff_t c = 0; c < 3; ++c) {
      const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(env.row()) + (2 - r) * dr[d] + (1 - c) * dr[l];
      const std::ptrdiff_t col = static_cast<std::ptrdiff_t>(env.col()) + (2 - r) * dc[d] + (1 - c) * dc[l];
      view[static_cast<std::size_t>(r * 3 + c)] =
          row < 0 || col < 0 ? minigrid::empty : env.tile(static_cast<std::size_t>(row), static_cast<std::size_t>(col));
    }
  }
  return view;
}

/// The cue-aware scripted policy: it remembers the cue it stands on at t = 0, walks forward until
/// the view's middle row is all wall (the junction, facing right), turns towards the goal of the
/// cue's colour (the view's [2][0] is the upper goal, [2][2] the lower) and walks in.
struct CuePolicy {
  std::size_t cue = 0;
  bool turned = false;
  void start(const MinigridTMaze& env) {
    cue = env.view()[7];
    turned = false;
  }
  Action act(const MinigridTMaze& env) {
    const std::array<std::size_t, 9> v = env.view();
    if (turned) return forward;
    if (v[3] == minigrid::wall && v[4] == minigrid::wall && v[5] == minigrid::wall) {
      turned = true;
      return v[6] == cue ? turn_left : turn_right;
    }
    return forward;
  }
};

/// Empirical Bernstein (Maurer & Pontil 2009, Thm 4, both sides): the mean of n i.i.d. draws in an
/// interval of width `range` with unbiased sample variance v deviates from its expectation by more
/// than this with probability at most delta.
double empirical_bernstein_halfwidth(double v, double range, double n, double delta) {
  const double l = std::log(4.0 / delta);
  return std::sqrt(2.0 * v * l / n) + 7.0 * range * l / (3.0 * (n - 1.0));
}

/// The uniform-random policy's exact success rate and mean episode length, from the distribution
/// over (column, direction) on the corridor row propagated for 5(k + 2)^2 steps. Independent of
/// MinigridTMaze: only the rules of docs/minigrid-tmaze.md ("Actions and dynamics", "Rewards and
/// episode ends").
std::pair<double, double> random_policy_exact(std::size_t k) {
  const std::size_t limit = 5 * (k + 2) * (k + 2);
  std::vector<double> p((k + 1) * 4, 0.0), q;
  auto at = [](std::vector<double>& v, std::size_t col, std::size_t dir) -> double& { return v[col * 4 + dir]; };
  at(p, 1, minigrid::right) = 1.0;
  double upper = 0.0, length = 0.0;
  for (std::size_t t = 0; t < limit; ++t) {
    for (const double x : p) length += x;  // P(the episode lasts more than t steps)
    q.assign(p.size(), 0.0);
    for (std::size_t col = 1; col <= k; ++col) {
      for (std::size_t dir = 0; dir < 4; ++dir) {
        const double m = at(p, col, dir) / 3.0;
        at(q, col, (dir + 1) % 4) += m;
        at(q, col, (dir + 3) % 4) += m;
        if (dir == minigrid::right) {
          at(q, col < k ? col + 1 : col, dir) += m;
        } else if (dir == minigrid::left) {
          at(q, col > 1 ? col - 1 : col, dir) += m;
        } else if (col == k) {
          if (dir == minigrid::up) upper += m;  // into a goal: the episode ends
        } else {
          at(q, col, dir) += m;
        }
      }
    }
    p.swap(q);
  }
  return {upper, length};  // success is the upper goal in half of the layouts: by symmetry, P(upper)
}

}  // namespace

TEST_CASE("the grid is the documented one: walls, a corridor of k cells, the cue and the goals of each layout",
          "[env][minigrid]") {
  for (const std::size_t k : {2u, 3u, 8u, 9u, 13u, 64u}) {
    MinigridTMaze env(k);
    CHECK(env.height() == 5);
    CHECK(env.width() == k + 2);
    CHECK(env.max_steps() == 5 * (k + 2) * (k + 2));
    CHECK(env.num_actions() == 3);
    for (const std::size_t cue : {minigrid::green, minigrid::blue}) {
      for (const std::size_t sides : {0u, 1u}) {
        env.reset(cue, sides);
        INFO("k = " << k << ", cue " << cue << ", sides " << sides);
        const std::size_t upper = sides == 1 ? minigrid::green : minigrid::blue;
        const std::size_t lower = sides == 1 ? minigrid::blue : minigrid::green;
        for (std::size_t r = 0; r < 5; ++r) {
          for (std::size_t c = 0; c < k + 2; ++c) {
            std::size_t expected = minigrid::wall;
            if (r == 2 && c >= 1 && c <= k) expected = c == 1 ? cue : minigrid::floor;
            if (c == k && r == 1) expected = upper;
            if (c == k && r == 3) expected = lower;
            REQUIRE(env.tile(r, c) == expected);
          }
        }
        CHECK(env.tile(5, 0) == minigrid::empty);
        CHECK(env.tile(0, k + 2) == minigrid::empty);
        CHECK(env.success_cell() == minigrid::Cell{upper == cue ? 1u : 3u, k});
        CHECK(env.failure_cell() == minigrid::Cell{upper == cue ? 3u : 1u, k});
        CHECK(env.cue() == cue);
        CHECK(env.sides() == sides);
        CHECK((env.row() == 2 && env.col() == 1 && env.direction() == minigrid::right && env.steps() == 0));
      }
    }
  }
  CHECK(MinigridTMaze(8).max_steps() == 500);
  CHECK(MinigridTMaze(64).max_steps() == 21780);
  CHECK(MinigridTMaze(1024).max_steps() == 5263380);
}

TEST_CASE("the k = 8 start layout renders as documented, with the agent on the cue", "[env][minigrid]") {
  MinigridTMaze env(8);
  env.reset(minigrid::green, 1);
  CHECK(env.render() ==
        "##########\n"
        "########G#\n"
        "#>_______#\n"
        "########B#\n"
        "##########\n");
  CHECK(env.render_view() == "#_#\n#_#\n#G#\n");
  env.step(turn_left);
  env.step(turn_left);
  CHECK(env.render() ==
        "##########\n"
        "########G#\n"
        "#<_______#\n"
        "########B#\n"
        "##########\n");
  CHECK(env.render_view() == "...\n###\n#G#\n");
  env.reset(minigrid::blue, 0);
  for (int i = 0; i < 7; ++i) env.step(forward);
  env.step(turn_left);
  CHECK(env.render() ==
        "##########\n"
        "########B#\n"
        "#B______^#\n"
        "########G#\n"
        "##########\n");
  env.step(turn_right);
  env.step(turn_right);
  CHECK(env.render() ==
        "##########\n"
        "########B#\n"
        "#B______v#\n"
        "########G#\n"
        "##########\n");
}

TEST_CASE("the optimal path shows the worked example's views for both cues and both arrangements", "[env][minigrid]") {
  struct Golden {
    std::size_t cue, sides;
    Action turn;                        // the decisive action at the junction
    std::size_t success_row;            // the goal it walks into
    std::array<const char*, 10> views;  // t = 0 .. 9
  };
  const std::array<Golden, 4> goldens{{
      // The worked example of docs/minigrid-tmaze.md: cue green, green goal up.
      {minigrid::green,
       1,
       turn_left,
       1,
       {"#_#/#_#/#G#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "G_B/#_#/#_#", "###/G_B/#_#",
        ".../###/G_B", "###/#G#/__#", ".../###/#G#"}},
      // Its blue counterpart: the same until the junction, then right (down) into the blue goal.
      {minigrid::blue,
       1,
       turn_right,
       3,
       {"#_#/#_#/#B#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "G_B/#_#/#_#", "###/G_B/#_#",
        ".../###/G_B", "###/#B#/#__", ".../###/#B#"}},
      // Green goal down.
      {minigrid::green,
       0,
       turn_right,
       3,
       {"#_#/#_#/#G#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "B_G/#_#/#_#", "###/B_G/#_#",
        ".../###/B_G", "###/#G#/#__", ".../###/#G#"}},
      {minigrid::blue,
       0,
       turn_left,
       1,
       {"#_#/#_#/#B#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "#_#/#_#/#_#", "B_G/#_#/#_#", "###/B_G/#_#",
        ".../###/B_G", "###/#B#/__#", ".../###/#B#"}},
  }};
  for (const Golden& golden : goldens) {
    INFO("cue " << golden.cue << ", sides " << golden.sides);
    MinigridTMaze env(8);
    const MultiHot<9> y0 = env.reset(golden.cue, golden.sides);
    CHECK(view_string(env) == golden.views[0]);
    CHECK(indices(y0) == indices(env.observation()));
    for (std::size_t t = 1; t <= 9; ++t) {
      INFO("t = " << t);
      const Action u = t == 8 ? golden.turn : forward;
      const TimeStep<MultiHot<9>> step = env.step(u);
      CHECK(view_string(env) == golden.views[t]);
      CHECK(indices(step.observation) == indices(env.observation()));
      CHECK(env.steps() == t);
      if (t <= 7) CHECK((env.row() == 2 && env.col() == t + 1 && env.direction() == minigrid::right));
      if (t == 8)
        CHECK((env.row() == 2 && env.col() == 8 &&
               env.direction() == (golden.turn == turn_left ? minigrid::up : minigrid::down)));
      if (t == 9) CHECK((env.row() == golden.success_row && env.col() == 8));
      CHECK(step.terminated == (t == 9));
      CHECK(step.reward == (t == 9 ? 1.0 : 0.0));
      CHECK_FALSE(step.truncated);
    }
    CHECK(env.ended());
  }
}

TEST_CASE("the worked example's index grids and one-hot indices are the documented ones", "[env][minigrid]") {
  MinigridTMaze env(8);
  const MultiHot<9> y0 = env.reset(minigrid::green, 1);
  REQUIRE(y0.size() == 9);
  CHECK(env.view() == std::array<std::size_t, 9>{3, 4, 3, 3, 4, 3, 3, 1, 3});
  CHECK(indices(y0) == std::vector<std::size_t>{3, 9, 13, 18, 24, 28, 33, 36, 43});
  const Eigen::VectorXd dense = to_dense(y0, MinigridTMaze::observation_dim);
  CHECK(dense.sum() == 9.0);
  CHECK(dense[36] == 1.0);  // green under the agent
  for (int i = 0; i < 7; ++i) env.step(forward);
  CHECK(env.view() == std::array<std::size_t, 9>{0, 0, 0, 3, 3, 3, 1, 4, 2});  // the junction
  CHECK(indices(env.observation()) == std::vector<std::size_t>{0, 5, 10, 18, 23, 28, 31, 39, 42});
  env.reset(minigrid::blue, 1);
  CHECK(env.view() == std::array<std::size_t, 9>{3, 4, 3, 3, 4, 3, 3, 2, 3});
  CHECK(indices(env.observation()) == std::vector<std::size_t>{3, 9, 13, 18, 24, 28, 33, 37, 43});
}

TEST_CASE("turning around at the start shows the empty padding behind it, and the cue from further on",
          "[env][minigrid]") {
  MinigridTMaze env(8);
  env.reset(minigrid::green, 1);
  env.step(turn_left);  // facing up from the cue
  CHECK(env.direction() == minigrid::up);
  CHECK(view_string(env) == "###/###/#G_");
  env.step(turn_left);
  CHECK(env.direction() == minigrid::left);
  CHECK(view_string(env) == ".../###/#G#");
  CHECK(env.view() == std::array<std::size_t, 9>{0, 0, 0, 3, 3, 3, 3, 1, 3});
  env.step(turn_left);
  CHECK(env.direction() == minigrid::down);
  CHECK(view_string(env) == "###/###/_G#");
  env.step(turn_left);
  CHECK(env.direction() == minigrid::right);
  CHECK(view_string(env) == "#_#/#_#/#G#");
  // Facing left from (2, 2) the cue is one cell ahead, from (2, 3) two.
  env.step(forward);
  env.step(turn_right);
  CHECK(view_string(env) == "###/###/__G");  // facing down at (2, 2): the cue on its right
  env.step(turn_right);
  CHECK((env.col() == 2 && env.direction() == minigrid::left));
  CHECK(view_string(env) == "###/#G#/#_#");
  env.reset(minigrid::blue, 1);
  env.step(forward);
  env.step(forward);
  env.step(turn_left);
  CHECK(view_string(env) == "###/###/___");  // facing up in the corridor
  env.step(turn_left);
  CHECK((env.col() == 3 && env.direction() == minigrid::left));
  CHECK(view_string(env) == "#B#/#_#/#_#");
}

TEST_CASE("a bump leaves position and direction unchanged and still counts a step", "[env][minigrid]") {
  MinigridTMaze env(8);
  auto bump = [&env] {
    const std::size_t row = env.row(), col = env.col(), dir = env.direction(), steps = env.steps();
    const std::vector<std::size_t> before = indices(env.observation());
    const TimeStep<MultiHot<9>> step = env.step(forward);
    CHECK((env.row() == row && env.col() == col && env.direction() == dir));
    CHECK(env.steps() == steps + 1);
    CHECK(indices(step.observation) == before);
    CHECK((step.reward == 0.0 && !step.terminated && !step.truncated));
  };
  env.reset(minigrid::green, 0);
  env.step(turn_left);
  bump();  // facing up at the start
  env.step(turn_left);
  bump();  // facing left at the start: the border
  env.step(turn_left);
  bump();  // facing down at the start
  env.step(turn_left);
  for (int i = 0; i < 3; ++i) env.step(forward);
  env.step(turn_right);
  bump();  // facing down mid-corridor
  env.step(turn_left);
  for (int i = 0; i < 4; ++i) env.step(forward);
  REQUIRE((env.col() == 8 && env.direction() == minigrid::right));
  bump();  // forward at the junction facing right
  bump();
  CHECK(env.steps() == 19);
}

TEST_CASE("only the goal cells terminate, and only the success cell pays", "[env][minigrid]") {
  for (const std::size_t k : {2u, 5u, 8u, 20u}) {
    for (const std::size_t cue : {minigrid::green, minigrid::blue}) {
      for (const std::size_t sides : {0u, 1u}) {
        INFO("k = " << k << ", cue " << cue << ", sides " << sides);
        for (const bool into_success : {true, false}) {
          MinigridTMaze env(k);
          env.reset(cue, sides);
          // The whole corridor there and back, looking up and down at every cell: nothing ends.
          for (std::size_t pass = 0; pass < 2; ++pass) {
            for (std::size_t i = 0; i < k; ++i) {
              for (const Action u : {turn_left, turn_left, turn_left, turn_left, forward}) {
                const TimeStep<MultiHot<9>> step = env.step(u);
                REQUIRE_FALSE(step.terminated);
                REQUIRE(step.reward == 0.0);
              }
            }
            env.step(turn_left);
            env.step(turn_left);
          }
          // Back at the start facing right: walk to the junction and into a goal.
          REQUIRE((env.col() == 1 && env.direction() == minigrid::right));
          for (std::size_t i = 1; i < k; ++i) REQUIRE_FALSE(env.step(forward).terminated);
          const minigrid::Cell goal = into_success ? env.success_cell() : env.failure_cell();
          env.step(goal.row == 1 ? turn_left : turn_right);
          const TimeStep<MultiHot<9>> end = env.step(forward);
          CHECK((env.row() == goal.row && env.col() == goal.col));
          CHECK(end.terminated);
          CHECK_FALSE(end.truncated);
          CHECK(end.reward == (into_success ? 1.0 : 0.0));
          CHECK(env.ended());
          CHECK_THROWS_AS(env.step(forward), std::logic_error);
        }
      }
    }
  }
}

TEST_CASE("an episode is truncated exactly when the step count reaches 5(k + 2)^2", "[env][minigrid]") {
  for (const std::size_t k : {2u, 3u}) {
    INFO("k = " << k);
    MinigridTMaze env(k);
    const std::size_t limit = 5 * (k + 2) * (k + 2);
    REQUIRE(env.max_steps() == limit);
    env.reset(minigrid::blue, 1);
    env.step(turn_left);  // face the wall above the cue, then walk into it
    for (std::size_t t = 2; t < limit; ++t) {
      const TimeStep<MultiHot<9>> step = env.step(forward);
      REQUIRE_FALSE(step.truncated);
      REQUIRE_FALSE(step.terminated);
    }
    CHECK_FALSE(env.ended());
    const TimeStep<MultiHot<9>> last = env.step(forward);
    CHECK(env.steps() == limit);
    CHECK(last.truncated);
    CHECK_FALSE(last.terminated);  // a time limit: bootstrap (the official discount stays 1)
    CHECK(last.reward == 0.0);
    CHECK(env.ended());
    CHECK_THROWS_AS(env.step(turn_left), std::logic_error);
    CHECK(env.steps() == limit);

    // Reaching the success cell on the last step: terminated and truncated, reward 1.
    env.reset(minigrid::green, 1);
    env.step(turn_left);
    while (env.steps() < limit - (k + 2)) env.step(forward);  // bumps
    env.step(turn_right);
    for (std::size_t i = 1; i < k; ++i) env.step(forward);
    env.step(turn_left);
    REQUIRE(env.steps() == limit - 1);
    const TimeStep<MultiHot<9>> both = env.step(forward);
    CHECK((both.terminated && both.truncated && both.reward == 1.0));
  }
}

TEST_CASE("the view is the documented closed form on the full grid for every k, along random walks",
          "[env][minigrid]") {
  // The maze stores a compressed grid (k = 8's) for every k > 8; this checks it against the full one.
  for (const std::size_t k : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 20u, 64u, 1000u}) {
    MinigridTMaze env(k);
    Xoshiro256StarStar g(100 + k);
    std::size_t checked = 0, goals = 0;
    for (int episode = 0; episode < 40; ++episode) {
      env.reset(g);
      REQUIRE(env.view() == reference_view(env));
      // Half the steps head for the junction (face right, then forward), half are uniformly random,
      // so that every part of a long corridor is seen in every direction and the goals are reached.
      while (!env.ended()) {
        const std::size_t row = env.row(), col = env.col(), dir = env.direction();
        Action u = static_cast<Action>(uniform_index(g, 3));
        if (uniform_index(g, 2) == 0)
          u = dir == minigrid::right ? forward : dir == minigrid::up ? turn_right : turn_left;
        env.step(u, g);
        if (u == forward) {  // moved exactly when the cell ahead is not a wall
          const std::size_t r = dir == minigrid::up ? row - 1 : dir == minigrid::down ? row + 1 : row;
          const std::size_t c = dir == minigrid::left ? col - 1 : dir == minigrid::right ? col + 1 : col;
          const bool open = env.tile(r, c) != minigrid::wall;
          REQUIRE(((env.row() == r && env.col() == c) == open));
          REQUIRE((open || (env.row() == row && env.col() == col)));
        }
        REQUIRE(env.view() == reference_view(env));
        ++checked;
      }
      if (env.row() != 2) ++goals;
    }
    INFO("k = " << k << ": " << checked << " views, " << goals << " goals reached");
    CHECK(checked > 0);
    CHECK(goals > 0);
  }
}

TEST_CASE("reset draws the four layouts with equal probability", "[env][minigrid]") {
  MinigridTMaze env(8);
  Xoshiro256StarStar g(7);
  constexpr std::size_t n = 40'000;
  std::array<std::size_t, 4> counts{};
  for (std::size_t i = 0; i < n; ++i) {
    const MultiHot<9> y0 = env.reset(g);
    REQUIRE(env.view()[7] == env.cue());  // the agent stands on the cue
    REQUIRE(y0[7] == 35 + env.cue());
    ++counts[(env.cue() == minigrid::green ? 0 : 2) + env.sides()];
  }
  // Bernstein, union bound over the 4 counts: a correct reset fails with probability below 1e-6.
  const double bound = test::bernstein_halfwidth(0.25, n, 1e-6 / 4);
  for (std::size_t layout = 0; layout < 4; ++layout) {
    INFO("layout " << layout << ": " << counts[layout] << " of " << n << ", bound " << bound);
    CHECK(std::abs(static_cast<double>(counts[layout]) / n - 0.25) <= bound);
  }
}

TEST_CASE("reset gives a pinned sequence of layouts for a pinned seed", "[env][minigrid]") {
  MinigridTMaze env(4);
  Xoshiro256StarStar g(2024);
  std::vector<std::size_t> layouts;
  for (int i = 0; i < 12; ++i) {
    env.reset(g);
    layouts.push_back(env.cue() * 10 + env.sides());
  }
  const std::vector<std::size_t> pinned{11, 10, 20, 10, 20, 21, 20, 20, 11, 20, 20, 10};  // cue * 10 + sides
  CHECK(layouts == pinned);
}

TEST_CASE("a cue-aware scripted policy succeeds in exactly k + 1 steps every time", "[env][minigrid]") {
  for (const std::size_t k : {2u, 3u, 8u, 64u}) {
    MinigridTMaze env(k);
    Xoshiro256StarStar g(k);
    CuePolicy policy;
    for (int episode = 0; episode < 200; ++episode) {
      if (episode < 4)
        env.reset(episode < 2 ? minigrid::green : minigrid::blue, static_cast<std::size_t>(episode % 2));
      else
        env.reset(g);
      policy.start(env);
      TimeStep<MultiHot<9>> step;
      while (!env.ended()) step = env.step(policy.act(env), g);
      INFO("k = " << k << ", cue " << env.cue() << ", sides " << env.sides());
      REQUIRE(step.terminated);
      REQUIRE(step.reward == 1.0);
      REQUIRE(env.steps() == k + 1);
    }
  }
}

TEST_CASE("forward then always turn left succeeds exactly when the upper goal is right: half the time",
          "[env][minigrid]") {
  constexpr std::size_t k = 8, n = 10'000;
  MinigridTMaze env(k);
  Xoshiro256StarStar g(8);
  std::size_t successes = 0;
  for (std::size_t episode = 0; episode < n; ++episode) {
    env.reset(g);
    TimeStep<MultiHot<9>> step;
    for (std::size_t i = 1; i < k; ++i) step = env.step(forward, g);
    step = env.step(turn_left, g);
    while (!env.ended()) step = env.step(forward, g);
    REQUIRE(step.terminated);
    REQUIRE(env.steps() == k + 1);
    REQUIRE((step.reward == 1.0) == (env.success_cell().row == 1));
    successes += step.reward == 1.0 ? 1 : 0;
  }
  const double rate = static_cast<double>(successes) / n;
  CHECK(std::abs(rate - 0.5) <= test::bernstein_halfwidth(0.5, n, 1e-6));
}

TEST_CASE("the uniform-random policy's exact success rate and episode length match the recorded baselines",
          "[env][minigrid]") {
  // docs/minigrid-tmaze.md, "Uniform-random baseline": (k, success rate, mean episode length), Monte
  // Carlo estimates of unrecorded size. The exact values (from the rules alone) must lie within 0.01
  // of the success rates (the acceptance band that came with the estimates) and within 3% of the
  // lengths (their relative standard error at ~10^3 episodes of the longest corridors is ~2%).
  const std::array<std::array<double, 3>, 5> spec{
      {{8, 0.447, 225}, {16, 0.434, 784}, {32, 0.427, 2894}, {64, 0.416, 11093}, {128, 0.417, 44623}}};
  for (const auto& [k, success, length] : spec) {
    const auto [exact_success, exact_length] = random_policy_exact(static_cast<std::size_t>(k));
    INFO("k = " << k << ": exact " << exact_success << " / " << exact_length);
    CHECK(std::abs(exact_success - success) <= 0.01);
    CHECK(std::abs(exact_length - length) <= 0.03 * length);
  }
  const auto [s8, l8] = random_policy_exact(8);
  CHECK(s8 == Approx(0.4459).margin(5e-5));
  CHECK(l8 == Approx(225.22).margin(5e-3));
}

TEST_CASE("a uniform-random policy's success rate and episode length match the recorded baselines, by simulation",
          "[env][minigrid]") {
  // k = 8, 10^5 episodes (2.25e7 steps). The simulated means must lie within an empirical
  // Bernstein bound (sample variance, failure probability 1e-6 each) of the exact values, and within
  // that bound plus the error of the recorded baselines 0.447 / 225: we take 3 standard errors of a
  // 10^5-episode estimate (the sample size of the acceptance band that came with them) plus their
  // rounding (0.0005 / 0.5).
  constexpr std::size_t k = 8, n = 100'000;
  MinigridTMaze env(k);
  Xoshiro256StarStar g(42);
  double successes = 0, sum = 0, sum_sq = 0;
  for (std::size_t episode = 0; episode < n; ++episode) {
    env.reset(g);
    TimeStep<MultiHot<9>> step;
    do step = env.step(static_cast<Action>(uniform_index(g, 3)), g);
    while (!step.terminated && !step.truncated);
    successes += step.reward;
    const auto length = static_cast<double>(env.steps());
    sum += length;
    sum_sq += length * length;
  }
  const double nd = n, rate = successes / nd, mean = sum / nd;
  const double rate_var = rate * (1 - rate) * nd / (nd - 1), length_var = (sum_sq - sum * mean) / (nd - 1);
  const double rate_bound = empirical_bernstein_halfwidth(rate_var, 1.0, nd, 1e-6);
  const double length_bound = empirical_bernstein_halfwidth(length_var, static_cast<double>(env.max_steps()), nd, 1e-6);
  const auto [exact_rate, exact_length] = random_policy_exact(k);
  INFO("success " << rate << " (exact " << exact_rate << ", bound " << rate_bound << "), length " << mean << " (exact "
                  << exact_length << ", bound " << length_bound << ", sd " << std::sqrt(length_var) << ")");
  CHECK(std::abs(rate - exact_rate) <= rate_bound);
  CHECK(std::abs(mean - exact_length) <= length_bound);
  const double spec_rate_error = 3 * std::sqrt(rate_var / 1e5) + 0.0005;
  const double spec_length_error = 3 * std::sqrt(length_var / 1e5) + 0.5;
  CHECK(std::abs(rate - 0.447) <= rate_bound + spec_rate_error);
  CHECK(std::abs(mean - 225.0) <= length_bound + spec_length_error);
  CHECK(rate_bound < 0.01);  // the sample is large enough for the band of +-0.01
}

TEST_CASE("bad constructor arguments, actions and layouts are refused with messages that name them",
          "[env][minigrid]") {
  CHECK_THAT(error_of([] { MinigridTMaze env(1); }),
             Contains("MinigridTMaze: corridor_length must be at least 2, got 1"));
  CHECK_THAT(error_of([] { MinigridTMaze env(0); }), Contains("corridor_length must be at least 2, got 0"));
  // The largest k whose limit 5(k + 2)^2 fits a 64-bit size_t is accepted (the maze needs O(1)
  // memory whatever k); one more overflows.
  if constexpr (sizeof(std::size_t) == 8) {
    const std::size_t largest = 1'920'767'764;
    MinigridTMaze huge(largest);
    CHECK(huge.max_steps() == 5 * (largest + 2) * (largest + 2));
    CHECK_THAT(error_of([&] { MinigridTMaze env(largest + 1); }),
               Contains("MinigridTMaze: corridor_length k = 1920767765 is too large: the episode limit 5(k + 2)^2 "
                        "overflows std::size_t"));
    CHECK_THAT(error_of([] { MinigridTMaze env(std::size_t{1} << 32); }), Contains("k = 4294967296 is too large"));
  }
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  CHECK_THAT(error_of([&] { MinigridTMaze env(max); }), Contains("k = " + std::to_string(max) + " is too large"));
  CHECK_THAT(error_of([&] { MinigridTMaze env(max - 1); }), Contains("is too large"));

  MinigridTMaze env(8);
  CHECK_THAT(error_of([&] { env.step(forward); }), Contains("MinigridTMaze::step: no episode is running"));
  CHECK_THROWS_AS(env.step(forward), std::logic_error);
  Xoshiro256StarStar g(1);
  env.reset(g);
  env.step(forward);
  env.step(turn_left);
  const std::size_t row = env.row(), col = env.col(), dir = env.direction(), steps = env.steps();
  const std::vector<std::size_t> before = indices(env.observation());
  CHECK_THAT(error_of([&] { env.step(3, g); }),
             Contains("MinigridTMaze::step: action must be in [0, 3) (forward, turn right, turn left), got 3"));
  CHECK_THROWS_AS(env.step(7), std::invalid_argument);
  CHECK((env.row() == row && env.col() == col && env.direction() == dir && env.steps() == steps));
  CHECK(indices(env.observation()) == before);
  CHECK_FALSE(env.ended());
  CHECK_THAT(error_of([&] { env.reset(0, 1); }),
             Contains("MinigridTMaze::reset: cue must be green (1) or blue (2), got 0"));
  CHECK_THAT(error_of([&] { env.reset(minigrid::wall, 1); }), Contains("got 3"));
  CHECK_THAT(error_of([&] { env.reset(minigrid::green, 2); }),
             Contains("MinigridTMaze::reset: sides must be 0 or 1, got 2"));
  CHECK((env.row() == row && env.col() == col && env.steps() == steps));  // a refused reset changes nothing
}

}  // namespace minigrid_tmaze_test
