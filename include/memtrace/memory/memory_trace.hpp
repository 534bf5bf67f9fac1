#pragma once
// MemoryTrace: the exponential moving average of observations (the paper's eq. (1)),
//   z_t = λ z_{t-1} + (1 - λ) y_t,
// of index observations (the one-hot y_t = e_{y_t}), dense Eigen vectors or sparse MultiHot vectors,
// with λ fixed at compile time (a std::ratio, so λ ∈ ℚ as Theorem 4.1 asks) or chosen at run
// time (memtrace::dynamic_lambda). One implementation serves both. See docs/memory.md.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <ratio>
#include <type_traits>

#include "memtrace/features.hpp"
#include "memtrace/memory/vector_observation.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// How a trace starts a history (what reset(y0) makes of the time before y_0).
enum class TraceInit {
  /// z_{-1} = 0: the finite-history trace of eq. (2), z_0 = (1 - λ) e_{y_0}; entries sum to 1 - λ^{t+1}.
  zero,
  /// z_{-1} = e_{y_0}: as if y_0 had been observed forever, z_0 = e_{y_0} (the paper's analysis code).
  first_observation,
  /// The trace divided by the weight accumulated so far, (1-λ) Σ_{k≤t} λ^k e_{y_{t-k}} / (1 - λ^{t+1})
  /// (the paper's episodic variant): an average of what was seen; entries always sum to 1.
  normalized,
};

namespace detail {

template <class L>
struct is_ratio : std::false_type {};
template <std::intmax_t N, std::intmax_t D>
struct is_ratio<std::ratio<N, D>> : std::true_type {};

/// 0 <= λ < 1 for a std::ratio; true for anything else, which the check of is_ratio refuses alone.
template <class L>
constexpr bool ratio_in_unit_interval() {
  if constexpr (is_ratio<L>::value)
    return L::num >= 0 && L::num < L::den;
  else
    return true;
}

/// λ as a compile-time constant (std::ratio) or a run-time value (dynamic_lambda).
template <class Lambda>
class LambdaValue {
  static_assert(is_ratio<Lambda>::value, "MemoryTrace: Lambda must be a std::ratio<p, q> or memtrace::dynamic_lambda");
  static_assert(ratio_in_unit_interval<Lambda>(), "MemoryTrace: a compile-time lambda must be in [0, 1)");

 public:
  static constexpr bool is_dynamic = false;
  static constexpr double value() noexcept {
    return static_cast<double>(Lambda::num) / static_cast<double>(Lambda::den);
  }
};

template <>
class LambdaValue<dynamic_lambda> {
 public:
  static constexpr bool is_dynamic = true;
  /// `who` names the public class in the message (MemoryTrace, TraceTd).
  explicit LambdaValue(double lambda, const char* who = "MemoryTrace") : lambda_(lambda) { check_lambda(who, lambda); }
  [[nodiscard]] double value() const noexcept { return lambda_; }

 private:
  double lambda_;
};

/// The coefficients (a, b) of z <- a z + b e_y for the next observation, per TraceInit. Only the
/// normalised trace has time-varying coefficients; it keeps λ^{t+1}.
class TraceStep {
 public:
  explicit TraceStep(TraceInit init) noexcept : init_(init) {}
  [[nodiscard]] TraceInit init() const noexcept { return init_; }

  /// Coefficient of e_{y_0} when a history starts (z_{-1} is then set to zero by the caller).
  [[nodiscard]] double start(double lambda) noexcept {
    power_ = lambda;  // λ^{t+1} at t = 0
    return init_ == TraceInit::zero ? 1.0 - lambda : 1.0;
  }

  struct Coefficients {
    double a, b;
  };

  /// Coefficients of the next step. The normalised trace divides by the weight w_t = 1 - λ^{t+1}:
  /// a = λ w_{t-1} / w_t = (λ - λ^{t+1}) / w_t and b = (1 - λ) / w_t.
  /// Once λ^{t+1} < λ 2^-60 it no longer changes a or b in double precision; it is then set to 0
  /// so that it never becomes subnormal (which would slow each step down ~20-fold).
  [[nodiscard]] Coefficients next(double lambda) noexcept {
    if (init_ != TraceInit::normalized || power_ == 0.0) return {lambda, 1.0 - lambda};
    power_ *= lambda;
    if (power_ < lambda * 0x1p-60) power_ = 0.0;
    const double inverse_weight = 1.0 / (1.0 - power_);
    return {(lambda - power_) * inverse_weight, (1.0 - lambda) * inverse_weight};
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  TraceInit init_;
  double power_ = 1.0;
};

/// The names a trace memory's messages use.
struct TraceNames {
  const char* type;    // the class, in index-observation messages
  const char* reset;   // its reset, in vector-observation messages
  const char* update;  // its update
};

}  // namespace detail

// CRTP bases live in a namespace of their own: a base class's namespace joins argument-dependent
// lookup for every object of the derived class, and detail's helpers should not.
namespace detail::crtp {

/// The one implementation of the trace update (eq. (1)) and of the Memory interface, shared
/// by MemoryTrace (one trace) and TraceBank (one block of features() per λ). Derived supplies
/// for_each_trace(f), calling f(block, step, λ) for each trace (a block of z_, its TraceStep and
/// its λ), observation_dim(), and the names its messages use (names).
template <class Derived, class Scalar, int NumObservations, int FeatureSize>
class TraceMemory {
 public:
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = true;
  using scalar_type = Scalar;
  using features_type = Eigen::Matrix<Scalar, FeatureSize, 1>;

  // A real number is no index (it would be truncated to one): a scalar observation is a 1-vector.
  template <std::floating_point F>
  void reset(F) = delete;  // a real number is no index; pass Eigen::Matrix<Scalar, 1, 1>
  template <std::floating_point F>
  void update(F) = delete;  // a real number is no index; pass Eigen::Matrix<Scalar, 1, 1>
  // A dense vector of another scalar type is refused at compile time (no silent conversion):
  template <class D>
  requires DenseObservationNotOf<D, Scalar>
  void reset(const Eigen::MatrixBase<D>& y0) = delete;  // another scalar type: pass y.template cast<Scalar>()
  template <class D>
  requires DenseObservationNotOf<D, Scalar>
  void update(const Eigen::MatrixBase<D>& y) = delete;  // another scalar type: pass y.template cast<Scalar>()

  /// Starts a history whose first observation is y0 (see TraceInit).
  void reset(Observation y0) {
    check_observation(Derived::names.type, y0, self().observation_dim());
    self().for_each_trace([&](auto&& z, TraceStep& step, double lambda) {
      z.setZero();
      z[static_cast<Eigen::Index>(y0)] = static_cast<Scalar>(step.start(lambda));
    });
    started_ = true;
  }
  template <class D>
  requires DenseObservationFor<D, Scalar, NumObservations>
  void reset(const Eigen::MatrixBase<D>& y0) { start(Derived::names.reset, y0); }
  template <int C>
  void reset(const MultiHot<C>& y0) {
    start(Derived::names.reset, y0);
  }

  /// Absorbs the next observation: z <- λ z + (1 - λ) e_y (eq. (1)), in every trace. On a
  /// memory that has seen nothing yet (after construction or clear()) this is reset(y).
  void update(Observation y) {
    if (!started_) return reset(y);
    check_observation(Derived::names.type, y, self().observation_dim());
    self().for_each_trace([&](auto&& z, TraceStep& step, double lambda) {
      const auto [a, b] = step.next(lambda);
      z *= static_cast<Scalar>(a);
      z[static_cast<Eigen::Index>(y)] += static_cast<Scalar>(b);
    });
  }
  /// z <- λ z + (1 - λ) y for a dense y of d finite entries.
  template <class D>
  requires DenseObservationFor<D, Scalar, NumObservations>
  void update(const Eigen::MatrixBase<D>& y) {
    if (!started_) return start(Derived::names.update, y);
    check_dense_observation(Derived::names.update, y, self().observation_dim());
    self().for_each_trace([&](auto&& z, TraceStep& step, double lambda) {
      const auto [a, b] = step.next(lambda);
      z = static_cast<Scalar>(a) * z + static_cast<Scalar>(b) * y;  // coefficient-wise: y may alias z
    });
  }
  /// z <- λ z + (1 - λ) y for a sum of unit vectors y: a scale and one added entry per active index.
  template <int C>
  void update(const MultiHot<C>& y) {
    if (!started_) return start(Derived::names.update, y);
    check_multi_hot_observation(Derived::names.update, y, self().observation_dim());
    self().for_each_trace([&](auto&& z, TraceStep& step, double lambda) {
      const auto [a, b] = step.next(lambda);
      z *= static_cast<Scalar>(a);
      for (const std::size_t i : y) z[static_cast<Eigen::Index>(i)] += static_cast<Scalar>(b);
    });
  }

  /// Forgets everything: the trace of the empty history, z = 0; the next update(y) is reset(y).
  void clear() noexcept {
    z_.setZero();
    started_ = false;
  }

  [[nodiscard]] const features_type& features() const noexcept { return z_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(z_.size()); }

 protected:
  features_type z_;
  bool started_ = false;

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  Derived& self() noexcept { return static_cast<Derived&>(*this); }

  /// reset for vector observations; `who` is the public function called.
  template <class D>
  void start(const char* who, const Eigen::MatrixBase<D>& y0) {
    check_dense_observation(who, y0, self().observation_dim());
    self().for_each_trace(
        [&](auto&& z, TraceStep& step, double lambda) { z = static_cast<Scalar>(step.start(lambda)) * y0; });
    started_ = true;
  }
  template <int C>
  void start(const char* who, const MultiHot<C>& y0) {
    check_multi_hot_observation(who, y0, self().observation_dim());
    self().for_each_trace([&](auto&& z, TraceStep& step, double lambda) {
      z.setZero();
      const auto b = static_cast<Scalar>(step.start(lambda));
      for (const std::size_t i : y0) z[static_cast<Eigen::Index>(i)] += b;
    });
    started_ = true;
  }
};

}  // namespace detail::crtp

/// The memory trace of the paper's eq. (1), z_t = λ z_{t-1} + (1 - λ) y_t, of observations y_t in R^d.
/// Three kinds of observation, freely mixed:
///  - an index y in [0, d): the one-hot vector e_y (d = |Y|), never built: the fast path;
///  - a dense Eigen column vector (any expression) with d entries of type Scalar, all finite;
///  - a MultiHot: a sum of unit vectors (e.g. a one-hot grid view), never built either: an update
///    costs one scale of z plus one added entry per active entry.
/// All three give the same trace to rounding (bit-identical for one-hot vectors).
///
/// Lambda: std::ratio<p, q> with 0 <= p/q < 1 for a compile-time λ, or memtrace::dynamic_lambda.
/// NumObservations: the dimension d at compile time (fixed-size Eigen features), or memtrace::dynamic;
/// for index observations d = |Y|, the number of observations.
/// Scalar: float or double, the type of the features; coefficients are computed in double.
/// Cost: O(d) per update, no allocation after construction. A refused observation (out of range,
/// wrong size, not finite) throws std::invalid_argument and changes nothing. Satisfies Memory for
/// Observation, for dense vectors of Scalar and for MultiHot.
template <class Lambda = dynamic_lambda, int NumObservations = dynamic, class Scalar = double>
class MemoryTrace : public detail::crtp::TraceMemory<MemoryTrace<Lambda, NumObservations, Scalar>, Scalar,
                                                     NumObservations, detail::eigen_size(NumObservations)> {
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "MemoryTrace: NumObservations must be at least 1 or memtrace::dynamic");
  static_assert(detail::TraceScalar<Scalar>, "MemoryTrace: Scalar must be float or double");
  using base = detail::crtp::TraceMemory<MemoryTrace, Scalar, NumObservations, detail::eigen_size(NumObservations)>;
  friend base;
  using lambda_value = detail::LambdaValue<Lambda>;
  static constexpr bool fully_static = !lambda_value::is_dynamic && NumObservations != dynamic;

 public:
  using typename base::features_type;

  /// Run-time λ: MemoryTrace<> trace(0.9, 11).
  MemoryTrace(double lambda, std::size_t num_observations,
              TraceInit init = TraceInit::first_observation) requires lambda_value::is_dynamic : lambda_(lambda),
                                                                                                 step_(init) {
    this->z_ = make_zero(num_observations);
  }

  /// Run-time λ, compile-time d: MemoryTrace<dynamic_lambda, 11> trace(0.9).
  explicit MemoryTrace(double lambda, TraceInit init = TraceInit::first_observation) requires(
      lambda_value::is_dynamic&& NumObservations != dynamic)
      : lambda_(lambda), step_(init) {
    this->z_.setZero();
  }

  /// Compile-time λ: MemoryTrace<std::ratio<9, 10>> trace(11).
  explicit MemoryTrace(std::size_t num_observations,
                       TraceInit init = TraceInit::first_observation) requires(!lambda_value::is_dynamic)
      : step_(init) {
    this->z_ = make_zero(num_observations);
  }

  /// Compile-time λ and d: MemoryTrace<std::ratio<9, 10>, 11> trace.
  MemoryTrace() requires fully_static : MemoryTrace(TraceInit::first_observation) {}
  explicit MemoryTrace(TraceInit init) requires fully_static : step_(init) { this->z_.setZero(); }

  // reset, update (index, dense and MultiHot observations), clear, features and dim: detail::crtp::TraceMemory.

  [[nodiscard]] std::size_t num_observations() const noexcept { return this->dim(); }
  /// The dimension d of the observations (|Y| for index observations); equals dim().
  [[nodiscard]] std::size_t observation_dim() const noexcept { return this->dim(); }
  [[nodiscard]] double lambda() const noexcept { return lambda_.value(); }
  [[nodiscard]] TraceInit init() const noexcept { return step_.init(); }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  static constexpr detail::TraceNames names{"MemoryTrace", "MemoryTrace::reset", "MemoryTrace::update"};

  static features_type make_zero(std::size_t num_observations) {
    detail::check_num_observations("MemoryTrace", num_observations);
    detail::check_fixed_size("MemoryTrace", "num_observations", NumObservations, num_observations);
    detail::check_storage("MemoryTrace", "the trace", num_observations, sizeof(Scalar), "num_observations",
                          num_observations);
    return features_type::Zero(static_cast<Eigen::Index>(num_observations));
  }
  /// One trace: the whole feature vector.
  template <class F>
  void for_each_trace(F&& f) {
    f(this->z_, step_, lambda());
  }

  [[no_unique_address]] lambda_value lambda_;
  detail::TraceStep step_;
};

}  // namespace memtrace
