// The neural-network arithmetic of the paper's PPO agent (docs/learners.md, "Neural networks for
// control"), single thread, float: forward + backward of the actor ({d, 64, 64, 3}) and the critic
// ({d, 64, 64, 1}) on a minibatch of 256 samples, for the two-trace input (d = 90, dense) and the
// frame stack of 65 one-hot views (d = 2925, 585 active inputs a sample, sparse and dense first
// layer); one Adam step and one global-norm clip over PPO's parameter counts. Items are samples
// (networks) or parameters (Adam, clipping).
//
//   build/release/benchmarks/mlp_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memtrace/features.hpp>
#include <memtrace/learn/adam.hpp>
#include <memtrace/learn/mlp.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace {

using namespace memtrace;

constexpr std::size_t batch = 256;

/// PPO's two networks on input dimension d, initialised as the paper's agent.
struct ActorCritic {
  explicit ActorCritic(std::size_t d) : actor({d, 64, 64, 3}), critic({d, 64, 64, 1}) {
    Xoshiro256StarStar gen(1);
    actor.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 0.01});
    critic.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 1.0});
  }
  Mlp<float> actor, critic;
  Eigen::MatrixXf d_logits = Eigen::MatrixXf::Constant(3, batch, 0.01f);
  Eigen::MatrixXf d_value = Eigen::MatrixXf::Constant(1, batch, 0.01f);

  template <class X>
  void forward_backward(const X& x) {
    benchmark::DoNotOptimize(actor.forward(x).data());
    actor.backward(x, d_logits);
    benchmark::DoNotOptimize(critic.forward(x).data());
    critic.backward(x, d_value);
    benchmark::ClobberMemory();
  }
};

/// `batch` frame stacks of 65 one-hot 3x3 views (45 = 9 cells x 5 tiles each): 9 active inputs a
/// frame, one per cell, so 585 of 2925 a sample.
std::vector<MultiHot<585>> frame_stacks() {
  Xoshiro256StarStar gen(2);
  std::vector<MultiHot<585>> columns(batch);
  for (auto& x : columns) {
    for (std::size_t frame = 0; frame < 65; ++frame)
      for (std::size_t cell = 0; cell < 9; ++cell) x[frame * 9 + cell] = frame * 45 + cell * 5 + uniform_index(gen, 5);
    x.set_size(585);
  }
  return columns;
}

Eigen::MatrixXf dense(const std::vector<MultiHot<585>>& columns, std::size_t dim) {
  Eigen::MatrixXf x(static_cast<Eigen::Index>(dim), static_cast<Eigen::Index>(columns.size()));
  for (std::size_t j = 0; j < columns.size(); ++j)
    x.col(static_cast<Eigen::Index>(j)) = to_dense(columns[j], dim).cast<float>();
  return x;
}

void BM_ActorCritic_Trace90_Dense(benchmark::State& state) {
  ActorCritic nets(90);
  Xoshiro256StarStar gen(3);
  Eigen::MatrixXf x(90, batch);
  for (auto& v : x.reshaped()) v = static_cast<float>(uniform_real(gen));
  for (auto _ : state) nets.forward_backward(x);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch));
}
BENCHMARK(BM_ActorCritic_Trace90_Dense);

void BM_ActorCritic_FrameStack2925_Sparse(benchmark::State& state) {
  ActorCritic nets(2925);
  const auto columns = frame_stacks();
  for (auto _ : state) nets.forward_backward(columns);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch));
}
BENCHMARK(BM_ActorCritic_FrameStack2925_Sparse);

void BM_ActorCritic_FrameStack2925_Dense(benchmark::State& state) {
  ActorCritic nets(2925);
  const Eigen::MatrixXf x = dense(frame_stacks(), 2925);
  for (auto _ : state) nets.forward_backward(x);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch));
}
BENCHMARK(BM_ActorCritic_FrameStack2925_Dense);

// One Adam step over PPO's parameters (actor + critic): 20,228 for d = 90, 383,108 for d = 2925.
void BM_AdamStep(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  Eigen::VectorXf params = Eigen::VectorXf::Constant(n, 0.1f), grads = Eigen::VectorXf::Constant(n, 0.01f);
  Adam<float> adam(static_cast<std::size_t>(n));
  for (auto _ : state) {
    adam.step(params, grads, 3e-4);
    benchmark::DoNotOptimize(params.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_AdamStep)->Arg(20228)->Arg(383108);

// clip_by_global_norm over the actor's and the critic's gradients together (norm above the threshold).
void BM_ClipByGlobalNorm(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  Eigen::VectorXf actor = Eigen::VectorXf::Constant(n / 2, 1.0f), critic = Eigen::VectorXf::Constant(n - n / 2, 1.0f);
  for (auto _ : state) {
    benchmark::DoNotOptimize(clip_by_global_norm(0.5, actor, critic));
    actor.setConstant(1.0f);
    critic.setConstant(1.0f);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ClipByGlobalNorm)->Arg(20228);

}  // namespace

BENCHMARK_MAIN();
