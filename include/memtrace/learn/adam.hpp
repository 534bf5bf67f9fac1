#pragma once
// Optimisation for the control learners, as optax does it in the paper's PPO: Adam over a flat
// parameter vector, one global-norm gradient clip over several vectors, and the linear
// learning-rate schedule. See docs/learners.md ("Neural networks for control").

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "memtrace/concepts.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Adam's constants (optax.adam's defaults; PPO uses them unchanged).
struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;  // added to sqrt(v̂), outside the square root
};

/// Adam (Kingma & Ba 2015) as optax.adam computes it, over one flat vector of parameters: at step
/// t = 1, 2, ... with gradient g and learning rate α_t,
///   m <- β1 m + (1 - β1) g,   v <- β2 v + (1 - β2) g²,
///   θ <- θ - α_t m̂ / (sqrt(v̂) + ε),   m̂ = m / (1 - β1^t),   v̂ = v / (1 - β2^t).
/// Adam acts entry by entry, so one Adam per network, all stepped with the same learning rate,
/// equals one Adam over the concatenated parameters (PPO's single optimiser for actor and critic).
template <class Scalar = float>
class Adam {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Adam: Scalar must be float or double");

 public:
  using scalar_type = Scalar;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  /// Moments for `num_parameters` parameters, all zero; step count 0.
  explicit Adam(std::size_t num_parameters, AdamOptions options = {}) : options_(checked(options)) {
    if (num_parameters > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / (2 * sizeof(Scalar)))
      detail::invalid("Adam: num_parameters is too large to hold two moments in memory, got ", num_parameters);
    detail::check_storage("Adam", "each moment", num_parameters, sizeof(Scalar), "num_parameters", num_parameters);
    m_ = Vector::Zero(static_cast<Eigen::Index>(num_parameters));
    v_ = Vector::Zero(static_cast<Eigen::Index>(num_parameters));
  }

  /// One Adam step: parameters -= learning_rate · m̂ / (sqrt(v̂) + ε). Both vectors must have
  /// num_parameters() entries (an Mlp's parameters() and gradients() Maps, or any contiguous vector).
  void step(Eigen::Ref<Vector> parameters, const Eigen::Ref<const Vector>& gradients, double learning_rate) {
    if (parameters.size() != m_.size())
      detail::invalid("Adam::step: parameters has ", parameters.size(), " entries, expected ", m_.size());
    if (gradients.size() != m_.size())
      detail::invalid("Adam::step: gradients has ", gradients.size(), " entries, expected ", m_.size());
    const Scales scales = begin_step(learning_rate);
    update(0, parameters, gradients, scales);
  }

  /// One Adam step of parameters held in blocks (ParameterBlocks: a network's parameters() and
  /// gradients()), as of one vector: the moments hold the blocks one after the other. The gradients
  /// must have the parameters' blocks, num_parameters() entries in all.
  template <class P, class G>
  requires ParameterBlocks<P, Scalar> &&
      (ParameterBlocks<G, Scalar> || ParameterBlocks<G, const Scalar>)void step(const P& parameters, const G& gradients,
                                                                                double learning_rate) {
    const std::size_t blocks = detail::parameter_block_count(parameters);
    const std::size_t total = detail::matching_blocks_total("Adam::step", parameters, gradients);
    if (total != num_parameters())
      detail::invalid("Adam::step: parameters has ", total, " entries, expected ", m_.size());
    const Scales scales = begin_step(learning_rate);
    Eigen::Index offset = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      const auto p = detail::parameter_block(parameters, b);
      const auto g = detail::parameter_block(gradients, b);
      const auto size = static_cast<Eigen::Index>(p.size());
      update(offset, Eigen::Map<Vector>(p.data(), size), Eigen::Map<const Vector>(g.data(), size), scales);
      offset += size;
    }
  }

  /// Steps taken so far (the t of the last step).
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  [[nodiscard]] std::size_t num_parameters() const noexcept { return static_cast<std::size_t>(m_.size()); }
  [[nodiscard]] const Vector& first_moment() const noexcept { return m_; }
  [[nodiscard]] const Vector& second_moment() const noexcept { return v_; }
  [[nodiscard]] const AdamOptions& options() const noexcept { return options_; }
  /// Restores a state (a checkpoint's): both moments, num_parameters() entries each (any scalar;
  /// finite, the second >= 0), and the step count. Throws std::invalid_argument naming the argument
  /// and the first bad entry, changing nothing.
  template <class M, class V>
  void set_state(const Eigen::MatrixBase<M>& first_moment, const Eigen::MatrixBase<V>& second_moment,
                 std::size_t count) {
    const auto check = [&](const char* name, const auto& moment, bool nonnegative) {
      if (moment.size() != m_.size())
        detail::invalid("Adam::set_state: ", name, " has ", moment.size(), " entries, expected ", m_.size());
      for (Eigen::Index i = 0; i < moment.size(); ++i) {
        const auto x = static_cast<double>(moment.coeff(i));
        if (!std::isfinite(x) || (nonnegative && x < 0.0))
          detail::invalid("Adam::set_state: ", name, "[", i, "] must be finite", nonnegative ? " and >= 0" : "",
                          ", got ", x);
      }
    };
    check("first_moment", first_moment, false);
    check("second_moment", second_moment, true);
    m_ = first_moment.template cast<Scalar>();
    v_ = second_moment.template cast<Scalar>();
    count_ = count;
  }
  /// Back to zero moments and step count 0.
  void reset() noexcept {
    m_.setZero();
    v_.setZero();
    count_ = 0;
  }

 private:
  static AdamOptions checked(const AdamOptions& o) {
    if (!(o.beta1 >= 0.0 && o.beta1 < 1.0)) detail::invalid("Adam: beta1 must be in [0, 1), got ", o.beta1);
    if (!(o.beta2 >= 0.0 && o.beta2 < 1.0)) detail::invalid("Adam: beta2 must be in [0, 1), got ", o.beta2);
    if (!(o.epsilon >= 0.0 && o.epsilon < std::numeric_limits<double>::infinity()))
      detail::invalid("Adam: epsilon must be finite and >= 0, got ", o.epsilon);
    return o;
  }

  struct Scales {
    Scalar b1, b2, m_scale, v_scale, lr, eps;
  };
  /// Checks the learning rate, counts the step and computes its constants.
  Scales begin_step(double learning_rate) {
    if (!(learning_rate >= 0.0 && learning_rate < std::numeric_limits<double>::infinity()))
      detail::invalid("Adam::step: learning_rate must be finite and >= 0, got ", learning_rate);
    ++count_;
    const double t = static_cast<double>(count_);
    return {static_cast<Scalar>(options_.beta1),
            static_cast<Scalar>(options_.beta2),
            static_cast<Scalar>(1.0 / (1.0 - std::pow(options_.beta1, t))),
            static_cast<Scalar>(1.0 / (1.0 - std::pow(options_.beta2, t))),
            static_cast<Scalar>(learning_rate),
            static_cast<Scalar>(options_.epsilon)};
  }
  /// The step of the parameters whose moments start at `offset` (entry by entry: a block's result
  /// does not depend on the blocks around it).
  template <class P, class G>
  void update(Eigen::Index offset, P&& parameters, const G& gradients, const Scales& s) {
    auto m = m_.segment(offset, gradients.size());
    auto v = v_.segment(offset, gradients.size());
    m = s.b1 * m + (Scalar(1) - s.b1) * gradients;
    v = s.b2 * v + (Scalar(1) - s.b2) * gradients.cwiseAbs2();
    parameters.array() -= s.lr * (s.m_scale * m.array()) / ((s.v_scale * v.array()).sqrt() + s.eps);
  }

  AdamOptions options_;
  Vector m_, v_;
  std::size_t count_ = 0;
};

namespace detail {
template <class V>
concept DenseEigenVector = std::derived_from<std::remove_cvref_t<V>, Eigen::DenseBase<std::remove_cvref_t<V>>> &&
                           std::remove_cvref_t<V>::ColsAtCompileTime == 1;
}  // namespace detail

/// optax.clip_by_global_norm over several gradient vectors together (e.g. actor and critic): with
/// the global norm ‖g‖ = sqrt(Σ over all vectors of Σ g_i²), accumulated in double, every vector is
/// scaled by max_norm / ‖g‖ when ‖g‖ > max_norm and left alone otherwise. A non-finite norm
/// (NaN or infinite gradients) turns the gradients into NaN, as in optax. Returns ‖g‖ before
/// clipping. Pass the vectors themselves or Maps of them (an Mlp's gradients()).
template <detail::DenseEigenVector... Vectors>
double clip_by_global_norm(double max_norm, Vectors&&... gradients) {
  static_assert(sizeof...(Vectors) >= 1, "clip_by_global_norm: pass at least one gradient vector");
  if (!(max_norm > 0.0 && max_norm < std::numeric_limits<double>::infinity()))
    detail::invalid("clip_by_global_norm: max_norm must be positive and finite, got ", max_norm);
  const double norm = std::sqrt((0.0 + ... + gradients.template cast<double>().squaredNorm()));
  if (!(norm <= max_norm)) {
    const double scale = max_norm / norm;
    ((gradients *= static_cast<typename std::remove_cvref_t<Vectors>::Scalar>(scale)), ...);
  }
  return norm;
}

/// clip_by_global_norm over a network's gradient blocks (ParameterBlocks, e.g. gradients() of an
/// ActorCriticNetwork): ‖g‖² is summed block by block, each block's sum in double, as optax sums
/// its leaves; every block is scaled alike.
template <class Blocks>
requires(!detail::DenseEigenVector<Blocks>) && requires {
  typename detail::parameter_block_scalar<std::remove_cvref_t<Blocks>>::type;
}
double clip_by_global_norm(double max_norm, const Blocks& gradients) {
  using Scalar = typename detail::parameter_block_scalar<std::remove_cvref_t<Blocks>>::type;
  static_assert(std::is_floating_point_v<Scalar>, "clip_by_global_norm: the gradient blocks must be writable");
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  if (!(max_norm > 0.0 && max_norm < std::numeric_limits<double>::infinity()))
    detail::invalid("clip_by_global_norm: max_norm must be positive and finite, got ", max_norm);
  const std::size_t blocks = detail::parameter_block_count(gradients);
  const auto map = [&](std::size_t b) {
    const auto block = detail::parameter_block(gradients, b);
    return Eigen::Map<Vector>(block.data(), static_cast<Eigen::Index>(block.size()));
  };
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) sum += map(b).template cast<double>().squaredNorm();
  const double norm = std::sqrt(sum);
  if (!(norm <= max_norm)) {
    const auto scale = static_cast<Scalar>(max_norm / norm);
    for (std::size_t b = 0; b < blocks; ++b) map(b) *= scale;
  }
  return norm;
}

/// The linear learning-rate schedule of the paper's PPO (optax.linear_schedule to 0):
/// lr(c) = initial · (1 - min(c, T) / T), where c is the number of optimiser steps taken so far and
/// T = total_steps. The first step (c = 0) uses `initial`, the last (c = T - 1) initial / T, and
/// every step from c = T on uses 0.
class LinearSchedule {
 public:
  LinearSchedule(double initial, std::size_t total_steps) : initial_(initial), total_(total_steps) {
    if (!(initial >= 0.0 && initial < std::numeric_limits<double>::infinity()))
      detail::invalid("LinearSchedule: initial must be finite and >= 0, got ", initial);
    if (total_steps == 0) detail::invalid("LinearSchedule: total_steps must be at least 1, got 0");
  }

  [[nodiscard]] double operator()(std::size_t count) const noexcept {
    const std::size_t c = count < total_ ? count : total_;
    return initial_ * (1.0 - static_cast<double>(c) / static_cast<double>(total_));
  }

  [[nodiscard]] double initial() const noexcept { return initial_; }
  [[nodiscard]] std::size_t total_steps() const noexcept { return total_; }

 private:
  double initial_;
  std::size_t total_;
};

}  // namespace memtrace
