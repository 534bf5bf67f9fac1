// The recurrent network of memtrace's GRU agent (docs/learners.md, "A recurrent network"), single
// thread, float: one minibatch's forward and backward through time of Gru (learn/gru.hpp) beside a
// prototype of the same arithmetic in plain Eigen — per time step one product
// [3h x (d + h)] · [(d + h) x B] forward, its two transposed products backward, and the gates —
// in the same binary with the same flags; at hidden sizes 32, 64 and 128, on the T-maze's view
// (d = 45, one-hot cells as a dense vector) for the minibatches of the T-maze recipe (16
// environments x 128 steps in 8 minibatches: B = 2 sequences of T = 128) and of one minibatch of
// all 16 environments. Items are columns (time steps x sequences). Also the whole GruActorCritic
// (the GRU and the paper's two heads) on the same minibatch.
//
//   build/release/benchmarks/gru_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <memtrace/learn/gru.hpp>
#include <memtrace/learn/gru_actor_critic.hpp>
#include <memtrace/random.hpp>
#include <span>

namespace {

using namespace memtrace;
using Matrix = Eigen::MatrixXf;

constexpr Eigen::Index d = 45, steps = 128;

Matrix inputs(Eigen::Index columns) {
  Xoshiro256StarStar gen(3);
  Matrix x = Matrix::Zero(d, columns);
  for (Eigen::Index c = 0; c < columns; ++c)
    for (Eigen::Index cell = 0; cell < 9; ++cell) x(cell * 5 + static_cast<Eigen::Index>(uniform_index(gen, 5)), c) = 1;
  return x;
}

/// Gru's forward and backward through time on T = 128 steps of B sequences (range(0) = h, range(1) = B).
void BM_Gru(benchmark::State& state) {
  const auto h = static_cast<std::size_t>(state.range(0));
  const Eigen::Index b = state.range(1), columns = steps * b;
  Gru<float> gru(d, h);
  Xoshiro256StarStar gen(1);
  gru.initialize_orthogonal(gen);
  const Matrix x = inputs(columns);
  const Matrix initial = Matrix::Zero(static_cast<Eigen::Index>(h), b);
  const Matrix d_output = Matrix::Constant(static_cast<Eigen::Index>(h), columns, 0.01f);
  const auto count = static_cast<std::size_t>(columns);
  const auto starts = std::make_unique<bool[]>(count);
  for (std::size_t c = 0; c < count; c += 10 * static_cast<std::size_t>(b))
    starts[c] = true;  // an episode every 10 steps
  const std::span<const bool> start_span(starts.get(), count);
  for (auto _ : state) {
    benchmark::DoNotOptimize(gru.forward(x, start_span, initial).data());
    gru.backward(x, d_output);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * columns);
}

/// The prototype: the same GRU arithmetic written for this benchmark in plain Eigen, z_t = [x_t; h_{t−1}]
/// and one [3h x (d + h)] product per step (the gates' pre-activations, the hidden part of n kept
/// apart as torch's reset-after form needs), then backward dW += δ z_tᵀ and dz = Wᵀ δ per step.
struct Prototype {
  Prototype(Eigen::Index hidden, Eigen::Index sequences)
      : h(hidden),
        b(sequences),
        w(Matrix::Random(3 * h, d + h) * 0.1f),
        dw(3 * h, d + h),
        z(d + h, steps * b),
        gates(4 * h, steps * b),
        out(h, steps * b),
        delta(3 * h, b),
        dz(d + h, b),
        carry(h, b) {}
  Eigen::Index h, b;
  Matrix w, dw, z, gates, out, delta, dz, carry;

  void forward(const Matrix& x) {
    for (Eigen::Index t = 0; t < steps; ++t) {
      const Eigen::Index c = t * b;
      z.middleCols(c, b).topRows(d) = x.middleCols(c, b);
      if (t == 0)
        z.middleCols(c, b).bottomRows(h).setZero();
      else
        z.middleCols(c, b).bottomRows(h) = out.middleCols(c - b, b);
      auto g = gates.middleCols(c, b);
      g.topRows(3 * h).noalias() = w * z.middleCols(c, b);
      g.bottomRows(h).noalias() = w.bottomRightCorner(h, h) * z.middleCols(c, b).bottomRows(h);  // W_hn h
      g.topRows(2 * h) = (1.0f + (-g.topRows(2 * h).array()).exp()).inverse().matrix();
      g.middleRows(2 * h, h) =
          (g.middleRows(2 * h, h) - g.bottomRows(h) + (g.topRows(h).array() * g.bottomRows(h).array()).matrix())
              .array()
              .tanh()
              .matrix();
      out.middleCols(c, b).array() =
          g.middleRows(2 * h, h).array() +
          g.middleRows(h, h).array() * (z.middleCols(c, b).bottomRows(h).array() - g.middleRows(2 * h, h).array());
    }
  }
  void backward(const Matrix& d_output) {
    dw.setZero();
    carry.setZero();
    for (Eigen::Index t = steps; t-- > 0;) {
      const Eigen::Index c = t * b;
      const auto g = gates.middleCols(c, b);
      const auto dh = (d_output.middleCols(c, b) + carry).array();
      const auto r = g.topRows(h).array(), u = g.middleRows(h, h).array(), n = g.middleRows(2 * h, h).array();
      delta.bottomRows(h).array() = dh * (1.0f - u) * (1.0f - n.square());
      delta.middleRows(h, h).array() = dh * (z.middleCols(c, b).bottomRows(h).array() - n) * u * (1.0f - u);
      delta.topRows(h).array() = delta.bottomRows(h).array() * g.bottomRows(h).array() * r * (1.0f - r);
      dw.noalias() += delta * z.middleCols(c, b).transpose();
      dz.noalias() = w.transpose() * delta;
      carry = dz.bottomRows(h) + (dh * u).matrix();
    }
  }
};

void BM_GruPrototype(benchmark::State& state) {
  const Eigen::Index h = state.range(0), b = state.range(1), columns = steps * b;
  Prototype p(h, b);
  const Matrix x = inputs(columns);
  const Matrix d_output = Matrix::Constant(h, columns, 0.01f);
  for (auto _ : state) {
    p.forward(x);
    p.backward(d_output);
    benchmark::DoNotOptimize(p.dw.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * columns);
}

/// GruActorCritic (the GRU and the heads {h, 64, 64, 2} and {h, 64, 64, 1}): forward_sequence and
/// backward_sequence on the same minibatch.
void BM_GruActorCritic(benchmark::State& state) {
  const auto h = static_cast<std::size_t>(state.range(0));
  const Eigen::Index b = state.range(1), columns = steps * b;
  GruActorCritic<float> nets(d, 3, h);
  Xoshiro256StarStar gen(1);
  nets.initialize_orthogonal(gen);
  const Matrix x = inputs(columns);
  const Matrix initial = Matrix::Zero(static_cast<Eigen::Index>(h), b);
  const Matrix d_policy = Matrix::Constant(3, columns, 0.01f);
  const Eigen::RowVectorXf d_value = Eigen::RowVectorXf::Constant(columns, 0.01f);
  const auto starts = std::make_unique<bool[]>(static_cast<std::size_t>(columns));
  const std::span<const bool> start_span(starts.get(), static_cast<std::size_t>(columns));
  for (auto _ : state) {
    benchmark::DoNotOptimize(nets.forward_sequence(x, start_span, initial).value.data());
    nets.backward_sequence(x, d_policy, d_value);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * columns);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (const int h : {32, 64, 128})
    for (const int sequences : {2, 16}) b->Args({h, sequences});
}

}  // namespace

BENCHMARK(BM_Gru)->Apply(sizes);
BENCHMARK(BM_GruPrototype)->Apply(sizes);
BENCHMARK(BM_GruActorCritic)->Apply(sizes);

BENCHMARK_MAIN();
