// One environment step: the noisy random walk's own O(1) step against the random numbers it needs
// (one 64-bit word since it packs its three choices into one draw; three separate draws before),
// and FiniteHmm's alias-table step for |X| = 10, 10^3 and 10^5 (its cost must not
// grow with |X| beyond cache effects), and the Minigrid T-maze's step with its 3 x 3 view; and the
// .pomdp reader's peak memory at its full table budget.
//
//   build/release/benchmarks/env_benchmark --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/memtrace.hpp>
#include <string>
#include <vector>

namespace {

using namespace memtrace;

// The random numbers of one noisy-random-walk step at most: an offset, a noise coin, an observation.
void BM_ThreeDraws(benchmark::State& state) {
  Xoshiro256StarStar g(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(uniform_index(g, 201));
    benchmark::DoNotOptimize(uniform_real(g));
    benchmark::DoNotOptimize(uniform_index(g, 11));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ThreeDraws);

// What the walk actually draws a step: one 64-bit word.
void BM_OneWord(benchmark::State& state) {
  Xoshiro256StarStar g(1);
  for (auto _ : state) benchmark::DoNotOptimize(random_bits(g));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OneWord);

template <class Env>
void run_steps(benchmark::State& state, Env& env) {
  Xoshiro256StarStar g(2);
  env.reset(g);
  for (auto _ : state) {
    const TimeStep<> tr = env.step(g);
    benchmark::DoNotOptimize(tr);
    if (tr.terminated) env.reset(g);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_NoisyRandomWalk_Step(benchmark::State& state) {
  NoisyRandomWalk walk;
  run_steps(state, walk);
}
BENCHMARK(BM_NoisyRandomWalk_Step);

// The same walk sampled through its explicit model (alias tables over 201 entries a row).
void BM_NoisyRandomWalk_ModelStep(benchmark::State& state) {
  FiniteHmm hmm = NoisyRandomWalk().model();
  run_steps(state, hmm);
}
BENCHMARK(BM_NoisyRandomWalk_ModelStep);

// A random sparse HMM with |X| = state.range(0) states, 10 successors a state and |Y| = 11.
void BM_FiniteHmm_Step(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  constexpr Eigen::Index successors = 10, num_observations = 11;
  Xoshiro256StarStar g(3);
  std::vector<Eigen::Triplet<double>> entries;
  for (Eigen::Index x = 0; x < n; ++x)
    for (Eigen::Index k = 0; k < successors; ++k)
      entries.emplace_back(x, static_cast<Eigen::Index>(uniform_index(g, static_cast<std::uint64_t>(n))),
                           1.0 / successors);
  SparseMatrix p(n, n), r(n, n);
  p.setFromTriplets(entries.begin(), entries.end());  // repeated successors are summed
  r = p;
  Eigen::MatrixXd o = Eigen::MatrixXd::Constant(n, num_observations, 0.5 / num_observations);
  for (Eigen::Index x = 0; x < n; ++x) o(x, x % num_observations) += 0.5;
  FiniteHmm hmm(std::move(p), std::move(o), Eigen::VectorXd::Constant(n, 1.0 / static_cast<double>(n)), r);
  run_steps(state, hmm);
}
BENCHMARK(BM_FiniteHmm_Step)->Arg(10)->Arg(1000)->Arg(100000);

void BM_TwoStateHmm_Step(benchmark::State& state) {
  TwoStateHmm env(0.1, 0.2);
  run_steps(state, env);
}
BENCHMARK(BM_TwoStateHmm_Step);

void BM_TMazeAlwaysUp_Step(benchmark::State& state) {
  TMazeAlwaysUp env(8);
  run_steps(state, env);
}
BENCHMARK(BM_TMazeAlwaysUp_Step);

// The Minigrid T-maze of the PPO experiment (corridor k = state.range(0)) under uniformly random
// actions: a step with its observation (the 9 active indices of the one-hot view), the action's
// draw (uniform_index) and a reset at every episode end included.
void BM_MinigridTMaze_Step(benchmark::State& state) {
  MinigridTMaze env(static_cast<std::size_t>(state.range(0)));
  Xoshiro256StarStar g(4);
  env.reset(g);
  for (auto _ : state) {
    const TimeStep<MultiHot<9>> tr = env.step(static_cast<Action>(uniform_index(g, 3)), g);
    benchmark::DoNotOptimize(tr);
    if (tr.terminated || tr.truncated) env.reset(g);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MinigridTMaze_Step)->Arg(8)->Arg(64);

// The .pomdp reader at its full default budget: a 100-byte file asking for |X| = 11585 states
// (|X|^2 = 134,212,225 <= 2^27 transition probabilities, 1 GiB) with `T: * uniform`. Reports the
// process's peak resident memory, which must stay near the one table (about 1 GiB): a table
// built and then copied peaked at twice that. (The tests check the same with a 32 MiB budget.)
void BM_ParsePomdp_FullBudget(benchmark::State& state) {
  const std::string text =
      "discount: 0.9 values: reward states: 11585 actions: 1 observations: 1\n"
      "T: * uniform O: * uniform";
  for (auto _ : state) {
    const PomdpFile file = parse_pomdp(text);
    benchmark::DoNotOptimize(file.transition[0].data());
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["table_MiB"] = 11585.0 * 11585.0 * 8.0 / (1 << 20);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}
BENCHMARK(BM_ParsePomdp_FullBudget)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
