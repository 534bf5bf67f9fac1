// Tests of progress.hpp: the progress line's text (counts, rates, time left), its lines into a
// log, and the CPU time of the calling thread.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memtrace/progress.hpp>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace progress_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

TEST_CASE("thread_cpu_seconds counts the calling thread's work, not another thread's nor the time it waits",
          "[progress]") {
  // Another thread spins while this one sleeps: a process clock would count its work.
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    volatile double x = 0;
    while (!stop.load(std::memory_order_relaxed)) x = x + 1.0;
  });
  const double start = thread_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double slept = thread_cpu_seconds() - start;
  stop = true;
  busy.join();
  CHECK(slept < 0.05);  // the other thread used about 0.3 s of CPU meanwhile (less on a loaded machine)
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + 1e-9 * i;
  CHECK(thread_cpu_seconds() - start - slept > 0.005);  // 20 M additions are not free
}

TEST_CASE("the progress line says done/total, rate and time left", "[progress]") {
  CHECK(detail::format_duration(42.2) == "42 s");
  CHECK(detail::format_duration(185) == "3 min 05 s");
  CHECK(detail::format_duration(7620) == "2 h 07 min");
  CHECK(detail::progress_text("lambda", 0, 120, 3.0) == "lambda: 0/120 runs");
  CHECK(detail::progress_text("lambda", 30, 120, 12.0) == "lambda: 30/120 runs, 2.5 runs/s, 36 s left");
  CHECK(detail::progress_text("", 3, 4, 12.0) == "3/4 runs, 4.0 s/run, 4 s left");
  // Large counts, as a training run's steps.
  CHECK(detail::format_count(99'999) == "99999");
  CHECK(detail::format_count(330'400) == "330k");
  CHECK(detail::format_count(20'480'000) == "20.48M");
  CHECK(detail::format_count(1.024e9) == "1.02G");
  CHECK(detail::progress_text("ppo_tmaze", 1'228'800, 20'480'000, 4.0, "steps") ==
        "ppo_tmaze: 1.23M/20.48M steps, 307k steps/s, 1 min 03 s left");
  CHECK(detail::progress_text("td", 50, 100, 100.0, "steps") == "td: 50/100 steps, 2.0 s/step, 1 min 40 s left");
}

TEST_CASE("a progress line into a log writes a line every log_interval seconds and one at the end", "[progress]") {
  CHECK_THROWS_WITH(ProgressLine(10, {.log_interval = -1.0}),
                    "ProgressLine: options.log_interval must be non-negative and finite, got -1");
  CHECK_THROWS_WITH(ProgressLine(10, {.log_interval = std::nan("")}),
                    "ProgressLine: options.log_interval must be non-negative and finite, got nan");
  CHECK(detail::progress_text("over", 12, 10, 1.0) == "over: 12/10 runs, 12.0 runs/s, 0 s left");  // done > total
  // stderr redirected to a file: not a terminal.
  const test::TempDir dir("memtrace_progress_test");
  const std::string path = (dir / "log").string();
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  std::FILE* log = std::fopen(path.c_str(), "w");
  REQUIRE(log != nullptr);
  REQUIRE(::dup2(::fileno(log), STDERR_FILENO) >= 0);
  {
    ProgressLine silent(10, {.label = "silent"});  // log_interval 0: nothing into a log
    CHECK(!silent.enabled());
    silent.update(5);
    silent.finish(10);
    ProgressLine off(10, {.label = "off", .log_interval = 1e-9}, false);
    CHECK(!off.enabled());
    off.finish(10);
    ProgressLine line(10, {.label = "train", .unit = "steps", .log_interval = 1e-9});
    CHECK(line.enabled());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    line.update(5, "note");
    line.finish(10);
  }
  std::fflush(stderr);
  REQUIRE(::dup2(saved, STDERR_FILENO) >= 0);
  ::close(saved);
  std::fclose(log);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].starts_with("train: 5/10 steps, "));
  CHECK(lines[0].ends_with(" left, note"));
  CHECK(lines[1].starts_with("train: 10/10 steps, "));
}

}  // namespace progress_test
