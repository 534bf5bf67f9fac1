#pragma once
// Linear temporal-difference learners (paper §6, "Temporal difference (TD) learning"). They touch
// feature vectors only through dot and add_scaled (features.hpp), so a TD step on a full window's
// one-hot feature is O(1) and on a memory trace O(|Y|). The caller steps them; loops live in
// experiment/run.hpp. See docs/learners.md.

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

namespace detail {

/// The weights of a linear estimate (float or double) and the step size that updates them, both
/// validated.
template <class Scalar>
struct LinearWeights {
  static_assert(std::floating_point<Scalar>, "memtrace: a linear learner's Scalar must be float or double");
  using vector_type = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  LinearWeights(const char* who, std::size_t dim, double step, double initial_weight) : step_size(step) {
    check_step_size(who, step);
    check_dim(who, dim);
    if (!std::isfinite(initial_weight)) invalid(who, ": initial_weight must be finite, got ", initial_weight);
    check_storage(who, "the weights", dim, sizeof(Scalar), "dim", dim);
    w = vector_type::Constant(static_cast<Eigen::Index>(dim), static_cast<Scalar>(initial_weight));
  }
  LinearWeights(const char* who, vector_type initial_weights, double step) : step_size(step) {
    check_step_size(who, step);
    check_dim(who, static_cast<std::size_t>(initial_weights.size()));
    if (!initial_weights.allFinite()) invalid(who, ": initial weights must be finite");
    w = std::move(initial_weights);
  }
  /// Whether Phi and PhiNext can be used with these weights (else diagnose() says why).
  template <class Phi, class PhiNext>
  static constexpr bool accepts = FeatureVector<Phi, vector_type>&& FeatureVector<PhiNext, vector_type>;
  template <class Phi, class PhiNext>
  static constexpr void diagnose() {
    diagnose_feature_type<Phi, vector_type>();
    diagnose_feature_type<PhiNext, vector_type>();
  }
  /// The checked update of a linear learner (`who` names it): refuses features of a type the
  /// weights do not take (at compile time), features that do not fit the weights and non-finite
  /// input, then runs the learner's unchecked step, learner.update(..., features_fit).
  template <class Learner, class Phi, class PhiNext>
  static double checked_update(const char* who, Learner& learner, const Phi& phi, double reward, double discount,
                               const PhiNext& phi_next) {
    if constexpr (!accepts<Phi, PhiNext>) {
      diagnose<Phi, PhiNext>();  // a static_assert that says why
      return 0.0;
    } else {
      const auto n = static_cast<std::size_t>(learner.dim());
      check_fits(who, "phi", phi, n);
      check_fits(who, "phi_next", phi_next, n);
      check_finite_input(who, reward, phi, "phi");
      check_finite_input(who, reward, phi_next, "phi_next");
      return learner.update(phi, reward, discount, phi_next, features_fit);
    }
  }
  /// The TD error δ = r + γ w·φ' - w·φ of one transition (its discount checked).
  template <class Phi, class PhiNext>
  [[nodiscard]] double td_error(const char* who, const Phi& phi, double reward, double discount,
                                const PhiNext& phi_next) const {
    check_step_discount(who, discount);
    return reward + discount * static_cast<double>(dot(w, phi_next)) - static_cast<double>(dot(w, phi));
  }
  /// w·φ for φ checked to fit.
  template <class Phi>
  [[nodiscard]] double value(const char* who, const Phi& phi) const {
    check_fits(who, "phi", phi, static_cast<std::size_t>(w.size()));
    return static_cast<double>(dot(w, phi));
  }
  double step_size;
  vector_type w;
};

}  // namespace detail

/// Linear TD(0): w <- w + α δ φ with δ = r + γ w·φ' - w·φ, for any FeatureVector φ.
/// Cost per update: two dot products and one add_scaled (O(1) for OneHot features).
/// Scalar: double (the default) or float; dense features must have the same scalar.
template <class Scalar = double>
class LinearTd {
 public:
  using weights_type = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

 private:
  using linear_weights = detail::LinearWeights<Scalar>;

 public:
  /// dim weights, all initial_weight.
  LinearTd(std::size_t dim, double step_size, double initial_weight = 0.0)
      : v_("LinearTd", dim, step_size, initial_weight) {}
  LinearTd(weights_type initial_weights, double step_size) : v_("LinearTd", std::move(initial_weights), step_size) {}

  /// One TD(0) step for the transition φ -> φ' with reward r and this transition's discount
  /// (γ, or 0 when the step terminated the episode). Returns the TD error δ. Features that do
  /// not fit the weights (an index >= dim(), a dense vector of another length) are refused.
  template <class Phi, class PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next) {
    return linear_weights::checked_update("LinearTd::update", *this, phi, reward, discount, phi_next);
  }

  /// The same step without the checks of φ, φ' and r, for loops that checked once per run that the
  /// memory's dim() is the learner's (a FeaturesFitDim memory's features fit it and are finite) and
  /// once per step that the reward is finite.
  template <FeatureVector<weights_type> Phi, FeatureVector<weights_type> PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next, detail::FeaturesFit) {
    const double delta = v_.td_error("LinearTd::update", phi, reward, discount, phi_next);
    add_scaled(v_.w, static_cast<Scalar>(v_.step_size * delta), phi);
    return delta;
  }

  /// Nothing carries over between episodes in TD(0); present so loops can treat learners alike.
  void end_episode() noexcept {}

  template <FeatureVector<weights_type> Phi>
  [[nodiscard]] double value(const Phi& phi) const {
    return v_.value("LinearTd::value", phi);
  }
  [[nodiscard]] const weights_type& weights() const noexcept { return v_.w; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(v_.w.size()); }
  [[nodiscard]] double step_size() const noexcept { return v_.step_size; }

 private:
  linear_weights v_;
};

/// Linear TD(κ) with accumulating eligibility traces (Sutton & Barto §12.2):
///   e <- γ_prev κ e + φ,   δ = r + γ w·φ' - w·φ,   w <- w + α δ e,
/// where γ_prev is the discount of the previous transition, so a terminal step (discount 0)
/// clears the eligibility for the next episode by itself. κ is the eligibility_decay, named so that
/// it is never confused with the memory trace's λ. Cost O(dim) per update, whatever the features.
template <class Scalar = double>
class LinearTdLambda {
 public:
  using weights_type = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

 private:
  using linear_weights = detail::LinearWeights<Scalar>;

 public:
  LinearTdLambda(std::size_t dim, double step_size, double eligibility_decay, double initial_weight = 0.0)
      : v_("LinearTdLambda", dim, step_size, initial_weight),  // checks the storage of each of w and e
        eligibility_decay_(checked_decay(eligibility_decay)),
        e_(weights_type::Zero(static_cast<Eigen::Index>(dim))) {}
  LinearTdLambda(weights_type initial_weights, double step_size, double eligibility_decay)
      : v_("LinearTdLambda", std::move(initial_weights), step_size),
        eligibility_decay_(checked_decay(eligibility_decay)),
        e_(weights_type::Zero(v_.w.size())) {}

  template <class Phi, class PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next) {
    return linear_weights::checked_update("LinearTdLambda::update", *this, phi, reward, discount, phi_next);
  }

  /// The same step without the checks of φ, φ' and r, for loops that checked once per run that the
  /// memory's dim() is the learner's (a FeaturesFitDim memory's features fit it and are finite) and
  /// once per step that the reward is finite.
  template <FeatureVector<weights_type> Phi, FeatureVector<weights_type> PhiNext>
  double update(const Phi& phi, double reward, double discount, const PhiNext& phi_next, detail::FeaturesFit) {
    const double delta = v_.td_error("LinearTdLambda::update", phi, reward, discount, phi_next);
    e_ *= static_cast<Scalar>(previous_discount_ * eligibility_decay_);
    add_scaled(e_, Scalar{1}, phi);
    v_.w.noalias() += static_cast<Scalar>(v_.step_size * delta) * e_;
    previous_discount_ = discount;
    return delta;
  }

  /// Ends an episode that was cut (truncated) rather than terminated: no eligibility carries over.
  void end_episode() noexcept { previous_discount_ = 0.0; }

  template <FeatureVector<weights_type> Phi>
  [[nodiscard]] double value(const Phi& phi) const {
    return v_.value("LinearTdLambda::value", phi);
  }
  [[nodiscard]] const weights_type& weights() const noexcept { return v_.w; }
  [[nodiscard]] const weights_type& eligibility() const noexcept { return e_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(v_.w.size()); }
  [[nodiscard]] double step_size() const noexcept { return v_.step_size; }
  [[nodiscard]] double eligibility_decay() const noexcept { return eligibility_decay_; }

 private:
  static double checked_decay(double decay) {
    if (!(decay >= 0.0 && decay <= 1.0))
      detail::invalid("LinearTdLambda: eligibility_decay must be in [0, 1], got ", decay);
    return decay;
  }

  linear_weights v_;
  double eligibility_decay_;
  weights_type e_;
  double previous_discount_ = 0.0;
};

}  // namespace memtrace
