#pragma once
// The memories' states in checkpoints (checkpoint.hpp): detail::CheckpointState for MemoryTrace,
// TraceBank, Window, ConcatWindow, FrameStack, WithActions and AppendAction, for every compile-time
// and run-time parameter, so that save_state and load_state hold a memory under a prefix. A state
// holds what decides the memory's future features, and its parameters, so that a memory of other
// parameters refuses it; a restored memory continues exactly as the saved one, bit for bit. Opt-in
// (the memory headers only befriend their specialisation). See docs/memory.md ("Checkpoints").

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/features.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/trace_bank.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/memory/with_actions.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace::detail {

[[nodiscard]] inline std::string padding_text(std::uint64_t padding) {
  if (padding == static_cast<std::uint64_t>(WindowPadding::repeat_first)) return "padding repeat_first";
  if (padding == static_cast<std::uint64_t>(WindowPadding::zero)) return "padding zero";
  return message("padding ", padding, " (none)");
}
[[nodiscard]] inline std::string trace_init_text(std::uint64_t init) {
  if (init == static_cast<std::uint64_t>(TraceInit::zero)) return "init zero";
  if (init == static_cast<std::uint64_t>(TraceInit::first_observation)) return "init first_observation";
  if (init == static_cast<std::uint64_t>(TraceInit::normalized)) return "init normalized";
  return message("init ", init, " (none)");
}

/// The access TraceStep grants the trace memories' states: its λ^{t+1}, the weight 1 - λ^{t+1} a
/// normalised trace has accumulated, its only mutable state. No save or load: TraceStep is no
/// Checkpointable of its own, it is part of MemoryTrace's and TraceBank's states.
template <>
struct CheckpointState<TraceStep> {
  [[nodiscard]] static double power(const TraceStep& step) noexcept { return step.power_; }
  static void set_power(TraceStep& step, double power) noexcept { step.power_ = power; }
};

/// The state MemoryTrace and TraceBank share (detail::crtp::TraceMemory): K traces of d entries,
/// whether a history has started, and each trace's λ^{t+1}; read and checked before any is assigned.
template <class Scalar>
struct TraceState {
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> traces;
  bool started = false;
  std::vector<double> powers;

  template <class Z>
  static void save(TensorFile& file, const std::string& prefix, std::span<const double> lambdas, std::size_t d,
                   TraceInit init, const Z& z, bool started, std::span<const TraceStep> steps) {
    const std::size_t k = lambdas.size();
    put_reals(file, prefix + "lambdas", {k}, {lambdas.begin(), lambdas.end()});
    put_integers(file, prefix + "parameters", {2}, {d, static_cast<std::uint64_t>(init)});
    std::vector<double> values(static_cast<std::size_t>(z.size()));
    for (Eigen::Index i = 0; i < z.size(); ++i) values[static_cast<std::size_t>(i)] = static_cast<double>(z[i]);
    put_reals<Scalar>(file, prefix + "traces", {k, d}, std::move(values));
    put_integers(file, prefix + "started", {}, {started ? 1u : 0u});
    std::vector<double> powers;
    for (const TraceStep& step : steps) powers.push_back(CheckpointState<TraceStep>::power(step));
    put_reals(file, prefix + "powers", {k}, std::move(powers));
  }

  [[nodiscard]] static TraceState read(const TensorFile& file, const std::string& prefix,
                                       std::span<const double> lambdas, std::size_t d, TraceInit init) {
    const std::size_t k = lambdas.size();
    // λ first, with both lists in the message: the likeliest mix-up (a state of another sweep point).
    check_parameters(file, prefix + "lambdas", "a trace memory", std::vector<double>(lambdas.begin(), lambdas.end()),
                     [](const std::vector<double>& l) { return "lambdas = " + list(l); });
    check_parameters(
        file, prefix + "parameters", "a trace memory", std::vector<std::uint64_t>{d, static_cast<std::uint64_t>(init)},
        [](const std::vector<std::uint64_t>& p) { return message("d = ", p[0], ", ", trace_init_text(p[1])); });
    const std::vector<double>& traces = state_reals<Scalar>(file, prefix + "traces", {k, d});
    const bool started = state_flag(file, prefix + "started");
    const std::vector<double>& powers = state_reals(file, prefix + "powers", {k});
    for (std::size_t j = 0; j < k; ++j)
      if (!(powers[j] >= 0.0 && powers[j] <= 1.0))
        invalid("load_state: ", prefix, "powers: entry ", j, " is ", powers[j], ", not a power of λ in [0, 1]");
    // A memory that has seen nothing (fresh or cleared) holds zero traces: anything else is no state of it.
    if (!started)
      for (std::size_t i = 0; i < traces.size(); ++i)
        if (traces[i] != 0.0)
          invalid("load_state: ", prefix, "traces: entry ", i, " is ", traces[i],
                  " but started is 0: a memory that has seen nothing holds zero traces");
    TraceState s;
    s.traces.resize(static_cast<Eigen::Index>(traces.size()));
    for (std::size_t i = 0; i < traces.size(); ++i)
      s.traces[static_cast<Eigen::Index>(i)] = static_cast<Scalar>(traces[i]);
    s.started = started;
    s.powers = powers;
    return s;
  }

 private:
  [[nodiscard]] static std::string list(std::span<const double> values) {
    std::string out;
    for (const double v : values) out += (out.empty() ? "" : ", ") + message(v);
    return "{" + out + "}";
  }
};

/// MemoryTrace<Lambda, NumObservations, Scalar>, compile-time or run-time λ and d, float or double:
///   lambdas     F64 [1]        λ (a parameter: a state of another λ is refused);
///   parameters  U64 [2]        d, init (0 zero, 1 first_observation, 2 normalized);
///   traces      F32/F64 [1, d] the trace z, in Scalar's dtype (a float trace is restored bit for bit);
///   started     U64 []         1 once a history has started (before, the next update is a reset);
///   powers      F64 [1]        λ^{t+1}, which the normalised trace divides by (1 - λ^{t+1}).
/// The same tensors as a TraceBank of the one λ, which behaves alike.
template <class Lambda, int NumObservations, class Scalar>
struct CheckpointState<MemoryTrace<Lambda, NumObservations, Scalar>> {
  using memory_type = MemoryTrace<Lambda, NumObservations, Scalar>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& m) {
    const double lambda = m.lambda();
    TraceState<Scalar>::save(file, prefix, {&lambda, 1}, m.num_observations(), m.init(), m.z_, m.started_,
                             {&m.step_, 1});
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& m) {
    const double lambda = m.lambda();
    const TraceState<Scalar> s = TraceState<Scalar>::read(file, prefix, {&lambda, 1}, m.num_observations(), m.init());
    m.z_ = s.traces;  // the memory's own size: no allocation, nothing throws from here on
    m.started_ = s.started;
    CheckpointState<TraceStep>::set_power(m.step_, s.powers[0]);
  }
};

/// TraceBank<NumObservations, Scalar>, K = size() traces of d entries:
///   lambdas     F64 [K]        λ_1..λ_K (parameters);
///   parameters  U64 [2]        d, init (0 zero, 1 first_observation, 2 normalized);
///   traces      F32/F64 [K, d] the traces, row k that of λ_{k+1} (features(), λ-major);
///   started     U64 []         1 once a history has started;
///   powers      F64 [K]        each trace's λ^{t+1}.
template <int NumObservations, class Scalar>
struct CheckpointState<TraceBank<NumObservations, Scalar>> {
  using memory_type = TraceBank<NumObservations, Scalar>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& m) {
    TraceState<Scalar>::save(file, prefix, m.lambdas(), m.num_observations(), m.init(), m.z_, m.started_, m.steps_);
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& m) {
    const TraceState<Scalar> s = TraceState<Scalar>::read(file, prefix, m.lambdas(), m.num_observations(), m.init());
    m.z_ = s.traces;  // the memory's own size: no allocation, nothing throws from here on
    m.started_ = s.started;
    for (std::size_t k = 0; k < m.steps_.size(); ++k) CheckpointState<TraceStep>::set_power(m.steps_[k], s.powers[k]);
  }
};

/// Window<Length, NumObservations>, m = length(), |Y| = num_observations():
///   parameters  U64 [3]  m, |Y|, padding (0 repeat_first, 1 zero);
///   ring        U64 [m]  the last m observations as the window's ring holds them;
///   head        U64 []   the ring's next position to write (once it is full, the oldest observation's);
///   count       U64 []   the observations in the window, min(t + 1, m), or 0 before a history;
///   index       U64 []   features().index (kept apart: after clear() it still names the last window).
/// Refused besides: observations not below |Y|, head not below m, count above m (or, padded with
/// repeat_first, other than 0 or m), and an index that is not the window's of ring, head and count.
template <int Length, int NumObservations>
struct CheckpointState<Window<Length, NumObservations>> {
  using memory_type = Window<Length, NumObservations>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& w) {
    put_integers(file, prefix + "parameters", {3}, parameters(w));
    put_integers(file, prefix + "ring", {w.length_}, {w.ring_.begin(), w.ring_.end()});
    put_integers(file, prefix + "head", {}, {w.head_});
    put_integers(file, prefix + "count", {}, {w.count_});
    put_integers(file, prefix + "index", {}, {w.phi_.index});
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& w) {
    const std::size_t m = w.length_, n = w.num_observations_;
    check_parameters(file, prefix + "parameters", "a Window", parameters(w), [](const std::vector<std::uint64_t>& p) {
      return message("m = ", p[0], ", |Y| = ", p[1], ", ", padding_text(p[2]));
    });
    const std::vector<std::uint64_t>& ring = state_integers(file, prefix + "ring", {m});
    check_below(prefix + "ring", ring, n, "observations");
    const std::uint64_t head = state_integer(file, prefix + "head");
    if (head >= m) invalid("load_state: ", prefix, "head: ", head, " is no position of a ring of m = ", m);
    const std::uint64_t count = state_integer(file, prefix + "count");
    if (count > m) invalid("load_state: ", prefix, "count: ", count, " observations, but the window holds m = ", m);
    if (w.padding_ == WindowPadding::repeat_first && count != 0 && count != m)
      invalid("load_state: ", prefix, "count: ", count, ", but a window padded with repeat_first holds 0 or m = ", m);
    // A short zero-padded window has written ring[0, count) so far: the next is at count.
    if (w.padding_ == WindowPadding::zero && count != 0 && count < m && head != count)
      invalid("load_state: ", prefix, "head: ", head, ", but a zero-padded window of ", count,
              " observations writes the next at ", count);
    const std::uint64_t index = state_integer(file, prefix + "index");
    if (index >= w.table_size_)
      invalid("load_state: ", prefix, "index: ", index, ", out of range [0, ", w.table_size_, ") (the table)");
    // The digits y_0 + y_{-1}|Y| + ... of the count newest observations, newest at head - 1.
    std::size_t digits = 0;
    for (std::size_t k = 0; k < count; ++k) digits += ring[(head + 2 * m - 1 - k) % m] * w.power_[k];
    if (count != 0 && index != w.offset_[count] + digits)
      invalid("load_state: ", prefix, "index: ", index, ", but the window of ring, head and count has index ",
              w.offset_[count] + digits);
    std::copy(ring.begin(), ring.end(), w.ring_.begin());  // m entries: no allocation
    w.head_ = head;
    w.count_ = count;
    w.digits_ = digits;
    w.phi_.index = index;
  }

 private:
  [[nodiscard]] static std::vector<std::uint64_t> parameters(const memory_type& w) {
    return {w.length_, w.num_observations_, static_cast<std::uint64_t>(w.padding_)};
  }
};

/// ConcatWindow<Length, NumObservations>, m = length(), |Y| = num_observations():
///   parameters    U64 [3]      m, |Y|, padding (0 repeat_first, 1 zero);
///   count         U64 []       the observations in the window (0 before a history; padded with
///                              repeat_first, 0 or m);
///   observations  U64 [count]  y_0, y_{-1}, ..., newest first (features() has k|Y| + y_{-k}).
template <int Length, int NumObservations>
struct CheckpointState<ConcatWindow<Length, NumObservations>> {
  using memory_type = ConcatWindow<Length, NumObservations>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& w) {
    const std::size_t count = w.phi_.size();
    std::vector<std::uint64_t> observations(count);
    for (std::size_t k = 0; k < count; ++k) observations[k] = w.phi_[k] - k * w.num_observations_;
    put_integers(file, prefix + "parameters", {3}, parameters(w));
    put_integers(file, prefix + "count", {}, {count});
    put_integers(file, prefix + "observations", {count}, std::move(observations));
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& w) {
    const std::size_t m = w.length_, n = w.num_observations_;
    check_parameters(file, prefix + "parameters", "a ConcatWindow", parameters(w),
                     [](const std::vector<std::uint64_t>& p) {
                       return message("m = ", p[0], ", |Y| = ", p[1], ", ", padding_text(p[2]));
                     });
    const std::uint64_t count = state_integer(file, prefix + "count");
    if (count > m) invalid("load_state: ", prefix, "count: ", count, " observations, but the window holds m = ", m);
    if (w.padding_ == WindowPadding::repeat_first && count != 0 && count != m)
      invalid("load_state: ", prefix, "count: ", count, ", but a window padded with repeat_first holds 0 or m = ", m);
    const std::vector<std::uint64_t>& observations = state_integers(file, prefix + "observations", {count});
    check_below(prefix + "observations", observations, n, "observations");
    for (std::size_t k = 0; k < count; ++k) w.phi_[k] = k * n + observations[k];  // capacity m: no allocation
    w.phi_.set_size_unchecked(count);
  }

 private:
  [[nodiscard]] static std::vector<std::uint64_t> parameters(const memory_type& w) {
    return {w.length_, w.num_observations_, static_cast<std::uint64_t>(w.padding_)};
  }
};

/// FrameStack<Y>, m = length() frames of d = observation_dim() entries. Dense frames (float or double):
///   parameters  U64 [3]         m, d, padding (0 repeat_first, 1 zero);
///   frames      F32/F64 [m, d]  the frames y_0, y_{-1}, ..., newest first (features()), in their scalar;
///   started     U64 []          1 once a history has started (before, every frame is zero).
/// MultiHot frames:
///   parameters  U64 [4]         m, d, padding, the most active entries a frame may have;
///   counts      U64 [m]         each frame's number of active entries, newest first;
///   active      U64 [Σ counts]  each frame's active indices in [0, d), distinct, newest frame first;
///   started     U64 []          1 once a history has started (before, no frame has an active entry).
template <class Y>
struct CheckpointState<FrameStack<Y>> {
  using memory_type = FrameStack<Y>;
  using scalar = typename memory_type::scalar;
  static constexpr bool sparse = memory_type::sparse;

  static void save(TensorFile& file, const std::string& prefix, const memory_type& s) {
    const std::size_t m = s.length_, d = s.dim_;
    put_integers(file, prefix + "parameters", {parameters(s).size()}, parameters(s));
    if constexpr (sparse) {
      std::vector<std::uint64_t> counts(m), active(s.phi_.size());
      std::size_t j = 0;
      for (std::size_t k = 0; k < m; ++k) {
        counts[k] = s.counts_[(s.head_ + k) % m];  // the ring's frame at lag k
        for (std::size_t i = 0; i < counts[k]; ++i, ++j) active[j] = s.phi_[j] - k * d;
      }
      put_integers(file, prefix + "counts", {m}, std::move(counts));
      const std::size_t total = active.size();  // before the move: arguments have no order
      put_integers(file, prefix + "active", {total}, std::move(active));
    } else {
      put_reals<scalar>(file, prefix + "frames", {m, d}, {s.phi_.data(), s.phi_.data() + s.phi_.size()});
    }
    put_integers(file, prefix + "started", {}, {s.started_ ? 1u : 0u});
  }

  static void load(const TensorFile& file, const std::string& prefix, memory_type& s) {
    const std::size_t m = s.length_, d = s.dim_;
    check_parameters(
        file, prefix + "parameters", "a FrameStack", parameters(s), [](const std::vector<std::uint64_t>& p) {
          return message("m = ", p[0], " frames of d = ", p[1], ", ", padding_text(p[2]),
                         p.size() > 3 ? message(", at most ", p[3], " active entries a frame") : std::string());
        });
    if constexpr (sparse) {
      const std::vector<std::uint64_t>& counts = state_integers(file, prefix + "counts", {m});
      check_below(prefix + "counts", counts, s.max_active_ + 1, "active entries of a frame");
      std::size_t total = 0;
      for (const std::uint64_t c : counts) total += c;  // at most m·max_active_: no overflow
      const std::vector<std::uint64_t>& active = state_integers(file, prefix + "active", {total});
      check_below(prefix + "active", active, d, "entries of a frame");
      // A frame's active entries are distinct (MultiHot's invariant).
      std::vector<std::uint64_t> frame;
      for (std::size_t k = 0, j = 0; k < m; j += counts[k++]) {
        frame.assign(active.begin() + static_cast<std::ptrdiff_t>(j),
                     active.begin() + static_cast<std::ptrdiff_t>(j + counts[k]));
        std::sort(frame.begin(), frame.end());
        if (const auto twice = std::adjacent_find(frame.begin(), frame.end()); twice != frame.end())
          invalid("load_state: ", prefix, "active: frame ", k, " has the active entry ", *twice, " twice");
      }
      const bool started = state_flag(file, prefix + "started");
      if (!started && total != 0)
        invalid("load_state: ", prefix, "counts: ", total,
                " active entries but started is 0: a stack that has seen nothing has none");
      for (std::size_t k = 0, j = 0; k < m; ++k) {  // into the buffers of m·max_active_: no allocation
        s.counts_[k] = counts[k];
        for (std::size_t i = 0; i < counts[k]; ++i, ++j) s.phi_[j] = k * d + active[j];
      }
      s.phi_.set_size_unchecked(total);
      s.head_ = 0;  // the ring restarts at 0 with the frames in lag order: the same features
      s.started_ = started;
    } else {
      const std::vector<double>& frames = state_reals<scalar>(file, prefix + "frames", {m, d});
      const bool started = state_flag(file, prefix + "started");
      if (!started)
        for (std::size_t i = 0; i < frames.size(); ++i)
          if (frames[i] != 0.0)
            invalid("load_state: ", prefix, "frames: entry ", i, " is ", frames[i],
                    " but started is 0: a stack that has seen nothing holds zero frames");
      for (std::size_t i = 0; i < frames.size(); ++i)
        s.phi_[static_cast<Eigen::Index>(i)] = static_cast<scalar>(frames[i]);
      s.started_ = started;
    }
  }

 private:
  [[nodiscard]] static std::vector<std::uint64_t> parameters(const memory_type& s) {
    std::vector<std::uint64_t> p{s.length_, s.dim_, static_cast<std::uint64_t>(s.padding_)};
    if constexpr (sparse) p.push_back(s.max_active_);
    return p;
  }
};

/// WithActions<M>, for a checkpointable M:
///   parameters  U64 [2]  |Y|, |U|;
///   memory.*             the wrapped memory's state (save_state under prefix + "memory.").
/// The joint symbols hold no state of their own: M's is the whole.
template <class M>
requires Checkpointable<M>
struct CheckpointState<WithActions<M>> {
  using memory_type = WithActions<M>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& w) {
    put_integers(file, prefix + "parameters", {2}, {w.num_observations_, w.num_actions_});
    save_state(file, prefix + "memory.", w.memory_);
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& w) {
    check_parameters(file, prefix + "parameters", "a WithActions",
                     std::vector<std::uint64_t>{w.num_observations_, w.num_actions_},
                     [](const std::vector<std::uint64_t>& p) { return message("|Y| = ", p[0], ", |U| = ", p[1]); });
    load_state(file, prefix + "memory.", w.memory_);  // all or nothing itself: the last step
  }
};

/// AppendAction<M>, for a checkpointable M:
///   parameters  U64 [2]  d, |U|;
///   memory.*             the wrapped memory's state (save_state under prefix + "memory.").
/// The buffers [y; e_u] are rewritten before each use: no state.
template <class M>
requires Checkpointable<M>
struct CheckpointState<AppendAction<M>> {
  using memory_type = AppendAction<M>;
  static void save(TensorFile& file, const std::string& prefix, const memory_type& a) {
    put_integers(file, prefix + "parameters", {2}, {a.observation_dim_, a.num_actions_});
    save_state(file, prefix + "memory.", a.memory_);
  }
  static void load(const TensorFile& file, const std::string& prefix, memory_type& a) {
    check_parameters(file, prefix + "parameters", "an AppendAction",
                     std::vector<std::uint64_t>{a.observation_dim_, a.num_actions_},
                     [](const std::vector<std::uint64_t>& p) { return message("d = ", p[0], ", |U| = ", p[1]); });
    load_state(file, prefix + "memory.", a.memory_);  // all or nothing itself: the last step
  }
};

}  // namespace memtrace::detail
