// Tests of env/tmaze.hpp: the episode of the proof of Theorem 5.8 step by step, the reward table,
// the values of the "always up" policy (Table 2), agreement of the simulator with the model,
// refusal of bad input and a pinned trajectory.
#include <Eigen/LU>
#include <catch2/catch.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/random.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_support.hpp"

namespace tmaze_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

/// v = r̄ + P v on the non-terminal states, v = 0 at the terminal one (undiscounted episodes).
Eigen::VectorXd episodic_values(const FiniteHmm& hmm) {
  const auto n = static_cast<Eigen::Index>(hmm.num_states());
  Eigen::MatrixXd p = hmm.transition();
  for (Eigen::Index x = 0; x < n; ++x)
    if (hmm.is_terminal(static_cast<State>(x))) p.col(x).setZero();
  return (Eigen::MatrixXd::Identity(n, n) - p).partialPivLu().solve(hmm.expected_rewards());
}

}  // namespace

TEST_CASE("a T-maze episode follows the proof of Theorem 5.8", "[env][tmaze]") {
  for (const std::size_t k : {2u, 3u, 8u}) {
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      TMaze maze(k);
      Xoshiro256StarStar g(seed);
      const Observation y0 = maze.reset(g);
      REQUIRE((y0 == tmaze::a || y0 == tmaze::b));
      const std::size_t cue = y0 == tmaze::a ? 0 : 1;
      CHECK(maze.state() == maze.corridor_state(0, cue));
      for (std::size_t t = 1; t + 1 < k; ++t) {
        CHECK(maze.step(tmaze::down, g) == TimeStep<>{tmaze::o, 0.0, false, false});  // actions are ignored here
        CHECK(maze.state() == maze.corridor_state(t, cue));
      }
      const TimeStep<> junction = maze.step(tmaze::up, g);  // y_{k-1}
      REQUIRE((junction.observation == tmaze::x || junction.observation == tmaze::y));
      CHECK(junction.reward == 0.0);
      CHECK_FALSE(junction.terminated);
      const std::size_t sign = junction.observation == tmaze::x ? 0 : 1;
      CHECK(maze.state() == maze.junction_state(cue, sign));
      const Action u = seed % 2 == 0 ? tmaze::up : tmaze::down;
      const TimeStep<> end = maze.step(u, g);
      CHECK(end.terminated);
      CHECK_FALSE(end.truncated);
      CHECK(end.reward == TMaze::reward(cue, sign, u));
      CHECK(maze.state() == maze.terminal_state());
      CHECK_THROWS_AS(maze.step(tmaze::up, g), std::logic_error);
    }
  }
}

TEST_CASE("the T-maze's reward table is the paper's", "[env][tmaze]") {
  // Rows (y_{k-1}, u), columns y_0 = a, b.
  CHECK(TMaze::reward(0, 0, tmaze::up) == +1);  // x, up
  CHECK(TMaze::reward(1, 0, tmaze::up) == -1);
  CHECK(TMaze::reward(0, 0, tmaze::down) == -1);  // x, down
  CHECK(TMaze::reward(1, 0, tmaze::down) == +1);
  CHECK(TMaze::reward(0, 1, tmaze::up) == -1);  // y, up
  CHECK(TMaze::reward(1, 1, tmaze::up) == +1);
  CHECK(TMaze::reward(0, 1, tmaze::down) == +1);  // y, down
  CHECK(TMaze::reward(1, 1, tmaze::down) == -1);
}

TEST_CASE("under 'always up' the T-maze's values are those of Table 2", "[env][tmaze]") {
  for (const std::size_t k : {2u, 3u, 5u, 10u}) {
    const TMazeAlwaysUp env(k);
    const TMaze& maze = env.maze();
    const FiniteHmm hmm = env.model();
    REQUIRE(hmm.num_states() == 2 * k + 3);
    const Eigen::VectorXd v = episodic_values(hmm);
    INFO("k = " << k);
    for (std::size_t i = 0; i + 1 < k; ++i) {  // a o^i and b o^i
      CHECK(v[static_cast<Eigen::Index>(maze.corridor_state(i, 0))] == Approx(0.0).margin(1e-12));
      CHECK(v[static_cast<Eigen::Index>(maze.corridor_state(i, 1))] == Approx(0.0).margin(1e-12));
    }
    CHECK(v[static_cast<Eigen::Index>(maze.junction_state(0, 0))] == Approx(+1.0));  // a o^{k-2} x
    CHECK(v[static_cast<Eigen::Index>(maze.junction_state(1, 0))] == Approx(-1.0));  // b o^{k-2} x
    CHECK(v[static_cast<Eigen::Index>(maze.junction_state(0, 1))] == Approx(-1.0));  // a o^{k-2} y
    CHECK(v[static_cast<Eigen::Index>(maze.junction_state(1, 1))] == Approx(+1.0));  // b o^{k-2} y
    CHECK(v[static_cast<Eigen::Index>(maze.terminal_state())] == 0.0);
    // Each history of the table is one state: the emissions are deterministic.
    for (Eigen::Index x = 0; x < hmm.emission().rows(); ++x) CHECK(hmm.emission().row(x).maxCoeff() == 1.0);
  }
}

TEST_CASE("the T-maze simulator agrees with its model over 10^6 steps", "[env][tmaze]") {
  for (const std::size_t k : {2u, 6u}) {
    const TMazeAlwaysUp env(k);
    const auto result = test::agreement(env, env.model(), 100 + k, 1'000'000, 0.0);
    INFO("k = " << k << ": worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
    CHECK(result.episodes >= 1'000'000 / k);
  }
  // The POMDP's model under 'always down' has the opposite rewards at the junction.
  const TMaze maze(4);
  const FiniteHmm down = maze.model().with_action_probabilities(Eigen::Vector2d(0.0, 1.0));
  const auto t = static_cast<Eigen::Index>(maze.terminal_state());
  CHECK(down.rewards().coeff(static_cast<Eigen::Index>(maze.junction_state(0, 0)), t) == -1.0);
  CHECK(down.rewards().coeff(static_cast<Eigen::Index>(maze.junction_state(1, 0)), t) == +1.0);
}

TEST_CASE("the T-maze refuses a short corridor and bad actions", "[env][tmaze]") {
  auto error_of = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  CHECK_THAT(error_of([] { TMaze maze(1); }), Contains("TMaze: corridor_length must be at least 2, got 1"));
  CHECK_THAT(error_of([] { TMaze maze(0); }), Contains("corridor_length must be at least 2, got 0"));
  CHECK_THAT(error_of([] { TMazeAlwaysUp env(1); }), Contains("corridor_length must be at least 2, got 1"));
  TMaze maze(3);
  Xoshiro256StarStar g(1);
  maze.reset(g);
  CHECK_THAT(error_of([&] { maze.step(2, g); }), Contains("TMaze::step: action must be up (0) or down (1), got 2"));
  // A refused step changes nothing: same state, same generator, and the episode goes on.
  const State state = maze.state();
  const Xoshiro256StarStar g_before = g;
  CHECK_THROWS(maze.step(7, g));
  CHECK(maze.state() == state);
  CHECK(g == g_before);
  CHECK(maze.step(tmaze::up, g).observation == tmaze::o);

  // Sizes from corridor_length are computed with overflow checks: 2k + 3 used to wrap (a T-maze of
  // 1 state), and a model that cannot fit is refused before allocating.
  const std::size_t huge = std::size_t{1} << 63;
  CHECK_THAT(error_of([&] { TMaze m(huge - 1); }),
             Contains("TMaze: corridor_length k = 9223372036854775807 is too large: the 2k + 3 states overflow"));
  CHECK_THAT(error_of([&] { TMaze m(std::size_t{1} << 62); }), Contains("2k + 3 states overflow the index type"));
  const TMaze big(std::size_t{1} << 40);
  CHECK(big.num_states() == (std::size_t{1} << 41) + 3);
  CHECK_THAT(error_of([&] { (void)big.model(); }),
             Contains("TMaze::model: the emission matrix |X| x |Y| = (2k + 3) x 5 for corridor_length = "
                      "1099511627776 needs 10995116277775 entries (81920") &&
                 Contains("refused before allocating"));
}

TEST_CASE("the T-maze gives a pinned trajectory for a pinned seed", "[env][tmaze]") {
  TMazeAlwaysUp env(3);
  Xoshiro256StarStar g(2024);
  std::vector<double> trajectory;
  for (int episode = 0; episode < 6; ++episode) {
    trajectory.push_back(static_cast<double>(env.reset(g)));
    for (TimeStep<> tr{}; !tr.terminated;) {
      tr = env.step(g);
      trajectory.push_back(static_cast<double>(tr.observation));
      if (tr.terminated) trajectory.push_back(tr.reward);
    }
  }
  const std::vector<double> pinned{0, 2, 4, 2, -1, 0, 2, 3, 2, 1,  1, 2, 3, 2, -1,
                                   0, 2, 3, 2, 1,  1, 2, 3, 2, -1, 1, 2, 4, 2, 1};
  CHECK(trajectory == pinned);
}

namespace {

/// The navigation maze under the uniformly random policy (actions drawn from the same generator).
struct RandomWalker {
  TMazeNavigation nav;
  template <class G>
  Observation reset(G& g) {
    return nav.reset(g);
  }
  template <class G>
  TimeStep<> step(G& g) {
    return nav.step(static_cast<Action>(uniform_index(g, 4)), g);
  }
  [[nodiscard]] State state() const { return nav.state(); }
  [[nodiscard]] std::size_t num_states() const { return nav.num_states(); }
  [[nodiscard]] std::size_t num_observations() const { return nav.num_observations(); }
};

}  // namespace

TEST_CASE("the navigation T-maze walks the corridor and ends at the junction", "[env][tmaze]") {
  TMazeNavigation nav(4);
  CHECK(nav.max_episode_steps() == 5 * 6 * 6);
  CHECK(nav.num_states() == 17);
  Xoshiro256StarStar g(5);
  const Observation cue = nav.reset(g);
  REQUIRE((cue == tmaze::a || cue == tmaze::b));
  CHECK(nav.step(tmaze::left, g) == TimeStep<>{cue, 0.0, false, false});  // the wall: stays, sees the cue again
  CHECK(nav.step(tmaze::up, g) == TimeStep<>{cue, 0.0, false, false});    // up in the corridor: nothing
  CHECK(nav.step(tmaze::right, g).observation == tmaze::o);
  CHECK(nav.step(tmaze::right, g).observation == tmaze::o);
  const Observation sign = nav.step(tmaze::right, g).observation;
  REQUIRE((sign == tmaze::x || sign == tmaze::y));
  CHECK(nav.step(tmaze::right, g).observation == sign);  // the end of the corridor: stays
  CHECK(nav.step(tmaze::left, g).observation == tmaze::o);
  CHECK(nav.step(tmaze::right, g).observation == sign);  // the sign is the same every time
  const TimeStep<> end = nav.step(tmaze::down, g);
  CHECK(end.terminated);
  CHECK(end.reward == TMaze::reward(cue == tmaze::a ? 0 : 1, sign == tmaze::x ? 0 : 1, tmaze::down));
  CHECK(nav.state() == nav.terminal_state());
  CHECK_THROWS_AS(nav.step(tmaze::up, g), std::logic_error);
}

TEST_CASE("the navigation T-maze cuts episodes after 5(k + 2)^2 steps", "[env][tmaze]") {
  TMazeNavigation nav(2);
  Xoshiro256StarStar g(1);
  nav.reset(g);
  for (std::size_t t = 1; t < 80; ++t) REQUIRE_FALSE(nav.step(tmaze::left, g).truncated);
  const TimeStep<> last = nav.step(tmaze::left, g);
  CHECK(last.truncated);
  CHECK_FALSE(last.terminated);
  CHECK(last.reward == 0.0);
  CHECK_THROWS_AS(nav.step(tmaze::left, g), std::logic_error);
  TMazeNavigation unlimited(2, 0);
  unlimited.reset(g);
  for (std::size_t t = 0; t < 1000; ++t) REQUIRE_FALSE(unlimited.step(tmaze::left, g).truncated);
  // The paper's Minigrid version: the wrong tile pays 0.
  TMazeNavigation minigrid(2, TMazeNavigation::limit_of_paper, 0.0);
  CHECK(minigrid.model().rewards(tmaze::up).coeff(static_cast<Eigen::Index>(TMazeNavigation::position(1, 1, 0)),
                                                  static_cast<Eigen::Index>(minigrid.terminal_state())) == 0.0);
}

TEST_CASE("the navigation T-maze agrees with its model under a random policy", "[env][tmaze]") {
  const TMazeNavigation nav(3, 30);
  const FiniteHmm hmm = nav.model().with_action_probabilities(Eigen::Vector4d::Constant(0.25));
  // At the junction up and down both reach the terminal state: r(x, x') is their mean, the sample ±1.
  const auto result = test::agreement(RandomWalker{nav}, hmm, 77, 1'000'000, 2.0);
  INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
  CHECK(result.ok());
}

TEST_CASE("the navigation T-maze refuses bad input", "[env][tmaze]") {
  auto error_of = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  CHECK_THAT(error_of([] { TMazeNavigation nav(1); }),
             Contains("TMazeNavigation: corridor_length must be at least 2, got 1"));
  CHECK_THAT(error_of([] { TMazeNavigation nav(3, 10, std::nan("")); }),
             Contains("wrong_reward must be finite, got nan"));
  TMazeNavigation nav(3);
  Xoshiro256StarStar g(1);
  nav.reset(g);
  CHECK_THAT(error_of([&] { nav.step(4, g); }), Contains("action must be in [0, 4) (up, down, left, right), got 4"));
  const State state = nav.state();
  const Xoshiro256StarStar g_before = g;
  CHECK_THROWS(nav.step(9, g));
  CHECK(nav.state() == state);
  CHECK(g == g_before);
  nav.step(tmaze::right, g);
  CHECK(nav.state() == TMazeNavigation::position(1, state % 2, (state / 2) % 2));

  // 5(k + 2)^2 used to wrap to a small limit or to 0 (no limit at all); 4k + 1 states likewise.
  CHECK_THAT(error_of([] { TMazeNavigation n(std::size_t{1} << 31); }),
             Contains("TMazeNavigation: corridor_length k = 2147483648 is too large: the episode limit 5(k + 2)^2 "
                      "overflows std::size_t"));
  CHECK(TMazeNavigation(std::size_t{1} << 31, 100).max_episode_steps() == 100);  // an explicit limit is fine
  CHECK_THAT(error_of([] { TMazeNavigation n(std::size_t{1} << 62, 100); }),
             Contains("the 4k + 1 states overflow the index type"));
  CHECK_THAT(error_of([] { (void)TMazeNavigation(std::size_t{1} << 40, 100).model(); }),
             Contains("TMazeNavigation::model: the emission matrix") && Contains("refused before allocating"));
}

}  // namespace tmaze_test
