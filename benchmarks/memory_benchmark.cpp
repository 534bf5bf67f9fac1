// One memory update, for every memory type, against the cost of the random numbers a step of the
// noisy random walk needs (the floor any simulation step is measured against). Observations are
// drawn beforehand, so the update timings hold no random number generation. Index observations
// have the random walk's |Y| = 11; vector observations are the T-maze's 45-entry one-hot grid view
// (9 active entries), as MultiHot<9> or as a dense float vector.
//
//   build/release/benchmarks/memory_benchmark --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memtrace/memtrace.hpp>
#include <vector>

namespace {

using namespace memtrace;

constexpr std::size_t num_observations = 11;  // the noisy random walk's |Y|

const std::vector<Observation>& observations() {
  static const std::vector<Observation> ys = [] {
    Xoshiro256StarStar g(1);
    std::vector<Observation> out(1 << 12);
    for (auto& y : out) y = uniform_index(g, num_observations);
    return out;
  }();
  return ys;
}

constexpr std::size_t view_dim = 45;  // the T-maze's 3 x 3 x 5 one-hot view
constexpr std::size_t view_active = 9;
constexpr std::size_t num_actions = 3;

/// Random grid views: one active tile in each of the 9 cells (as the T-maze's views have).
const std::vector<MultiHot<9>>& views() {
  static const std::vector<MultiHot<9>> ys = [] {
    Xoshiro256StarStar g(3);
    std::vector<MultiHot<9>> out(1 << 8);
    for (auto& y : out) {
      for (std::size_t cell = 0; cell < view_active; ++cell) y[cell] = cell * 5 + uniform_index(g, 5);
      y.set_size(view_active);
    }
    return out;
  }();
  return ys;
}

/// The same views as dense float vectors (256 x 45 floats: 45 KiB, in cache).
template <class V>
const std::vector<V>& dense_views() {
  static const std::vector<V> ys = [] {
    std::vector<V> out;
    for (const auto& y : views()) out.push_back(to_dense(y, view_dim).cast<float>());
    return out;
  }();
  return ys;
}

const std::vector<Action>& actions() {
  static const std::vector<Action> us = [] {
    Xoshiro256StarStar g(4);
    std::vector<Action> out(1 << 8);
    for (auto& u : out) u = uniform_index(g, num_actions);
    return out;
  }();
  return us;
}

/// update(y) over a cycle of observations ys (a power of two long).
template <class M, class Y>
void run_vector_updates(benchmark::State& state, M& memory, const std::vector<Y>& ys) {
  memory.reset(ys[0]);
  std::size_t t = 0;
  for (auto _ : state) {
    memory.update(ys[t++ & (ys.size() - 1)]);
    benchmark::DoNotOptimize(memory.features());
  }
  state.SetItemsProcessed(state.iterations());
}

template <class M>
void run_updates(benchmark::State& state, M& memory) {
  const auto& ys = observations();
  memory.reset(ys[0]);
  std::size_t t = 0;
  for (auto _ : state) {
    memory.update(ys[t++ & (ys.size() - 1)]);
    benchmark::DoNotOptimize(memory.features());
  }
  state.SetItemsProcessed(state.iterations());
}

// The random numbers of one noisy-random-walk step: one 64-bit word (the walk packs its move, its
// noise coin and its noisy observation into one draw; docs/environments.md).
void BM_RandomNumbersOfOneStep(benchmark::State& state) {
  Xoshiro256StarStar g(2);
  for (auto _ : state) benchmark::DoNotOptimize(random_bits(g));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RandomNumbersOfOneStep);

void BM_MemoryTrace_RuntimeLambda(benchmark::State& state) {
  MemoryTrace<> trace(0.9, num_observations);
  run_updates(state, trace);
}
BENCHMARK(BM_MemoryTrace_RuntimeLambda);

void BM_MemoryTrace_CompileTimeLambdaAndY(benchmark::State& state) {
  MemoryTrace<std::ratio<9, 10>, num_observations> trace;
  run_updates(state, trace);
}
BENCHMARK(BM_MemoryTrace_CompileTimeLambdaAndY);

void BM_MemoryTrace_Normalized(benchmark::State& state) {
  MemoryTrace<> trace(0.9, num_observations, TraceInit::normalized);
  run_updates(state, trace);
}
BENCHMARK(BM_MemoryTrace_Normalized);

void BM_TraceBank_TwoLambdas(benchmark::State& state) {
  TraceBank<> bank({0.0, 0.9}, num_observations);
  run_updates(state, bank);
}
BENCHMARK(BM_TraceBank_TwoLambdas);

void BM_Window(benchmark::State& state) {
  Window<> window(static_cast<std::size_t>(state.range(0)), num_observations);
  run_updates(state, window);
}
BENCHMARK(BM_Window)->DenseRange(1, 6);

void BM_Window_CompileTime5(benchmark::State& state) {
  Window<5, num_observations> window;
  run_updates(state, window);
}
BENCHMARK(BM_Window_CompileTime5);

void BM_ConcatWindow(benchmark::State& state) {
  ConcatWindow<> window(static_cast<std::size_t>(state.range(0)), num_observations);
  run_updates(state, window);
}
BENCHMARK(BM_ConcatWindow)->DenseRange(1, 6);

void BM_ConcatWindow_CompileTime5(benchmark::State& state) {
  ConcatWindow<5, num_observations> window;
  run_updates(state, window);
}
BENCHMARK(BM_ConcatWindow_CompileTime5);

// Vector observations: the T-maze's 45-entry view (float), as the paper's PPO agent feeds them.
void BM_MemoryTrace_DenseFloat45(benchmark::State& state) {
  MemoryTrace<dynamic_lambda, dynamic, float> trace(0.985, view_dim);
  run_vector_updates(state, trace, dense_views<Eigen::VectorXf>());
}
BENCHMARK(BM_MemoryTrace_DenseFloat45);

void BM_MemoryTrace_DenseFloat45_CompileTimeSize(benchmark::State& state) {
  MemoryTrace<dynamic_lambda, view_dim, float> trace(0.985);
  run_vector_updates(state, trace, dense_views<Eigen::Matrix<float, view_dim, 1>>());
}
BENCHMARK(BM_MemoryTrace_DenseFloat45_CompileTimeSize);

void BM_MemoryTrace_MultiHot9of45Float(benchmark::State& state) {
  MemoryTrace<dynamic_lambda, dynamic, float> trace(0.985, view_dim);
  run_vector_updates(state, trace, views());
}
BENCHMARK(BM_MemoryTrace_MultiHot9of45Float);

void BM_MemoryTrace_MultiHot9of45Float_CompileTimeSize(benchmark::State& state) {
  MemoryTrace<dynamic_lambda, view_dim, float> trace(0.985);
  run_vector_updates(state, trace, views());
}
BENCHMARK(BM_MemoryTrace_MultiHot9of45Float_CompileTimeSize);

// The PPO agent's memory: λ = {0, 0.985} over the view, 90 features.
void BM_TraceBank_PPO_MultiHot(benchmark::State& state) {
  TraceBank<dynamic, float> bank({0.0, 0.985}, view_dim);
  run_vector_updates(state, bank, views());
}
BENCHMARK(BM_TraceBank_PPO_MultiHot);

void BM_TraceBank_PPO_MultiHot_CompileTimeSize(benchmark::State& state) {
  TraceBank<view_dim, float> bank({0.0, 0.985}, view_dim);
  run_vector_updates(state, bank, views());
}
BENCHMARK(BM_TraceBank_PPO_MultiHot_CompileTimeSize);

// The same with the previous action appended (48 entries a block, 96 features).
void BM_AppendAction_TraceBank_PPO_MultiHot(benchmark::State& state) {
  AppendAction<TraceBank<dynamic, float>> memory(TraceBank<dynamic, float>({0.0, 0.985}, view_dim + num_actions),
                                                 view_dim, num_actions);
  const auto& ys = views();
  const auto& us = actions();
  memory.reset(ys[0]);
  std::size_t t = 0;
  for (auto _ : state) {
    const std::size_t i = t++ & (ys.size() - 1);
    memory.update(us[i], ys[i]);
    benchmark::DoNotOptimize(memory.features());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AppendAction_TraceBank_PPO_MultiHot);

// Frame stacking as in the PPO experiment at k = 64: 65 frames, 2925 features.
void BM_FrameStack65_MultiHot9of45(benchmark::State& state) {
  FrameStack<MultiHot<9>> stack(65, view_dim, WindowPadding::zero);
  run_vector_updates(state, stack, views());
}
BENCHMARK(BM_FrameStack65_MultiHot9of45);

void BM_FrameStack65_DenseFloat45(benchmark::State& state) {
  FrameStack<Eigen::VectorXf> stack(65, view_dim, WindowPadding::zero);
  run_vector_updates(state, stack, dense_views<Eigen::VectorXf>());
}
BENCHMARK(BM_FrameStack65_DenseFloat45);

}  // namespace

BENCHMARK_MAIN();
