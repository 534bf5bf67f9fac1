// Tests of learn/td.hpp, learn/td_bank.hpp and learn/trace_td.hpp (driven by loop/run_td.hpp): TD(0) converges to exact
// values and to the TD fixed point of a memory trace (both solved in the test), TD(1) matches
// Monte Carlo, the fused TraceTd equals MemoryTrace + LinearTd, and bad input throws.
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/env/finite_hmm.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/features.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/learn/td_bank.hpp>
#include <memtrace/learn/trace_td.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#include <new>
#include <ratio>
#include <span>
#include <utility>
#include <vector>

#include "env_test_support.hpp"

namespace td_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// A fully observed 3-state chain (y = x) with rewards per transition.
FiniteHmm observed_chain() {
  Eigen::MatrixXd p(3, 3), r(3, 3);
  p << 0.5, 0.5, 0.0, 0.2, 0.3, 0.5, 0.6, 0.0, 0.4;
  r << 1.0, -1.0, 0.0, 0.0, 2.0, 0.5, -2.0, 0.0, 0.0;
  return FiniteHmm(p, Eigen::MatrixXd::Identity(3, 3), Eigen::Vector3d(1, 0, 0), r);
}

/// The steps at which weights are averaged: every 1000 after the first tenth of the run.
std::vector<std::size_t> record_steps(std::size_t steps) {
  std::vector<std::size_t> record;
  for (std::size_t t = steps / 10; t <= steps; t += 1000) record.push_back(t);
  return record;
}

template <class Env, class M, class L>
Eigen::VectorXd averaged_weights(Env& env, M& memory, L& td, std::uint64_t seed, std::size_t steps, double discount) {
  const auto record = record_steps(steps);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(td.dim()));
  Xoshiro256StarStar gen(seed);
  run_td(env, memory, td, gen, TdRun{.steps = steps, .discount = discount}, record,
         [&](std::size_t, const L& learner) { sum += learner.weights(); });
  return sum / static_cast<double>(record.size());
}

template <class Env, class L>
Eigen::VectorXd averaged_weights(Env& env, L& td, std::uint64_t seed, std::size_t steps, double discount) {
  const auto record = record_steps(steps);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(td.dim()));
  Xoshiro256StarStar gen(seed);
  run_td(env, td, gen, TdRun{.steps = steps, .discount = discount}, record,
         [&](std::size_t, const L& learner) { sum += learner.weights(); });
  return sum / static_cast<double>(record.size());
}

}  // namespace

TEST_CASE("TD(0) with one-hot state features converges to the exact values", "[td]") {
  auto env = observed_chain();
  const double discount = 0.9;
  // v = (I - γP)^{-1} r̄, by a linear solve.
  const Eigen::MatrixXd p = env.transition();
  const Eigen::VectorXd v = (Eigen::MatrixXd::Identity(3, 3) - discount * p).lu().solve(env.expected_rewards());
  Window<> window(1, 3);  // the current observation = the state
  // Constant-step TD hovers around its fixed point with a bias and a spread that shrink with α;
  // at α = 0.003 the Polyak average of 4·10^6 steps was within 1.1% of max |v| (seeds 7 and 8).
  LinearTd td(window.dim(), 0.002);
  const Eigen::VectorXd w = averaged_weights(env, window, td, 7, 2000000, discount);
  INFO("exact " << v.transpose() << ", TD " << w.transpose());
  CHECK((w - v).cwiseAbs().maxCoeff() < 0.02 * v.cwiseAbs().maxCoeff());
}

TEST_CASE("TD(0) on memory traces converges to the TD fixed point of the two-state HMM", "[td][trace_td]") {
  TwoStateHmm env(0.3, 0.2, {-1.0, 1.0});
  const double discount = 0.5;
  for (const double lambda : {0.0, 0.5, 0.8}) {
    // The fixed point: E[z (z - γ z')ᵀ] w = E[z r'] (the projected Bellman equation), solved in
    // closed form by the analysis (itself checked against a fixed-point iteration there).
    const Eigen::VectorXd fixed_point = trace_td_fixed_point(env, lambda, discount);
    // TraceTd is MemoryTrace + LinearTd in O(1) a step (tested below). The Polyak averages of
    // four seeds spread by ±2.5% around the fixed point at this α and length.
    TraceTd<> td(lambda, 2, 0.002);
    const Eigen::VectorXd w = averaged_weights(env, td, 11, 2000000, discount);
    INFO("lambda = " << lambda << ", fixed point " << fixed_point.transpose() << ", TD " << w.transpose());
    CHECK((w - fixed_point).cwiseAbs().maxCoeff() < 0.06 * fixed_point.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("TraceTd equals MemoryTrace + LinearTd step by step", "[trace_td]") {
  for (const auto init : {TraceInit::zero, TraceInit::first_observation, TraceInit::normalized}) {
    for (const double lambda : {0.0, 0.3, 0.9, 0.99}) {
      NoisyRandomWalk env_a, env_b;
      Xoshiro256StarStar gen_a(3), gen_b(3);
      MemoryTrace<> trace(lambda, 11, init);
      LinearTd td(11, 0.02);
      TraceTd<> fused(lambda, 11, 0.02, init);
      trace.reset(env_a.reset(gen_a));
      fused.reset(env_b.reset(gen_b));
      double worst = 0.0;
      for (int t = 0; t < 30000; ++t) {  // folds every ~105 steps for λ = 0.9, ~1100 for 0.99
        const auto ta = env_a.step(gen_a);
        const auto tb = env_b.step(gen_b);
        const Eigen::VectorXd z = trace.features();
        trace.update(ta.observation);
        const double delta_a = td.update(z, ta.reward, 0.99, trace.features());
        const double delta_b = fused.learn(tb.observation, tb.reward, 0.99);
        worst = std::max(worst, std::abs(delta_a - delta_b));
        if (t % 997 == 0) {
          REQUIRE((fused.weights() - td.weights()).cwiseAbs().maxCoeff() < 1e-9 * (1 + td.weights().norm()));
          REQUIRE((fused.trace() - trace.features()).cwiseAbs().maxCoeff() < 1e-12);
        }
      }
      INFO("lambda = " << lambda);
      CHECK(worst < 1e-9);
      CHECK(fused.value() == Approx(td.value(trace.features())).margin(1e-9));
      // Compile-time λ gives the same numbers.
      if (lambda == 0.9) {
        TraceTd<std::ratio<9, 10>, 11> fixed(11, 0.02, init);
        NoisyRandomWalk env_c;
        Xoshiro256StarStar gen_c(3);
        fixed.reset(env_c.reset(gen_c));
        for (int t = 0; t < 30000; ++t) {
          const auto tc = env_c.step(gen_c);
          fixed.learn(tc.observation, tc.reward, 0.99);
        }
        CHECK((Eigen::VectorXd(fixed.weights()) - fused.weights()).cwiseAbs().maxCoeff() < 1e-12);
      }
    }
  }
}

TEST_CASE("run_td drives TraceTd exactly like the generic loop", "[trace_td][run]") {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen_a(9), gen_b(9);
  MemoryTrace<> trace(0.9, 11);
  LinearTd td(11, 0.02);
  TraceTd<> fused(0.9, 11, 0.02);
  run_td(env, trace, td, gen_a, TdRun{.steps = 50000, .discount = 0.99});
  run_td(env, fused, gen_b, TdRun{.steps = 50000, .discount = 0.99});
  CHECK((fused.weights() - td.weights()).cwiseAbs().maxCoeff() < 1e-9);
}

TEST_CASE("TD(1) with discount = 1 on an episodic chain matches Monte Carlo up to O(alpha^2)", "[td][td_lambda]") {
  FiniteHmm chain = test::episodic_chain();
  // One episode, recorded, then learned online by TD(1) and offline by every-visit Monte Carlo.
  Xoshiro256StarStar gen(4);
  std::vector<Observation> ys{chain.reset(gen)};
  std::vector<double> rewards;
  for (bool done = false; !done;) {
    const auto t = chain.step(gen);
    ys.push_back(t.observation);
    rewards.push_back(t.reward);
    done = t.terminated;
  }
  REQUIRE(ys.size() > 4);
  const Eigen::VectorXd w0 = Eigen::Vector4d(0.5, -0.25, 1.0, 0.0);
  auto gap = [&](double alpha) {
    LinearTdLambda td(w0, alpha, 1.0);
    Eigen::VectorXd mc = w0;
    double g = 0.0;
    for (std::size_t t = rewards.size(); t-- > 0;) {
      g += rewards[t];
      mc[static_cast<Eigen::Index>(ys[t])] += alpha * (g - w0[static_cast<Eigen::Index>(ys[t])]);
    }
    for (std::size_t t = 0; t < rewards.size(); ++t)
      td.update(OneHot{ys[t]}, rewards[t], t + 1 == rewards.size() ? 0.0 : 1.0, OneHot{ys[t + 1]});
    return std::pair{(td.weights() - mc).norm(), (mc - w0).norm()};
  };
  const auto [gap1, change1] = gap(1e-3);
  const auto [gap2, change2] = gap(5e-4);
  CHECK(gap1 < 1e-2 * change1);                     // online TD(1) is Monte Carlo to first order in α
  CHECK(gap1 / gap2 == Approx(4.0).epsilon(0.05));  // and the difference is second order
  CHECK(change1 / change2 == Approx(2.0).epsilon(1e-9));
}

TEST_CASE("one-hot TD updates touch exactly one weight", "[td]") {
  LinearTd td(1000, 0.1, 0.5);
  const Eigen::VectorXd before = td.weights();
  const double delta = td.update(OneHot{17}, 1.0, 0.9, OneHot{400});
  CHECK(delta == Approx(1.0 + 0.9 * 0.5 - 0.5));
  const Eigen::VectorXd change = td.weights() - before;
  CHECK((change.array() != 0.0).count() == 1);
  CHECK(change[17] == Approx(0.1 * delta));
}

TEST_CASE("LinearTdBank: learner k is a LinearTd with step size k", "[td][bank]") {
  const std::vector<double> alphas{0.003, 0.05, 0.4, 1.0};
  const TdRun run{.steps = 4000, .discount = 0.9};
  const std::vector<std::size_t> record{100, 4000};
  const auto check = [&](auto make_memory, double tolerance) {
    NoisyRandomWalk env({.num_states = 31, .max_step = 3, .num_observations = 4});
    auto memory = make_memory();
    LinearTdBank bank(memory.dim(), alphas);
    auto gen = make_stream(9, 1);
    std::vector<LinearTdBank::weights_type> seen;
    run_td(env, memory, bank, gen, run, record,
           [&](std::size_t, const LinearTdBank& b) { seen.push_back(b.weights()); });
    REQUIRE(seen.size() == 2);
    for (std::size_t k = 0; k < alphas.size(); ++k) {
      NoisyRandomWalk alone_env({.num_states = 31, .max_step = 3, .num_observations = 4});
      auto alone_memory = make_memory();
      LinearTd alone(alone_memory.dim(), alphas[k]);
      auto alone_gen = make_stream(9, 1);
      run_td(alone_env, alone_memory, alone, alone_gen, run);
      const Eigen::VectorXd mine = bank.weights(k);
      if (tolerance == 0.0) {
        CHECK(mine == alone.weights());  // same operations in the same order
      } else {
        CHECK((mine - alone.weights()).cwiseAbs().maxCoeff() <= tolerance);
      }
      CHECK(seen[1].col(static_cast<Eigen::Index>(k)) == mine);
    }
    CHECK(bank.weights(0) != bank.weights(1));
  };
  SECTION("one-hot features (Window)") {
    check([] { return Window<>(2, 4); }, 0.0);
  }
  SECTION("multi-hot features (ConcatWindow)") {
    check([] { return ConcatWindow<>(3, 4); }, 0.0);
  }
  SECTION("dense features (MemoryTrace)") {
    check([] { return MemoryTrace<>(0.7, 4); }, 1e-12);
  }
  SECTION("value and the accessors") {
    LinearTdBank bank(3, {0.1, 0.2}, 0.5);
    bank.update(OneHot{0}, 1.0, 0.5, OneHot{1});  // delta = 1 + 0.25 - 0.5 = 0.75 for both
    CHECK(bank.value(OneHot{0}) == Eigen::RowVector2d(0.575, 0.65));
    CHECK(bank.value(OneHot{2}) == Eigen::RowVector2d(0.5, 0.5));
    bank.update(OneHot{2}, 1.0, 0.5, OneHot{2});  // φ = φ': delta = 1 + 0.25 - 0.5 = 0.75 again
    CHECK(bank.value(OneHot{2}) == Eigen::RowVector2d(0.575, 0.65));
    MultiHot<> both(2);  // φ = φ' for multi-hot features: both values read before any write
    both[0] = 0;
    both[1] = 2;
    both.set_size(2);
    LinearTd first(bank.weights(0), 0.1), second(bank.weights(1), 0.2);
    bank.update(both, -1.0, 0.9, both);
    first.update(both, -1.0, 0.9, both);
    second.update(both, -1.0, 0.9, both);
    CHECK(bank.weights(0) == first.weights());
    CHECK(bank.weights(1) == second.weights());
    CHECK(bank.size() == 2);
    CHECK(bank.dim() == 3);
    CHECK(bank.step_sizes() == std::vector<double>{0.1, 0.2});
  }
  SECTION("bad input") {
    CHECK_THROWS_WITH(LinearTdBank(3, {}), Catch::Contains("step_sizes must not be empty"));
    CHECK_THROWS_WITH(LinearTdBank(3, {0.1, -1.0}),
                      Catch::Contains("step_sizes[1] must be positive and finite, got -1"));
    CHECK_THROWS_WITH(LinearTdBank(0, {0.1}), Catch::Contains("dim must be in [1, 2^63), got 0"));
    CHECK_THROWS_WITH(LinearTdBank(2, {0.1}, NAN), Catch::Contains("initial_weight must be finite"));
    LinearTdBank bank(3, {0.1});
    CHECK_THROWS_WITH(bank.update(OneHot{0}, 1.0, 1.5, OneHot{1}),
                      Catch::Contains("discount must be in [0, 1], got 1.5"));
    CHECK_THROWS_WITH(bank.weights(1), Catch::Contains("k must be below 1, got 1"));
  }
}

TEST_CASE("TraceTd's first learn on a fresh object starts the history like MemoryTrace", "[trace_td]") {
  TraceTd<> fused(0.5, 3, 0.1);
  MemoryTrace<> trace(0.5, 3);
  CHECK(fused.learn(1, 5.0, 0.9) == 0.0);
  trace.update(1);
  CHECK(fused.trace() == trace.features());
  CHECK(fused.weights().isZero());
}

TEST_CASE("bad learner parameters throw with the value named", "[td][errors]") {
  CHECK_THROWS_WITH(LinearTd(3, 0.0), "LinearTd: step_size must be positive and finite, got 0");
  CHECK_THROWS_WITH(LinearTd(3, -0.1), "LinearTd: step_size must be positive and finite, got -0.1");
  CHECK_THROWS_WITH(LinearTd(3, std::nan("")), Catch::Contains("step_size must be positive and finite, got nan"));
  CHECK_THROWS_WITH(LinearTd(0, 0.1), "LinearTd: dim must be in [1, 2^63), got 0");
  CHECK_THROWS_WITH(LinearTd(3, 0.1, INFINITY), "LinearTd: initial_weight must be finite, got inf");
  CHECK_THROWS_WITH(LinearTdLambda(3, 0.1, 1.5), "LinearTdLambda: eligibility_decay must be in [0, 1], got 1.5");
  CHECK_THROWS_WITH(TraceTd<>(1.0, 3, 0.1), "TraceTd: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(TraceTd<>(0.5, 3, 0.0), "TraceTd: step_size must be positive and finite, got 0");
  LinearTd td(3, 0.1);
  CHECK_THROWS_WITH(td.update(OneHot{0}, 0.0, 1.5, OneHot{1}), "LinearTd::update: discount must be in [0, 1], got 1.5");
  CHECK(td.weights().isZero());
  TraceTd<> fused(0.5, 3, 0.1, TraceInit::normalized);
  fused.reset(0);
  fused.learn(1, 1.0, 0.9);
  const Eigen::VectorXd w_before = fused.weights(), z_before = fused.trace();
  CHECK_THROWS_WITH(fused.learn(3, 0.0, 0.9), "TraceTd::learn: observation must be in [0, 3), got 3");
  CHECK_THROWS_WITH(fused.reset(4), "TraceTd::reset: observation must be in [0, 3), got 4");
  CHECK_THROWS_WITH(TraceTd<>(1.5, 3, 0.1), "TraceTd: lambda must be in [0, 1), got 1.5");  // not "MemoryTrace:"
  CHECK_THROWS_WITH(fused.learn(1, 0.0, -0.5), "TraceTd::learn: discount must be in [0, 1], got -0.5");
  CHECK(fused.weights() == w_before);
  CHECK(fused.trace() == z_before);
  fused.learn(2, 0.0, 0.9);  // and the normalised step sequence was not advanced by the throws
  MemoryTrace<> reference(0.5, 3, TraceInit::normalized);
  reference.reset(0);
  reference.update(1);
  reference.update(2);
  CHECK((fused.trace() - reference.features()).cwiseAbs().maxCoeff() < 1e-15);
}

TEST_CASE("learners refuse features that do not fit their weights, and change nothing", "[td][errors]") {
  LinearTd td(3, 0.1);
  td.update(OneHot{0}, 1.0, 0.9, OneHot{1});
  const Eigen::VectorXd before = td.weights();
  CHECK_THROWS_WITH(td.update(OneHot{3}, 1.0, 0.9, OneHot{1}),
                    "LinearTd::update: phi has active index 3, out of range for dim 3");
  CHECK_THROWS_WITH(td.update(OneHot{0}, 1.0, 0.9, OneHot{7}),
                    "LinearTd::update: phi_next has active index 7, out of range for dim 3");
  MultiHot<> multi(2);
  multi[0] = 1;
  multi[1] = 5;
  multi.set_size(2);
  CHECK_THROWS_WITH(td.update(multi, 1.0, 0.9, OneHot{1}),
                    "LinearTd::update: phi has active index 5, out of range for dim 3");
  const Eigen::VectorXd four = Eigen::VectorXd::Ones(4);
  CHECK_THROWS_WITH(td.update(four, 1.0, 0.9, four), "LinearTd::update: phi has size 4, expected dim 3");
  CHECK_THROWS_WITH(td.value(OneHot{3}), "LinearTd::value: phi has active index 3, out of range for dim 3");
  CHECK(td.weights() == before);

  // Weights that cannot fit are refused before allocating, naming dim (std::bad_alloc before).
  const std::size_t huge = std::size_t{1} << 40;
  CHECK_THROWS_WITH(LinearTd(huge, 0.1), Catch::StartsWith("LinearTd: the weights for dim = 1099511627776 needs "
                                                           "1099511627776 entries (8192 GiB), more than the 16 GiB"));
  CHECK_THROWS_WITH(LinearTd<float>(huge, 0.1), Catch::Contains("(4096 GiB)"));
  CHECK_THROWS_WITH(LinearTdLambda(huge, 0.1, 0.5), Catch::StartsWith("LinearTdLambda: the weights for dim = "));
  CHECK_THROWS_WITH(LinearTdBank(huge / 8, {0.1, 0.2}),
                    Catch::StartsWith("LinearTdBank: the weights dim × K for dim = 137438953472 needs 274877906944"));
  CHECK_THROWS_WITH(TraceTd<>(0.5, huge, 0.1),
                    Catch::StartsWith("TraceTd: the trace and weights (3 vectors of |Y|) for num_observations = "));

  LinearTdLambda lambda(3, 0.1, 0.5);
  CHECK_THROWS_WITH(lambda.update(OneHot{9}, 1.0, 0.9, OneHot{1}),
                    "LinearTdLambda::update: phi has active index 9, out of range for dim 3");
  CHECK(lambda.weights().isZero());
  CHECK(lambda.eligibility().isZero());

  LinearTdBank bank(3, {0.1, 0.2});
  CHECK_THROWS_WITH(bank.update(OneHot{0}, 1.0, 0.9, OneHot{3}),
                    "LinearTdBank::update: phi_next has active index 3, out of range for dim 3");
  CHECK_THROWS_WITH(bank.update(four, 1.0, 0.9, four), "LinearTdBank::update: phi has size 4, expected dim 3");
  CHECK(bank.weights().isZero());
}

TEST_CASE("LinearTd<float> follows LinearTd<double> to float rounding on trace features", "[td][float]") {
  NoisyRandomWalk walk;
  Xoshiro256StarStar gen(3);
  MemoryTrace<> trace(0.9, 11);
  LinearTd<double> td64(11, 0.02);
  LinearTd<float> td32(11, 0.02);
  trace.reset(walk.reset(gen));
  Eigen::VectorXd phi = trace.features();
  for (int t = 0; t < 20000; ++t) {
    const TimeStep<> step = walk.step(gen);
    trace.update(step.observation);
    const Eigen::VectorXd& next = trace.features();
    td64.update(phi, step.reward, 0.99, next);
    td32.update(Eigen::VectorXf(phi.cast<float>()), step.reward, 0.99, Eigen::VectorXf(next.cast<float>()));
    phi = next;
  }
  const double scale = td64.weights().cwiseAbs().maxCoeff();
  REQUIRE(scale > 0.1);
  CHECK((td32.weights().cast<double>() - td64.weights()).cwiseAbs().maxCoeff() < 1e-3 * scale);
  // One-hot features index float weights as well.
  LinearTd<float> tabular(3, 0.5);
  CHECK(tabular.update(OneHot{0}, 1.0, 0.5, OneHot{1}) == 1.0);
  CHECK(tabular.weights()[0] == 0.5f);
}

TEST_CASE("a non-finite reward or feature is refused before it poisons any weight", "[td][errors]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  LinearTd td(3, 0.1);
  td.update(OneHot{0}, 1.0, 0.9, OneHot{1});
  const Eigen::VectorXd before = td.weights();
  CHECK_THROWS_WITH(td.update(OneHot{0}, nan, 0.9, OneHot{1}),
                    "LinearTd::update: reward must be finite, got nan; nothing was changed");
  CHECK_THROWS_WITH(td.update(OneHot{0}, inf, 0.9, OneHot{1}), Catch::Contains("reward must be finite, got inf"));
  Eigen::VectorXd bad = Eigen::VectorXd::Ones(3);
  bad[1] = inf;
  CHECK_THROWS_WITH(td.update(bad, 0.0, 0.9, bad), "LinearTd::update: phi has a non-finite entry; nothing was changed");
  CHECK(td.weights() == before);
  LinearTdLambda lambda(3, 0.1, 0.9);
  lambda.update(OneHot{0}, 1.0, 0.9, OneHot{1});
  const Eigen::VectorXd e_before = lambda.eligibility(), w_before = lambda.weights();
  CHECK_THROWS_WITH(lambda.update(OneHot{2}, nan, 0.9, OneHot{1}),
                    "LinearTdLambda::update: reward must be finite, got nan; nothing was changed");
  CHECK(lambda.eligibility() == e_before);  // the eligibility was not advanced either
  CHECK(lambda.weights() == w_before);
  LinearTdBank bank(3, {0.1, 0.2});
  CHECK_THROWS_WITH(bank.update(OneHot{0}, nan, 0.9, OneHot{1}),
                    "LinearTdBank::update: reward must be finite, got nan; nothing was changed");
  CHECK(bank.weights().isZero());
  TraceTd<> fused(0.5, 3, 0.1);
  fused.reset(0);
  fused.learn(1, 1.0, 0.9);
  const Eigen::VectorXd fused_w = fused.weights(), fused_z = fused.trace();
  CHECK_THROWS_WITH(fused.learn(2, -inf, 0.9), "TraceTd::learn: reward must be finite, got -inf; nothing was changed");
  CHECK(fused.weights() == fused_w);
  CHECK(fused.trace() == fused_z);
}

}  // namespace td_test
