// PPO with a trace bank on your own environment, in one file you can copy: it needs memtrace and
// Eigen only (c++ -std=c++20 -O2 -I/usr/include/eigen3 ppo_basics.cpp; docs/control.md).
//
// The environment is a cue task: the first observation is a cue (0 or 1), then a corridor (2)
// and a junction (3), where the action must match the cue. A memoryless policy wins half the
// time; two traces (λ = 0 and 0.8) remember the cue. Training prints its learning curve; then the
// agent is evaluated twice, sampling its actions (as PPO learns them) and greedily.
#include <cstdio>
#include <memtrace/core.hpp>
#include <vector>

struct Cue {  // any type with reset, step and num_actions is an environment
  std::size_t t = 0, cue = 0;
  std::size_t num_actions() const { return 2; }
  std::size_t reset(auto& gen) {
    t = 0;
    return cue = memtrace::uniform_index(gen, 2);
  }
  memtrace::TimeStep<> step(memtrace::Action u, auto& /*gen*/) {
    if (++t < 6) return {t < 5 ? 2u : 3u};                  // observation 2 (corridor), then 3 (junction)
    return {3, u == cue ? 1.0 : 0.0, /*terminated=*/true};  // the choice: reward 1 if right
  }
};

int main() {
  using namespace memtrace;
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);  // 2 traces over 4 observations: 8 features
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 8; ++i) gens.push_back(make_stream(/*seed=*/1, /*run=*/i));
  Rollout rollout(std::vector<Cue>(8), std::vector(8, traces), std::move(gens));  // 8 copies in lockstep

  PpoOptions options;  // the official recipe, smaller: 8 environments x 32 steps an update
  options.n_envs = 8;
  options.n_steps = 32;
  options.minibatches = 4;
  options.learning_rate = 3e-3;
  options.hidden_sizes = {16};
  options.normalize_features = true;  // running normalisation of the traces (docs/control.md)
  Ppo<Eigen::VectorXf> agent(traces.dim(), /*num_actions=*/2, options, /*seed=*/1);

  // 80 updates; a learning curve of 4 points, each over the episodes that ended since the last
  LearningCurve curve(20'480, 8 * 32, {.points = 4, .success_return = 0.5});
  train(agent, rollout, 20'480, [&](const PpoStats& s) { curve.record(s); });
  for (const CurvePoint& p : curve.points())
    std::printf("%5zu steps: success %.2f of %zu episodes, entropy %.3f\n", p.env_steps, p.success_rate(),
                p.episodes_ended, p.entropy);

  double sampled = 0, greedy = 0;  // 100 episodes each, the memory reset at every episode
  DefaultGenerator eval = make_stream(1, 1000);
  for (const EpisodeEnd& e : evaluate(agent, Cue{}, traces, eval, 100)) sampled += e.episode_return / 100;
  for (const EpisodeEnd& e : evaluate(agent, Cue{}, traces, eval, 100, ActionSelection::greedy))
    greedy += e.episode_return / 100;
  std::printf("evaluation: success %.2f sampling, %.2f greedy (without memory at most 0.5)\n", sampled, greedy);
  return sampled > 0.8 && greedy > 0.8 ? 0 : 1;
}
