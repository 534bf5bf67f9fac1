#pragma once
// TraceTd: a memory trace and linear TD(0) on it, fused so that one step costs O(1) instead of
// O(|Y|). Same results as MemoryTrace + LinearTd to rounding (tested); see docs/learners.md for
// the derivation.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>

#include "memtrace/learn/td.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Linear TD(0) on a memory trace, z_t = a_t z_{t-1} + b_t e_{y_t} (eq. (1); a_t = λ, b_t = 1 - λ
/// except for TraceInit::normalized), in O(1) per step.
///
/// The trace is kept as z = s u and the weights as w = c + β u, with the scalars w·z and z·z kept
/// up to date. Absorbing y changes u in one entry (u_y += b_t / s') and s by a factor
/// (s' = a_t s); the TD update w += α δ z adds a multiple of u (into β) and moves one entry of c.
/// When s falls below 2^-16 the representation is folded back (c = w, β = 0, s = 1) in O(|Y|): β
/// holds steps taken while s was near 1 and u grows like 1/s, so c and β u cancel to ~1/s times
/// the weights, and the fold bounds the relative rounding error at ~2^16 ε. With λ = 0.9 that is
/// one fold in ~105 steps; with λ = 0 every step is a fold.
///
/// Lambda and NumObservations as for MemoryTrace. Satisfies MemoryLearner.
template <class Lambda = dynamic_lambda, int NumObservations = dynamic>
class TraceTd {
  using trace_type = MemoryTrace<Lambda, NumObservations>;

 public:
  using vector_type = typename trace_type::features_type;

  /// Run-time λ: TraceTd<> td(0.9, 11, 0.02).
  TraceTd(double lambda, std::size_t num_observations, double step_size,
          TraceInit init = TraceInit::first_observation) requires(std::is_same_v<Lambda, dynamic_lambda>)
      : lambda_(lambda, "TraceTd"), step_(init), step_size_(checked_step_size(step_size)) {
    init_vectors(num_observations);
  }

  /// Compile-time λ: TraceTd<std::ratio<9, 10>, 11> td(11, 0.02).
  TraceTd(std::size_t num_observations, double step_size,
          TraceInit init = TraceInit::first_observation) requires(!std::is_same_v<Lambda, dynamic_lambda>)
      : step_(init), step_size_(checked_step_size(step_size)) {
    init_vectors(num_observations);
  }

  /// Starts a history with y0 (as MemoryTrace::reset); the weights are kept.
  void reset(Observation y0) {
    check("TraceTd::reset", y0);
    fold();
    u_.setZero();
    u_[index(y0)] = step_.start(lambda());
    scale_ = 1.0;
    recompute();
    started_ = true;
  }

  /// Absorbs the next observation y and learns from the transition z -> z' with this reward and
  /// this transition's discount (0 after a terminal step). Returns the TD error δ. Before any
  /// reset (a trace that has seen nothing) this is reset(y), learns nothing and returns 0.
  double learn(Observation y, double reward, double discount) {
    if (!std::isfinite(reward)) [[unlikely]]
      detail::invalid("TraceTd::learn: reward must be finite, got ", reward, "; nothing was changed");
    return learn(y, reward, discount, detail::reward_finite);
  }

  /// The same step for a loop that has checked once per step that the reward is finite (shared by
  /// all the learners it feeds).
  double learn(Observation y, double reward, double discount, detail::RewardFinite) {
    check("TraceTd::learn", y);
    detail::check_step_discount("TraceTd::learn", discount);
    if (!started_) [[unlikely]] {
      reset(y);
      return 0.0;
    }
    const auto [a, b] = step_.next(lambda());
    const double scale_next = a * scale_;
    if (!(scale_next >= min_scale)) [[unlikely]]
      return learn_dense(y, reward, discount, a, b);
    const Eigen::Index i = index(y);
    const double u_y = u_[i];
    const double z_y = scale_ * u_y;
    const double w_y = c_[i] + beta_ * u_y;
    // w·z' = a w·z + b w_y and z·z' = a |z|^2 + b z_y (eq. (1)), with w before the update.
    const double value_next = a * value_ + b * w_y;
    const double delta = reward + discount * value_next - value_;
    const double alpha_delta = step_size_ * delta;
    value_ = value_next + alpha_delta * (a * norm2_ + b * z_y);  // (w + α δ z)·z'
    norm2_ = a * (a * norm2_ + 2.0 * b * z_y) + b * b;
    // u' = u + d e_y with z' = s' u'. w = c + β u + α δ s u = (c - β' d e_y) + β' u' with
    // β' = β + α δ s: β takes the multiple of u', c_y the correction.
    const double d = b / scale_next;
    beta_ += alpha_delta * scale_;
    c_[i] -= d * beta_;
    u_[i] = u_y + d;
    scale_ = scale_next;
    return delta;
  }

  /// Nothing carries over between episodes in TD(0).
  void end_episode() noexcept {}

  /// The current trace z = s u (O(|Y|)).
  [[nodiscard]] vector_type trace() const { return scale_ * u_; }
  /// The current weights w = c + β u (O(|Y|)).
  [[nodiscard]] Eigen::VectorXd weights() const { return c_ + beta_ * u_; }
  /// The current estimate w·z, O(1).
  [[nodiscard]] double value() const noexcept { return value_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(u_.size()); }
  [[nodiscard]] double lambda() const noexcept { return lambda_.value(); }
  [[nodiscard]] double step_size() const noexcept { return step_size_; }

 private:
  static constexpr double min_scale = 0x1p-16;

  void init_vectors(std::size_t num_observations) {
    detail::check_num_observations("TraceTd", num_observations);
    detail::check_fixed_size("TraceTd", "num_observations", NumObservations, num_observations);
    detail::check_storage("TraceTd", "the trace and weights (3 vectors of |Y|)", num_observations,
                          3 * sizeof(typename vector_type::Scalar), "num_observations", num_observations);
    const auto n = static_cast<Eigen::Index>(num_observations);
    u_ = vector_type::Zero(n);
    c_ = vector_type::Zero(n);
    z_ = vector_type::Zero(n);
  }
  static double checked_step_size(double step_size) {
    detail::check_step_size("TraceTd", step_size);
    return step_size;
  }
  void check(const char* who, Observation y) const { detail::check_observation(who, y, dim()); }
  static Eigen::Index index(Observation y) noexcept { return static_cast<Eigen::Index>(y); }

  /// c = w, β = 0.
  void fold() {
    c_ += beta_ * u_;
    beta_ = 0.0;
  }
  void recompute() {
    const double u2 = u_.squaredNorm();
    value_ = scale_ * (c_.dot(u_) + beta_ * u2);
    norm2_ = scale_ * scale_ * u2;
  }

  /// The step in dense form, when s' would underflow: fold, step as MemoryTrace + LinearTd would,
  /// and restart the representation at s = 1.
  double learn_dense(Observation y, double reward, double discount, double a, double b) {
    fold();
    z_ = scale_ * u_;  // a member: no allocation on this path, which λ = 0 takes every step
    u_ = a * z_;
    u_[index(y)] += b;
    scale_ = 1.0;
    const double delta = reward + discount * c_.dot(u_) - c_.dot(z_);
    c_ += (step_size_ * delta) * z_;
    recompute();
    return delta;
  }

  [[no_unique_address]] detail::LambdaValue<Lambda> lambda_;
  detail::TraceStep step_;
  vector_type u_, c_, z_;  // z_: scratch for the dense step
  double scale_ = 1.0, beta_ = 0.0;
  double step_size_;
  double value_ = 0.0;  // w·z
  double norm2_ = 0.0;  // z·z
  bool started_ = false;
};

}  // namespace memtrace
