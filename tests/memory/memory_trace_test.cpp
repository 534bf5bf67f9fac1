// Tests of memory/memory_trace.hpp, memory/trace_bank.hpp and memory/with_actions.hpp: the
// recursion against the closed form eq. (2), eq. (4), the three initialisations, compile-time
// against run-time parameters, and bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/memory/with_actions.hpp>
#include <memtrace/random.hpp>
#include <type_traits>
#include <vector>

namespace memory_trace_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

std::vector<Observation> random_history(std::size_t length, std::size_t num_observations, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  std::vector<Observation> h(length);
  for (auto& y : h) y = uniform_index(g, num_observations);
  return h;
}

template <class M>
void feed(M& memory, const std::vector<Observation>& history) {
  memory.reset(history.front());
  for (std::size_t t = 1; t < history.size(); ++t) memory.update(history[t]);
}

double max_abs(const Eigen::VectorXd& v) { return v.cwiseAbs().maxCoeff(); }

}  // namespace

TEST_CASE("the recursion eq. (1) equals the closed form eq. (2)", "[memory_trace]") {
  for (const double lambda : {0.0, 0.1, 1.0 / 3.0, 0.5, 0.9, 0.99}) {
    for (const std::size_t length : {1u, 2u, 7u, 50u, 400u}) {
      const auto h = random_history(length, 5, static_cast<std::uint64_t>(length * 1000 + lambda * 100));
      MemoryTrace<> trace(lambda, 5, TraceInit::zero);
      feed(trace, h);
      INFO("lambda = " << lambda << ", |h| = " << length);
      CHECK(max_abs(trace.features() - trace_of(h, lambda, 5)) < 1e-14);
      // eq. (4): the entries of a length-|h| trace sum to 1 - λ^|h|.
      CHECK(trace.features().sum() == Approx(trace_subspace_sum(lambda, length)).epsilon(1e-13));
    }
  }
}

TEST_CASE("first_observation init is the trace of y_0 repeated forever", "[memory_trace]") {
  const auto h = random_history(30, 4, 17);
  for (const double lambda : {0.0, 0.5, 0.95}) {
    MemoryTrace<> trace(lambda, 4, TraceInit::first_observation);
    feed(trace, h);
    // z_λ(y_0^∞ h) = z_λ(h) + λ^{|h|} e_{y_0}: the infinitely old part has weight λ^{|h|}.
    Eigen::VectorXd expected = trace_of(h, lambda, 4);
    expected[static_cast<Eigen::Index>(h.front())] += std::pow(lambda, 30.0);
    CHECK(max_abs(trace.features() - expected) < 1e-14);
    CHECK(trace.features().sum() == Approx(1.0).epsilon(1e-14));
  }
  MemoryTrace<> trace(0.5, 4);
  CHECK(trace.init() == TraceInit::first_observation);  // the documented default
  trace.reset(2);
  CHECK(trace.features() == Eigen::Vector4d(0, 0, 1, 0));
}

TEST_CASE("normalized init divides by the accumulated weight 1 - λ^{t+1}", "[memory_trace]") {
  const auto h = random_history(40, 3, 23);
  for (const double lambda : {0.0, 0.3, 0.9, 0.99}) {
    MemoryTrace<> trace(lambda, 3, TraceInit::normalized);
    trace.reset(h.front());
    CHECK(trace.features()[static_cast<Eigen::Index>(h.front())] == 1.0);
    for (std::size_t t = 1; t < h.size(); ++t) {
      trace.update(h[t]);
      const std::vector<Observation> seen(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(t + 1));
      const Eigen::VectorXd expected = trace_of(seen, lambda, 3) / (1.0 - std::pow(lambda, double(t + 1)));
      INFO("lambda = " << lambda << ", t = " << t);
      REQUIRE(max_abs(trace.features() - expected) < 1e-13);
      REQUIRE(trace.features().sum() == Approx(1.0).epsilon(1e-13));
    }
  }
}

TEST_CASE("a long normalized trace stays exact after lambda^t underflows", "[memory_trace]") {
  const auto h = random_history(20000, 3, 31);
  MemoryTrace<> normalized(0.9, 3, TraceInit::normalized), zero(0.9, 3, TraceInit::zero);
  feed(normalized, h);
  feed(zero, h);
  CHECK(max_abs(normalized.features() - zero.features()) < 1e-15);  // 1 - 0.9^20000 is 1
  CHECK(normalized.features().sum() == Approx(1.0).epsilon(1e-14));
}

TEST_CASE("the three initialisations differ only by the weight of the time before y_0", "[memory_trace]") {
  const auto h = random_history(12, 3, 5);
  const double lambda = 0.7;
  MemoryTrace<> zero(lambda, 3, TraceInit::zero), first(lambda, 3, TraceInit::first_observation),
      normalized(lambda, 3, TraceInit::normalized);
  feed(zero, h);
  feed(first, h);
  feed(normalized, h);
  const double weight = std::pow(lambda, 12.0);
  CHECK(zero.features().sum() == Approx(1.0 - weight));
  CHECK(max_abs(first.features() - zero.features()) == Approx(weight));
  CHECK(max_abs(normalized.features() - zero.features() / (1.0 - weight)) < 1e-15);
}

TEST_CASE("compile-time and run-time parameters give bit-identical traces", "[memory_trace]") {
  const auto h = random_history(1000, 11, 99);
  MemoryTrace<> runtime(0.9, 11);
  MemoryTrace<std::ratio<9, 10>> ratio_lambda(11);
  MemoryTrace<std::ratio<9, 10>, 11> all_fixed;
  MemoryTrace<dynamic_lambda, 11> fixed_size(0.9);
  feed(runtime, h);
  feed(ratio_lambda, h);
  feed(all_fixed, h);
  feed(fixed_size, h);
  CHECK(ratio_lambda.lambda() == 0.9);
  CHECK(runtime.features() == ratio_lambda.features());
  CHECK(runtime.features() == Eigen::VectorXd(all_fixed.features()));
  CHECK(runtime.features() == Eigen::VectorXd(fixed_size.features()));
  CHECK(all_fixed.dim() == 11);
}

TEST_CASE("a long run keeps eq. (4) to rounding (no drift)", "[memory_trace]") {
  MemoryTrace<std::ratio<99, 100>, 11> trace(TraceInit::zero);
  Xoshiro256StarStar g(1);
  trace.reset(0);
  for (int t = 1; t < 1000000; ++t) trace.update(uniform_index(g, 11));
  CHECK(std::abs(trace.features().sum() - 1.0) < 1e-12);  // λ^{10^6} is 0
  CHECK(trace.features().minCoeff() >= 0.0);
}

TEST_CASE("update on a fresh or cleared trace starts the history like reset", "[memory_trace]") {
  MemoryTrace<> a(0.5, 3), b(0.5, 3);
  a.update(1);
  b.reset(1);
  CHECK(a.features() == b.features());
  a.update(2);
  a.clear();
  CHECK(a.features().isZero());
  a.update(0);
  b.reset(0);
  CHECK(a.features() == b.features());
}

TEST_CASE("TraceBank stacks one trace per lambda", "[memory_trace][trace_bank]") {
  const std::vector<double> lambdas{0.0, 0.5, 7.0 / 8.0};
  const auto h = random_history(25, 5, 77);
  for (const auto init : {TraceInit::zero, TraceInit::first_observation, TraceInit::normalized}) {
    TraceBank<> bank(lambdas, 5, init);
    TraceBank<5> fixed(lambdas, 5, init);
    feed(bank, h);
    feed(fixed, h);
    REQUIRE(bank.dim() == 15);
    REQUIRE(bank.size() == 3);
    CHECK(bank.features() == fixed.features());
    for (std::size_t k = 0; k < lambdas.size(); ++k) {
      MemoryTrace<> single(lambdas[k], 5, init);
      feed(single, h);
      CHECK(bank.trace(k) == single.features());
    }
  }
  // λ = 0 is the current observation: the PPO agent's memoryless input.
  TraceBank<> bank({0.0, 0.75}, 5);
  feed(bank, h);
  CHECK(bank.trace(0) == Eigen::VectorXd::Unit(5, static_cast<Eigen::Index>(h.back())));
}

TEST_CASE("WithActions traces actions as well as observations", "[memory_trace][with_actions]") {
  const std::size_t num_observations = 3, num_actions = 2;
  const auto symbols = WithActions<MemoryTrace<>>::num_symbols(num_observations, num_actions);
  REQUIRE(symbols == 9);
  WithActions<MemoryTrace<>> memory(MemoryTrace<>(0.5, symbols, TraceInit::zero), num_observations, num_actions);
  MemoryTrace<> observations(0.5, num_observations, TraceInit::zero);
  MemoryTrace<> actions(0.5, num_actions + 1, TraceInit::zero);  // action "none" = num_actions

  const auto ys = random_history(20, num_observations, 8);
  const auto us = random_history(20, num_actions, 9);
  memory.reset(ys[0]);
  observations.reset(ys[0]);
  actions.reset(num_actions);
  for (std::size_t t = 1; t < ys.size(); ++t) {
    memory.update(us[t], ys[t]);
    observations.update(ys[t]);
    actions.update(us[t]);
  }
  // The joint trace holds both traces as linear functions: sums over blocks and within blocks.
  const Eigen::Map<const Eigen::MatrixXd> blocks(memory.features().data(), 3, 3);  // column u = block u
  CHECK(max_abs(blocks.rowwise().sum() - observations.features()) < 1e-15);
  CHECK(max_abs(blocks.colwise().sum().transpose() - actions.features()) < 1e-15);

  // With a window the joint symbols index a table of (action, observation) windows.
  WithActions<Window<>> window(Window<>(2, symbols), num_observations, num_actions);
  window.reset(1);
  window.update(1, 2);
  CHECK(window.features().index == window.symbol(1, 2) + symbols * window.symbol(num_actions, 1));
}

TEST_CASE("bad trace arguments throw with the value named and leave the trace unchanged", "[memory_trace][errors]") {
  CHECK_THROWS_WITH(MemoryTrace<>(1.5, 3), "MemoryTrace: lambda must be in [0, 1), got 1.5");
  CHECK_THROWS_WITH(MemoryTrace<>(1.0, 3), "MemoryTrace: lambda must be in [0, 1), got 1");
  CHECK_THROWS_WITH(MemoryTrace<>(-0.1, 3), "MemoryTrace: lambda must be in [0, 1), got -0.1");
  CHECK_THROWS_WITH(MemoryTrace<>(std::nan(""), 3), Catch::Contains("lambda must be in [0, 1), got nan"));
  CHECK_THROWS_WITH(MemoryTrace<>(0.5, 0), "MemoryTrace: num_observations must be at least 1, got 0");
  CHECK_THROWS_WITH((MemoryTrace<std::ratio<1, 2>, 4>(TraceInit::zero), MemoryTrace<std::ratio<1, 2>, 4>(3)),
                    "MemoryTrace: num_observations is fixed at compile time to 4, got 3");

  MemoryTrace<> trace(0.5, 3);
  CHECK_THROWS_WITH(trace.reset(3), "MemoryTrace: observation must be in [0, 3), got 3");
  trace.reset(1);
  trace.update(2);
  const Eigen::VectorXd before = trace.features();
  CHECK_THROWS_WITH(trace.update(7), "MemoryTrace: observation must be in [0, 3), got 7");
  CHECK(trace.features() == before);
  CHECK_THROWS_AS(trace.update(static_cast<Observation>(-1)), std::invalid_argument);
  CHECK(trace.features() == before);

  CHECK_THROWS_WITH(MemoryTrace<>(0.5, static_cast<std::size_t>(-1)),
                    "MemoryTrace: num_observations must be below 2^63, got 18446744073709551615");
  CHECK_THROWS_WITH(trace.reset(5), "MemoryTrace: observation must be in [0, 3), got 5");  // a bad reset
  CHECK(trace.features() == before);

  CHECK_THROWS_WITH(TraceBank<>({0.1, 0.2, 0.3, 0.4}, std::size_t{1} << 62),
                    "TraceBank: K|Y| with K = 4 lambdas and |Y| = 4611686018427387904 overflows the index type");
  CHECK_THROWS_WITH(TraceBank<>({}, 3), "TraceBank: lambdas must hold at least one lambda, got none");
  // Storage that cannot fit is refused before allocating (it used to end in std::bad_alloc).
  CHECK_THROWS_WITH(
      MemoryTrace<>(0.5, std::size_t{1} << 40),
      "MemoryTrace: the trace for num_observations = 1099511627776 needs 1099511627776 entries (8192 GiB), "
      "more than the 16 GiB one array may take (memtrace::default_max_bytes); refused before allocating");
  CHECK_THROWS_WITH(TraceBank<>({0.1, 0.2}, std::size_t{1} << 40),
                    Catch::StartsWith("TraceBank: the traces K|Y| for num_observations = 1099511627776 needs "
                                      "2199023255552 entries (16384 GiB)"));
  CHECK_THROWS_WITH(TraceBank<>({0.5, 1.0}, 3), "TraceBank: lambdas[1] must be in [0, 1), got 1");
  CHECK_THROWS_WITH(TraceBank<>({0.5}, 0), "TraceBank: num_observations must be at least 1, got 0");
  TraceBank<> bank({0.5}, 2);
  bank.reset(1);
  const Eigen::VectorXd bank_before = bank.features();
  CHECK_THROWS_WITH(bank.update(2), "TraceBank: observation must be in [0, 2), got 2");
  CHECK(bank.features() == bank_before);
  CHECK_THROWS_WITH(bank.trace(1), "TraceBank::trace: k must be below 1, got 1");

  CHECK_THROWS_WITH(
      WithActions<MemoryTrace<>>(MemoryTrace<>(0.5, 6), 3, 2),
      "WithActions: the memory must be built over |Y|(|U| + 1) = 9 symbols, but it has num_observations = 6");
  WithActions<MemoryTrace<>> memory(MemoryTrace<>(0.5, 9), 3, 2);
  memory.reset(0);
  memory.update(1, 2);
  const Eigen::VectorXd memory_before = memory.features();
  CHECK_THROWS_WITH(memory.update(2, 0), "WithActions: action must be in [0, 2), got 2");
  CHECK_THROWS_WITH(memory.update(0, 3), "WithActions: observation must be in [0, 3), got 3");
  CHECK(memory.features() == memory_before);
  CHECK_THROWS_WITH(WithActions<MemoryTrace<>>(MemoryTrace<>(0.5, 3), 3, 0),
                    "WithActions: num_actions must be at least 1, got 0");
}

}  // namespace memory_trace_test
