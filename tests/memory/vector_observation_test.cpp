// Tests of the memories over real vectors (memory/memory_trace.hpp, trace_bank.hpp, window.hpp's
// FrameStack, with_actions.hpp's AppendAction): vector traces against the closed form eq. (2) for
// every TraceInit in double and float, one-hot vectors against the index fast path (bit for bit),
// MultiHot against dense observations, eq. (4), the T-maze trace numbers of docs/minigrid-tmaze.md,
// frame stacks against the stacked history under both paddings, action traces against their
// closed form, and every refused input with its message and the memory unchanged afterwards.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/concepts.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/memory/with_actions.hpp>
#include <memtrace/random.hpp>
#include <ratio>
#include <type_traits>
#include <vector>

namespace vector_observation_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

using Grid = MultiHot<9>;  // the T-maze's 3 x 3 view: 9 active entries of 45
using Vector45f = Eigen::Matrix<float, 45, 1>;

namespace {

constexpr TraceInit all_inits[] = {TraceInit::zero, TraceInit::first_observation, TraceInit::normalized};
constexpr WindowPadding all_paddings[] = {WindowPadding::zero, WindowPadding::repeat_first};

template <class S>
using VectorX = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// Vectors with entries uniform in [-1, 1).
template <class S>
std::vector<VectorX<S>> random_vectors(std::size_t length, std::size_t dim, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  std::vector<VectorX<S>> h(length, VectorX<S>::Zero(static_cast<Eigen::Index>(dim)));
  for (auto& y : h)
    for (auto& v : y) v = static_cast<S>(2.0 * uniform_real(g) - 1.0);
  return h;
}

std::vector<Observation> random_indices(std::size_t length, std::size_t n, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  std::vector<Observation> h(length);
  for (auto& y : h) y = uniform_index(g, n);
  return h;
}

/// MultiHot observations with `active` distinct entries of `dim` (a random `active`-subset each).
template <int C>
std::vector<MultiHot<C>> random_multi_hots(std::size_t length, std::size_t dim, std::size_t active,
                                           std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  std::vector<MultiHot<C>> h;
  for (std::size_t t = 0; t < length; ++t) {
    MultiHot<C> y = [&] {
      if constexpr (C == dynamic)
        return MultiHot<C>(dim);
      else
        return MultiHot<C>();
    }();
    std::vector<bool> used(dim, false);
    for (std::size_t j = 0; j < active; ++j) {
      std::size_t i = uniform_index(g, dim);
      while (used[i]) i = (i + 1) % dim;
      used[i] = true;
      y[j] = i;
    }
    y.set_size(active);
    h.push_back(y);
  }
  return h;
}

template <class S, int C>
VectorX<S> dense_of(const MultiHot<C>& y, std::size_t dim) {
  return to_dense(y, dim).template cast<S>();
}

/// eq. (2) of a chronological history of vectors (h.front() is the first observation y_0 of the
/// history, h.back() the newest), per TraceInit, computed in double from the observations:
///   zero:              (1 - λ) Σ_{k=0}^{t} λ^k y_{t-k}
///   first_observation: the same plus λ^{t+1} y_0 (y_0 seen forever before)
///   normalized:        the zero trace divided by its weight 1 - λ^{t+1}.
template <class V>
Eigen::VectorXd closed_form(const std::vector<V>& h, std::size_t length, double lambda, TraceInit init) {
  Eigen::VectorXd z = Eigen::VectorXd::Zero(h.front().size());
  const std::size_t t = length - 1;
  for (std::size_t k = 0; k <= t; ++k)
    z += (1.0 - lambda) * std::pow(lambda, double(k)) * h[t - k].template cast<double>();
  const double weight = std::pow(lambda, double(t + 1));
  if (init == TraceInit::first_observation) z += weight * h.front().template cast<double>();
  if (init == TraceInit::normalized) z /= 1.0 - weight;
  return z;
}

template <class M, class Y>
void feed(M& memory, const std::vector<Y>& h) {
  memory.reset(h.front());
  for (std::size_t t = 1; t < h.size(); ++t) memory.update(h[t]);
}

template <class A, class B>
double max_abs_difference(const A& a, const B& b) {
  return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

/// The frame stack of a history at time t: block k is h[t - k], or the padding before h[0].
template <class V>
Eigen::VectorXd stacked(const std::vector<V>& h, std::size_t t, std::size_t m, WindowPadding padding) {
  const auto d = h.front().size();
  Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m) * d);
  for (std::size_t k = 0; k < m; ++k) {
    if (k <= t)
      v.segment(static_cast<Eigen::Index>(k) * d, d) = h[t - k].template cast<double>();
    else if (padding == WindowPadding::repeat_first)
      v.segment(static_cast<Eigen::Index>(k) * d, d) = h.front().template cast<double>();
  }
  return v;
}

/// The T-maze's view (docs/minigrid-tmaze.md, "Observation" and "Worked example") at step t of the
/// optimal walk to the junction of a corridor of length k >= 4 with a green cue: the cue under the
/// agent at t = 0, plain corridor, then the goals coming into view two cells ahead at t = k - 3, one
/// ahead, and beside the agent at the junction t = k - 1. Row 0 is two cells ahead; the agent is at
/// [2][1].
Grid tmaze_view(std::size_t t, std::size_t k) {
  using Rows = std::array<std::array<std::size_t, 3>, 3>;
  Rows tiles{};
  if (t == 0)
    tiles = Rows{{{3, 4, 3}, {3, 4, 3}, {3, 1, 3}}};
  else if (t + 3 < k)
    tiles = Rows{{{3, 4, 3}, {3, 4, 3}, {3, 4, 3}}};
  else if (t + 3 == k)
    tiles = Rows{{{1, 4, 2}, {3, 4, 3}, {3, 4, 3}}};
  else if (t + 2 == k)
    tiles = Rows{{{3, 3, 3}, {1, 4, 2}, {3, 4, 3}}};
  else
    tiles = Rows{{{0, 0, 0}, {3, 3, 3}, {1, 4, 2}}};
  Grid y;
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c) y[r * 3 + c] = (r * 3 + c) * 5 + tiles[r][c];
  y.set_size(9);
  return y;
}

constexpr std::size_t agent_green = (2 * 3 + 1) * 5 + 1;  // cell [2][1], tile green
constexpr std::size_t agent_floor = (2 * 3 + 1) * 5 + 4;  // cell [2][1], tile floor

}  // namespace

TEST_CASE("a dense vector trace is eq. (2) of its history for every TraceInit (double 1e-12, float 1e-5)",
          "[memory_vector][trace]") {
  const std::size_t d = 6;
  for (const auto init : all_inits) {
    for (const double lambda : {0.0, 0.3, 7.0 / 8.0, 0.95}) {
      const auto hd = random_vectors<double>(300, d, 11);
      const auto hf = random_vectors<float>(300, d, 12);
      MemoryTrace<> dynamic_double(lambda, d, init);
      MemoryTrace<dynamic_lambda, 6, float> fixed_float(lambda, init);
      dynamic_double.reset(hd[0]);
      fixed_float.reset(hf[0]);
      for (std::size_t t = 0; t < hd.size(); ++t) {
        if (t > 0) {
          dynamic_double.update(hd[t]);
          fixed_float.update(hf[t]);
        }
        INFO("init " << int(init) << ", lambda " << lambda << ", t " << t);
        REQUIRE(max_abs_difference(dynamic_double.features(), closed_form(hd, t + 1, lambda, init)) < 1e-12);
        REQUIRE(max_abs_difference(fixed_float.features(), closed_form(hf, t + 1, lambda, init)) < 1e-5);
      }
    }
    // A compile-time λ, and a dense expression rather than a vector.
    const auto h = random_vectors<float>(50, d, 13);
    MemoryTrace<std::ratio<7, 8>, dynamic, float> ratio(d, init);
    ratio.reset(2.0f * h[0] - h[0]);
    for (std::size_t t = 1; t < h.size(); ++t) ratio.update(h[t].array().matrix());
    CHECK(max_abs_difference(ratio.features(), closed_form(h, h.size(), 7.0 / 8.0, init)) < 1e-5);
  }
}

TEST_CASE("on one-hot vectors a vector trace equals the index-observation trace bit for bit",
          "[memory_vector][trace]") {
  const std::size_t n = 11;
  const auto h = random_indices(500, n, 21);
  for (const auto init : all_inits) {
    for (const double lambda : {0.0, 0.5, 0.9, 0.99}) {
      MemoryTrace<> index(lambda, n, init), dense(lambda, n, init), sparse(lambda, n, init);
      MemoryTrace<dynamic_lambda, 11, float> index_f(lambda, init), dense_f(lambda, init), sparse_f(lambda, init);
      TraceBank<> bank_index({lambda, 0.25}, n, init), bank_dense({lambda, 0.25}, n, init),
          bank_sparse({lambda, 0.25}, n, init);
      for (std::size_t t = 0; t < h.size(); ++t) {
        MultiHot<1> one;
        one[0] = h[t];
        one.set_size(1);
        const Eigen::VectorXd e = Eigen::VectorXd::Unit(n, static_cast<Eigen::Index>(h[t]));
        const Eigen::Matrix<float, 11, 1> ef = Eigen::Matrix<float, 11, 1>::Unit(static_cast<Eigen::Index>(h[t]));
        if (t == 0) {
          index.reset(h[t]), dense.reset(e), sparse.reset(one);
          index_f.reset(h[t]), dense_f.reset(ef), sparse_f.reset(one);
          bank_index.reset(h[t]), bank_dense.reset(e), bank_sparse.reset(one);
        } else {
          index.update(h[t]), dense.update(e), sparse.update(one);
          index_f.update(h[t]), dense_f.update(ef), sparse_f.update(one);
          bank_index.update(h[t]), bank_dense.update(e), bank_sparse.update(one);
        }
        INFO("init " << int(init) << ", lambda " << lambda << ", t " << t);
        REQUIRE(dense.features() == index.features());
        REQUIRE(sparse.features() == index.features());
        REQUIRE(dense_f.features() == index_f.features());
        REQUIRE(sparse_f.features() == index_f.features());
        REQUIRE(bank_dense.features() == bank_index.features());
        REQUIRE(bank_sparse.features() == bank_index.features());
      }
    }
  }
}

TEST_CASE("the MultiHot path equals the dense path to rounding", "[memory_vector][trace]") {
  const std::size_t d = 12;
  const auto h = random_multi_hots<3>(400, d, 3, 31);
  std::vector<Eigen::VectorXd> hd;
  std::vector<Eigen::VectorXf> hf;
  for (const auto& y : h) hd.push_back(dense_of<double>(y, d)), hf.push_back(dense_of<float>(y, d));
  for (const auto init : all_inits) {
    for (const double lambda : {0.0, 0.6, 0.985}) {
      MemoryTrace<> sparse(lambda, d, init), dense(lambda, d, init);
      MemoryTrace<dynamic_lambda, 12, float> sparse_f(lambda, init), dense_f(lambda, init);
      TraceBank<dynamic, float> bank_sparse({0.0, lambda}, d, init), bank_dense({0.0, lambda}, d, init);
      feed(sparse, h), feed(dense, hd), feed(sparse_f, h), feed(dense_f, hf), feed(bank_sparse, h),
          feed(bank_dense, hf);
      INFO("init " << int(init) << ", lambda " << lambda);
      CHECK(max_abs_difference(sparse.features(), dense.features()) < 1e-15);
      CHECK(max_abs_difference(sparse_f.features(), dense_f.features()) < 1e-7);
      CHECK(max_abs_difference(bank_sparse.features(), bank_dense.features()) < 1e-7);
      CHECK(max_abs_difference(sparse.features(), closed_form(hd, hd.size(), lambda, init)) < 1e-12);
    }
  }
  // A run-time capacity takes the same path.
  const auto hdyn = random_multi_hots<dynamic>(40, d, 5, 32);
  MemoryTrace<> sparse(0.5, d), dense(0.5, d);
  std::vector<Eigen::VectorXd> hdyn_dense;
  for (const auto& y : hdyn) hdyn_dense.push_back(to_dense(y, d));
  feed(sparse, hdyn), feed(dense, hdyn_dense);
  CHECK(max_abs_difference(sparse.features(), dense.features()) < 1e-15);
}

TEST_CASE("eq. (4): a trace of c-hot inputs sums to c(1 - λ^{t+1}), or c after first_observation and normalized",
          "[memory_vector][trace]") {
  const std::size_t d = 45;
  for (const std::size_t c : {1u, 9u}) {
    const auto h = random_multi_hots<9>(200, d, c, 41 + c);
    for (const auto init : all_inits) {
      for (const double lambda : {0.0, 7.0 / 8.0, 0.985}) {
        MemoryTrace<> sparse(lambda, d, init), dense(lambda, d, init);
        for (std::size_t t = 0; t < h.size(); ++t) {
          if (t == 0)
            sparse.reset(h[t]), dense.reset(to_dense(h[t], d));
          else
            sparse.update(h[t]), dense.update(to_dense(h[t], d));
          const double weight = init == TraceInit::zero ? 1.0 - std::pow(lambda, double(t + 1)) : 1.0;
          INFO("c " << c << ", init " << int(init) << ", lambda " << lambda << ", t " << t);
          REQUIRE(sparse.features().sum() == Approx(double(c) * weight).epsilon(1e-13));
          REQUIRE(dense.features().sum() == Approx(double(c) * weight).epsilon(1e-13));
          REQUIRE(sparse.features().minCoeff() >= 0.0);
        }
      }
    }
  }
}

TEST_CASE("the documented T-maze trace: the agent's cell at the junction holds green 0.04909 and floor 0.60730",
          "[memory_vector][trace][tmaze]") {
  struct Case {
    std::size_t k;
    double lambda, green, floor, green_episodic, floor_episodic;
  };
  for (const Case& c :
       {Case{8, 7.0 / 8.0, 0.04909, 0.60730, 0.07478, 0.92522}, Case{64, 0.985, 0.00579, 0.61409, 0.00934, 0.99066}}) {
    std::vector<Grid> views;
    for (std::size_t t = 0; t < c.k; ++t) views.push_back(tmaze_view(t, c.k));  // t = 0 .. k - 1
    // The t = 0 view of the worked example: ones at 3, 9, 13, 18, 24, 28, 33, 36, 43.
    CHECK(std::vector<std::size_t>(views[0].begin(), views[0].end()) ==
          std::vector<std::size_t>{3, 9, 13, 18, 24, 28, 33, 36, 43});
    MemoryTrace<dynamic_lambda, 45, float> trace(c.lambda, TraceInit::zero);  // the paper's non-episodic trace
    MemoryTrace<dynamic_lambda, 45, float> episodic(c.lambda, TraceInit::normalized);
    feed(trace, views);
    feed(episodic, views);
    INFO("k = " << c.k);
    CHECK(trace.features()[agent_green] == Approx(c.green).margin(5e-6));
    CHECK(trace.features()[agent_floor] == Approx(c.floor).margin(5e-6));
    CHECK(episodic.features()[agent_green] == Approx(c.green_episodic).margin(5e-6));
    CHECK(episodic.features()[agent_floor] == Approx(c.floor_episodic).margin(5e-6));
    // Exactly: green was seen once, k - 1 steps ago; floor in the k - 1 steps since.
    CHECK(trace.features()[agent_green] == Approx((1 - c.lambda) * std::pow(c.lambda, double(c.k - 1))).epsilon(1e-5));
    CHECK(trace.features()[agent_floor] == Approx(1 - std::pow(c.lambda, double(c.k - 1))).epsilon(1e-5));
    CHECK((trace.features().array() != 0.0f).count() == 21);
    CHECK(trace.features().sum() == Approx(9 * (1 - std::pow(c.lambda, double(c.k)))).epsilon(1e-5));

    // The PPO agent's bank: λ = {0, 0.985} gives 90 features, the first 45 the current view.
    TraceBank<45, float> bank({0.0, c.lambda}, 45, TraceInit::zero);
    feed(bank, views);
    REQUIRE(bank.dim() == 90);
    CHECK(bank.features().head(45) == to_dense(views.back(), 45).cast<float>());
    CHECK(bank.trace(1) == trace.features());
  }
}

TEST_CASE("a TraceBank of vectors stacks one trace per λ, λ-major, each equal to its MemoryTrace",
          "[memory_vector][trace_bank]") {
  const std::vector<double> lambdas{0.0, 0.5, 0.985};
  const std::size_t d = 7;
  const auto hd = random_vectors<double>(60, d, 51);
  const auto hf = random_vectors<float>(60, d, 52);
  const auto hs = random_multi_hots<2>(60, d, 2, 53);
  for (const auto init : all_inits) {
    TraceBank<> bank(lambdas, d, init);
    TraceBank<7, float> bank_f(lambdas, d, init);
    TraceBank<dynamic, float> bank_s(lambdas, d, init);
    feed(bank, hd), feed(bank_f, hf), feed(bank_s, hs);
    REQUIRE(bank.dim() == 21);
    for (std::size_t k = 0; k < lambdas.size(); ++k) {
      MemoryTrace<> single(lambdas[k], d, init);
      MemoryTrace<dynamic_lambda, dynamic, float> single_f(lambdas[k], d, init), single_s(lambdas[k], d, init);
      feed(single, hd), feed(single_f, hf), feed(single_s, hs);
      INFO("init " << int(init) << ", k " << k);
      CHECK(bank.trace(k) == single.features());
      CHECK(bank_f.trace(k) == single_f.features());
      CHECK(bank_s.trace(k) == single_s.features());
      CHECK(bank.features().segment(static_cast<Eigen::Index>(k * d), d) == single.features());
    }
  }
}

TEST_CASE("compile-time and run-time λ and dimension give bit-identical vector traces", "[memory_vector][trace]") {
  const auto h = random_vectors<float>(300, 5, 61);
  MemoryTrace<std::ratio<9, 10>, 5, float> all_fixed;
  MemoryTrace<std::ratio<9, 10>, dynamic, float> ratio(5);
  MemoryTrace<dynamic_lambda, 5, float> fixed_size(0.9);
  MemoryTrace<dynamic_lambda, dynamic, float> runtime(0.9, 5);
  feed(all_fixed, h), feed(ratio, h), feed(fixed_size, h), feed(runtime, h);
  CHECK(Eigen::VectorXf(all_fixed.features()) == runtime.features());
  CHECK(ratio.features() == runtime.features());
  CHECK(Eigen::VectorXf(fixed_size.features()) == runtime.features());
  TraceBank<5, float> bank_fixed({0.9}, 5);
  TraceBank<dynamic, float> bank_runtime({0.9}, 5);
  feed(bank_fixed, h), feed(bank_runtime, h);
  CHECK(bank_fixed.features() == runtime.features());
  CHECK(bank_runtime.features() == runtime.features());
}

TEST_CASE("a FrameStack of dense vectors is the stacked history, newest first, under both paddings",
          "[memory_vector][frame_stack]") {
  const std::size_t d = 4;
  const auto hf = random_vectors<float>(12, d, 71);
  const auto hd = random_vectors<double>(12, d, 72);
  for (const auto padding : all_paddings) {
    for (const std::size_t m : {1u, 2u, 5u}) {
      FrameStack<Eigen::VectorXf> stack(m, d, padding);
      FrameStack<Eigen::Matrix<double, 4, 1>> fixed(m, padding);
      REQUIRE(stack.dim() == m * d);
      REQUIRE(fixed.dim() == m * d);
      for (std::size_t t = 0; t < hf.size(); ++t) {
        if (t == 0) {
          stack.reset(hf[t]);
          fixed.reset(Eigen::Matrix<double, 4, 1>(hd[t]));
        } else {
          stack.update(hf[t]);
          fixed.update(hd[t]);  // a dynamic vector of the right size
        }
        INFO("padding " << int(padding) << ", m " << m << ", t " << t);
        REQUIRE(stack.features().cast<double>() == stacked(hf, t, m, padding));
        REQUIRE(fixed.features() == stacked(hd, t, m, padding));
      }
    }
  }
}

TEST_CASE("a FrameStack of MultiHot frames is the sparse form of the dense stack, active entries kd + i newest first",
          "[memory_vector][frame_stack]") {
  const std::size_t d = 9;
  Xoshiro256StarStar g(81);
  std::vector<MultiHot<3>> h;  // 0 to 3 active entries a frame
  for (std::size_t t = 0; t < 30; ++t) h.push_back(random_multi_hots<3>(1, d, uniform_index(g, 4), 82 + t).front());
  std::vector<Eigen::VectorXd> hd;
  for (const auto& y : h) hd.push_back(to_dense(y, d));
  for (const auto padding : all_paddings) {
    for (const std::size_t m : {1u, 3u, 6u}) {
      FrameStack<MultiHot<3>> stack(m, d, padding);
      FrameStack<MultiHot<>> any(m, d, padding);  // up to d active entries a frame
      for (std::size_t t = 0; t < h.size(); ++t) {
        if (t == 0)
          stack.reset(h[t]), any.reset(h[t]);
        else
          stack.update(h[t]), any.update(h[t]);
        INFO("padding " << int(padding) << ", m " << m << ", t " << t);
        const auto expected = stacked(hd, t, m, padding);
        REQUIRE(to_dense(stack.features(), stack.dim()) == expected);
        REQUIRE(to_dense(any.features(), any.dim()) == expected);
        // Newest first: block by block, each frame's entries in the order given.
        std::vector<std::size_t> order;
        for (std::size_t k = 0; k < m; ++k) {
          const auto& y = k <= t ? h[t - k] : (padding == WindowPadding::repeat_first ? h.front() : MultiHot<3>());
          for (const std::size_t i : y) order.push_back(k * d + i);
        }
        REQUIRE(std::vector<std::size_t>(stack.features().begin(), stack.features().end()) == order);
      }
    }
  }
}

TEST_CASE("a FrameStack of 65 T-maze views has 585 active entries of 2925", "[memory_vector][frame_stack][tmaze]") {
  FrameStack<Grid> stack(65, 45, WindowPadding::zero);
  REQUIRE(stack.dim() == 2925);
  stack.reset(tmaze_view(0, 64));
  CHECK(stack.features().size() == 9);  // the episode start: 64 zero frames
  for (std::size_t t = 1; t < 70; ++t) stack.update(tmaze_view(std::min<std::size_t>(t, 63), 64));
  CHECK(stack.features().size() == 585);
  Eigen::VectorXf w = Eigen::VectorXf::LinSpaced(2925, 0.0f, 1.0f);
  CHECK(dot(w, stack.features()) == Approx(w.dot(to_dense(stack.features(), 2925).cast<float>())).epsilon(1e-5));
}

TEST_CASE("AppendAction over a MemoryTrace: observation trace next to the action trace (1-λ) Σ λ^k e_{u_{t-k}}",
          "[memory_vector][append_action]") {
  const std::size_t d = 5, num_actions = 3, length = 40;
  const auto hd = random_vectors<double>(length, d, 91);
  const auto hs = random_multi_hots<2>(length, d, 2, 92);
  const auto hi = random_indices(length, d, 93);
  const auto us = random_indices(length, num_actions, 94);  // us[t] led to y_t; us[0] is unused ("none")
  for (const auto init : all_inits) {
    for (const double lambda : {0.0, 0.5, 0.9}) {
      AppendAction<MemoryTrace<>> dense(MemoryTrace<>(lambda, d + num_actions, init), d, num_actions);
      AppendAction<MemoryTrace<dynamic_lambda, dynamic, float>> sparse(
          MemoryTrace<dynamic_lambda, dynamic, float>(lambda, d + num_actions, init), d, num_actions);
      AppendAction<MemoryTrace<>> index(MemoryTrace<>(lambda, d + num_actions, init), d, num_actions);
      MemoryTrace<> observations(lambda, d, init);
      MemoryTrace<dynamic_lambda, dynamic, float> observations_s(lambda, d, init);
      dense.reset(hd[0]), sparse.reset(hs[0]), index.reset(hi[0]), observations.reset(hd[0]),
          observations_s.reset(hs[0]);
      std::vector<Eigen::VectorXd> actions{Eigen::VectorXd::Zero(num_actions)};  // e_u, 0 for none
      std::vector<Eigen::VectorXd> index_history{to_dense(OneHot{hi[0]}, d)};
      for (std::size_t t = 0; t < length; ++t) {
        if (t > 0) {
          dense.update(us[t], hd[t]), sparse.update(us[t], hs[t]), index.update(us[t], hi[t]);
          observations.update(hd[t]), observations_s.update(hs[t]);
          actions.push_back(Eigen::VectorXd::Unit(num_actions, static_cast<Eigen::Index>(us[t])));
          index_history.push_back(to_dense(OneHot{hi[t]}, d));
        }
        // The action trace's closed form: (1 - λ) Σ_{k<t} λ^k e_{u_{t-k}} (u_0 none), over the
        // same weight as the observations' when normalized.
        Eigen::VectorXd action_trace = Eigen::VectorXd::Zero(num_actions);
        for (std::size_t k = 0; k < t; ++k) action_trace += (1 - lambda) * std::pow(lambda, double(k)) * actions[t - k];
        if (init == TraceInit::normalized) action_trace /= 1 - std::pow(lambda, double(t + 1));
        INFO("init " << int(init) << ", lambda " << lambda << ", t " << t);
        REQUIRE(dense.dim() == d + num_actions);
        REQUIRE(dense.features().head(d) == observations.features());  // the same arithmetic, bit for bit
        REQUIRE(sparse.features().head(d) == observations_s.features());
        REQUIRE(max_abs_difference(dense.features().tail(num_actions), action_trace) < 1e-12);
        REQUIRE(max_abs_difference(sparse.features().tail(num_actions), action_trace) < 1e-5);
        REQUIRE(max_abs_difference(index.features().head(d), closed_form(index_history, t + 1, lambda, init)) < 1e-12);
        REQUIRE(max_abs_difference(index.features().tail(num_actions), action_trace) < 1e-12);
      }
    }
  }
}

TEST_CASE("AppendAction over a TraceBank holds each λ's action trace next to its observation trace",
          "[memory_vector][append_action][trace_bank]") {
  const std::size_t d = 45, num_actions = 3;
  const std::vector<double> lambdas{0.0, 0.985};
  std::vector<Grid> views;
  for (std::size_t t = 0; t < 64; ++t) views.push_back(tmaze_view(t, 64));
  const auto us = random_indices(views.size(), num_actions, 101);
  AppendAction<TraceBank<dynamic, float>> memory(TraceBank<dynamic, float>(lambdas, d + num_actions, TraceInit::zero),
                                                 d, num_actions);
  TraceBank<dynamic, float> observations(lambdas, d, TraceInit::zero);
  REQUIRE(memory.dim() == 2 * (d + num_actions));
  memory.reset(views[0]);
  observations.reset(views[0]);
  for (std::size_t t = 1; t < views.size(); ++t) {
    memory.update(us[t], views[t]);
    observations.update(views[t]);
  }
  const std::size_t t = views.size() - 1;
  for (std::size_t k = 0; k < lambdas.size(); ++k) {
    Eigen::VectorXd action_trace = Eigen::VectorXd::Zero(num_actions);
    for (std::size_t j = 0; j < t; ++j)
      action_trace[static_cast<Eigen::Index>(us[t - j])] += (1 - lambdas[k]) * std::pow(lambdas[k], double(j));
    const auto block = memory.memory().trace(k);
    INFO("k " << k);
    CHECK(block.head(d) == observations.trace(k));
    CHECK(max_abs_difference(block.tail(num_actions), action_trace) < 1e-5);
  }
  // λ = 0: the current view and the one-hot of the action that led to it.
  CHECK(memory.features().head(d + num_actions) ==
        (Eigen::VectorXf(d + num_actions) << to_dense(views.back(), d).cast<float>(),
         Eigen::VectorXf::Unit(num_actions, static_cast<Eigen::Index>(us.back())))
            .finished());
}

TEST_CASE("AppendAction over a FrameStack stacks (y, e_u) frames, none = zero at the start",
          "[memory_vector][append_action][frame_stack]") {
  const std::size_t d = 4, num_actions = 2, m = 3;
  const auto hs = random_multi_hots<2>(8, d, 2, 111);
  const auto us = random_indices(8, num_actions, 112);
  for (const auto padding : all_paddings) {
    AppendAction<FrameStack<MultiHot<3>>> sparse(FrameStack<MultiHot<3>>(m, d + num_actions, padding), d, num_actions);
    AppendAction<FrameStack<Eigen::VectorXf>> dense(FrameStack<Eigen::VectorXf>(m, d + num_actions, padding), d,
                                                    num_actions);
    std::vector<Eigen::VectorXd> frames;  // [y_t; e_{u_t}]
    for (std::size_t t = 0; t < hs.size(); ++t) {
      Eigen::VectorXd frame = Eigen::VectorXd::Zero(d + num_actions);
      frame.head(d) = to_dense(hs[t], d);
      if (t > 0) frame[static_cast<Eigen::Index>(d + us[t])] = 1;
      frames.push_back(frame);
      const Eigen::VectorXf y = to_dense(hs[t], d).cast<float>();
      if (t == 0)
        sparse.reset(hs[t]), dense.reset(y);
      else
        sparse.update(us[t], hs[t]), dense.update(us[t], y);
      INFO("padding " << int(padding) << ", t " << t);
      REQUIRE(to_dense(sparse.features(), sparse.dim()) == stacked(frames, t, m, padding));
      REQUIRE(dense.features().cast<double>() == stacked(frames, t, m, padding));
    }
  }
}

TEST_CASE("after clear(), AppendAction's update(u, y) starts a history with (y, e_u), and reset(y) with none",
          "[memory_vector][append_action]") {
  AppendAction<MemoryTrace<>> memory(MemoryTrace<>(0.5, 5, TraceInit::zero), 3, 2);
  const Eigen::Vector3d y(0.25, -1.0, 2.0);
  memory.reset(y);
  CHECK(memory.features() == (Eigen::VectorXd(5) << 0.5 * y, 0, 0).finished());
  memory.update(1, y);
  memory.clear();
  CHECK(memory.features().isZero());
  memory.update(1, y);  // the paper's episode start: the previous episode's last action
  CHECK(memory.features() == (Eigen::VectorXd(5) << 0.5 * y, 0, 0.5).finished());
}

TEST_CASE("update on a fresh or cleared vector memory starts the history like reset", "[memory_vector]") {
  const auto h = random_vectors<float>(3, 4, 121);
  const auto hs = random_multi_hots<2>(3, 4, 2, 122);
  MemoryTrace<dynamic_lambda, dynamic, float> a(0.5, 4, TraceInit::zero), b(0.5, 4, TraceInit::zero);
  a.update(h[0]);
  b.reset(h[0]);
  CHECK(a.features() == b.features());
  a.update(hs[1]);
  a.clear();
  CHECK(a.features().isZero());
  a.update(hs[2]);
  b.reset(hs[2]);
  CHECK(a.features() == b.features());

  TraceBank<dynamic, float> c({0.0, 0.5}, 4), e({0.0, 0.5}, 4);
  c.update(h[0]);
  e.reset(h[0]);
  CHECK(c.features() == e.features());
  c.clear();
  c.update(hs[1]);
  e.reset(hs[1]);
  CHECK(c.features() == e.features());

  for (const auto padding : all_paddings) {
    FrameStack<Eigen::VectorXf> f(3, 4, padding), g(3, 4, padding);
    f.update(h[0]);
    g.reset(h[0]);
    CHECK(f.features() == g.features());
    f.update(h[1]);
    f.clear();
    CHECK(f.features().isZero());
    f.update(h[2]);
    g.reset(h[2]);
    CHECK(f.features() == g.features());
    FrameStack<MultiHot<2>> p(3, 4, padding), q(3, 4, padding);
    p.update(hs[0]);
    q.reset(hs[0]);
    CHECK(to_dense(p.features(), 12) == to_dense(q.features(), 12));
    p.update(hs[1]);
    p.clear();
    CHECK(p.features().size() == 0);
    p.update(hs[2]);
    q.reset(hs[2]);
    CHECK(to_dense(p.features(), 12) == to_dense(q.features(), 12));
  }
}

TEST_CASE("refused vector observations name the function, the argument and the value, and change nothing",
          "[memory_vector][errors]") {
  // A stack that cannot fit is refused before allocating, naming frames (std::bad_alloc before).
  CHECK_THROWS_WITH(FrameStack<Eigen::VectorXf>(std::size_t{1} << 33, 45, WindowPadding::zero),
                    Catch::StartsWith("FrameStack: the m·d features for m = 8589934592 needs 386547056640 "
                                      "entries (1440 GiB)"));
  CHECK_THROWS_WITH(FrameStack<MultiHot<9>>(std::size_t{1} << 33, 45, WindowPadding::zero),
                    Catch::StartsWith("FrameStack: the active entries of m frames (two buffers) for m = "));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Eigen::VectorXf with_nan = Eigen::VectorXf::Zero(45);
  with_nan[2] = nan;
  Eigen::VectorXf with_inf = Eigen::VectorXf::Zero(45);
  with_inf[44] = -inf;
  MultiHot<9> out_of_range = tmaze_view(0, 8);
  out_of_range[8] = 45;
  const Eigen::VectorXf short_vector = Eigen::VectorXf::Ones(4);
  const auto views = std::vector<Grid>{tmaze_view(0, 8), tmaze_view(1, 8), tmaze_view(5, 8)};

  SECTION("MemoryTrace") {
    // The normalised trace also has hidden state (λ^{t+1}): a refused update must not advance it.
    MemoryTrace<dynamic_lambda, 45, float> trace(0.5, TraceInit::normalized), reference(0.5, TraceInit::normalized);
    CHECK_THROWS_WITH(trace.update(short_vector), "MemoryTrace::update: observation has size 4, expected 45");
    CHECK_THROWS_WITH(trace.reset(short_vector), "MemoryTrace::reset: observation has size 4, expected 45");
    CHECK(trace.features().isZero());
    trace.reset(views[0]), reference.reset(views[0]);
    const Vector45f before = trace.features();
    CHECK_THROWS_WITH(trace.update(short_vector), "MemoryTrace::update: observation has size 4, expected 45");
    CHECK_THROWS_WITH(trace.update(with_nan), "MemoryTrace::update: observation[2] is nan, expected a finite number");
    CHECK_THROWS_WITH(trace.update(with_inf), "MemoryTrace::update: observation[44] is -inf, expected a finite number");
    CHECK_THROWS_WITH(trace.update(out_of_range),
                      "MemoryTrace::update: observation has active index 45, out of range [0, 45)");
    CHECK_THROWS_WITH(trace.reset(out_of_range),
                      "MemoryTrace::reset: observation has active index 45, out of range [0, 45)");
    CHECK_THROWS_WITH(trace.reset(with_nan), "MemoryTrace::reset: observation[2] is nan, expected a finite number");
    CHECK_THROWS_WITH(trace.update(45), "MemoryTrace: observation must be in [0, 45), got 45");
    CHECK(trace.features() == before);
    trace.update(views[1]), reference.update(views[1]);
    trace.update(views[2]), reference.update(views[2]);
    CHECK(trace.features() == reference.features());
  }
  SECTION("TraceBank") {
    TraceBank<dynamic, float> bank({0.0, 0.5}, 45, TraceInit::normalized),
        reference({0.0, 0.5}, 45, TraceInit::normalized);
    bank.reset(views[0]), reference.reset(views[0]);
    const Eigen::VectorXf before = bank.features();
    CHECK_THROWS_WITH(bank.update(short_vector), "TraceBank::update: observation has size 4, expected 45");
    CHECK_THROWS_WITH(bank.reset(short_vector), "TraceBank::reset: observation has size 4, expected 45");
    CHECK_THROWS_WITH(bank.update(with_nan), "TraceBank::update: observation[2] is nan, expected a finite number");
    CHECK_THROWS_WITH(bank.update(out_of_range),
                      "TraceBank::update: observation has active index 45, out of range [0, 45)");
    CHECK(bank.features() == before);
    bank.update(views[1]), reference.update(views[1]);
    CHECK(bank.features() == reference.features());
  }
  SECTION("FrameStack") {
    CHECK_THROWS_WITH(FrameStack<Eigen::VectorXf>(0, 45, WindowPadding::zero),
                      "FrameStack: m must be at least 1, got 0");
    CHECK_THROWS_WITH(FrameStack<Eigen::VectorXf>(2, 0, WindowPadding::zero),
                      "FrameStack: dim must be at least 1, got 0");
    CHECK_THROWS_WITH(FrameStack<Vector45f>(2, 44, WindowPadding::zero),
                      "FrameStack: dim is fixed at compile time to 45, got 44");
    CHECK_THROWS_WITH(FrameStack<Grid>(std::size_t{1} << 62, 45, WindowPadding::zero),
                      "FrameStack: m·d with m = 4611686018427387904 and d = dim = 45 overflows the index type");
    FrameStack<Eigen::VectorXf> dense(3, 45, WindowPadding::zero);
    dense.reset(to_dense(views[0], 45).cast<float>());
    const Eigen::VectorXf before = dense.features();
    CHECK_THROWS_WITH(dense.update(short_vector), "FrameStack::update: observation has size 4, expected 45");
    CHECK_THROWS_WITH(dense.reset(with_nan), "FrameStack::reset: observation[2] is nan, expected a finite number");
    CHECK_THROWS_WITH(dense.update(with_inf), "FrameStack::update: observation[44] is -inf, expected a finite number");
    CHECK(dense.features() == before);

    FrameStack<Grid> sparse(3, 45, WindowPadding::zero), reference(3, 45, WindowPadding::zero);
    sparse.reset(views[0]), reference.reset(views[0]);
    MultiHot<> too_many(10);
    for (std::size_t j = 0; j < 10; ++j) too_many[j] = j;
    too_many.set_size(10);
    CHECK_THROWS_WITH(sparse.update(out_of_range),
                      "FrameStack::update: observation has active index 45, out of range [0, 45)");
    CHECK_THROWS_WITH(sparse.update(too_many), "FrameStack::update: observation has 10 active entries, at most 9 fit");
    CHECK_THROWS_WITH(sparse.reset(too_many), "FrameStack::reset: observation has 10 active entries, at most 9 fit");
    sparse.update(views[1]), reference.update(views[1]);
    CHECK(std::vector<std::size_t>(sparse.features().begin(), sparse.features().end()) ==
          std::vector<std::size_t>(reference.features().begin(), reference.features().end()));
  }
  SECTION("AppendAction") {
    CHECK_THROWS_WITH(AppendAction<MemoryTrace<>>(MemoryTrace<>(0.5, 45), 45, 3),
                      "AppendAction: the memory must take observations of dimension d + |U| = 48, but it has "
                      "observation_dim = 45");
    CHECK_THROWS_WITH(AppendAction<MemoryTrace<>>(MemoryTrace<>(0.5, 45), 45, 0),
                      "AppendAction: num_actions must be at least 1, got 0");
    CHECK_THROWS_WITH(AppendAction<MemoryTrace<>>(MemoryTrace<>(0.5, 45), 0, 3),
                      "AppendAction: observation_dim must be at least 1, got 0");
    using Memory = AppendAction<TraceBank<dynamic, float>>;
    Memory memory(TraceBank<dynamic, float>({0.0, 0.5}, 48, TraceInit::normalized), 45, 3);
    Memory reference(TraceBank<dynamic, float>({0.0, 0.5}, 48, TraceInit::normalized), 45, 3);
    memory.reset(views[0]), reference.reset(views[0]);
    const Eigen::VectorXf before = memory.features();
    CHECK_THROWS_WITH(memory.update(3, views[1]), "AppendAction::update: action must be in [0, 3), got 3");
    CHECK_THROWS_WITH(memory.update(0, short_vector), "AppendAction::update: observation has size 4, expected 45");
    CHECK_THROWS_WITH(memory.update(0, with_nan),
                      "AppendAction::update: observation[2] is nan, expected a finite number");
    CHECK_THROWS_WITH(memory.update(0, out_of_range),
                      "AppendAction::update: observation has active index 45, out of range [0, 45)");
    CHECK_THROWS_WITH(memory.reset(out_of_range),
                      "AppendAction::reset: observation has active index 45, out of range [0, 45)");
    CHECK_THROWS_WITH(memory.update(0, Observation{45}),
                      "AppendAction::update: observation must be in [0, 45), got 45");
    CHECK(memory.features() == before);
    memory.update(2, views[1]), reference.update(2, views[1]);
    CHECK(memory.features() == reference.features());
  }
}

}  // namespace vector_observation_test
