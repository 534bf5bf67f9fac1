// The experiment program examples/ppo_pendulum, run as a user runs it and its files checked: --quick
// (the velocity hidden, normalised traces against the memoryless agent, 3 seeds) writes the CSV files
// of the documented contract, the traces recover what no memoryless policy can, and a re-run resumes
// without redoing a run; --play prints the documented line per step, equal to Gymnasium's equations;
// bad flags are refused naming the flag. ctest passes the program's path in MEMTRACE_PPO_PENDULUM.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/experiment/results.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "spawn.hpp"
#include "temp_dir.hpp"

namespace {

// Under AddressSanitizer the networks run ~10x slower: the quick sweep then takes 16 updates a run
// (the file contracts and resumption are checked all the same); whether learning happens is checked
// by the builds without sanitizers.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif
// 16,384 steps: 1,024 per environment, so that an episode (200 steps) ends in the last tenth of
// training, which train_return averages.
const std::string quick_flags = sanitized ? "--quick --steps 16384 --threads 2 " : "--quick --threads 2 ";

using memtrace::CsvTable;
using memtrace::parse_field;
using memtrace::read_csv;
namespace fs = std::filesystem;

std::string program() {
  const char* path = std::getenv("MEMTRACE_PPO_PENDULUM");
  REQUIRE(path != nullptr);
  return path;
}

/// Runs the program with these arguments, stdout to `log` (stderr to log + ".err").
int run_program(const std::string& arguments, const fs::path& log) {
  const std::string command = program() + " " + arguments + " >" + log.string() + " 2>" + log.string() + ".err";
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::istringstream in(read_text(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

const memtrace::test::TempDir& temp() {
  static const memtrace::test::TempDir dir("ppo_pendulum_test");
  return dir;
}

/// The folder of the sweep `flags` describe, run once into temp()/name and shared by the test cases.
const fs::path& sweep_once(const std::string& name, const std::string& flags) {
  static std::map<std::string, fs::path> done;
  if (const auto it = done.find(name); it != done.end()) return it->second;
  const fs::path out = temp() / name;
  REQUIRE(run_program(flags + "--out " + out.string(), temp() / (name + ".log")) == 0);
  return done.emplace(name, out).first->second;
}

/// The quick experiment.
const fs::path& quick_run() { return sweep_once("quick", quick_flags + "--no-plot "); }

/// The line --play prints for a pendulum after a step.
std::string line_of(std::size_t t, const memtrace::Pendulum& env, double reward, bool truncated) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "t=%zu theta=%.9g theta_dot=%.9g reward=%.9g truncated=%d", t, env.angle(),
                env.angular_velocity(), reward, truncated ? 1 : 0);
  return buffer;
}

}  // namespace

TEST_CASE("ppo_pendulum --play prints one documented line a step, Gymnasium's numbers") {
  // From θ = 1, θ̇ = 0.5 with torque 1.5, by hand from Gymnasium's equations (NumPy float64):
  // θ' = 1.0678051619302962, θ̇' = 1.3561032386059226, reward −1.02725.
  REQUIRE(run_program("--play=1.5 --start=1,0.5", temp() / "one.log") == 0);
  CHECK(lines_of(temp() / "one.log") ==
        std::vector<std::string>{"t=1 theta=1.06780516 theta_dot=1.35610324 reward=-1.02725 truncated=0"});

  // Negative numbers, torques beyond the box, and the replay stops at truncation after 200 steps.
  std::string torques = "-3";
  for (int t = 1; t < 230; ++t) torques += "," + std::to_string(std::sin(t) * 2.5);
  REQUIRE(run_program("--play=" + torques + " --start=-3.1,-0.2", temp() / "long.log") == 0);
  const std::vector<std::string> lines = lines_of(temp() / "long.log");
  REQUIRE(lines.size() == 200);
  memtrace::Pendulum env;
  env.reset(-3.1, -0.2);
  std::istringstream list(torques);
  std::string u;
  for (std::size_t t = 1; t <= 200; ++t) {
    std::getline(list, u, ',');
    const auto step = env.step(std::stod(u));
    REQUIRE(lines[t - 1] == line_of(t, env, step.reward, step.truncated));
  }
  CHECK(lines.back().ends_with("truncated=1"));

  // Refusals name the flag.
  CHECK(run_program("--play=1,x", temp() / "bad.log") == 1);
  CHECK(read_text(temp() / "bad.log.err").find("--play must be comma-separated finite numbers") != std::string::npos);
  CHECK(run_program("--play=1 --start=1", temp() / "bad.log") == 1);
  CHECK(read_text(temp() / "bad.log.err").find("--start takes THETA,THETA_DOT") != std::string::npos);
  CHECK(run_program("--play=1 --start=0,9", temp() / "bad.log") == 1);
  CHECK(read_text(temp() / "bad.log.err").find("theta_dot must be finite and in [-8, 8], got 9") != std::string::npos);
  CHECK(run_program("--start=0,1", temp() / "bad.log") == 1);
  CHECK(read_text(temp() / "bad.log.err").find("--start is the start of --play") != std::string::npos);
}

TEST_CASE("ppo_pendulum --quick writes runs.csv, curves.csv, summary.csv and learning_curves.csv as documented") {
  const CsvTable runs = read_csv(quick_run() / "runs.csv");
  CHECK(runs.header == std::vector<std::string>{"observation", "memory", "seed", "steps", "train_return", "eval_return",
                                                "greedy_return", "seconds", "cpu_seconds"});
  REQUIRE(runs.rows.size() == 2 * 3);
  for (const auto& row : runs.rows) {
    CHECK(row[0] == "hidden");
    CHECK((row[1] == "traces+norm" || row[1] == "memoryless+norm"));
    for (const char* c : {"train_return", "eval_return", "greedy_return"}) {
      const double x = parse_field<double>(row[runs.column(c)]);
      CHECK(x <= 0.0);
      CHECK(x >= 200 * memtrace::Pendulum::min_reward);
    }
    CHECK(parse_field<double>(row[runs.column("cpu_seconds")]) > 0.0);
  }
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  CHECK(summary.header == std::vector<std::string>{"observation", "memory", "seeds", "steps", "train_mean",
                                                   "train_ci_low", "train_ci_high", "eval_mean", "eval_ci_low",
                                                   "eval_ci_high", "greedy_mean", "greedy_ci_low", "greedy_ci_high",
                                                   "gap_closed", "gap_ci_low", "gap_ci_high", "cpu_seconds"});
  REQUIRE(summary.rows.size() == 3);  // two memories and the random policy
  CHECK(summary.rows[2][1] == "random");
  const double random = parse_field<double>(summary.rows[2][summary.column("train_mean")]);
  CHECK(random < -1000);  // the random policy's return is about −1,200
  CHECK(random > -1400);
  // The summary's means are the runs' means.
  for (std::size_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (const auto& run : runs.rows)
      if (run[1] == summary.rows[r][1]) sum += parse_field<double>(run[runs.column("train_return")]);
    CHECK(parse_field<double>(summary.rows[r][summary.column("train_mean")]) == Approx(sum / 3).epsilon(1e-12));
  }
  const CsvTable curves = read_csv(quick_run() / "learning_curves.csv");
  CHECK(curves.header ==
        std::vector<std::string>{"observation", "memory", "at_steps", "seeds_with_episodes", "mean_return"});
  CHECK(!curves.rows.empty());
}

TEST_CASE("ppo_pendulum --quick: with the velocity hidden, traces learn what the memoryless agent cannot") {
  if (sanitized) return;  // a few updates a run under the sanitizers: nothing is learned yet
  const CsvTable summary = read_csv(quick_run() / "summary.csv");
  const auto mean = [&](const char* memory) {
    for (const auto& row : summary.rows)
      if (row[1] == memory) return parse_field<double>(row[summary.column("train_mean")]);
    FAIL("no row for " << memory);
    return 0.0;
  };
  // Calibration (docs/experiments.md; GCC 12, the default preset's program, bootstrapped time
  // limits): over base seeds 0-9 (--seed, 3 seeds each) the traces' mean return exceeded the
  // memoryless agent's by 770 to 848 (the traces −282 to −212, memoryless −1,065 to −1,033); a
  // random policy gets about −1,218.
  INFO("traces " << mean("traces+norm") << ", memoryless " << mean("memoryless+norm"));
  CHECK(mean("traces+norm") > mean("memoryless+norm") + 400);
}

TEST_CASE("ppo_pendulum --quick resumes: a re-run finds every run done and writes the same files") {
  const std::string runs = read_text(quick_run() / "runs.csv"), summary = read_text(quick_run() / "summary.csv");
  REQUIRE(run_program(quick_flags + "--no-plot --out " + quick_run().string(), temp() / "again.log") == 0);
  CHECK(read_text(quick_run() / "runs.csv") == runs);
  CHECK(read_text(quick_run() / "summary.csv") == summary);
  // Another experiment's flags are refused before the folder changes.
  CHECK(run_program(quick_flags + "--no-plot --lr 0.001 --out " + quick_run().string(), temp() / "other.log") != 0);
  CHECK(read_text(quick_run() / "runs.csv") == runs);
}

TEST_CASE(
    "ppo_pendulum --truncation: bootstrap by default, recorded in experiment.txt, --textbook-truncation its alias, "
    "and official and cut learn from other targets") {
  CHECK_THAT(read_text(quick_run() / "experiment.txt"), Catch::Contains("\ntruncation=bootstrap\n"));
  // 16 updates of 16 x 64 steps: episodes are truncated every 200 steps, one in the last tenth.
  const std::string flags = "--quick --seeds 2 --memories traces+norm --steps 16384 --no-plot --threads 2 ";
  std::map<std::string, std::vector<std::string>> returns;  // train, eval and greedy returns by flag
  for (const std::string mode :
       {"--truncation bootstrap", "--textbook-truncation", "--truncation official", "--truncation cut"}) {
    const fs::path out = temp() / ("truncation" + std::to_string(returns.size()));
    REQUIRE(run_program(flags + mode + " --out " + out.string(), temp() / "truncation.log") == 0);
    const std::string name = mode == "--textbook-truncation" ? "bootstrap" : mode.substr(mode.find(' ') + 1);
    CHECK_THAT(read_text(out / "experiment.txt"), Catch::Contains("\ntruncation=" + name + "\n"));
    CsvTable runs = read_csv(out / "runs.csv");
    REQUIRE(runs.rows.size() == 2);
    std::sort(runs.rows.begin(), runs.rows.end());  // by seed: the threads finish in any order
    for (const auto& row : runs.rows) returns[mode].insert(returns[mode].end(), row.begin() + 4, row.begin() + 7);
    if (mode == "--truncation official") {  // a folder of another truncation is refused, unchanged
      const std::string before = read_text(out / "runs.csv");
      CHECK(run_program(flags + "--truncation cut --out " + out.string(), temp() / "refused.log") != 0);
      CHECK(read_text(out / "runs.csv") == before);
    }
  }
  CHECK(returns["--textbook-truncation"] == returns["--truncation bootstrap"]);
  CHECK(returns["--truncation official"] != returns["--truncation bootstrap"]);
  CHECK(returns["--truncation cut"] != returns["--truncation bootstrap"]);
  CHECK(returns["--truncation cut"] != returns["--truncation official"]);
  CHECK(run_program("--truncation textbooks", temp() / "bad_truncation.log") != 0);
  CHECK_THAT(read_text(temp() / "bad_truncation.log.err"), Catch::Contains("--truncation"));
  CHECK(run_program("--truncation cut --textbook-truncation", temp() / "both_truncations.log") != 0);
  CHECK_THAT(read_text(temp() / "both_truncations.log.err"), Catch::Contains("--textbook-truncation"));
}

TEST_CASE(
    "ppo_pendulum --target-kl, --normalize-rewards and --clip-value-loss run and are written to experiment.txt, and "
    "only when given") {
  const std::string quick = read_text(quick_run() / "experiment.txt");
  for (const char* absent : {"target_kl=", "normalize_rewards=", "clip_value_loss=", "adam_eps="})
    CHECK_THAT(quick, !Catch::Contains(absent));
  const fs::path out = temp() / "recipe_options";
  REQUIRE(run_program("--quick --seeds 2 --memories traces+norm --steps 16384 --no-plot --threads 2 --target-kl 0.02 "
                      "--normalize-rewards --clip-value-loss --out " +
                          out.string(),
                      temp() / "recipe_options.log") == 0);
  const std::string experiment = read_text(out / "experiment.txt");
  CHECK_THAT(experiment, Catch::Contains("\ntarget_kl=0.02\n") && Catch::Contains("\nclip_value_loss=1\n") &&
                             Catch::Contains("\nnormalize_rewards=1\n"));
  // The same runs without the options learn otherwise.
  const fs::path plain = temp() / "recipe_options_plain";
  REQUIRE(run_program(
              "--quick --seeds 2 --memories traces+norm --steps 16384 --no-plot --threads 2 --out " + plain.string(),
              temp() / "recipe_options_plain.log") == 0);
  CsvTable runs = read_csv(out / "runs.csv"), plain_runs = read_csv(plain / "runs.csv");
  REQUIRE(runs.rows.size() == 2);
  REQUIRE(plain_runs.rows.size() == 2);
  std::sort(runs.rows.begin(), runs.rows.end());
  std::sort(plain_runs.rows.begin(), plain_runs.rows.end());
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(std::isfinite(parse_field<double>(runs.rows[r][runs.column("train_return")])));
    CHECK(runs.rows[r][runs.column("train_return")] != plain_runs.rows[r][runs.column("train_return")]);
  }
  CHECK(run_program("--target-kl -1", temp() / "bad_target_kl.log") != 0);
  CHECK_THAT(read_text(temp() / "bad_target_kl.log.err"), Catch::Contains("--target-kl"));
}

TEST_CASE(
    "ppo_pendulum's gap closed is (R − R_hidden memoryless) / (R_full − R_hidden memoryless) of the runs, with a "
    "bootstrap interval") {
  const fs::path out = temp() / "gap";
  REQUIRE(run_program("--quick --observations full hidden --memories memoryless+norm traces+norm --seeds 3 --steps "
                      "16384 --no-plot --threads 2 --out " +
                          out.string(),
                      temp() / "gap.log") == 0);
  const CsvTable runs = read_csv(out / "runs.csv");
  const auto mean = [&](const std::string& obs, const std::string& memory) {
    double sum = 0;
    int n = 0;
    for (const auto& row : runs.rows)
      if (row[0] == obs && row[1] == memory) {
        sum += parse_field<double>(row[runs.column("train_return")]);
        ++n;
      }
    REQUIRE(n == 3);
    return sum / n;
  };
  const double floor = mean("hidden", "memoryless+norm");
  const double expected = (mean("hidden", "traces+norm") - floor) / (mean("full", "traces+norm") - floor);
  const CsvTable summary = read_csv(out / "summary.csv");
  bool found = false;
  for (const auto& row : summary.rows) {
    const std::string gap = row[summary.column("gap_closed")];
    if (row[0] == "hidden" && row[1] == "traces+norm") {
      found = true;
      CHECK(parse_field<double>(gap) == Approx(expected).epsilon(1e-12));
      const double low = parse_field<double>(row[summary.column("gap_ci_low")]),
                   high = parse_field<double>(row[summary.column("gap_ci_high")]);
      CHECK(low < high);
      CHECK(low <= parse_field<double>(gap) + 1e-12);
    } else {
      CHECK(gap.empty());  // the memoryless floor and the velocity-observed ceilings have none
    }
  }
  CHECK(found);
  CHECK_THAT(read_text(temp() / "gap.log"),
             Catch::Contains("closing at least 0.9 of the gap (the interval's lower end):"));
  // Resumed, the summary (its intervals too) is written again byte for byte.
  const std::string before = read_text(out / "summary.csv");
  REQUIRE(run_program("--quick --observations full hidden --memories memoryless+norm traces+norm --seeds 3 --steps "
                      "16384 --no-plot --threads 2 --out " +
                          out.string(),
                      temp() / "gap_again.log") == 0);
  CHECK(read_text(out / "summary.csv") == before);
}

TEST_CASE(
    "the stored results folder docs/results/ppo_pendulum reproduces: two of its runs computed again give its rows") {
  if (sanitized) return;  // 1 M steps a run: too slow under the sanitizers
  const char* results = std::getenv("MEMTRACE_RESULTS_DIR");
  REQUIRE(results != nullptr);
  const fs::path stored = fs::path(results) / "ppo_pendulum", copy = temp() / "stored_copy";
  fs::remove_all(copy);
  fs::copy(stored, copy, fs::copy_options::recursive);
  // Two runs (one of each observation) taken out of the copy's runs.csv and curves.csv: resuming
  // computes exactly them again.
  const auto taken = [](const std::string& line) {
    return line.starts_with("hidden,traces+norm,3,") || line.starts_with("full,stack2,7,");
  };
  std::map<std::string, std::vector<std::string>> removed;
  for (const char* file : {"runs.csv", "curves.csv"}) {
    std::string kept;
    for (const std::string& line : lines_of(copy / file))
      if (taken(line))
        removed[file].push_back(line);
      else
        kept += line + "\n";
    std::ofstream(copy / file, std::ios::trunc) << kept;
  }
  REQUIRE(removed["runs.csv"].size() == 2);
  REQUIRE(removed["curves.csv"].size() == 40);
  const int status = run_program("--no-plot --threads 2 --out " + copy.string(), temp() / "stored.log");
  const std::string errors = read_text(temp() / "stored.log.err");
  if (status != 0 && errors.find("instruction set") != std::string::npos) {
    WARN("not reproduced: this build's instruction set is not the stored folder's (" << errors << ")");
    return;
  }
  REQUIRE(status == 0);
  // The recomputed rows equal the stored ones, time columns aside.
  std::vector<std::string> again;
  for (const std::string& line : lines_of(copy / "runs.csv"))
    if (taken(line)) again.push_back(line);
  REQUIRE(again.size() == 2);
  const auto without_times = [](std::string line) { return line.substr(0, line.rfind(',', line.rfind(',') - 1)); };
  std::sort(again.begin(), again.end());
  std::sort(removed["runs.csv"].begin(), removed["runs.csv"].end());
  for (std::size_t i = 0; i < 2; ++i) CHECK(without_times(again[i]) == without_times(removed["runs.csv"][i]));
  std::vector<std::string> curves;
  for (const std::string& line : lines_of(copy / "curves.csv"))
    if (taken(line)) curves.push_back(line);
  std::sort(curves.begin(), curves.end());
  std::sort(removed["curves.csv"].begin(), removed["curves.csv"].end());
  CHECK(curves == removed["curves.csv"]);
  // And the summary, but for its CPU seconds (the last column).
  const auto summary_of = [&](const fs::path& dir) {
    std::vector<std::string> lines;
    for (const std::string& line : lines_of(dir / "summary.csv")) lines.push_back(line.substr(0, line.rfind(',')));
    return lines;
  };
  CHECK(summary_of(copy) == summary_of(stored));
}

namespace {

/// The lines of a CSV file without the columns `drop` (time columns), sorted.
std::vector<std::string> lines_without(const fs::path& path, std::vector<std::size_t> drop) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(path)) {
    std::string kept;
    std::size_t column = 0, begin = 0;
    for (;;) {
      const std::size_t end = std::min(line.find(',', begin), line.size());
      if (std::find(drop.begin(), drop.end(), column) == drop.end())
        kept += (kept.empty() && column == 0 ? "" : ",") + line.substr(begin, end - begin);
      if (end == line.size()) break;
      begin = end + 1;
      ++column;
    }
    out.push_back(kept);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Whether two sweep folders hold the same results, time columns aside.
void check_same_results(const fs::path& a, const fs::path& b) {
  CHECK(lines_without(a / "runs.csv", {7, 8}) == lines_without(b / "runs.csv", {7, 8}));
  CHECK(lines_without(a / "curves.csv", {}) == lines_without(b / "curves.csv", {}));
  CHECK(lines_without(a / "summary.csv", {16}) == lines_without(b / "summary.csv", {16}));
  CHECK(read_text(a / "learning_curves.csv") == read_text(b / "learning_curves.csv"));
}

// 32 updates of 16 x 64 steps a run (16 under AddressSanitizer): long enough to be killed while running.
const std::string small_steps = sanitized ? "16384" : "32768";
const std::string small_settings = "--quick --steps " + small_steps + " --no-plot ";
const std::string small_sweep = small_settings + "--threads 2 ";

const fs::path& small_sweep_run() { return sweep_once("small", small_sweep); }

}  // namespace

TEST_CASE(
    "ppo_pendulum killed with SIGKILL, or stopped after an update, resumes to the files of a sweep never killed") {
  const fs::path killed = temp() / "killed";
  const std::string flags = small_settings + "--checkpoint-every 2 --out " + killed.string();
  // Started as a user starts it (on one thread, so that it runs long enough to be caught), killed as
  // soon as a run has written its first checkpoint.
  const pid_t pid = memtrace::test::spawn_program(program(), flags + " --threads 1", temp() / "killed.log");
  // (the resumed run below takes both cores: the thread count changes no number)
  const bool was_killed = memtrace::test::kill_when(pid, [&] {  // a whole checkpoint, not a temporary file
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(killed / "checkpoints", ignored))
      if (entry.path().extension() == ".safetensors") return true;
    return false;
  });
  CHECK(was_killed);
  REQUIRE(run_program(flags + " --threads 2", temp() / "resumed.log") == 0);
  CHECK_FALSE(fs::exists(killed / "checkpoints"));
  check_same_results(killed, small_sweep_run());

  // --stop-after: every run stops after update 5, after its checkpoint of update 4; all resume.
  const fs::path stopped = temp() / "stopped";
  const std::string stop_flags = small_sweep + "--checkpoint-every 4 --out " + stopped.string();
  CHECK(run_program(stop_flags + " --stop-after 5", temp() / "stopped.log") == 3);
  CHECK(std::distance(fs::directory_iterator(stopped / "checkpoints"), fs::directory_iterator()) == 6);
  CHECK_FALSE(fs::exists(stopped / "summary.csv"));
  CHECK_THAT(read_text(temp() / "stopped.log"), Catch::Contains("6 of them have a checkpoint to resume from"));
  REQUIRE(run_program(stop_flags, temp() / "stopped_resumed.log") == 0);
  check_same_results(stopped, small_sweep_run());
  // Stopped in the last tenth of training (updates 29-32 of 32; 15-16 of 16 under AddressSanitizer)
  // and resumed from the checkpoint of that update: train_return's sums of the last tenth so far
  // travel in the checkpoint.
  const fs::path late = temp() / "late";
  const std::string late_flags = small_sweep + "--checkpoint-every 1 --out " + late.string();
  CHECK(run_program(late_flags + (sanitized ? " --stop-after 15" : " --stop-after 31"), temp() / "late.log") == 3);
  REQUIRE(run_program(late_flags, temp() / "late_resumed.log") == 0);
  check_same_results(late, small_sweep_run());
  // A checkpoint of another run (another seed) is refused, and left in place: its run fails.
  CHECK(run_program(small_sweep + "--checkpoint-every 4 --stop-after 5 --out " + (temp() / "other").string(),
                    temp() / "other_stopped.log") == 3);
  const fs::path a_checkpoint =
      temp() / "other" / "checkpoints" / ("hidden_traces+norm_0_" + small_steps + ".safetensors");
  REQUIRE(fs::exists(a_checkpoint));
  fs::copy_file(a_checkpoint,
                temp() / "other" / "checkpoints" / ("hidden_traces+norm_1_" + small_steps + ".safetensors"),
                fs::copy_options::overwrite_existing);
  const std::string bytes =
      read_text(temp() / "other" / "checkpoints" / ("hidden_traces+norm_1_" + small_steps + ".safetensors"));
  // That run fails alone (the others are written) and is listed; the program writes no summary.
  CHECK(run_program(small_sweep + "--checkpoint-every 4 --out " + (temp() / "other").string(), temp() / "other.log") ==
        4);
  CHECK_THAT(read_text(temp() / "other.log"),
             Catch::Contains("failed: ") && Catch::Contains("is the checkpoint of another run"));
  CHECK_THAT(read_text(temp() / "other.log.err"), Catch::Contains("1 runs failed (listed above): no summary"));
  CHECK_FALSE(fs::exists(temp() / "other" / "summary.csv"));
  CHECK(read_text(temp() / "other" / "checkpoints" / ("hidden_traces+norm_1_" + small_steps + ".safetensors")) ==
        bytes);
}

TEST_CASE("ppo_pendulum --shard I/N and --merge: two shards merged give the files of one sweep") {
  const fs::path s0 = temp() / "shard0", s1 = temp() / "shard1", merged = temp() / "merged";
  REQUIRE(run_program(small_sweep + "--shard 0/2 --out " + s0.string(), temp() / "shard0.log") == 0);
  REQUIRE(run_program(small_sweep + "--shard 1/2 --out " + s1.string(), temp() / "shard1.log") == 0);
  CHECK_FALSE(fs::exists(s0 / "summary.csv"));
  CHECK_THAT(read_text(temp() / "shard0.log"), Catch::Contains("shard 0/2: 3 of 6 runs"));
  CHECK(lines_of(s1 / "runs.csv").size() == 4);
  REQUIRE(run_program(small_sweep + "--merge " + s0.string() + " " + s1.string() + " --out " + merged.string(),
                      temp() / "merged.log") == 0);
  check_same_results(merged, small_sweep_run());
  CHECK(run_program(small_sweep + "--merge " + s0.string() + " --out " + (temp() / "half").string(),
                    temp() / "half.log") == 1);
  CHECK_THAT(read_text(temp() / "half.log.err"), Catch::Contains("no folder holds shard 1/2"));
  CHECK(run_program(small_sweep + "--shard 2/2", temp() / "bad_shard.log") == 1);
  CHECK(run_program(small_sweep + "--checkpoint-every 5m", temp() / "bad_every.log") == 1);
  CHECK_THAT(read_text(temp() / "bad_every.log.err"),
             Catch::Contains("--checkpoint-every: expected N (updates) or Ns (seconds)"));
}
