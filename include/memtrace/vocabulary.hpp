#pragma once
// Vocabulary shared by every part of memtrace: index types, the run-time sentinels, and the
// checks that turn bad input into exceptions naming the argument and the value.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace memtrace {

/// An observation: an index in [0, num_observations) of a finite observation space. The paper's
/// observation vectors are the one-hot vectors e_y of R^{|Y|}; memtrace never builds them.
using Observation = std::size_t;

/// An action: an index in [0, num_actions).
using Action = std::size_t;

/// A hidden state: an index in [0, num_states).
using State = std::size_t;

/// Selects the run-time version of a compile-time size (window length m, |Y|), like Eigen::Dynamic.
inline constexpr int dynamic = -1;

/// Selects a run-time forgetting factor λ where a compile-time one would be a std::ratio.
struct dynamic_lambda {};

namespace detail {

/// Writes one part of a message. A floating-point value gets the fewest significant digits (at
/// least the stream's default 6) that read back as the same value, so 1.5 stays "1.5" but a sum of
/// 1 + 1e-9 checked against a tolerance is not shown as "1".
template <class Part>
void write_part(std::ostringstream& out, const Part& part) {
  if constexpr (std::is_floating_point_v<Part>) {
    if (std::isfinite(part)) {  // NaN and ±inf print as they are
      std::ostringstream digits;
      for (int precision = 6;; ++precision) {
        digits.str({});
        digits.precision(precision);
        digits << part;
        if (precision >= std::numeric_limits<Part>::max_digits10) break;
        std::istringstream in(digits.str());
        Part back{};
        if (in >> back && back == part) break;
      }
      out << digits.str();
      return;
    }
  }
  out << part;
}

/// x rounded to two decimals, for sizes in a message (GiB) that need no more.
[[nodiscard]] inline double two_decimals(double x) { return std::round(x * 100.0) / 100.0; }

/// Builds a message from its parts with the stream's default formatting (1.5, not 1.500000), and
/// floating-point values with as many digits as they need (write_part).
template <class... Parts>
[[nodiscard]] std::string message(const Parts&... parts) {
  std::ostringstream out;
  (write_part(out, parts), ...);
  return out.str();
}

template <class... Parts>
[[noreturn]] void invalid(const Parts&... parts) {
  throw std::invalid_argument(message(parts...));
}

/// a * b, or 0 when it overflows std::size_t. The one overflow-checked product of memtrace: every
/// size derived from user input goes through it (or checked_add).
[[nodiscard]] constexpr std::size_t checked_mul(std::size_t a, std::size_t b) noexcept {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return 0;
  return a * b;
}

/// a + b, or 0 when it overflows std::size_t.
[[nodiscard]] constexpr std::size_t checked_add(std::size_t a, std::size_t b) noexcept {
  if (b > std::numeric_limits<std::size_t>::max() - a) return 0;
  return a + b;
}

/// n^m for n >= 1, or 0 when it overflows std::size_t: the one |Y|^m guard of memtrace (window
/// tables, history enumerations, trace sets), to be checked before anything of that size, or any
/// table of the powers, is allocated. At most 64 products whatever m (none for n = 1).
[[nodiscard]] constexpr std::size_t checked_pow(std::size_t n, std::size_t m) noexcept {
  if (n <= 1) return m == 0 ? 1 : n;  // 0^m = 0 reads as an overflow: callers check n >= 1
  std::size_t p = 1;
  for (; m > 0 && p != 0; --m) p = checked_mul(p, n);
  return p;
}

/// What a checkpoint holds of a T: specialisations with static save(file, prefix, x) and
/// load(file, prefix, x) live in the opt-in checkpoint headers (checkpoint.hpp, env/checkpoint.hpp,
/// memory/checkpoint.hpp, loop/checkpoint.hpp), and the types befriend theirs, so that the
/// core headers hold no checkpoint code. The primary template has neither: T is not checkpointable.
template <class T>
struct CheckpointState {};

}  // namespace detail

/// The most bytes one array of a memtrace object (memory, learner, environment model) may take:
/// 2^34 (16 GiB). Larger storage is refused before allocating, naming the size it would need and
/// the argument behind it, instead of failing with std::bad_alloc (or, with overcommit, later).
/// Window tables and the analysis enumerations have their own, smaller limits.
inline constexpr std::size_t default_max_bytes = std::size_t{1} << 34;

namespace detail {

/// Throws unless `count` (0 meaning an overflow of std::size_t) entries of `entry_bytes` bytes each
/// fit in max_bytes: refuses storage before allocating, with what it is, the size it would need and
/// the argument that caused it (`argument` = `value`).
inline void check_storage(const char* who, const char* what, std::size_t count, std::size_t entry_bytes,
                          const char* argument, std::size_t value, std::size_t max_bytes = default_max_bytes) {
  const std::size_t bytes = checked_mul(count, entry_bytes);
  if (count != 0 && bytes != 0 && bytes <= max_bytes) return;
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  if (count == 0 || bytes == 0)
    invalid(who, ": ", what, " for ", argument, " = ", value, " would overflow std::size_t");
  invalid(who, ": ", what, " for ", argument, " = ", value, " needs ", count, " entries (",
          two_decimals(static_cast<double>(bytes) / gib), " GiB), more than the ",
          two_decimals(static_cast<double>(max_bytes) / gib),
          " GiB one array may take (memtrace::default_max_bytes); refused before allocating");
}

/// Throws unless 0 <= lambda < 1 (NaN fails too); `who` names the caller in the message.
inline void check_lambda(const char* who, double lambda) {
  if (!(lambda >= 0.0 && lambda < 1.0)) invalid(who, ": lambda must be in [0, 1), got ", lambda);
}

/// |Y| >= 1, and small enough to index an Eigen vector (a negative int cast to size_t is not).
inline void check_num_observations(const char* who, std::size_t num_observations) {
  if (num_observations == 0) invalid(who, ": num_observations must be at least 1, got 0");
  if (num_observations > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    invalid(who, ": num_observations must be below 2^63, got ", num_observations);
}

inline void check_observation(const char* who, Observation y, std::size_t num_observations) {
  if (y >= num_observations) invalid(who, ": observation must be in [0, ", num_observations, "), got ", y);
}

/// For classes whose size may be fixed at compile time: the run-time argument must agree.
inline void check_fixed_size(const char* who, const char* name, int fixed, std::size_t given) {
  if (fixed != dynamic && given != static_cast<std::size_t>(fixed))
    invalid(who, ": ", name, " is fixed at compile time to ", fixed, ", got ", given);
}

}  // namespace detail
}  // namespace memtrace
