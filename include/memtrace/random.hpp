#pragma once
// Random numbers that are the same on every standard library.
//
// <random>'s distributions are implementation-defined: the same engine and seed give different
// numbers under libstdc++ and libc++. memtrace therefore samples only through the functions here,
// each documented exactly, on any std::uniform_random_bit_generator. See docs/random.md.

#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <random>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

/// The output function of SplitMix64: a bijection of 64-bit words with good avalanche.
[[nodiscard]] constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__extension__ typedef unsigned __int128 uint128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet

[[nodiscard]] constexpr int floor_log2(std::uint64_t x) noexcept { return static_cast<int>(std::bit_width(x)) - 1; }

}  // namespace detail

/// SplitMix64 (Steele, Lea & Flood 2014), Vigna's reference version. Used to seed
/// Xoshiro256StarStar; a fine generator on its own for anything that is not a long simulation.
class SplitMix64 {
 public:
  using result_type = std::uint64_t;
  constexpr explicit SplitMix64(std::uint64_t seed = 0) noexcept : state_(seed) {}
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  constexpr result_type operator()() noexcept {
    state_ += 0x9e3779b97f4a7c15ULL;
    return detail::splitmix64_mix(state_);
  }

 private:
  std::uint64_t state_;
};

/// xoshiro256** 1.0 (Blackman & Vigna 2018): the default generator. 256 bits of state, period
/// 2^256 - 1, a few cycles a number. Seeded from a 64-bit seed through SplitMix64, as its authors
/// recommend.
class Xoshiro256StarStar {
 public:
  using result_type = std::uint64_t;
  using state_type = std::array<std::uint64_t, 4>;

  constexpr explicit Xoshiro256StarStar(std::uint64_t seed = 0) noexcept {
    SplitMix64 seeder(seed);
    for (auto& word : s_) word = seeder();
  }

  /// A generator with exactly this state; the all-zero state (a fixed point) is refused.
  static constexpr Xoshiro256StarStar from_state(const state_type& state) {
    if (state == state_type{}) detail::invalid("Xoshiro256StarStar::from_state: state must not be all zero");
    Xoshiro256StarStar g;
    g.s_ = state;
    return g;
  }

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

  constexpr result_type operator()() noexcept {
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

  [[nodiscard]] constexpr const state_type& state() const noexcept { return s_; }
  friend constexpr bool operator==(const Xoshiro256StarStar&, const Xoshiro256StarStar&) = default;

 private:
  state_type s_{};
};

/// The generator memtrace uses when the caller does not bring one.
using DefaultGenerator = Xoshiro256StarStar;

/// The key of stream `stream` under base seed `seed`. For a fixed seed it is injective in the
/// stream (a composition of bijections), so the runs of one sweep never share a starting state.
[[nodiscard]] constexpr std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) noexcept {
  const std::uint64_t tagged = detail::splitmix64_mix(stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
  return detail::splitmix64_mix(detail::splitmix64_mix(seed) ^ tagged);
}

/// An independent generator for run `stream` of a sweep with base seed `seed`: the same pair
/// always gives the same numbers, whichever thread runs it and in whatever order.
[[nodiscard]] constexpr DefaultGenerator make_stream(std::uint64_t seed, std::uint64_t stream) noexcept {
  return DefaultGenerator(stream_key(seed, stream));
}

/// 64 uniformly distributed bits from any uniform random bit generator. Generators whose range is
/// exactly 2^64 or 2^32 values are used directly (one or two calls, high word first); any other
/// range contributes floor(log2(range)) bits a call, rejecting the values above them.
template <std::uniform_random_bit_generator G>
[[nodiscard]] std::uint64_t random_bits(G& gen) {
  using R = typename G::result_type;
  static_assert(std::numeric_limits<R>::digits <= 64, "random_bits: generators wider than 64 bits are not supported");
  constexpr std::uint64_t lo = G::min();
  constexpr std::uint64_t span = static_cast<std::uint64_t>(G::max()) - lo;  // number of values - 1
  if constexpr (span == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::uint64_t>(gen());
  } else if constexpr (span == 0xffffffffULL) {
    const std::uint64_t high = static_cast<std::uint64_t>(gen()) - lo;
    return (high << 32) | (static_cast<std::uint64_t>(gen()) - lo);
  } else {
    constexpr int bits = detail::floor_log2(span + 1);
    static_assert(bits >= 1, "random_bits: a generator must produce at least two values");
    constexpr std::uint64_t limit = std::uint64_t{1} << bits;
    std::uint64_t result = 0;
    for (int have = 0; have < 64; have += bits) {
      std::uint64_t v;
      do v = static_cast<std::uint64_t>(gen()) - lo;
      while (v >= limit);
      result = (result << bits) | v;
    }
    return result;
  }
}

/// A uniform integer in [0, n), n >= 1: Lemire's multiply-shift with rejection (exactly uniform).
template <std::uniform_random_bit_generator G>
[[nodiscard]] std::uint64_t uniform_index(G& gen, std::uint64_t n) {
  if (n == 0) detail::invalid("uniform_index: n must be at least 1, got 0");
  detail::uint128 m = static_cast<detail::uint128>(random_bits(gen)) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) {
      m = static_cast<detail::uint128>(random_bits(gen)) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// A uniform integer in [lo, hi] (both included), lo <= hi.
template <std::uniform_random_bit_generator G>
[[nodiscard]] std::int64_t uniform_int(G& gen, std::int64_t lo, std::int64_t hi) {
  if (lo > hi) detail::invalid("uniform_int: lo must not exceed hi, got lo = ", lo, ", hi = ", hi);
  const std::uint64_t count = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  const std::uint64_t offset = count == 0 ? random_bits(gen) : uniform_index(gen, count);  // count 0: all 2^64
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
}

/// A uniform double in [0, 1): the top 53 of 64 random bits times 2^-53 (every value a multiple of 2^-53).
template <std::uniform_random_bit_generator G>
[[nodiscard]] double uniform_real(G& gen) {
  return static_cast<double>(random_bits(gen) >> 11) * 0x1.0p-53;
}

/// True with probability p, for p in [0, 1]: uniform_real(gen) < p.
template <std::uniform_random_bit_generator G>
[[nodiscard]] bool bernoulli(G& gen, double p) {
  if (!(p >= 0.0 && p <= 1.0)) detail::invalid("bernoulli: p must be in [0, 1], got ", p);
  return uniform_real(gen) < p;
}

/// A standard normal double: Marsaglia's polar method on two uniform_real draws (first word first),
/// u_i = 2 uniform_real(gen) - 1 (exact). s = u_1^2 + u_2^2 is computed exactly in integers and
/// rounded once, so no compiler's floating-point contraction can change it; a pair with s = 0 or
/// s >= 1 is rejected and two new words are drawn. Returns u_1 sqrt(-2 ln(s) / s); the second
/// normal of the pair is discarded. Two words a try, 8/pi ~ 2.55 on average. See docs/random.md.
template <std::uniform_random_bit_generator G>
[[nodiscard]] double standard_normal(G& gen) {
  constexpr std::int64_t half = std::int64_t{1} << 52;
  constexpr detail::uint128 one = detail::uint128{1} << 104;  // s = 1 in units of 2^-104
  for (;;) {
    // uniform_real's 53 bits k give u = 2 k 2^-53 - 1 = (k - 2^52) 2^-52: an integer numerator.
    const std::int64_t a = static_cast<std::int64_t>(random_bits(gen) >> 11) - half;
    const std::int64_t b = static_cast<std::int64_t>(random_bits(gen) >> 11) - half;
    const auto a_abs = static_cast<detail::uint128>(a < 0 ? -a : a);
    const auto b_abs = static_cast<detail::uint128>(b < 0 ? -b : b);
    const detail::uint128 s_exact = a_abs * a_abs + b_abs * b_abs;  // < 2^105: no overflow
    if (s_exact == 0 || s_exact >= one) continue;
    const double s = static_cast<double>(s_exact) * 0x1.0p-104;  // one rounding, then an exact scaling
    const double u = static_cast<double>(a) * 0x1.0p-52;
    return u * std::sqrt(-2.0 * std::log(s) / s);
  }
}

}  // namespace memtrace
