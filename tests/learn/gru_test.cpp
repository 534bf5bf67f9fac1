// The GRU (learn/gru.hpp): torch.nn.GRU's equations written out one environment and one entry at a
// time, the sequence forward equal to acting step by step with resets, MultiHot inputs equal to
// their dense columns, the gradient through time (across an episode start inside the sequence)
// against central finite differences, and bad input refused.
#include "eigen_throws.hpp"  // first: before Eigen (the program counts allocations)

#include <Eigen/Core>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/features.hpp>
#include <memtrace/learn/gru.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <vector>

namespace gru_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

using Matrix = Eigen::MatrixXd;

double sigmoid(double a) { return 1.0 / (1.0 + std::exp(-a)); }

/// torch.nn.GRU's equations, one environment and one entry at a time.
Matrix reference_outputs(const Gru<double>& gru, const Matrix& x, std::span<const bool> starts, const Matrix& initial) {
  const auto h = static_cast<Eigen::Index>(gru.hidden_dim());
  const Eigen::Index b = initial.cols(), steps = x.cols() / b;
  const auto wi = gru.input_layer().weights(0);
  const auto bi = gru.input_layer().bias(0);
  const auto wh = gru.weight_hh();
  const auto bh = gru.bias_hh();
  Matrix out(h, x.cols());
  for (Eigen::Index e = 0; e < b; ++e) {
    Eigen::VectorXd state = initial.col(e);
    for (Eigen::Index t = 0; t < steps; ++t) {
      const Eigen::Index c = t * b + e;
      if (starts[static_cast<std::size_t>(c)]) state.setZero();
      Eigen::VectorXd next(h);
      for (Eigen::Index k = 0; k < h; ++k) {
        double ir = bi[k], iz = bi[h + k], in = bi[2 * h + k];
        for (Eigen::Index j = 0; j < x.rows(); ++j) {
          ir += wi(k, j) * x(j, c);
          iz += wi(h + k, j) * x(j, c);
          in += wi(2 * h + k, j) * x(j, c);
        }
        double hr = bh[k], hz = bh[h + k], hn = bh[2 * h + k];
        for (Eigen::Index j = 0; j < h; ++j) {
          hr += wh(k, j) * state[j];
          hz += wh(h + k, j) * state[j];
          hn += wh(2 * h + k, j) * state[j];
        }
        const double r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = std::tanh(in + r * hn);
        next[k] = (1 - z) * n + z * state[k];
      }
      state = next;
      out.col(c) = state;
    }
  }
  return out;
}

/// A GRU with every parameter set (the biases too, which start at zero).
Gru<double> make_gru(std::size_t d, std::size_t h, std::uint64_t seed) {
  Gru<double> gru(d, h);
  auto gen = make_stream(seed, 0);
  gru.initialize_orthogonal(gen);
  gru.input_layer().bias(0).setLinSpaced(-0.4, 0.5);
  gru.bias_hh().setLinSpaced(0.3, -0.3);
  return gru;
}

Matrix uniform_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  auto gen = make_stream(seed, 1);
  return Matrix::NullaryExpr(rows, cols, [&](Eigen::Index, Eigen::Index) { return 2 * uniform_real(gen) - 1; });
}

// 4 steps of 3 environments: environment 1 starts an episode at step 2, environment 2 at steps 0 and 3.
const std::array<bool, 12> starts{false, false, true,   //
                                  false, false, false,  //
                                  false, true,  false,  //
                                  false, false, true};

}  // namespace

TEST_CASE("Gru computes torch.nn.GRU's equations over a sequence, resetting the state where episodes start", "[gru]") {
  auto gru = make_gru(5, 4, 1);
  const Matrix x = uniform_matrix(5, 12, 2);
  const Matrix initial = uniform_matrix(4, 3, 3);
  const Matrix out = gru.forward(x, starts, initial);
  const Matrix expected = reference_outputs(gru, x, starts, initial);
  CHECK((out - expected).cwiseAbs().maxCoeff() < 1e-12);
  // The reset matters: without it environment 1's outputs from step 2 on differ.
  const std::array<bool, 12> none{};
  const Matrix unreset = gru.forward(x, none, initial);
  CHECK((unreset.col(7) - out.col(7)).norm() > 1e-3);
  CHECK((unreset.col(4) - out.col(4)).norm() == 0.0);  // before the reset: the same
  CHECK(gru.num_parameters() == 3 * 4 * (5 + 4 + 2));
}

TEST_CASE("Gru::step, with the state zeroed where an episode starts, gives forward's outputs", "[gru]") {
  auto gru = make_gru(5, 4, 4);
  const Matrix x = uniform_matrix(5, 12, 5);
  const Matrix initial = uniform_matrix(4, 3, 6);
  const Matrix out = gru.forward(x, starts, initial);
  Matrix states = initial;
  for (Eigen::Index t = 0; t < 4; ++t) {
    for (Eigen::Index e = 0; e < 3; ++e)
      if (starts[static_cast<std::size_t>(3 * t + e)]) states.col(e).setZero();
    gru.step(x.middleCols(3 * t, 3), states);
    CHECK((states - out.middleCols(3 * t, 3)).cwiseAbs().maxCoeff() < 1e-14);
  }
}

TEST_CASE("Gru reads MultiHot inputs as their dense columns, forward and backward", "[gru]") {
  auto sparse = make_gru(6, 3, 7);
  auto dense = sparse;
  std::vector<MultiHot<>> columns;
  Matrix x = Matrix::Zero(6, 8);
  for (Eigen::Index c = 0; c < 8; ++c) {
    const MultiHot<> column{static_cast<std::size_t>(c % 6), static_cast<std::size_t>((c * 5 + 1) % 6)};
    for (const std::size_t i : column) x(static_cast<Eigen::Index>(i), c) += 1;
    columns.push_back(column);
  }
  const std::array<bool, 8> two_starts{false, false, false, true, false, false, false, false};
  const Matrix initial = uniform_matrix(3, 2, 8);
  const Matrix a = sparse.forward(columns, two_starts, initial);
  const Matrix b = dense.forward(x, two_starts, initial);
  CHECK((a - b).cwiseAbs().maxCoeff() < 1e-14);
  const Matrix d_output = uniform_matrix(3, 8, 9);
  sparse.backward(columns, d_output);
  dense.backward(x, d_output);
  for (std::size_t block = 0; block < 2; ++block) {
    const auto ga = sparse.gradients()[block];
    const auto gb = dense.gradients()[block];
    REQUIRE(ga.size() == gb.size());
    for (std::size_t i = 0; i < ga.size(); ++i) CHECK(ga[i] == Approx(gb[i]).margin(1e-14));
  }
}

TEST_CASE("Gru's gradient through time, across episode starts, equals central finite differences", "[gru]") {
  auto gru = make_gru(5, 4, 10);
  const Matrix x = uniform_matrix(5, 12, 11);
  const Matrix initial = uniform_matrix(4, 3, 12);
  const Matrix weights = uniform_matrix(4, 12, 13);  // L = Σ weights ⊙ h_t (weights²: quadratic too)
  const auto loss = [&](Gru<double>& g, const Matrix& input) {
    const Matrix out = g.forward(input, starts, initial);
    return (weights.array() * out.array()).sum() + 0.5 * out.squaredNorm();
  };
  const Matrix out = gru.forward(x, starts, initial);
  const Matrix d_output = weights + out;
  Matrix d_input;
  gru.backward(x, d_output, d_input);
  std::vector<double> analytic;
  for (const auto block : gru.gradients())
    for (const double g : block) analytic.push_back(g);
  std::size_t k = 0, nonzero = 0;
  double worst = 0;
  const double step = 1e-6;
  for (const auto block : gru.parameters())
    for (double& p : block) {
      const double saved = p;
      p = saved + step;
      const double up = loss(gru, x);
      p = saved - step;
      const double down = loss(gru, x);
      p = saved;
      const double numeric = (up - down) / (2 * step);
      INFO("parameter " << k << ": numeric " << numeric << ", analytic " << analytic[k]);
      const double error = std::abs(numeric - analytic[k]) / std::max(1.0, std::abs(numeric));
      CHECK(error < 1e-7);
      worst = std::max(worst, error);
      nonzero += analytic[k] != 0.0;
      ++k;
    }
  CHECK(k == gru.num_parameters());
  CHECK(nonzero == k);  // every weight and bias gets a gradient
  // dL/dx, the input's gradient, likewise.
  for (Eigen::Index c = 0; c < x.cols(); ++c)
    for (Eigen::Index j = 0; j < x.rows(); ++j) {
      Matrix moved = x;
      moved(j, c) += step;
      const double up = loss(gru, moved);
      moved(j, c) -= 2 * step;
      const double down = loss(gru, moved);
      CHECK(d_input(j, c) == Approx((up - down) / (2 * step)).margin(1e-7));
    }
  // The reset cuts the path: the loss of environment 1 after its start at step 2 does not depend on
  // its inputs before it.
  Matrix late = Matrix::Zero(4, 12);
  late.col(7).setOnes();
  late.col(10).setOnes();
  gru.forward(x, starts, initial);
  gru.backward(x, late, d_input);
  CHECK(d_input.col(1).norm() == 0.0);
  CHECK(d_input.col(4).norm() == 0.0);
  CHECK(d_input.col(7).norm() > 0.0);
}

TEST_CASE("Gru refuses bad sizes, naming the function, the argument and the value", "[gru][errors]") {
  CHECK_THROWS_WITH(Gru<float>(0, 4), "Gru: input_dim must be at least 1, got 0");
  CHECK_THROWS_WITH(Gru<float>(3, 0), "Gru: hidden_dim must be at least 1, got 0");
  CHECK_THROWS_WITH(Gru<float>(3, std::size_t{1} << 40), Catch::Contains("hidden_dim = 1099511627776"));
  auto gru = make_gru(5, 4, 14);
  const Matrix x = uniform_matrix(5, 12, 15);
  const Matrix initial = uniform_matrix(4, 3, 16);
  CHECK_THROWS_WITH(gru.backward(x, Matrix::Zero(4, 12)), Catch::StartsWith("Gru::backward: call forward first"));
  CHECK_THROWS_WITH(gru.forward(x, starts, uniform_matrix(4, 5, 1)),
                    "Gru::forward: x has 12 columns, expected a positive multiple of initial's 5");
  CHECK_THROWS_WITH(gru.forward(x, std::array<bool, 11>{}, initial),
                    "Gru::forward: starts has 11 entries, expected one per column of x (12)");
  CHECK_THROWS_WITH(gru.forward(x, starts, uniform_matrix(3, 3, 1)),
                    Catch::StartsWith("Gru::forward: initial is 3 x 3"));
  CHECK_THROWS_WITH(gru.forward(Matrix::Zero(4, 12), starts, initial), Catch::Contains("input has 4 rows"));
  gru.forward(x, starts, initial);
  CHECK_THROWS_WITH(gru.backward(x, Matrix::Zero(4, 11)),
                    "Gru::backward: d_output is 4 x 11, expected 4 x 12 (the last forward's outputs)");
  Matrix states = initial;
  gru.step(x.leftCols(3), states);
  CHECK_THROWS_WITH(gru.backward(x, Matrix::Zero(4, 12)), Catch::Contains("a step since then spoils its cache"));
  CHECK_THROWS_WITH(gru.step(x.leftCols(2), states), Catch::StartsWith("Gru::step: states is 4 x 3"));
}

}  // namespace gru_test
