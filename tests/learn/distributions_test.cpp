// The policy distributions (learn/distributions.hpp): each one's batched log-probabilities and
// entropies against its one-sample closed forms, its gradient with respect to the network's output
// (∂log π(a)/∂output and ∂H/∂output, through the coefficients of `gradient`) against central
// finite differences, and act against the samplers it shares with PpoPolicy.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memtrace/learn/distributions.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace distributions_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Matrix = Eigen::MatrixXd;
using Row = Eigen::RowVectorXd;

/// log π(a_j) and H_j of every column of `out` (the distribution's batched members).
template <class D>
void batch(const Matrix& out, const typename D::template actions_type<double>& actions, Row& log_prob, Row& entropy) {
  typename D::template workspace_type<double> ws;
  const auto b = static_cast<std::size_t>(out.cols());
  ws.reserve(static_cast<std::size_t>(out.rows()), b);
  log_prob.resize(out.cols());
  entropy.resize(out.cols());
  D::template log_prob_entropy<double>(out, actions, b, ws, log_prob, entropy);
}

/// The distribution's gradient with coefficients (coef, ent) against central differences of
/// Σ_j coef_j log π(a_j) − ent Σ_j H_j in every entry of the output.
template <class D>
double worst_gradient_error(const Matrix& out, const typename D::template actions_type<double>& actions,
                            const Row& coef, double ent) {
  typename D::template workspace_type<double> ws;
  const auto b = static_cast<std::size_t>(out.cols());
  ws.reserve(static_cast<std::size_t>(out.rows()), b);
  Row log_prob(out.cols()), entropy(out.cols());
  D::template log_prob_entropy<double>(out, actions, b, ws, log_prob, entropy);
  Matrix analytic(out.rows(), out.cols());
  D::template gradient<double>(out, actions, b, coef, ent, ws, entropy, analytic);
  const auto objective = [&](const Matrix& x) {
    Row lp, h;
    batch<D>(x, actions, lp, h);
    return (coef.array() * lp.array()).sum() - ent * h.sum();
  };
  double worst = 0;
  const double step = 1e-6;
  for (Eigen::Index r = 0; r < out.rows(); ++r)
    for (Eigen::Index c = 0; c < out.cols(); ++c) {
      Matrix up = out, down = out;
      up(r, c) += step;
      down(r, c) -= step;
      const double numeric = (objective(up) - objective(down)) / (2 * step);
      worst = std::max(worst, std::abs(numeric - analytic(r, c)) / std::max(1.0, std::abs(numeric)));
    }
  return worst;
}

TEST_CASE(
    "Categorical: batched log-probabilities and entropies are the one-sample ones, and its gradient is "
    "∂log π(a)/∂ℓ and ∂H/∂ℓ by finite differences",
    "[distributions]") {
  Xoshiro256StarStar gen(3);
  Matrix logits(4, 5);
  for (Eigen::Index k = 0; k < logits.size(); ++k) logits(k) = 2 * standard_normal(gen);
  const std::vector<Action> actions = {0, 3, 1, 1, 2};
  Row log_prob, entropy;
  batch<Categorical>(logits, actions, log_prob, entropy);
  for (Eigen::Index j = 0; j < 5; ++j) {
    const Eigen::VectorXd l = logits.col(j);
    const double lse = l.maxCoeff() + std::log((l.array() - l.maxCoeff()).exp().sum());
    const Eigen::VectorXd logp = l.array() - lse;
    CHECK(log_prob[j] == Approx(logp[static_cast<Eigen::Index>(actions[static_cast<std::size_t>(j)])]).epsilon(1e-14));
    CHECK(entropy[j] == Approx(-(logp.array().exp() * logp.array()).sum()).epsilon(1e-14));
  }
  const Row ones = Row::Ones(5), zeros = Row::Zero(5);
  Row mixed(5);
  mixed << 0.3, -1.2, 0.0, 2.0, -0.4;
  CHECK(worst_gradient_error<Categorical>(logits, actions, ones, 0.0) < 1e-8);    // ∂log π(a)/∂ℓ
  CHECK(worst_gradient_error<Categorical>(logits, actions, zeros, -1.0) < 1e-8);  // ∂H/∂ℓ
  CHECK(worst_gradient_error<Categorical>(logits, actions, mixed, 0.05) < 1e-8);  // the loss's combination
  std::vector<Action> bad = {0, 4, 1, 1, 2};
  CHECK_THROWS_WITH(Categorical::check_actions("who", bad, 5, 4),
                    "who: minibatch.actions[1] = 4, expected < num_actions = 4");
  CHECK_THROWS_WITH(Categorical::check_policy_dim("who", 0),
                    "who: a categorical policy needs at least one logit, got policy_dim 0");
}

TEST_CASE(
    "DiagonalGaussian: batched log-densities and entropies are the closed forms, and its gradient is "
    "∂log π(a)/∂[μ; s] and ∂H/∂[μ; s] by finite differences",
    "[distributions]") {
  Xoshiro256StarStar gen(4);
  Matrix out(4, 6);  // k = 2: [μ; s]
  for (Eigen::Index k = 0; k < out.size(); ++k) out(k) = 0.7 * standard_normal(gen);
  Matrix actions(2, 6);
  for (Eigen::Index k = 0; k < actions.size(); ++k) actions(k) = standard_normal(gen);
  Row log_prob, entropy;
  batch<DiagonalGaussian>(out, actions, log_prob, entropy);
  for (Eigen::Index j = 0; j < 6; ++j) {
    CHECK(log_prob[j] ==
          Approx(diagonal_gaussian_log_prob(actions.col(j), out.col(j).head(2), out.col(j).tail(2))).epsilon(1e-13));
    CHECK(entropy[j] == Approx(diagonal_gaussian_entropy(out.col(j).tail(2))).epsilon(1e-13));
  }
  const Row ones = Row::Ones(6), zeros = Row::Zero(6);
  Row mixed(6);
  mixed << 0.3, -1.2, 0.0, 2.0, -0.4, 1.0;
  CHECK(worst_gradient_error<DiagonalGaussian>(out, actions, ones, 0.0) < 1e-8);
  CHECK(worst_gradient_error<DiagonalGaussian>(out, actions, zeros, -1.0) < 1e-8);
  CHECK(worst_gradient_error<DiagonalGaussian>(out, actions, mixed, 0.05) < 1e-8);
  actions(1, 3) = std::nan("");
  CHECK_THROWS_WITH(DiagonalGaussian::check_actions("who", actions, 6, 4),
                    "who: minibatch.actions(1, 3) = nan, expected a finite action");
  CHECK_THROWS_WITH(DiagonalGaussian::check_policy_dim("who", 3),
                    "who: a Gaussian policy's output has 2k rows (means, log standard deviations), got 3");
}

TEST_CASE("act draws what the distribution's sampler draws, stores the action and returns its log-probability",
          "[distributions]") {
  Eigen::VectorXf logits(3);
  logits << 0.5f, -1.0f, 2.0f;
  std::vector<Action> stored(2, 7);
  DefaultGenerator a(11), b(11);
  Action action = 9;
  const double lp = Categorical::act<float>("who", logits, ActionSelection::sample, a, action, stored, 1);
  const CategoricalSample s = sample_categorical(logits, b);
  CHECK(action == s.action);
  CHECK(stored[1] == s.action);
  CHECK(lp == s.log_prob);
  CHECK(a == b);
  CHECK(Categorical::act<float>("who", logits, ActionSelection::greedy, a, action, stored, 0) == 0.0);
  CHECK(action == 2);
  CHECK(stored[0] == 2);
  CHECK(a == b);  // greedy draws nothing

  // A float policy handing out double actions: the stored column and the action hold the same
  // numbers, drawn as sample_diagonal_gaussian draws them.
  Eigen::VectorXf column(4);
  column << 0.2f, -0.3f, 0.5f, -1.0f;
  Eigen::MatrixXf kept = Eigen::MatrixXf::Zero(2, 3);
  Eigen::Vector2d taken;
  DefaultGenerator c(5), d(5);
  const double glp = DiagonalGaussian::act<float>("who", column, ActionSelection::sample, c, taken, kept, 2);
  Eigen::VectorXf reference;
  const double rlp = sample_diagonal_gaussian(column.head(2), column.tail(2), d, reference);
  CHECK(kept.col(2) == reference);
  CHECK(taken == reference.cast<double>());
  CHECK(glp == rlp);
  CHECK(c == d);
  CHECK(DiagonalGaussian::holds(kept, 2, taken));
  CHECK(!DiagonalGaussian::holds(kept, 1, taken));
  Eigen::Matrix<double, 1, 1> narrow;
  CHECK_THROWS_WITH(DiagonalGaussian::act<float>("who", column, ActionSelection::sample, c, narrow, kept, 0),
                    "who: actions of dimension 2 do not fit the action type, of dimension 1");
  CHECK(c == d);  // refused before drawing
}

TEST_CASE("greedy_action takes the first largest logit and draws nothing, and non-finite logits are refused",
          "[sampling]") {
  CHECK(greedy_action(Eigen::Vector4f(0.5f, -1.0f, 2.0f, 0.0f)) == 2);
  CHECK(greedy_action(Eigen::Vector3d(1.0, 3.0, 3.0)) == 1);  // a tie: the first
  CHECK(greedy_action(Eigen::VectorXd::Constant(1, -5.0)) == 0);
  CHECK_THROWS_WITH(greedy_action(Eigen::Vector2d(0.0, std::numeric_limits<double>::quiet_NaN())),
                    Catch::Contains("greedy_action: logits[1] must be finite, got nan"));
  CHECK_THROWS_WITH(greedy_action(Eigen::VectorXd(0)), Catch::Contains("greedy_action: logits must hold at least one"));
}

TEST_CASE("sample_categorical draws each action with its softmax probability using one uniform_real a draw",
          "[sampling]") {
  const Eigen::Vector4f logits(0.5f, -1.0f, 2.0f, 0.0f);
  Eigen::Vector4d p = logits.cast<double>().array().exp();
  p /= p.sum();
  Xoshiro256StarStar gen(17);
  const std::size_t draws = 200000;
  std::array<std::size_t, 4> counts{};
  for (std::size_t k = 0; k < draws; ++k) {
    Xoshiro256StarStar before = gen;
    const CategoricalSample s = sample_categorical(logits, gen);
    (void)before();
    REQUIRE(before == gen);  // exactly one 64-bit word (one uniform_real) per draw
    ++counts[s.action];
    REQUIRE(s.log_prob == Approx(std::log(p[static_cast<Eigen::Index>(s.action)])).epsilon(1e-6));
  }
  for (std::size_t a = 0; a < 4; ++a) {
    // Binomial(draws, p_a): the count is within 5 standard deviations (a correct sampler fails this
    // with probability below 6e-7 per action; the seed is fixed).
    const double mean = static_cast<double>(draws) * p[static_cast<Eigen::Index>(a)];
    const double sd = std::sqrt(mean * (1 - p[static_cast<Eigen::Index>(a)]));
    INFO("action " << a << ": " << counts[a] << " draws, expected " << mean << " ± " << sd);
    CHECK(std::abs(static_cast<double>(counts[a]) - mean) < 5 * sd);
  }
  // The inverse CDF exactly: u = uniform_real picks the first k with u·W < w_0 + ... + w_k.
  Xoshiro256StarStar replay(17), gen2(17);
  for (int k = 0; k < 1000; ++k) {
    const double u = uniform_real(replay);
    double c = 0;
    std::size_t expected = 3;
    for (std::size_t a = 0; a < 4; ++a) {
      c += p[static_cast<Eigen::Index>(a)];
      if (u < c) {
        expected = a;
        break;
      }
    }
    CHECK(sample_categorical(logits, gen2).action == expected);
  }
  // A one-hot distribution always gives its action; non-finite logits are refused.
  const Eigen::Vector3d certain(0.0, -1e6, -1e6);
  for (int k = 0; k < 100; ++k) CHECK(sample_categorical(certain, gen).action == 0);
  const Eigen::Vector2d bad(0.0, std::numeric_limits<double>::quiet_NaN());
  CHECK_THROWS_WITH(sample_categorical(bad, gen), Catch::Contains("sample_categorical: logits[1] must be finite"));
}

}  // namespace distributions_test
