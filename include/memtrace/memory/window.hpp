#pragma once
// Windows: the m most recent observations, win_m(h) = (y_0, y_{-1}, ..., y_{-m+1}) (paper §3).
//   Window<M>:       one table entry per possible window (the paper's F_m), a OneHot feature.
//   ConcatWindow<M>: the m one-hot vectors concatenated (m|Y| features), a MultiHot feature.
//   FrameStack<Y>:   the m most recent vector observations stacked (frame stacking): dense
//                    features for dense frames, MultiHot features for MultiHot frames.
// Window and ConcatWindow take index observations, update in O(1) (ConcatWindow in O(m)) and take
// the window length m as a template parameter or at run time (memtrace::dynamic); FrameStack takes
// vectors. None allocates after construction. See docs/memory.md.

#include <Eigen/Core>
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/features.hpp"
#include "memtrace/memory/vector_observation.hpp"
#include "memtrace/vocabulary.hpp"

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

/// The powers n^0, ..., n^m, or an empty vector (allocating nothing) if n^m overflows std::size_t.
[[nodiscard]] inline std::vector<std::size_t> powers(std::size_t n, std::size_t m) {
  if (checked_pow(n, m) == 0) return {};
  std::vector<std::size_t> p{1};
  for (std::size_t k = 1; k <= m; ++k) p.push_back(p.back() * n);  // no overflow: n^m fits
  return p;
}

inline void check_window_length(const char* who, int fixed, std::size_t m) {
  if (m == 0) invalid(who, ": m must be at least 1, got 0");
  check_fixed_size(who, "m", fixed, m);
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
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = true;
  using features_type = OneHot;
  static constexpr bool fully_static = Length != dynamic && NumObservations != dynamic;

  /// Refuses (before allocating) a table that overflows std::size_t or exceeds max_table_size.
  Window(std::size_t m, std::size_t num_observations, WindowPadding padding = WindowPadding::repeat_first,
         std::size_t max_table_size = default_max_table_size)
      : length_(m), num_observations_(num_observations), padding_(padding) {
    detail::check_window_length("Window", Length, m);
    detail::check_num_observations("Window", num_observations);
    if (m > max_table_size)  // the ring of the last m observations is allocated too
      detail::invalid("Window: m = ", m, " exceeds max_table_size = ", max_table_size);
    detail::check_fixed_size("Window", "num_observations", NumObservations, num_observations);
    table_size_ = table_size(m, num_observations, padding);  // throws on overflow
    if (table_size_ > max_table_size)
      detail::invalid("Window: a table of ", table_size_, " windows (|Y| = ", num_observations, ", m = ", m, ") needs ",
                      detail::two_decimals(static_cast<double>(table_size_) * 8.0 / (1 << 30)),
                      " GiB as double weights and exceeds max_table_size = ", max_table_size);
    power_ = detail::powers(num_observations, m);
    offset_.assign(m, table_size_);  // offset_[c] for c in [1, m); offset_[m] is 0 below
    std::size_t offset = power_[m];
    for (std::size_t c = 1; c < m; ++c) {
      offset_[c] = offset;
      offset += power_[c];
    }
    offset_.push_back(0);
    ring_.assign(m, 0);
  }

  /// Compile-time length and |Y|: Window<3, 11> window.
  Window() requires fully_static : Window(WindowPadding::repeat_first) {}
  explicit Window(WindowPadding padding, std::size_t max_table_size = default_max_table_size) requires fully_static
      : Window(Length, NumObservations, padding, max_table_size) {}

  /// Number of table entries for windows of `m` observations out of `num_observations`;
  /// throws std::invalid_argument if it does not fit in std::size_t.
  [[nodiscard]] static std::size_t table_size(std::size_t m, std::size_t num_observations, WindowPadding padding) {
    std::size_t size = detail::checked_pow(num_observations, m);
    if (padding == WindowPadding::zero && size != 0) {
      const auto p = detail::powers(num_observations, m);
      for (std::size_t c = 1; c < m && size != 0; ++c) size = detail::checked_add(size, p[c]);
    }
    if (size == 0)
      detail::invalid("Window: the table of |Y|^m windows with |Y| = ", num_observations, " and m = ", m,
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

  // Vector observations have no table entry; Window takes indices only:
  template <detail::NotObservationIndex Y>
  void reset(const Y&) = delete;  // Window takes indices: for vectors use FrameStack or MemoryTrace
  template <detail::NotObservationIndex Y>
  void update(const Y&) = delete;  // Window takes indices: for vectors use FrameStack or MemoryTrace

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
  [[nodiscard]] std::vector<Observation> window_at(std::size_t index) const {
    if (index >= table_size_) detail::invalid("Window::window_at: index must be below ", table_size_, ", got ", index);
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
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
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
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = true;
  using features_type = MultiHot<Length>;
  static constexpr bool fully_static = Length != dynamic && NumObservations != dynamic;

  ConcatWindow(std::size_t m, std::size_t num_observations, WindowPadding padding = WindowPadding::repeat_first)
      : length_(m), num_observations_(num_observations), padding_(padding) {
    detail::check_window_length("ConcatWindow", Length, m);
    detail::check_num_observations("ConcatWindow", num_observations);
    detail::check_fixed_size("ConcatWindow", "num_observations", NumObservations, num_observations);
    if (detail::checked_mul(m, num_observations) == 0)
      detail::invalid("ConcatWindow: m|Y| with m = ", m, " and |Y| = ", num_observations, " overflows std::size_t");
    detail::check_storage("ConcatWindow", "the active indices", m, sizeof(std::size_t), "m", m);
    phi_ = features_type(m);
  }

  /// Compile-time length and |Y|: ConcatWindow<3, 11> window.
  ConcatWindow() requires fully_static : ConcatWindow(WindowPadding::repeat_first) {}
  explicit ConcatWindow(WindowPadding padding) requires fully_static : ConcatWindow(Length, NumObservations, padding) {}

  void reset(Observation y0) {
    check(y0);
    const std::size_t count = padding_ == WindowPadding::repeat_first ? length_ : 1;
    for (std::size_t k = 0; k < count; ++k) phi_[k] = k * num_observations_ + y0;
    phi_.set_size_unchecked(count);
  }

  /// Absorbs the next observation: every block moves one lag back, the oldest drops out.
  /// On a window that has seen nothing yet this is reset(y).
  void update(Observation y) {
    if (phi_.size() == 0) return reset(y);
    check(y);
    const std::size_t count = std::min(phi_.size() + 1, length_);
    for (std::size_t k = count - 1; k > 0; --k) phi_[k] = phi_[k - 1] + num_observations_;
    phi_[0] = y;
    phi_.set_size_unchecked(count);
  }

  // ConcatWindow takes indices only:
  template <detail::NotObservationIndex Y>
  void reset(const Y&) = delete;  // ConcatWindow takes indices: for vectors use FrameStack
  template <detail::NotObservationIndex Y>
  void update(const Y&) = delete;  // ConcatWindow takes indices: for vectors use FrameStack

  /// Forgets everything: the next update(y) starts a history, like reset(y).
  void clear() noexcept { phi_.set_size_unchecked(0); }

  [[nodiscard]] const features_type& features() const noexcept { return phi_; }
  [[nodiscard]] std::size_t dim() const noexcept { return length_ * num_observations_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  [[nodiscard]] WindowPadding padding() const noexcept { return padding_; }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  void check(Observation y) const { detail::check_observation("ConcatWindow", y, num_observations_); }

  std::size_t length_;
  std::size_t num_observations_;
  WindowPadding padding_;
  features_type phi_;
};

namespace detail {

/// A type with Eigen's compile-time shape and a scalar.
template <class Y>
concept EigenType = requires {
  typename Y::Scalar;
  Y::ColsAtCompileTime;
  Y::SizeAtCompileTime;
};

/// A frame type of FrameStack: a dense Eigen column-vector type of float or double.
template <class Y>
concept DenseFrame = EigenType<Y> && Y::ColsAtCompileTime == 1 && TraceScalar<typename Y::Scalar>;

/// What FrameStack needs to know of its frame type Y: sparse (MultiHot) or dense, the scalar of a
/// dense frame, a compile-time frame size d and a compile-time number of active entries (or dynamic).
template <class Y>
struct frame_traits {
  static constexpr bool valid = false;
  static constexpr bool sparse = false;
  using scalar = double;
  static constexpr int fixed_dim = dynamic;
  static constexpr int capacity = dynamic;
};
template <DenseFrame Y>
struct frame_traits<Y> {
  static constexpr bool valid = true;
  static constexpr bool sparse = false;
  using scalar = typename Y::Scalar;
  static constexpr int fixed_dim =
      Y::SizeAtCompileTime == Eigen::Dynamic ? dynamic : static_cast<int>(Y::SizeAtCompileTime);
  static constexpr int capacity = dynamic;
};
template <int C>
struct frame_traits<MultiHot<C>> {
  static constexpr bool valid = true;
  static constexpr bool sparse = true;
  using scalar = double;
  static constexpr int fixed_dim = dynamic;
  static constexpr int capacity = C;
};

}  // namespace detail

/// Frame stacking: the m most recent vector observations y_0, y_{-1}, ..., y_{-m+1} of R^d (newest
/// first) stacked into m·d features, block k (entries [kd, (k+1)d)) = y_{-k}. The vector analogue
/// of ConcatWindow, and the paper's PPO agent's window (its code's Window(m) holds m + 1 frames).
///
/// Y is the frame type:
///  - a dense Eigen column-vector type of float or double, fixed or dynamic size (Eigen::VectorXf,
///    Eigen::Matrix<float, 45, 1>): it takes any dense expression of that scalar with d finite
///    entries, and features() is a dense vector of m·d entries. An update moves the m - 1 kept
///    frames one block back (one memmove of (m-1)d scalars) and writes the new one: O(md), what
///    any consumer of the m·d features reads anyway.
///  - MultiHot<C> (at most C active entries per frame; C = dynamic allows up to d): it takes any
///    MultiHot with at most that many entries, all below d, and features() is a MultiHot with the
///    active entries kd + i of every frame, newest first, so that a dot product or a dense first
///    layer costs what the active entries cost (65 frames of 9 active entries: 585 of 2925). An
///    update rewrites the kept entries shifted by d: O(m·active).
/// Before m observations have been seen, WindowPadding::zero leaves the missing frames zero (no
/// active entry; the paper's PPO code), WindowPadding::repeat_first repeats y_0.
/// A refused observation (wrong size, not finite, index out of range, too many active entries)
/// throws std::invalid_argument and changes nothing. Allocates only in the constructor. Satisfies
/// Memory<FrameStack<Y>, Y>.
template <class Y>
class FrameStack {
  using traits = detail::frame_traits<Y>;
  static constexpr bool sparse = traits::sparse;
  static constexpr int fixed_dim = traits::fixed_dim;
  using scalar = typename traits::scalar;
  static_assert(traits::valid,
                "FrameStack: the frame type Y must be a dense Eigen column-vector type of float or double "
                "(e.g. Eigen::VectorXf) or a MultiHot<C>; for index observations use ConcatWindow");

  template <class D>
  static constexpr bool dense_frame_of = !sparse && detail::DenseObservationFor<D, scalar, fixed_dim>;
  template <class D>
  static constexpr bool dense_frame_not_of = !sparse && detail::DenseObservationNotOf<D, scalar>;
  // A MultiHot whose capacity exceeds a frame's is refused at compile time (a run-time one is checked).
  template <int C>
  static constexpr bool multi_hot_frame = sparse &&
                                          (C == dynamic || traits::capacity == dynamic || C <= traits::capacity);

 public:
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = true;
  using observation_type = Y;
  /// A MultiHot for MultiHot frames, a dense vector of the frames' scalar for dense frames.
  using features_type = std::conditional_t<sparse, MultiHot<dynamic>, Eigen::Matrix<scalar, Eigen::Dynamic, 1>>;

  /// m observations (frames) of dimension d = dim each, padded as `padding` says.
  FrameStack(std::size_t m, std::size_t dim, WindowPadding padding) : length_(m), dim_(dim), padding_(padding) {
    if (m == 0) detail::invalid("FrameStack: m must be at least 1, got 0");
    if (dim == 0) detail::invalid("FrameStack: dim must be at least 1, got 0");
    detail::check_fixed_size("FrameStack", "dim", fixed_dim, dim);
    const std::size_t size = detail::checked_mul(m, dim);
    if (size == 0 || size > static_cast<std::size_t>(std::numeric_limits<Eigen::Index>::max()))
      detail::invalid("FrameStack: m·d with m = ", m, " and d = dim = ", dim, " overflows the index type");
    // Dense: m·d scalars. MultiHot: two buffers of m·(active entries) indices.
    const std::size_t active = sparse && traits::capacity != dynamic ? static_cast<std::size_t>(traits::capacity) : dim;
    detail::check_storage("FrameStack", sparse ? "the active entries of m frames (two buffers)" : "the m·d features",
                          detail::checked_mul(sparse ? 2 * m : m, active),
                          sparse ? sizeof(std::size_t) : sizeof(scalar), "m", m);
    if constexpr (sparse) {
      max_active_ = traits::capacity == dynamic ? dim : static_cast<std::size_t>(traits::capacity);
      phi_ = features_type(m * max_active_);  // at most m·d: no overflow
      spare_ = features_type(m * max_active_);
      counts_.assign(m, 0);
    } else {
      phi_ = features_type::Zero(static_cast<Eigen::Index>(size));
    }
  }

  /// A compile-time frame size: FrameStack<Eigen::Matrix<float, 45, 1>> stack(65, WindowPadding::zero).
  FrameStack(std::size_t m, WindowPadding padding) requires(fixed_dim != dynamic)
      : FrameStack(m, static_cast<std::size_t>(fixed_dim), padding) {}

  /// Starts a history whose first observation is y0 (padded as padding() says).
  template <class D>
  requires dense_frame_of<D>
  void reset(const Eigen::MatrixBase<D>& y0) { start("FrameStack::reset", y0); }
  template <int C>
  requires multi_hot_frame<C>
  void reset(const MultiHot<C>& y0) { start("FrameStack::reset", y0); }

  /// Absorbs the next observation: every frame moves one block back, the oldest drops out. On a
  /// stack that has seen nothing yet (after construction or clear()) this is reset(y).
  template <class D>
  requires dense_frame_of<D>
  void update(const Eigen::MatrixBase<D>& y) {
    if (!started_) return start("FrameStack::update", y);
    detail::check_dense_observation("FrameStack::update", y, dim_);
    scalar* data = phi_.data();
    std::copy_backward(data, data + (length_ - 1) * dim_, data + length_ * dim_);
    phi_.head(static_cast<Eigen::Index>(dim_)) = y;
  }
  template <int C>
  requires multi_hot_frame<C>
  void update(const MultiHot<C>& y) {
    if (!started_) return start("FrameStack::update", y);
    detail::check_multi_hot_observation("FrameStack::update", y, dim_, max_active_);
    const std::size_t oldest = head_ == 0 ? length_ - 1 : head_ - 1;  // the frame at lag m - 1
    const std::size_t kept = phi_.size() - counts_[oldest];
    const std::size_t n = y.size();
    // One pass into the spare buffer (the new frame, then the kept ones one block of d further on),
    // then a swap of the buffers: phi_ stays the same object.
    const std::size_t* const from = phi_.begin();
    std::size_t* const to = &spare_[0];
    for (std::size_t j = 0; j < n; ++j) to[j] = y[j];
    for (std::size_t i = 0; i < kept; ++i) to[n + i] = from[i] + dim_;
    spare_.set_size_unchecked(n + kept);
    std::swap(phi_, spare_);
    head_ = oldest;
    counts_[head_] = n;
  }

  // A frame of another kind is refused at compile time:
  template <class D>
  requires dense_frame_not_of<D>
  void reset(const Eigen::MatrixBase<D>& y0) = delete;  // another scalar type: pass y.template cast<Scalar>()
  template <class D>
  requires dense_frame_not_of<D>
  void update(const Eigen::MatrixBase<D>& y) = delete;  // another scalar type: pass y.template cast<Scalar>()
  template <std::integral I>
  void reset(I y0) = delete;  // FrameStack takes vectors: for index observations use ConcatWindow
  template <std::integral I>
  void update(I y) = delete;  // FrameStack takes vectors: for index observations use ConcatWindow

  /// Forgets everything: all frames zero (no active entry); the next update(y) is reset(y).
  void clear() noexcept {
    if constexpr (sparse) {
      phi_.set_size_unchecked(0);
      std::fill(counts_.begin(), counts_.end(), std::size_t{0});
    } else {
      phi_.setZero();
    }
    started_ = false;
  }

  [[nodiscard]] const features_type& features() const noexcept { return phi_; }
  /// m·d.
  [[nodiscard]] std::size_t dim() const noexcept { return length_ * dim_; }
  /// m, the number of frames (the paper's window length).
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  /// d, the dimension of one observation.
  [[nodiscard]] std::size_t observation_dim() const noexcept { return dim_; }
  [[nodiscard]] WindowPadding padding() const noexcept { return padding_; }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  template <class D>
  void start(const char* who, const Eigen::MatrixBase<D>& y0) {
    detail::check_dense_observation(who, y0, dim_);
    const auto d = static_cast<Eigen::Index>(dim_);
    if (padding_ == WindowPadding::zero) {
      phi_.tail(phi_.size() - d).setZero();
      phi_.head(d) = y0;
    } else {
      phi_.head(d) = y0;
      for (std::size_t k = 1; k < length_; ++k) phi_.segment(static_cast<Eigen::Index>(k) * d, d) = phi_.head(d);
    }
    started_ = true;
  }
  template <int C>
  void start(const char* who, const MultiHot<C>& y0) {
    detail::check_multi_hot_observation(who, y0, dim_, max_active_);
    const std::size_t n = y0.size();
    const std::size_t copies = padding_ == WindowPadding::zero ? 1 : length_;
    for (std::size_t k = 0; k < copies; ++k)
      for (std::size_t j = 0; j < n; ++j) phi_[k * n + j] = k * dim_ + y0[j];
    phi_.set_size_unchecked(copies * n);
    std::fill(counts_.begin(), counts_.end(), copies == 1 ? std::size_t{0} : n);
    head_ = 0;
    counts_[0] = n;
    started_ = true;
  }

  std::size_t length_;
  std::size_t dim_;
  WindowPadding padding_;
  features_type phi_;
  // MultiHot frames only: the most active entries a frame may have, a spare buffer for the
  // update, and the number of active entries of each frame in a ring (counts_[head_] is the newest
  // frame's, the one before it the oldest's).
  std::size_t max_active_ = 0;
  features_type spare_{};
  std::vector<std::size_t> counts_;
  std::size_t head_ = 0;
  bool started_ = false;
};

}  // namespace memtrace
