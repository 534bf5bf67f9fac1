#pragma once
// TraceBank: several memory traces of the same observations (indices, dense vectors or MultiHot),
// one per λ, side by side in one feature vector (the paper's PPO agent feeds λ = 0 and λ = (k-1)/k
// together). See docs/memory.md.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "memtrace/features.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/vector_observation.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Traces z^(1), ..., z^(K) for λ_1, ..., λ_K of the same observations in R^d; features() stacks
/// them λ-major, block k = z^(k+1) at entries [kd, (k+1)d) (as the paper's PPO agent stacks them:
/// λ = {0, 0.985} over the 45-entry grid view gives 90 features, the first 45 the current view).
/// Observations are those of MemoryTrace: indices (one-hot), dense Eigen vectors of Scalar, or
/// MultiHot (a scale of each block plus a scatter of the active entries). Cost O(Kd) per update.
/// NumObservations fixes d at compile time (or memtrace::dynamic); Scalar is float or double.
/// A refused observation throws and changes nothing. Satisfies Memory.
template <int NumObservations = dynamic, class Scalar = double>
class TraceBank {
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "TraceBank: NumObservations must be at least 1 or memtrace::dynamic");
  static_assert(detail::TraceScalar<Scalar>, "TraceBank: Scalar must be float or double");

 public:
  /// Its features always fit dim(): the TD loops skip the learner's per-step range check.
  static constexpr bool features_fit_dim = true;
  using scalar_type = Scalar;
  using features_type = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  TraceBank(std::vector<double> lambdas, std::size_t num_observations, TraceInit init = TraceInit::first_observation)
      : lambdas_(std::move(lambdas)), num_observations_(num_observations) {
    if (lambdas_.empty()) detail::invalid("TraceBank: lambdas must hold at least one lambda, got none");
    for (std::size_t k = 0; k < lambdas_.size(); ++k)
      if (!(lambdas_[k] >= 0.0 && lambdas_[k] < 1.0))
        detail::invalid("TraceBank: lambdas[", k, "] must be in [0, 1), got ", lambdas_[k]);
    detail::check_num_observations("TraceBank", num_observations);
    detail::check_fixed_size("TraceBank", "num_observations", NumObservations, num_observations);
    const std::size_t dim = detail::checked_mul(lambdas_.size(), num_observations);
    if (dim == 0 || dim > static_cast<std::size_t>(std::numeric_limits<Eigen::Index>::max()))
      detail::invalid("TraceBank: K|Y| with K = ", lambdas_.size(), " lambdas and |Y| = ", num_observations,
                      " overflows the index type");
    detail::check_storage("TraceBank", "the traces K|Y|", dim, sizeof(Scalar), "num_observations", num_observations);
    steps_.assign(lambdas_.size(), detail::TraceStep(init));
    z_ = features_type::Zero(static_cast<Eigen::Index>(dim));
  }

  // A real number is no index (it would be truncated to one): a scalar observation is a 1-vector.
  template <std::floating_point F>
  void reset(F) = delete;  // TraceBank: a real number is no index; pass Eigen::Matrix<Scalar, 1, 1>
  template <std::floating_point F>
  void update(F) = delete;  // TraceBank: a real number is no index; pass Eigen::Matrix<Scalar, 1, 1>

  void reset(Observation y0) {
    check(y0);
    z_.setZero();
    for (std::size_t k = 0; k < lambdas_.size(); ++k)
      z_[entry(k, y0)] = static_cast<Scalar>(steps_[k].start(lambdas_[k]));
    started_ = true;
  }
  template <class D>
  requires detail::DenseObservationFor<D, Scalar, NumObservations>
  void reset(const Eigen::MatrixBase<D>& y0) { start("TraceBank::reset", y0); }
  template <int C>
  void reset(const MultiHot<C>& y0) {
    start("TraceBank::reset", y0);
  }

  /// Absorbs the next observation into every trace (eq:recursive, once per λ). On a bank that
  /// has seen nothing yet (after construction or clear()) this is reset(y).
  void update(Observation y) {
    if (!started_) return reset(y);
    check(y);
    const auto n = static_cast<Eigen::Index>(num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k) {
      const auto [a, b] = steps_[k].next(lambdas_[k]);
      z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n) *= static_cast<Scalar>(a);
      z_[entry(k, y)] += static_cast<Scalar>(b);
    }
  }
  template <class D>
  requires detail::DenseObservationFor<D, Scalar, NumObservations>
  void update(const Eigen::MatrixBase<D>& y) {
    if (!started_) return start("TraceBank::update", y);
    detail::check_dense_observation("TraceBank::update", y, num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k) {
      const auto [a, b] = steps_[k].next(lambdas_[k]);
      auto block = block_of(k);
      block = static_cast<Scalar>(a) * block + static_cast<Scalar>(b) * y;
    }
  }
  template <int C>
  void update(const MultiHot<C>& y) {
    if (!started_) return start("TraceBank::update", y);
    detail::check_multi_hot_observation("TraceBank::update", y, num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k) {
      const auto [a, b] = steps_[k].next(lambdas_[k]);
      block_of(k) *= static_cast<Scalar>(a);
      for (const std::size_t i : y) z_[entry(k, i)] += static_cast<Scalar>(b);
    }
  }

  // A dense vector of another scalar type is refused at compile time (no silent conversion):
  template <class D>
  requires detail::DenseObservationNotOf<D, Scalar>
  void reset(const Eigen::MatrixBase<D>& y0) = delete;  // another scalar type: pass y.template cast<Scalar>()
  template <class D>
  requires detail::DenseObservationNotOf<D, Scalar>
  void update(const Eigen::MatrixBase<D>& y) = delete;  // another scalar type: pass y.template cast<Scalar>()

  /// Forgets everything: z = 0; the next update(y) is reset(y).
  void clear() noexcept {
    z_.setZero();
    started_ = false;
  }

  [[nodiscard]] const features_type& features() const noexcept { return z_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(z_.size()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  /// The dimension d of the observations (|Y| for index observations): dim() / size().
  [[nodiscard]] std::size_t observation_dim() const noexcept { return num_observations_; }
  [[nodiscard]] std::size_t size() const noexcept { return lambdas_.size(); }
  [[nodiscard]] const std::vector<double>& lambdas() const noexcept { return lambdas_; }
  [[nodiscard]] TraceInit init() const noexcept { return steps_.front().init(); }

  /// The trace of λ_{k+1} (a view into features()).
  [[nodiscard]] auto trace(std::size_t k) const {
    if (k >= lambdas_.size()) detail::invalid("TraceBank::trace: k must be below ", lambdas_.size(), ", got ", k);
    const auto n = static_cast<Eigen::Index>(num_observations_);
    return z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n);
  }

 private:
  static constexpr int block_size = detail::eigen_size(NumObservations);
  void check(Observation y) const { detail::check_observation("TraceBank", y, num_observations_); }
  [[nodiscard]] Eigen::Index entry(std::size_t k, std::size_t y) const noexcept {
    return static_cast<Eigen::Index>(k * num_observations_ + y);
  }
  [[nodiscard]] auto block_of(std::size_t k) {
    const auto n = static_cast<Eigen::Index>(num_observations_);
    return z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n);
  }

  template <class D>
  void start(const char* who, const Eigen::MatrixBase<D>& y0) {
    detail::check_dense_observation(who, y0, num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k)
      block_of(k) = static_cast<Scalar>(steps_[k].start(lambdas_[k])) * y0;
    started_ = true;
  }
  template <int C>
  void start(const char* who, const MultiHot<C>& y0) {
    detail::check_multi_hot_observation(who, y0, num_observations_);
    z_.setZero();
    for (std::size_t k = 0; k < lambdas_.size(); ++k) {
      const auto b = static_cast<Scalar>(steps_[k].start(lambdas_[k]));
      for (const std::size_t i : y0) z_[entry(k, i)] += b;
    }
    started_ = true;
  }

  std::vector<double> lambdas_;
  std::size_t num_observations_;
  std::vector<detail::TraceStep> steps_;
  features_type z_;
  bool started_ = false;
};

}  // namespace memtrace
