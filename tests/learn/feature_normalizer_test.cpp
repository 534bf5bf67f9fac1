// Tests of learn/feature_normalizer.hpp: the running statistics equal a two-pass computation over
// the same stream whatever its split into batches (and after a merge of two normalisers), frozen
// means frozen, the normalisation and its clip, float and double features, a value type, and bad
// input refused with nothing changed.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace feature_normalizer_test {  // a namespace of its own: the folder's tests are compiled as one file

namespace {

using memtrace::FeatureNormalizer;
using memtrace::NormalizerOptions;

/// n feature vectors of dimension d with means far from 0 and spreads of several scales (the
/// case where a naive sum of squares loses digits): feature k has mean 1000·k and sd 10^(k mod 3 − 1).
Eigen::MatrixXd stream(std::size_t d, std::size_t n, std::uint64_t seed) {
  memtrace::DefaultGenerator gen(seed);
  Eigen::MatrixXd x(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(n));
  for (Eigen::Index k = 0; k < x.rows(); ++k)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      x(k, j) = 1000.0 * static_cast<double>(k) +
                std::pow(10.0, static_cast<double>(k % 3) - 1.0) * memtrace::standard_normal(gen);
  return x;
}

/// Two passes over all columns: the mean, then the population variance.
void two_pass(const Eigen::MatrixXd& x, Eigen::VectorXd& mean, Eigen::VectorXd& variance) {
  mean = x.rowwise().mean();
  variance = (x.colwise() - mean).array().square().rowwise().mean();
}

}  // namespace

TEST_CASE("the running statistics equal a two-pass computation for any split of the stream into batches",
          "[normalizer]") {
  const std::size_t d = 6, n = 1000;
  const Eigen::MatrixXd x = stream(d, n, 7);
  Eigen::VectorXd mean, variance;
  two_pass(x, mean, variance);

  // Batches of one size, and of sizes drawn at random (1 .. 100), including batches of one vector.
  std::vector<std::vector<std::size_t>> splits = {
      {n}, std::vector<std::size_t>(n, 1), std::vector<std::size_t>(10, 100)};
  memtrace::DefaultGenerator gen(3);
  for (int r = 0; r < 5; ++r) {
    std::vector<std::size_t> sizes;
    for (std::size_t left = n; left > 0;) {
      const std::size_t s = std::min<std::size_t>(left, 1 + memtrace::uniform_index(gen, 100));
      sizes.push_back(s);
      left -= s;
    }
    splits.push_back(sizes);
  }
  for (const auto& sizes : splits) {
    FeatureNormalizer norm(d);
    Eigen::Index first = 0;
    for (const std::size_t s : sizes) {
      norm.update(x.middleCols(first, static_cast<Eigen::Index>(s)));
      first += static_cast<Eigen::Index>(s);
    }
    REQUIRE(norm.count() == n);
    const Eigen::VectorXd v = norm.variance();
    for (Eigen::Index k = 0; k < mean.size(); ++k) {
      CHECK(std::abs(norm.mean()[k] - mean[k]) <= 1e-12 * std::max(1.0, std::abs(mean[k])));
      CHECK(std::abs(v[k] - variance[k]) <= 1e-10 * variance[k]);
    }
  }
}

TEST_CASE("a million updates of one vector each do not drift from the two-pass statistics", "[normalizer]") {
  const std::size_t n = 1'000'000;
  const Eigen::MatrixXd x = stream(3, n, 11);
  Eigen::VectorXd mean, variance;
  two_pass(x, mean, variance);
  FeatureNormalizer norm(3);
  for (Eigen::Index j = 0; j < x.cols(); ++j) norm.update(x.col(j));
  const Eigen::VectorXd v = norm.variance();
  for (Eigen::Index k = 0; k < 3; ++k) {
    CHECK(std::abs(norm.mean()[k] - mean[k]) <= 1e-11 * std::max(1.0, std::abs(mean[k])));
    CHECK(std::abs(v[k] - variance[k]) <= 1e-9 * variance[k]);
  }
}

TEST_CASE("float features and spans of vectors give the statistics of the same numbers in double", "[normalizer]") {
  const Eigen::MatrixXf xf = stream(4, 64, 5).cast<float>();
  const Eigen::MatrixXd xd = xf.cast<double>();
  FeatureNormalizer from_float(4), from_double(4), from_span(4);
  from_float.update(xf.leftCols(10));
  from_float.update(xf.rightCols(54));
  from_double.update(xd.leftCols(10));
  from_double.update(xd.rightCols(54));
  std::vector<Eigen::VectorXf> columns;
  for (Eigen::Index j = 0; j < xf.cols(); ++j) columns.emplace_back(xf.col(j));
  from_span.update(std::span<const Eigen::VectorXf>(columns.data(), 10));
  from_span.update(std::span<const Eigen::VectorXf>(columns.data() + 10, 54));
  CHECK(from_float == from_double);
  CHECK(from_span == from_double);
}

TEST_CASE("merging two normalisers gives the statistics of one that saw both streams", "[normalizer]") {
  const Eigen::MatrixXd x = stream(5, 300, 13);
  FeatureNormalizer a(5), b(5), whole(5);
  a.update(x.leftCols(120));
  b.update(x.rightCols(180));
  whole.update(x);
  a.merge(b);
  REQUIRE(a.count() == 300);
  CHECK(a.mean().isApprox(whole.mean(), 1e-14));
  CHECK(a.variance().isApprox(whole.variance(), 1e-12));
  FeatureNormalizer empty(5);
  const FeatureNormalizer before = a;
  a.merge(empty);
  CHECK(a == before);
}

TEST_CASE("normalize is clip((x - mean) / sqrt(variance + epsilon), -c, c) per feature and does not update",
          "[normalizer]") {
  FeatureNormalizer norm(3, NormalizerOptions{.epsilon = 1e-8, .clip = 5.0});
  Eigen::MatrixXd batch(3, 4);
  batch << 1, 2, 3, 4,  //
      10, 10, 10, 10,   // a constant feature: variance 0
      0, 0, 0, 100;     // a rare large value: clipped
  norm.update(batch);
  const FeatureNormalizer before = norm;
  const Eigen::Vector3d x(2.5 + std::sqrt(1.25), 10.0, 100.0);
  const Eigen::Vector3d z = norm.normalized(x);
  CHECK(norm == before);
  // Feature 0: mean 2.5, variance 1.25.
  CHECK(z[0] == Approx(std::sqrt(1.25) / std::sqrt(1.25 + 1e-8)).epsilon(1e-14));
  CHECK(z[1] == 0.0);  // x = mean of a constant feature
  // Feature 2: mean 25, variance 1875; (100 - 25)/sqrt(1875) = 1.73...; below the clip.
  CHECK(z[2] == Approx(75.0 / std::sqrt(1875.0 + 1e-8)).epsilon(1e-14));
  const Eigen::Vector3d far(-1000.0, 10.0 + 1e-3, 1e9);
  const Eigen::Vector3d zf = norm.normalized(far);
  CHECK(zf[0] == -5.0);
  CHECK(zf[1] == 5.0);  // 1e-3 / sqrt(1e-8) = 10 > c
  CHECK(zf[2] == 5.0);
  // Column by column, in place, and in float.
  Eigen::MatrixXf many(3, 2);
  many.col(0) = x.cast<float>();
  many.col(1) = far.cast<float>();
  norm.normalize(many, many);
  CHECK(many(0, 0) == Approx(z[0]).epsilon(1e-6));
  CHECK(many(0, 1) == -5.0f);
  // Infinite clip: none.
  FeatureNormalizer unclipped(1, NormalizerOptions{.clip = std::numeric_limits<double>::infinity()});
  unclipped.update(Eigen::RowVector2d(0.0, 2.0));
  CHECK(unclipped.normalized(Eigen::Matrix<double, 1, 1>(1001.0))(0, 0) == Approx(1000.0));
}

TEST_CASE("before the first update the statistics are mean 0 and variance 1, and the first update replaces them",
          "[normalizer]") {
  FeatureNormalizer norm(2);
  CHECK(norm.count() == 0);
  CHECK(norm.mean() == Eigen::Vector2d::Zero());
  CHECK(norm.variance() == Eigen::Vector2d::Ones());
  const Eigen::Vector2d z = norm.normalized(Eigen::Vector2d(3.0, -20.0));
  CHECK(z[0] == Approx(3.0).epsilon(1e-8));
  CHECK(z[1] == -10.0);  // clipped at the default c = 10
  norm.update(Eigen::Vector2d(4.0, 5.0));
  CHECK(norm.count() == 1);
  CHECK(norm.mean() == Eigen::Vector2d(4.0, 5.0));
  CHECK(norm.variance() == Eigen::Vector2d::Zero());
}

TEST_CASE("a frozen normaliser changes under no update or merge, and resumes when unfrozen", "[normalizer]") {
  const Eigen::MatrixXd x = stream(2, 50, 17);
  FeatureNormalizer norm(2);
  norm.update(x.leftCols(25));
  norm.freeze();
  CHECK(norm.frozen());
  const FeatureNormalizer frozen = norm;
  norm.update(x.rightCols(25));
  std::vector<Eigen::VectorXd> columns{x.col(0), x.col(1)};
  norm.update(std::span<const Eigen::VectorXd>(columns));
  FeatureNormalizer other(2);
  other.update(x);
  norm.merge(other);
  CHECK(norm == frozen);
  CHECK(norm.normalized(x) == frozen.normalized(x));
  norm.unfreeze();
  norm.update(x.rightCols(25));
  FeatureNormalizer straight(2);
  straight.update(x.leftCols(25));
  straight.update(x.rightCols(25));
  CHECK(norm == straight);
}

TEST_CASE("a normaliser is a value type: copies are equal and independent", "[normalizer]") {
  FeatureNormalizer a(3);
  a.update(stream(3, 10, 19));
  FeatureNormalizer b = a;
  CHECK(b == a);
  b.update(stream(3, 1, 23));
  CHECK_FALSE(b == a);
  CHECK(a.count() == 10);
  FeatureNormalizer c(3, NormalizerOptions{.clip = 3.0});
  CHECK_FALSE(c == FeatureNormalizer(3));
}

TEST_CASE("a normaliser restored from its statistics equals the one that gathered them and goes on alike",
          "[normalizer]") {
  FeatureNormalizer a(3, NormalizerOptions{.clip = 4.0});
  a.update(stream(3, 10, 19));
  FeatureNormalizer b(a.count(), a.mean(), a.squared_deviations(), a.options());
  CHECK(b == a);
  const Eigen::MatrixXd x = stream(3, 4, 29);
  CHECK(b.normalized(x) == a.normalized(x));
  a.update(x);
  b.update(x);
  CHECK(b == a);
  CHECK(FeatureNormalizer(0, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3)) == FeatureNormalizer(3));

  using Catch::Matchers::Contains;
  const Eigen::VectorXd m = Eigen::VectorXd::Ones(3);
  CHECK_THROWS_WITH(FeatureNormalizer(2, m, Eigen::VectorXd::Ones(2)),
                    Contains("FeatureNormalizer (from statistics): mean and squared_deviations must have one size"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, Eigen::VectorXd(), Eigen::VectorXd()), Contains("of at least 1, got 0"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, m, -m), Contains("squared_deviations must be non-negative, got -1"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, m * std::numeric_limits<double>::infinity(), m), Contains("must be finite"));
  CHECK_THROWS_WITH(FeatureNormalizer(0, m, m), Contains("count 0 needs zero statistics"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, m, m, NormalizerOptions{.epsilon = -1.0}),
                    Contains("epsilon must be positive"));
}

TEST_CASE("bad input is refused naming the function, the argument and the value, and changes nothing", "[normalizer]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(FeatureNormalizer(0), Contains("FeatureNormalizer: dim must be at least 1, got 0"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, NormalizerOptions{.epsilon = 0.0}),
                    Contains("FeatureNormalizer: epsilon must be positive and finite, got 0"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, NormalizerOptions{.clip = -1.0}),
                    Contains("FeatureNormalizer: clip must be positive (or +infinity), got -1"));
  CHECK_THROWS_WITH(FeatureNormalizer(2, NormalizerOptions{.clip = std::numeric_limits<double>::quiet_NaN()}),
                    Contains("clip must be positive"));
  CHECK_THROWS_WITH(FeatureNormalizer(std::size_t{1} << 62),
                    Contains("FeatureNormalizer: statistics for dim = 4611686018427387904"));

  FeatureNormalizer norm(2);
  norm.update(Eigen::Vector2d(1.0, 2.0));
  const FeatureNormalizer before = norm;
  CHECK_THROWS_WITH(norm.update(Eigen::Vector3d::Zero()),
                    Contains("FeatureNormalizer::update: x has 3 rows, expected dim = 2"));
  Eigen::Matrix2d bad;
  bad << 1, 2, 3, std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(norm.update(bad), Contains("FeatureNormalizer::update: feature 1 of sample 1 is nan"));
  std::vector<Eigen::VectorXf> spans{Eigen::Vector2f(1, 1), Eigen::Vector2f(std::numeric_limits<float>::infinity(), 0)};
  CHECK_THROWS_WITH(norm.update(std::span<const Eigen::VectorXf>(spans)),
                    Contains("FeatureNormalizer::update: feature 0 of sample 1 is inf"));
  std::vector<Eigen::VectorXf> wrong{Eigen::Vector2f(1, 1), Eigen::Vector3f(1, 1, 1)};
  CHECK_THROWS_WITH(norm.update(std::span<const Eigen::VectorXf>(wrong)),
                    Contains("FeatureNormalizer::update: batch[1] has size 3, expected dim = 2"));
  CHECK_THROWS_WITH(norm.merge(FeatureNormalizer(3)),
                    Contains("FeatureNormalizer::merge: other has dim 3, expected dim = 2"));
  Eigen::VectorXd out(2);
  CHECK_THROWS_WITH(norm.normalize(Eigen::VectorXd::Zero(3), out),
                    Contains("FeatureNormalizer::normalize: x has 3 rows, expected dim = 2"));
  Eigen::MatrixXd wide(2, 2);
  CHECK_THROWS_WITH(norm.normalize(Eigen::VectorXd::Zero(2), wide),
                    Contains("FeatureNormalizer::normalize: out is 2 x 2, expected 2 x 1"));
  out << 7.0, 8.0;
  CHECK_THROWS_WITH(norm.normalize(Eigen::Vector2d(1.0, std::numeric_limits<double>::infinity()), out),
                    Contains("FeatureNormalizer::normalize: feature 1 of sample 0 is inf"));
  CHECK(out == Eigen::Vector2d(7.0, 8.0));  // nothing written
  norm.freeze();
  CHECK_THROWS_WITH(norm.update(bad), Contains("FeatureNormalizer::update: feature 1 of sample 1 is nan"));
  norm.unfreeze();
  FeatureNormalizer none;
  CHECK_THROWS_WITH(none.update(Eigen::MatrixXd(0, 3)),
                    Contains("FeatureNormalizer::update: the normaliser has no features (default-constructed)"));
  CHECK(none.count() == 0);
  CHECK(norm == before);
  CHECK_FALSE(norm == FeatureNormalizer(3));  // another dim: unequal, not an error
  CHECK_FALSE(FeatureNormalizer() == norm);
}

}  // namespace feature_normalizer_test
