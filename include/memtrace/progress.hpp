#pragma once
// Progress of long work on stderr (ProgressLine: "label: done/total unit, rate, time left") and the
// CPU time of the calling thread, for a sweep's runs and for a training run alike. Linux/POSIX
// (isatty, clock_gettime). See docs/experiments.md ("Reproducible parallel runs").

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The CPU time the calling thread has used, in seconds (POSIX CLOCK_THREAD_CPUTIME_ID). A run of
/// a sweep lives on one thread, so the difference over the run is the run's CPU time, whatever the
/// other threads do; wall time is not, on a loaded machine.
[[nodiscard]] inline double thread_cpu_seconds() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
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

}  // namespace memtrace
