// Tests of env/pomdp_model.hpp: a .pomdp file as a FinitePomdp (the start observation, costs,
// rewards with and without the observation), the round trip file -> model -> file -> model, and
// memtrace's own models exported and read back with the same exact quantities.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/pomdp_model.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pomdp_model_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path data_dir = MEMTRACE_TEST_DATA_DIR;

bool same(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

/// Every matrix of the two models equal, entry by entry.
void require_same_model(const FinitePomdp& a, const FinitePomdp& b) {
  REQUIRE(a.num_states() == b.num_states());
  REQUIRE(a.num_actions() == b.num_actions());
  REQUIRE(a.num_observations() == b.num_observations());
  REQUIRE(a.emissions_depend_on_action() == b.emissions_depend_on_action());
  REQUIRE(a.rewards_depend_on_observation() == b.rewards_depend_on_observation());
  CHECK(same(a.initial(), b.initial()));
  CHECK(same(a.initial_emission(), b.initial_emission()));
  CHECK(a.terminal() == b.terminal());
  for (Action u = 0; u < a.num_actions(); ++u) {
    CHECK(same(Eigen::MatrixXd(a.transition(u)), Eigen::MatrixXd(b.transition(u))));
    CHECK(same(a.emission(u), b.emission(u)));
    CHECK(same(Eigen::MatrixXd(a.rewards(u)), Eigen::MatrixXd(b.rewards(u))));
    for (State x = 0; x < a.num_states(); ++x)
      for (State x2 = 0; x2 < a.num_states(); ++x2)
        for (Observation y = 0; y < a.num_observations(); ++y) CHECK(a.reward(x, u, x2, y) == b.reward(x, u, x2, y));
  }
}

/// The exact quantities of two HMMs whose first `n` states are the same chain (the rest transient).
void require_same_analysis(const FiniteHmm& original, const FiniteHmm& read_back, double discount) {
  const StationaryProcess a(original, discount), b(read_back, discount);
  const auto n = static_cast<Eigen::Index>(original.num_states());
  REQUIRE(b.num_states() >= original.num_states());
  CHECK((a.values() - b.values().head(n)).cwiseAbs().maxCoeff() < 1e-12);
  CHECK((a.weights() - b.weights().head(n)).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(b.weights().tail(b.weights().size() - n).cwiseAbs().maxCoeff() < 1e-12);
  for (double lambda : {0.0, 0.5, 0.9})
    CHECK(std::abs(optimal_trace_value_error(a, lambda) - optimal_trace_value_error(b, lambda)) < 1e-12);
}

}  // namespace

TEST_CASE("Tiger as a FinitePomdp: the start observation, action-dependent emissions, the belief") {
  const FinitePomdp tiger = to_finite_pomdp(read_pomdp(data_dir / "tiger.pomdp"));
  REQUIRE(tiger.num_states() == 2);
  REQUIRE(tiger.num_actions() == 3);
  REQUIRE(tiger.num_observations() == 3);  // tiger-left, tiger-right, start
  CHECK(tiger.emissions_depend_on_action());
  CHECK_FALSE(tiger.rewards_depend_on_observation());
  CHECK(tiger.hmm_has_start_states());
  CHECK(tiger.num_hmm_states() == 8);  // (3 actions + start) x 2 states
  CHECK(same(tiger.initial_emission(), (Eigen::MatrixXd(2, 3) << 0, 0, 1, 0, 0, 1).finished()));
  CHECK(same(tiger.emission(0), (Eigen::MatrixXd(2, 3) << 0.85, 0.15, 0, 0.15, 0.85, 0).finished()));
  CHECK(same(tiger.emission(1), (Eigen::MatrixXd(2, 3) << 0.5, 0.5, 0, 0.5, 0.5, 0).finished()));
  CHECK(tiger.reward(0, 0, 0, 1) == -1.0);    // listen
  CHECK(tiger.reward(0, 1, 1, 0) == -100.0);  // open-left with the tiger left
  CHECK(tiger.reward(1, 1, 0, 0) == 10.0);    // open-left with the tiger right
  CHECK(tiger.reward(0, 2, 0, 0) == 10.0);    // open-right with the tiger left

  const Eigen::VectorXd b0 = tiger.initial_belief(2);
  CHECK(same(b0, Eigen::Vector2d(0.5, 0.5)));
  const Eigen::VectorXd b1 = tiger.update_belief(b0, 0, 0);  // listen, hear tiger-left
  CHECK(std::abs(b1[0] - 0.85) < 1e-15);
  CHECK(std::abs(b1[1] - 0.15) < 1e-15);
  CHECK_THROWS_WITH(tiger.initial_belief(0), Contains("probability 0"));

  const FiniteHmm hmm = tiger.with_action_probabilities(Eigen::Vector3d::Constant(1.0 / 3.0));
  CHECK(hmm.num_states() == 8);
  CHECK(hmm.num_observations() == 3);

  std::mt19937_64 gen(7);
  auto sim = tiger;
  CHECK(sim.reset(gen) == 2);
  for (int t = 0; t < 100; ++t) CHECK(sim.step(static_cast<Action>(t % 3), gen).observation < 2);
}

TEST_CASE("costs are negated, rewards that depend on the observation keep it") {
  const std::string text =
      "discount: 0.9\nvalues: cost\nstates: 2\nactions: 1\nobservations: a b\n"
      "T: 0 uniform\nO: 0 uniform\nR: 0 : * : * : a 2\nR: 0 : * : * : b 3\n";
  const FinitePomdp m = to_finite_pomdp(parse_pomdp(text));
  REQUIRE(m.rewards_depend_on_observation());
  CHECK(m.reward(0, 0, 1, 0) == -2.0);
  CHECK(m.reward(0, 0, 1, 1) == -3.0);
  CHECK(m.reward(0, 0, 1, 2) == 0.0);  // start: never paid
  CHECK(std::abs(m.rewards(0).coeff(0, 1) + 2.5) < 1e-15);

  // Rewards that differ only where O gives probability 0 do not depend on the observation.
  const std::string masked =
      "discount: 0.9\nvalues: cost\nstates: 2\nactions: 1\nobservations: a b\n"
      "T: 0 uniform\nO: 0 : * : a 1\nR: 0 : * : * : a 2\nR: 0 : * : * : b 3\n";
  const FinitePomdp r = to_finite_pomdp(parse_pomdp(masked));
  CHECK_FALSE(r.rewards_depend_on_observation());
  CHECK(r.rewards(0).coeff(1, 0) == -2.0);
}

TEST_CASE("file -> model -> file -> model gives the same model") {
  for (const char* name : {"tiger.pomdp", "grid4x3.pomdp", "constructs.pomdp"}) {
    INFO(name);
    const FinitePomdp model = to_finite_pomdp(read_pomdp(data_dir / name));
    const PomdpFile exported = to_pomdp_file(model, 0.9);
    CHECK(exported.num_observations() + 1 == model.num_observations());  // start is dropped
    CHECK(parse_pomdp(format_pomdp(exported)) == exported);
    require_same_model(model, to_finite_pomdp(parse_pomdp(format_pomdp(exported))));
  }
  CHECK(to_finite_pomdp(read_pomdp(data_dir / "constructs.pomdp")).rewards_depend_on_observation());
  CHECK_THROWS_WITH(to_pomdp_file(to_finite_pomdp(read_pomdp(data_dir / "tiger.pomdp")), 1.5), Contains("discount"));
}

TEST_CASE("memtrace's HMMs exported and read back have the same exact quantities") {
  const FiniteHmm walk = NoisyRandomWalk().model();
  const FiniteHmm two_state = TwoStateHmm(0.2, 0.3).model();
  for (const FiniteHmm* hmm : {&walk, &two_state}) {
    const PomdpFile file = parse_pomdp(format_pomdp(to_pomdp_file(*hmm, 0.9)));
    REQUIRE(file.actions == std::vector<std::string>{"step"});
    const FinitePomdp back = to_finite_pomdp(file);
    REQUIRE(back.num_observations() == hmm->num_observations() + 1);
    const FiniteHmm read_back = back.with_action_probabilities(Eigen::VectorXd::Ones(1));
    require_same_analysis(*hmm, read_back, 0.9);
  }
}

TEST_CASE("the T-maze exported: terminal states continue with the start distribution") {
  const FinitePomdp maze = TMaze(4).model();
  const PomdpFile file = parse_pomdp(format_pomdp(to_pomdp_file(maze, 0.95)));
  const FinitePomdp back = to_finite_pomdp(file);
  CHECK_FALSE(back.emissions_depend_on_action());  // the same O for every action is given once
  CHECK(std::find(back.terminal().begin(), back.terminal().end(), true) == back.terminal().end());
  // The continuing T-maze the file expresses: the terminal flags dropped, the restart kept.
  std::vector<SparseMatrix> transitions, rewards;
  for (Action u = 0; u < maze.num_actions(); ++u) {
    transitions.push_back(maze.transition(u));
    rewards.push_back(maze.rewards(u));
  }
  const FinitePomdp continuing(transitions, maze.emission(), maze.initial(), rewards);
  const Eigen::Vector2d policy(0.5, 0.5);
  require_same_analysis(continuing.with_action_probabilities(policy), back.with_action_probabilities(policy), 0.95);
  // The episodic original has the same stationary distribution over states (the restart chain).
  const StationaryProcess episodic(maze.with_action_probabilities(policy), 0.95);
  const StationaryProcess read(back.with_action_probabilities(policy), 0.95);
  const auto n = static_cast<Eigen::Index>(maze.num_states());
  CHECK((episodic.stationary() - read.stationary().head(n)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("rows within the file's tolerance, either way, become a model every analysis accepts") {
  // tests/data/rounded.pomdp: six-decimal rows summing to 0.999999, 1.000009 and 0.999991.
  const PomdpFile file = read_pomdp(data_dir / "rounded.pomdp");
  CHECK(file.transition[0](0, 0) == 0.333333);  // the file's numbers, as written
  CHECK(file.transition[0](1, 0) == 0.500004);
  CHECK(std::abs(file.transition[0].row(1).sum() - 1.0) > 8e-6);

  const FinitePomdp model = to_finite_pomdp(file);
  const double rounding = 4 * std::numeric_limits<double>::epsilon();
  for (Action u = 0; u < model.num_actions(); ++u) {
    const Eigen::MatrixXd t(model.transition(u));
    CHECK((t.rowwise().sum().array() - 1.0).abs().maxCoeff() <= rounding);
    CHECK((model.emission(u).rowwise().sum().array() - 1.0).abs().maxCoeff() <= rounding);
  }
  CHECK(std::abs(model.initial().sum() - 1.0) <= rounding);
  // Each row divided by its sum, once; rows that sum to 1 (as computed) are unchanged.
  const double sum1 = 0.500004 + 0.499999 + 0.000006;
  CHECK(Eigen::MatrixXd(model.transition(0))(1, 0) == 0.500004 / sum1);
  CHECK(Eigen::MatrixXd(model.transition(1))(2, 0) == 1.0);
  CHECK(model.emission(0)(2, 1) == 0.833333);

  // The analyses check rows to default_row_sum_tolerance (1e-9): they accept the model's HMMs.
  for (const Eigen::Vector2d& policy : {Eigen::Vector2d(0.5, 0.5), Eigen::Vector2d(0.9, 0.1)}) {
    const FiniteHmm hmm = model.with_action_probabilities(policy);
    REQUIRE_NOTHROW(stationary_distribution(hmm.transition()));
    const StationaryProcess process(hmm, file.discount);
    CHECK(process.values().allFinite());
    CHECK(std::isfinite(optimal_trace_value_error(process, 0.5)));
    const WindowMoments w = window_moments(process, 2, 1 << 12);
    CHECK(std::isfinite(optimal_window_value_error(w)));
  }
}

TEST_CASE("models from user matrices: rows within the tolerance are renormalised, exact rows kept") {
  // A model built with tolerance 1e-6 from rows off by 5e-7, and a row whose sum is 1 only up to
  // rounding: 0.7 + 0.2 + 0.1 = 0.9999999999999999 (renormalised, 0.7 would become 0.7000000000000001).
  const double off = 5e-7;
  Eigen::MatrixXd t(3, 3);
  t << 0.7, 0.2, 0.1, 0.5 + off, 0.5, 0.0, 0.0, 0.3 - off, 0.7;
  Eigen::MatrixXd o(3, 2);
  o << 0.25 + off, 0.75, 1.0, 0.0, 0.5, 0.5;
  const Eigen::Vector3d initial(1.0 / 3, 1.0 / 3, 1.0 / 3 + off);
  const FiniteHmm hmm(t, o, initial, Eigen::MatrixXd::Ones(3, 3), {}, 1e-6);
  const Eigen::MatrixXd p(hmm.transition());
  REQUIRE(0.7 / (0.7 + 0.2 + 0.1) != 0.7);
  CHECK(p(0, 0) == 0.7);  // within rounding of 1: kept bit for bit
  CHECK(p(0, 2) == 0.1);
  CHECK(p(1, 0) == (0.5 + off) / ((0.5 + off) + 0.5));
  CHECK(p(2, 2) == 0.7 / ((0.3 - off) + 0.7));
  CHECK(hmm.emission()(0, 1) == 0.75 / ((0.25 + off) + 0.75));
  CHECK(hmm.emission()(2, 0) == 0.5);
  CHECK(hmm.initial()[0] == (1.0 / 3) / ((1.0 / 3 + 1.0 / 3) + (1.0 / 3 + off)));
  // The rows as given fail the analyses' check (1e-9); the model's rows pass it.
  CHECK_THROWS_WITH(stationary_distribution(t), Contains("sums to"));
  CHECK_NOTHROW(stationary_distribution(hmm.transition()));
  CHECK_NOTHROW(StationaryProcess(hmm, 0.9));

  // A FinitePomdp given a coarse tolerance: its HMMs are accepted by the analysis.
  std::vector<SparseMatrix> transitions{SparseMatrix(t.sparseView()), SparseMatrix(t.sparseView())};
  transitions[1].coeffRef(0, 0) += 4e-4;
  const FinitePomdp pomdp(transitions, o, initial, {SparseMatrix(3, 3), SparseMatrix(3, 3)}, {}, 1e-3);
  CHECK_NOTHROW(StationaryProcess(pomdp.with_action_probabilities(Eigen::Vector2d(0.3, 0.7)), 0.9));
  // Beyond the tolerance: refused, as before.
  transitions[1].coeffRef(0, 0) += 1e-3;
  CHECK_THROWS_WITH(FinitePomdp(transitions, o, initial, {SparseMatrix(3, 3), SparseMatrix(3, 3)}, {}, 1e-3),
                    Contains("transition(1) row 0 sums to"));
}

}  // namespace pomdp_model_test
