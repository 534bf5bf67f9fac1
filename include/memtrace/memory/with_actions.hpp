#pragma once
// Memories of actions as well as observations (paper §3: windows and traces "can be extended to
// include past actions"):
//   WithActions<M>:  any memory of index observations over joint (action, observation) symbols;
//   AppendAction<M>: any memory of vectors fed [y; e_u], the observation with the one-hot of the
//                    action that led to it appended (zero for "none"), so that a trace of it holds
//                    the trace of observations next to the trace of actions.
// See docs/memory.md.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include "memtrace/concepts.hpp"
#include "memtrace/features.hpp"
#include "memtrace/memory/vector_observation.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Feeds a memory the joint symbol s = y + |Y|·u of each observation y and the action u that led
/// to it; the first observation of a history, which no action led to, gets u = |U| ("none").
/// The wrapped memory must therefore be built over num_symbols(|Y|, |U|) = |Y|(|U| + 1)
/// observations. A memory trace of joint symbols holds the trace of observations (sum of its |U|+1
/// blocks of |Y| entries) and the trace of actions (the sums within blocks) as linear functions of
/// it, so a linear learner loses nothing against separate traces. Satisfies ObservationActionMemory.
template <Memory M>
class WithActions {
 public:
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = FeaturesFitDim<M>;
  /// |Y|(|U| + 1); throws if it overflows std::size_t.
  [[nodiscard]] static std::size_t num_symbols(std::size_t num_observations, std::size_t num_actions) {
    const std::size_t symbols = detail::checked_mul(num_observations, detail::checked_add(num_actions, 1));
    if (symbols == 0 && num_observations != 0)
      detail::invalid("WithActions: |Y|(|U| + 1) with |Y| = ", num_observations, " and |U| = ", num_actions,
                      " overflows std::size_t");
    return symbols;
  }

  WithActions(M memory, std::size_t num_observations, std::size_t num_actions)
      : memory_(std::move(memory)), num_observations_(num_observations), num_actions_(num_actions) {
    detail::check_num_observations("WithActions", num_observations);
    if (num_actions == 0) detail::invalid("WithActions: num_actions must be at least 1, got 0");
    const std::size_t symbols = num_symbols(num_observations, num_actions);
    if constexpr (requires { memory_.num_observations(); })
      if (memory_.num_observations() != symbols)
        detail::invalid("WithActions: the memory must be built over |Y|(|U| + 1) = ", symbols,
                        " symbols, but it has num_observations = ", memory_.num_observations());
  }

  void reset(Observation y0) {
    detail::check_observation("WithActions", y0, num_observations_);
    memory_.reset(symbol(num_actions_, y0));
  }

  /// Absorbs the action u taken after the previous observation and the observation y it led to.
  void update(Action u, Observation y) {
    if (u >= num_actions_) detail::invalid("WithActions: action must be in [0, ", num_actions_, "), got ", u);
    detail::check_observation("WithActions", y, num_observations_);
    memory_.update(symbol(u, y));
  }

  // Joint symbols need index observations:
  template <detail::NotObservationIndex Y>
  void reset(const Y&) = delete;  // WithActions takes indices: for vectors use AppendAction
  template <detail::NotObservationIndex Y>
  void update(Action, const Y&) = delete;  // WithActions takes indices: for vectors use AppendAction

  /// The joint symbol of action u (u = num_actions() for "no action") and observation y.
  [[nodiscard]] std::size_t symbol(Action u, Observation y) const noexcept { return y + num_observations_ * u; }

  [[nodiscard]] decltype(auto) features() const noexcept(noexcept(std::declval<const M&>().features())) {
    return memory_.features();
  }
  [[nodiscard]] std::size_t dim() const { return memory_.dim(); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  [[nodiscard]] std::size_t num_actions() const noexcept { return num_actions_; }
  [[nodiscard]] const M& memory() const noexcept { return memory_; }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  M memory_;
  std::size_t num_observations_;
  std::size_t num_actions_;
};

namespace detail {

/// The scalar type of a memory's dense features, or double if its features are not dense.
template <class M>
struct feature_scalar {
  using type = double;
};
template <class M>
requires requires { typename features_t<M>::Scalar; }
struct feature_scalar<M> {
  using type = typename features_t<M>::Scalar;
};

/// Whether memory M takes observations of type Y (reset and update).
template <class M, class Y>
concept TakesObservation = requires(M& m, const Y& y) {
  m.reset(y);
  m.update(y);
};

/// Whether memory M can forget everything (clear()).
template <class M>
concept Clearable = requires(M& m) {
  m.clear();
};

/// The capacity of MultiHot<C> with one more active entry (the action's).
template <int C>
inline constexpr int with_action_capacity = C == dynamic ? dynamic : C + 1;

}  // namespace detail

/// Feeds a memory of vectors the observation with the one-hot vector of the action that led to it
/// appended: [y; e_u] in R^{d + |U|}, where d is the observation dimension and |U| the number of
/// actions, and [y; 0] ("none") for the first observation of a history (reset). A MemoryTrace or
/// TraceBank over it therefore holds, in each block of d + |U| entries, the trace of observations
/// followed by the trace of actions (1 - λ) Σ_k λ^k e_{u_{t-k}} (the action that led to y_0 being
/// none); a FrameStack over it stacks [y; e_u] frames.
///
/// Observations: dense Eigen vectors of the memory's scalar with d finite entries (copied with the
/// action into a buffer of d + |U| entries, O(d + |U|)), MultiHot<C> (fed as MultiHot<C + 1> with
/// the extra active entry d + u; no dense vector is built), or indices in [0, d) (fed as the
/// MultiHot<2> e_y + e_{d+u}); each kind only if M takes what it is fed. M must take observations
/// of dimension d + |U| (checked when M has observation_dim()).
///
/// After clear() (or on a fresh memory), update(u, y) starts a history with [y; e_u]: the paper's
/// PPO code starts every episode that way, with the previous episode's last action; reset(y0)
/// starts it with none. There is no update without an action: every step follows an action.
/// A refused argument throws std::invalid_argument and changes nothing. Satisfies
/// ObservationActionMemory (and, unlike WithActions, works for vectors; WithActions uses joint
/// symbols y + |Y|u for index memories such as Window).
template <class M>
class AppendAction {
 public:
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = FeaturesFitDim<M>;
  using memory_type = M;
  /// The scalar of dense observations: that of M's features (double if they are not dense).
  using scalar_type = typename detail::feature_scalar<M>::type;
  /// What M is fed for a dense observation.
  using dense_type = Eigen::Matrix<scalar_type, Eigen::Dynamic, 1>;

  AppendAction(M memory, std::size_t observation_dim, std::size_t num_actions)
      : memory_(std::move(memory)), observation_dim_(observation_dim), num_actions_(num_actions) {
    if (observation_dim == 0) detail::invalid("AppendAction: observation_dim must be at least 1, got 0");
    if (num_actions == 0) detail::invalid("AppendAction: num_actions must be at least 1, got 0");
    if (observation_dim > static_cast<std::size_t>(std::numeric_limits<Eigen::Index>::max()) - num_actions)
      detail::invalid("AppendAction: observation_dim + num_actions with observation_dim = ", observation_dim,
                      " and num_actions = ", num_actions, " overflows the index type");
    const std::size_t dim = observation_dim + num_actions;
    if constexpr (requires { memory_.observation_dim(); })
      if (memory_.observation_dim() != dim)
        detail::invalid("AppendAction: the memory must take observations of dimension d + |U| = ", dim,
                        ", but it has observation_dim = ", memory_.observation_dim());
    if constexpr (detail::TakesObservation<M, dense_type>) dense_ = dense_type::Zero(static_cast<Eigen::Index>(dim));
    if constexpr (detail::TakesObservation<M, MultiHot<dynamic>>) sparse_ = MultiHot<dynamic>(observation_dim + 1);
  }

  // A real number is no index (it would be truncated to one): a scalar observation is a 1-vector.
  template <std::floating_point F>
  void reset(F) = delete;  // AppendAction: a real number is no index; pass a 1-vector
  template <std::floating_point F>
  void update(Action, F) = delete;  // AppendAction: a real number is no index; pass a 1-vector

  /// Starts a history with [y0; 0]: no action led to y0.
  void reset(Observation y0) requires detail::TakesObservation<M, MultiHot<2>> {
    memory_.reset(index_observation("AppendAction::reset", none, y0));
  }
  template <class D>
  requires detail::DenseObservationOf<D, scalar_type> && detail::TakesObservation<M, dense_type>
  void reset(const Eigen::MatrixBase<D>& y0) { memory_.reset(dense_observation("AppendAction::reset", none, y0)); }
  template <int C>
  requires detail::TakesObservation<M, MultiHot<detail::with_action_capacity<C>>>
  void reset(const MultiHot<C>& y0) {
    feed_multi_hot("AppendAction::reset", none, y0, [this](const auto& y) { memory_.reset(y); });
  }

  /// Absorbs the action u in [0, |U|) taken after the previous observation and the observation y
  /// it led to: M absorbs [y; e_u].
  void update(Action u, Observation y) requires detail::TakesObservation<M, MultiHot<2>> {
    check_action(u);
    memory_.update(index_observation("AppendAction::update", u, y));
  }
  template <class D>
  requires detail::DenseObservationOf<D, scalar_type> && detail::TakesObservation<M, dense_type>
  void update(Action u, const Eigen::MatrixBase<D>& y) {
    check_action(u);
    memory_.update(dense_observation("AppendAction::update", u, y));
  }
  template <int C>
  requires detail::TakesObservation<M, MultiHot<detail::with_action_capacity<C>>>
  void update(Action u, const MultiHot<C>& y) {
    check_action(u);
    feed_multi_hot("AppendAction::update", u, y, [this](const auto& a) { memory_.update(a); });
  }

  /// Forgets everything (if M can): the next update(u, y) starts a history with [y; e_u].
  void clear() requires detail::Clearable<M> { memory_.clear(); }

  [[nodiscard]] decltype(auto) features() const noexcept(noexcept(std::declval<const M&>().features())) {
    return memory_.features();
  }
  [[nodiscard]] std::size_t dim() const { return memory_.dim(); }
  /// d, the dimension of the observations (without the action).
  [[nodiscard]] std::size_t observation_dim() const noexcept { return observation_dim_; }
  [[nodiscard]] std::size_t num_actions() const noexcept { return num_actions_; }
  [[nodiscard]] const M& memory() const noexcept { return memory_; }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  static constexpr Action none = static_cast<Action>(-1);

  void check_action(Action u) const {
    if (u >= num_actions_) detail::invalid("AppendAction::update: action must be in [0, ", num_actions_, "), got ", u);
  }

  [[nodiscard]] MultiHot<2> index_observation(const char* who, Action u, Observation y) const {
    if (y >= observation_dim_) detail::invalid(who, ": observation must be in [0, ", observation_dim_, "), got ", y);
    MultiHot<2> a;
    a[0] = y;
    a[1] = observation_dim_ + u;
    a.set_size(u == none ? 1 : 2);
    return a;
  }

  template <class D>
  [[nodiscard]] const dense_type& dense_observation(const char* who, Action u, const Eigen::MatrixBase<D>& y) {
    detail::check_dense_observation(who, y, observation_dim_);
    const auto d = static_cast<Eigen::Index>(observation_dim_);
    dense_.head(d) = y;
    dense_.tail(static_cast<Eigen::Index>(num_actions_)).setZero();
    if (u != none) dense_[d + static_cast<Eigen::Index>(u)] = 1;
    return dense_;
  }

  template <int C, class Feed>
  void feed_multi_hot(const char* who, Action u, const MultiHot<C>& y, Feed feed) {
    const std::size_t n = y.size();
    if constexpr (C == dynamic) {
      detail::check_multi_hot_observation(who, y, observation_dim_, observation_dim_);
      for (std::size_t j = 0; j < n; ++j) sparse_[j] = y[j];
      sparse_[n] = observation_dim_ + u;
      sparse_.set_size(u == none ? n : n + 1);
      feed(sparse_);
    } else {
      detail::check_multi_hot_observation(who, y, observation_dim_);
      MultiHot<C + 1> a;
      for (std::size_t j = 0; j < n; ++j) a[j] = y[j];
      a[n] = observation_dim_ + u;
      a.set_size(u == none ? n : n + 1);
      feed(a);
    }
  }

  M memory_;
  std::size_t observation_dim_;
  std::size_t num_actions_;
  dense_type dense_;            // [y; e_u] for dense observations
  MultiHot<dynamic> sparse_{};  // [y; e_u] for MultiHot<dynamic> observations
};

}  // namespace memtrace
