// Tests of env/noisy_random_walk.hpp: the paper's defaults, the exact edge handling of the model,
// agreement of the O(1) simulator with the model over 10^6 steps, refusal of bad parameters and a
// pinned trajectory.
#include <catch2/catch.hpp>
#include <cmath>
#include <memtrace/concepts.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/random.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_support.hpp"

namespace noisy_random_walk_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

std::string error_of(const NoisyRandomWalkParameters& parameters) {
  try {
    NoisyRandomWalk walk(parameters);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace

TEST_CASE("the noisy random walk has the paper's numbers by default", "[env][random_walk]") {
  const NoisyRandomWalk walk;
  CHECK(walk.num_states() == 1001);
  CHECK(walk.num_observations() == 11);
  CHECK(walk.start() == 500);
  CHECK(walk.state() == 500);
  CHECK(walk.parameters().max_step == 100);
  CHECK(walk.parameters().noise == 0.5);
  CHECK(walk.noise() == 0.5);  // realised exactly: a multiple of 2^-22
  // Other noise levels are realised to the nearest multiple of 2^-22, and the model uses that value.
  const NoisyRandomWalk fifth({.noise = 0.2});
  CHECK(fifth.noise() == std::round(0.2 * 0x1p22) * 0x1p-22);
  CHECK(std::abs(fifth.noise() - 0.2) <= 0x1p-23);
  CHECK(fifth.model().emission()(0, 0) == Approx(1 - fifth.noise() + fifth.noise() / 11).epsilon(1e-15));
  // Brackets floor(11 x / 1001): 91 states each.
  CHECK(walk.bracket(0) == 0);
  CHECK(walk.bracket(90) == 0);
  CHECK(walk.bracket(91) == 1);
  CHECK(walk.bracket(500) == 5);
  CHECK(walk.bracket(909) == 9);
  CHECK(walk.bracket(910) == 10);
  CHECK(walk.bracket(1000) == 10);
}

TEST_CASE("the random walk's model handles the edges exactly", "[env][random_walk]") {
  const NoisyRandomWalk walk;
  const FiniteHmm model = walk.model();
  const SparseMatrix& p = model.transition();
  const SparseMatrix& r = model.rewards();
  constexpr double step = 1.0 / 201.0;
  // Inside: 201 offsets, each 1/201, reward 0.
  CHECK(p.row(500).nonZeros() == 201);
  CHECK(p.coeff(500, 400) == step);
  CHECK(p.coeff(500, 600) == step);
  CHECK(p.coeff(500, 399) == 0.0);
  CHECK(model.expected_rewards()[500] == 0.0);
  // x = 0: the 100 offsets to the left go over the edge to 500 with reward -1.
  CHECK(p.row(0).nonZeros() == 102);
  CHECK(p.coeff(0, 500) == 100.0 / 201.0);
  CHECK(p.coeff(0, 0) == step);
  CHECK(p.coeff(0, 100) == step);
  CHECK(r.coeff(0, 500) == -1.0);
  CHECK(r.coeff(0, 50) == 0.0);
  CHECK(model.expected_rewards()[0] == Approx(-100.0 / 201.0).epsilon(1e-14));
  // x = 1000: mirror image, reward +1.
  CHECK(p.coeff(1000, 500) == 100.0 / 201.0);
  CHECK(r.coeff(1000, 500) == 1.0);
  CHECK(model.expected_rewards()[1000] == Approx(100.0 / 201.0).epsilon(1e-14));
  // x = 99: one offset (-100) goes over; x = 100 and x = 900: none.
  CHECK(p.coeff(99, 500) == step);
  CHECK(r.coeff(99, 500) == -1.0);
  CHECK(p.coeff(100, 500) == 0.0);
  CHECK(model.expected_rewards()[100] == 0.0);
  CHECK(model.expected_rewards()[900] == 0.0);
  CHECK(model.expected_rewards()[901] == Approx(1.0 / 201.0).epsilon(1e-14));
  // Every state's expected reward, counted directly: offsets over the right edge minus the left.
  for (Eigen::Index x = 0; x < 1001; ++x) {
    const double over_right = static_cast<double>(std::max<Eigen::Index>(0, x + 100 - 1000));
    const double over_left = static_cast<double>(std::max<Eigen::Index>(0, 100 - x));
    REQUIRE(model.expected_rewards()[x] == Approx((over_right - over_left) / 201.0).margin(1e-15));
  }
  // Emissions: the bracket gets 0.5 + 0.5/11, every other observation 0.5/11.
  CHECK(model.emission()(500, 5) == Approx(0.5 + 0.5 / 11.0).epsilon(1e-15));
  CHECK(model.emission()(500, 4) == Approx(0.5 / 11.0).epsilon(1e-15));
  CHECK(model.initial()[500] == 1.0);
  CHECK(p.nonZeros() == 1001 * 201 - 2 * (99 * 100 / 2));  // edge offsets merged into x' = 500
}

TEST_CASE("the random walk's model agrees with its simulator over 10^6 steps", "[env][random_walk]") {
  SECTION("the paper's walk") {
    const NoisyRandomWalk walk;
    const auto result = test::agreement(walk, walk.model(), 42, 1'000'000, 0.0);
    INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
  }
  SECTION("a small walk without the offset 0, large steps and other rewards") {
    // With max_step 6 of 9 states, both edges can be crossed from one state, and x' = start is
    // also reached without crossing: r(x, start) is then the mean reward of the offsets.
    const NoisyRandomWalk walk({.num_states = 9,
                                .max_step = 6,
                                .allow_stay = false,
                                .num_observations = 3,
                                .noise = 0.2,
                                .start = 2,
                                .left_reward = -2.0,
                                .right_reward = 3.0});
    const FiniteHmm model = walk.model();
    CHECK(model.transition().coeff(4, 4) == 0.0);                 // no offset 0
    CHECK(model.transition().coeff(4, 2) == Approx(5.0 / 12.0));  // d = -2, and 4 offsets over an edge
    CHECK(model.rewards().coeff(4, 2) == Approx((-2.0 * 2 + 3.0 * 2) / 5.0));
    const auto result = test::agreement(walk, model, 7, 1'000'000, 5.0);
    INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
  }
}

TEST_CASE("the random walk refuses bad parameters and names them", "[env][random_walk]") {
  CHECK(error_of({}) == "(no exception)");
  CHECK_THAT(error_of({.num_states = 0}), Contains("num_states must be at least 1, got 0"));
  CHECK_THAT(error_of({.num_states = 21}), Contains("(no exception)"));  // start defaults to the centre
  CHECK_THAT(error_of({.num_states = 21, .start = 21}), Contains("start must be in [0, 21), got 21"));
  CHECK_THAT(error_of({.max_step = 0, .allow_stay = false}), Contains("max_step must be at least 1"));
  CHECK_THAT(error_of({.num_observations = 0}), Contains("num_observations must be at least 1, got 0"));
  CHECK_THAT(error_of({.noise = 1.5}), Contains("noise must be in [0, 1], got 1.5"));
  CHECK_THAT(error_of({.noise = -0.1}), Contains("noise must be in [0, 1], got -0.1"));
  CHECK_THAT(error_of({.noise = std::nan("")}), Contains("noise must be in [0, 1], got nan"));
  CHECK_THAT(error_of({.left_reward = std::nan("")}), Contains("left_reward must be finite, got nan"));
  CHECK_THAT(error_of({.right_reward = std::numeric_limits<double>::infinity()}),
             Contains("right_reward must be finite, got inf"));
  // Storage that cannot fit is refused before allocating, naming the argument; sizes are checked
  // products (|X| (2 max_step + 1) used to wrap in model()).
  CHECK_THAT(error_of({.num_states = std::size_t{1} << 40}),
             Contains("NoisyRandomWalk: the bracket of every state for num_states = 1099511627776 needs") &&
                 Contains("refused before allocating"));
  CHECK_THAT(error_of({.num_states = ~std::size_t{0}}), Contains("num_states must be below 2^63"));
  const NoisyRandomWalk wide({.num_states = 1000, .max_step = (std::size_t{1} << 40) - 1});
  CHECK_THROWS_WITH((void)wide.model(),
                    Contains("NoisyRandomWalk::model: the transition entries |X| (2 max_step + 1) for num_states = "
                             "1000 needs 2199023255551000 entries"));
}

TEST_CASE("a random-walk step costs one draw", "[env][random_walk]") {
  // Counting generator calls: one word holds the offset, the noisy observation and the coin.
  struct Counting {
    using result_type = std::uint64_t;
    Xoshiro256StarStar g{1};
    std::size_t calls = 0;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~result_type{0}; }
    result_type operator()() { return ++calls, g(); }
  };
  static_assert(RewardProcess<NoisyRandomWalk, Counting>);
  NoisyRandomWalk walk;
  Counting gen;
  walk.reset(gen);
  gen.calls = 0;
  constexpr std::size_t steps = 100'000;
  for (std::size_t t = 0; t < steps; ++t) (void)walk.step(gen);
  // One word a step, plus a redraw when a field falls in its rejection zone: probability
  // (2^21 mod 201 + 2^21 mod 11) / 2^21 = 121 / 2^21 a step, 5.8 expected redraws in 10^5 steps.
  CHECK(gen.calls >= steps);
  CHECK(gen.calls - steps <= 5.8 + 6 * std::sqrt(5.8));
  // Walks too large for the 21-bit fields take three draws a step.
  NoisyRandomWalk big({.num_states = 1u << 23, .max_step = 1u << 21});
  big.reset(gen);
  gen.calls = 0;
  for (int t = 0; t < 1000; ++t) (void)big.step(gen);
  CHECK(gen.calls == 3000);
}

TEST_CASE("the random walk gives a pinned trajectory for a pinned seed", "[env][random_walk]") {
  NoisyRandomWalk walk;
  Xoshiro256StarStar g(2031);  // a seed that crosses an edge within 40 steps
  std::vector<double> trajectory{static_cast<double>(walk.reset(g)), static_cast<double>(walk.state())};
  for (int t = 0; t < 40; ++t) {
    const auto tr = walk.step(g);
    trajectory.push_back(static_cast<double>(tr.observation));
    trajectory.push_back(static_cast<double>(walk.state()));
    if (tr.reward != 0.0) trajectory.push_back(tr.reward);
  }
  // Computed by an independent implementation of the documented one-word draw (Python).
  const std::vector<double> pinned{
      5, 500, 9, 503, 6, 572, 5, 553, 7, 643, 7, 683, 3, 699, 7, 640, 5,  692, 6, 614, 6, 683, 6, 586, 0,  494, 8,  426,
      4, 446, 4, 403, 6, 360, 4, 417, 4, 430, 3, 347, 5, 343, 7, 388, 10, 306, 3, 338, 6, 351, 3, 293, 2,  196, 6,  224,
      1, 132, 0, 70,  7, 138, 6, 228, 2, 264, 1, 196, 1, 177, 2, 182, 1,  95,  0, 41,  0, 25,  0, 500, -1, 4,   402};
  CHECK(trajectory == pinned);
}

}  // namespace noisy_random_walk_test
