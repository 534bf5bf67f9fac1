// Tests of loop/run_td.hpp: the TD run loops record where asked, end episodes the Gymnasium way
// (no bootstrap after termination, a fresh memory after any end), run_td_shared and
// run_td_lockstep give every learner exactly the result of its own run, and bad loop parameters,
// mismatched learners and non-finite rewards are refused before they change anything.

#include <Eigen/Dense>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
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
#include <span>
#include <vector>

#include "env_test_support.hpp"

namespace run_td_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// Cuts every episode of an environment after `limit` steps (truncated, not terminated).
template <class Env>
struct Truncating {
  Env env;
  std::size_t limit, t = 0, episodes_ended = 0, terminated = 0;
  template <class G>
  Observation reset(G& gen) {
    t = 0;
    return env.reset(gen);
  }
  template <class G>
  TimeStep<> step(G& gen) {
    TimeStep<> tr = env.step(gen);
    tr.truncated = !tr.terminated && ++t == limit;
    episodes_ended += tr.terminated || tr.truncated ? 1 : 0;
    terminated += tr.terminated ? 1 : 0;
    return tr;
  }
  [[nodiscard]] State state() const { return env.state(); }
  [[nodiscard]] std::size_t num_states() const { return env.num_states(); }
  [[nodiscard]] std::size_t num_observations() const { return env.num_observations(); }
};

/// LinearTd that also records the discounts it was given and the episode ends.
struct RecordingTd : LinearTd<> {
  using LinearTd<>::LinearTd;
  std::size_t zero_discounts = 0, ends = 0, updates = 0;
  template <class P, class Q>
  double update(const P& phi, double reward, double discount, const Q& phi_next) {
    zero_discounts += discount == 0.0 ? 1 : 0;
    ++updates;
    return LinearTd<>::update(phi, reward, discount, phi_next);
  }
  void end_episode() { ++ends; }
};

}  // namespace

namespace {
/// The two-state HMM paying NaN.
struct NanReward : TwoStateHmm {
  using TwoStateHmm::TwoStateHmm;
  template <class G>
  TimeStep<> step(G& g) {
    TimeStep<> s = TwoStateHmm::step(g);
    s.reward = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
};
}  // namespace

TEST_CASE("run_td records at the requested steps", "[run]") {
  TwoStateHmm env(0.2, 0.1);
  MemoryTrace<> trace(0.5, 2);
  LinearTd td(2, 0.01);
  Xoshiro256StarStar gen(1);
  std::vector<std::size_t> seen;
  std::vector<Eigen::VectorXd> weights;
  const std::vector<std::size_t> record{0, 1, 10, 100};
  run_td(env, trace, td, gen, TdRun{.steps = 100, .discount = 0.9}, record,
         [&](std::size_t step, const LinearTd<>& learner) {
           seen.push_back(step);
           weights.push_back(learner.weights());
         });
  CHECK(seen == record);
  CHECK(weights[0].isZero());
  CHECK(weights.back() == td.weights());
  CHECK(weights[1] != weights[2]);
}

TEST_CASE("run_td ends episodes: no bootstrap after termination, a fresh memory after any end", "[run]") {
  // Episodes of the chain terminate after 3 or more steps; the wrapper truncates those at 4.
  Truncating<FiniteHmm> env{test::episodic_chain(), 4};
  Window<> window(2, env.num_observations(), WindowPadding::zero);
  RecordingTd td(window.dim(), 0.1);
  Xoshiro256StarStar gen(2);
  run_td(env, window, td, gen, TdRun{.steps = 1000, .discount = 1.0, .episodic = true});
  REQUIRE(env.terminated > 50);
  REQUIRE(env.episodes_ended > env.terminated + 50);
  CHECK(td.ends == env.episodes_ended);
  CHECK(td.zero_discounts == env.terminated);
  CHECK(td.updates == 1000);

  // The fused and generic loops agree across both kinds of episode end.
  for (const auto init : {TraceInit::zero, TraceInit::first_observation, TraceInit::normalized}) {
    Truncating<FiniteHmm> a{test::episodic_chain(), 4}, b{test::episodic_chain(), 4};
    MemoryTrace<> trace(0.75, a.num_observations(), init);
    LinearTd generic(trace.dim(), 0.05);
    TraceTd<> fused(0.75, b.num_observations(), 0.05, init);
    Xoshiro256StarStar gen_a(5), gen_b(5);
    run_td(a, trace, generic, gen_a, TdRun{.steps = 5000, .discount = 1.0, .episodic = true});
    run_td(b, fused, gen_b, TdRun{.steps = 5000, .discount = 1.0, .episodic = true});
    REQUIRE(a.terminated > 0);
    REQUIRE(a.episodes_ended > a.terminated);
    CHECK((fused.weights() - generic.weights()).cwiseAbs().maxCoeff() < 1e-12);
  }

  // TD(κ) keeps no eligibility across a truncation.
  LinearTdLambda lambda_td(3, 0.1, 0.9);
  lambda_td.update(OneHot{0}, 1.0, 0.9, OneHot{1});
  lambda_td.end_episode();
  lambda_td.update(OneHot{2}, 1.0, 0.9, OneHot{1});
  CHECK(lambda_td.eligibility() == Eigen::Vector3d(0, 0, 1));
}

TEST_CASE("run_td_lockstep gives exactly the results of separate runs", "[run][trace_td]") {
  std::array<Truncating<FiniteHmm>, 3> envs{Truncating<FiniteHmm>{test::episodic_chain(), 4},
                                            Truncating<FiniteHmm>{test::episodic_chain(), 4},
                                            Truncating<FiniteHmm>{test::episodic_chain(), 4}};
  std::array<TraceTd<>, 3> learners{TraceTd<>(0.5, 4, 0.05), TraceTd<>(0.9, 4, 0.05), TraceTd<>(0.0, 4, 0.1)};
  std::array<Xoshiro256StarStar, 3> gens{make_stream(1, 0), make_stream(1, 1), make_stream(1, 2)};
  const TdRun run{.steps = 3000, .discount = 1.0, .episodic = true};
  run_td_lockstep(envs, learners, gens, run);
  for (std::size_t k = 0; k < 3; ++k) {
    Truncating<FiniteHmm> env{test::episodic_chain(), 4};
    TraceTd<> alone(learners[k].lambda(), 4, learners[k].step_size());
    auto gen = make_stream(1, k);
    run_td(env, alone, gen, run);
    CHECK(alone.weights() == learners[k].weights());  // bit for bit
    CHECK(gen == gens[k]);
  }
}

TEST_CASE("run_td_shared gives every learner exactly the result of its own run on the same walk", "[run]") {
  const TdRun run{.steps = 3000, .discount = 1.0, .episodic = true};
  const std::vector<std::size_t> record{0, 10, 1000, 3000};
  const std::vector<double> alphas{0.01, 0.1, 0.5};
  SECTION("one memory, several learners (both kinds of episode end)") {
    Truncating<FiniteHmm> env{test::episodic_chain(), 4};
    Window<> window(2, 4);
    std::vector<LinearTd<>> learners;
    for (double a : alphas) learners.emplace_back(window.dim(), a);
    auto gen = make_stream(3, 0);
    std::vector<std::vector<Eigen::VectorXd>> seen(alphas.size());
    run_td_shared(env, window, std::span(learners), gen, run, record,
                  [&](std::size_t, std::span<const LinearTd<>> all) {
                    for (std::size_t i = 0; i < all.size(); ++i) seen[i].push_back(all[i].weights());
                  });
    REQUIRE(env.terminated > 0);
    REQUIRE(env.episodes_ended > env.terminated);
    for (std::size_t i = 0; i < alphas.size(); ++i) {
      Truncating<FiniteHmm> alone_env{test::episodic_chain(), 4};
      Window<> alone_window(2, 4);
      LinearTd alone(alone_window.dim(), alphas[i]);
      auto alone_gen = make_stream(3, 0);
      std::vector<Eigen::VectorXd> alone_seen;
      run_td(alone_env, alone_window, alone, alone_gen, run, record,
             [&](std::size_t, const LinearTd<>& l) { alone_seen.push_back(l.weights()); });
      CHECK(alone.weights() == learners[i].weights());  // bit for bit
      CHECK(alone_seen == seen[i]);
      CHECK(alone_gen == gen);  // the learners drew nothing
    }
    CHECK(learners[0].weights() != learners[1].weights());
  }
  SECTION("learners with their own memories (TraceTd with several lambda)") {
    Truncating<FiniteHmm> env{test::episodic_chain(), 4};
    std::vector<TraceTd<>> learners{TraceTd<>(0.0, 4, 0.1), TraceTd<>(0.5, 4, 0.05), TraceTd<>(0.9, 4, 0.05)};
    auto gen = make_stream(4, 2);
    std::size_t records = 0;
    run_td_shared(env, std::span(learners), gen, run, record, [&](std::size_t step, std::span<const TraceTd<>> all) {
      CHECK(step == record[records++]);
      CHECK(all.size() == 3);
    });
    CHECK(records == record.size());
    for (const auto& learner : learners) {
      Truncating<FiniteHmm> alone_env{test::episodic_chain(), 4};
      TraceTd<> alone(learner.lambda(), 4, learner.step_size());
      auto alone_gen = make_stream(4, 2);
      run_td(alone_env, alone, alone_gen, run);
      CHECK(alone.weights() == learner.weights());
      CHECK(alone_gen == gen);
    }
  }
}

TEST_CASE("the run loops refuse a learner sized for another memory before the first step", "[td][errors]") {
  // The review's case: LinearTd sized for an 11-observation trace, run with a window of 11^2 entries.
  NoisyRandomWalk walk;
  Window<> window(2, 11);
  LinearTd td(11, 0.1);
  Xoshiro256StarStar gen(1);
  const Xoshiro256StarStar untouched = gen;
  CHECK_THROWS_WITH(run_td(walk, window, td, gen, TdRun{.steps = 10}),
                    "run_td: the learner has dim 11 but the memory has dim 121");
  CHECK(gen == untouched);  // refused before the environment drew anything
  CHECK(td.weights().isZero());
  std::vector<LinearTd<>> learners{LinearTd(121, 0.1), LinearTd(11, 0.1)};
  CHECK_THROWS_WITH(run_td_shared(walk, window, std::span(learners), gen, TdRun{.steps = 10}),
                    "run_td_shared: learners[1] has dim 11 but the memory has dim 121");
  LinearTdBank bank(11, {0.1, 0.2});
  CHECK_THROWS_WITH(run_td(walk, window, bank, gen, TdRun{.steps = 10}),
                    "run_td: the learner has dim 11 but the memory has dim 121");
}

TEST_CASE("bad loop parameters throw with the value named", "[run][errors]") {
  TwoStateHmm env(0.2, 0.1);
  MemoryTrace<> trace(0.5, 2);
  LinearTd learner(2, 0.01);
  Xoshiro256StarStar gen(1);
  CHECK_THROWS_WITH(run_td(env, trace, learner, gen, TdRun{.steps = 10, .discount = 1.0}),
                    "run_td: discount must be in [0, 1), got 1");
  CHECK_THROWS_WITH(run_td(env, trace, learner, gen, TdRun{.steps = 10, .discount = 1.5, .episodic = true}),
                    "run_td: discount must be in [0, 1) (or 1 for an episodic task), got 1.5");
  const std::vector<std::size_t> late{11}, unsorted{5, 5};
  CHECK_THROWS_WITH(run_td(env, trace, learner, gen, TdRun{.steps = 10, .discount = 0.9}, late),
                    "run_td: record_at[0] = 11 is beyond the run's 10 steps");
  CHECK_THROWS_WITH(run_td(env, trace, learner, gen, TdRun{.steps = 10, .discount = 0.9}, unsorted),
                    "run_td: record_at must be strictly increasing, got 5 then 5");
}

TEST_CASE("a non-finite reward is refused by the loops before it poisons any weight", "[run][errors]") {
  // Once per step, naming the loop.
  {
    NanReward env(0.2, 0.1);
    MemoryTrace<> trace(0.5, 2);
    LinearTd learner(2, 0.01);
    Xoshiro256StarStar gen(1);
    CHECK_THROWS_WITH(run_td(env, trace, learner, gen, TdRun{.steps = 10}),
                      "run_td: the environment returned a non-finite reward nan; no learner was changed");
    CHECK(learner.weights().isZero());
    TraceTd<> fused(0.5, 2, 0.1);
    CHECK_THROWS_WITH(run_td(env, fused, gen, TdRun{.steps = 10}),
                      "run_td: the environment returned a non-finite reward nan; no learner was changed");
    CHECK(fused.weights().isZero());
  }
}

}  // namespace run_td_test
