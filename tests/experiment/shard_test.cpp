// Tests of experiment/shard.hpp: shards partition the runs of any sweep, shard specs are parsed
// strictly, results folders refuse another experiment or another shard, and a merge refuses a run
// that is missing, doubled, or of another experiment, naming the run and the folders.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memtrace/experiment/shard.hpp>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace shard_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
namespace fs = std::filesystem;

namespace {

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("memtrace_shard_test") {}
};
using test::slurp;

void write_file(const fs::path& path, const std::string& content) { std::ofstream(path, std::ios::binary) << content; }

const std::string description = "experiment=test\nsteps=100\n";
const std::vector<std::string> header{"setting", "seed", "value"};

/// A sweep of 2 settings x 3 seeds, run i = setting * 3 + seed, value 10 * setting + seed + 0.5.
constexpr std::size_t settings = 2, seeds = 3, num_runs = settings * seeds;

std::vector<std::string> key_of(std::size_t run) { return csv_row(run / seeds, run % seeds); }
std::vector<std::string> row_of(std::size_t run) {
  return csv_row(run / seeds, run % seeds,
                 10.0 * static_cast<double>(run / seeds) + static_cast<double>(run % seeds) + 0.5);
}

MergeSpec spec_of_sweep() {
  MergeSpec spec;
  spec.description = description;
  spec.header = header;
  spec.key_columns = 2;
  for (std::size_t i = 0; i < num_runs; ++i) spec.keys.push_back(key_of(i));
  return spec;
}

/// Runs shard `shard` of the sweep into `dir`, as a sweep program does.
void run_shard(const fs::path& dir, const Shard& shard) {
  prepare_results_folder(dir, description, shard);
  ResultsCsv out(dir / "runs.csv", header, 2);
  for (std::size_t i : shard.runs(num_runs))
    if (!out.contains(key_of(i))) out.append(row_of(i));
}

}  // namespace

TEST_CASE("shards partition the runs: every run in exactly one shard, sizes within one", "[shard]") {
  for (std::size_t count = 1; count <= 13; ++count)
    for (std::size_t runs = 0; runs <= 60; ++runs) {
      INFO("runs " << runs << ", shards " << count);
      std::vector<int> owners(runs, 0);
      std::size_t smallest = runs, largest = 0;
      for (std::size_t index = 0; index < count; ++index) {
        const Shard shard(index, count);
        const std::vector<std::size_t> mine = shard.runs(runs);
        REQUIRE(mine.size() == shard.size(runs));
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
        for (std::size_t k = 0; k < mine.size(); ++k) {
          REQUIRE(mine[k] < runs);
          if (k > 0) REQUIRE(mine[k - 1] < mine[k]);
          ++owners[mine[k]];
        }
        for (std::size_t i = 0; i < runs; ++i) REQUIRE(shard.contains(i) == (i % count == index));
      }
      for (std::size_t i = 0; i < runs; ++i) REQUIRE(owners[i] == 1);
      REQUIRE(largest - smallest <= 1);
    }
  // Runs numbered setting * seeds + seed: each shard gets floor or ceil of seeds / count of every setting.
  const Shard shard(1, 4);
  for (std::size_t setting = 0; setting < 5; ++setting) {
    std::size_t mine = 0;
    for (std::size_t seed = 0; seed < 10; ++seed) mine += shard.contains(setting * 10 + seed) ? 1 : 0;
    CHECK((mine == 2 || mine == 3));
  }
  CHECK(Shard().whole());
  CHECK(Shard().runs(3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(Shard(2, 5).to_string() == "2/5");
  CHECK(Shard(0, 1) == Shard());
  CHECK_FALSE(Shard(0, 2) == Shard(1, 2));
  CHECK_THROWS_WITH(Shard(0, 0), "Shard: count must be at least 1, got 0");
  CHECK_THROWS_WITH(Shard(3, 3), "Shard: index must be below count 3, got 3");
}

TEST_CASE("parse_shard reads I/N and refuses anything else, naming the flag", "[shard]") {
  CHECK(parse_shard("0/1") == Shard());
  CHECK(parse_shard("2/5") == Shard(2, 5));
  CHECK(parse_shard("99/100", "--shard") == Shard(99, 100));
  CHECK_THROWS_WITH(parse_shard("3/3", "--shard"),
                    "--shard: I must be below N (the shards of N are 0/N ... 2/N), got \"3/3\"");
  CHECK_THROWS_WITH(parse_shard("0/0", "--shard"), "--shard: N must be at least 1, got \"0/0\"");
  CHECK_THROWS_WITH(parse_shard("1", "--shard"),
                    "--shard: expected I/N, shard I of N with 0 <= I < N (e.g. 0/4), got \"1\"");
  for (const char* bad : {"", "/", "1/", "/2", "-1/2", "1/-2", "+1/2", " 1/2", "1/2 ", "1/2/3", "a/b", "1.0/2", "0x1/2",
                          "99999999999999999999/1", "1/99999999999999999999"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad, "--shard"), std::invalid_argument);
    CHECK_THROWS_WITH(parse_shard(bad, "--shard"), Catch::StartsWith("--shard: ") && Catch::Contains(bad));
  }
  CHECK_THROWS_WITH(parse_shard("5/2"), Catch::StartsWith("parse_shard: I must be below N"));
}

TEST_CASE("a results folder holds one experiment and one shard", "[shard]") {
  TempDir dir;
  const fs::path a = dir / "a";
  prepare_results_folder(a, description, Shard(1, 3));
  CHECK(slurp(a / "experiment.txt") == description);  // the experiment's, not the shard's
  CHECK(slurp(a / "shard.txt") == "shard=1/3\n");
  CHECK(read_shard_file(a) == Shard(1, 3));
  prepare_results_folder(a, description, Shard(1, 3));  // the same shard again: resumes
  write_file(a / "runs.csv", "setting,seed,value\n");
  CHECK_THROWS_WITH(prepare_results_folder(a, description, Shard(2, 3)),
                    a.string() + " holds runs of shard 1/3 (" + (a / "shard.txt").string() +
                        "), this run is shard 2/3: a folder holds the runs of one shard, or of the whole sweep; use "
                        "another folder");
  CHECK_THROWS_WITH(prepare_results_folder(a, description), Catch::Contains("this run is the whole sweep"));
  CHECK_THROWS_WITH(prepare_results_folder(a, "experiment=other\n", Shard(1, 3)),
                    Catch::Contains("describes a different experiment") && Catch::Contains("experiment=other"));
  CHECK(slurp(a / "shard.txt") == "shard=1/3\n");

  // A folder of the whole sweep has no shard.txt; a shard may not join its runs.
  const fs::path whole = dir / "whole";
  prepare_results_folder(whole, description);
  CHECK_FALSE(fs::exists(whole / "shard.txt"));
  CHECK(read_shard_file(whole) == Shard());
  write_file(whole / "runs.csv", "setting,seed,value\n");
  CHECK_THROWS_WITH(prepare_results_folder(whole, description, Shard(0, 2)),
                    Catch::Contains("holds runs of the whole sweep (it has no shard.txt), this run is shard 0/2"));
  CHECK_FALSE(fs::exists(whole / "shard.txt"));

  // Results without experiment.txt are of unknown origin; a file is not a folder.
  const fs::path unknown = dir / "unknown";
  fs::create_directories(unknown);
  write_file(unknown / "runs.csv", "setting,seed,value\n");
  CHECK_THROWS_WITH(prepare_results_folder(unknown, description),
                    Catch::Contains("runs.csv exists but") && Catch::Contains("may hold runs of another experiment"));
  CHECK_FALSE(fs::exists(unknown / "experiment.txt"));
  write_file(dir / "file", "x");
  CHECK_THROWS_WITH(prepare_results_folder(dir / "file", description),
                    (dir / "file").string() + " is a file, not a folder");
  write_file(a / "shard.txt", "shard=3/3\n");
  CHECK_THROWS_WITH(read_shard_file(a), (a / "shard.txt").string() +
                                            ": I must be below N (the shards of N are 0/N ... "
                                            "2/N), got \"3/3\"");
  write_file(a / "shard.txt", "1/3");
  CHECK_THROWS_WITH(read_shard_file(a), Catch::Contains("expected one line shard=I/N"));
}

TEST_CASE("merging the shards gives every run once, in the order of the keys", "[shard]") {
  TempDir dir;
  const MergeSpec spec = spec_of_sweep();
  std::vector<fs::path> folders;
  for (std::size_t i : {2, 0, 3, 1}) {  // any order of the folders
    folders.push_back(dir / ("shard" + std::to_string(i)));
    run_shard(folders.back(), Shard(i, 4));
  }
  const CsvTable merged = merge_shards(folders, spec);
  CHECK(merged.header == header);
  REQUIRE(merged.rows.size() == num_runs);
  for (std::size_t i = 0; i < num_runs; ++i) CHECK(merged.rows[i] == row_of(i));

  // Into a folder: the whole sweep's results, as if run on one machine; merging again changes nothing.
  const fs::path out = dir / "merged";
  CHECK(merge_shards_into(out, folders, spec).rows == merged.rows);
  std::string expected = "setting,seed,value\n";
  for (std::size_t i = 0; i < num_runs; ++i) expected += detail::join_fields(row_of(i), 3) + "\n";
  CHECK(slurp(out / "runs.csv") == expected);
  CHECK(slurp(out / "experiment.txt") == description);
  CHECK_FALSE(fs::exists(out / "shard.txt"));
  CHECK(write_merged(out, merged, spec) == 0);
  CHECK(slurp(out / "runs.csv") == expected);

  // A folder that already holds some of the runs, identical, gets the rest.
  const fs::path partial = dir / "partial";
  prepare_results_folder(partial, description);
  write_file(partial / "runs.csv", "setting,seed,value\n1,2,12.5\n");
  CHECK(write_merged(partial, merged, spec) == num_runs - 1);
  CHECK(read_csv(partial / "runs.csv", 2).rows.size() == num_runs);
  // ... but one that holds a run with other values is refused, before anything is appended.
  const fs::path conflict = dir / "conflict";
  prepare_results_folder(conflict, description);
  write_file(conflict / "runs.csv", "setting,seed,value\n1,2,7\n");
  CHECK_THROWS_WITH(write_merged(conflict, merged, spec),
                    "write_merged: " + (conflict / "runs.csv").string() +
                        " line 2 holds the run (setting=1, seed=2) as \"1,2,7\", the shards as \"1,2,12.5\": use "
                        "another folder");
  CHECK(slurp(conflict / "runs.csv") == "setting,seed,value\n1,2,7\n");
  // A shard's folder is not a place to merge into.
  CHECK_THROWS_WITH(write_merged(folders[0], merged, spec), Catch::Contains("holds runs of shard 2/4"));

  // Rows of runs the experiment does not ask for (another seed) are left out.
  MergeSpec fewer = spec;
  fewer.keys.pop_back();
  CHECK(merge_shards(folders, fewer).rows.size() == num_runs - 1);
}

TEST_CASE("a merge refuses missing runs, doubled runs and foreign experiments, naming them", "[shard]") {
  TempDir dir;
  const MergeSpec spec = spec_of_sweep();
  const fs::path s0 = dir / "s0", s1 = dir / "s1", s2 = dir / "s2";
  run_shard(s0, Shard(0, 3));
  run_shard(s1, Shard(1, 3));
  run_shard(s2, Shard(2, 3));

  // A missing shard: the first missing run (run 1: setting 0, seed 1) and the absent shard are named.
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s2}, spec),
                    "merge_shards: 2 of the 6 runs are in none of the folders, the first being (setting=0, seed=1); "
                    "merged " +
                        s0.string() + " (shard 0/3), " + s2.string() + " (shard 2/3); no folder holds shard 1/3");
  // A shard interrupted before its last run.
  const fs::path short1 = dir / "short1";
  prepare_results_folder(short1, description, Shard(1, 3));
  write_file(short1 / "runs.csv", "setting,seed,value\n0,1,1.5\n1,1,11.");  // a torn last line
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, short1, s2}, spec),
                    Catch::Contains("1 of the 6 runs are in none of the folders, the first being (setting=1, seed=1)"));

  // A run in two folders: the same shard twice, or shards of different splits.
  const fs::path again1 = dir / "again1";
  run_shard(again1, Shard(1, 3));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, again1, s2}, spec),
                    "merge_shards: the run (setting=0, seed=1) is in both " + (s1 / "runs.csv").string() +
                        " line 2 (shard 1/3) and " + (again1 / "runs.csv").string() +
                        " line 2 (shard 1/3): each run must be in exactly one of the merged folders; the two "
                        "folders hold the same shard");
  const fs::path half = dir / "half";
  run_shard(half, Shard(1, 2));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, s2, half}, spec),
                    Catch::Contains("is in both") && Catch::Contains("(shard 1/2)") &&
                        Catch::Contains("split into different numbers of shards"));
  // The same folder twice.
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, s2, dir / "s1" / ".." / "s1"}, spec),
                    Catch::Contains("is given twice"));

  // A key repeated within one folder's file (say, files concatenated by hand).
  const fs::path doubled = dir / "doubled";
  prepare_results_folder(doubled, description, Shard(1, 3));
  write_file(doubled / "runs.csv", "setting,seed,value\n0,1,1.5\n1,1,11.5\n0,1,1.5\n");
  CHECK_THROWS_WITH(
      merge_shards(std::vector<fs::path>{s0, doubled, s2}, spec),
      "read_csv: " + (doubled / "runs.csv").string() + ": line 4 repeats the key (setting=0, seed=1) of line 2");

  // Another experiment (here: other steps), no experiment.txt, another header, no results file.
  const fs::path foreign = dir / "foreign";
  prepare_results_folder(foreign, "experiment=test\nsteps=200\n", Shard(1, 3));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, foreign, s2}, spec),
                    "merge_shards: " + (foreign / "experiment.txt").string() +
                        " describes a different experiment:\nexperiment=test\nsteps=200\nthis merge is "
                        "of:\nexperiment=test\nsteps=100\n");
  const fs::path bare = dir / "bare";
  fs::create_directories(bare);
  write_file(bare / "runs.csv", "setting,seed,value\n0,1,1.5\n1,1,11.5\n");
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, bare, s2}, spec),
                    "merge_shards: " + bare.string() + " has no experiment.txt, so its runs are of unknown origin");
  const fs::path other_header = dir / "other_header";
  prepare_results_folder(other_header, description, Shard(1, 3));
  write_file(other_header / "runs.csv", "setting,seed,error\n");
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, other_header, s2}, spec),
                    Catch::Contains("has header \"setting,seed,error\", expected \"setting,seed,value\""));
  const fs::path empty = dir / "empty";
  prepare_results_folder(empty, description, Shard(1, 3));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, empty, s2}, spec),
                    "merge_shards: " + (empty / "runs.csv").string() + " does not exist (has shard 1/3 not run?)");
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, dir / "nowhere"}, spec), Catch::Contains("is not a folder"));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{}, spec), "merge_shards: no folders to merge");

  // A spec that cannot be right.
  MergeSpec bad = spec;
  bad.keys.push_back(key_of(0));
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, s2}, bad),
                    "merge_shards: spec.keys holds the run (setting=0, seed=0) twice");
  bad = spec;
  bad.keys[1] = csv_row(0);
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, s2}, bad),
                    "merge_shards: spec.keys[1] must have 2 fields (setting,seed), got 1");
  bad = spec;
  bad.key_columns = 4;
  CHECK_THROWS_WITH(merge_shards(std::vector<fs::path>{s0, s1, s2}, bad),
                    "merge_shards: spec.key_columns must be in [1, 3], got 4");
  // And all three together pass.
  CHECK(merge_shards(std::vector<fs::path>{s0, s1, s2}, spec).rows.size() == num_runs);
}

namespace {

/// Forks `count` processes that wait on one pipe, so that they start at the same moment, then each
/// calls prepare_results_folder(dir, descriptions[i], shards[i]) and exits 0 if it may proceed, 2
/// if it was refused with a message naming the folder's experiment or shard, 3 otherwise. Returns
/// their exit codes.
std::vector<int> race_on_folder(const fs::path& dir, const std::vector<std::string>& descriptions,
                                const std::vector<Shard>& shards) {
  int start[2];
  REQUIRE(::pipe(start) == 0);
  std::vector<pid_t> children;
  for (std::size_t i = 0; i < descriptions.size(); ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(start[1]);
      char byte = 0;
      (void)!::read(start[0], &byte, 1);  // returns 0 when the parent closes its end: go
      int code = 0;
      try {
        prepare_results_folder(dir, descriptions[i], shards[i]);
      } catch (const std::invalid_argument& e) {
        const bool named = std::strstr(e.what(), "another process labelled the folder first") != nullptr ||
                           std::strstr(e.what(), "describes a different experiment") != nullptr ||
                           std::strstr(e.what(), "holds runs of") != nullptr;
        code = named ? 2 : 3;
      } catch (...) {
        code = 3;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

}  // namespace

TEST_CASE("two processes starting different experiments on one new folder: exactly one proceeds",
          "[shard][concurrency]") {
  // The check of experiment.txt and its writing were two steps, through one temporary file name:
  // both processes could pass the check, and the folder ended up labelled with one experiment
  // while both wrote runs into it, both exiting 0.
  const TempDir tmp;
  const std::string other = "experiment=other\nsteps=200\n";
  for (int trial = 0; trial < 40; ++trial) {
    const fs::path dir = tmp / ("race" + std::to_string(trial));
    const auto codes = race_on_folder(dir, {description, other}, {Shard{}, Shard{}});
    REQUIRE(codes.size() == 2);
    INFO("trial " << trial << ": exit codes " << codes[0] << " and " << codes[1]);
    REQUIRE(((codes[0] == 0 && codes[1] == 2) || (codes[0] == 2 && codes[1] == 0)));
    // The label is the winner's, whole, and no temporary file is left behind.
    CHECK(slurp(dir / "experiment.txt") == (codes[0] == 0 ? description : other));
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
  }
  // The same experiment as two different shards of one folder: one shard proceeds.
  for (int trial = 0; trial < 20; ++trial) {
    const fs::path dir = tmp / ("shards" + std::to_string(trial));
    const auto codes = race_on_folder(dir, {description, description}, {Shard{0, 2}, Shard{1, 2}});
    INFO("trial " << trial << ": exit codes " << codes[0] << " and " << codes[1]);
    REQUIRE(((codes[0] == 0 && codes[1] == 2) || (codes[0] == 2 && codes[1] == 0)));
    CHECK(read_shard_file(dir) == (codes[0] == 0 ? Shard{0, 2} : Shard{1, 2}));
  }
  // The same experiment twice (the same shard): both may proceed; the runs file's lock separates them.
  const auto same = race_on_folder(tmp / "same", {description, description}, {Shard{}, Shard{}});
  CHECK(same == std::vector<int>{0, 0});
}

}  // namespace shard_test
