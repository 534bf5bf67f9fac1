// Tests of loop/ppo_run.hpp: a training run assembled from the pieces (a learning curve, a
// checkpoint every N updates, a stop, a normaliser freeze) resumes from its checkpoint in fresh
// objects and ends bit for bit as the run never stopped; resume_or_start refuses, leaving the file
// in place, a checkpoint of another run, version or instruction set, and starts again from a
// damaged one; on_updates calls the pieces in order and stops at the first that says so.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memtrace/core.hpp>
#include <memtrace/loop/ppo_run.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <string>
#include <utility>
#include <vector>

#include "../temp_dir.hpp"
#include "cue_run.hpp"

namespace ppo_run_test {

using namespace memtrace;
using Memory = TraceBank<dynamic, float>;
using RunRollout = Rollout<test_tasks::Cue, Memory>;

namespace {

constexpr std::size_t n_envs = 4, n_steps = 32, updates = 8, batch = n_envs * n_steps;

/// What a program holds for one run: built from `seed` until a checkpoint is loaded into it.
struct Run {
  Ppo<Eigen::VectorXf> agent;
  RunRollout rollout;
  LearningCurve curve;
};

Run make_run(std::uint64_t seed) {
  const PpoOptions o = test_tasks::small_ppo_options(n_envs, n_steps);
  const Memory memory({0.0, 0.8}, 4);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n_envs; ++i) gens.push_back(make_stream(seed, i));
  return {Ppo<Eigen::VectorXf>(memory.dim(), 2, o, seed),
          RunRollout(std::vector<test_tasks::Cue>(n_envs), std::vector<Memory>(n_envs, memory), std::move(gens)),
          LearningCurve(updates * batch, batch, {.points = 4, .success_return = 0.5})};
}

/// The program of docs/control.md ("A training run"): resume or start, train what is left with the
/// pieces, checkpoint at the end. Returns whether it finished (false: stopped after update `stop`).
/// With freeze_last, the freeze comes after the checkpoint, which is written every 2 updates: the
/// checkpoint of update 4 holds statistics that update 4 then freezes.
bool train_run(Run& run, const std::filesystem::path& path, std::size_t stop, RunStart* start = nullptr,
               bool freeze_last = false) {
  PpoRunCheckpoint checkpoint(path, "the cue task, seed 1\n", run.agent, run.rollout, &run.curve,
                              {.updates = freeze_last ? 2u : 3u});
  const RunStart started = checkpoint.resume_or_start();
  if (start != nullptr) *start = started;
  FreezeNormalizerAt freeze(run.agent, 0.5, updates);  // after update 4
  StopAfter stop_after{stop};
  const bool finished =
      freeze_last
          ? train_to(run.agent, run.rollout, updates * batch, on_updates(run.curve, checkpoint, freeze, stop_after))
          : train_to(run.agent, run.rollout, updates * batch, on_updates(run.curve, freeze, checkpoint, stop_after));
  if (finished) checkpoint.finish();
  return finished;
}

/// The run's whole state as bytes (a curve's NaN means compare equal as bytes).
std::string state_of(const Run& run) {
  TensorFile file;
  save_state(file, "agent.", run.agent);
  save_state(file, "rollout.", run.rollout);
  save_state(file, "curve.", run.curve);
  return safetensors_bytes(file);
}

}  // namespace

TEST_CASE("a run of the pieces stopped at any update resumes in fresh objects to the end of the run never stopped",
          "[ppo][checkpoint]") {
  const test::TempDir dir("ppo_run_pieces");
  Run reference = make_run(1);
  RunStart start{};
  REQUIRE(train_run(reference, dir / "reference.safetensors", 0, &start));
  CHECK(start == RunStart::started);
  CHECK(reference.agent.updates() == updates);
  CHECK(reference.agent.normalizer().frozen());
  const std::string expected = state_of(reference);
  for (std::size_t stop = 1; stop < updates; ++stop) {
    INFO("stopped after update " << stop);
    const auto path = dir / ("run_" + std::to_string(stop) + ".safetensors");
    Run stopped = make_run(1);
    REQUIRE_FALSE(train_run(stopped, path, stop));
    // A fresh process: built with other seeds, which the checkpoint replaces (before update 3
    // there is none, and the run starts again with its own seed).
    Run resumed = make_run(std::filesystem::exists(path) ? 99 : 1);
    REQUIRE(train_run(resumed, path, 0, &start));
    CHECK(start == (stop >= 3 ? RunStart::resumed : RunStart::started));
    CHECK(state_of(resumed) == expected);
    // Done: a third call trains nothing and resumes the finished run.
    REQUIRE(train_run(resumed, path, 0, &start));
    CHECK(start == RunStart::resumed);
    CHECK(resumed.agent.updates() == updates);
  }
  // The freeze after the checkpoint: stopped after update 5, resumed from the checkpoint of update 4,
  // whose statistics are not frozen yet; FreezeNormalizerAt freezes them at once, as update 4 did.
  Run late_reference = make_run(1);
  REQUIRE(train_run(late_reference, dir / "late_reference.safetensors", 0, nullptr, true));
  Run late = make_run(1);
  REQUIRE_FALSE(train_run(late, dir / "late.safetensors", 5, nullptr, true));
  Run late_resumed = make_run(99);
  REQUIRE(train_run(late_resumed, dir / "late.safetensors", 0, &start, true));
  CHECK(start == RunStart::resumed);
  CHECK(state_of(late_resumed) == state_of(late_reference));
}

TEST_CASE("EvaluateEvery evaluates on streams of its own: training is unchanged, a resumed run evaluates the same",
          "[ppo][checkpoint]") {
  const test::TempDir dir("ppo_run_evaluate");
  Run plain = make_run(1);
  REQUIRE(train_run(plain, dir / "plain.safetensors", 0));
  const auto with_evaluations = [&](Run& run, const std::filesystem::path& path, std::size_t stop) {
    PpoRunCheckpoint checkpoint(path, "the cue task, seed 1\n", run.agent, run.rollout, &run.curve, {.updates = 3});
    (void)checkpoint.resume_or_start();
    FreezeNormalizerAt freeze(run.agent, 0.5, updates);
    std::size_t calls = 0;
    EvaluateEvery evaluation(run.agent, test_tasks::Cue{}, Memory({0.0, 0.8}, 4), 7, 2, 5, 1000,
                             ActionSelection::sample, [&](const EvaluationPoint&) { ++calls; });
    StopAfter stop_after{stop};
    const bool finished = train_to(run.agent, run.rollout, updates * batch,
                                   on_updates(run.curve, freeze, evaluation, checkpoint, stop_after));
    CHECK(calls == evaluation.points().size());
    return std::pair(finished, evaluation.points());
  };
  Run evaluated = make_run(1);
  const auto [finished, points] = with_evaluations(evaluated, dir / "evaluated.safetensors", 0);
  REQUIRE(finished);
  CHECK(state_of(evaluated) == state_of(plain));
  REQUIRE(points.size() == updates / 2);
  for (std::size_t k = 0; k < points.size(); ++k) {
    CHECK(points[k].update == 2 * (k + 1));
    CHECK(points[k].env_steps == points[k].update * batch);
    CHECK(points[k].episodes.size() == 5);
  }
  Run stopped = make_run(1);
  REQUIRE_FALSE(with_evaluations(stopped, dir / "stopped.safetensors", 5).first);
  Run resumed = make_run(99);
  const auto [resumed_finished, resumed_points] = with_evaluations(resumed, dir / "stopped.safetensors", 0);
  REQUIRE(resumed_finished);
  REQUIRE(resumed_points.size() == 3);  // after updates 4, 6 and 8: the run resumed after update 3
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(resumed_points[k].update == points[k + 1].update);
    CHECK(resumed_points[k].episodes == points[k + 1].episodes);
  }
  CHECK_THROWS_WITH(EvaluateEvery(plain.agent, test_tasks::Cue{}, Memory({0.0, 0.8}, 4), 7, 0, 5),
                    "EvaluateEvery: every must be at least 1, got 0");
}

TEST_CASE("resume_or_start refuses another run's, version's or instruction set's checkpoint and leaves it",
          "[ppo][checkpoint]") {
  const test::TempDir dir("ppo_run_refusals");
  const auto path = dir / "run.safetensors";
  Run saved = make_run(1);
  REQUIRE_FALSE(train_run(saved, path, 3));
  const std::string bytes = test::slurp(path);

  Run other = make_run(5);
  const std::string before = state_of(other);
  PpoRunCheckpoint another(path, "the cue task, seed 2\n", other.agent, other.rollout, &other.curve);
  CHECK_THROWS_WITH(another.resume_or_start(),
                    "PpoRunCheckpoint::resume_or_start: " + path.string() +
                        " is the checkpoint of another run: line 1 of its description is \"the cue task, seed 1\", "
                        "this run's \"the cue task, seed 2\"; resume it with its own settings, or delete it; it is "
                        "left in place");
  // A description of several lines: the first that differs is quoted.
  CHECK_THROWS_WITH(check_run_checkpoint(path, "the cue task, seed 1\nsteps=4096\n"),
                    Catch::Contains("line 2 of its description is (none), this run's \"steps=4096\""));
  CHECK_THROWS_WITH(check_run_checkpoint(path, "the cue task, seed 1"),
                    Catch::Contains("line 1 of its description is \"the cue task, seed 1\", this run's (none)"));
  CHECK_THROWS_WITH(
      check_run_checkpoint(path, "Xhe cue task, seed 1\n"),
      Catch::Contains("line 1 of its description is \"the cue task, seed 1\", this run's \"Xhe cue task, seed 1\""));
  CHECK(check_run_checkpoint(path, "the cue task, seed 1\n") == RunStart::resumed);
  CHECK(check_run_checkpoint(dir / "none.safetensors", "x") == RunStart::started);
  CHECK(test::slurp(path) == bytes);
  CHECK(state_of(other) == before);

  // Another version or instruction set: refused as such, although the edit also breaks the checksum.
  const auto forged = [&](const char* key, const char* value) {
    TensorFile file = parse_safetensors(bytes);
    file.metadata[key] = value;
    const auto p = dir / (std::string(key) + ".safetensors");
    write_safetensors(p, file);
    return p;
  };
  PpoRunCheckpoint old(forged("memtrace_version", "0.1.0"), "the cue task, seed 1\n", other.agent, other.rollout,
                       &other.curve);
  CHECK_THROWS_WITH(old.resume_or_start(),
                    Catch::Contains(".safetensors: written by memtrace 0.1.0, this is memtrace"));
  PpoRunCheckpoint isa(forged("isa", "a machine of the future"), "the cue task, seed 1\n", other.agent, other.rollout,
                       &other.curve);
  CHECK_THROWS_WITH(isa.resume_or_start(),
                    Catch::Contains(".safetensors: written by a build for a machine of the future"));
  PpoRunCheckpoint format(forged("format", "memtrace.ppo.1"), "the cue task, seed 1\n", other.agent, other.rollout,
                          &other.curve);
  CHECK_THROWS_WITH(format.resume_or_start(),
                    Catch::Contains("a checkpoint of format \"memtrace.ppo.1\", expected \"memtrace.ppo_run.1\""));
  CHECK(state_of(other) == before);

  // Damaged (a byte of a tensor flipped, or cut short): the run starts again, saying why.
  for (const bool truncate : {false, true}) {
    std::string damaged = bytes;
    if (truncate)
      damaged.resize(damaged.size() / 2);
    else
      damaged[damaged.size() - 3] ^= 1;
    const auto p = dir / (truncate ? "truncated.safetensors" : "flipped.safetensors");
    write_text_atomically(p, damaged);
    PpoRunCheckpoint checkpoint(p, "the cue task, seed 1\n", other.agent, other.rollout, &other.curve);
    CHECK(checkpoint.resume_or_start() == RunStart::restarted);
    CHECK_THAT(checkpoint.damage(), Catch::Contains(truncate ? "parse_safetensors" : "checksum"));
    CHECK(state_of(other) == before);
  }
  CHECK_THROWS_WITH(PpoRunCheckpoint(path, "", other.agent, other.rollout, nullptr, {.seconds = -1}),
                    "PpoRunCheckpoint: every.seconds must be non-negative and finite, got -1");
}

TEST_CASE(
    "on_updates calls the pieces in order and stops at the first that returns false, and FreezeNormalizerAt picks its "
    "update",
    "[ppo]") {
  std::vector<int> calls;
  auto first = [&](const PpoStats&) { calls.push_back(1); };
  auto second = [&](const PpoStats& s) {
    calls.push_back(2);
    return s.update < 2;
  };
  auto third = [&](const PpoStats&) {
    calls.push_back(3);
    return true;
  };
  auto hook = on_updates(first, second, third);
  PpoStats stats;
  stats.update = 1;
  CHECK(hook(stats));
  stats.update = 2;
  CHECK_FALSE(hook(stats));
  CHECK(calls == std::vector<int>{1, 2, 3, 1, 2});

  Run run = make_run(1);
  CHECK_THROWS_WITH(train_to(run.agent, run.rollout, batch - 1, on_updates()),
                    "train_to: total_env_steps must be at least n_envs·n_steps = 128, got 127");
  CHECK(FreezeNormalizerAt(run.agent, 0.07, 100).after() == 7);
  CHECK(FreezeNormalizerAt(run.agent, 0.001, 100).after() == 1);
  CHECK(FreezeNormalizerAt(run.agent, 1.0, 100).after() == 100);
  CHECK_THROWS_WITH(FreezeNormalizerAt(run.agent, 0.0, 100), "FreezeNormalizerAt: fraction must be in (0, 1], got 0");
  FreezeNormalizerAt never(run.agent, 1.0, 4);
  for (std::size_t u = 1; u <= 4; ++u) {
    stats.update = u;
    never(stats);
  }
  CHECK_FALSE(run.agent.normalizer().frozen());
}

}  // namespace ppo_run_test
