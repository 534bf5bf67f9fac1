// TD(0) steps per second, single thread, on Sutton's noisy random walk (|Y| = 11): environment,
// random draws, memory update and learning included. The floor is the random draws of a step.
//
//   build/release/benchmarks/td_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <memtrace/memtrace.hpp>
#include <vector>

namespace {

using namespace memtrace;

constexpr std::size_t steps_per_iteration = 1 << 16;

template <class M>
void run_generic(benchmark::State& state, M memory) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  LinearTd td(memory.dim(), 0.02);
  for (auto _ : state) {
    run_td(env, memory, td, gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    benchmark::DoNotOptimize(td.weights().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration));
}

void BM_RandomWalkStepOnly(benchmark::State& state) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  env.reset(gen);
  for (auto _ : state) benchmark::DoNotOptimize(env.step(gen));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RandomWalkStepOnly);

void BM_Td_MemoryTrace_RuntimeLambda(benchmark::State& state) { run_generic(state, MemoryTrace<>(0.9, 11)); }
BENCHMARK(BM_Td_MemoryTrace_RuntimeLambda);

void BM_Td_MemoryTrace_CompileTime(benchmark::State& state) {
  run_generic(state, MemoryTrace<std::ratio<9, 10>, 11>());
}
BENCHMARK(BM_Td_MemoryTrace_CompileTime);

template <class L>
void run_fused(benchmark::State& state, L learner) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  for (auto _ : state) {
    run_td(env, learner, gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    benchmark::DoNotOptimize(learner.value());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration));
}

void BM_TraceTd_RuntimeLambda(benchmark::State& state) { run_fused(state, TraceTd<>(0.9, 11, 0.02)); }
BENCHMARK(BM_TraceTd_RuntimeLambda);

void BM_TraceTd_CompileTime(benchmark::State& state) { run_fused(state, TraceTd<std::ratio<9, 10>, 11>(11, 0.02)); }
BENCHMARK(BM_TraceTd_CompileTime);

// K runs in lockstep on one core (run_td_lockstep): independent TD chains overlap.
template <std::size_t K>
void BM_TraceTd_Lockstep(benchmark::State& state) {
  using Learner = TraceTd<std::ratio<9, 10>, 11>;
  std::array<NoisyRandomWalk, K> envs{};
  auto learners = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Learner, K>{((void)I, Learner(11, 0.02))...};
  }
  (std::make_index_sequence<K>{});
  std::array<Xoshiro256StarStar, K> gens;
  for (std::size_t k = 0; k < K; ++k) gens[k] = make_stream(1, k);
  for (auto _ : state) {
    run_td_lockstep(envs, learners, gens, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    for (const auto& learner : learners) benchmark::DoNotOptimize(learner.value());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration * K));
}
BENCHMARK(BM_TraceTd_Lockstep<1>);
BENCHMARK(BM_TraceTd_Lockstep<2>);
BENCHMARK(BM_TraceTd_Lockstep<4>);

// The floor: the random numbers of one random-walk step (one 64-bit word).
void BM_RandomDrawsOfOneStep(benchmark::State& state) {
  Xoshiro256StarStar gen(1);
  for (auto _ : state) benchmark::DoNotOptimize(random_bits(gen));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RandomDrawsOfOneStep);

// A sweep of 16 runs (TraceTd on the random walk, 2^16 steps each, one stream per run) on
// state.range(0) threads: wall-clock time, so 1 vs 2 threads shows the speed-up.
void BM_Sweep(benchmark::State& state) {
  const std::size_t runs = 16;
  std::vector<double> values(runs);
  SweepOptions options;
  options.threads = static_cast<std::size_t>(state.range(0));
  options.progress = false;
  for (auto _ : state) {
    parallel_runs(
        runs,
        [&](std::size_t run) {
          NoisyRandomWalk env;
          TraceTd<std::ratio<9, 10>, 11> learner(11, 0.02);
          auto gen = make_stream(1, run);
          run_td(env, learner, gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
          values[run] = learner.value();
        },
        options);
    benchmark::DoNotOptimize(values.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(runs * steps_per_iteration));
}
BENCHMARK(BM_Sweep)->Arg(1)->Arg(2)->UseRealTime();

void BM_Td_Window(benchmark::State& state) {
  run_generic(state, Window<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Td_Window)->DenseRange(1, 6);

void BM_Td_ConcatWindow(benchmark::State& state) {
  run_generic(state, ConcatWindow<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Td_ConcatWindow)->DenseRange(1, 6);

// A step-size sweep of 13 learners on one walk (Appendix C's grid), per learner-step: 13
// LinearTd through run_td_shared against one LinearTdBank (feature-major weights) through run_td.
const std::vector<double> sweep_alphas = [] {
  std::vector<double> a(13);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 1e-4 * std::pow(1e4, static_cast<double>(i) / 12.0);
  return a;
}();

template <class M>
void run_shared(benchmark::State& state, M memory) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  std::vector<LinearTd<>> learners;
  for (double a : sweep_alphas) learners.emplace_back(memory.dim(), a);
  for (auto _ : state) {
    run_td_shared(env, memory, std::span(learners), gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    benchmark::DoNotOptimize(learners.front().weights().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration * sweep_alphas.size()));
}

template <class M>
void run_bank(benchmark::State& state, M memory) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  LinearTdBank bank(memory.dim(), sweep_alphas);
  for (auto _ : state) {
    run_td(env, memory, bank, gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    benchmark::DoNotOptimize(bank.weights().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration * sweep_alphas.size()));
}

void BM_Sweep13_Window_Shared(benchmark::State& state) {
  run_shared(state, Window<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Sweep13_Window_Shared)->Arg(1)->Arg(3)->Arg(5);
void BM_Sweep13_Window_Bank(benchmark::State& state) {
  run_bank(state, Window<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Sweep13_Window_Bank)->Arg(1)->Arg(3)->Arg(5);
void BM_Sweep13_Concat_Shared(benchmark::State& state) {
  run_shared(state, ConcatWindow<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Sweep13_Concat_Shared)->Arg(1)->Arg(3)->Arg(5);
void BM_Sweep13_Concat_Bank(benchmark::State& state) {
  run_bank(state, ConcatWindow<>(static_cast<std::size_t>(state.range(0)), 11));
}
BENCHMARK(BM_Sweep13_Concat_Bank)->Arg(1)->Arg(3)->Arg(5);

// The 12 λ of Fig. 4 on one walk (run_td_shared with 12 TraceTd), per learner-step.
void BM_Sweep12_TraceTd_Shared(benchmark::State& state) {
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  std::vector<TraceTd<>> learners;
  for (double lambda : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99})
    learners.emplace_back(lambda, 11, 0.02);
  for (auto _ : state) {
    run_td_shared(env, std::span(learners), gen, TdRun{.steps = steps_per_iteration, .discount = 0.99});
    benchmark::DoNotOptimize(learners.front().value());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(steps_per_iteration * learners.size()));
}
BENCHMARK(BM_Sweep12_TraceTd_Shared);

}  // namespace

BENCHMARK_MAIN();
