// Tests of experiment/sweep_runner.hpp: a sweep described by its plan runs every run once, in
// order of cost, writes its rows (the first file last), resumes what a stop or a crash left, gives
// each run a checkpoint file and removes it, splits into shards whose folders merge to the files
// of one sweep, and refuses a plan or rows that do not fit, before writing anything.
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/sweep_runner.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../temp_dir.hpp"

namespace sweep_runner_test {

using namespace memtrace;
namespace fs = std::filesystem;

namespace {

// Six runs (setting a or b, seeds 0-2) of costs 1, 3, 2, ...; each writes one row to runs.csv
// and two curve points to curves.csv, all computed from its index.
SweepPlan plan() {
  SweepPlan p;
  p.description = "experiment=sweep_runner_test\n";
  p.files = {{"runs.csv", {"setting", "seed", "value"}, 2}, {"curves.csv", {"setting", "seed", "at", "y"}, 3}};
  for (std::size_t i = 0; i < 6; ++i) {
    const auto key = csv_row(i < 3 ? "a" : "b", i % 3);
    p.runs.push_back({{{key}, {csv_row(key[0], i % 3, 10), csv_row(key[0], i % 3, 20)}}, double((i * 5) % 7)});
  }
  return p;
}

std::optional<SweepRows> rows_of(const SweepPlan& p, std::size_t i) {
  const auto& key = p.runs[i].keys[0][0];
  SweepRows rows(2);
  rows[0].push_back({key[0], key[1], csv_field(1.5 * static_cast<double>(i))});
  for (const int at : {10, 20}) rows[1].push_back({key[0], key[1], csv_field(at), csv_field(at * 0.25 + double(i))});
  return rows;
}

std::multiset<std::string> lines(const fs::path& path) {
  std::ifstream in(path);
  std::multiset<std::string> out;
  for (std::string line; std::getline(in, line);) out.insert(line);
  return out;
}

SweepRunOptions quiet(std::size_t threads = 2) {
  return {
      .threads = threads, .progress = false, .label = {}, .checkpoints = false, .open_folder = true, .report = false};
}

}  // namespace

TEST_CASE("run_sweep runs every run once, costliest first, and a second call finds them done", "[sweep]") {
  const test::TempDir dir("sweep_runner");
  const SweepPlan p = plan();
  std::vector<std::size_t> order;
  const SweepOutcome first = run_sweep(
      {dir / "out"}, p,
      [&](const SweepRunContext& c) {
        order.push_back(c.index);
        CHECK(c.checkpoint.empty());
        return rows_of(p, c.index);
      },
      quiet(1));
  CHECK(first.runs == 6);
  CHECK(first.in_shard == 6);
  CHECK(first.computed == 6);
  CHECK(first.complete());
  // Costs 0, 5, 3, 1, 6, 4: the costliest first.
  CHECK(order == std::vector<std::size_t>{4, 1, 5, 2, 3, 0});
  const CsvTable runs = read_csv(dir / "out" / "runs.csv", 2);
  REQUIRE(runs.rows.size() == 6);
  CHECK(runs.rows[0] == std::vector<std::string>{"b", "1", "6"});
  CHECK(read_csv(dir / "out" / "curves.csv", 3).rows.size() == 12);
  CHECK(test::slurp(dir / "out" / "experiment.txt") == p.description);

  const auto before = test::slurp(dir / "out" / "runs.csv");
  const SweepOutcome again = run_sweep(
      {dir / "out"}, p,
      [&](const SweepRunContext& c) -> std::optional<SweepRows> {
        FAIL("run " << c.index << " was run again");
        return std::nullopt;
      },
      quiet());
  CHECK(again.computed == 0);
  CHECK(test::slurp(dir / "out" / "runs.csv") == before);
}

TEST_CASE("run_sweep: stopped runs keep their checkpoints and resume, and a crash between files writes no row twice",
          "[sweep]") {
  const test::TempDir dir("sweep_runner_stop");
  const SweepPlan p = plan();
  const SweepOutcome whole = run_sweep(
      {dir / "whole"}, p, [&](const SweepRunContext& c) { return rows_of(p, c.index); }, quiet());
  REQUIRE(whole.complete());

  SweepRunOptions options = quiet();
  options.checkpoints = true;
  const auto stopping = [&](const SweepRunContext& c) -> std::optional<SweepRows> {
    CHECK(c.checkpoint ==
          dir / "parts" / "checkpoints" / (sweep_run_name(p.runs[c.index].keys[0][0]) + ".safetensors"));
    std::ofstream(c.checkpoint) << "state of run " << c.index;
    if (c.index % 2 == 1) return std::nullopt;  // stopped: as if killed after its checkpoint
    return rows_of(p, c.index);
  };
  const SweepOutcome stopped = run_sweep({dir / "parts"}, p, stopping, options);
  CHECK(stopped.computed == 3);
  CHECK(stopped.stopped == 3);
  CHECK_FALSE(stopped.complete());
  CHECK(fs::exists(dir / "parts" / "checkpoints" / "a_1.safetensors"));
  CHECK_FALSE(fs::exists(dir / "parts" / "checkpoints" / "a_0.safetensors"));
  // What a kill leaves: half a checkpoint being written, and the checkpoint of a run whose rows were
  // written just before. Both are removed when the sweep starts again.
  std::ofstream(dir / "parts" / "checkpoints" / "b_1.safetensors.tmp.4242.0") << "half";
  std::ofstream(dir / "parts" / "checkpoints" / "a_0.safetensors") << "state of run 0";
  // A crash after run b_1's curve rows, before its runs.csv row: it runs again, its curve rows are not repeated.
  {
    fs::remove(dir / "parts" / "runs.csv");
    ResultsCsv runs(dir / "parts" / "runs.csv", p.files[0].header, 2);
    for (const std::size_t i : {0, 2}) runs.append((*rows_of(p, i))[0][0]);
  }
  std::vector<std::size_t> resumed;
  const SweepOutcome rest = run_sweep(
      {dir / "parts"}, p,
      [&](const SweepRunContext& c) {
        resumed.push_back(c.index);
        if (c.index % 2 == 1) CHECK(test::slurp(c.checkpoint) == "state of run " + std::to_string(c.index));
        return rows_of(p, c.index);
      },
      options);
  CHECK(std::set<std::size_t>(resumed.begin(), resumed.end()) == std::set<std::size_t>{1, 3, 4, 5});
  CHECK(rest.complete());
  CHECK_FALSE(fs::exists(dir / "parts" / "checkpoints"));
  // max_runs: the two costliest runs, then the rest.
  SweepRunOptions two = quiet(1);
  two.max_runs = 2;
  std::vector<std::size_t> started;
  const auto record = [&](const SweepRunContext& c) {
    started.push_back(c.index);
    return rows_of(p, c.index);
  };
  const SweepOutcome partial = run_sweep({dir / "max"}, p, record, two);
  CHECK(started == std::vector<std::size_t>{4, 1});
  CHECK(partial.computed == 2);
  CHECK(partial.not_started == 4);
  CHECK_FALSE(partial.complete());
  CHECK(run_sweep({dir / "max"}, p, record, quiet(1)).computed == 4);
  for (const char* file : {"runs.csv", "curves.csv"}) CHECK(lines(dir / "max" / file) == lines(dir / "whole" / file));
  for (const char* file : {"runs.csv", "curves.csv"}) CHECK(lines(dir / "parts" / file) == lines(dir / "whole" / file));
}

TEST_CASE("run_sweep: two shards' folders merge into the files of one sweep", "[sweep][shard]") {
  const test::TempDir dir("sweep_runner_shards");
  const SweepPlan p = plan();
  const auto run = [&](const SweepRunContext& c) { return rows_of(p, c.index); };
  REQUIRE(run_sweep({dir / "whole"}, p, run, quiet()).complete());
  std::set<std::size_t> seen;
  for (std::size_t s = 0; s < 2; ++s) {
    const SweepOutcome o = run_sweep(
        {dir / ("s" + std::to_string(s)), Shard(s, 2)}, p,
        [&](const SweepRunContext& c) {
          CHECK(c.index % 2 == s);
          seen.insert(c.index);
          return rows_of(p, c.index);
        },
        quiet(1));
    CHECK(o.in_shard == 3);
    CHECK(o.computed == 3);
  }
  CHECK(seen.size() == 6);
  SweepRequest merge{dir / "merged", Shard{}, {dir / "s0", dir / "s1"}, {}, false};
  const SweepOutcome merged = run_sweep(
      merge, p,
      [&](const SweepRunContext& c) -> std::optional<SweepRows> {
        FAIL("a merge ran run " << c.index);
        return std::nullopt;
      },
      quiet());
  REQUIRE(merged.merged.size() == 2);
  CHECK(merged.merged[0].rows == 6);
  CHECK(merged.merged[1].rows == 12);
  for (const char* file : {"runs.csv", "curves.csv"})
    CHECK(lines(dir / "merged" / file) == lines(dir / "whole" / file));
  // A merge missing a shard is refused naming it, and leaves no folder behind.
  merge.dir = dir / "half";
  merge.shard_folders = {dir / "s0"};
  CHECK_THROWS_WITH(run_sweep(merge, p, run, quiet()), Catch::Contains("no folder holds shard 1/2"));
  CHECK_FALSE(fs::exists(dir / "half"));
}

TEST_CASE("run_sweep refuses a plan that does not fit, and rows other than the plan's, naming them", "[sweep]") {
  const test::TempDir dir("sweep_runner_refusals");
  const auto run = [](const SweepRunContext&) -> std::optional<SweepRows> { return std::nullopt; };
  const auto refused = [&](SweepPlan p, const std::string& why) {
    CHECK_THROWS_WITH(run_sweep({dir / "out"}, p, run, quiet()), why);
    CHECK_FALSE(fs::exists(dir / "out"));  // nothing was written
  };
  SweepPlan p = plan();
  p.runs[4].keys[0][0] = p.runs[1].keys[0][0];
  refused(p, "run_sweep: plan.runs[1] and plan.runs[4] both write the row (setting=a, seed=1) of runs.csv");
  p = plan();
  p.runs[2].keys[1][0].pop_back();
  refused(p, "run_sweep: plan.runs[2] has a key of 2 fields for curves.csv, expected 3 (setting,seed,at)");
  p = plan();
  p.runs[3].keys[0].clear();
  refused(p, "run_sweep: plan.runs[3] writes no row to runs.csv, whose rows mark a run finished");
  p = plan();
  p.runs[0].cost = -1;
  refused(p, "run_sweep: plan.runs[0].cost must be non-negative and finite, got -1");
  p = plan();
  p.files[1].key_columns = 5;
  refused(p, "run_sweep: plan.files[1] (curves.csv): key_columns must be in [1, 4], got 5");
  p = plan();
  p.files.push_back(p.files[0]);
  refused(p, "run_sweep: plan.files names runs.csv twice");
  p = plan();
  p.runs.clear();
  refused(p, "run_sweep: plan.runs is empty: a sweep of no runs");
  p = plan();
  p.files[0].header[2] = "setting";
  refused(p, "run_sweep: plan.files[0] (runs.csv): column names must be unique, got \"setting\" twice");
  p = plan();
  p.runs[5].keys[0][0][0] = "b,c";
  refused(p, "run_sweep: plan.runs[5] has a key field \"b,c\" for runs.csv that holds ',' or a line break");
  // With checkpoints, two runs whose names coincide would share a file: refused.
  p = plan();
  p.runs[0].keys[0][0] = {"x_y", "z"};
  p.runs[1].keys[0][0] = {"x", "y_z"};
  SweepRunOptions with_checkpoints = quiet();
  with_checkpoints.checkpoints = true;
  CHECK_THROWS_WITH(run_sweep({dir / "out"}, p, run, with_checkpoints),
                    "run_sweep: plan.runs[0] and plan.runs[1] would share the checkpoint file x_y_z.safetensors "
                    "(sweep_run_name of their first keys)");
  CHECK_FALSE(fs::exists(dir / "out"));

  // Rows of another key than the plan declares: a program's mistake, before anything of the run is written.
  p = plan();
  CHECK_THROWS_WITH(run_sweep(
                        {dir / "rows"}, p,
                        [&](const SweepRunContext& c) {
                          auto rows = rows_of(p, c.index);
                          (*rows)[1][1][2] = "30";
                          return rows;
                        },
                        quiet(1)),
                    Catch::StartsWith("run_sweep: run 4 returned the row (setting=b, seed=1, at=30) for curves.csv"));
  CHECK(read_csv(dir / "rows" / "curves.csv", 3).rows.empty());
}

TEST_CASE("run_sweep: a run that throws fails alone, is listed with its message, and a second call retries it",
          "[sweep]") {
  const memtrace::test::TempDir dir("sweep_runner_failed");
  const SweepPlan p = plan();
  bool diverge = true;
  const auto run = [&](const SweepRunContext& c) -> std::optional<SweepRows> {
    if (diverge && c.index == 4) throw std::domain_error("the network diverged (a value is nan)");
    return rows_of(p, c.index);
  };
  const SweepOutcome first = run_sweep({dir / "f"}, p, run, quiet(2));
  REQUIRE(first.failed.size() == 1);
  CHECK(first.failed[0].index == 4);
  CHECK(first.failed[0].key == "(setting=b, seed=1)");
  CHECK(first.failed[0].what == "the network diverged (a value is nan)");
  CHECK(first.computed == 5);
  CHECK_FALSE(first.complete());
  CHECK(read_csv(dir / "f" / "runs.csv", 2).rows.size() == 5);  // the others are written
  diverge = false;
  const SweepOutcome second = run_sweep({dir / "f"}, p, run, quiet(2));
  CHECK(second.computed == 1);  // only the failed run
  CHECK(second.complete());
  CHECK(read_csv(dir / "f" / "runs.csv", 2).rows.size() == 6);
}

}  // namespace sweep_runner_test
