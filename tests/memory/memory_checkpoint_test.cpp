// Tests of memory/checkpoint.hpp and analysis/belief_checkpoint.hpp: for every memory (compile-time
// and run-time parameters, float and double, index, dense and MultiHot observations, the wrappers
// over several memories, the belief filter), a memory restored from a state continues exactly as the
// saved one (features bit-identical at every step, through resets and clears), and a state of other
// parameters, a missing tensor, a non-finite or out-of-range value are refused with "load_state: "
// and the prefix, leaving the memory unchanged.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memtrace/analysis/belief.hpp>
#include <memtrace/analysis/belief_checkpoint.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/checkpoint.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/features.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/memory/with_actions.hpp>
#include <memtrace/random.hpp>
#include <memtrace/safetensors.hpp>
#include <numeric>
#include <ratio>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace memory_checkpoint_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

using Gen = Xoshiro256StarStar;
const std::string prefix = "rollout.memory.3.";

template <class S>
using VectorX = Eigen::Matrix<S, Eigen::Dynamic, 1>;

// Observations: first(g) starts a history (reset), next(g) continues it (update); the same draw is
// fed to both memories.
struct Indices {
  std::size_t n;
  Observation first(Gen& g) const { return uniform_index(g, n); }
  Observation next(Gen& g) const { return first(g); }
};
template <class S>
struct Dense {
  std::size_t d;
  VectorX<S> first(Gen& g) const {
    VectorX<S> y(static_cast<Eigen::Index>(d));
    for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = static_cast<S>(standard_normal(g));
    return y;
  }
  VectorX<S> next(Gen& g) const { return first(g); }
};
/// Up to `most` distinct active entries of d.
template <int C>
struct Hot {
  std::size_t d, most;
  MultiHot<C> first(Gen& g) const {
    std::vector<std::size_t> all(d);
    std::iota(all.begin(), all.end(), std::size_t{0});
    const std::size_t count = uniform_index(g, most + 1);
    for (std::size_t k = 0; k < count; ++k) std::swap(all[k], all[k + uniform_index(g, d - k)]);
    return MultiHot<C>(std::span<const std::size_t>(all.data(), count));
  }
  MultiHot<C> next(Gen& g) const { return first(g); }
};
/// An action with each observation after the first (WithActions, AppendAction).
template <class Draw>
struct Acting {
  Draw draw;
  std::size_t num_actions;
  auto first(Gen& g) const { return draw.first(g); }
  auto next(Gen& g) const {
    const Action u = uniform_index(g, num_actions);
    return std::pair{u, draw.next(g)};
  }
};

template <class M, class Y>
void update(M& m, const Y& y) {
  m.update(y);
}
template <class M, class Y>
void update(M& m, const std::pair<Action, Y>& uy) {
  m.update(uy.first, uy.second);
}

/// Features equal entry by entry (==: bit-identical but for the sign of zero).
template <class F>
bool same(const F& a, const F& b) {
  if constexpr (requires { a.array(); })
    return a.size() == b.size() && (a.array() == b.array()).all();
  else if constexpr (requires { a.index; })
    return a == b;
  else
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

/// A history of a random length with a reset in between.
template <class M, class Draw>
void drive(M& m, const Draw& draw, Gen& g) {
  m.reset(draw.first(g));
  for (std::uint64_t t = uniform_index(g, 30); t > 0; --t) update(m, draw.next(g));
  m.reset(draw.first(g));
  for (std::uint64_t t = 1 + uniform_index(g, 40); t > 0; --t) update(m, draw.next(g));
}

[[nodiscard]] TensorFile state_of(const auto& m) {
  TensorFile file;
  save_state(file, prefix, m);
  return file;
}

/// A saved after a random history (or fresh, or cleared), restored into B built alike and driven
/// elsewhere (or fresh): B saves the same state and, fed what A is fed, has A's features at every
/// step, through a reset and a clear.
template <class Make, class Draw>
void check_restored_continues(Make make, Draw draw, std::uint64_t seed) {
  using M = decltype(make());
  static_assert(Checkpointable<M>);
  constexpr bool clearable = requires(M & m) { m.clear(); };
  Gen g(seed);
  for (int trial = 0; trial < 6; ++trial) {
    INFO("trial " << trial);
    M a = make();
    if (trial > 0) drive(a, draw, g);  // trial 0: the state of a fresh memory
    if constexpr (clearable)
      if (trial == 1) a.clear();
    const TensorFile file = state_of(a);
    M b = make();
    if (trial % 2 == 0) drive(b, draw, g);
    load_state(file, prefix, b);
    CHECK(state_of(b) == file);
    REQUIRE(same(a.features(), b.features()));
    for (int t = 0; t < 200; ++t) {
      if (t == 80) {
        const auto y = draw.first(g);
        a.reset(y);
        b.reset(y);
      } else if (t == 140 && clearable) {
        if constexpr (clearable) {
          a.clear();
          b.clear();
        }
      } else {
        const auto y = draw.next(g);
        update(a, y);
        update(b, y);
      }
      INFO("step " << t);
      REQUIRE(same(a.features(), b.features()));
    }
  }
}

/// B (driven) refuses, with "load_state: ", the prefix, and its state unchanged: the state of
/// `other` (other parameters), A's state without any one of its tensors, and A's state with the
/// first or last value of any tensor made non-finite (real) or 2^64 - 1 (integer). A's state itself
/// then loads.
template <class Make, class Draw, class Other>
void check_refusals(Make make, Draw draw, const Other& other, std::uint64_t seed) {
  using M = decltype(make());
  Gen g(seed);
  M a = make();
  drive(a, draw, g);
  const TensorFile file = state_of(a);
  M b = make();
  drive(b, draw, g);
  const TensorFile before = state_of(b);
  const auto refused = [&](const TensorFile& bad, const std::string& what) {
    INFO(what);
    CHECK_THROWS_WITH(load_state(bad, prefix, b), StartsWith("load_state: ") && Contains(prefix));
    CHECK(state_of(b) == before);
  };
  refused(state_of(other), "a state of other parameters");
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    TensorFile bad = file;
    bad.tensors.erase(bad.tensors.begin() + static_cast<std::ptrdiff_t>(i));
    refused(bad, "without " + file.tensors[i].name);
  }
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const Tensor& t = file.tensors[i];
    if (t.size() == 0) continue;
    for (const std::size_t at : {std::size_t{0}, t.size() - 1}) {
      TensorFile bad = file;
      Tensor& changed = bad.tensors[i];
      if (t.dtype == TensorDtype::u64) {
        changed.integers[at] = std::numeric_limits<std::uint64_t>::max();
        refused(bad, t.name + " holding 2^64 - 1 at " + std::to_string(at));
      } else {
        for (const double v : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
          changed.values[at] = v;
          refused(bad, t.name + " holding a non-finite value at " + std::to_string(at));
        }
      }
    }
  }
  load_state(file, prefix, b);
  CHECK(same(a.features(), b.features()));
}

/// B refuses `bad` with exactly `message`, unchanged.
template <class M>
void check_refused_with(M& b, const TensorFile& bad, const std::string& message) {
  const TensorFile before = state_of(b);
  CHECK_THROWS_WITH(load_state(bad, prefix, b), message);
  CHECK(state_of(b) == before);
}

Tensor& tensor(TensorFile& file, const std::string& name) {
  for (Tensor& t : file.tensors)
    if (t.name == prefix + name) return t;
  FAIL("no tensor " << name);
  return file.tensors.front();
}

/// A memory without a CheckpointState: not checkpointable, nor are the wrappers over it.
struct PlainMemory {
  Eigen::VectorXd z = Eigen::VectorXd::Zero(3);
  void reset(Observation) {}
  void update(Observation) {}
  [[nodiscard]] const Eigen::VectorXd& features() const { return z; }
  [[nodiscard]] std::size_t dim() const { return 3; }
};

const NoisyRandomWalk walk({.num_states = 21, .max_step = 3, .num_observations = 5});

}  // namespace

static_assert(Checkpointable<Xoshiro256StarStar>);
static_assert(Checkpointable<MemoryTrace<>>);
static_assert(Checkpointable<MemoryTrace<dynamic_lambda, 7>>);
static_assert(Checkpointable<MemoryTrace<std::ratio<9, 10>>>);
static_assert(Checkpointable<MemoryTrace<std::ratio<9, 10>, 7, float>>);
static_assert(Checkpointable<MemoryTrace<dynamic_lambda, dynamic, float>>);
static_assert(Checkpointable<TraceBank<>>);
static_assert(Checkpointable<TraceBank<45, float>>);
static_assert(Checkpointable<Window<>>);
static_assert(Checkpointable<Window<2, 5>>);
static_assert(Checkpointable<ConcatWindow<>>);
static_assert(Checkpointable<ConcatWindow<3, 4>>);
static_assert(Checkpointable<FrameStack<Eigen::VectorXf>>);
static_assert(Checkpointable<FrameStack<Eigen::Matrix<double, 5, 1>>>);
static_assert(Checkpointable<FrameStack<MultiHot<3>>>);
static_assert(Checkpointable<FrameStack<MultiHot<>>>);
static_assert(Checkpointable<WithActions<MemoryTrace<>>>);
static_assert(Checkpointable<WithActions<Window<>>>);
static_assert(Checkpointable<AppendAction<MemoryTrace<dynamic_lambda, dynamic, float>>>);
static_assert(Checkpointable<AppendAction<TraceBank<>>>);
static_assert(Checkpointable<AppendAction<FrameStack<MultiHot<4>>>>);
static_assert(Checkpointable<AppendAction<AppendAction<MemoryTrace<>>>>);
static_assert(Checkpointable<BeliefFilter>);
static_assert(Memory<PlainMemory>);
static_assert(!Checkpointable<PlainMemory>);
static_assert(!Checkpointable<WithActions<PlainMemory>>);
static_assert(!Checkpointable<AppendAction<PlainMemory>>);
static_assert(!Checkpointable<detail::TraceStep>);  // part of the traces' states, no state of its own

TEST_CASE("a restored MemoryTrace continues exactly as the saved one (every init, compile-time and run-time λ and d)",
          "[checkpoint][memory_trace]") {
  for (const TraceInit init : {TraceInit::zero, TraceInit::first_observation, TraceInit::normalized}) {
    INFO("init " << static_cast<int>(init));
    check_restored_continues([&] { return MemoryTrace<>(0.9, 7, init); }, Indices{7}, 1);
    check_restored_continues([&] { return MemoryTrace<dynamic_lambda, 7>(0.8, init); }, Indices{7}, 2);
    check_restored_continues([&] { return MemoryTrace<std::ratio<9, 10>>(7, init); }, Indices{7}, 3);
    check_restored_continues([&] { return MemoryTrace<std::ratio<1, 2>, 7>(init); }, Indices{7}, 4);
    check_restored_continues([&] { return MemoryTrace<>(0.0, 3, init); }, Indices{3}, 5);  // λ = 0
  }
  // Float and double, dense and MultiHot observations (float traces bit for bit).
  check_restored_continues([] { return MemoryTrace<std::ratio<9, 10>, 7, float>(TraceInit::normalized); },
                           Dense<float>{7}, 6);
  check_restored_continues([] { return MemoryTrace<>(0.95, 6); }, Dense<double>{6}, 7);
  check_restored_continues([] { return MemoryTrace<dynamic_lambda, dynamic, float>(0.985, 45); }, Hot<9>{45, 9}, 8);
  check_restored_continues([] { return MemoryTrace<dynamic_lambda, 45, float>(0.985, TraceInit::normalized); },
                           Hot<9>{45, 9}, 9);
}

TEST_CASE("a restored TraceBank continues exactly as the saved one", "[checkpoint][trace_bank]") {
  check_restored_continues([] { return TraceBank<>({0.0, 0.985}, 5); }, Indices{5}, 11);
  check_restored_continues([] { return TraceBank<>({0.5, 0.9, 0.99}, 4, TraceInit::normalized); }, Indices{4}, 12);
  check_restored_continues(
      [] {
        return TraceBank<45, float>({0.0, 0.985}, 45, TraceInit::normalized);
      },
      Hot<9>{45, 9}, 13);
  check_restored_continues(
      [] {
        return TraceBank<dynamic, float>({0.3, 0.7}, 6, TraceInit::zero);
      },
      Dense<float>{6}, 14);
  check_restored_continues([] { return TraceBank<>({0.9}, 6); }, Dense<double>{6}, 15);
}

TEST_CASE("a restored Window or ConcatWindow continues exactly as the saved one (both paddings)",
          "[checkpoint][window]") {
  for (const WindowPadding padding : {WindowPadding::repeat_first, WindowPadding::zero}) {
    INFO("padding " << static_cast<int>(padding));
    for (const std::size_t m : {1u, 2u, 3u, 5u}) {
      INFO("m = " << m);
      check_restored_continues([&] { return Window<>(m, 4, padding); }, Indices{4}, 20 + m);
      check_restored_continues([&] { return ConcatWindow<>(m, 4, padding); }, Indices{4}, 30 + m);
    }
    check_restored_continues([&] { return Window<2, 5>(padding); }, Indices{5}, 41);
    check_restored_continues([&] { return Window<3>(3, 6, padding); }, Indices{6}, 42);
    check_restored_continues([&] { return ConcatWindow<3, 4>(padding); }, Indices{4}, 43);
    check_restored_continues([&] { return ConcatWindow<dynamic, 6>(4, 6, padding); }, Indices{6}, 44);
  }
}

TEST_CASE("a restored FrameStack continues exactly as the saved one (dense and MultiHot frames)",
          "[checkpoint][frame_stack]") {
  for (const WindowPadding padding : {WindowPadding::repeat_first, WindowPadding::zero}) {
    INFO("padding " << static_cast<int>(padding));
    check_restored_continues([&] { return FrameStack<Eigen::VectorXf>(4, 6, padding); }, Dense<float>{6}, 51);
    check_restored_continues([&] { return FrameStack<Eigen::Matrix<double, 5, 1>>(3, padding); }, Dense<double>{5}, 52);
    check_restored_continues([&] { return FrameStack<Eigen::VectorXd>(1, 3, padding); }, Dense<double>{3}, 53);
    check_restored_continues([&] { return FrameStack<MultiHot<3>>(4, 10, padding); }, Hot<3>{10, 3}, 54);
    check_restored_continues([&] { return FrameStack<MultiHot<>>(5, 8, padding); }, Hot<dynamic>{8, 8}, 55);
    check_restored_continues([&] { return FrameStack<MultiHot<9>>(65, 45, padding); }, Hot<9>{45, 9}, 56);
  }
}

TEST_CASE("a restored WithActions or AppendAction continues exactly as the saved one, its memory restored with it",
          "[checkpoint][with_actions]") {
  const std::size_t symbols = WithActions<MemoryTrace<>>::num_symbols(4, 2);
  check_restored_continues([&] { return WithActions(MemoryTrace<>(0.9, symbols, TraceInit::normalized), 4, 2); },
                           Acting<Indices>{{4}, 2}, 61);
  check_restored_continues([&] { return WithActions(Window<>(2, symbols, WindowPadding::zero), 4, 2); },
                           Acting<Indices>{{4}, 2}, 62);
  check_restored_continues([&] { return WithActions(ConcatWindow<>(3, symbols), 4, 2); }, Acting<Indices>{{4}, 2}, 63);
  check_restored_continues([] { return AppendAction(MemoryTrace<dynamic_lambda, dynamic, float>(0.9, 5 + 2), 5, 2); },
                           Acting<Dense<float>>{{5}, 2}, 64);
  check_restored_continues(
      [] {
        return AppendAction(TraceBank<>({0.0, 0.985}, 45 + 3), 45, 3);
      },
      Acting<Hot<9>>{{45, 9}, 3}, 65);
  check_restored_continues(
      [] {
        return AppendAction(TraceBank<>({0.5, 0.9}, 6 + 3), 6, 3);
      },
      Acting<Hot<dynamic>>{{6, 6}, 3}, 66);
  check_restored_continues([] { return AppendAction(MemoryTrace<>(0.8, 4 + 2), 4, 2); }, Acting<Indices>{{4}, 2}, 67);
  check_restored_continues([] { return AppendAction(FrameStack<MultiHot<4>>(3, 7 + 2, WindowPadding::zero), 7, 2); },
                           Acting<Hot<3>>{{7, 3}, 2}, 68);
  check_restored_continues(
      [] { return AppendAction(FrameStack<Eigen::VectorXd>(3, 4 + 2, WindowPadding::zero), 4, 2); },
      Acting<Dense<double>>{{4}, 2}, 69);
}

TEST_CASE("a restored BeliefFilter continues exactly as the saved one", "[checkpoint][belief]") {
  const StationaryProcess process(walk, 0.9);
  check_restored_continues([&] { return BeliefFilter(process); }, Indices{5}, 71);
}

TEST_CASE(
    "a state of other parameters, without a tensor or with a non-finite or out-of-range value is refused, and the "
    "memory is unchanged",
    "[checkpoint][errors]") {
  SECTION("MemoryTrace") {
    check_refusals([] { return MemoryTrace<>(0.9, 7); }, Indices{7}, MemoryTrace<>(0.5, 7), 101);
    check_refusals([] { return MemoryTrace<>(0.9, 7); }, Indices{7}, MemoryTrace<>(0.9, 7, TraceInit::zero), 102);
    check_refusals([] { return MemoryTrace<>(0.9, 7); }, Indices{7}, MemoryTrace<>(0.9, 8), 103);
    check_refusals([] { return MemoryTrace<>(0.9, 7); }, Indices{7}, MemoryTrace<dynamic_lambda, 7, float>(0.9), 104);
    check_refusals([] { return MemoryTrace<std::ratio<9, 10>, 7, float>(TraceInit::normalized); }, Dense<float>{7},
                   MemoryTrace<std::ratio<4, 5>, 7, float>(TraceInit::normalized), 105);
  }
  SECTION("TraceBank") {
    check_refusals([] { return TraceBank<>({0.0, 0.985}, 5); }, Indices{5}, TraceBank<>({0.0, 0.9}, 5), 111);
    check_refusals([] { return TraceBank<>({0.0, 0.985}, 5); }, Indices{5}, TraceBank<>({0.985}, 5), 112);
    check_refusals(
        [] {
          return TraceBank<45, float>({0.0, 0.985}, 45);
        },
        Hot<9>{45, 9}, TraceBank<45, float>({0.0, 0.985}, 45, TraceInit::normalized), 113);
  }
  SECTION("Window and ConcatWindow") {
    check_refusals([] { return Window<>(3, 4, WindowPadding::zero); }, Indices{4}, Window<>(2, 4, WindowPadding::zero),
                   121);
    check_refusals([] { return Window<2, 5>(); }, Indices{5}, Window<2, 5>(WindowPadding::zero), 122);
    check_refusals([] { return ConcatWindow<>(3, 4, WindowPadding::zero); }, Indices{4},
                   ConcatWindow<>(3, 5, WindowPadding::zero), 123);
    check_refusals([] { return ConcatWindow<3, 4>(); }, Indices{4}, ConcatWindow<3, 4>(WindowPadding::zero), 124);
  }
  SECTION("FrameStack") {
    check_refusals([] { return FrameStack<Eigen::VectorXf>(4, 6, WindowPadding::zero); }, Dense<float>{6},
                   FrameStack<Eigen::VectorXf>(3, 6, WindowPadding::zero), 131);
    check_refusals([] { return FrameStack<Eigen::VectorXf>(4, 6, WindowPadding::zero); }, Dense<float>{6},
                   FrameStack<Eigen::VectorXd>(4, 6, WindowPadding::zero), 132);
    check_refusals([] { return FrameStack<MultiHot<3>>(4, 10, WindowPadding::zero); }, Hot<3>{10, 3},
                   FrameStack<MultiHot<4>>(4, 10, WindowPadding::zero), 133);
    check_refusals([] { return FrameStack<MultiHot<>>(4, 10, WindowPadding::repeat_first); }, Hot<dynamic>{10, 10},
                   FrameStack<MultiHot<>>(4, 10, WindowPadding::zero), 134);
  }
  SECTION("WithActions and AppendAction, and the memory they wrap") {
    const std::size_t symbols = WithActions<MemoryTrace<>>::num_symbols(4, 2);
    check_refusals([&] { return WithActions(MemoryTrace<>(0.9, symbols), 4, 2); }, Acting<Indices>{{4}, 2},
                   WithActions(MemoryTrace<>(0.5, symbols), 4, 2), 141);
    check_refusals([&] { return WithActions(MemoryTrace<>(0.9, symbols), 4, 2); }, Acting<Indices>{{4}, 2},
                   WithActions(MemoryTrace<>(0.9, 8), 2, 3), 142);
    check_refusals(
        [] {
          return AppendAction(TraceBank<>({0.0, 0.985}, 45 + 3), 45, 3);
        },
        Acting<Hot<9>>{{45, 9}, 3}, AppendAction(TraceBank<>({0.0, 0.985}, 45 + 3), 46, 2), 143);
    check_refusals([] { return AppendAction(FrameStack<MultiHot<4>>(3, 7 + 2, WindowPadding::zero), 7, 2); },
                   Acting<Hot<3>>{{7, 3}, 2},
                   AppendAction(FrameStack<MultiHot<4>>(2, 7 + 2, WindowPadding::zero), 7, 2), 144);
  }
  SECTION("BeliefFilter") {
    const StationaryProcess process(walk, 0.9);
    const StationaryProcess noisier(
        NoisyRandomWalk({.num_states = 21, .max_step = 3, .num_observations = 5, .noise = 0.6}), 0.9);
    const StationaryProcess larger(NoisyRandomWalk({.num_states = 22, .max_step = 3, .num_observations = 5}), 0.9);
    check_refusals([&] { return BeliefFilter(process); }, Indices{5}, BeliefFilter(noisier), 151);
    check_refusals([&] { return BeliefFilter(process); }, Indices{5}, BeliefFilter(larger), 152);
  }
}

TEST_CASE("refusals name the prefix, the tensor and what is wrong", "[checkpoint][errors]") {
  Gen g(200);
  SECTION("traces: other λ, another scalar, a power out of [0, 1], a trace of a memory that has seen nothing") {
    MemoryTrace<> b(0.5, 4);
    check_refused_with(b, state_of(MemoryTrace<>(0.9, 4)),
                       "load_state: rollout.memory.3.lambdas: the state was saved from a trace memory with lambdas = "
                       "{0.9}; this one has lambdas = {0.5}");
    check_refused_with(b, state_of(MemoryTrace<>(0.5, 4, TraceInit::normalized)),
                       "load_state: rollout.memory.3.parameters: the state was saved from a trace memory with d = 4, "
                       "init normalized; this one has d = 4, init first_observation");
    check_refused_with(b, state_of(MemoryTrace<dynamic_lambda, dynamic, float>(0.5, 4)),
                       "load_state: tensor \"rollout.memory.3.traces\" is F32 [1, 4], expected F64 [1, 4]");
    MemoryTrace<> a(0.5, 4);
    drive(a, Indices{4}, g);
    TensorFile bad = state_of(a);
    tensor(bad, "powers").values[0] = 1.5;
    check_refused_with(b, bad, "load_state: rollout.memory.3.powers: entry 0 is 1.5, not a power of λ in [0, 1]");
    bad = state_of(a);
    tensor(bad, "started").integers[0] = 0;
    CHECK_THROWS_WITH(load_state(bad, prefix, b), Contains("but started is 0"));
    bad = state_of(a);
    tensor(bad, "started").integers[0] = 2;
    check_refused_with(b, bad, "load_state: rollout.memory.3.started: 2 is out of range [0, 2) (a flag: 0 or 1)");
    // A float state holds what a float holds.
    MemoryTrace<dynamic_lambda, dynamic, float> f(0.5, 4);
    bad = state_of(f);
    tensor(bad, "started").integers[0] = 1;
    tensor(bad, "traces").values[2] = 1e300;
    check_refused_with(f, bad, "load_state: rollout.memory.3.traces: entry 2 is 1e+300, which a float does not hold");
  }
  SECTION("windows: observations, positions and counts out of range, an index not of the window") {
    Window<> w(3, 4, WindowPadding::zero);
    drive(w, Indices{4}, g);
    Window<> b(3, 4, WindowPadding::zero);
    TensorFile bad = state_of(w);
    tensor(bad, "ring").integers[1] = 4;
    check_refused_with(b, bad, "load_state: rollout.memory.3.ring: entry 1 is 4, out of range [0, 4) (observations)");
    bad = state_of(w);
    tensor(bad, "head").integers[0] = 3;
    check_refused_with(b, bad, "load_state: rollout.memory.3.head: 3 is no position of a ring of m = 3");
    bad = state_of(w);
    tensor(bad, "index").integers[0] = (tensor(bad, "index").integers[0] + 1) % w.dim();
    CHECK_THROWS_WITH(load_state(bad, prefix, b),
                      StartsWith("load_state: rollout.memory.3.index: ") && Contains("but the window of ring"));
    check_refused_with(
        b, state_of(Window<>(3, 4)),
        "load_state: rollout.memory.3.parameters: the state was saved from a Window with m = 3, |Y| = 4, "
        "padding repeat_first; this one has m = 3, |Y| = 4, padding zero");
    // A zero-padded window of 1 observation writes the next at 1.
    w.reset(2);
    bad = state_of(w);
    tensor(bad, "head").integers[0] = 2;
    check_refused_with(b, bad,
                       "load_state: rollout.memory.3.head: 2, but a zero-padded window of 1 observations writes the "
                       "next at 1");
    ConcatWindow<> c(3, 4);
    c.reset(1);
    bad = state_of(c);
    tensor(bad, "count").integers[0] = 2;
    tensor(bad, "observations").shape = {2};
    tensor(bad, "observations").integers.resize(2);
    check_refused_with(c, bad,
                       "load_state: rollout.memory.3.count: 2, but a window padded with repeat_first holds 0 or m = 3");
  }
  SECTION("frame stacks: an active entry twice, too many active entries") {
    FrameStack<MultiHot<3>> s(2, 10, WindowPadding::zero);
    s.reset(MultiHot<3>{1, 2, 3});
    FrameStack<MultiHot<3>> b(2, 10, WindowPadding::zero);
    TensorFile bad = state_of(s);
    tensor(bad, "active").integers[2] = 1;
    check_refused_with(b, bad, "load_state: rollout.memory.3.active: frame 0 has the active entry 1 twice");
    bad = state_of(s);
    tensor(bad, "counts").integers[1] = 4;
    tensor(bad, "active").shape = {7};
    tensor(bad, "active").integers.resize(7);
    check_refused_with(b, bad,
                       "load_state: rollout.memory.3.counts: entry 1 is 4, out of range [0, 4) (active entries of a "
                       "frame)");
  }
  SECTION("wrappers: the inner memory's refusal names its prefix") {
    AppendAction<MemoryTrace<>> b(MemoryTrace<>(0.5, 6), 4, 2);
    check_refused_with(
        b, state_of(AppendAction(MemoryTrace<>(0.9, 6), 4, 2)),
        "load_state: rollout.memory.3.memory.lambdas: the state was saved from a trace memory with lambdas = {0.9}; "
        "this one has lambdas = {0.5}");
    check_refused_with(b, state_of(AppendAction(MemoryTrace<>(0.5, 6), 3, 3)),
                       "load_state: rollout.memory.3.parameters: the state was saved from an AppendAction with d = 3, "
                       "|U| = 3; this one has d = 4, |U| = 2");
  }
  SECTION("belief: another process, a negative entry, entries that do not sum to 1") {
    const StationaryProcess process(walk, 0.9);
    const StationaryProcess noisier(
        NoisyRandomWalk({.num_states = 21, .max_step = 3, .num_observations = 5, .noise = 0.6}), 0.9);
    BeliefFilter a(process), b(process);
    drive(a, Indices{5}, g);
    CHECK_THROWS_WITH(load_state(state_of(BeliefFilter(noisier)), prefix, b),
                      StartsWith("load_state: rollout.memory.3.fingerprint: the state was saved from a BeliefFilter of "
                                 "another process"));
    TensorFile bad = state_of(a);
    tensor(bad, "belief").values[3] = -0.25;
    check_refused_with(b, bad, "load_state: rollout.memory.3.belief: entry 3 is -0.25, a probability must be >= 0");
    bad = state_of(a);
    tensor(bad, "belief").values[3] += 0.5;
    CHECK_THROWS_WITH(load_state(bad, prefix, b),
                      StartsWith("load_state: rollout.memory.3.belief: its entries sum to"));
  }
}

TEST_CASE("a MemoryTrace's state is that of a TraceBank of its one λ, and continues alike in one",
          "[checkpoint][trace_bank]") {
  Gen g(300);
  MemoryTrace<> a(0.9, 5, TraceInit::normalized);
  drive(a, Indices{5}, g);
  TraceBank<> b({0.9}, 5, TraceInit::normalized);
  load_state(state_of(a), prefix, b);
  for (int t = 0; t < 100; ++t) {
    const Observation y = uniform_index(g, 5);
    a.update(y);
    b.update(y);
    REQUIRE(same(a.features(), b.features()));
  }
}

}  // namespace memory_checkpoint_test
