// Tests of analysis/markov.hpp: the stationary distribution (dense and sparse, and a clear error
// without a unique one), state values against the Bellman equation, and the stationary process of
// episodic models (restart chain, no bootstrap past a terminal state, Table 2).
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/matrix.hpp>
#include <string>
#include <vector>

namespace markov_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// Left-to-right chain 0 -> 1 -> 2 -> terminal 3 with chances to stay (the chain of
/// test::episodic_chain, with other emissions).
FiniteHmm episodic_chain() {
  Eigen::MatrixXd p(4, 4), r(4, 4);
  p << 0.3, 0.7, 0, 0, 0, 0.2, 0.8, 0, 0, 0, 0.5, 0.5, 1, 0, 0, 0;
  r << 1, -1, 0, 0, 0, 0.5, 2, 0, 0, 0, -0.5, 3, 0, 0, 0, 0;
  Eigen::MatrixXd o(4, 2);
  o << 1, 0, 0.5, 0.5, 0, 1, 1, 0;
  return FiniteHmm(p, o, Eigen::Vector4d(1, 0, 0, 0), r, {false, false, false, true});
}

/// max_x |v - r̄ - γ P v| / max |v|: the relative Bellman residual.
double bellman_residual(const FiniteHmm& model, const Eigen::VectorXd& v, double discount) {
  const Eigen::VectorXd residual = v - model.expected_rewards() - discount * (model.transition() * v);
  return residual.cwiseAbs().maxCoeff() / v.cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("stationary_distribution solves muᵀP = muᵀ for dense and sparse matrices", "[markov]") {
  Eigen::MatrixXd p(3, 3);
  p << 0.5, 0.5, 0.0, 0.2, 0.3, 0.5, 0.6, 0.0, 0.4;
  const Eigen::VectorXd dense = stationary_distribution(p);
  const Eigen::VectorXd sparse = stationary_distribution(SparseMatrix(p.sparseView()));
  CHECK((dense - sparse).cwiseAbs().maxCoeff() < 1e-15);
  CHECK(dense.sum() == Approx(1.0).margin(1e-15));
  CHECK((p.transpose() * dense - dense).cwiseAbs().maxCoeff() < 1e-15);
  // Against the eigenvector of Pᵀ for the eigenvalue 1, from a different algorithm.
  Eigen::EigenSolver<Eigen::MatrixXd> eigen(p.transpose());
  Eigen::Index one = 0;
  (eigen.eigenvalues().array() - 1.0).abs().minCoeff(&one);
  Eigen::VectorXd reference = eigen.eigenvectors().col(one).real();
  reference /= reference.sum();
  CHECK((reference - dense).cwiseAbs().maxCoeff() < 1e-12);

  // A periodic chain has a unique stationary distribution too; transient states get 0.
  Eigen::MatrixXd periodic(3, 3);
  periodic << 0, 1, 0, 1, 0, 0, 0.5, 0.5, 0;
  const Eigen::VectorXd mu = stationary_distribution(periodic);
  CHECK(mu[0] == Approx(0.5));
  CHECK(mu[1] == Approx(0.5));
  CHECK(mu[2] == 0.0);

  // The noisy random walk: sparse, 1001 states; the centre collects the edge crossings.
  const FiniteHmm walk = NoisyRandomWalk().model();
  const Eigen::VectorXd walk_mu = stationary_distribution(walk.transition());
  CHECK(walk_mu.minCoeff() > 0.0);
  const Eigen::VectorXd walk_residual = walk.transition().transpose() * walk_mu - walk_mu;
  CHECK(walk_residual.cwiseAbs().maxCoeff() < 1e-15);
  Eigen::Index top = 0;
  walk_mu.maxCoeff(&top);
  CHECK(top == 500);
}

TEST_CASE("stationary_distribution refuses chains without a unique one and bad matrices", "[markov]") {
  Eigen::MatrixXd two_classes(4, 4);
  two_classes << 0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 0.1, 0.9, 0, 0, 0.9, 0.1;
  CHECK_THROWS_WITH(stationary_distribution(two_classes), Catch::Contains("no unique stationary distribution"));
  Eigen::MatrixXd with_transient(3, 3);  // state 1 is transient, states 0 and 2 absorb
  with_transient << 1, 0, 0, 0.5, 0, 0.5, 0, 0, 1;
  CHECK_THROWS_WITH(stationary_distribution(with_transient), Catch::Contains("no unique stationary distribution"));
  CHECK_THROWS_WITH(stationary_distribution(Eigen::MatrixXd::Constant(2, 3, 1.0 / 3)),
                    Catch::Contains("must be 2 x 2, got 2 x 3"));
  Eigen::MatrixXd not_stochastic(2, 2);
  not_stochastic << 0.5, 0.6, 0.5, 0.5;
  CHECK_THROWS_WITH(stationary_distribution(not_stochastic), Catch::Contains("row 0 sums to 1.1"));
  CHECK_THROWS_WITH(stationary_distribution(Eigen::MatrixXd(0, 0)), Catch::Contains("at least one state"));
}

TEST_CASE("state_values satisfies the Bellman equation to 1e-10 relative", "[markov]") {
  const FiniteHmm walk = NoisyRandomWalk().model();
  for (const double discount : {0.5, 0.999}) {
    const Eigen::VectorXd v = state_values(walk, discount);
    INFO("discount = " << discount);
    CHECK(bellman_residual(walk, v, discount) < 1e-10);
    // The walk is antisymmetric: v(x) = -v(1000 - x).
    CHECK((v + v.reverse()).cwiseAbs().maxCoeff() < 1e-12 * v.cwiseAbs().maxCoeff());
  }

  // The two-state HMM in closed form: v = r̄ + γ P v with r̄ = E[r(y')|x].
  const TwoStateHmm two(0.3, 0.2, {-1.0, 1.0});
  const Eigen::VectorXd v2 = state_values(two, 0.5);
  const FiniteHmm model = two.model();
  CHECK(bellman_residual(model, v2, 0.5) < 1e-14);
  CHECK_THROWS_WITH(state_values(two, 1.0), "state_values: discount must be in [0, 1), got 1");
  CHECK_THROWS_WITH(state_values(two, -0.1), "state_values: discount must be in [0, 1), got -0.1");
  CHECK_THROWS_WITH(StationaryProcess(two, std::nan("")), Catch::Contains("discount must be in [0, 1)"));
}

TEST_CASE("Episodic models: no bootstrap past a terminal state, the restart chain weighs the states", "[markov]") {
  const FiniteHmm chain = episodic_chain();
  const double discount = 0.9;
  const Eigen::VectorXd v = state_values(chain, discount);
  // v(2) = 0.5 (-0.5 + γ v(2)) + 0.5 * 3, v(1) = 0.2 (0.5 + γ v(1)) + 0.8 (2 + γ v(2)), ...
  const double v2 = (0.5 * -0.5 + 0.5 * 3.0) / (1 - 0.5 * discount);
  const double v1 = (0.2 * 0.5 + 0.8 * (2.0 + discount * v2)) / (1 - 0.2 * discount);
  const double v0 = (0.3 * 1.0 + 0.7 * (-1.0 + discount * v1)) / (1 - 0.3 * discount);
  CHECK(v[0] == Approx(v0).epsilon(1e-13));
  CHECK(v[1] == Approx(v1).epsilon(1e-13));
  CHECK(v[2] == Approx(v2).epsilon(1e-13));
  CHECK(v[3] == 0.0);

  const StationaryProcess process(chain, discount);
  CHECK(process.episodic());
  CHECK((process.values() - v).cwiseAbs().maxCoeff() < 1e-14);
  // Expected visits per episode: 1/0.7, 1/0.8, 1/0.5 and the terminal state once.
  Eigen::Vector4d visits(1 / 0.7, 1 / 0.8, 1 / 0.5, 1.0);
  CHECK((process.stationary() - visits / visits.sum()).cwiseAbs().maxCoeff() < 1e-14);
  visits[3] = 0.0;
  CHECK((process.weights() - visits / visits.sum()).cwiseAbs().maxCoeff() < 1e-14);
  CHECK(process.continuation()[2] == Approx(0.5));
  CHECK(process.continuation()[0] == 1.0);

  // The T-maze under "always up": Table 2, +1 at the junctions (a, x) and (b, y), -1 at the others.
  for (const std::size_t k : {2, 3, 6}) {
    const TMazeAlwaysUp maze(k);
    const StationaryProcess tmaze(maze, 0.9);
    const TMaze& m = maze.maze();
    for (std::size_t cue = 0; cue < 2; ++cue) {
      for (std::size_t sign = 0; sign < 2; ++sign)
        CHECK(tmaze.values()[static_cast<Eigen::Index>(m.junction_state(cue, sign))] == (cue == sign ? 1.0 : -1.0));
      for (std::size_t i = 0; i + 1 < k; ++i)
        CHECK(tmaze.values()[static_cast<Eigen::Index>(m.corridor_state(i, cue))] == Approx(0.0).margin(1e-15));
    }
    // Every one of the k + 1 steps of an episode (the terminal one included) is equally likely.
    CHECK(tmaze.stationary()[static_cast<Eigen::Index>(m.terminal_state())] == Approx(1.0 / (k + 1)));
  }
}

}  // namespace markov_test
