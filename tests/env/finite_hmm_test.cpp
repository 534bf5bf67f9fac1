// Tests of env/alias.hpp, env/finite_hmm.hpp and env/finite_pomdp.hpp: the alias sampler, the
// validation of every matrix, agreement of the simulators with their matrices, fixing a policy,
// and a pinned trajectory.
#include <catch2/catch.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/alias.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/finite_pomdp.hpp>
#include <memtrace/matrix.hpp>
#include <memtrace/random.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "env_test_support.hpp"

namespace finite_hmm_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

using test::random_stochastic;

Eigen::MatrixXd random_rewards(Eigen::Index n, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  Eigen::MatrixXd r(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) r(i, j) = static_cast<double>(uniform_int(g, -3, 3));
  return r;
}

FiniteHmm small_hmm() {
  Eigen::MatrixXd p(3, 3), o(3, 2), r = Eigen::MatrixXd::Zero(3, 3);
  p << 0.5, 0.5, 0.0, 0.0, 0.2, 0.8, 1.0, 0.0, 0.0;
  o << 1.0, 0.0, 0.3, 0.7, 0.0, 1.0;
  r(1, 2) = 1.0;
  return FiniteHmm(p, o, Eigen::Vector3d(1.0, 0.0, 0.0), r);
}

std::string error_of(auto&& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

/// A POMDP always played with one action, as a RewardProcess for the agreement check.
struct FixedAction {
  FinitePomdp pomdp;
  Action u;
  template <class G>
  Observation reset(G& g) {
    return pomdp.reset(g);
  }
  template <class G>
  TimeStep<> step(G& g) {
    return pomdp.step(u, g);
  }
  [[nodiscard]] State state() const { return pomdp.state(); }
  [[nodiscard]] std::size_t num_states() const { return pomdp.num_states(); }
  [[nodiscard]] std::size_t num_observations() const { return pomdp.num_observations(); }
};

}  // namespace

TEST_CASE("the alias table draws each outcome with its probability", "[env][alias]") {
  const Eigen::VectorXd p = (Eigen::VectorXd(6) << 0.05, 0.0, 0.4, 0.15, 0.3, 0.1).finished();
  const detail::AliasTable table(p);
  Xoshiro256StarStar g(11);
  constexpr std::size_t n = 1'000'000;
  std::vector<double> count(6, 0.0);
  for (std::size_t i = 0; i < n; ++i) ++count[table.sample(g)];
  const double delta = 1e-6 / 6.0;
  for (Eigen::Index i = 0; i < 6; ++i) {
    INFO("outcome " << i);
    CHECK(std::abs(count[static_cast<std::size_t>(i)] / n - p[i]) <= test::bernstein_halfwidth(p[i], n, delta));
  }
  CHECK(count[1] == 0.0);  // zero probability: never drawn
}

TEST_CASE("a one-entry row costs no random numbers", "[env][alias]") {
  const detail::AliasTable table(Eigen::Vector3d(0.0, 1.0, 0.0));
  Xoshiro256StarStar g(3);
  const auto before = g;
  CHECK(table.sample(g) == 1);
  CHECK(g == before);
}

TEST_CASE("FiniteHmm stores the model it was given", "[env][finite_hmm]") {
  const FiniteHmm hmm = small_hmm();
  CHECK(hmm.num_states() == 3);
  CHECK(hmm.num_observations() == 2);
  CHECK(hmm.transition().nonZeros() == 5);  // zeros are not stored
  CHECK(hmm.transition().coeff(1, 2) == 0.8);
  CHECK(hmm.rewards().coeff(1, 2) == 1.0);
  CHECK(hmm.expected_rewards().isApprox(Eigen::Vector3d(0.0, 0.8, 0.0)));
  CHECK(&hmm.model() == &hmm);
  CHECK_FALSE(hmm.is_terminal(0));
}

TEST_CASE("FiniteHmm samples what its matrices say", "[env][finite_hmm]") {
  constexpr Eigen::Index n = 8, m = 4;
  SECTION("continuing, dense input") {
    const FiniteHmm hmm(random_stochastic(n, n, 1), random_stochastic(n, m, 2), random_stochastic(1, n, 3).transpose(),
                        random_rewards(n, 4));
    const auto result = test::agreement(hmm, hmm, 5, 1'000'000, 0.0);
    INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
  }
  SECTION("episodic, sparse input") {
    std::vector<bool> terminal(n, false);
    terminal[n - 1] = true;
    Eigen::VectorXd initial = Eigen::VectorXd::Zero(n);
    initial.head(3).setConstant(1.0 / 3.0);
    const FiniteHmm hmm(SparseMatrix(random_stochastic(n, n, 6).sparseView()), random_stochastic(n, m, 7), initial,
                        SparseMatrix(random_rewards(n, 8).sparseView()), terminal);
    const auto result = test::agreement(hmm, hmm, 9, 1'000'000, 0.0);
    INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
    CHECK(result.episodes > 1000);
  }
}

TEST_CASE("the agreement check is not vacuous: a model off by 0.01 is caught", "[env][finite_hmm]") {
  const Eigen::MatrixXd p = random_stochastic(8, 8, 1), o = random_stochastic(8, 4, 2);
  const Eigen::VectorXd initial = Eigen::VectorXd::Constant(8, 1.0 / 8.0);
  const FiniteHmm hmm(p, o, initial, random_rewards(8, 4));
  Eigen::MatrixXd wrong = p;
  wrong(0, 1) += 0.01;
  wrong(0, 0) = 1.0 - (wrong.row(0).sum() - wrong(0, 0));
  REQUIRE(wrong(0, 0) >= 0.0);
  CHECK_FALSE(test::agreement(hmm, FiniteHmm(wrong, o, initial, random_rewards(8, 4)), 5, 1'000'000, 0.0).ok());
  Eigen::MatrixXd r = random_rewards(8, 4);
  r(2, 3) += 0.5;
  CHECK_FALSE(test::agreement(hmm, FiniteHmm(p, o, initial, r), 5, 200'000, 0.0).ok());
}

TEST_CASE("FiniteHmm refuses malformed models and names what is wrong", "[env][finite_hmm]") {
  Eigen::MatrixXd p(2, 2), o(2, 2), r = Eigen::MatrixXd::Zero(2, 2);
  p << 0.5, 0.5, 0.1, 0.9;
  o << 1.0, 0.0, 0.0, 1.0;
  const Eigen::Vector2d initial(0.5, 0.5);
  auto make = [&](const Eigen::MatrixXd& p2, const Eigen::MatrixXd& o2, const Eigen::VectorXd& i2,
                  const Eigen::MatrixXd& r2, std::vector<bool> terminal = {}) {
    return error_of([&] { FiniteHmm(p2, o2, i2, r2, std::move(terminal)); });
  };
  CHECK(make(p, o, initial, r) == "(no exception)");
  CHECK_THAT(make(Eigen::MatrixXd::Constant(2, 3, 1.0 / 3), o, initial, r),
             Contains("transition (|X| x |X|) must be 2 x 2, got 2 x 3"));
  CHECK_THAT(make(p, Eigen::MatrixXd::Ones(3, 1), initial, r),
             Contains("emission (|X| x |Y|) must be 2 x 1, got 3 x 1"));
  CHECK_THAT(make(p, o, Eigen::Vector3d(1, 0, 0), r), Contains("initial (|X| x 1) must be 2 x 1, got 3 x 1"));
  CHECK_THAT(make(p, o, initial, Eigen::MatrixXd::Zero(2, 3)),
             Contains("rewards (|X| x |X|) must be 2 x 2, got 2 x 3"));
  Eigen::MatrixXd bad = p;
  bad(1, 0) = -0.1;
  bad(1, 1) = 1.1;
  CHECK_THAT(make(bad, o, initial, r), Contains("transition(1, 0) must not be negative, got -0.1"));
  bad = p;
  bad(1, 1) = 0.8;
  CHECK_THAT(make(bad, o, initial, r), Contains("transition row 1 sums to 0.9, expected 1 (tolerance 1e-09)"));
  // A sum just outside the tolerance is shown with the digits that put it there (not "sums to 1").
  Eigen::MatrixXd near = p;
  near(0, 0) += 2e-9;
  CHECK_THAT(make(near, o, initial, r),
             Contains("transition row 0 sums to 1.0000000020000002, expected 1 (tolerance 1e-09)"));
  bad = o;
  bad(0, 1) = 0.5;
  CHECK_THAT(make(p, bad, initial, r), Contains("emission row 0 sums to 1.5"));
  bad = p;
  bad(0, 0) = std::nan("");
  CHECK_THAT(make(bad, o, initial, r), Contains("transition(0, 0) must be a finite probability, got nan"));
  CHECK_THAT(make(p, o, Eigen::Vector2d(0.7, 0.7), r), Contains("initial sums to 1.4"));
  CHECK_THAT(make(p, o, Eigen::Vector2d(1.5, -0.5), r), Contains("initial[1] must not be negative, got -0.5"));
  bad = r;
  bad(1, 0) = std::nan("");
  CHECK_THAT(make(p, o, initial, bad), Contains("rewards(1, 0) must be a finite reward, got nan"));
  bad(1, 0) = std::numeric_limits<double>::infinity();
  CHECK_THAT(make(p, o, initial, bad), Contains("rewards(1, 0) must be a finite reward, got inf"));
  CHECK_THAT(make(p, o, initial, r, {true}), Contains("terminal must be empty or have one flag per state (2), got 1"));
  CHECK_THAT(make(p, o, initial, r, {false, true}), Contains("initial puts probability 0.5 on terminal state 1"));
  CHECK_THAT(make(Eigen::MatrixXd(0, 0), o, initial, r), Contains("transition must have at least one state"));
  CHECK_THAT(error_of([&] { FiniteHmm(p, o, initial, r, {}, 1.5); }), Contains("tolerance must be in [0, 1), got 1.5"));
  // Within the stated tolerance a row is accepted, and divided by its sum once (env/pomdp_model_test.cpp).
  bad = p;
  bad(1, 1) = 0.9 + 1e-10;
  CHECK(make(bad, o, initial, r) == "(no exception)");
}

TEST_CASE("FiniteHmm ends episodes in terminal states", "[env][finite_hmm]") {
  Eigen::MatrixXd p(2, 2), o(2, 1);
  p << 0.0, 1.0, 1.0, 0.0;
  o << 1.0, 1.0;
  FiniteHmm hmm(p, o, Eigen::Vector2d(1, 0), Eigen::MatrixXd::Constant(2, 2, 2.0), {false, true});
  Xoshiro256StarStar g(1);
  hmm.reset(g);
  CHECK(hmm.step(g) == TimeStep<>{0, 2.0, true, false});
  CHECK(hmm.state() == 1);
  CHECK_THROWS_AS(hmm.step(g), std::logic_error);
  hmm.reset(g);
  CHECK(hmm.state() == 0);
}

TEST_CASE("FiniteHmm gives a pinned trajectory for a pinned seed", "[env][finite_hmm]") {
  // Pinned: the alias tables and memtrace's sampling functions are the same under GCC and Clang.
  FiniteHmm hmm(random_stochastic(5, 5, 1), random_stochastic(5, 3, 2), Eigen::VectorXd::Constant(5, 0.2),
                random_rewards(5, 4));
  Xoshiro256StarStar g(2024);
  std::vector<std::size_t> trajectory{hmm.reset(g), hmm.state()};
  for (int t = 0; t < 12; ++t) {
    const auto tr = hmm.step(g);
    trajectory.push_back(tr.observation);
    trajectory.push_back(hmm.state());
  }
  const std::vector<std::size_t> pinned{1, 0, 1, 4, 1, 2, 2, 4, 2, 4, 0, 4, 2, 1, 2, 1, 2, 0, 2, 0, 0, 4, 2, 1, 1, 2};
  CHECK(trajectory == pinned);
}

TEST_CASE("FinitePomdp samples each action's matrices", "[env][finite_pomdp]") {
  constexpr Eigen::Index n = 6, m = 3;
  const Eigen::MatrixXd o = random_stochastic(n, m, 1);
  const Eigen::VectorXd initial = Eigen::VectorXd::Constant(n, 1.0 / n);
  std::vector<SparseMatrix> p, r;
  for (std::uint64_t u = 0; u < 3; ++u) {
    p.emplace_back(random_stochastic(n, n, 10 + u).sparseView());
    r.emplace_back(random_rewards(n, 20 + u).sparseView());
  }
  const FinitePomdp pomdp(p, o, initial, r);
  CHECK(pomdp.num_actions() == 3);
  for (Action u = 0; u < 3; ++u) {
    Eigen::VectorXd only_u = Eigen::VectorXd::Zero(3);
    only_u[static_cast<Eigen::Index>(u)] = 1.0;
    const FiniteHmm hmm = pomdp.with_action_probabilities(only_u);
    CHECK(Eigen::MatrixXd(hmm.transition()).isApprox(Eigen::MatrixXd(p[u])));
    const auto result = test::agreement(FixedAction{pomdp, u}, hmm, 30 + u, 300'000, 0.0);
    INFO("action " << u << ": worst cell " << result.worst_cell << " at " << result.worst << " of its bound");
    CHECK(result.ok());
  }
}

TEST_CASE("fixing a policy mixes transitions and averages rewards", "[env][finite_pomdp]") {
  // Two states, two actions: u = 0 stays (reward 1), u = 1 switches (reward -1).
  std::vector<SparseMatrix> p{SparseMatrix(Eigen::Matrix2d::Identity().sparseView()),
                              SparseMatrix(Eigen::Matrix2d{{0, 1}, {1, 0}}.sparseView())};
  std::vector<SparseMatrix> r{SparseMatrix(Eigen::Matrix2d::Constant(1.0).sparseView()),
                              SparseMatrix(Eigen::Matrix2d::Constant(-1.0).sparseView())};
  const FinitePomdp pomdp(p, Eigen::Matrix2d::Identity(), Eigen::Vector2d(1, 0), r);
  const FiniteHmm hmm = pomdp.with_policy(Eigen::Matrix2d{{0.25, 0.75}, {1.0, 0.0}});
  CHECK(Eigen::MatrixXd(hmm.transition()).isApprox(Eigen::Matrix2d{{0.25, 0.75}, {0.0, 1.0}}));
  CHECK(hmm.transition().nonZeros() == 3);
  CHECK(hmm.rewards().coeff(0, 0) == 1.0);
  CHECK(hmm.rewards().coeff(0, 1) == -1.0);
  CHECK(hmm.rewards().coeff(1, 1) == 1.0);
  CHECK(hmm.expected_rewards().isApprox(Eigen::Vector2d(-0.5, 1.0)));
  // Two actions reaching the same x' with different rewards: the mean reward of the transition.
  std::vector<SparseMatrix> same{p[0], p[0]};
  const FinitePomdp both(same, Eigen::Matrix2d::Identity(), Eigen::Vector2d(1, 0), r);
  CHECK(both.with_action_probabilities(Eigen::Vector2d(0.75, 0.25)).rewards().coeff(0, 0) == 0.5);

  CHECK_THAT(error_of([&] {
               (void)pomdp.with_policy(Eigen::Matrix2d{{0.5, 0.6}, {1, 0}});
             }),
             Contains("FinitePomdp::with_policy: policy row 0 sums to 1.1"));
  CHECK_THAT(error_of([&] { (void)pomdp.with_policy(Eigen::MatrixXd::Ones(2, 1)); }),
             Contains("policy (|X| x |U|) must be 2 x 2, got 2 x 1"));
  CHECK_THAT(error_of([&] { (void)pomdp.with_action_probabilities(Eigen::Vector2d(0.5, 0.6)); }),
             Contains("action_probabilities sums to 1.1"));
}

TEST_CASE("FinitePomdp refuses malformed models and actions", "[env][finite_pomdp]") {
  const Eigen::Matrix2d o = Eigen::Matrix2d::Identity();
  const Eigen::Vector2d initial(1, 0);
  const SparseMatrix id(Eigen::Matrix2d::Identity().sparseView()), zero(2, 2);
  SparseMatrix half(Eigen::Matrix2d::Constant(0.5).sparseView());
  half.coeffRef(1, 1) = 0.4;
  CHECK_THAT(error_of([&] { FinitePomdp({}, o, initial, {}); }),
             Contains("transitions must hold one matrix per action"));
  CHECK_THAT(error_of([&] {
               FinitePomdp({id, id}, o, initial, {zero});
             }),
             Contains("rewards must hold one matrix per action (2), got 1"));
  CHECK_THAT(error_of([&] {
               FinitePomdp({id, half}, o, initial, {zero, zero});
             }),
             Contains("transition(1) row 1 sums to 0.9"));
  CHECK_THAT(error_of([&] {
               FinitePomdp({id, SparseMatrix(3, 3)}, o, initial, {zero, zero});
             }),
             Contains("transition(1) (|X| x |X|) must be 2 x 2, got 3 x 3"));
  SparseMatrix nan_reward = zero;
  nan_reward.coeffRef(0, 1) = std::nan("");
  CHECK_THAT(error_of([&] {
               FinitePomdp({id, id}, o, initial, {zero, nan_reward});
             }),
             Contains("rewards(1)(0, 1) must be a finite reward, got nan"));
  FinitePomdp pomdp({id, id}, o, initial, {zero, zero});
  Xoshiro256StarStar g(1);
  pomdp.reset(g);
  CHECK_THAT(error_of([&] { pomdp.step(2, g); }), Contains("FinitePomdp::step: action must be in [0, 2), got 2"));
}

}  // namespace finite_hmm_test
