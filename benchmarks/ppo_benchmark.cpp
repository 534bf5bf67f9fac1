// The paper's PPO agent end to end (learn/ppo.hpp, docs/control.md "PPO"), single thread, float,
// the official configuration (16 environments x 128 steps, 2 epochs x 8 minibatches of 256, 64 x 64
// tanh actor and critic) on the Minigrid T-maze with corridor 64:
//   - one PPO iteration = 2,048 environment steps of rollout (environment, memory, one batched
//     forward pass of both networks for the 16 environments, sampling, recording) + the update
//     (GAE, 16 minibatch forward/backward passes, clipping, Adam); items are environment steps, so
//     items/s is the training throughput;
//   - the rollout alone and the update alone (that part of an iteration, timed by the thread's CPU clock);
// for the two traces {0, 63/64} of the 45-entry one-hot view (d = 90, dense) and for a frame stack
// of 65 views (d = 2925, 585 active entries: the sparse first layer); and the traces with feature
// normalisation (PpoOptions::normalize_features: what it costs is the difference to the traces).
// Continuous control: a Gaussian policy (GaussianActorCritic) on the pendulum, in the same light
// configuration, with the full observation (d = 3, memoryless) and with the velocity hidden and a
// trace bank {0, 0.5, 0.8} (d = 6); and the standard recipe's heavier configuration (CleanRL's
// ppo_continuous_action: 1 environment x 2048 steps, 10 epochs x 32 minibatches of 64) with the
// trace bank. Items are environment steps.
//
//   build/release/benchmarks/ppo_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/features.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace {

using namespace memtrace;

constexpr std::size_t corridor = 64;

/// The two traces {0, 63/64} of the one-hot view (d = 90, dense float features), non-episodic
/// with z = 0 before the first observation (docs/minigrid-tmaze.md, "Memories").
TraceBank<dynamic, float> traces() { return TraceBank<dynamic, float>({0.0, 63.0 / 64.0}, 45, TraceInit::zero); }
/// The 65 most recent views, newest first, zero padding (the official Window(m = 64);
/// docs/minigrid-tmaze.md, "Memories"): MultiHot features over 2925 entries, 585 active once 65
/// views are seen.
FrameStack<MultiHot<9>> frames() { return FrameStack<MultiHot<9>>(65, 45, WindowPadding::zero); }

template <class M>
struct Setup {
  using Phi = features_t<M>;
  Rollout<MinigridTMaze, M> rollout;
  Ppo<Phi> agent;
  PpoBuffer<Phi, float> buffer;
  PpoActing<Phi, float> acting;

  explicit Setup(const M& memory, bool normalize = false)
      : rollout(make(memory)),
        agent(memory.dim(), 3, options(normalize), 1),
        buffer(agent.make_buffer()),
        acting(agent.acting(buffer)) {
    collect();  // the first update grows every workspace
    learn();
  }
  Setup(const Setup&) = delete;  // acting refers to agent and buffer
  Setup& operator=(const Setup&) = delete;
  static PpoOptions options(bool normalize) {
    PpoOptions o;
    o.total_updates = 10000;  // the README run's schedule
    o.normalize_features = normalize;
    return o;
  }
  static Rollout<MinigridTMaze, M> make(const M& memory) {
    std::vector<MinigridTMaze> envs(16, MinigridTMaze(corridor));
    std::vector<M> memories(16, memory);
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(7, i));
    return Rollout<MinigridTMaze, M>(std::move(envs), std::move(memories), std::move(gens));
  }
  /// n_steps = 128 steps of the 16 environments into the buffer, and the bootstrap features.
  void collect() {
    rollout.collect(acting, 128, acting);
    acting.bootstrap(rollout.features());
  }
  void learn() { benchmark::DoNotOptimize(agent.update(buffer).loss); }
};

/// CPU time of this thread, in seconds (the machine may be shared: wall time would count others' work).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <class M>
void iteration(benchmark::State& state, const M& memory, bool normalize = false) {
  Setup<M> s(memory, normalize);
  for (auto _ : state) {  // what train does per update
    s.collect();
    s.learn();
  }
  state.SetItemsProcessed(state.iterations() * 2048);
}

template <class M>
void rollout_only(benchmark::State& state, const M& memory, bool normalize = false) {
  Setup<M> s(memory, normalize);
  for (auto _ : state) {
    const double start = cpu_seconds();
    s.collect();
    state.SetIterationTime(cpu_seconds() - start);
    s.learn();
  }
  state.SetItemsProcessed(state.iterations() * 2048);
}

template <class M>
void update_only(benchmark::State& state, const M& memory) {
  Setup<M> s(memory);
  for (auto _ : state) {
    s.collect();
    const double start = cpu_seconds();
    s.learn();
    state.SetIterationTime(cpu_seconds() - start);
  }
  state.SetItemsProcessed(state.iterations() * 2048);
}

void BM_PpoIteration_Trace90(benchmark::State& state) { iteration(state, traces()); }
BENCHMARK(BM_PpoIteration_Trace90)->Unit(benchmark::kMillisecond);
void BM_PpoRollout_Trace90(benchmark::State& state) { rollout_only(state, traces()); }
BENCHMARK(BM_PpoRollout_Trace90)->UseManualTime()->Unit(benchmark::kMillisecond);
void BM_PpoUpdate_Trace90(benchmark::State& state) { update_only(state, traces()); }
BENCHMARK(BM_PpoUpdate_Trace90)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_PpoIteration_Trace90Normalized(benchmark::State& state) { iteration(state, traces(), true); }
BENCHMARK(BM_PpoIteration_Trace90Normalized)->Unit(benchmark::kMillisecond);
void BM_PpoRollout_Trace90Normalized(benchmark::State& state) { rollout_only(state, traces(), true); }
BENCHMARK(BM_PpoRollout_Trace90Normalized)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_PpoIteration_FrameStack2925(benchmark::State& state) { iteration(state, frames()); }
BENCHMARK(BM_PpoIteration_FrameStack2925)->Unit(benchmark::kMillisecond);
void BM_PpoRollout_FrameStack2925(benchmark::State& state) { rollout_only(state, frames()); }
BENCHMARK(BM_PpoRollout_FrameStack2925)->UseManualTime()->Unit(benchmark::kMillisecond);
void BM_PpoUpdate_FrameStack2925(benchmark::State& state) { update_only(state, frames()); }
BENCHMARK(BM_PpoUpdate_FrameStack2925)->UseManualTime()->Unit(benchmark::kMillisecond);

/// PPO with a Gaussian policy on the pendulum: n_envs x n_steps steps of rollout and one update.
struct PendulumSetup {
  using Memory = TraceBank<dynamic, float>;
  using Agent = Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>>;
  Rollout<Pendulum, Memory> rollout;
  Agent agent;
  Agent::buffer_type buffer;
  Agent::acting_type acting;
  std::size_t n_steps;

  PendulumSetup(bool observe_velocity, std::vector<double> lambdas, const PpoOptions& o)
      : rollout(make(observe_velocity, std::move(lambdas), o.n_envs)),
        agent(rollout.memory(0).dim(), 1, o, 1),
        buffer(agent.make_buffer()),
        acting(agent.acting(buffer)),
        n_steps(o.n_steps) {
    collect();
    learn();
  }
  PendulumSetup(const PendulumSetup&) = delete;
  PendulumSetup& operator=(const PendulumSetup&) = delete;
  static Rollout<Pendulum, Memory> make(bool observe_velocity, std::vector<double> lambdas, std::size_t n) {
    PendulumOptions po;
    po.observe_velocity = observe_velocity;
    const Memory memory(std::move(lambdas), observe_velocity ? 3 : 2);
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < n; ++i) gens.push_back(make_stream(7, i));
    return Rollout<Pendulum, Memory>(std::vector<Pendulum>(n, Pendulum(po)), std::vector<Memory>(n, memory),
                                     std::move(gens));
  }
  void collect() {
    rollout.collect(acting, n_steps, acting);
    acting.bootstrap(rollout.features());
  }
  void learn() { benchmark::DoNotOptimize(agent.update(buffer).loss); }
};

/// The T-maze's configuration (16 x 128, 2 epochs x 8 minibatches), no entropy bonus.
PpoOptions light() {
  PpoOptions o;
  o.total_updates = 10000;
  o.ent_coef = 0.0;
  o.normalize_features = true;
  return o;
}
/// CleanRL's ppo_continuous_action: 1 x 2048, 10 epochs x 32 minibatches of 64.
PpoOptions cleanrl() {
  PpoOptions o = light();
  o.n_envs = 1;
  o.n_steps = 2048;
  o.epochs = 10;
  o.minibatches = 32;
  return o;
}

void pendulum_iteration(benchmark::State& state, bool observe_velocity, std::vector<double> lambdas, PpoOptions o) {
  PendulumSetup s(observe_velocity, std::move(lambdas), o);
  for (auto _ : state) {
    s.collect();
    s.learn();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(o.n_envs * o.n_steps));
}

void BM_PpoPendulum_Full(benchmark::State& state) { pendulum_iteration(state, true, {0.0}, light()); }
BENCHMARK(BM_PpoPendulum_Full)->Unit(benchmark::kMillisecond);
void BM_PpoPendulum_HiddenTraces(benchmark::State& state) {
  pendulum_iteration(state, false, {0.0, 0.5, 0.8}, light());
}
BENCHMARK(BM_PpoPendulum_HiddenTraces)->Unit(benchmark::kMillisecond);
void BM_PpoPendulum_HiddenTraces_CleanRL(benchmark::State& state) {
  pendulum_iteration(state, false, {0.0, 0.5, 0.8}, cleanrl());
}
BENCHMARK(BM_PpoPendulum_HiddenTraces_CleanRL)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
