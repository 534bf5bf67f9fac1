#pragma once
// A step-size sweep in one object: K linear TD(0) learners that see the same feature vectors and
// differ only in their step sizes (Appendix C searches 13 step sizes per window length). The K
// weights of one feature are stored next to each other, so a one-hot step reads and writes one
// row of K doubles (104 bytes for K = 13) instead of one weight in each of K separate tables. See
// docs/learners.md.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/td.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// K linear TD(0) learners on one stream of features, learner k with step size step_sizes[k]:
/// w_k <- w_k + α_k δ_k φ with δ_k = r + γ w_k·φ' - w_k·φ. Learner k ends bit for bit where a
/// LinearTd with step size α_k would for one-hot and multi-hot features (same operations in the
/// same order, as long as the compiler does not reassociate or fuse them: no -ffast-math, and no
/// FMA contraction, which x86-64 without -march does not have); for dense features it agrees to
/// rounding. φ and φ' may be the same feature. Satisfies FeatureLearner, so run_td drives it.
class LinearTdBank {
 public:
  /// dim × K weights, row-major: row i holds feature i's weight in every learner.
  using weights_type = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  LinearTdBank(std::size_t dim, std::vector<double> step_sizes, double initial_weight = 0.0)
      : step_sizes_(std::move(step_sizes)) {
    constexpr const char* who = "LinearTdBank";
    detail::check_dim(who, dim);
    if (step_sizes_.empty()) detail::invalid(who, ": step_sizes must not be empty");
    for (std::size_t k = 0; k < step_sizes_.size(); ++k) {
      const double a = step_sizes_[k];
      if (!(a > 0.0 && a < std::numeric_limits<double>::infinity()))
        detail::invalid(who, ": step_sizes[", k, "] must be positive and finite, got ", a);
    }
    if (!std::isfinite(initial_weight)) detail::invalid(who, ": initial_weight must be finite, got ", initial_weight);
    const auto k = static_cast<Eigen::Index>(step_sizes_.size());
    if (detail::checked_mul(dim, step_sizes_.size()) == 0)
      detail::invalid(who, ": dim × K = ", dim, " × ", step_sizes_.size(), " overflows");
    detail::check_storage(who, "the weights dim × K", dim * step_sizes_.size(), sizeof(double), "dim", dim);
    w_ = weights_type::Constant(static_cast<Eigen::Index>(dim), k, initial_weight);
    value_.resize(k);
    value_next_.resize(k);
    step_.resize(k);
  }

  /// One TD(0) step of every learner for the transition φ -> φ' with reward r and this
  /// transition's discount (γ, or 0 after a terminal step).
  template <class Phi, class PhiNext>
  void update(const Phi& phi, double reward, double discount, const PhiNext& phi_next) {
    if constexpr (!(FeatureVector<Phi, Eigen::VectorXd> && FeatureVector<PhiNext, Eigen::VectorXd>)) {
      detail::diagnose_feature_type<Phi, Eigen::VectorXd>();  // a static_assert that says why
      detail::diagnose_feature_type<PhiNext, Eigen::VectorXd>();
    } else {
      detail::check_fits("LinearTdBank::update", "phi", phi, dim());
      detail::check_fits("LinearTdBank::update", "phi_next", phi_next, dim());
      detail::check_finite_input("LinearTdBank::update", reward, phi, "phi");
      detail::check_finite_input("LinearTdBank::update", reward, phi_next, "phi_next");
      update(phi, reward, discount, phi_next, detail::features_fit);
    }
  }

  /// The same step without the check that φ and φ' fit the weights, for loops that checked once
  /// per run that the memory's dim() is the bank's.
  template <FeatureVector Phi, FeatureVector PhiNext>
  void update(const Phi& phi, double reward, double discount, const PhiNext& phi_next, detail::FeaturesFit) {
    update_unchecked(phi, reward, discount, phi_next);
  }

  /// Nothing carries over between episodes in TD(0).
  void end_episode() noexcept {}

 private:
  template <class Phi, class PhiNext>
  void update_unchecked(const Phi& phi, double reward, double discount, const PhiNext& phi_next) {
    detail::check_step_discount("LinearTdBank::update", discount);
    if constexpr (std::same_as<Phi, OneHot> && std::same_as<PhiNext, OneHot>) {
      double* row = w_.row(static_cast<Eigen::Index>(phi.index)).data();
      const double* next = w_.row(static_cast<Eigen::Index>(phi_next.index)).data();
      const double* alpha = step_sizes_.data();
      // One pass: learner k reads its two weights before writing (phi = phi' is fine).
      for (std::size_t k = 0, n = step_sizes_.size(); k < n; ++k) {
        const double delta = reward + discount * next[k] - row[k];
        row[k] += alpha[k] * delta;
      }
    } else {
      values(phi, value_);
      values(phi_next, value_next_);
      const double *v = value_.data(), *v_next = value_next_.data();
      double* step = step_.data();
      for (std::size_t k = 0, n = step_sizes_.size(); k < n; ++k)
        step[k] = step_sizes_[k] * (reward + discount * v_next[k] - v[k]);
      add_rows(phi, step_);
    }
  }

 public:
  /// The estimates of all K learners for φ.
  template <FeatureVector Phi>
  [[nodiscard]] Eigen::RowVectorXd value(const Phi& phi) const {
    detail::check_fits("LinearTdBank::value", "phi", phi, dim());
    Eigen::RowVectorXd v(w_.cols());
    values(phi, v);
    return v;
  }
  /// Learner k's weights (a copy of column k).
  [[nodiscard]] Eigen::VectorXd weights(std::size_t k) const {
    if (k >= size()) detail::invalid("LinearTdBank::weights: k must be below ", size(), ", got ", k);
    return w_.col(static_cast<Eigen::Index>(k));
  }
  /// All weights, dim × K.
  [[nodiscard]] const weights_type& weights() const noexcept { return w_; }
  [[nodiscard]] std::size_t size() const noexcept { return step_sizes_.size(); }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(w_.rows()); }
  [[nodiscard]] const std::vector<double>& step_sizes() const noexcept { return step_sizes_; }

 private:
  // Row sums in the order dot(w, φ) of features.hpp uses, so each column matches a LinearTd.
  void values(const OneHot& phi, Eigen::RowVectorXd& out) const { out = w_.row(static_cast<Eigen::Index>(phi.index)); }
  // Multi-hot rows by plain loops: K is small and known only at run time, and Eigen's
  // per-expression overhead would dominate (a concat window of m = 5 is 3m row operations a step).
  template <int C>
  void values(const MultiHot<C>& phi, Eigen::RowVectorXd& out) const {
    const auto n = static_cast<std::size_t>(out.size());
    double* v = out.data();
    std::fill(v, v + n, 0.0);
    for (const std::size_t i : phi) {
      const double* row = w_.row(static_cast<Eigen::Index>(i)).data();
      for (std::size_t k = 0; k < n; ++k) v[k] += row[k];
    }
  }
  template <class Phi>
  void values(const Phi& phi, Eigen::RowVectorXd& out) const {  // any other feature, one learner at a time
    for (Eigen::Index k = 0; k < w_.cols(); ++k) out[k] = dot(w_.col(k), phi);
  }

  void add_rows(const OneHot& phi, const Eigen::RowVectorXd& step) {
    w_.row(static_cast<Eigen::Index>(phi.index)) += step;
  }
  template <int C>
  void add_rows(const MultiHot<C>& phi, const Eigen::RowVectorXd& step) {
    const auto n = static_cast<std::size_t>(step.size());
    const double* s = step.data();
    for (const std::size_t i : phi) {
      double* row = w_.row(static_cast<Eigen::Index>(i)).data();
      for (std::size_t k = 0; k < n; ++k) row[k] += s[k];
    }
  }
  template <class Phi>
  void add_rows(const Phi& phi, const Eigen::RowVectorXd& step) {
    for (Eigen::Index k = 0; k < w_.cols(); ++k) {
      auto column = w_.col(k);
      add_scaled(column, step[k], phi);
    }
  }

  std::vector<double> step_sizes_;
  weights_type w_;
  Eigen::RowVectorXd value_, value_next_, step_;  // scratch, reused every step: w·φ, w·φ', α δ
};

}  // namespace memtrace
