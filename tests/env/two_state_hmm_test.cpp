// Tests of env/two_state_hmm.hpp: the model's matrices, agreement of the simulator with them
// (rewards are random given the transition: they depend on the emitted observation), refusal of
// bad parameters and a pinned trajectory.
#include <catch2/catch.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/random.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_support.hpp"

namespace two_state_hmm_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

TEST_CASE("the two-state HMM's model switches state with probability p and shows the wrong one with probability q",
          "[env][two_state]") {
  const TwoStateHmm env(0.1, 0.25, {-1.0, 2.0});
  const FiniteHmm model = env.model();
  CHECK(Eigen::MatrixXd(model.transition()).isApprox(Eigen::Matrix2d{{0.9, 0.1}, {0.1, 0.9}}));
  CHECK(model.emission().isApprox(Eigen::Matrix2d{{0.75, 0.25}, {0.25, 0.75}}));
  CHECK(model.initial().isApprox(Eigen::Vector2d(0.5, 0.5)));
  // r(x, x') = E[r(y') | x']: 0.75 r(x') + 0.25 r(1 - x').
  CHECK(model.rewards().coeff(0, 0) == Approx(0.75 * -1.0 + 0.25 * 2.0));
  CHECK(model.rewards().coeff(0, 1) == Approx(0.25 * -1.0 + 0.75 * 2.0));
  CHECK(model.expected_rewards()[0] == Approx(0.9 * -0.25 + 0.1 * 1.25));
  // p = 0: the chain never switches, and nothing is stored for the switch.
  CHECK(TwoStateHmm(0.0, 0.0).model().transition().nonZeros() == 2);
}

TEST_CASE("the two-state HMM agrees with its model over 10^6 steps", "[env][two_state]") {
  for (const auto& [p, q] : {std::pair{0.1, 0.25}, std::pair{0.5, 0.0}, std::pair{1.0, 0.4}}) {
    const TwoStateHmm env(p, q, {-1.0, 2.0});
    const auto result = test::agreement(env, env.model(), 17, 1'000'000, 3.0);
    INFO("p = " << p << ", q = " << q << ": worst cell " << result.worst_cell << " at " << result.worst);
    CHECK(result.ok());
  }
}

TEST_CASE("the two-state HMM refuses p and q outside the unit interval", "[env][two_state]") {
  auto error_of = [](double p, double q, std::array<double, 2> r = {0.0, 1.0}) -> std::string {
    try {
      TwoStateHmm env(p, q, r);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  CHECK(error_of(0.0, 1.0) == "(no exception)");
  CHECK_THAT(error_of(1.5, 0.1), Contains("TwoStateHmm: p must be in [0, 1], got 1.5"));
  CHECK_THAT(error_of(-0.5, 0.1), Contains("p must be in [0, 1], got -0.5"));
  CHECK_THAT(error_of(0.1, 2.0), Contains("TwoStateHmm: q must be in [0, 1], got 2"));
  CHECK_THAT(error_of(0.1, std::nan("")), Contains("q must be in [0, 1], got nan"));
  CHECK_THAT(error_of(0.1, 0.1, {0.0, std::nan("")}), Contains("observation_rewards[1] must be finite, got nan"));
}

TEST_CASE("the two-state HMM gives a pinned trajectory for a pinned seed", "[env][two_state]") {
  TwoStateHmm env(0.2, 0.1);
  Xoshiro256StarStar g(2024);
  std::vector<std::size_t> trajectory{env.reset(g), env.state()};
  for (int t = 0; t < 20; ++t) {
    trajectory.push_back(env.step(g).observation);
    trajectory.push_back(env.state());
  }
  const std::vector<std::size_t> pinned{0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
                                        0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  CHECK(trajectory == pinned);
}

}  // namespace two_state_hmm_test
