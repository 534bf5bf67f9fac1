// Tests of loop/checkpoint.hpp: the property of checkpoints. A PPO run that checkpoints every two
// updates (the agent, the rollout's environments, memories, generators and episodes in flight, and
// the learning curve) is killed after every update in turn, also while writing a checkpoint, and
// resumed from its last checkpoint by a fresh process (objects built with other seeds); it ends
// with the parameters, the learning curve, the resumed updates' losses and the evaluation of the
// run that was never killed, bit for bit. For the T-maze with memory traces and normalised features
// (the library's types) and for an environment of one's own (checkpointable by two functions).
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memtrace/core.hpp>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/loop/checkpoint.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "cue_run.hpp"

namespace ppo_run_checkpoint_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

static_assert(Checkpointable<test_tasks::Cue>);
static_assert(Checkpointable<MinigridTMaze>);
static_assert(Checkpointable<TraceBank<dynamic, float>>);
static_assert(Checkpointable<Rollout<MinigridTMaze, TraceBank<dynamic, float>>>);

namespace {

/// One training run as a program holds it: the agent, the rollout, the learning curve, and the
/// losses of the updates it ran.
template <class Env, class M>
struct Run {
  Ppo<Eigen::VectorXf> agent;
  Rollout<Env, M> rollout;
  LearningCurve curve;
  std::vector<double> losses;
};

constexpr std::size_t updates = 7, every = 2, n_envs = 4, n_steps = 32;

template <class Env, class M>
Run<Env, M> make_run(const Env& env, const M& memory, std::uint64_t seed) {
  PpoOptions o = test_tasks::small_ppo_options(n_envs, n_steps);
  o.total_updates = updates;  // the horizon is the whole run's, whatever part of it a process trains
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n_envs; ++i) gens.push_back(make_stream(seed, i));
  return {Ppo<Eigen::VectorXf>(memory.dim(), env.num_actions(), o, seed),
          Rollout<Env, M>(std::vector<Env>(n_envs, env), std::vector<M>(n_envs, memory), std::move(gens)),
          LearningCurve(updates * n_envs * n_steps, n_envs * n_steps, {.points = 5, .success_return = 0.5}),
          {}};
}

/// Trains `run` to the end of its budget, checkpointing every `every` updates to `path`; returns
/// false if it was killed (on_update stops it) after update `kill`.
template <class Env, class M>
bool train_run(Run<Env, M>& run, const std::filesystem::path& path, std::size_t kill) {
  const std::size_t done = run.agent.updates();
  bool killed = false;
  train(run.agent, run.rollout, (updates - done) * n_envs * n_steps, [&](const PpoStats& s) {
    run.curve.record(s);
    run.losses.push_back(s.loss);
    if (s.update % every == 0) save_ppo_run(path, run.agent, run.rollout, &run.curve);
    killed = s.update == kill;
    return !killed;
  });
  return !killed;
}

template <class Env, class M>
std::vector<EpisodeEnd> evaluation(Run<Env, M>& run, const Env& env, const M& memory) {
  DefaultGenerator gen = make_stream(77, 1000);
  return evaluate(run.agent, env, memory, gen, 30, 5000);
}

template <class Env, class M>
void check_kill_and_resume(const Env& env, const M& memory, const std::string& name) {
  const test::TempDir dir(name);
  Run<Env, M> reference = make_run(env, memory, 1);
  REQUIRE(train_run(reference, dir / "reference.ckpt", updates + 1));
  const auto reference_evaluation = evaluation(reference, env, memory);
  TensorFile reference_state;
  save_state(reference_state, "agent.", reference.agent);

  for (std::size_t kill = 1; kill < updates; ++kill) {
    for (const bool while_writing : {false, true}) {
      INFO("killed after update " << kill << (while_writing ? ", while writing the next checkpoint" : ""));
      const auto path = dir / ("run_" + std::to_string(kill) + (while_writing ? "w" : "") + ".ckpt");
      Run<Env, M> killed = make_run(env, memory, 1);
      REQUIRE_FALSE(train_run(killed, path, kill));
      if (while_writing && std::filesystem::exists(path)) {
        // The next checkpoint was being written when the process died: half of it lies in the
        // temporary file next to the checkpoint, which is the last one complete.
        const std::string bytes = detail::read_text(path);
        std::ofstream(path.string() + ".tmp.4242.0", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
      }

      Run<Env, M> resumed = make_run(env, memory, 99);  // a fresh process: other seeds until it loads
      std::size_t from = 0;
      if (std::filesystem::exists(path)) {
        (void)load_ppo_run(path, resumed.agent, resumed.rollout, &resumed.curve);
        from = resumed.agent.updates();
      } else {
        resumed = make_run(env, memory, 1);  // killed before its first checkpoint: start again
      }
      CHECK(from == kill / every * every);
      REQUIRE(train_run(resumed, path, updates + 1));
      TensorFile state;
      save_state(state, "agent.", resumed.agent);
      CHECK(state == reference_state);
      CHECK(resumed.curve.points() == reference.curve.points());
      CHECK(resumed.curve.recent_success_rate() == reference.curve.recent_success_rate());
      CHECK(std::vector<double>(reference.losses.begin() + static_cast<std::ptrdiff_t>(from), reference.losses.end()) ==
            resumed.losses);
      CHECK(evaluation(resumed, env, memory) == reference_evaluation);
    }
  }
}

}  // namespace

TEST_CASE("a run killed at any update, also while writing a checkpoint, resumes to the end of the run never killed",
          "[checkpoint][ppo]") {
  SECTION("the Minigrid T-maze with normalised memory traces") {
    check_kill_and_resume(MinigridTMaze(4), TraceBank<dynamic, float>({0.0, 0.75}, 45, TraceInit::zero),
                          "ppo_run_tmaze");
  }
  SECTION("an environment of one's own") {
    check_kill_and_resume(test_tasks::Cue{}, TraceBank<dynamic, float>({0.0, 0.8}, 4), "ppo_run_cue");
  }
}

TEST_CASE("a run's checkpoint is refused whole: nothing of the agent, the rollout or the curve changes",
          "[checkpoint][ppo]") {
  const test::TempDir dir("ppo_run_refusal");
  const test_tasks::Cue env;
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);
  auto saved = make_run(env, traces, 1);
  REQUIRE_FALSE(train_run(saved, dir / "run.ckpt", 2));
  // Another curve budget: the agent's and the rollout's parts are fine, the curve's is refused.
  auto other = make_run(env, traces, 5);
  other.curve = LearningCurve(2 * updates * n_envs * n_steps, n_envs * n_steps, {.points = 5, .success_return = 0.5});
  TensorFile before;
  save_state(before, "agent.", other.agent);
  save_state(before, "rollout.", other.rollout);
  CHECK_THROWS_WITH(
      load_ppo_run(dir / "run.ckpt", other.agent, other.rollout, &other.curve),
      Catch::Contains("load_state: curve.point_steps: the state was saved from a LearningCurve with 5 points at "));
  TensorFile after;
  save_state(after, "agent.", other.agent);
  save_state(after, "rollout.", other.rollout);
  CHECK(after == before);
  // A rollout of another size is refused before any environment is loaded.
  auto wider = make_run(env, traces, 5);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 2; ++i) gens.push_back(make_stream(5, i));
  Rollout<test_tasks::Cue, TraceBank<dynamic, float>> two(std::vector<test_tasks::Cue>(2), std::vector(2, traces),
                                                          std::move(gens));
  CHECK_THROWS_WITH(load_ppo_run(dir / "run.ckpt", wider.agent, two),
                    "load_ppo_run: " + (dir / "run.ckpt").string() +
                        ": load_state: rollout.size: the state was saved from a Rollout with 4 environments; this one "
                        "has 2 environments");
}

}  // namespace ppo_run_checkpoint_test
