// The fragments of docs/learners.md, compiled and run by ctest (docs/design.md, "Doc snippets are
// compiled"). Each function holds one ```cpp block of the page, as it is written there, and
// defines around it what the page leaves to the reader.
#include <memtrace/env/noisy_random_walk.hpp>
#include <memtrace/learn/adam.hpp>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/mlp.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/learn/td_bank.hpp>
#include <memtrace/learn/trace_td.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>

#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

namespace {

bool td_bank() {
  using namespace memtrace;
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(1);
  Window<> window(3, 11);
  LinearTdBank bank(window.dim(), {1e-4, 1e-3, 1e-2, 1e-1});  // K = 4 learners
  run_td(env, window, bank, gen, TdRun{.steps = 100000, .discount = 0.99});
  Eigen::VectorXd w2 = bank.weights(2);  // learner 2's weights (α = 1e-2)
  return w2.size() == 1331 && w2.allFinite();
}

bool run_loop() {
  using namespace memtrace;
  const std::uint64_t seed = 42;
  const std::size_t run_index = 0;
  NoisyRandomWalk env;
  MemoryTrace<> trace(0.9, env.num_observations());
  LinearTd td(trace.dim(), 0.02);
  auto gen = make_stream(seed, run_index);
  run_td(env, trace, td, gen, TdRun{.steps = 100000, .discount = 0.99});

  TraceTd<> fused(0.9, env.num_observations(), 0.02);  // or the trace and TD(0) fused in one object
  run_td(env, fused, gen, TdRun{.steps = 100000, .discount = 0.99});
  return td.weights().allFinite() && fused.weights().allFinite();
}

bool shared_walk() {
  using namespace memtrace;
  NoisyRandomWalk env;
  Xoshiro256StarStar gen(2);
  const TdRun run{.steps = 10000, .discount = 0.99};
  MemoryTrace<> memory(0.9, env.num_observations());
  std::vector<LinearTd<>> value_learners{LinearTd<>(memory.dim(), 0.01), LinearTd<>(memory.dim(), 0.02)};
  std::vector<TraceTd<>> learners;  // e.g. one per λ of Fig. 4
  for (double lambda : {0.0, 0.5, 0.9}) learners.emplace_back(lambda, 11, 0.02);
  run_td_shared(env, std::span(learners), gen, run);                // MemoryLearners: each absorbs the same y
  run_td_shared(env, memory, std::span(value_learners), gen, run);  // one memory, several FeatureLearners
  return learners.size() == 3 && value_learners[1].weights().allFinite();
}

bool networks() {
  memtrace::Xoshiro256StarStar gen(1);
  memtrace::Mlp<float> actor({90, 64, 64, 3}), critic({90, 64, 64, 1});  // float is the default
  actor.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 0.01});
  critic.initialize_orthogonal(gen, {std::sqrt(2.0), std::sqrt(2.0), 1.0});

  Eigen::MatrixXf x = Eigen::MatrixXf::Random(90, 256);  // 256 samples, one per column
  Eigen::MatrixXf logits = actor.forward(x);             // 3 x 256 (forward returns a view)
  Eigen::MatrixXf d_logits = logits / 256.0f;            // dL/dlogits of your loss
  actor.backward(x, d_logits);                           // actor.gradients() = dL/dθ
  critic.forward(x);
  critic.backward(x, Eigen::MatrixXf::Ones(1, 256));

  memtrace::Adam<float> actor_adam(actor.num_parameters()), critic_adam(critic.num_parameters());
  const memtrace::LinearSchedule lr(3e-4, 160000);  // T = updates x epochs x minibatches

  // after actor.backward(...) and critic.backward(...) on a minibatch:
  memtrace::clip_by_global_norm(0.5, actor.gradients(), critic.gradients());
  const double rate = lr(actor_adam.count());
  actor_adam.step(actor.parameters(), actor.gradients(), rate);
  critic_adam.step(critic.parameters(), critic.gradients(), rate);
  return logits.rows() == 3 && actor_adam.count() == 1;
}

bool sparse_input() {
  std::vector<memtrace::MultiHot<585>> stacks(256);  // from your memory: 585 of 2925 active
  memtrace::Mlp<float> wide({2925, 64, 64, 3});
  Eigen::MatrixXf out = wide.forward(stacks);  // costs what the active entries cost
  wide.backward(stacks, Eigen::MatrixXf::Zero(3, 256));
  return out.cols() == 256;
}

bool normalised_td() {
  memtrace::NoisyRandomWalk env;
  memtrace::Xoshiro256StarStar gen(3);
  memtrace::MemoryTrace<> trace(0.9, env.num_observations());
  memtrace::FeatureNormalizer normalizer(trace.dim());
  memtrace::LinearTd td(trace.dim(), 0.01);
  Eigen::VectorXd phi(trace.dim()), phi_next(trace.dim());
  trace.reset(env.reset(gen));
  normalizer.update(trace.features());
  normalizer.normalize(trace.features(), phi);
  for (int t = 0; t < 10000; ++t) {
    const auto step = env.step(gen);
    trace.update(step.observation);
    normalizer.update(trace.features());  // every vector the learner sees, once
    normalizer.normalize(trace.features(), phi_next);
    td.update(phi, step.reward, step.terminated ? 0.0 : 0.99, phi_next);
    phi.swap(phi_next);
  }
  return normalizer.count() == 10001 && td.weights().allFinite() && td.weights().norm() > 0.0;
}

}  // namespace

int main() {
  const bool ok = td_bank() && run_loop() && shared_walk() && networks() && sparse_input() && normalised_td();
  std::puts(ok ? "docs/learners.md: ok" : "docs/learners.md: a fragment computed something else");
  return ok ? 0 : 1;
}
