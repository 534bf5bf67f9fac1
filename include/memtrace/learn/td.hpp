#pragma once
// Linear temporal-difference learners (paper §6, "Temporal difference (TD) learning"). They touch
// feature vectors only through dot and add_scaled (features.hpp), so a TD step on a full window's
// one-hot feature is O(1) and on a memory trace O(|Y|). The caller steps them; loops live in
// loop/run_td.hpp. See docs/learners.md.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "memtrace/concepts.hpp"
#include "memtrace/features.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

inline void check_step_size(const char* who, double step_size) {
  if (!(step_size > 0.0 && step_size < std::numeric_limits<double>::infinity()))
    invalid(who, ": step_size must be positive and finite, got ", step_size);
}

inline void check_dim(const char* who, std::size_t dim) {
  if (dim == 0 || dim > static_cast<std::size_t>(std::numeric_limits<Eigen::Index>::max()))
    invalid(who, ": dim must be in [1, 2^63), got ", dim);
}

/// A reward or a dense feature that is not finite would turn every weight it touches into NaN:
/// refused before anything changes. (Weights that diverge under too large a step size are not an
/// input error: they are left to overflow, and the value errors of analysis/ report them as +inf.)
template <class Phi>
void check_finite_input(const char* who, double reward, const Phi& phi, const char* name) {
  if (!std::isfinite(reward)) [[unlikely]]
    invalid(who, ": reward must be finite, got ", reward, "; nothing was changed");
  if constexpr (requires { phi.allFinite(); })
    if (!phi.allFinite()) [[unlikely]]
      invalid(who, ": ", name, " has a non-finite entry; nothing was changed");
}

/// The discount of one transition: γ in [0, 1], or 0 after a terminal step (no bootstrapping).
inline void check_step_discount(const char* who, double discount) {
  if (!(discount >= 0.0 && discount <= 1.0)) invalid(who, ": discount must be in [0, 1], got ", discount);
}

}  // namespace detail

// CRTP bases live in a namespace of their own: a base class's namespace joins argument-dependent
// lookup for every object of the derived class, and detail's helpers should not.
namespace detail::crtp {

/// What LinearTd and LinearTdLambda share: the weights of a linear estimate (float or double) and
/// the step size that updates them, both validated; the checked update, which refuses what does
/// not fit and then runs Derived's unchecked step update(φ, r, γ, φ', features_fit); the TD error;
/// the value. Derived names itself in who_update and who_value.
template <class Derived, class Scalar>
class LinearLearner {
  static_assert(std::floating_point<Scalar>, "memtrace: a linear learner's Scalar must be float or double");

 public:
  using weights_type = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  /// One step for the transition φ -> φ' with reward r and this transition's discount (γ, or 0
  /// when the step terminated the episode). Returns the TD error δ. Features that do not fit the
  /// weights (an index >= dim(), a dense vector of another length) or are not finite, and a reward
  /// that is not finite, are refused before anything changes.
  template <class Phi, class PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next) {
    if constexpr (!(FeatureVector<Phi, weights_type> && FeatureVector<PhiNext, weights_type>)) {
      diagnose_feature_type<Phi, weights_type>();  // a static_assert that says why
      diagnose_feature_type<PhiNext, weights_type>();
      return 0.0;
    } else {
      constexpr const char* who = Derived::who_update;
      check_fits(who, "phi", phi, dim());
      check_fits(who, "phi_next", phi_next, dim());
      check_finite_input(who, reward, phi, "phi");
      check_finite_input(who, reward, phi_next, "phi_next");
      return static_cast<Derived&>(*this).update(phi, reward, discount, phi_next, features_fit);
    }
  }

  template <FeatureVector<weights_type> Phi>
  [[nodiscard]] double value(const Phi& phi) const {
    check_fits(Derived::who_value, "phi", phi, dim());
    return static_cast<double>(dot(w_, phi));
  }
  [[nodiscard]] const weights_type& weights() const noexcept { return w_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(w_.size()); }
  [[nodiscard]] double step_size() const noexcept { return step_size_; }

 protected:
  LinearLearner(const char* who, std::size_t dim, double step, double initial_weight) : step_size_(step) {
    check_step_size(who, step);
    check_dim(who, dim);
    if (!std::isfinite(initial_weight)) invalid(who, ": initial_weight must be finite, got ", initial_weight);
    check_storage(who, "the weights", dim, sizeof(Scalar), "dim", dim);
    w_ = weights_type::Constant(static_cast<Eigen::Index>(dim), static_cast<Scalar>(initial_weight));
  }
  LinearLearner(const char* who, weights_type initial_weights, double step) : step_size_(step) {
    check_step_size(who, step);
    check_dim(who, static_cast<std::size_t>(initial_weights.size()));
    if (!initial_weights.allFinite()) invalid(who, ": initial weights must be finite");
    w_ = std::move(initial_weights);
  }

  /// δ = r + γ w·φ' - w·φ of one transition, its discount checked.
  template <class Phi, class PhiNext>
  [[nodiscard]] double td_error(const Phi& phi, double reward, double discount, const PhiNext& phi_next) const {
    check_step_discount(Derived::who_update, discount);
    return reward + discount * static_cast<double>(dot(w_, phi_next)) - static_cast<double>(dot(w_, phi));
  }

  double step_size_;
  weights_type w_;
};

}  // namespace detail::crtp

/// Linear TD(0): w <- w + α δ φ with δ = r + γ w·φ' - w·φ, for any FeatureVector φ.
/// Cost per update: two dot products and one add_scaled (O(1) for OneHot features).
/// Scalar: double (the default) or float; dense features must have the same scalar.
/// update(φ, r, γ, φ') (checked), value, weights, dim, step_size: detail::crtp::LinearLearner.
template <class Scalar = double>
class LinearTd : public detail::crtp::LinearLearner<LinearTd<Scalar>, Scalar> {
  using base = detail::crtp::LinearLearner<LinearTd, Scalar>;
  friend base;

 public:
  using typename base::weights_type;

  /// dim weights, all initial_weight.
  LinearTd(std::size_t dim, double step_size, double initial_weight = 0.0)
      : base("LinearTd", dim, step_size, initial_weight) {}
  LinearTd(weights_type initial_weights, double step_size) : base("LinearTd", std::move(initial_weights), step_size) {}

  /// The TD(0) step of update() without the checks of φ, φ' and r, for loops that checked once per
  /// run that the memory's dim() is the learner's (a FeaturesFitDim memory's features fit it and
  /// are finite) and once per step that the reward is finite.
  template <FeatureVector<weights_type> Phi, FeatureVector<weights_type> PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next, detail::FeaturesFit) {
    const double delta = this->td_error(phi, reward, discount, phi_next);
    add_scaled(this->w_, static_cast<Scalar>(this->step_size_ * delta), phi);
    return delta;
  }

  /// Nothing carries over between episodes in TD(0); present so loops can treat learners alike.
  void end_episode() noexcept {}
  using base::update;  // the checked one

 private:
  static constexpr const char* who_update = "LinearTd::update";
  static constexpr const char* who_value = "LinearTd::value";
};

/// Linear TD(κ) with accumulating eligibility traces (Sutton & Barto §12.2):
///   e <- γ_prev κ e + φ,   δ = r + γ w·φ' - w·φ,   w <- w + α δ e,
/// where γ_prev is the discount of the previous transition, so a terminal step (discount 0)
/// clears the eligibility for the next episode by itself. κ is the eligibility_decay, named so that
/// it is never confused with the memory trace's λ. Cost O(dim) per update, whatever the features.
/// update(φ, r, γ, φ') (checked), value, weights, dim, step_size: detail::crtp::LinearLearner.
template <class Scalar = double>
class LinearTdLambda : public detail::crtp::LinearLearner<LinearTdLambda<Scalar>, Scalar> {
  using base = detail::crtp::LinearLearner<LinearTdLambda, Scalar>;
  friend base;

 public:
  using typename base::weights_type;

  LinearTdLambda(std::size_t dim, double step_size, double eligibility_decay, double initial_weight = 0.0)
      : base("LinearTdLambda", dim, step_size, initial_weight),  // checks the storage of each of w and e
        eligibility_decay_(checked_decay(eligibility_decay)),
        e_(weights_type::Zero(static_cast<Eigen::Index>(dim))) {}
  LinearTdLambda(weights_type initial_weights, double step_size, double eligibility_decay)
      : base("LinearTdLambda", std::move(initial_weights), step_size),
        eligibility_decay_(checked_decay(eligibility_decay)),
        e_(weights_type::Zero(this->w_.size())) {}

  using base::update;
  /// The TD(κ) step of update() without the checks of φ, φ' and r (see LinearTd's).
  template <FeatureVector<weights_type> Phi, FeatureVector<weights_type> PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next, detail::FeaturesFit) {
    const double delta = this->td_error(phi, reward, discount, phi_next);
    e_ *= static_cast<Scalar>(previous_discount_ * eligibility_decay_);
    add_scaled(e_, Scalar{1}, phi);
    this->w_.noalias() += static_cast<Scalar>(this->step_size_ * delta) * e_;
    previous_discount_ = discount;
    return delta;
  }

  /// Ends an episode that was cut (truncated) rather than terminated: no eligibility carries over.
  void end_episode() noexcept { previous_discount_ = 0.0; }

  [[nodiscard]] const weights_type& eligibility() const noexcept { return e_; }
  [[nodiscard]] double eligibility_decay() const noexcept { return eligibility_decay_; }

 private:
  static constexpr const char* who_update = "LinearTdLambda::update";
  static constexpr const char* who_value = "LinearTdLambda::value";
  static double checked_decay(double decay) {
    if (!(decay >= 0.0 && decay <= 1.0))
      detail::invalid("LinearTdLambda: eligibility_decay must be in [0, 1], got ", decay);
    return decay;
  }

  double eligibility_decay_;
  weights_type e_;
  double previous_discount_ = 0.0;
};

}  // namespace memtrace
