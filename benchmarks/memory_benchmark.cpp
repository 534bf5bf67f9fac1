// One memory update, for every memory type, against the cost of the random numbers a step of the
// noisy random walk needs (the floor any simulation step is measured against). Observations are
// drawn beforehand, so the update timings hold no random number generation.
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

}  // namespace

BENCHMARK_MAIN();
