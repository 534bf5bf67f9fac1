// The experiment program examples/td_random_walk, run as a user runs it (--quick --curve) and its
// files checked: every expected row, ordered confidence intervals, the consistency relations of
// the exact analysis, learning curves that agree with the runs, resumption after an interruption,
// thread-count independence, a valid PNG figure, and the sweep split into shards and merged into
// the same summary. ctest passes the program's path in MEMTRACE_TD_RANDOM_WALK.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memtrace/experiment/provenance.hpp>
#include <memtrace/experiment/results.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "spawn.hpp"
#include "temp_dir.hpp"

namespace {

using memtrace::CsvTable;
using memtrace::parse_field;
using memtrace::read_csv;
namespace fs = std::filesystem;

std::string program() {
  const char* path = std::getenv("MEMTRACE_TD_RANDOM_WALK");
  REQUIRE(path != nullptr);
  return path;
}

/// Runs the program with these arguments; returns its exit code. Output goes to out/log.txt.
int run_program(const fs::path& out, const std::string& arguments) {
  fs::create_directories(out);
  const std::string command =
      program() + " --out " + out.string() + " " + arguments + " >>" + (out / "log.txt").string() + " 2>&1";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/// The quick experiment of the ctest run, computed once and shared by the test cases.
const fs::path& quick_run() {
  static const memtrace::test::TempDir dir("td_random_walk_test");
  static const fs::path out = dir / "quick";
  static const bool done = [] {
    REQUIRE(run_program(out, "--quick --curve --threads 2") == 0);
    return true;
  }();
  (void)done;
  return out;
}

double number(const CsvTable& table, const std::vector<std::string>& row, const char* column) {
  return parse_field<double>(row[table.column(column)]);
}

const std::vector<std::string>& find_row(const CsvTable& table, const std::string& memory, const std::string& param,
                                         const std::string& alpha = "") {
  for (const auto& row : table.rows)
    if (row[0] == memory && row[1] == param && (alpha.empty() || row[2] == alpha)) return row;
  FAIL("no row " << memory << " " << param << " " << alpha);
  throw std::logic_error("unreachable");
}

const std::vector<std::string> quick_alphas{"0.001", "0.005623413251903491", "0.03162277660168379",
                                            "0.1778279410038923", "1"};

}  // namespace

TEST_CASE("summary.csv has exactly the expected columns and one row per memory, param and alpha") {
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  CHECK(summary.header == std::vector<std::string>{"memory", "param", "alpha", "seeds", "steps", "ve_mean", "ve_ci_low",
                                                   "ve_ci_high", "ve_optimal", "ve_td_fixed_point"});
  // --quick: traces λ ∈ {0, 0.5, 0.9} at α = 0.02; windows and concat m ∈ 1..3, 5 step sizes each.
  REQUIRE(summary.rows.size() == 3 + 2 * 3 * 5);
  for (const char* lambda : {"0", "0.5", "0.9"}) CHECK(find_row(summary, "trace", lambda)[2] == "0.02");
  for (const char* memory : {"window", "concat"})
    for (const char* m : {"1", "2", "3"})
      for (const auto& alpha : quick_alphas) CHECK(find_row(summary, memory, m, alpha)[3] == "8");
  for (const auto& row : summary.rows) {
    CHECK(row[3] == "8");
    CHECK(row[4] == "20000");
    const double mean = number(summary, row, "ve_mean");
    const double low = number(summary, row, "ve_ci_low");
    const double high = number(summary, row, "ve_ci_high");
    const double optimal = number(summary, row, "ve_optimal");
    const double fixed_point = number(summary, row, "ve_td_fixed_point");
    if (std::isinf(mean)) {  // a step size at which TD diverged
      CHECK(low == mean);
      CHECK(high == mean);
      continue;
    }
    CHECK(low < mean);
    CHECK(mean < high);
    // No estimator of a memory class does better than the optimal one of that class.
    CHECK(optimal > 0.0);
    CHECK(optimal <= mean);
    CHECK(optimal <= fixed_point * (1 + 1e-12));
  }
}

TEST_CASE("the exact optimal value errors are consistent across memories") {
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  const auto optimal = [&](const char* memory, const char* param) {
    return number(summary, find_row(summary, memory, param), "ve_optimal");
  };
  // λ = 0 traces, m = 1 windows and m = 1 concat windows all see only the current observation.
  CHECK(optimal("trace", "0") == Approx(optimal("window", "1")).epsilon(1e-9));
  CHECK(optimal("concat", "1") == Approx(optimal("window", "1")).epsilon(1e-9));
  for (const char* memory : {"window", "concat"}) {
    CHECK(optimal(memory, "2") <= optimal(memory, "1"));
    CHECK(optimal(memory, "3") <= optimal(memory, "2"));
  }
  // A full window holds every function of the window, a concat window only linear ones.
  for (const char* m : {"1", "2", "3"}) CHECK(optimal("window", m) <= optimal("concat", m) * (1 + 1e-12));
  // The TD fixed point of m = 1 is the same estimator for all three memories too.
  const auto fixed_point = [&](const char* memory, const char* param) {
    return number(summary, find_row(summary, memory, param), "ve_td_fixed_point");
  };
  CHECK(fixed_point("trace", "0") == Approx(fixed_point("window", "1")).epsilon(1e-9));
  CHECK(fixed_point("concat", "1") == Approx(fixed_point("window", "1")).epsilon(1e-9));
}

TEST_CASE("runs.csv holds every run, and summary.csv is their mean") {
  const CsvTable runs = read_csv(quick_run() / "runs.csv");
  CHECK(runs.header == std::vector<std::string>{"memory", "param", "alpha", "seed", "ve"});
  REQUIRE(runs.rows.size() == (3 + 2 * 3 * 5) * 8);
  std::map<std::string, std::vector<double>> by_setting;
  for (const auto& row : runs.rows)
    by_setting[row[0] + "," + row[1] + "," + row[2]].push_back(parse_field<double>(row[4]));
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  for (const auto& row : summary.rows) {
    const auto& ve = by_setting.at(row[0] + "," + row[1] + "," + row[2]);
    REQUIRE(ve.size() == 8);
    double sum = 0.0;
    for (double x : ve) sum += x;
    if (!std::isinf(sum)) CHECK(number(summary, row, "ve_mean") == Approx(sum / 8).epsilon(1e-12));
  }
}

TEST_CASE("the learning curves pass through the runs' value errors at the runs' step count") {
  const CsvTable curve = read_csv(quick_run() / "curve.csv");
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  CHECK(curve.header == summary.header);
  // Curves: the traces at λ = 0.8 and 0.9 and the best window and concat setting, 10^3 ... 10^5 steps.
  std::map<std::string, std::vector<std::size_t>> steps;
  for (const auto& row : curve.rows) steps[row[0] + " " + row[1]].push_back(parse_field<std::size_t>(row[4]));
  REQUIRE(steps.size() == 4);
  CHECK(steps.contains("trace 0.8"));
  CHECK(steps.contains("trace 0.9"));
  for (const auto& [memory, points] : steps) {
    CHECK(points.front() == 1000);
    CHECK(points.back() == 100000);
    CHECK(points.size() == 10);  // quarter decades and the runs' 20,000 steps
  }
  // The same seeds see the same walks: the curve at 20,000 steps is the runs' result, to the bit.
  std::size_t matched = 0;
  for (const auto& row : curve.rows) {
    if (row[4] != "20000" || row[1] == "0.8") continue;  // --quick runs no trace at λ = 0.8
    const auto& same = find_row(summary, row[0], row[1], row[2]);
    CHECK(row[5] == same[5]);
    CHECK(row[8] == same[8]);
    ++matched;
  }
  CHECK(matched == 3);
}

TEST_CASE("the figures are valid PNG files, each with an SVG beside it") {
  for (const char* name : {"td_random_walk", "td_random_walk_curve"}) {
    INFO(name);
    const std::string png = memtrace::test::slurp(quick_run() / (std::string(name) + ".png"));
    REQUIRE(png.size() > 1000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    CHECK(png.compare(12, 4, "IHDR") == 0);
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(png[i]); };
    const unsigned width = byte(16) << 24 | byte(17) << 16 | byte(18) << 8 | byte(19);
    CHECK(width >= 800);
    CHECK(png.compare(png.size() - 8, 4, "IEND") == 0);
    const std::string svg = memtrace::test::slurp(quick_run() / (std::string(name) + ".svg"));
    CHECK(svg.starts_with("<?xml"));
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("</svg>") != std::string::npos);
  }
  // Figure 4 states how wide its confidence bands are, computed from figure.csv.
  CHECK(memtrace::test::slurp(quick_run() / "td_random_walk.svg").find("95% confidence bands") != std::string::npos);
}

TEST_CASE("an interrupted experiment resumes where it stopped, with the same numbers on one thread") {
  const memtrace::test::TempDir dir("td_random_walk_resume");
  const fs::path out = dir / "resumed";
  fs::create_directories(out);
  fs::copy_file(quick_run() / "experiment.txt", out / "experiment.txt");
  // The first 100 rows and half of the next, as a crash would leave them.
  const std::string all = memtrace::test::slurp(quick_run() / "runs.csv");
  std::size_t end = 0;
  for (int line = 0; line < 101; ++line) end = all.find('\n', end) + 1;
  {
    std::ofstream partial(out / "runs.csv", std::ios::binary);
    partial << all.substr(0, end) << all.substr(end, 10);
  }
  REQUIRE(run_program(out, "--quick --threads 1 --no-plot") == 0);
  CHECK(memtrace::test::slurp(out / "summary.csv") == memtrace::test::slurp(quick_run() / "summary.csv"));
  CHECK(read_csv(out / "runs.csv").rows.size() == read_csv(quick_run() / "runs.csv").rows.size());
  const std::string log = memtrace::test::slurp(out / "log.txt");
  INFO(log);
  // A second run finds everything done and changes nothing.
  const std::string runs_before = memtrace::test::slurp(out / "runs.csv");
  REQUIRE(run_program(out, "--quick --threads 1 --no-plot") == 0);
  CHECK(memtrace::test::slurp(out / "runs.csv") == runs_before);
}

/// The lines of a file, sorted: the rows of a results file whatever order the runs finished in.
std::vector<std::string> sorted_lines(const fs::path& path) {
  std::istringstream in(memtrace::test::slurp(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_CASE("a sweep killed with SIGKILL while it writes resumes to the files of a sweep never killed") {
  const memtrace::test::TempDir dir("td_random_walk_kill");
  // 24 seeds: about a second on two cores, long enough to be killed halfway.
  const std::string flags = "--quick --seeds 24 --steps 50000 --threads 2 --no-plot";
  REQUIRE(run_program(dir / "whole", flags) == 0);
  const fs::path killed = dir / "killed";
  fs::create_directories(killed);
  const pid_t pid =
      memtrace::test::spawn_program(program(), flags + " --out " + killed.string(), killed / "killed.log");
  const std::size_t all_rows = memtrace::test::count_lines(dir / "whole" / "runs.csv");
  CHECK(memtrace::test::kill_when(pid, [&] { return memtrace::test::count_lines(killed / "runs.csv") > 40; }));
  const std::size_t rows = memtrace::test::count_lines(killed / "runs.csv");
  INFO("killed with " << rows << " of " << all_rows << " lines of runs.csv written");
  CHECK(rows < all_rows);
  REQUIRE(run_program(killed, flags) == 0);
  CHECK(sorted_lines(killed / "runs.csv") == sorted_lines(dir / "whole" / "runs.csv"));
  for (const char* file : {"summary.csv", "figure.csv"})
    CHECK(memtrace::test::slurp(killed / file) == memtrace::test::slurp(dir / "whole" / file));
  // --stop-after N: N units, exit status 3, no summary; the same command without it does the rest.
  const fs::path stopped = dir / "stopped";
  CHECK(run_program(stopped, flags + " --stop-after 5") == 3);
  CHECK_FALSE(fs::exists(stopped / "summary.csv"));
  // Seed 0's first five units, seed by seed: the traces (3 rows), then windows of 1, 2, 3 and the
  // concatenation of 1 (5 step sizes each): 23 rows under the header.
  CHECK(memtrace::test::count_lines(stopped / "runs.csv") == 24);
  CHECK_THAT(memtrace::test::slurp(stopped / "log.txt"), Catch::Contains("stopped after 5 runs"));
  REQUIRE(run_program(stopped, flags) == 0);
  for (const char* file : {"summary.csv", "figure.csv"})
    CHECK(memtrace::test::slurp(stopped / file) == memtrace::test::slurp(dir / "whole" / file));
}

TEST_CASE("the sweep split into 3 shards and merged writes the single-machine summary, byte for byte") {
  const memtrace::test::TempDir dir("td_random_walk_shards");
  const std::string shards[] = {(dir / "s0").string(), (dir / "s1").string(), (dir / "s2").string()};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(run_program(shards[i], "--quick --no-plot --threads 2 --shard " + std::to_string(i) + "/3") == 0);
    CHECK(memtrace::test::slurp(fs::path(shards[i]) / "shard.txt") == "shard=" + std::to_string(i) + "/3\n");
    CHECK(memtrace::test::slurp(fs::path(shards[i]) / "experiment.txt") ==
          memtrace::test::slurp(quick_run() / "experiment.txt"));
    CHECK_FALSE(fs::exists(fs::path(shards[i]) / "summary.csv"));  // a shard has not seen every seed
  }
  // Units (group, seed) 0..55 round robin: 19, 19 and 18 units, every group in every shard.
  CHECK(read_csv(fs::path(shards[0]) / "runs.csv").rows.size() +
            read_csv(fs::path(shards[1]) / "runs.csv").rows.size() +
            read_csv(fs::path(shards[2]) / "runs.csv").rows.size() ==
        read_csv(quick_run() / "runs.csv").rows.size());

  const fs::path merged = dir / "merged";
  REQUIRE(run_program(merged, "--quick --threads 2 --merge " + shards[2] + " " + shards[0] + " " + shards[1]) == 0);
  CHECK(memtrace::test::slurp(merged / "summary.csv") == memtrace::test::slurp(quick_run() / "summary.csv"));
  CHECK(memtrace::test::slurp(merged / "figure.csv") == memtrace::test::slurp(quick_run() / "figure.csv"));
  CHECK(memtrace::test::slurp(merged / "experiment.txt") == memtrace::test::slurp(quick_run() / "experiment.txt"));
  CHECK(sorted_lines(merged / "runs.csv") == sorted_lines(quick_run() / "runs.csv"));
  CHECK(fs::exists(merged / "td_random_walk.png"));
  CHECK_FALSE(fs::exists(merged / "shard.txt"));
  // What produced each shard: its provenance.txt, under a line naming the shard and its folder.
  for (int i = 0; i < 3; ++i) {
    INFO("shard " << i);
    const fs::path copy = merged / ("provenance-shard-" + std::to_string(i) + ".txt");
    REQUIRE(fs::exists(copy));
    CHECK(memtrace::test::slurp(copy) == "# provenance.txt of shard " + std::to_string(i) + "/3, from " + shards[i] +
                                             "\n" + memtrace::test::slurp(fs::path(shards[i]) / "provenance.txt"));
  }
  CHECK_THAT(memtrace::test::slurp(merged / "provenance.txt"), Catch::Contains("--merge " + shards[2]));

  using Catch::Contains;
  // A merge missing a shard names the first missing run and the absent shard, and writes nothing.
  const fs::path missing = dir / "missing";
  CHECK(run_program(missing, "--quick --no-plot --merge " + shards[0] + " " + shards[2]) != 0);
  CHECK_THAT(memtrace::test::slurp(missing / "log.txt"),
             Contains("runs are in none of the folders, the first being (memory=trace, param=0, alpha=0.02, seed=1)") &&
                 Contains("no folder holds shard 1/3"));
  CHECK_FALSE(fs::exists(missing / "experiment.txt"));
  CHECK_FALSE(fs::exists(missing / "summary.csv"));
  // A run in two folders (the single-machine folder holds every run of shard 1 too).
  const fs::path doubled = dir / "doubled";
  CHECK(run_program(doubled, "--quick --no-plot --merge " + quick_run().string() + " " + shards[1]) != 0);
  CHECK_THAT(memtrace::test::slurp(doubled / "log.txt"),
             Contains("is in both") && Contains("(the whole sweep) and ") && Contains("(shard 1/3)"));
  // Shards of another experiment: the description compared is the experiment's, not the shard's.
  const fs::path foreign = dir / "foreign";
  CHECK(run_program(foreign,
                    "--quick --no-plot --steps 1000 --merge " + shards[0] + " " + shards[1] + " " + shards[2]) != 0);
  CHECK_THAT(memtrace::test::slurp(foreign / "log.txt"),
             Contains("describes a different experiment") && Contains("steps=1000"));
  // A shard's folder holds that shard only.
  CHECK(run_program(shards[0], "--quick --no-plot --shard 1/3") != 0);
  CHECK_THAT(memtrace::test::slurp(fs::path(shards[0]) / "log.txt"), Contains("holds runs of shard 0/3"));
  CHECK(run_program(merged, "--quick --no-plot --shard 1/3") != 0);
  CHECK_THAT(memtrace::test::slurp(merged / "log.txt"), Contains("holds runs of the whole sweep"));
}

TEST_CASE("a results folder of another experiment is refused, and bad flags are named") {
  const memtrace::test::TempDir dir("td_random_walk_refuse");
  const fs::path out = dir / "other";
  fs::create_directories(out);
  fs::copy_file(quick_run() / "experiment.txt", out / "experiment.txt");
  CHECK(run_program(out, "--quick --steps 1000 --no-plot") != 0);
  CHECK_THAT(memtrace::test::slurp(out / "log.txt"),
             Catch::Contains("describes a different experiment") && Catch::Contains("steps=1000"));
  CHECK_FALSE(fs::exists(out / "runs.csv"));

  // A folder with results but no experiment.txt may hold another experiment's runs.
  const fs::path unknown = dir / "unknown";
  fs::create_directories(unknown);
  fs::copy_file(quick_run() / "runs.csv", unknown / "runs.csv");
  CHECK(run_program(unknown, "--quick --no-plot") != 0);
  CHECK_THAT(memtrace::test::slurp(unknown / "log.txt"), Catch::Contains("runs.csv exists but"));
  CHECK_FALSE(fs::exists(unknown / "experiment.txt"));

  // Each bad flag in its own folder, so that every message is checked on its own.
  const auto refused = [&](const std::string& name, const std::string& arguments) {
    const fs::path bad = dir / name;
    CHECK(run_program(bad, arguments) != 0);
    CHECK_FALSE(fs::exists(bad / "experiment.txt"));
    return memtrace::test::slurp(bad / "log.txt");
  };
  using Catch::Contains;
  CHECK_THAT(refused("lambda", "--lambdas 0.5 1.5"), Contains("--lambdas: value 1.5 must be in [0, 1)"));
  CHECK_THAT(refused("lambda_nan", "--lambdas nan"), Contains("--lambdas: value nan must be in [0, 1)"));
  CHECK_THAT(refused("alpha", "--alphas -0.1"), Contains("--alphas: value -0.1 must be positive and finite"));
  CHECK_THAT(refused("alpha_zero", "--alphas 0"), Contains("--alphas: value 0 must be positive"));
  CHECK_THAT(refused("trace_alpha", "--trace-alpha inf"), Contains("--trace-alpha: value inf must be positive"));
  CHECK_THAT(refused("seeds", "--seeds 1"), Contains("--seeds: value 1 must be an integer in [2, 10^6]"));
  // A sweep that cannot be held in memory is refused at the flag, not by the allocator.
  CHECK_THAT(refused("seeds_huge", "--seeds 1000000000000"),
             Contains("--seeds: value 1000000000000 must be an integer in [2, 10^6]"));
  CHECK_THAT(refused("windows", "--windows 0"), Contains("--windows: value 0 must be in 1..6"));
  CHECK_THAT(refused("discount", "--discount 1"), Contains("--discount: value 1 must be in [0, 1)"));
  CHECK_THAT(refused("threads", "--threads -1"), Contains("--threads: value -1 must be in [0, 1024]"));
  CHECK_THAT(refused("no_lambdas", "--lambdas"), Contains("--lambdas"));
  CHECK_THAT(refused("curve", "--curve --steps 5000 --curve-steps 2000"),
             Contains("td_random_walk: --curve-steps (2000) must be at least --steps (5000)"));
  CHECK_THAT(refused("shard_index", "--shard 3/3"),
             Contains("td_random_walk: --shard: I must be below N") && Contains("\"3/3\""));
  CHECK_THAT(refused("shard_count", "--shard 0/0"),
             Contains("td_random_walk: --shard: N must be at least 1, got \"0/0\""));
  CHECK_THAT(refused("shard_text", "--shard 1-3"), Contains("td_random_walk: --shard: expected I/N"));
  CHECK_THAT(refused("shard_merge", "--shard 0/2 --merge a b"),
             Contains("td_random_walk: --shard and --merge cannot be combined"));
  CHECK_THAT(refused("shard_curve", "--curve --shard 0/2"),
             Contains("td_random_walk: --curve cannot be combined with --shard"));
  CHECK_THAT(refused("merge_empty", "--merge"), Contains("--merge"));
  // --out naming a file (run_program's --out is a folder, so the program is run here directly).
  const fs::path file = dir / "a_file";
  std::ofstream(file) << "not a folder\n";
  const fs::path log = dir / "a_file_log.txt";
  const int status = std::system((program() + " --out " + file.string() + " >" + log.string() + " 2>&1").c_str());
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) != 0));
  CHECK_THAT(memtrace::test::slurp(log), Contains("is a file, not a folder"));
  CHECK(memtrace::test::slurp(file) == "not a folder\n");
}

TEST_CASE(
    "every results folder records what produced it, and a folder of another version is resumed only when allowed") {
  const std::string text = memtrace::test::slurp(quick_run() / "provenance.txt");
  CHECK_THAT(text, Catch::Contains("memtrace=" + std::string(memtrace::version_string) + "\n") &&
                       Catch::Contains("\ncompiler=") && Catch::Contains("\nbuild_type=") &&
                       Catch::Contains("\ncommand=" + program() + " --out ") && Catch::Contains("--quick --curve"));

  const memtrace::test::TempDir dir("td_random_walk_provenance");
  const fs::path version = dir / "version";
  CHECK(run_program(version, "--version") == 0);
  CHECK_THAT(memtrace::test::slurp(version / "log.txt"),
             Catch::Contains("td_random_walk (memtrace " + std::string(memtrace::version_string) + ")") &&
                 Catch::Contains("\ncompiler "));
  CHECK_FALSE(fs::exists(version / "provenance.txt"));

  // A folder of an older version: refused before any run, then resumed with --allow-version-change.
  const fs::path old = dir / "old";
  fs::create_directories(old);
  fs::copy_file(quick_run() / "experiment.txt", old / "experiment.txt");
  { std::ofstream(old / "provenance.txt") << "[2026-01-01T00:00:00Z]\nmemtrace=0.0.1\n"; }
  CHECK(run_program(old, "--quick --no-plot") != 0);
  CHECK_THAT(memtrace::test::slurp(old / "log.txt"), Catch::Contains("written by memtrace 0.0.1"));
  CHECK_FALSE(fs::exists(old / "runs.csv"));
  fs::copy_file(quick_run() / "runs.csv", old / "runs.csv");  // every run done: only the summary is written
  CHECK(run_program(old, "--quick --no-plot --threads 2 --allow-version-change") == 0);
  CHECK(memtrace::provenance_versions(old) == std::vector<std::string>{"0.0.1", std::string(memtrace::version_string)});
  CHECK(memtrace::test::slurp(old / "summary.csv") == memtrace::test::slurp(quick_run() / "summary.csv"));
}
