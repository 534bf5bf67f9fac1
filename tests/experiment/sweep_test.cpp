// Tests of experiment/sweep.hpp (its progress line: tests/progress_test.cpp): every run exactly
// once, results identical for any number of threads, exceptions reach the caller, and a
// checkpointed sweep killed midway (SIGKILL to a forked child) resumes without recomputing or
// duplicating finished runs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/statistics.hpp>
#include <memtrace/experiment/sweep.hpp>
#include <memtrace/random.hpp>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>
#include "temp_dir.hpp"

namespace sweep_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// A scratch directory for this test program.
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("memtrace_sweep_test") {}
};
using test::slurp;

/// Options without a progress line. (Designated initializers would do, but GCC's -Wextra warns
/// about the members they leave out.)
SweepOptions quiet(std::size_t threads) {
  SweepOptions options;
  options.threads = threads;
  options.progress = false;
  return options;
}

/// One run of a toy experiment: a sum of a run-dependent number of uniforms from its own stream.
double toy_run(std::uint64_t seed, std::size_t run) {
  auto gen = make_stream(seed, run);
  const auto draws = 200 + uniform_index(gen, 300);
  double sum = 0.0;
  for (std::uint64_t k = 0; k < draws; ++k) sum += uniform_real(gen) * 1e-3;
  return sum;
}

std::vector<double> toy_sweep(std::size_t runs, std::size_t threads) {
  std::vector<double> results(runs);
  parallel_runs(
      runs, [&](std::size_t i) { results[i] = toy_run(7, i); }, quiet(threads));
  return results;
}

}  // namespace

TEST_CASE("parallel_runs calls every run exactly once", "[sweep]") {
  for (std::size_t threads : {0, 1, 2, 7}) {
    for (std::size_t runs : {0, 1, 3, 100}) {
      std::vector<std::atomic<int>> calls(runs);
      parallel_runs(
          runs, [&](std::size_t i) { ++calls[i]; }, quiet(threads));
      for (std::size_t i = 0; i < runs; ++i) CHECK(calls[i].load() == 1);
    }
  }
}

TEST_CASE("a sweep gives bit-identical results with 1, 2 and 16 threads", "[sweep]") {
  const auto one = toy_sweep(200, 1);
  const auto two = toy_sweep(200, 2);
  const auto sixteen = toy_sweep(200, 16);
  for (std::size_t i = 0; i < one.size(); ++i) {
    REQUIRE(std::bit_cast<std::uint64_t>(one[i]) == std::bit_cast<std::uint64_t>(two[i]));
    REQUIRE(std::bit_cast<std::uint64_t>(one[i]) == std::bit_cast<std::uint64_t>(sixteen[i]));
  }
  const Summary a = summarize(one), b = summarize(two);
  CHECK(std::bit_cast<std::uint64_t>(a.mean) == std::bit_cast<std::uint64_t>(b.mean));
  CHECK(std::bit_cast<std::uint64_t>(a.ci_high) == std::bit_cast<std::uint64_t>(b.ci_high));
}

TEST_CASE("parallel_runs rethrows the first exception and starts no further runs", "[sweep]") {
  for (std::size_t threads : {1, 2, 4}) {
    std::atomic<std::size_t> calls{0};
    auto run = [&](std::size_t i) {
      ++calls;
      if (i == 5) throw std::runtime_error("run 5 failed");
      if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    const std::size_t runs = 100'000;
    CHECK_THROWS_WITH(parallel_runs(runs, run, quiet(threads)), "run 5 failed");
    // One thread: exactly runs 0..5. More threads: the others keep taking runs (1 ms each) until
    // they see the stop flag, which takes one exception's unwinding (slow under ASan, but far from
    // the 10 s a thread that the bound allows; a sweep that ignored the flag would take 100 s).
    if (threads == 1) CHECK(calls == 6);
    CHECK(calls < runs / 10);
  }
}

TEST_CASE("sweep_threads is the threads asked for, or every core, never more than the runs", "[sweep]") {
  const std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  CHECK(sweep_threads(3) == 3);
  CHECK(sweep_threads(3, 2) == 2);
  CHECK(sweep_threads(3, 0) == 0);
  CHECK(sweep_threads(0) == cores);
  CHECK(sweep_threads(0, 1) == 1);
  CHECK(sweep_threads(0, cores + 5) == cores);
}

TEST_CASE("checkpointed_runs writes every run once and a re-run computes nothing", "[sweep]") {
  TempDir dir;
  const auto path = dir / "sweep.csv";
  const std::size_t settings = 4, seeds = 25, runs = settings * seeds;
  auto key = [&](std::size_t i) { return csv_row(i / seeds, i % seeds); };  // run = setting * seeds + seed
  std::atomic<std::size_t> calls{0};
  auto run = [&](std::size_t i) {
    ++calls;
    return csv_row(toy_run(7, i));
  };
  {
    ResultsCsv out(path, {"setting", "seed", "value"}, 2);
    CHECK(checkpointed_runs(out, runs, key, run, quiet(8)) == runs);
  }
  CHECK(calls == runs);
  ResultsCsv again(path, {"setting", "seed", "value"}, 2);
  CHECK(checkpointed_runs(again, runs, key, run, quiet(8)) == 0);
  CHECK(calls == runs);

  // Read back: every key once, values bit-identical to an in-memory sweep.
  const auto expected = toy_sweep(runs, 3);
  const CsvTable table = read_csv(path);
  REQUIRE(table.rows.size() == runs);
  std::set<std::size_t> seen;
  for (const auto& row : table.rows) {
    const std::size_t i = parse_field<std::size_t>(row[0]) * seeds + parse_field<std::size_t>(row[1]);
    CHECK(seen.insert(i).second);
    CHECK(std::bit_cast<std::uint64_t>(parse_field<double>(row[2])) == std::bit_cast<std::uint64_t>(expected[i]));
  }
}

TEST_CASE("checkpointed_runs refuses bad keys", "[sweep]") {
  TempDir dir;
  ResultsCsv out(dir / "bad.csv", {"setting", "seed", "value"}, 2);
  auto run = [](std::size_t) { return csv_row(1.0); };
  CHECK_THROWS_WITH(checkpointed_runs(
                        out, 10, [](std::size_t i) { return csv_row(i % 4, 0); }, run),
                    "checkpointed_runs: runs 0 and 4 have the same key 0,0");
  CHECK_THROWS_WITH(checkpointed_runs(
                        out, 10, [](std::size_t i) { return csv_row(i); }, run),
                    "checkpointed_runs: key(0) must have 2 fields, got 1");
  CHECK_THROWS_WITH(
      checkpointed_runs(
          out, 2, [](std::size_t i) { return csv_row(i, 0); }, [](std::size_t) { return csv_row(1.0, 2.0); }),
      "ResultsCsv::append: row must have 3 fields (setting,seed,value), got 4");
  CHECK(out.size() == 0);
}

TEST_CASE("a sweep killed midway resumes without recomputing or duplicating runs", "[sweep]") {
  TempDir dir;
  const auto path = dir / "killed.csv";
  const std::vector<std::string> header{"run", "value"};
  const std::size_t runs = 120;
  auto key = [](std::size_t i) { return csv_row(i); };
  auto slow_run = [](std::size_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return csv_row(toy_run(11, i));
  };

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the sweep to be killed: about 300 ms of work on two threads
    try {
      ResultsCsv out(path, header, 1);
      checkpointed_runs(out, runs, key, slow_run, quiet(2));
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  // Kill it once some runs are in the file.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string content = slurp(path);
    lines = static_cast<std::size_t>(std::count(content.begin(), content.end(), '\n'));
    if (lines >= 11) break;  // the header and 10 runs
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(lines >= 11);
  REQUIRE(WIFSIGNALED(status));  // killed midway, not finished
  REQUIRE(WTERMSIG(status) == SIGKILL);

  std::set<std::size_t> finished;  // the runs the killed sweep completed
  for (const auto& row : read_csv(path).rows) finished.insert(parse_field<std::size_t>(row[0]));
  REQUIRE(finished.size() >= 10);
  REQUIRE(finished.size() < runs);

  std::mutex mutex;
  std::vector<std::size_t> computed;
  {
    ResultsCsv out(path, header, 1);
    const std::size_t count = checkpointed_runs(
        out, runs, key,
        [&](std::size_t i) {
          {
            std::lock_guard lock(mutex);
            computed.push_back(i);
          }
          return csv_row(toy_run(11, i));
        },
        quiet(2));
    CHECK(count == runs - finished.size());
  }
  CHECK(computed.size() == runs - finished.size());
  for (std::size_t i : computed) CHECK_FALSE(finished.contains(i));

  // The file is whole: a header, one complete line per run, values as from an uninterrupted sweep.
  const std::string content = slurp(path);
  CHECK(content.ends_with('\n'));
  CHECK(static_cast<std::size_t>(std::count(content.begin(), content.end(), '\n')) == runs + 1);
  const CsvTable table = read_csv(path);
  REQUIRE(table.rows.size() == runs);
  std::map<std::size_t, double> values;
  for (const auto& row : table.rows)
    CHECK(values.emplace(parse_field<std::size_t>(row[0]), parse_field<double>(row[1])).second);
  REQUIRE(values.size() == runs);
  std::vector<double> fresh(runs);
  parallel_runs(
      runs, [&](std::size_t i) { fresh[i] = toy_run(11, i); }, quiet(2));
  for (std::size_t i = 0; i < runs; ++i)
    CHECK(std::bit_cast<std::uint64_t>(values.at(i)) == std::bit_cast<std::uint64_t>(fresh[i]));
}

}  // namespace sweep_test
