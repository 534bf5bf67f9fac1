#pragma once
// Windows: the m most recent observations, win_m(h) = (y_0, y_{-1}, ..., y_{-m+1}) (paper §3).
//   Window<M>:       one table entry per possible window (the paper's F_m), a OneHot feature.
//   ConcatWindow<M>: the m one-hot vectors concatenated (m|Y| features), a MultiHot feature.
// Both update in O(1) (ConcatWindow in O(m)), allocate nothing after construction, and take the
// window length m as a template parameter or at run time (memtrace::dynamic). See docs/memory.md.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "memtrace/core.hpp"
#include "memtrace/features.hpp"

namespace memtrace {

/// What a window holds before m observations have been seen.
enum class WindowPadding {
  /// Missing observations repeat the first one, y_{-k} = y_0 of the history (the paper's
  /// reference code). Table size |Y|^m.
  repeat_first,
  /// Missing observations are the paper's zero vector (0-padding in the proofs): a window of c < m
  /// observations is its own table entry, and in a ConcatWindow its missing blocks are zero.
  /// Table size |Y|^m + |Y|^(m-1) + ... + |Y| (every window of length 1..m).
  zero,
};

/// The largest window table a Window accepts by default: 2^28 entries, 2 GiB as double weights.
inline constexpr std::size_t default_max_table_size = std::size_t{1} << 28;

namespace detail {

/// The powers n^0, ..., n^m, or an empty vector if n^m overflows std::size_t.
[[nodiscard]] inline std::vector<std::size_t> powers(std::size_t n, std::size_t m) {
  std::vector<std::size_t> p{1};
  for (std::size_t k = 1; k <= m; ++k) {
    const std::size_t next = checked_mul(p.back(), n);
    if (next == 0) return {};
    p.push_back(next);
  }
  return p;
}

inline void check_window_length(const char* who, int fixed, std::size_t length) {
  if (length == 0) invalid(who, ": length must be at least 1, got 0");
  check_fixed_size(who, "length", fixed, length);
}

}  // namespace detail

/// The full window of paper §3: the m most recent observations as one index into a table of
/// every possible window, so that a linear learner on it is tabular over windows (F_m) and a TD
/// step touches one weight.
///
/// Index layout: a full window has index y_0 + y_{-1}|Y| + ... + y_{-m+1}|Y|^{m-1} (the newest
/// observation is the lowest digit) in [0, |Y|^m). With zero padding a window of c < m observations
/// has index offset(c) + y_0 + ... + y_{-c+1}|Y|^{c-1}, offset(c) = |Y|^m + |Y| + ... + |Y|^{c-1}.
///
/// Length: window length m at compile time, or memtrace::dynamic. NumObservations likewise |Y|.
/// Satisfies Memory with OneHot features.
template <int Length = dynamic, int NumObservations = dynamic>
class Window {
  static_assert(Length == dynamic || Length >= 1, "Window: Length must be at least 1 or memtrace::dynamic");
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "Window: NumObservations must be at least 1 or memtrace::dynamic");

 public:
  using features_type = OneHot;
  static constexpr bool fully_static = Length != dynamic && NumObservations != dynamic;

  /// Refuses (before allocating) a table that overflows std::size_t or exceeds max_table_size.
  Window(std::size_t length, std::size_t num_observations, WindowPadding padding = WindowPadding::repeat_first,
         std::size_t max_table_size = default_max_table_size)
      : length_(length), num_observations_(num_observations), padding_(padding) {
    detail::check_window_length("Window", Length, length);
    detail::check_num_observations("Window", num_observations);
    if (length > max_table_size)  // the ring of the last m observations is allocated too
      detail::invalid("Window: length m = ", length, " exceeds max_table_size = ", max_table_size);
    detail::check_fixed_size("Window", "num_observations", NumObservations, num_observations);
    table_size_ = table_size(length, num_observations, padding);  // throws on overflow
    if (table_size_ > max_table_size)
      detail::invalid("Window: a table of ", table_size_, " windows (|Y| = ", num_observations, ", m = ", length,
                      ") needs ", static_cast<double>(table_size_) * 8.0 / (1 << 30),
                      " GiB as double weights and exceeds max_table_size = ", max_table_size);
    power_ = detail::powers(num_observations, length);
    offset_.assign(length, table_size_);  // offset_[c] for c in [1, m); offset_[m] is 0 below
    std::size_t offset = power_[length];
    for (std::size_t c = 1; c < length; ++c) {
      offset_[c] = offset;
      offset += power_[c];
    }
    offset_.push_back(0);
    ring_.assign(length, 0);
  }

  /// Compile-time length and |Y|: Window<3, 11> window.
  Window() requires fully_static : Window(WindowPadding::repeat_first) {}
  explicit Window(WindowPadding padding, std::size_t max_table_size = default_max_table_size) requires fully_static
      : Window(Length, NumObservations, padding, max_table_size) {}

  /// Number of table entries for windows of `length` observations out of `num_observations`;
  /// throws std::invalid_argument if it does not fit in std::size_t.
  [[nodiscard]] static std::size_t table_size(std::size_t length, std::size_t num_observations, WindowPadding padding) {
    const auto p = detail::powers(num_observations, length);
    std::size_t size = p.empty() ? 0 : p.back();
    if (padding == WindowPadding::zero)
      for (std::size_t c = 1; c < length && size != 0; ++c) size = size + p[c] < size ? 0 : size + p[c];
    if (size == 0)
      detail::invalid("Window: the table of |Y|^m windows with |Y| = ", num_observations, " and m = ", length,
                      " overflows std::size_t");
    return size;
  }

  void reset(Observation y0) {
    check(y0);
    head_ = 0;
    if (padding_ == WindowPadding::repeat_first) {
      std::fill(ring_.begin(), ring_.end(), y0);
      count_ = length_;
      digits_ = 0;
      for (std::size_t k = 0; k < length_; ++k) digits_ += y0 * power_[k];
    } else {
      ring_[0] = y0;
      head_ = 1 % length_;
      count_ = 1;
      digits_ = y0;
    }
    phi_.index = offset_[count_] + digits_;
  }

  /// Absorbs the next observation: the oldest digit drops out, the others move up one place.
  /// On a window that has seen nothing yet this is reset(y).
  void update(Observation y) {
    if (count_ == 0) return reset(y);
    check(y);
    if (count_ == length_) {
      digits_ = (digits_ - ring_[head_] * power_[length_ - 1]) * num_observations_ + y;
    } else {
      digits_ = digits_ * num_observations_ + y;
      ++count_;
    }
    ring_[head_] = y;
    if (++head_ == length_) head_ = 0;
    phi_.index = offset_[count_] + digits_;
  }

  /// Forgets everything: the next update(y) starts a history, like reset(y). There is no table
  /// entry for the empty history, so until then features() still names the last window.
  void clear() noexcept { count_ = 0; }

  [[nodiscard]] const OneHot& features() const noexcept { return phi_; }
  [[nodiscard]] std::size_t index() const noexcept { return phi_.index; }
  [[nodiscard]] std::size_t dim() const noexcept { return table_size_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  [[nodiscard]] WindowPadding padding() const noexcept { return padding_; }

  /// The index this window holds after the history h (chronological: oldest first, h.back() is
  /// the paper's y_0), computed directly from win_m(h) and the padding rule.
  [[nodiscard]] std::size_t index_of(std::span<const Observation> history) const {
    if (history.empty()) detail::invalid("Window::index_of: history must hold at least one observation");
    for (const Observation y : history) check(y);
    const std::size_t count = std::min(history.size(), length_);
    std::size_t digits = 0;
    for (std::size_t k = 0; k < count; ++k) digits += history[history.size() - 1 - k] * power_[k];
    if (padding_ == WindowPadding::repeat_first) {
      for (std::size_t k = count; k < length_; ++k) digits += history.front() * power_[k];
      return digits;
    }
    return offset_[count] + digits;
  }

  /// The window stored at `index`, chronological (oldest first). With zero padding a short window
  /// gives fewer than m observations.
  [[nodiscard]] std::vector<Observation> window_of(std::size_t index) const {
    if (index >= table_size_) detail::invalid("Window::window_of: index must be below ", table_size_, ", got ", index);
    std::size_t count = length_;
    if (index >= power_[length_])  // a zero-padded window of fewer than m observations
      for (count = 1; index >= offset_[count] + power_[count]; ++count) {
      }
    std::size_t digits = index - offset_[count];
    std::vector<Observation> window(count);
    for (std::size_t k = 0; k < count; ++k) {
      window[count - 1 - k] = digits % num_observations_;
      digits /= num_observations_;
    }
    return window;
  }

 private:
  void check(Observation y) const { detail::check_observation("Window", y, num_observations_); }

  std::size_t length_;
  std::size_t num_observations_;
  WindowPadding padding_;
  std::size_t table_size_ = 0;
  std::vector<std::size_t> power_;   // |Y|^0 .. |Y|^m
  std::vector<std::size_t> offset_;  // first index of windows with c observations, c = 1..m
  std::vector<Observation> ring_;    // the last m observations; ring_[head_] is the oldest
  std::size_t head_ = 0;
  std::size_t count_ = 0;   // observations in the window, min(t + 1, m)
  std::size_t digits_ = 0;  // y_0 + y_{-1}|Y| + ... over the window's observations
  OneHot phi_{};
};

/// The concatenated window: the one-hot vectors of y_0, y_{-1}, ..., y_{-m+1} stacked into m|Y|
/// features (block k, entries [k|Y|, (k+1)|Y|), is e_{y_{-k}}); a linear learner on it has m|Y|
/// weights instead of |Y|^m. Features are a MultiHot (one active entry per block), so a TD step
/// costs O(m). With zero padding the blocks of missing observations are zero (no active entry).
/// Satisfies Memory.
template <int Length = dynamic, int NumObservations = dynamic>
class ConcatWindow {
  static_assert(Length == dynamic || Length >= 1, "ConcatWindow: Length must be at least 1 or memtrace::dynamic");
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "ConcatWindow: NumObservations must be at least 1 or memtrace::dynamic");

 public:
  using features_type = MultiHot<Length>;
  static constexpr bool fully_static = Length != dynamic && NumObservations != dynamic;

  ConcatWindow(std::size_t length, std::size_t num_observations, WindowPadding padding = WindowPadding::repeat_first)
      : length_(length), num_observations_(num_observations), padding_(padding) {
    detail::check_window_length("ConcatWindow", Length, length);
    detail::check_num_observations("ConcatWindow", num_observations);
    detail::check_fixed_size("ConcatWindow", "num_observations", NumObservations, num_observations);
    if (detail::checked_mul(length, num_observations) == 0)
      detail::invalid("ConcatWindow: m|Y| with m = ", length, " and |Y| = ", num_observations,
                      " overflows std::size_t");
    phi_ = features_type(length);
  }

  /// Compile-time length and |Y|: ConcatWindow<3, 11> window.
  ConcatWindow() requires fully_static : ConcatWindow(WindowPadding::repeat_first) {}
  explicit ConcatWindow(WindowPadding padding) requires fully_static : ConcatWindow(Length, NumObservations, padding) {}

  void reset(Observation y0) {
    check(y0);
    const std::size_t count = padding_ == WindowPadding::repeat_first ? length_ : 1;
    for (std::size_t k = 0; k < count; ++k) phi_[k] = k * num_observations_ + y0;
    phi_.set_size(count);
  }

  /// Absorbs the next observation: every block moves one lag back, the oldest drops out.
  /// On a window that has seen nothing yet this is reset(y).
  void update(Observation y) {
    if (phi_.size() == 0) return reset(y);
    check(y);
    const std::size_t count = std::min(phi_.size() + 1, length_);
    for (std::size_t k = count - 1; k > 0; --k) phi_[k] = phi_[k - 1] + num_observations_;
    phi_[0] = y;
    phi_.set_size(count);
  }

  /// Forgets everything: the next update(y) starts a history, like reset(y).
  void clear() noexcept { phi_.set_size(0); }

  [[nodiscard]] const features_type& features() const noexcept { return phi_; }
  [[nodiscard]] std::size_t dim() const noexcept { return length_ * num_observations_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  [[nodiscard]] WindowPadding padding() const noexcept { return padding_; }

 private:
  void check(Observation y) const { detail::check_observation("ConcatWindow", y, num_observations_); }

  std::size_t length_;
  std::size_t num_observations_;
  WindowPadding padding_;
  features_type phi_;
};

}  // namespace memtrace
