#pragma once
// TraceBank: several memory traces of the same observations, one per λ, side by side in one
// feature vector (the paper's PPO agent feeds λ = 0 and λ = (k-1)/k together). See docs/memory.md.

#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <vector>

#include "memtrace/core.hpp"
#include "memtrace/memory/memory_trace.hpp"

namespace memtrace {

/// Traces z^(1), ..., z^(K) for λ_1, ..., λ_K over |Y| observations; features() stacks them,
/// block k = z^(k+1) at entries [k|Y|, (k+1)|Y|). Cost O(K|Y|) per update. Satisfies Memory.
/// NumObservations fixes |Y| at compile time (or memtrace::dynamic).
template <int NumObservations = dynamic>
class TraceBank {
  static_assert(NumObservations == dynamic || NumObservations >= 1,
                "TraceBank: NumObservations must be at least 1 or memtrace::dynamic");

 public:
  using features_type = Eigen::VectorXd;

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
    steps_.assign(lambdas_.size(), detail::TraceStep(init));
    z_ = features_type::Zero(static_cast<Eigen::Index>(dim));
  }

  void reset(Observation y0) {
    check(y0);
    z_.setZero();
    for (std::size_t k = 0; k < lambdas_.size(); ++k) z_[entry(k, y0)] = steps_[k].start(lambdas_[k]);
    started_ = true;
  }

  /// Absorbs the next observation into every trace (eq:recursive, once per λ). On a bank that
  /// has seen nothing yet (after construction or clear()) this is reset(y).
  void update(Observation y) {
    if (!started_) return reset(y);
    check(y);
    const auto n = static_cast<Eigen::Index>(num_observations_);
    for (std::size_t k = 0; k < lambdas_.size(); ++k) {
      const auto [a, b] = steps_[k].next(lambdas_[k]);
      z_.template segment<block_size>(static_cast<Eigen::Index>(k) * n, n) *= a;
      z_[entry(k, y)] += b;
    }
  }

  /// Forgets everything: z = 0; the next update(y) is reset(y).
  void clear() noexcept {
    z_.setZero();
    started_ = false;
  }

  [[nodiscard]] const features_type& features() const noexcept { return z_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(z_.size()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
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
  static constexpr int block_size = NumObservations == dynamic ? Eigen::Dynamic : NumObservations;
  void check(Observation y) const { detail::check_observation("TraceBank", y, num_observations_); }
  [[nodiscard]] Eigen::Index entry(std::size_t k, Observation y) const noexcept {
    return static_cast<Eigen::Index>(k * num_observations_ + y);
  }

  std::vector<double> lambdas_;
  std::size_t num_observations_;
  std::vector<detail::TraceStep> steps_;
  features_type z_;
  bool started_ = false;
};

}  // namespace memtrace
