// Tests of experiment/results_folder.hpp: one invocation of a sweep program, as the example
// programs make it. A shard's invocation computes only what its folder lacks; a merge gathers
// every results file of the shards, in the order given, with their provenance; a merge refused by
// the shards' folders leaves the output folder untouched.
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memtrace/experiment/results_folder.hpp>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace results_folder_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
namespace fs = std::filesystem;

namespace {

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("memtrace_results_folder_test") {}
};
using test::slurp;

const std::string description = "experiment=results_folder_test\n";
constexpr std::size_t num_runs = 7;
const std::vector<std::string> runs_header{"run", "value"};
const std::vector<std::string> curves_header{"run", "point", "value"};

std::vector<std::string> run_row(std::size_t run) { return csv_row(run, 0.25 * static_cast<double>(run)); }
std::vector<std::string> curve_row(std::size_t run, std::size_t point) {
  return csv_row(run, point, static_cast<double>(run) + 0.5 * static_cast<double>(point));
}

Provenance provenance_of(const std::string& command) {
  Provenance p;
  p.command = command;
  return p;
}

std::vector<MergeSpec> merged_files() {
  MergeSpec curves{{}, "curves.csv", curves_header, 2, {}};
  MergeSpec runs{{}, "runs.csv", runs_header, 1, {}};
  for (std::size_t run = 0; run < num_runs; ++run) {
    runs.keys.push_back(csv_row(run));
    for (std::size_t point = 0; point < 2; ++point) curves.keys.push_back(csv_row(run, point));
  }
  return {runs, curves};
}

/// One invocation of a sweep program: curves first, then the run's row (which marks it finished).
/// Returns the runs it computed.
std::size_t invoke(const SweepRequest& request) {
  open_results_folder(request, description, request.shard_folders.empty() ? std::vector<MergeSpec>{} : merged_files(),
                      {"runs.csv", "curves.csv"});
  ResultsCsv runs(request.dir / "runs.csv", runs_header, 1);
  ResultsCsv curves(request.dir / "curves.csv", curves_header, 2);
  const auto todo = runs_to_do(request.shard, num_runs, [&](std::size_t run) { return runs.contains(csv_row(run)); });
  for (const std::size_t run : todo) {
    for (std::size_t point = 0; point < 2; ++point)
      if (!curves.contains(csv_row(run, point))) curves.append(curve_row(run, point));
    runs.append(run_row(run));
  }
  return todo.size();
}

/// The sweep run as shards 0/2 and 1/2 into tmp/shard0 and tmp/shard1; their folders.
std::vector<fs::path> two_shards(const TempDir& tmp) {
  invoke({tmp / "shard0", Shard(0, 2), {}, provenance_of("0/2"), false});
  invoke({tmp / "shard1", Shard(1, 2), {}, provenance_of("1/2"), false});
  return {tmp / "shard0", tmp / "shard1"};
}

}  // namespace

TEST_CASE("runs_to_do lists the shard's runs not done yet, increasing, and the shards' lists cover every run once") {
  CHECK(runs_to_do(Shard(), 5, [](std::size_t) { return false; }) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(runs_to_do(Shard(1, 3), 8, [](std::size_t) { return false; }) == std::vector<std::size_t>{1, 4, 7});
  CHECK(runs_to_do(Shard(1, 3), 8, [](std::size_t run) { return run == 4; }) == std::vector<std::size_t>{1, 7});
  CHECK(runs_to_do(Shard(), 3, [](std::size_t) { return true; }).empty());
  for (const std::size_t count : {1, 2, 3, 5, 11}) {
    std::vector<int> seen(23, 0);
    for (std::size_t index = 0; index < count; ++index)
      for (const std::size_t run :
           runs_to_do(Shard(index, count), seen.size(), [](std::size_t r) { return r % 4 == 0; }))
        ++seen[run];
    for (std::size_t run = 0; run < seen.size(); ++run) CHECK(seen[run] == (run % 4 == 0 ? 0 : 1));
  }
}

TEST_CASE(
    "open_results_folder: a run's invocation labels the folder and records its provenance, and a resumed one "
    "computes only what is missing") {
  TempDir tmp;
  const SweepRequest request{tmp / "out", Shard(), {}, provenance_of("first"), false};
  CHECK(invoke(request) == num_runs);
  CHECK(slurp(tmp / "out" / "experiment.txt") == description);
  CHECK(!fs::exists(tmp / "out" / "shard.txt"));
  SweepRequest again = request;
  again.provenance = provenance_of("second");
  CHECK(invoke(again) == 0);
  const std::string provenance = slurp(tmp / "out" / "provenance.txt");
  CHECK(provenance.find("command=first\n") != std::string::npos);
  CHECK(provenance.find("command=second\n") != std::string::npos);
  CHECK(read_csv(tmp / "out" / "runs.csv").rows.size() == num_runs);

  // A folder of another experiment, or another memtrace version, is refused before anything is written.
  CHECK_THROWS_WITH(open_results_folder(request, "experiment=other\n", {}, {"runs.csv"}),
                    Catch::Contains("describes a different experiment"));
  std::ofstream(tmp / "out" / "provenance.txt", std::ios::app) << "memtrace=0.0.1\n";
  const std::string before = slurp(tmp / "out" / "provenance.txt");
  CHECK_THROWS_WITH(open_results_folder(request, description, {}, {"runs.csv"}),
                    Catch::Contains("written by memtrace 0.0.1"));
  CHECK(slurp(tmp / "out" / "provenance.txt") == before);
}

TEST_CASE(
    "open_results_folder: a merge gathers every results file of the shards as the unsplit sweep writes them, "
    "with each shard's provenance, and merging again adds nothing") {
  TempDir tmp;
  const Shard first(0, 3), second(1, 3), third(2, 3);
  std::size_t computed = 0;
  for (const Shard& shard : {first, second, third})
    computed +=
        invoke({tmp / ("shard" + shard.to_string().substr(0, 1)), shard, {}, provenance_of(shard.to_string()), false});
  CHECK(computed == num_runs);
  CHECK(invoke({tmp / "whole", Shard(), {}, provenance_of("whole"), false}) == num_runs);

  const std::vector<fs::path> folders{tmp / "shard0", tmp / "shard1", tmp / "shard2"};
  const SweepRequest merge{tmp / "merged", Shard(), folders, provenance_of("merge"), false};
  const std::vector<MergedFile> written =
      open_results_folder(merge, description, merged_files(), {"runs.csv", "curves.csv"});
  REQUIRE(written.size() == 2);
  CHECK(written[0].results_file == "runs.csv");
  CHECK(written[0].rows == num_runs);
  CHECK(written[0].appended == num_runs);
  CHECK(written[1].results_file == "curves.csv");
  CHECK(written[1].rows == 2 * num_runs);
  CHECK(written[1].appended == 2 * num_runs);
  // The merged files hold the rows of the unsplit sweep, in the order of the keys.
  CHECK(read_csv(tmp / "merged" / "runs.csv").rows == read_csv(tmp / "whole" / "runs.csv").rows);
  CHECK(read_csv(tmp / "merged" / "curves.csv").rows == read_csv(tmp / "whole" / "curves.csv").rows);
  CHECK(slurp(tmp / "merged" / "experiment.txt") == description);
  CHECK(slurp(tmp / "merged" / "provenance.txt").find("command=merge\n") != std::string::npos);
  CHECK(slurp(tmp / "merged" / "provenance-shard-1.txt")
            .starts_with("# provenance.txt of shard 1/3, from " + (tmp / "shard1").string() + "\n"));
  CHECK(slurp(tmp / "merged" / "provenance-shard-1.txt").find("command=1/3\n") != std::string::npos);
  // The merge's own invocation then finds every run done.
  CHECK(invoke(merge) == 0);
  const std::vector<MergedFile> again =
      open_results_folder(merge, description, merged_files(), {"runs.csv", "curves.csv"});
  CHECK(again[0].appended == 0);
  CHECK(again[1].appended == 0);
}

TEST_CASE("open_results_folder: a merge the shards' folders refuse leaves the output folder untouched") {
  TempDir tmp;
  const std::vector<fs::path> folders = two_shards(tmp);
  const fs::path out = tmp / "merged";

  // A run in none of the folders.
  CHECK_THROWS_WITH(open_results_folder({out, Shard(), {folders[0]}, provenance_of("merge"), false}, description,
                                        merged_files(), {"runs.csv", "curves.csv"}),
                    Catch::Contains("in none of the folders"));
  CHECK(!fs::exists(out));

  // A shard of another memtrace version, unless allowed.
  std::ofstream(folders[1] / "provenance.txt", std::ios::app) << "memtrace=0.0.1\n";
  const SweepRequest merge{out, Shard(), folders, provenance_of("merge"), false};
  CHECK_THROWS_WITH(open_results_folder(merge, description, merged_files(), {"runs.csv", "curves.csv"}),
                    Catch::Contains("written by memtrace 0.0.1"));
  CHECK(!fs::exists(out));

  // A merge into one shard of a sweep.
  SweepRequest shard_merge = merge;
  shard_merge.shard = Shard(0, 2);
  shard_merge.allow_version_change = true;
  CHECK_THROWS_WITH(open_results_folder(shard_merge, description, merged_files(), {"runs.csv", "curves.csv"}),
                    Catch::Contains("open_results_folder: request.shard is 0/2"));
  CHECK(!fs::exists(out));

  SweepRequest allowed = merge;
  allowed.allow_version_change = true;
  CHECK(open_results_folder(allowed, description, merged_files(), {"runs.csv", "curves.csv"})[0].rows == num_runs);
}

TEST_CASE(
    "open_results_folder: a merge the output folder refuses (a conflicting row, another experiment, another "
    "version) leaves it as it was") {
  TempDir tmp;
  const std::vector<fs::path> folders = two_shards(tmp);
  const std::vector<std::string> files{"runs.csv", "curves.csv"};

  // The folder holds run 3 with another value: nothing is appended to any file, no provenance recorded.
  const fs::path conflict = tmp / "conflict";
  prepare_results_folder(conflict, description);
  std::ofstream(conflict / "runs.csv") << "run,value\n3,99\n";
  CHECK_THROWS_WITH(open_results_folder({conflict, Shard(), folders, provenance_of("merge"), false}, description,
                                        merged_files(), files),
                    Catch::StartsWith("open_results_folder: ") && Catch::Contains("holds the run (run=3)"));
  CHECK(slurp(conflict / "runs.csv") == "run,value\n3,99\n");
  CHECK(!fs::exists(conflict / "curves.csv"));
  CHECK(!fs::exists(conflict / "provenance.txt"));

  // Another experiment's folder.
  const fs::path other = tmp / "other";
  prepare_results_folder(other, "experiment=other\n");
  CHECK_THROWS_WITH(
      open_results_folder({other, Shard(), folders, provenance_of("merge"), false}, description, merged_files(), files),
      Catch::StartsWith("open_results_folder: ") && Catch::Contains("describes a different experiment"));
  CHECK(slurp(other / "experiment.txt") == "experiment=other\n");
  CHECK(!fs::exists(other / "runs.csv"));

  // A folder of another version: refused before it is labelled, for a merge and for a shard's run.
  const fs::path old = tmp / "old";
  fs::create_directories(old);
  std::ofstream(old / "provenance.txt") << "memtrace=0.0.1\n";
  CHECK_THROWS_WITH(
      open_results_folder({old, Shard(), folders, provenance_of("merge"), false}, description, merged_files(), files),
      Catch::StartsWith("open_results_folder: ") && Catch::Contains("written by memtrace 0.0.1"));
  CHECK_THROWS_WITH(open_results_folder({old, Shard(0, 2), {}, provenance_of("0/2"), false}, description, {}, files),
                    Catch::StartsWith("open_results_folder: ") && Catch::Contains("written by memtrace 0.0.1"));
  CHECK(!fs::exists(old / "experiment.txt"));
  CHECK(!fs::exists(old / "shard.txt"));

  // Bad specs.
  CHECK_THROWS_WITH(open_results_folder({tmp / "none", Shard(), folders, {}, false}, description, {}, files),
                    Catch::StartsWith("open_results_folder: specs must hold the results files to merge, got none"));
  std::vector<MergeSpec> twice = merged_files();
  twice.push_back(twice.front());
  CHECK_THROWS_WITH(open_results_folder({tmp / "none", Shard(), folders, {}, false}, description, twice, files),
                    "open_results_folder: specs name runs.csv twice");
  CHECK(!fs::exists(tmp / "none"));
}

TEST_CASE(
    "open_results_folder: a merge writes its first file last, so an interrupted merge leaves no run finished "
    "without its curve") {
  TempDir tmp;
  const std::vector<fs::path> folders = two_shards(tmp);
  const fs::path out = tmp / "merged";
  prepare_results_folder(out, description);
  // Another process holds runs.csv: the merge fails when it comes to write it.
  const ResultsCsv held(out / "runs.csv", runs_header, 1);
  CHECK_THROWS_WITH(open_results_folder({out, Shard(), folders, provenance_of("merge"), false}, description,
                                        merged_files(), {"runs.csv", "curves.csv"}),
                    Catch::StartsWith("open_results_folder: "));
  CHECK(read_csv(out / "curves.csv").rows.size() == 2 * num_runs);
  CHECK(read_csv(out / "runs.csv").rows.empty());
}

}  // namespace results_folder_test
