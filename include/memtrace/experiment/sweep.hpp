#pragma once
// Parallel sweeps: every run of a grid of settings x seeds on all cores with std::thread (no
// compiler flags pushed on users), optionally checkpointed to a ResultsCsv. A run's result depends
// only on its index: each run draws from make_stream(seed, run index), never from a generator
// shared between runs, so results are identical for any number of threads. See docs/experiments.md.

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memtrace/experiment/results.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

struct SweepOptions {
  /// Worker threads; 0 uses std::thread::hardware_concurrency(). Never more than there are runs.
  std::size_t threads = 0;
  /// A progress line on stderr (done/total, rate, time left), shown only when stderr is a terminal
  /// and the sweep has run for 2 s, updated at most 10 times a second and cleared at the end.
  bool progress = true;
  /// Printed in front of the progress line.
  std::string label{};  // {} keeps {.threads = 2} free of -Wmissing-field-initializers
};

/// The CPU time the calling thread has used, in seconds (POSIX CLOCK_THREAD_CPUTIME_ID). A run of
/// a sweep lives on one thread, so the difference over the run is the run's CPU time, whatever the
/// other threads do; wall time is not, on a loaded machine.
[[nodiscard]] inline double thread_cpu_seconds() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The worker threads run_sweep uses for `num_runs` runs when SweepOptions::threads is `requested`:
/// `requested`, or every core when it is 0 (1 if the number of cores is unknown), never more than
/// `num_runs` (0 for none). For a program's "on N threads" line.
[[nodiscard]] inline std::size_t sweep_threads(
    std::size_t requested, std::size_t num_runs = std::numeric_limits<std::size_t>::max()) noexcept {
  std::size_t threads = requested != 0 ? requested : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;  // hardware_concurrency() may not know
  return threads < num_runs ? threads : num_runs;
}

namespace detail {

/// "42 s", "3 min 05 s" or "2 h 07 min".
[[nodiscard]] inline std::string format_duration(double seconds) {
  const auto s = static_cast<unsigned long long>(seconds + 0.5);
  char buffer[64];
  if (s < 60) {
    std::snprintf(buffer, sizeof buffer, "%llu s", s);
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof buffer, "%llu min %02llu s", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%llu h %02llu min", s / 3600, s / 60 % 60);
  }
  return buffer;
}

/// A count for a progress line: as is below 100,000, else "330k", "1.23M", "20.48M", "1.02G".
[[nodiscard]] inline std::string format_count(double n) {
  char buffer[64];
  if (n < 1e5) {
    std::snprintf(buffer, sizeof buffer, "%.0f", n);
  } else if (n < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.0fk", n / 1e3);
  } else if (n < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.2fM", n / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2fG", n / 1e9);
  }
  return buffer;
}

/// "label: 37/120 runs, 2.5 runs/s, 33 s left" (or "4.0 s/run" for slow runs; "1.23M/20.48M
/// steps, 330k steps/s, 1 min 02 s left" for large counts).
[[nodiscard]] inline std::string progress_text(std::string_view label, std::size_t done, std::size_t total,
                                               double elapsed_seconds, std::string_view unit = "runs") {
  std::string text(label);
  if (!text.empty()) text += ": ";
  text += format_count(static_cast<double>(done)) + "/" + format_count(static_cast<double>(total)) + " ";
  text += unit;
  if (done == 0 || !(elapsed_seconds > 0.0)) return text;
  const double rate = static_cast<double>(done) / elapsed_seconds;
  char buffer[64];
  if (rate >= 1e5) {
    text += ", " + format_count(rate) + " " + std::string(unit) + "/s, ";
  } else if (rate >= 1.0) {
    std::snprintf(buffer, sizeof buffer, ", %.1f ", rate);
    text += buffer + std::string(unit) + "/s, ";
  } else {  // "s/run": the unit without its plural s
    std::snprintf(buffer, sizeof buffer, ", %.1f s/", 1.0 / rate);
    text += buffer + std::string(unit.ends_with('s') ? unit.substr(0, unit.size() - 1) : unit) + ", ";
  }
  return text + format_duration(done >= total ? 0.0 : static_cast<double>(total - done) / rate) + " left";
}

}  // namespace detail

/// What a progress line shows, and where.
struct ProgressOptions {
  std::string label{};        ///< in front of the line ("ppo_tmaze runs")
  std::string unit = "runs";  ///< what is counted ("steps")
  /// Seconds between lines when stderr is not a terminal (a log file; finish() writes the last
  /// line); 0 writes nothing there.
  double log_interval = 0;
};

/// A progress line on stderr: "label: done/total unit, rate, time left" and an optional note. On a
/// terminal it is rewritten in place, from 2 s after the start at most 10 times a second, and
/// cleared by finish(); into a log (stderr not a terminal) a line is written every
/// options.log_interval seconds and one by finish(), and nothing if log_interval is 0.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  /// `enabled` false: the line is never shown. Throws std::invalid_argument for a negative or
  /// non-finite options.log_interval.
  explicit ProgressLine(std::size_t total, ProgressOptions options = {}, bool enabled = true)
      : tty_(::isatty(STDERR_FILENO) == 1),
        enabled_(enabled && (tty_ || options.log_interval > 0)),
        options_(std::move(options)),
        total_(total),
        start_(Clock::now()),
        last_(start_) {
    if (!(options_.log_interval >= 0.0 && options_.log_interval < std::numeric_limits<double>::infinity()))
      detail::invalid("ProgressLine: options.log_interval must be non-negative and finite, got ",
                      options_.log_interval);
  }

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }

  /// Shows `done` of the total and `note` (e.g. "success 0.52"), if it is time to.
  void update(std::size_t done, std::string_view note = {}) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (tty_ ? now - start_ < std::chrono::seconds(2) || now - last_ < std::chrono::milliseconds(100)
             : now - last_ < std::chrono::duration<double>(options_.log_interval))
      return;
    last_ = now;
    write(done, note);
  }

  /// In a log, the last line; on a terminal, the line is cleared.
  void finish(std::size_t done, std::string_view note = {}) {
    if (!enabled_) return;
    if (!tty_) {
      write(done, note);
    } else if (shown_) {
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
      shown_ = false;
    }
  }

 private:
  void write(std::size_t done, std::string_view note) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::string text = detail::progress_text(options_.label, done, total_, elapsed, options_.unit);
    if (!note.empty()) text += ", " + std::string(note);
    // Separate writes rather than "\r" + text + ...: GCC 12 at -O3 warns falsely (-Wrestrict) on that.
    if (tty_) std::fputs("\r", stderr);
    std::fputs(text.c_str(), stderr);
    std::fputs(tty_ ? "\033[K" : "\n", stderr);  // on a terminal, erase the rest of the line
    std::fflush(stderr);
    shown_ = true;
  }

  bool tty_;
  bool enabled_;
  ProgressOptions options_;
  std::size_t total_;
  Clock::time_point start_;
  Clock::time_point last_;
  bool shown_ = false;
};

/// Calls run(i) exactly once for every i in [0, num_runs), on options.threads worker threads that
/// take the next index as they become free (runs may take different times). run is called
/// concurrently and must not depend on which thread calls it: derive a run's randomness from its
/// index, make_stream(seed, i), and write its result to slot i of a vector sized beforehand.
///
/// If a run throws, no further runs are started; the first exception is rethrown here once the
/// runs in progress have finished.
template <class Run>
requires std::invocable<Run&, std::size_t>
void parallel_runs(std::size_t num_runs, Run&& run, const SweepOptions& options = {}) {
  if (num_runs == 0) return;
  const std::size_t threads = sweep_threads(options.threads, num_runs);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards error and finished
  std::condition_variable all_finished;
  std::exception_ptr error;
  std::size_t finished = 0;

  auto worker = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= num_runs) break;
      try {
        run(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
        break;
      }
      done.fetch_add(1, std::memory_order_relaxed);
    }
    std::lock_guard lock(mutex);
    if (++finished == threads) all_finished.notify_one();
  };

  std::vector<std::thread> pool;
  pool.reserve(threads);
  try {
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  } catch (...) {  // no more threads to be had: stop the started ones before reporting
    stop.store(true);
    next.store(num_runs);
    for (auto& thread : pool) thread.join();
    throw;
  }

  // The calling thread only watches: it prints progress while waiting for the workers.
  ProgressLine progress(num_runs, {.label = options.label}, options.progress);
  {
    std::unique_lock lock(mutex);
    while (finished < threads) {
      if (progress.enabled()) {
        all_finished.wait_for(lock, std::chrono::milliseconds(100));
        progress.update(done.load(std::memory_order_relaxed));
      } else {
        all_finished.wait(lock);
      }
    }
  }
  for (auto& thread : pool) thread.join();
  progress.finish(done.load());
  if (error) std::rethrow_exception(error);
}

/// A checkpointed sweep: runs, in parallel as parallel_runs does, every i in [0, num_runs) whose
/// key is not yet in `out`, and appends each finished run to `out` as soon as it completes. key(i)
/// gives the out.key_columns() key fields of run i and run(i) the remaining fields (both as
/// csv_row(...) would); the row written is the key followed by run(i). Keys must be distinct.
/// A re-run on the same file after a crash computes only the runs that are missing.
/// Returns the number of runs computed.
template <class Key, class Run>
requires std::invocable<Key&, std::size_t> && std::invocable<Run&, std::size_t> std::size_t checkpointed_runs(
    ResultsCsv& out, std::size_t num_runs, Key&& key, Run&& run, const SweepOptions& options = {}) {
  std::vector<std::size_t> todo;
  std::vector<std::vector<std::string>> todo_keys;
  std::unordered_map<std::string, std::size_t> seen;  // joined key -> run index
  for (std::size_t i = 0; i < num_runs; ++i) {
    std::vector<std::string> k = key(i);
    if (k.size() != out.key_columns())
      detail::invalid("checkpointed_runs: key(", i, ") must have ", out.key_columns(), " fields, got ", k.size());
    const auto [where, inserted] = seen.emplace(detail::join_fields(k, k.size()), i);
    if (!inserted)
      detail::invalid("checkpointed_runs: runs ", where->second, " and ", i, " have the same key ", where->first);
    if (!out.contains(k)) {
      todo.push_back(i);
      todo_keys.push_back(std::move(k));
    }
  }
  parallel_runs(
      todo.size(),
      [&](std::size_t j) {
        std::vector<std::string> row = todo_keys[j];
        std::vector<std::string> values = run(todo[j]);
        row.insert(row.end(), std::make_move_iterator(values.begin()), std::make_move_iterator(values.end()));
        out.append(row);
      },
      options);
  return todo.size();
}

}  // namespace memtrace
