#pragma once
// The inverted pendulum of Gymnasium's Pendulum-v1, exactly (continuous control: a torque in
// [-2, 2] swings a pole up), and its partially observable variant that hides the angular velocity
// (the "-P" pendulum of the memory-based RL literature). A memory trace recovers the velocity: the
// difference of two traces with different λ is a smoothed derivative of the angle's cosine and
// sine. See docs/environments.md ("The pendulum").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <random>
#include <stdexcept>

#include "memtrace/concepts.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The pendulum's options: Gymnasium's defaults (gravity is its `g` argument; the episode is cut
/// by its TimeLimit of 200 steps), and whether the angular velocity is observed.
struct PendulumOptions {
  bool observe_velocity = true;         ///< (cos θ, sin θ, θ̇) if true, (cos θ, sin θ) if false
  double gravity = 10.0;                ///< g, > 0 and finite
  std::size_t max_episode_steps = 200;  ///< truncation after this many steps, >= 1
  friend bool operator==(const PendulumOptions&, const PendulumOptions&) = default;
};

/// Gymnasium's Pendulum-v1 (m = l = 1, dt = 0.05, torque u clipped to [-2, 2], speed clipped to
/// [-8, 8]). From (θ, θ̇) and the clipped torque u a step computes, in double and in this order,
///   r = −(normalize(θ)² + 0.1 θ̇² + 0.001 u²),   normalize(θ) = ((θ + π) mod 2π) − π  (in [−π, π)),
///   θ̇' = clip(θ̇ + (3g/2 · sin θ + 3u) dt, −8, 8),   θ' = θ + θ̇' dt,
/// and observes (cos θ', sin θ', θ̇') as floats (θ̇' left out when the velocity is hidden). θ is
/// kept as integrated, never wrapped. reset draws θ ~ U[−π, π) and θ̇ ~ U[−1, 1) (two uniform_real
/// draws, θ first); a step draws nothing. Episodes never terminate and are truncated after
/// max_episode_steps steps. Satisfies ContinuousActions (action_type: a 1-vector of double, the
/// box [−2, 2]); a torque outside the box is clipped, as Gymnasium does, so that a Gaussian
/// policy's sample is applied as the environment would.
class Pendulum {
 public:
  /// A 1-vector of double: the torque.
  using action_type = Eigen::Matrix<double, 1, 1>;
  /// (cos θ, sin θ, θ̇) or (cos θ, sin θ), in a vector of at most 3 floats that never allocates.
  using observation_type = Eigen::Matrix<float, Eigen::Dynamic, 1, Eigen::ColMajor, 3, 1>;

  static constexpr double max_torque = 2.0;
  static constexpr double max_speed = 8.0;
  static constexpr double dt = 0.05;
  static constexpr double mass = 1.0;
  static constexpr double length = 1.0;

  /// Throws std::invalid_argument for a gravity that is not positive and finite or
  /// max_episode_steps = 0.
  explicit Pendulum(PendulumOptions options = {}) : options_(checked(options)) {}

  /// Starts an episode at θ ~ U[−π, π), θ̇ ~ U[−1, 1) and returns its first observation.
  template <std::uniform_random_bit_generator G>
  observation_type reset(G& gen) {
    const double theta = std::numbers::pi * (2.0 * uniform_real(gen) - 1.0);
    const double theta_dot = 2.0 * uniform_real(gen) - 1.0;
    start(theta, theta_dot);
    return observation();
  }

  /// Starts an episode at the given angle (radians, any real) and angular velocity (|θ̇| <= 8) and
  /// returns its first observation: for replays and tests. Throws std::invalid_argument, changing
  /// nothing, for a non-finite value or a speed above 8.
  observation_type reset(double theta, double theta_dot) {
    if (!std::isfinite(theta)) detail::invalid("Pendulum::reset: theta must be finite, got ", theta);
    if (!(std::abs(theta_dot) <= max_speed))
      detail::invalid("Pendulum::reset: theta_dot must be finite and in [-8, 8], got ", theta_dot);
    start(theta, theta_dot);
    return observation();
  }

  /// One step with torque u[0] (clipped to [−2, 2]). Throws std::invalid_argument for a
  /// non-finite torque and std::logic_error when no episode runs (truncated, or never reset);
  /// a refused call changes nothing.
  template <std::uniform_random_bit_generator G>
  TimeStep<observation_type> step(const action_type& u, G&) {
    return step(u[0]);
  }

  /// The step of a torque given as a number (what step(u, gen) does; it draws nothing).
  TimeStep<observation_type> step(double torque) {
    if (!std::isfinite(torque)) [[unlikely]]
      detail::invalid("Pendulum::step: the torque must be finite, got ", torque);
    if (!running_) [[unlikely]]
      throw std::logic_error("Pendulum::step: no episode is running (it was truncated, or reset was never called)");
    const double u = std::clamp(torque, -max_torque, max_torque);
    const double theta_n = normalize_angle(theta_);
    const double cost = theta_n * theta_n + 0.1 * (theta_dot_ * theta_dot_) + 0.001 * (u * u);
    const double g = options_.gravity;
    double theta_dot =
        theta_dot_ + (3.0 * g / (2.0 * length) * std::sin(theta_) + 3.0 / (mass * length * length) * u) * dt;
    theta_dot = std::clamp(theta_dot, -max_speed, max_speed);
    theta_ += theta_dot * dt;
    theta_dot_ = theta_dot;
    ++steps_;
    TimeStep<observation_type> out;
    out.observation = observation();
    out.reward = -cost;
    out.truncated = steps_ >= options_.max_episode_steps;
    running_ = !out.truncated;
    return out;
  }

  /// ((θ + π) mod 2π) − π with NumPy's floored modulo, as Gymnasium's angle_normalize: in [−π, π)
  /// (π itself only when a tiny negative remainder plus 2π rounds to 2π, as in NumPy).
  [[nodiscard]] static double normalize_angle(double theta) noexcept {
    constexpr double two_pi = 2.0 * std::numbers::pi;
    double m = std::fmod(theta + std::numbers::pi, two_pi);
    if (m < 0.0) m += two_pi;  // the remainder takes the divisor's sign
    return m - std::numbers::pi;
  }

  /// The box of the torques.
  [[nodiscard]] action_type action_low() const noexcept { return action_type::Constant(-max_torque); }
  [[nodiscard]] action_type action_high() const noexcept { return action_type::Constant(max_torque); }
  /// 3 with the velocity observed, 2 without.
  [[nodiscard]] std::size_t observation_dim() const noexcept { return options_.observe_velocity ? 3 : 2; }
  /// θ (as integrated, not wrapped) and θ̇: the hidden state.
  [[nodiscard]] double angle() const noexcept { return theta_; }
  [[nodiscard]] double angular_velocity() const noexcept { return theta_dot_; }
  /// Whether an episode runs (reset, and not yet truncated).
  [[nodiscard]] bool running() const noexcept { return running_; }
  /// Steps taken in the episode.
  [[nodiscard]] std::size_t steps() const noexcept { return steps_; }
  [[nodiscard]] const PendulumOptions& options() const noexcept { return options_; }
  /// The lowest reward a step can give: every reward is in [−(π² + 0.1·8² + 0.001·2²), 0].
  static constexpr double min_reward = -(std::numbers::pi * std::numbers::pi + 0.1 * 64.0 + 0.001 * 4.0);

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp

  static PendulumOptions checked(const PendulumOptions& o) {
    if (!(o.gravity > 0.0 && std::isfinite(o.gravity)))
      detail::invalid("Pendulum: options.gravity must be positive and finite, got ", o.gravity);
    if (o.max_episode_steps == 0) detail::invalid("Pendulum: options.max_episode_steps must be at least 1, got 0");
    return o;
  }

  void start(double theta, double theta_dot) noexcept {
    theta_ = theta;
    theta_dot_ = theta_dot;
    steps_ = 0;
    running_ = true;
  }

  [[nodiscard]] observation_type observation() const {
    observation_type y(static_cast<Eigen::Index>(observation_dim()));
    y[0] = static_cast<float>(std::cos(theta_));
    y[1] = static_cast<float>(std::sin(theta_));
    if (options_.observe_velocity) y[2] = static_cast<float>(theta_dot_);
    return y;
  }

  PendulumOptions options_;
  double theta_ = 0.0, theta_dot_ = 0.0;
  std::size_t steps_ = 0;
  bool running_ = false;
};

}  // namespace memtrace
