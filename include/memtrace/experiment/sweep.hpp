#pragma once
// Parallel sweeps: every run of a grid of settings x seeds on all cores with std::thread (no
// compiler flags pushed on users), optionally checkpointed to a ResultsCsv. A run's result depends
// only on its index: each run draws from make_stream(seed, run index), never from a generator
// shared between runs, so results are identical for any number of threads. See docs/experiments.md.

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
#include "memtrace/progress.hpp"
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

/// The worker threads run_sweep uses for `num_runs` runs when SweepOptions::threads is `requested`:
/// `requested`, or every core when it is 0 (1 if the number of cores is unknown), never more than
/// `num_runs` (0 for none). For a program's "on N threads" line.
[[nodiscard]] inline std::size_t sweep_threads(
    std::size_t requested, std::size_t num_runs = std::numeric_limits<std::size_t>::max()) noexcept {
  std::size_t threads = requested != 0 ? requested : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;  // hardware_concurrency() may not know
  return threads < num_runs ? threads : num_runs;
}

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
