// Exact analysis on Sutton's noisy random walk (1001 states, ~201 non-zeros a row, |Y| = 11):
// the optimal trace value error for 100 values of λ, the exact window moments for m = 1 ... 5 (the
// target: m = 5, 161,051 windows, under 1 s), the window TD fixed point for m = 1 ... 4,
// and state values for |X| = 1001 and 10^5.
//
//   build/release/benchmarks/analysis_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memtrace/memtrace.hpp>

namespace {

using namespace memtrace;

const StationaryProcess& walk_process() {
  static const StationaryProcess process(NoisyRandomWalk(), 0.99);
  return process;
}

void BM_OptimalTraceValueError_100Lambdas(benchmark::State& state) {
  const StationaryProcess& process = walk_process();
  for (auto _ : state) {
    double sum = 0.0;
    for (int i = 0; i < 100; ++i) sum += optimal_trace_value_error(process, 0.99 * i / 99.0);
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_OptimalTraceValueError_100Lambdas)->Unit(benchmark::kMillisecond);

void BM_WindowMoments(benchmark::State& state) {
  const StationaryProcess& process = walk_process();
  const auto m = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    const WindowMoments moments = window_moments(process, m);
    benchmark::DoNotOptimize(optimal_window_value_error(moments));
  }
  state.counters["windows"] = static_cast<double>(detail::powers(11, m).back());
}
BENCHMARK(BM_WindowMoments)->DenseRange(1, 5)->Unit(benchmark::kMillisecond);

void BM_WindowTdFixedPoint(benchmark::State& state) {
  const StationaryProcess& process = walk_process();
  const auto m = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(window_td_fixed_point(process, m).data());
}
BENCHMARK(BM_WindowTdFixedPoint)->DenseRange(1, 4)->Unit(benchmark::kMillisecond);

void BM_StationaryProcess(benchmark::State& state) {
  NoisyRandomWalkParameters parameters;
  parameters.num_states = static_cast<std::size_t>(state.range(0));
  const FiniteHmm model = NoisyRandomWalk(parameters).model();
  for (auto _ : state) benchmark::DoNotOptimize(StationaryProcess(model, 0.99).values().data());
}
BENCHMARK(BM_StationaryProcess)->Arg(1001)->Unit(benchmark::kMillisecond);

void BM_StateValues(benchmark::State& state) {
  NoisyRandomWalkParameters parameters;
  parameters.num_states = static_cast<std::size_t>(state.range(0));
  const FiniteHmm model = NoisyRandomWalk(parameters).model();
  for (auto _ : state) benchmark::DoNotOptimize(state_values(model, 0.99).data());
}
BENCHMARK(BM_StateValues)->Arg(1001)->Arg(100001)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
