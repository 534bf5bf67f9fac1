// The fragments of docs/control.md, compiled and run by ctest (docs/design.md, "Doc snippets are
// compiled"). The PPO run of the page takes 20.48 M steps: it is compiled, and run only with
// --ppo.
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/loop/ppo.hpp>
#include <memtrace/memory/trace_bank.hpp>

#include <cstdio>
#include <span>
#include <string_view>
#include <vector>

using namespace memtrace;

struct Greedy {  // a Policy: one environment at a time
  template <class G>
  memtrace::Action act(const Eigen::VectorXf& phi, G& gen);
};
struct Network {  // a BatchPolicy: all environments at once
  template <class G>
  void act(std::span<const Eigen::VectorXf> phi, std::span<G> gens, std::span<memtrace::Action> actions);
};
static_assert(Policy<Greedy, Eigen::VectorXf> && !BatchPolicy<Greedy, Eigen::VectorXf>);
static_assert(BatchPolicy<Network, Eigen::VectorXf>);

namespace {

struct UniformPolicy {  // acts at random, whatever the features
  template <class G>
  memtrace::Action act(const Eigen::VectorXf&, G& gen) {
    return memtrace::uniform_index(gen, minigrid::num_actions);
  }
};

bool rollout_and_td() {
  const std::uint64_t seed = 7;
  UniformPolicy policy;
  std::vector<MinigridTMaze> envs(16, MinigridTMaze(8));
  std::vector<TraceBank<dynamic, float>> memories(16, TraceBank<dynamic, float>({0.0, 0.875}, 45, TraceInit::zero));
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(seed, i));  // one stream per environment
  Rollout rollout(std::move(envs), std::move(memories), std::move(gens));
  rollout.run(policy, 128, [&](const RolloutBatch<Eigen::VectorXf>& /*batch*/) { /* store, learn, log */ });

  const std::size_t steps = 64;
  const double discount = 0.99;
  LinearTd<float> td(90, 0.01);
  rollout.run(policy, steps, [&](const RolloutBatch<Eigen::VectorXf>& batch) {
    for (std::size_t i = 0; i < batch.steps.size(); ++i) {
      const ActedStep& s = batch.steps[i];
      td.update(batch.features[i], s.reward, s.terminated ? 0.0 : discount, batch.next_features[i]);
    }
  });
  return td.weights().allFinite();
}

void ppo_tmaze_64() {
  const TraceBank<dynamic, float> traces({0.0, 63.0 / 64.0}, 45, TraceInit::zero);  // d = 90 features
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(42, i));
  Rollout rollout(std::vector<MinigridTMaze>(16, MinigridTMaze(64)), std::vector<TraceBank<dynamic, float>>(16, traces),
                  std::move(gens));

  Ppo<Eigen::VectorXf> ppo(traces.dim(), 3, PpoOptions{}, 42);  // the official hyperparameters, seed 42
  train(ppo, rollout, 20'480'000, [](const PpoStats& s) {       // 10,000 updates of 2,048 steps
    if (s.update % 100 == 0)
      std::printf("%zu steps: success %.2f of %zu episodes, entropy %.3f\n", s.env_steps, s.mean_episode_return(),
                  s.episodes.size(), s.entropy);
  });
  DefaultGenerator eval = make_stream(42, 1000);
  const std::vector<EpisodeEnd> episodes = evaluate(ppo, MinigridTMaze(64), traces, eval, 100);  // official evaluation
  std::printf("evaluation: %zu episodes\n", episodes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--ppo") ppo_tmaze_64();
  const bool ok = rollout_and_td();
  std::puts(ok ? "docs/control.md: ok" : "docs/control.md: a fragment computed something else");
  return ok ? 0 : 1;
}
