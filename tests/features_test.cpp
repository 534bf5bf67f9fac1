// Tests of features.hpp: the sparse feature vectors act exactly like the dense vectors they stand
// for, and touch only their active weights.
#include <catch2/catch.hpp>
#include <memtrace/features.hpp>
#include <memtrace/random.hpp>

namespace features_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {
Eigen::VectorXd random_weights(Eigen::Index n, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  Eigen::VectorXd w(n);
  for (Eigen::Index i = 0; i < n; ++i) w[i] = uniform_real(g) - 0.5;
  return w;
}
}  // namespace

TEST_CASE("dense features: dot and add_scaled are the inner product and axpy", "[features]") {
  const Eigen::VectorXd w = random_weights(5, 1), phi = random_weights(5, 2);
  CHECK(dot(w, phi) == Approx(w.dot(phi)).epsilon(1e-15));
  Eigen::VectorXd v = w;
  add_scaled(v, 0.25, phi);
  CHECK((v - (w + 0.25 * phi)).norm() < 1e-15);
  Eigen::Matrix<double, 5, 1> fixed = w;
  add_scaled(fixed, -1.0, phi);
  CHECK((fixed - (w - phi)).norm() < 1e-15);
}

TEST_CASE("OneHot acts as e_index and add_scaled touches exactly one weight", "[features]") {
  const Eigen::VectorXd w = random_weights(7, 3);
  const OneHot phi{4};
  CHECK(dot(w, phi) == w[4]);
  CHECK(dot(w, phi) == dot(w, to_dense(phi, 7)));
  Eigen::VectorXd v = w;
  add_scaled(v, 0.5, phi);
  for (Eigen::Index i = 0; i < 7; ++i) CHECK(v[i] == (i == 4 ? w[i] + 0.5 : w[i]));
}

TEST_CASE("MultiHot acts as a sum of unit vectors and touches only its entries", "[features]") {
  const Eigen::VectorXd w = random_weights(9, 4);
  MultiHot<3> phi(3);
  phi[0] = 1;
  phi[1] = 5;
  phi[2] = 8;
  phi.set_size(2);  // only the first two are active
  CHECK(dot(w, phi) == w[1] + w[5]);
  CHECK(dot(w, phi) == Approx(dot(w, to_dense(phi, 9))).epsilon(1e-15));
  Eigen::VectorXd v = w;
  add_scaled(v, 2.0, phi);
  for (Eigen::Index i = 0; i < 9; ++i) CHECK(v[i] == ((i == 1 || i == 5) ? w[i] + 2.0 : w[i]));

  MultiHot<> dynamic_phi(2);
  dynamic_phi[0] = 0;
  dynamic_phi[1] = 3;
  dynamic_phi.set_size(2);
  CHECK(dynamic_phi.capacity() == 2);
  CHECK(dot(w, dynamic_phi) == w[0] + w[3]);
}

TEST_CASE("bad feature arguments throw", "[features][errors]") {
  CHECK_THROWS_WITH(to_dense(OneHot{5}, 5), "to_dense: index 5 is out of range for dim 5");
  CHECK_THROWS_WITH(to_dense(Eigen::VectorXd::Zero(3), 4), "to_dense: feature vector has size 3, expected dim 4");
  CHECK_THROWS_WITH(MultiHot<3>(2), "MultiHot: capacity is fixed at compile time to 3, got 2");
}

TEST_CASE("MultiHot is built from distinct indices within its capacity, and its size never exceeds it",
          "[features][errors]") {
  const MultiHot<9> view{3, 9, 13};
  CHECK(view.size() == 3);
  CHECK(view.capacity() == 9);
  CHECK(to_dense(view, 20).sum() == 3.0);
  const MultiHot<> any{5, 1};
  CHECK(any.size() == 2);
  CHECK(any.capacity() == 2);
  CHECK(any[0] == 5);
  CHECK_THROWS_WITH((MultiHot<2>{1, 2, 3}), "MultiHot: at most 2 indices fit, got 3");
  CHECK_THROWS_WITH((MultiHot<4>{1, 7, 1}), "MultiHot: indices must be distinct, got 1 twice");
  MultiHot<3> m{1, 2};
  CHECK_THROWS_WITH(m.set_size(4), "MultiHot::set_size: size must be at most the capacity 3, got 4");
  CHECK(m.size() == 2);
  // Float weights take the sparse features as well.
  Eigen::VectorXf w = Eigen::VectorXf::Zero(4);
  add_scaled(w, 0.5f, MultiHot<>{0, 3});
  CHECK(dot(w, MultiHot<>{3}) == 0.5f);
  CHECK(dot(w, OneHot{0}) == 0.5f);
}

}  // namespace features_test
