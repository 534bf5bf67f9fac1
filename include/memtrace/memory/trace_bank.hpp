#pragma once
// TraceBank: several memory traces of the same observations (indices, dense vectors or MultiHot),
// one per λ, side by side in one feature vector (the paper's PPO agent feeds λ = 0 and λ = (k-1)/k
// together). See docs/memory.md.

#include <Eigen/Core>
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
class TraceBank
    : public detail::crtp::TraceMemory<TraceBank<NumObservations, Scalar>, Scalar, NumObservations, Eigen::Dynamic> {
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "TraceBank: NumObservations must be at least 1 or memtrace::dynamic");
  static_assert(detail::TraceScalar<Scalar>, "TraceBank: Scalar must be float or double");
  using base = detail::crtp::TraceMemory<TraceBank, Scalar, NumObservations, Eigen::Dynamic>;
  friend base;

 public:
  using typename base::features_type;

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
    this->z_ = features_type::Zero(static_cast<Eigen::Index>(dim));
  }

  // reset and update (index, dense and MultiHot observations, once per λ: eq. (1)), clear,
  // features and dim: detail::crtp::TraceMemory, the implementation MemoryTrace uses.

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
    return this->z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n);
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // memory/checkpoint.hpp
  static constexpr detail::TraceNames names{"TraceBank", "TraceBank::reset", "TraceBank::update"};
  static constexpr int block_size = detail::eigen_size(NumObservations);

  /// Block k of the features is the trace of λ_{k+1}.
  template <class F>
  void for_each_trace(F&& f) {
    const auto n = static_cast<Eigen::Index>(num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k)
      f(this->z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n), steps_[k], lambdas_[k]);
  }

  std::vector<double> lambdas_;
  std::size_t num_observations_;
  std::vector<detail::TraceStep> steps_;
};

}  // namespace memtrace
