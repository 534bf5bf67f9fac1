// Tests of learn/mlp.hpp and learn/adam.hpp: the MLP's gradients against central finite
// differences, the sparse first layer against the dense one, no allocation after the first call,
// orthogonal initialisation, Adam against a hand-computed sequence, global-norm clipping, the
// learning-rate schedule, and bad input.
//
// Eigen's heap allocations throw in this program while an AllocationGuard is alive
// (EIGEN_RUNTIME_NO_MALLOC with eigen_assert throwing), so the no-allocation claim is checked inside
// Eigen's products as well as for the network's own buffers (which are Eigen vectors).
#include "eigen_throws.hpp"  // first: before Eigen

#include <Eigen/Dense>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/learn/actor_critic.hpp>
#include <memtrace/learn/adam.hpp>
#include <memtrace/learn/mlp.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <utility>
#include <vector>

namespace mlp_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// While alive: any heap allocation by Eigen throws.
struct AllocationGuard {
  AllocationGuard() { Eigen::internal::set_is_malloc_allowed(false); }
  ~AllocationGuard() { Eigen::internal::set_is_malloc_allowed(true); }
  AllocationGuard(const AllocationGuard&) = delete;
  AllocationGuard& operator=(const AllocationGuard&) = delete;
};

template <class Scalar>
Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> normal_matrix(Xoshiro256StarStar& gen, Eigen::Index rows,
                                                                    Eigen::Index cols, double scale = 1.0) {
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = static_cast<Scalar>(scale * standard_normal(gen));
  return m;
}

/// A net with every parameter drawn from N(0, 0.7²): biases non-zero, tanh units not saturated.
Mlp<double> random_net(std::initializer_list<std::size_t> sizes, Xoshiro256StarStar& gen) {
  Mlp<double> net(sizes);
  for (auto& p : net.parameters()) p = 0.7 * standard_normal(gen);
  return net;
}

/// A MultiHot with the given distinct indices.
MultiHot<> multi_hot(std::initializer_list<std::size_t> indices, std::size_t capacity) {
  MultiHot<> x(capacity);
  std::size_t k = 0;
  for (const std::size_t i : indices) x[k++] = i;
  x.set_size(k);
  return x;
}

/// `batch` MultiHot columns over [0, dim) with `active` distinct random indices each (column 0 empty).
std::vector<MultiHot<>> random_multi_hots(Xoshiro256StarStar& gen, std::size_t dim, std::size_t active,
                                          std::size_t batch) {
  std::vector<MultiHot<>> columns;
  std::vector<std::size_t> order(dim);
  for (std::size_t j = 0; j < batch; ++j) {
    for (std::size_t i = 0; i < dim; ++i) order[i] = i;
    MultiHot<> x(active);
    const std::size_t size = j == 0 ? 0 : active;
    for (std::size_t k = 0; k < size; ++k) {  // a partial Fisher-Yates shuffle
      std::swap(order[k], order[k + uniform_index(gen, dim - k)]);
      x[k] = order[k];
    }
    x.set_size(size);
    columns.push_back(x);
  }
  return columns;
}

template <class Scalar>
Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> to_dense_batch(const std::vector<MultiHot<>>& columns,
                                                                     std::size_t dim) {
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> x(static_cast<Eigen::Index>(dim),
                                                          static_cast<Eigen::Index>(columns.size()));
  for (std::size_t j = 0; j < columns.size(); ++j)
    x.col(static_cast<Eigen::Index>(j)) = to_dense(columns[j], dim).template cast<Scalar>();
  return x;
}

/// The largest entry of |a - b| relative to the largest entry of |b| (or 1 if smaller).
template <class A, class B>
double relative_gap(const A& a, const B& b) {
  const double scale = std::max(1.0, static_cast<double>(b.cwiseAbs().maxCoeff()));
  return static_cast<double>((a - b).cwiseAbs().maxCoeff()) / scale;
}

}  // namespace

TEST_CASE("Mlp gradients equal central finite differences for every parameter and every input (double)",
          "[mlp][gradient]") {
  Xoshiro256StarStar gen(5);
  for (const auto& sizes :
       {std::vector<std::size_t>{5, 7, 6, 3}, std::vector<std::size_t>{4, 2}, std::vector<std::size_t>{3, 9, 1}}) {
    Mlp<double> net(sizes);
    for (auto& p : net.parameters()) p = 0.7 * standard_normal(gen);
    const Eigen::Index batch = 4;
    Eigen::MatrixXd x = normal_matrix<double>(gen, static_cast<Eigen::Index>(sizes.front()), batch);
    // The loss L = Σ c ⊙ y: dL/dy = c, an arbitrary output gradient.
    const Eigen::MatrixXd c = normal_matrix<double>(gen, static_cast<Eigen::Index>(sizes.back()), batch);
    auto loss = [&] { return (c.array() * net.forward(x).array()).sum(); };
    (void)loss();
    Eigen::MatrixXd dx;
    net.backward(x, c, dx);
    const Eigen::VectorXd grad = net.gradients();
    INFO("sizes " << sizes.size() << " layers, " << net.num_parameters() << " parameters");
    // Central differences: truncation h² L'''/6 and rounding ε|L|/h are both ~1e-10 at h = 1e-5
    // (measured: 1.1e-10 for the first net).
    const double h = 1e-5;
    double worst = 0.0;
    for (Eigen::Index i = 0; i < grad.size(); ++i) {
      const double p = net.parameters()[i];
      net.parameters()[i] = p + h;
      const double up = loss();
      net.parameters()[i] = p - h;
      const double down = loss();
      net.parameters()[i] = p;
      worst = std::max(worst, std::abs((up - down) / (2 * h) - grad[i]) / (1.0 + std::abs(grad[i])));
    }
    CHECK(worst < 1e-7);
    double worst_input = 0.0;
    for (Eigen::Index k = 0; k < x.size(); ++k) {
      const double v = x.data()[k];
      x.data()[k] = v + h;
      const double up = loss();
      x.data()[k] = v - h;
      const double down = loss();
      x.data()[k] = v;
      worst_input =
          std::max(worst_input, std::abs((up - down) / (2 * h) - dx.data()[k]) / (1.0 + std::abs(dx.data()[k])));
    }
    CHECK(worst_input < 1e-7);
    // The layer views are the flat vector's pieces, in order: W_l column-major, then b_l.
    Eigen::Index offset = 0;
    for (std::size_t l = 0; l < net.num_layers(); ++l) {
      CHECK(net.weight_gradient(l).data() == net.gradients().data() + offset);
      offset += net.weights(l).size();
      CHECK(net.bias(l).data() == net.parameters().data() + offset);
      offset += net.bias(l).size();
    }
    CHECK(offset == static_cast<Eigen::Index>(net.num_parameters()));
  }
}

TEMPLATE_TEST_CASE("the sparse first layer equals the dense one in forward and every gradient, empty columns included",
                   "[mlp][sparse]", float, double) {
  const double tolerance = std::is_same_v<TestType, float> ? 2e-6 : 1e-13;
  Xoshiro256StarStar gen(8);
  SECTION("small batch of MultiHot<> with 0 to 4 active entries, passed as a vector, a span and an array") {
    const std::size_t dim = 20;
    Mlp<TestType> dense({dim, 40, 5, 3});  // 40 rows: register blocks of the sparse layer and a tail
    dense.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 1.0});
    for (std::size_t l = 0; l < dense.num_layers(); ++l)
      dense.bias(l) = normal_matrix<TestType>(gen, dense.bias(l).size(), 1, 0.3);
    Mlp<TestType> sparse = dense;
    const std::vector<MultiHot<>> columns{
        multi_hot({}, 4), multi_hot({7}, 4),        multi_hot({19, 0, 3, 11}, 4), multi_hot({2, 5}, 4),
        multi_hot({}, 4), multi_hot({1, 18, 6}, 4), multi_hot({4, 9, 12, 13}, 4)};
    const auto x = to_dense_batch<TestType>(columns, dim);
    const auto dy = normal_matrix<TestType>(gen, 3, x.cols());
    const Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic> y_dense = dense.forward(x);
    dense.backward(x, dy);
    const Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic> y_sparse = sparse.forward(columns);
    sparse.backward(columns, dy);
    CHECK(relative_gap(y_sparse, y_dense) < tolerance);
    CHECK(relative_gap(sparse.gradients(), dense.gradients()) < tolerance);
    // Empty columns see only the bias (equal up to the rounding of the products above the first layer).
    CHECK(relative_gap(y_sparse.col(0), y_sparse.col(4)) < tolerance);

    Mlp<TestType> again = dense;
    const std::span<const MultiHot<>> span(columns);
    CHECK(relative_gap(again.forward(span), y_sparse) == 0.0);
    again.backward(span, dy);
    CHECK(relative_gap(again.gradients(), sparse.gradients()) == 0.0);
    const std::array<MultiHot<2>, 2> fixed{};  // compile-time capacity, both empty
    const auto y_fixed = again.forward(fixed);
    CHECK(relative_gap(y_fixed.col(0), y_sparse.col(0)) < tolerance);
    CHECK(relative_gap(y_fixed.col(1), y_sparse.col(0)) < tolerance);
  }
  SECTION("PPO's frame stack: 2925 inputs, 585 active a column, 2 x 64 tanh") {
    const std::size_t dim = 2925;
    Mlp<TestType> dense({dim, 64, 64, 3});
    dense.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 0.01});
    Mlp<TestType> sparse = dense;
    const auto columns = random_multi_hots(gen, dim, 585, 24);
    const auto x = to_dense_batch<TestType>(columns, dim);
    const auto dy = normal_matrix<TestType>(gen, 3, x.cols());
    const Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic> y_dense = dense.forward(x);
    dense.backward(x, dy);
    CHECK(relative_gap(sparse.forward(columns), y_dense) < 10 * tolerance);
    sparse.backward(columns, dy);
    CHECK(relative_gap(sparse.gradients(), dense.gradients()) < 10 * tolerance);
  }
}

TEST_CASE("forward and backward allocate nothing after the first call for batches up to the largest seen",
          "[mlp][allocation]") {
  Xoshiro256StarStar gen(3);
  Mlp<float> net({90, 64, 64, 3});
  net.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 0.01});
  const Eigen::MatrixXf x = normal_matrix<float>(gen, 90, 256);
  const Eigen::MatrixXf dy = normal_matrix<float>(gen, 3, 256);
  Eigen::MatrixXf dx(90, 256);
  net.forward(x);  // the first call sizes the workspace
  net.backward(x, dy, dx);
  Mlp<float> sparse({2925, 64, 64, 3});
  sparse.reserve(256);  // or ask for it up front
  const auto columns = random_multi_hots(gen, 2925, 585, 256);
  auto pairs = [&] {
    for (const Eigen::Index batch : {256, 16, 256}) {  // a rollout batch and minibatches, interleaved
      net.forward(x.leftCols(batch));
      net.backward(x.leftCols(batch), dy.leftCols(batch));
      sparse.forward(std::span(columns).first(static_cast<std::size_t>(batch)));
      sparse.backward(std::span(columns).first(static_cast<std::size_t>(batch)), dy.leftCols(batch));
    }
    net.forward(x);
    net.backward(x, dy, dx);
  };
  {
    const AllocationGuard guard;
    CHECK_NOTHROW(pairs());  // an allocation by Eigen would have thrown
  }
  // Growing the workspace keeps the last forward: backward after reserve gives the same gradients.
  const Eigen::VectorXf gradients = net.gradients();
  const Eigen::MatrixXf y = net.output();
  net.reserve(1000);
  CHECK(net.output() == y);
  net.backward(x, dy);
  CHECK(net.gradients() == gradients);
  // The guard works: an Eigen allocation under it throws.
  const AllocationGuard guard;
  CHECK_THROWS_WITH(Eigen::MatrixXf(4, 4), Catch::Contains("heap allocation is forbidden"));
}

// Inputs whose columns lie one after another are read through one Map type (one instantiation of
// each product); the others go through Eigen's general products.
static_assert(detail::contiguous_columns<Eigen::MatrixXf>);
static_assert(detail::contiguous_columns<Eigen::Map<const Eigen::MatrixXf>>);
static_assert(detail::contiguous_columns<Eigen::Block<const Eigen::MatrixXf, Eigen::Dynamic, Eigen::Dynamic, true>>);
static_assert(detail::contiguous_columns<decltype(std::declval<Eigen::MatrixXf&>().leftCols(2))>);
static_assert(!detail::contiguous_columns<decltype(std::declval<Eigen::MatrixXf&>().topRows(2))>);
static_assert(!detail::contiguous_columns<Eigen::Ref<const Eigen::MatrixXf>>);
static_assert(!detail::contiguous_columns<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>);
static_assert(!detail::contiguous_columns<Eigen::Map<Eigen::MatrixXf, 0, Eigen::OuterStride<>>>);
static_assert(!detail::contiguous_columns<decltype(std::declval<Eigen::MatrixXf&>().topRows(2).leftCols(3))>);
static_assert(!detail::contiguous_columns<
              Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>>);
// Fixed sizes choose Eigen's product kernels at compile time: they keep their own products.
static_assert(!detail::contiguous_columns<Eigen::VectorXf>);
static_assert(!detail::contiguous_columns<decltype(std::declval<Eigen::MatrixXf&>().col(0))>);
static_assert(!detail::contiguous_columns<Eigen::Matrix<float, 7, Eigen::Dynamic>>);

TEST_CASE("every kind of dense input gives the same output and gradients, bit for bit", "[mlp]") {
  Xoshiro256StarStar gen(12);
  Mlp<float> net({7, 16, 16, 3});
  net.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 0.01});
  const Eigen::MatrixXf x = normal_matrix<float>(gen, 7, 40);
  const Eigen::MatrixXf dy = normal_matrix<float>(gen, 3, 40);
  net.forward(x);
  net.backward(x, dy);
  const Eigen::MatrixXf y = net.output();
  const Eigen::VectorXf g = net.gradients();
  const auto same = [&] {
    CHECK(net.output() == y);
    CHECK(net.gradients() == g);
  };
  // A block of whole columns and a Map (the Map path), rows of a taller matrix, a row-major copy
  // and a Ref (the general products).
  Eigen::MatrixXf wide(7, 50);
  wide << x, Eigen::MatrixXf::Zero(7, 10);
  net.forward(wide.leftCols(40));
  net.backward(wide.leftCols(40), dy);
  same();
  const Eigen::Map<const Eigen::MatrixXf> mapped(x.data(), 7, 40);
  net.forward(mapped);
  net.backward(mapped, dy);
  same();
  Eigen::MatrixXf tall(9, 40);
  tall << x, Eigen::MatrixXf::Ones(2, 40);
  net.forward(tall.topRows(7));
  net.backward(tall.topRows(7), dy);
  same();
  const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = x;
  net.forward(row_major);
  net.backward(row_major, dy);
  same();
  net.forward(Eigen::Ref<const Eigen::MatrixXf>(x));
  net.backward(Eigen::Ref<const Eigen::MatrixXf>(x), dy);
  same();
}

TEMPLATE_TEST_CASE("orthogonal initialisation gives gain-scaled orthonormal kernels, the QR of the draws, zero biases",
                   "[mlp][init]", float, double) {
  const double tolerance = std::is_same_v<TestType, float> ? 1e-6 : 1e-13;
  // {5, 12, 3}: the first kernel is wider than tall (in < out), the second tall (in >= out).
  for (const auto& sizes : {std::vector<std::size_t>{90, 64, 64, 3}, std::vector<std::size_t>{5, 12, 3}}) {
    Mlp<TestType> net(sizes);
    std::vector<double> gains(net.num_layers(), std::sqrt(2.0));
    gains.back() = 0.01;
    Xoshiro256StarStar gen(21);
    net.initialize_orthogonal(gen, gains);
    for (std::size_t l = 0; l < net.num_layers(); ++l) {
      const Eigen::MatrixXd w = net.weights(l).template cast<double>();
      const double g2 = gains[l] * gains[l];
      const Eigen::MatrixXd k = w.transpose();  // flax's kernel, (in x out)
      INFO("layer " << l << ": " << k.rows() << " x " << k.cols());
      if (k.rows() >= k.cols())  // in >= out: KᵀK = W Wᵀ = g² I
        CHECK((k.transpose() * k - g2 * Eigen::MatrixXd::Identity(k.cols(), k.cols())).cwiseAbs().maxCoeff() <
              tolerance * g2);
      else  // in < out: K Kᵀ = Wᵀ W = g² I
        CHECK((k * k.transpose() - g2 * Eigen::MatrixXd::Identity(k.rows(), k.rows())).cwiseAbs().maxCoeff() <
              tolerance * g2);
      CHECK(net.bias(l).isZero(0.0));
    }
    // The first kernel is Q of the QR of the first draws, with R's diagonal made positive: Qᵀ A is
    // upper triangular with a positive diagonal, for A filled column by column with standard_normal.
    Xoshiro256StarStar replay(21);
    const Eigen::Index in = static_cast<Eigen::Index>(sizes[0]), out = static_cast<Eigen::Index>(sizes[1]);
    const Eigen::MatrixXd a = normal_matrix<double>(replay, std::max(in, out), std::min(in, out));
    const Eigen::MatrixXd w = net.weights(0).template cast<double>() / gains[0];
    const Eigen::MatrixXd q = in >= out ? Eigen::MatrixXd(w.transpose()) : w;
    const Eigen::MatrixXd r = q.transpose() * a;
    CHECK(r.template triangularView<Eigen::StrictlyLower>().toDenseMatrix().cwiseAbs().maxCoeff() <
          100 * tolerance * a.norm());
    CHECK(r.diagonal().minCoeff() > 0.0);
  }
}

TEST_CASE("the initialisation's QR is Eigen's Householder QR with R's diagonal positive, to rounding", "[mlp][init]") {
  // The hand-written Householder steps against Eigen's HouseholderQR (blocked for 48 columns and
  // more): the same Q up to rounding, orthonormal to 1e-12, and QᵀA upper triangular with a
  // positive diagonal.
  Xoshiro256StarStar gen(8);
  for (const auto& [n, k] : std::vector<std::pair<Eigen::Index, Eigen::Index>>{
           {1, 1}, {2, 1}, {5, 5}, {12, 5}, {64, 64}, {90, 64}, {200, 150}, {2925, 64}}) {
    INFO(n << " x " << k);
    const Eigen::MatrixXd a = normal_matrix<double>(gen, n, k);
    Eigen::MatrixXd work = a;
    const Eigen::MatrixXd q = detail::orthonormal_q(work);
    REQUIRE((q.rows() == n && q.cols() == k));
    CHECK((q.transpose() * q - Eigen::MatrixXd::Identity(k, k)).cwiseAbs().maxCoeff() < 1e-12);
    const Eigen::MatrixXd r = q.transpose() * a;
    CHECK(r.triangularView<Eigen::StrictlyLower>().toDenseMatrix().cwiseAbs().maxCoeff() < 1e-12 * a.norm());
    CHECK(r.diagonal().minCoeff() > 0.0);
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    Eigen::MatrixXd eigen_q = qr.householderQ() * Eigen::MatrixXd::Identity(n, k);
    for (Eigen::Index j = 0; j < k; ++j)
      if (qr.matrixQR()(j, j) < 0.0) eigen_q.col(j) = -eigen_q.col(j);
    CHECK((q - eigen_q).cwiseAbs().maxCoeff() < 1e-10);
  }
  // Nothing below the diagonal (no reflection needed): Q's columns are ±e_j, with R_jj's sign.
  Eigen::MatrixXd upper(3, 2);
  upper << -2.0, 1.0, 0.0, 3.0, 0.0, 0.0;
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(3, 2);
  expected(0, 0) = -1.0;
  expected(1, 1) = 1.0;
  CHECK(detail::orthonormal_q(upper) == expected);
  // A zero column: R_jj = 0 counts as positive.
  Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(2, 1);
  CHECK(detail::orthonormal_q(zero) == Eigen::MatrixXd::Identity(2, 1));
}

TEST_CASE("orthogonal initialisation is the same draw in float and double, and repeats with the seed", "[mlp][init]") {
  Mlp<float> f({45, 16, 3});
  Mlp<double> d({45, 16, 3}), d2({45, 16, 3});
  Xoshiro256StarStar a(4), b(4), c(4);
  f.initialize_orthogonal(a, {1.5, 1.0});
  d.initialize_orthogonal(b, {1.5, 1.0});
  d2.initialize_orthogonal(c, std::vector<double>{1.5, 1.0});
  CHECK(f.parameters() == d.parameters().cast<float>());
  CHECK(d.parameters() == d2.parameters());
  CHECK(a == b);
  Xoshiro256StarStar other(5);
  d2.initialize_orthogonal(other, {1.5, 1.0});
  CHECK(d.parameters() != d2.parameters());
}

TEST_CASE("Adam reproduces a hand-computed two-step sequence with bias correction and epsilon outside the root",
          "[adam]") {
  // θ = (1, -2, 0.5), g1 = (0.1, -0.2, 0) at lr 0.01, g2 = (0.3, 0.1, -0.4) at lr 0.005; the
  // expected values are the update rule evaluated in 50-digit decimal arithmetic. At t = 1 the step
  // is lr g/(|g| + ε): ε shows in the 8th digit (0.990000001), and a zero gradient moves nothing.
  const Eigen::Vector3d theta0(1.0, -2.0, 0.5), g1(0.1, -0.2, 0.0), g2(0.3, 0.1, -0.4);
  Adam<double> adam(3);
  Eigen::Vector3d theta = theta0;
  adam.step(theta, g1, 0.01);
  CHECK(adam.count() == 1);
  CHECK(theta[0] == Approx(0.9900000009999999).epsilon(1e-15));
  CHECK(theta[1] == Approx(-1.9900000004999999750).epsilon(1e-15));
  CHECK(theta[2] == 0.5);
  adam.step(theta, g2, 0.005);
  CHECK(theta[0] == Approx(0.98541109561027941279).epsilon(1e-14));
  CHECK(theta[1] == Approx(-1.9886683153859337665).epsilon(1e-14));
  CHECK(theta[2] == Approx(0.50372068398632178347).epsilon(1e-14));
  CHECK(adam.first_moment().isApprox(Eigen::Vector3d(0.039, -0.008, -0.04), 1e-14));
  CHECK(adam.second_moment().isApprox(Eigen::Vector3d(0.00009999, 0.00004996, 0.00016), 1e-14));
  // In float, the same sequence to float precision.
  Adam<float> adam_f(3);
  Eigen::Vector3f theta_f = theta0.cast<float>();
  adam_f.step(theta_f, g1.cast<float>(), 0.01);
  adam_f.step(theta_f, g2.cast<float>(), 0.005);
  CHECK((theta_f.cast<double>() - theta).cwiseAbs().maxCoeff() < 1e-6);
  adam.reset();
  CHECK(adam.count() == 0);
  CHECK(adam.first_moment().isZero(0.0));
}

TEST_CASE("clip_by_global_norm scales several vectors by max_norm / global norm only above the threshold",
          "[adam][clip]") {
  Eigen::Vector2d a(3.0, 0.0);
  Eigen::VectorXd b = Eigen::Vector3d(0.0, 4.0, 0.0);  // global norm 5 over both
  CHECK(clip_by_global_norm(10.0, a, b) == 5.0);       // below: unchanged
  CHECK(a == Eigen::Vector2d(3.0, 0.0));
  CHECK(b == Eigen::Vector3d(0.0, 4.0, 0.0));
  CHECK(clip_by_global_norm(5.0, a, b) == 5.0);  // at the threshold: unchanged
  CHECK(b == Eigen::Vector3d(0.0, 4.0, 0.0));
  CHECK(clip_by_global_norm(2.5, a, b) == 5.0);  // above: both halved, one norm for the pair
  CHECK(a == Eigen::Vector2d(1.5, 0.0));
  CHECK(b == Eigen::Vector3d(0.0, 2.0, 0.0));
  CHECK(std::sqrt(a.squaredNorm() + b.squaredNorm()) == Approx(2.5));
  // Two networks' float gradients through their Map views, as PPO clips actor and critic together.
  Mlp<float> actor({4, 3, 2}), critic({4, 3, 1});
  actor.gradients().setConstant(1.0f);
  critic.gradients().setConstant(-2.0f);
  const double norm = std::sqrt(double(actor.num_parameters()) + 4.0 * double(critic.num_parameters()));
  CHECK(clip_by_global_norm(0.5, actor.gradients(), critic.gradients()) == Approx(norm));
  const double after = std::sqrt(double(actor.gradients().squaredNorm()) + double(critic.gradients().squaredNorm()));
  CHECK(after == Approx(0.5).epsilon(1e-6));
  CHECK(actor.gradients()[0] == Approx(0.5 / norm).epsilon(1e-6));
}

TEST_CASE("Adam and the clip over parameter blocks are one vector's, bit for bit, and refuse blocks that do not fit",
          "[adam][clip][blocks]") {
  // A network's blocks (ParameterBlocks): one Adam over the two networks of an ActorCritic equals an
  // Adam per network stepped alike, entry by entry and bit for bit, and the blocks' global norm is
  // the sum of the blocks' squared norms, as the variadic clip computes it over the two vectors.
  ActorCritic<float> blocks(5, 3, {7}), apart(5, 3, {7});
  Xoshiro256StarStar gen(3);
  blocks.initialize_orthogonal(gen);
  apart.actor().parameters() = blocks.actor().parameters();
  apart.critic().parameters() = blocks.critic().parameters();
  Adam<float> one(blocks.num_parameters());
  Adam<float> actor_adam(apart.actor().num_parameters()), critic_adam(apart.critic().num_parameters());
  Xoshiro256StarStar noise(4);
  for (int step = 0; step < 5; ++step) {
    const auto gradients = blocks.gradients();  // the spans live in the array: keep it
    for (float& g : gradients[0]) g = static_cast<float>(standard_normal(noise));
    for (float& g : gradients[1]) g = static_cast<float>(3 * standard_normal(noise));
    apart.actor().gradients() = blocks.actor().gradients();
    apart.critic().gradients() = blocks.critic().gradients();
    const double norm = clip_by_global_norm(0.5, blocks.gradients());
    CHECK(norm == clip_by_global_norm(0.5, apart.actor().gradients(), apart.critic().gradients()));
    CHECK(blocks.actor().gradients() == apart.actor().gradients());
    CHECK(blocks.critic().gradients() == apart.critic().gradients());
    const double rate = 1e-2 / (step + 1);
    one.step(blocks.parameters(), blocks.gradients(), rate);
    actor_adam.step(apart.actor().parameters(), apart.actor().gradients(), rate);
    critic_adam.step(apart.critic().parameters(), apart.critic().gradients(), rate);
  }
  CHECK(one.count() == 5);
  CHECK(blocks.actor().parameters() == apart.actor().parameters());
  CHECK(blocks.critic().parameters() == apart.critic().parameters());
  CHECK(one.first_moment().head(apart.actor().num_parameters()) == actor_adam.first_moment());
  CHECK(one.second_moment().tail(apart.critic().num_parameters()) == critic_adam.second_moment());
  // One span is one block.
  Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(4, 1.0, 2.0), g = Eigen::VectorXd::Constant(4, 0.5);
  Eigen::VectorXd theta_blocks = theta, g_blocks = g;
  Adam<double> vector_adam(4), span_adam(4);
  vector_adam.step(theta, g, 0.1);
  span_adam.step(std::span<double>(theta_blocks.data(), 4), std::span<const double>(g_blocks.data(), 4), 0.1);
  CHECK(theta_blocks == theta);
  CHECK(clip_by_global_norm(0.1, std::span<double>(g_blocks.data(), 4)) == 1.0);
  CHECK(g_blocks == Eigen::VectorXd::Constant(4, 0.05));
  // Blocks that do not fit are refused before anything moves.
  const std::array<std::span<double>, 2> halves = {std::span<double>(theta.data(), 2),
                                                   std::span<double>(theta.data() + 2, 2)};
  const std::array<std::span<double>, 2> uneven = {std::span<double>(g.data(), 1), std::span<double>(g.data() + 1, 3)};
  const Eigen::VectorXd before = theta;
  CHECK_THROWS_WITH(vector_adam.step(halves, uneven, 0.1),
                    "Adam::step: gradients' block 0 has 1 entries, expected the parameters' 2");
  CHECK_THROWS_WITH(vector_adam.step(halves, std::span<double>(g.data(), 4), 0.1),
                    "Adam::step: gradients has 1 blocks, expected the parameters' 2");
  CHECK_THROWS_WITH(vector_adam.step(std::span<double>(theta.data(), 3), std::span<double>(g.data(), 3), 0.1),
                    "Adam::step: parameters has 3 entries, expected 4");
  CHECK_THROWS_WITH(vector_adam.step(halves, halves, -1.0),
                    "Adam::step: learning_rate must be finite and >= 0, got -1");
  CHECK(theta == before);
  CHECK(vector_adam.count() == 1);
}

TEST_CASE("the linear schedule gives lr0 at the first step, lr0/T at the last and 0 after", "[adam][schedule]") {
  const LinearSchedule lr(3e-4, 160000);
  CHECK(lr(0) == 3e-4);
  CHECK(lr(80000) == Approx(1.5e-4).epsilon(1e-15));
  CHECK(lr(159999) == Approx(3e-4 / 160000).epsilon(1e-9));
  CHECK(lr(160000) == 0.0);
  CHECK(lr(1000000000) == 0.0);
  CHECK(LinearSchedule(1.0, 1)(0) == 1.0);
  CHECK(LinearSchedule(1.0, 1)(1) == 0.0);
}

TEST_CASE("Mlp, clipping and Adam together fit a small regression", "[mlp][adam]") {
  // y = sin(x1) cos(x2) on 64 fixed points; 500 full-batch Adam steps cut the loss 0.5 mean (y - t)²
  // by more than 100x (measured: 2,600x).
  Xoshiro256StarStar gen(12);
  Mlp<float> net({2, 32, 32, 1});
  net.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 1.0});
  const Eigen::MatrixXf x = normal_matrix<float>(gen, 2, 64);
  const Eigen::MatrixXf t = (x.row(0).array().sin() * x.row(1).array().cos()).matrix();
  Adam<float> adam(net.num_parameters());
  const LinearSchedule lr(1e-2, 500);
  auto loss = [&] { return 0.5 * double((net.forward(x) - t).squaredNorm()) / 64.0; };
  const double initial = loss();
  Eigen::MatrixXf dy(1, 64);
  for (std::size_t step = 0; step < 500; ++step) {
    dy = (net.forward(x) - t) / 64.0f;
    net.backward(x, dy);
    clip_by_global_norm(1.0, net.gradients());
    adam.step(net.parameters(), net.gradients(), lr(adam.count()));
  }
  INFO("loss " << initial << " -> " << loss());
  CHECK(loss() < initial / 100.0);
}

TEST_CASE("bad input is refused with the function, the argument and the value named, and changes nothing",
          "[mlp][adam][errors]") {
  SECTION("Mlp sizes") {
    CHECK_THROWS_WITH(Mlp<float>(std::vector<std::size_t>{}),
                      "Mlp: sizes must hold at least 2 layer sizes (input and output), got 0");
    CHECK_THROWS_WITH(Mlp<float>({5}), Catch::Contains("at least 2 layer sizes (input and output), got 1"));
    CHECK_THROWS_WITH(Mlp<float>({5, 0, 3}), "Mlp: sizes[1] must be at least 1, got 0 (sizes {5, 0, 3})");
    const std::size_t huge = std::numeric_limits<std::size_t>::max();
    CHECK_THROWS_WITH(Mlp<float>({huge, 2}), Catch::Contains("would not fit in memory"));
    CHECK_THROWS_WITH(Mlp<float>({2, huge}), Catch::Contains("Mlp: sizes {2, 18446744073709551615} need more than"));
    CHECK_THROWS_WITH(Mlp<double>({std::size_t{1} << 31, std::size_t{1} << 31}), Catch::Contains("would not fit"));
    // Addressable but beyond default_max_bytes: refused before allocating (std::bad_alloc before).
    CHECK_THROWS_WITH(Mlp<float>({std::size_t{1} << 20, std::size_t{1} << 14}),
                      Catch::StartsWith("Mlp: sizes {1048576, 16384} need 17179885568 parameters (128 GiB with their "
                                        "gradients), more than the 16 GiB"));
    CHECK_THROWS_WITH(Adam<float>(std::size_t{1} << 40),
                      Catch::StartsWith("Adam: each moment for num_parameters = 1099511627776 needs"));
  }
  SECTION("Mlp inputs and layers") {
    Xoshiro256StarStar gen(1);
    Mlp<double> net = random_net({5, 4, 2}, gen);
    const Eigen::MatrixXd x = normal_matrix<double>(gen, 5, 3);
    CHECK_THROWS_WITH(net.backward(x, Eigen::MatrixXd::Zero(2, 3)), "Mlp::backward: call forward first");
    const Eigen::MatrixXd y = net.forward(x);
    const Eigen::VectorXd params = net.parameters();
    CHECK_THROWS_WITH(net.forward(Eigen::MatrixXd::Zero(4, 3)),
                      "Mlp::forward: input has 4 rows, expected input_dim = 5");
    const std::vector<MultiHot<>> bad{multi_hot({1}, 2), multi_hot({0, 5}, 2)};
    CHECK_THROWS_WITH(net.forward(bad), "Mlp::forward: column 1 of the input has index 5, expected < input_dim = 5");
    CHECK(net.output() == y);  // the rejected calls changed nothing
    CHECK_THROWS_WITH(net.backward(x, Eigen::MatrixXd::Zero(3, 3)),
                      "Mlp::backward: d_output has 3 rows, expected output_dim = 2");
    CHECK_THROWS_WITH(net.backward(x, Eigen::MatrixXd::Zero(2, 4)),
                      "Mlp::backward: d_output has 4 columns, but the last forward had batch 3");
    CHECK_THROWS_WITH(net.backward(x.leftCols(2), Eigen::MatrixXd::Zero(2, 2)),
                      Catch::Contains("d_output has 2 columns, but the last forward had batch 3"));
    CHECK_THROWS_WITH(net.backward(bad, Eigen::MatrixXd::Zero(2, 3)),
                      "Mlp::backward: column 1 of the input has index 5, expected < input_dim = 5");
    CHECK(net.gradients().isZero(0.0));
    CHECK_THROWS_WITH(net.weights(2), "Mlp::weights: layer must be in [0, 2), got 2");
    CHECK_THROWS_WITH(net.bias_gradient(7), "Mlp::bias_gradient: layer must be in [0, 2), got 7");
    const Xoshiro256StarStar before = gen;
    CHECK_THROWS_WITH(net.initialize_orthogonal(gen, {1.0}),
                      "Mlp::initialize_orthogonal: gains must hold one gain per layer (2), got 1");
    CHECK_THROWS_WITH(net.initialize_orthogonal(gen, {1.0, std::numeric_limits<double>::infinity()}),
                      "Mlp::initialize_orthogonal: gains[1] must be finite, got inf");
    CHECK_THROWS_WITH(net.initialize_orthogonal(gen, {std::nan(""), 1.0}),
                      Catch::Contains("gains[0] must be finite, got nan"));
    CHECK(gen == before);
    CHECK(net.parameters() == params);
    CHECK(net.output() == y);
  }
  SECTION("Adam, clipping, schedule") {
    CHECK_THROWS_WITH(Adam<float>(3, {.beta1 = 1.0}), "Adam: beta1 must be in [0, 1), got 1");
    CHECK_THROWS_WITH(Adam<float>(3, {.beta2 = -0.5}), "Adam: beta2 must be in [0, 1), got -0.5");
    CHECK_THROWS_WITH(Adam<float>(3, {.epsilon = -1e-8}), "Adam: epsilon must be finite and >= 0, got -1e-08");
    CHECK_THROWS_WITH(Adam<float>(std::numeric_limits<std::size_t>::max()),
                      Catch::Contains("Adam: num_parameters is too large"));
    Adam<double> adam(3);
    Eigen::Vector3d theta(1, 2, 3);
    Eigen::Vector2d short_vector(1, 2);
    CHECK_THROWS_WITH(adam.step(short_vector, Eigen::Vector3d::Ones(), 0.1),
                      "Adam::step: parameters has 2 entries, expected 3");
    CHECK_THROWS_WITH(adam.step(theta, Eigen::Vector2d::Ones(), 0.1),
                      "Adam::step: gradients has 2 entries, expected 3");
    CHECK_THROWS_WITH(adam.step(theta, Eigen::Vector3d::Ones(), std::nan("")),
                      "Adam::step: learning_rate must be finite and >= 0, got nan");
    CHECK_THROWS_WITH(adam.step(theta, Eigen::Vector3d::Ones(), -1.0),
                      "Adam::step: learning_rate must be finite and >= 0, got -1");
    CHECK(adam.count() == 0);
    CHECK(theta == Eigen::Vector3d(1, 2, 3));
    CHECK(adam.first_moment().isZero(0.0));
    CHECK_THROWS_WITH(clip_by_global_norm(0.0, theta),
                      "clip_by_global_norm: max_norm must be positive and finite, got 0");
    CHECK_THROWS_WITH(clip_by_global_norm(std::nan(""), theta), Catch::Contains("got nan"));
    CHECK(theta == Eigen::Vector3d(1, 2, 3));
    CHECK_THROWS_WITH(LinearSchedule(3e-4, 0), "LinearSchedule: total_steps must be at least 1, got 0");
    CHECK_THROWS_WITH(LinearSchedule(-1.0, 10), "LinearSchedule: initial must be finite and >= 0, got -1");
  }
}

}  // namespace mlp_test
