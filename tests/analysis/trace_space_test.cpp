// Tests of analysis/trace_space.hpp: the basis of eq. (4) and the projection of Figure 2 (an
// isometry on the subspace, the simplex's vertices equidistant, window centres as in the caption of
// Figure 2), box counting, the box-counting estimate of dim(Z_λ) against d_λ of
// Lemma 4.4, and bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/analysis/trace_space.hpp>
#include <numbers>
#include <set>
#include <vector>

namespace trace_space_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// The largest |a_ij - b_ij| of two distance matrices of the columns of x and y.
double distance_mismatch(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
  double worst = 0.0;
  for (Eigen::Index i = 0; i < x.cols(); ++i)
    for (Eigen::Index j = i + 1; j < x.cols(); ++j)
      worst = std::max(worst, std::abs((x.col(i) - x.col(j)).norm() - (y.col(i) - y.col(j)).norm()));
  return worst;
}

}  // namespace

TEST_CASE("trace_space_basis is an orthonormal basis of the directions of eq. (4)", "[trace_space]") {
  for (std::size_t n = 2; n <= 7; ++n) {
    const Eigen::MatrixXd u = trace_space_basis(n);
    INFO("|Y| = " << n);
    REQUIRE(u.rows() == static_cast<Eigen::Index>(n));
    REQUIRE(u.cols() == static_cast<Eigen::Index>(n - 1));
    CHECK((u.transpose() * u - Eigen::MatrixXd::Identity(u.cols(), u.cols())).cwiseAbs().maxCoeff() < 1e-15);
    CHECK((u.transpose() * Eigen::VectorXd::Ones(u.rows())).cwiseAbs().maxCoeff() < 1e-15);
  }
  // |Y| = 3: an upright equilateral triangle, e_0 bottom left, e_1 bottom right, e_2 on top.
  const Eigen::MatrixXd vertices = trace_space_coordinates(Eigen::MatrixXd::Identity(3, 3));
  const double s2 = std::numbers::sqrt2, s6 = std::sqrt(6.0);
  Eigen::MatrixXd expected(2, 3);
  expected << -1 / s2, 1 / s2, 0, -1 / s6, -1 / s6, 2 / s6;
  CHECK((vertices - expected).cwiseAbs().maxCoeff() < 1e-15);
  // |Y| = 4: e_3 straight above the centre of that triangle.
  const Eigen::MatrixXd tetra = trace_space_coordinates(Eigen::MatrixXd::Identity(4, 4));
  CHECK(tetra.col(3).head(2).norm() < 1e-15);
  CHECK(tetra(2, 3) > 0.0);
  CHECK(tetra.row(2).head(3).cwiseAbs().maxCoeff() == Approx(1.0 / std::sqrt(12.0)));
}

TEST_CASE("the projection is an isometry on eq. (4) and keeps the simplex regular", "[trace_space]") {
  for (std::size_t n = 2; n <= 6; ++n) {
    // The vertices e_y: pairwise √2 apart, each √(1 - 1/|Y|) from the centre 1/|Y|, which maps to 0.
    const auto nn = static_cast<Eigen::Index>(n);
    const Eigen::MatrixXd vertices = trace_space_coordinates(Eigen::MatrixXd::Identity(nn, nn));
    INFO("|Y| = " << n);
    for (Eigen::Index i = 0; i < nn; ++i) {
      CHECK(vertices.col(i).norm() == Approx(std::sqrt(1.0 - 1.0 / static_cast<double>(n))).epsilon(1e-15));
      for (Eigen::Index j = i + 1; j < nn; ++j)
        CHECK((vertices.col(i) - vertices.col(j)).norm() == Approx(std::numbers::sqrt2).epsilon(1e-15));
    }
    CHECK(trace_space_coordinates(Eigen::VectorXd::Constant(nn, 1.0 / static_cast<double>(n))).norm() < 1e-15);
  }
  // Z_λ^m lies on Σ z = 1 - λ^m: every pairwise distance survives the projection.
  for (const std::size_t n : {3u, 4u})
    for (const double lambda : {0.2, 0.5, 0.8}) {
      const Eigen::MatrixXd z = trace_set(lambda, n, n == 3 ? 4 : 3);
      INFO("|Y| = " << n << ", lambda = " << lambda);
      CHECK(distance_mismatch(z, trace_space_coordinates(z)) < 1e-14);
    }
  // Off the subspace it is not: the zero trace and 1/|Y| differ but project to the same point.
  CHECK(trace_space_coordinates(Eigen::VectorXd::Zero(3)).norm() == 0.0);
}

TEST_CASE("projected coordinates of Z_lambda^m (|Y| = 3, 4) give the traces back and are self-similar, as in Figure 2",
          "[trace_space]") {
  for (const std::size_t n : {3u, 4u})
    for (const double lambda : {0.3, 0.5, 0.7}) {
      const std::size_t m = 5;
      const auto nn = static_cast<Eigen::Index>(n);
      const Eigen::MatrixXd z = trace_set(lambda, n, m);
      const Eigen::MatrixXd c = trace_space_coordinates(z);
      const Eigen::MatrixXd vertices = trace_space_coordinates(Eigen::MatrixXd::Identity(nn, nn));
      INFO("|Y| = " << n << ", lambda = " << lambda);
      REQUIRE(c.rows() == nn - 1);
      REQUIRE(c.cols() == z.cols());
      // Coordinates are uᵀz; the traces are recovered from them and their sum 1 - λ^m.
      const Eigen::MatrixXd u = trace_space_basis(n);
      CHECK((c - u.transpose() * z).cwiseAbs().maxCoeff() < 1e-15);
      const double sum = trace_subspace_sum(lambda, m);
      const Eigen::MatrixXd back = u * c + Eigen::MatrixXd::Constant(nn, z.cols(), sum / static_cast<double>(n));
      CHECK((back - z).cwiseAbs().maxCoeff() < 1e-15);
      // Self-similarity in the picture: column y + |Y| j is λ (column j of Z^{m-1}) + (1 - λ) e_y.
      const Eigen::MatrixXd older = trace_space_coordinates(trace_set(lambda, n, m - 1));
      double worst = 0.0;
      for (Eigen::Index j = 0; j < older.cols(); ++j)
        for (Eigen::Index y = 0; y < nn; ++y)
          worst = std::max(worst, (c.col(y + nn * j) - lambda * older.col(j) - (1 - lambda) * vertices.col(y)).norm());
      CHECK(worst < 1e-15);
      // Caption of Figure 2: the centre of the triangle of all traces that share a length-k
      // window w is the trace of w itself (e.g. (1 - λ) e_y for k = 1), projected. Column j of
      // Z^m has the window of column j mod |Y|^k of Z^k.
      for (const std::size_t k : {1u, 2u}) {
        const Eigen::MatrixXd centres = trace_space_coordinates(trace_set(lambda, n, k));
        const Eigen::Index windows = centres.cols();
        Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(nn - 1, windows);
        for (Eigen::Index j = 0; j < c.cols(); ++j) mean.col(j % windows) += c.col(j);
        mean /= static_cast<double>(c.cols() / windows);
        CHECK((mean - centres).cwiseAbs().maxCoeff() < 1e-14);
      }
      CHECK((trace_space_coordinates(trace_set(lambda, n, 1)) - (1 - lambda) * vertices).cwiseAbs().maxCoeff() < 1e-15);
    }
}

TEST_CASE("count_boxes counts occupied boxes, not points", "[trace_space]") {
  Eigen::MatrixXd points(2, 5);
  points << 0.05, 0.06, 0.15, -0.05, 0.95,  //
      0.05, 0.07, 0.05, 0.05, 0.95;
  CHECK(count_boxes(points, 0.1) == 4);  // (0, 0) twice, (1, 0), (-1, 0), (9, 9)
  CHECK(count_boxes(points, 1.0) == 2);  // (0, 0) four times, (-1, 0)
  CHECK(count_boxes(points, 1.0, Eigen::Vector2d(0.06, 0.0)) == 2);
  CHECK(count_boxes(points, 1.0, Eigen::Vector2d(0.5, 0.0)) == 2);    // x + 0.5: 0.55, 0.56, 0.65, 0.45 | 1.45
  CHECK(count_boxes(points, 10.0, Eigen::Vector2d(0.04, 0.0)) == 2);  // -0.01 falls below 0
  CHECK(count_boxes(points, 10.0, Eigen::Vector2d(0.06, 0.0)) == 1);
  CHECK(count_boxes(Eigen::MatrixXd(2, 0), 0.1) == 0);
  // Eleven dimensions with a fine grid overflow one 64-bit key: the fallback counts the same as a
  // std::set of the box coordinates.
  const Eigen::MatrixXd z = trace_space_coordinates(trace_set(0.3, 12, 3));
  for (const double epsilon : {0.5, 0.01, 1e-4}) {
    std::set<std::vector<std::int64_t>> boxes;
    for (Eigen::Index j = 0; j < z.cols(); ++j) {
      std::vector<std::int64_t> box;
      for (Eigen::Index i = 0; i < z.rows(); ++i)
        box.push_back(static_cast<std::int64_t>(std::floor(z(i, j) / epsilon)));
      boxes.insert(box);
    }
    INFO("epsilon = " << epsilon);
    CHECK(count_boxes(z, epsilon) == boxes.size());
  }
  CHECK(count_boxes(z, 1e-4) == 1728);  // Z_0.3^3 has |Y|^3 distinct points (Theorem 4.1)
}

TEST_CASE("box_counting_length makes Z_lambda^m approximate Z_lambda within the box size", "[trace_space]") {
  for (const double lambda : {0.1, 0.3, 0.5, 0.9})
    for (const std::size_t n : {2u, 3u, 4u}) {
      const double epsilon = 0.002, approximation = 0.25;
      const std::size_t m = box_counting_length(lambda, n, epsilon, approximation);
      const double radius = std::sqrt(1.0 - 1.0 / static_cast<double>(n));
      INFO("lambda = " << lambda << ", |Y| = " << n);
      CHECK(std::pow(lambda, static_cast<double>(m)) * radius <= approximation * epsilon);
      CHECK(std::pow(lambda, static_cast<double>(m - 1)) * radius > approximation * epsilon);  // the smallest
    }
  CHECK(box_counting_length(0.0, 3, 0.01) == 1);  // Z_0 = Z_0^1, the vertices
}

// Tolerance of the box-counting estimate for λ < 1/2. Measured with the default options (12 sides
// from 0.1 to 0.002, minimum over 8 shifted grids), the error against d_λ over |Y| ∈ {2, 3, 4} and
// λ ∈ {0.1, 0.2, 0.3, 0.4, 0.45} is at most 0.032 (|Y| = 4, λ = 0.2: 0.829 against 0.861); the
// residual comes from the log-periodic wobble of N(ε) of a self-similar set over a finite range of ε.
// 0.06 is about twice that, and still well below what a broken estimate misses by: d_λ changes by
// at least 0.13 when λ moves by 0.1 on this grid (so an estimate that uses a wrong λ fails), and
// counting points instead of boxes gives a slope of 0 (the points of Z_λ^m are all distinct).
constexpr double box_counting_tolerance = 0.06;

namespace {

/// The default box-counting estimate of dim(Z_λ) against d_λ, and against the d_λ of λ ± 0.1.
void check_box_counting(std::size_t n, double lambda) {
  const BoxCountingEstimate estimate = box_counting_dimension(lambda, n);
  INFO("|Y| = " << n << ", lambda = " << lambda << ", m = " << estimate.length << ", estimate " << estimate.dimension
                << ", d_lambda " << d_lambda(lambda, n));
  REQUIRE(estimate.epsilons.size() == 12);
  REQUIRE(estimate.counts.size() == 12);
  CHECK(estimate.epsilons.front() == 0.1);
  CHECK(estimate.epsilons.back() == 0.002);
  CHECK(std::abs(estimate.dimension - d_lambda(lambda, n)) < box_counting_tolerance);
  // The tolerance has teeth: the dimensions of the neighbouring λ are out of reach.
  CHECK(std::abs(estimate.dimension - d_lambda(lambda - 0.1, n)) > box_counting_tolerance);
  CHECK(std::abs(estimate.dimension - d_lambda(lambda + 0.1, n)) > box_counting_tolerance);
  // N(ε) counts boxes: more at the finest side than at the coarsest, fewer than the points.
  CHECK(estimate.counts.back() > estimate.counts.front());
  CHECK(static_cast<double>(estimate.counts.back()) < std::pow(static_cast<double>(n), estimate.length));
  // The fitted line goes through the data: its residuals are small next to the range of log N.
  for (std::size_t k = 0; k < estimate.counts.size(); ++k) {
    const double fit = estimate.intercept - estimate.dimension * std::log(estimate.epsilons[k]);
    CHECK(std::abs(std::log(static_cast<double>(estimate.counts[k])) - fit) < 0.25);
  }
}

}  // namespace

// Z_λ^m has |Y|^m points with m = box_counting_length(λ, |Y|, 0.002): 3^9 for λ = 0.4 and 4^7 for
// λ = 0.3; |Y| = 4 with λ = 0.4 (4^9 points) is left to the example program.
TEST_CASE("box counting agrees with d_lambda of Lemma 4.4 for lambda < 1/2, |Y| = 2", "[trace_space][lemma]") {
  for (const double lambda : {0.2, 0.3, 0.4}) check_box_counting(2, lambda);
}

TEST_CASE("box counting agrees with d_lambda of Lemma 4.4 for lambda < 1/2, |Y| = 3", "[trace_space][lemma]") {
  for (const double lambda : {0.2, 0.3, 0.4}) check_box_counting(3, lambda);
}

TEST_CASE("box counting agrees with d_lambda of Lemma 4.4 for lambda < 1/2, |Y| = 4", "[trace_space][lemma]") {
  for (const double lambda : {0.2, 0.3}) check_box_counting(4, lambda);
}

TEST_CASE("box counting stays below |Y| - 1 for lambda >= 1/2 (Lemma 4.4)", "[trace_space][lemma]") {
  // Z_λ^m grows like |Y|^m with m ~ log(ε_min) / log(λ): coarser boxes and a coarser approximation
  // (Z_λ^m within ε_min of Z_λ) keep the enumeration small (3^9 points at λ = 0.7).
  BoxCountingOptions options;
  options.epsilon_max = 0.25;
  options.epsilon_min = 0.04;
  options.num_epsilons = 8;
  options.num_offsets = 4;
  options.approximation = 1.0;
  for (const std::size_t n : {2u, 3u})
    for (const double lambda : {0.5, 0.6, 0.7}) {
      const BoxCountingEstimate estimate = box_counting_dimension(lambda, n, options);
      INFO("|Y| = " << n << ", lambda = " << lambda << ", m = " << estimate.length << ", estimate "
                    << estimate.dimension);
      CHECK(estimate.dimension <= static_cast<double>(n - 1) + box_counting_tolerance);
      CHECK(estimate.dimension <= minkowski_dimension_bound(lambda, n) + box_counting_tolerance);
    }
}

TEST_CASE("trace space refuses bad input with the argument and its value", "[trace_space]") {
  using Catch::Contains;
  REQUIRE_THROWS_WITH(trace_space_basis(1), Contains("trace_space_basis: num_observations must be at least 2, got 1"));
  REQUIRE_THROWS_WITH(trace_space_basis(0), Contains("num_observations must be at least 1, got 0"));
  REQUIRE_THROWS_WITH(trace_space_basis(40000),
                      Contains("trace_space_basis: num_observations must be at most 32768 (a dense |Y| x (|Y| - 1) "
                               "basis), got 40000"));
  REQUIRE_THROWS_WITH(trace_space_coordinates(Eigen::MatrixXd::Zero(1, 4)),
                      Contains("trace_space_coordinates: num_observations must be at least 2, got 1"));
  const Eigen::MatrixXd points = Eigen::MatrixXd::Zero(2, 3);
  REQUIRE_THROWS_WITH(count_boxes(points, 0.0), Contains("count_boxes: epsilon must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(count_boxes(points, -1.0), Contains("epsilon must be positive and finite, got -1"));
  REQUIRE_THROWS_WITH(count_boxes(points, NAN), Contains("epsilon must be positive and finite, got nan"));
  REQUIRE_THROWS_WITH(count_boxes(points, 0.1, Eigen::Vector3d::Zero()),
                      Contains("count_boxes: offset must have one entry per row of points (2), got 3"));
  REQUIRE_THROWS_WITH(count_boxes(points, 0.1, Eigen::Vector2d(0.0, NAN)),
                      Contains("count_boxes: offset[1] must be finite, got nan"));
  REQUIRE_THROWS_WITH(count_boxes(points, 1e-300, Eigen::Vector2d(1.0, 0.0)),
                      Contains("count_boxes: coordinate 0 of point 0 is too large for epsilon = 1e-300"));
  Eigen::MatrixXd nan_point = points;
  nan_point(1, 2) = NAN;
  REQUIRE_THROWS_WITH(count_boxes(nan_point, 0.1), Contains("count_boxes: coordinate nan of point 2 is not finite"));

  REQUIRE_THROWS_WITH(box_counting_length(1.0, 3, 0.01),
                      Contains("box_counting_length: lambda must be in [0, 1), got 1"));
  REQUIRE_THROWS_WITH(box_counting_length(0.5, 1, 0.01),
                      Contains("box_counting_length: num_observations must be at least 2, got 1"));
  REQUIRE_THROWS_WITH(box_counting_length(0.5, 3, 0.0),
                      Contains("box_counting_length: epsilon_min must be positive and finite, got 0"));
  REQUIRE_THROWS_WITH(box_counting_length(0.5, 3, 0.01, -0.5),
                      Contains("box_counting_length: approximation must be positive and finite, got -0.5"));

  REQUIRE_THROWS_WITH(box_counting_dimension(-0.1, 3),
                      Contains("box_counting_dimension: lambda must be in [0, 1), got -0.1"));
  REQUIRE_THROWS_WITH(box_counting_dimension(1.0, 3), Contains("lambda must be in [0, 1), got 1"));
  REQUIRE_THROWS_WITH(box_counting_dimension(NAN, 3), Contains("lambda must be in [0, 1), got nan"));
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 1),
                      Contains("box_counting_dimension: num_observations must be at least 2, got 1"));
  BoxCountingOptions options;
  options.epsilon_min = 0.0;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options),
                      Contains("box_counting_dimension: epsilon_min must be positive and finite, got 0"));
  options.epsilon_min = 0.1;
  options.epsilon_max = 0.1;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options),
                      Contains("epsilon_max must be finite and above epsilon_min = 0.1, got 0.1"));
  options.epsilon_max = INFINITY;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options),
                      Contains("epsilon_max must be finite and above epsilon_min = 0.1, got inf"));
  options = {};
  options.num_epsilons = 1;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options), Contains("num_epsilons must be at least 2, got 1"));
  options = {};
  options.num_offsets = 0;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options), Contains("num_offsets must be at least 1, got 0"));
  options = {};
  options.approximation = 0.0;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.3, 3, options),
                      Contains("approximation must be positive and finite, got 0"));
  // The enumeration budget is checked before anything is allocated: λ = 0.9 needs m = 71 here
  // (3^71 overflows std::size_t), and λ = 0.5 needs 3^11 = 177147 points.
  options = {};
  REQUIRE_THROWS_WITH(box_counting_dimension(0.9, 3, options),
                      Contains("box_counting_dimension: Z_lambda^m with lambda = 0.9, |Y| = 3 and m = 71 (for "
                               "epsilon_min = 0.002) has 3^71 points, more than max_points = 1048576"));
  options.max_points = static_cast<std::size_t>(-1);
  REQUIRE_THROWS_WITH(box_counting_dimension(0.9, 3, options),
                      Contains("has 3^71 points, more than max_points = 18446744073709551615"));
  options.max_points = 100000;
  REQUIRE_THROWS_WITH(box_counting_dimension(0.5, 3, options),
                      Contains("lambda = 0.5, |Y| = 3 and m = 11 (for epsilon_min = 0.002) has 3^11 points, more "
                               "than max_points = 100000"));
}

}  // namespace trace_space_test
