// The example program examples/pomdp_memory, run on the test problems as a user runs it, and its
// files checked: the columns of results.csv, one row per problem, memory and parameter, finite
// value errors, the optimal estimator never worse than the TD fixed point, the optimal VE of full
// windows non-increasing in m, the figures; and flags refused with their name. ctest passes the
// program's path in MEMTRACE_POMDP_MEMORY and the data folder in MEMTRACE_TEST_DATA_DIR.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memtrace/experiment/results.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.hpp"

namespace {

using memtrace::CsvTable;
using memtrace::parse_field;
using memtrace::read_csv;
namespace fs = std::filesystem;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE(value != nullptr);
  return value;
}

/// Runs the program with these arguments; returns its exit code. Output goes to out/log.txt.
int run_program(const fs::path& out, const std::string& arguments) {
  fs::create_directories(out);
  const std::string command = environment("MEMTRACE_POMDP_MEMORY") + " --out " + out.string() + " " + arguments +
                              " >>" + (out / "log.txt").string() + " 2>&1";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

std::string data(const char* name) { return (fs::path(environment("MEMTRACE_TEST_DATA_DIR")) / name).string(); }

const fs::path& default_run() {
  static const memtrace::test::TempDir dir("pomdp_memory_test");
  static const fs::path out = dir / "run";
  static const bool done = [] {
    REQUIRE(run_program(out, data("tiger.pomdp") + " " + data("grid4x3.pomdp")) == 0);
    return true;
  }();
  (void)done;
  return out;
}

}  // namespace

TEST_CASE("results.csv: the columns, one row per problem, memory and parameter, consistent value errors") {
  const CsvTable table = read_csv(default_run() / "results.csv");
  REQUIRE(table.header ==
          std::vector<std::string>{"problem", "memory", "parameter", "ve_optimal", "ve_td_fixed_point"});
  // Default: 12 λ, windows and frame stacks of m = 1..6 (tiger's 3^6 and grid4x3's 7^6 fit the budget).
  REQUIRE(table.rows.size() == 2 * (12 + 6 + 6));
  std::set<std::vector<std::string>> keys;
  std::map<std::string, std::map<std::string, std::size_t>> count;
  std::map<std::string, std::vector<double>> window_ve;
  for (const auto& row : table.rows) {
    REQUIRE(row.size() == 5);
    INFO(row[0] << " " << row[1] << " " << row[2]);
    CHECK(keys.insert({row[0], row[1], row[2]}).second);
    ++count[row[0]][row[1]];
    const double optimal = parse_field<double>(row[3]), td = parse_field<double>(row[4]);
    CHECK(std::isfinite(optimal));
    CHECK(std::isfinite(td));
    CHECK(optimal >= -1e-9);
    CHECK(optimal <= td + 1e-9 * (1.0 + std::abs(td)));
    if (row[1] == "window") {
      CHECK(parse_field<std::size_t>(row[2]) == window_ve[row[0]].size() + 1);  // m = 1, 2, ... in order
      window_ve[row[0]].push_back(optimal);
    }
  }
  for (const char* problem : {"tiger", "grid4x3"}) {
    CHECK(count[problem]["trace"] == 12);
    CHECK(count[problem]["window"] == 6);
    CHECK(count[problem]["concat"] == 6);
    const auto& ve = window_ve[problem];
    for (std::size_t m = 1; m < ve.size(); ++m) CHECK(ve[m] <= ve[m - 1] + 1e-9 * (1.0 + ve[m - 1]));
    CHECK(fs::exists(default_run() / (std::string(problem) + ".csv")));
  }
}

TEST_CASE("a file written with six decimals (rows summing to 0.999999, 1.000009, 0.999991) is analysed") {
  static const memtrace::test::TempDir dir("pomdp_memory_rounded");
  const fs::path out = dir / "run";
  REQUIRE(run_program(out, data("rounded.pomdp") + " --no-plot --lambdas 0,0.5,0.9 --max-window 3") == 0);
  const CsvTable table = read_csv(out / "results.csv");
  REQUIRE(table.rows.size() == 3 + 3 + 3);
  for (const auto& row : table.rows) {
    INFO(row[1] << " " << row[2]);
    CHECK(std::isfinite(parse_field<double>(row[3])));
    CHECK(std::isfinite(parse_field<double>(row[4])));
  }
}

TEST_CASE("the figures are PNG files") {
  for (const char* name : {"tiger.png", "grid4x3.png"}) {
    INFO(name);
    const std::string png = memtrace::test::slurp(default_run() / name);
    REQUIRE(png.size() > 1000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  }
}

TEST_CASE("flags: a given policy and γ are used, bad values are refused with the flag named") {
  static const memtrace::test::TempDir dir("pomdp_memory_flags");
  const std::string tiger = data("tiger.pomdp");
  const auto refused = [&](const std::string& name, const std::string& arguments, const std::string& flag) {
    const fs::path out = dir / name;
    CHECK(run_program(out, tiger + " --no-plot " + arguments) != 0);
    CHECK_THAT(memtrace::test::slurp(out / "log.txt"), Catch::Matchers::Contains(flag));
  };
  refused("actions_count", "--actions 0.5,0.5", "--actions");
  refused("actions_sum", "--actions 0.5,0.5,0.5", "--actions");
  refused("actions_negative", "--actions -0.5,1,0.5", "--actions");
  refused("discount", "--discount 1", "--discount");
  refused("lambdas", "--lambdas 0.5,1", "--lambdas");
  refused("max_window", "--max-window 0", "--max-window");
  refused("max_table", "--max-table 0", "--max-table");
  refused("steps", "--learn --steps 0", "--steps");
  refused("seeds", "--learn --seeds 0", "--seeds");
  refused("alphas", "--learn --alphas 0.1,2", "--alphas");
  refused("missing", data("missing.pomdp"), "missing.pomdp");

  const fs::path out = dir / "given";
  REQUIRE(run_program(out, tiger + " --no-plot --actions 0.6,0.3,0.1 --discount 0.5 --lambdas 0,0.5 --max-window 2") ==
          0);
  const CsvTable table = read_csv(out / "results.csv");
  REQUIRE(table.rows.size() == 2 + 2 + 2);
  CHECK_FALSE(fs::exists(out / "tiger.png"));
  // Opening the left door more often than the right makes the tiger's side matter: the memoryless
  // estimate has a positive value error, and remembering one more observation lowers it.
  CHECK(table.rows[2][1] == "window");
  const double m1 = parse_field<double>(table.rows[2][3]), m2 = parse_field<double>(table.rows[3][3]);
  CHECK(m1 > 1.0);
  CHECK(m2 < m1);
}

TEST_CASE("--learn: one row per memory and step size, no learned weights better than the optimum") {
  static const memtrace::test::TempDir dir("pomdp_memory_learn");
  const fs::path out = dir / "learn";
  REQUIRE(run_program(out, data("grid4x3.pomdp") +
                               " --no-plot --learn --steps 3000 --seeds 2 --alphas 0.01,0.1 --lambdas 0,0.5 "
                               "--max-window 2") == 0);
  const CsvTable exact = read_csv(out / "results.csv");
  const CsvTable learned = read_csv(out / "learn.csv");
  REQUIRE(learned.header == std::vector<std::string>{"problem", "memory", "parameter", "alpha", "seeds", "steps",
                                                     "ve_mean", "ve_ci_low", "ve_ci_high"});
  REQUIRE(exact.rows.size() == 2 + 2 + 2);
  REQUIRE(learned.rows.size() == 2 * exact.rows.size());
  std::map<std::pair<std::string, std::string>, double> optimum;
  for (const auto& row : exact.rows) optimum[{row[1], row[2]}] = parse_field<double>(row[3]);
  for (const auto& row : learned.rows) {
    INFO(row[1] << " " << row[2] << " " << row[3]);
    CHECK(row[4] == "2");
    CHECK(row[5] == "3000");
    const double mean = parse_field<double>(row[6]);
    REQUIRE(optimum.count({row[1], row[2]}) == 1);
    CHECK(std::isfinite(mean));
    CHECK(mean >= optimum[{row[1], row[2]}] - 1e-12);
    CHECK(parse_field<double>(row[7]) <= mean);
    CHECK(mean <= parse_field<double>(row[8]));
  }
  CHECK_THAT(memtrace::test::slurp(out / "log.txt"), Catch::Matchers::Contains("VE TD learned"));
}
