// The pendulum against Gymnasium's Pendulum-v1: steps computed by hand (NumPy float64, the
// values below), the published equations along random trajectories, the reward's bounds,
// truncation, the hidden-velocity variant and refusals.
#include "memtrace/env/pendulum.hpp"

#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "memtrace/concepts.hpp"
#include "memtrace/random.hpp"

namespace pendulum_test {  // a namespace of its own: the folder's tests are compiled as one file

using memtrace::Pendulum;
using memtrace::PendulumOptions;

static_assert(memtrace::Pomdp<Pendulum>);
static_assert(memtrace::ContinuousActions<Pendulum>);
static_assert(!memtrace::FiniteActions<Pendulum>);
static_assert(std::same_as<memtrace::action_t<Pendulum>, Eigen::Matrix<double, 1, 1>>);
static_assert(std::same_as<memtrace::observation_t<Pendulum>, Pendulum::observation_type>);

namespace {

Pendulum::action_type torque(double u) { return Pendulum::action_type::Constant(u); }

struct Expected {
  double theta, theta_dot, reward;
  float cos_theta, sin_theta, theta_dot_float;
};

// Computed with NumPy (float64) from Gymnasium's step: u = clip(u, -2, 2);
// cost = angle_normalize(th)**2 + 0.1*thdot**2 + 0.001*u**2;
// newthdot = clip(thdot + (3*g/(2*l)*sin(th) + 3.0/(m*l**2)*u)*dt, -8, 8); newth = th + newthdot*dt.
void check_step(double theta, double theta_dot, double u, const Expected& e) {
  Pendulum env;
  memtrace::DefaultGenerator gen(1);
  env.reset(theta, theta_dot);
  const auto s = env.step(torque(u), gen);
  CHECK(env.angle() == Approx(e.theta).epsilon(1e-14));
  CHECK(env.angular_velocity() == Approx(e.theta_dot).epsilon(1e-14));
  CHECK(s.reward == Approx(e.reward).epsilon(1e-14));
  REQUIRE(s.observation.size() == 3);
  CHECK(s.observation[0] == Approx(e.cos_theta).epsilon(1e-6));
  CHECK(s.observation[1] == Approx(e.sin_theta).epsilon(1e-6));
  CHECK(s.observation[2] == e.theta_dot_float);  // a float of the double velocity
  CHECK_FALSE(s.terminated);
  CHECK_FALSE(s.truncated);
}

}  // namespace

TEST_CASE("Pendulum: steps equal Gymnasium's, computed by hand") {
  check_step(1.0, 0.5, 1.5,
             {1.0678051619302962, 1.3561032386059226, -1.02725, 0.4820483922958374f, 0.8761445879936218f,
              1.3561031818389893f});
  // θ = 4 is normalised to 4 − 2π for the cost.
  check_step(4.0, -3.0, -0.25,
             {3.8197449064259525, -3.6051018714809464, -6.112997646920742, -0.7787332534790039f, -0.6273552179336548f,
              -3.6051018238067627f});
  // The speed is clipped to 8.
  check_step(std::numbers::pi / 2, 7.9, 2.0,
             {1.9707963267948965, 8.0, -8.71240110027234, -0.3894183337688446f, 0.9210609793663025f, 8.0f});
  // The torque is clipped to 2 (for the dynamics and the cost), and θ is kept as integrated, not wrapped.
  check_step(-7.0, 0.0, 5.0,
             {-7.009636997451954, -0.19273994903909186, -0.5178233038432242, 0.7475359439849854f, -0.6642213463783264f,
              -0.19273994863033295f});
}

TEST_CASE("Pendulum: random trajectories follow the published equations") {
  for (const double g : {10.0, 9.81}) {
    Pendulum env(PendulumOptions{.observe_velocity = true, .gravity = g});
    memtrace::DefaultGenerator gen(7), torques(8);
    for (int episode = 0; episode < 5; ++episode) {
      env.reset(gen);
      for (int t = 0; t < 200; ++t) {
        const double th = env.angle(), thdot = env.angular_velocity();
        const double u = 6.0 * memtrace::uniform_real(torques) - 3.0;  // beyond the box half the time
        const auto s = env.step(torque(u), gen);
        const double uc = std::min(2.0, std::max(-2.0, u));
        // The angle normalised another way: th − 2π round((th) / 2π) is in [−π, π] as well.
        const double wrapped =
            th - 2.0 * std::numbers::pi * std::floor((th + std::numbers::pi) / (2 * std::numbers::pi));
        const double expected_dot = std::min(8.0, std::max(-8.0, thdot + (1.5 * g * std::sin(th) + 3.0 * uc) * 0.05));
        CHECK(env.angular_velocity() == Approx(expected_dot).margin(1e-12));
        CHECK(env.angle() == Approx(th + expected_dot * 0.05).margin(1e-12));
        CHECK(s.reward == Approx(-(wrapped * wrapped + 0.1 * thdot * thdot + 0.001 * uc * uc)).margin(1e-9));
        CHECK(s.reward <= 0.0);
        CHECK(s.reward >= Pendulum::min_reward);
        CHECK(s.truncated == (t == 199));
      }
    }
  }
}

TEST_CASE("Pendulum: the reward is 0 upright at rest and lowest hanging down, fast, with full torque") {
  Pendulum env;
  memtrace::DefaultGenerator gen(1);
  env.reset(0.0, 0.0);
  CHECK(env.step(torque(0.0), gen).reward == 0.0);
  env.reset(-std::numbers::pi, 8.0);  // normalised to −π exactly: the cost's largest angle term
  const double r = env.step(torque(-2.0), gen).reward;
  CHECK(r == Approx(Pendulum::min_reward).epsilon(1e-15));
  CHECK(r >= Pendulum::min_reward);
  CHECK(Pendulum::normalize_angle(std::numbers::pi) == -std::numbers::pi);
  CHECK(Pendulum::normalize_angle(-std::numbers::pi) == -std::numbers::pi);
  CHECK(Pendulum::normalize_angle(3 * std::numbers::pi / 2) == Approx(-std::numbers::pi / 2).epsilon(1e-15));
  CHECK(Pendulum::normalize_angle(-20.0) == Approx(-20.0 + 6 * std::numbers::pi).epsilon(1e-15));
}

TEST_CASE("Pendulum: episodes are truncated after max_episode_steps, never terminated") {
  for (const std::size_t limit : {std::size_t{200}, std::size_t{3}}) {
    PendulumOptions o;
    o.max_episode_steps = limit;
    Pendulum env(o);
    memtrace::DefaultGenerator gen(3);
    CHECK_THROWS_AS(env.step(torque(0.0), gen), std::logic_error);  // never reset
    env.reset(gen);
    for (std::size_t t = 1; t <= limit; ++t) {
      const auto s = env.step(torque(1.0), gen);
      CHECK_FALSE(s.terminated);
      CHECK(s.truncated == (t == limit));
      CHECK(env.steps() == t);
    }
    CHECK_FALSE(env.running());
    const double theta = env.angle();
    CHECK_THROWS_WITH(env.step(torque(0.0), gen), Catch::Contains("Pendulum::step: no episode is running"));
    CHECK(env.angle() == theta);
    env.reset(gen);
    CHECK(env.running());
    CHECK(env.steps() == 0);
  }
}

TEST_CASE("Pendulum: reset draws θ uniformly from −π to π and θ̇ from −1 to 1, with two uniform draws") {
  Pendulum env;
  memtrace::DefaultGenerator gen(11), copy(11);
  const int n = 20000;
  double sum_theta = 0, sum_dot = 0, sum_theta2 = 0;
  for (int i = 0; i < n; ++i) {
    const auto y = env.reset(gen);
    const double th = env.angle(), thdot = env.angular_velocity();
    CHECK(th == std::numbers::pi * (2.0 * memtrace::uniform_real(copy) - 1.0));
    CHECK(thdot == 2.0 * memtrace::uniform_real(copy) - 1.0);
    REQUIRE((th >= -std::numbers::pi && th < std::numbers::pi));
    REQUIRE((thdot >= -1.0 && thdot < 1.0));
    CHECK(y[0] == static_cast<float>(std::cos(th)));
    CHECK(y[1] == static_cast<float>(std::sin(th)));
    CHECK(y[2] == static_cast<float>(thdot));
    sum_theta += th;
    sum_theta2 += th * th;
    sum_dot += thdot;
  }
  // Means within 5 standard errors of 0; E θ² = π²/3.
  CHECK(std::abs(sum_theta / n) < 5 * std::numbers::pi / std::sqrt(3.0 * n));
  CHECK(std::abs(sum_dot / n) < 5 / std::sqrt(3.0 * n));
  CHECK(std::abs(sum_theta2 / n - std::numbers::pi * std::numbers::pi / 3) < 5 * 8.8 / std::sqrt(1.0 * n));
}

TEST_CASE("Pendulum: the variant without velocity observes (cos θ, sin θ) of the same dynamics") {
  PendulumOptions hidden;
  hidden.observe_velocity = false;
  Pendulum full, partial(hidden);
  memtrace::DefaultGenerator g1(5), g2(5);
  const auto y_full = full.reset(g1);
  const auto y_partial = partial.reset(g2);
  CHECK(partial.observation_dim() == 2);
  REQUIRE(y_partial.size() == 2);
  CHECK(y_partial == y_full.head(2));
  for (int t = 0; t < 50; ++t) {
    const auto a = full.step(torque(std::sin(t)), g1);
    const auto b = partial.step(torque(std::sin(t)), g2);
    REQUIRE(b.observation.size() == 2);
    CHECK(b.observation == a.observation.head(2));
    CHECK(b.reward == a.reward);
    CHECK(partial.angular_velocity() == full.angular_velocity());
  }
}

TEST_CASE("Pendulum: bad input is refused, naming the function, and changes nothing") {
  CHECK_THROWS_WITH(Pendulum(PendulumOptions{.observe_velocity = true, .gravity = 0.0}),
                    "Pendulum: options.gravity must be positive and finite, got 0");
  CHECK_THROWS_WITH(Pendulum(PendulumOptions{.observe_velocity = true, .gravity = 10.0, .max_episode_steps = 0}),
                    "Pendulum: options.max_episode_steps must be at least 1, got 0");
  Pendulum env;
  memtrace::DefaultGenerator gen(2);
  env.reset(0.5, 0.25);
  CHECK_THROWS_WITH(env.step(std::nan("")), "Pendulum::step: the torque must be finite, got nan");
  CHECK_THROWS_AS(env.step(torque(INFINITY), gen), std::invalid_argument);
  CHECK(env.angle() == 0.5);
  CHECK(env.angular_velocity() == 0.25);
  CHECK(env.steps() == 0);
  CHECK_THROWS_WITH(env.reset(std::nan(""), 0.0), "Pendulum::reset: theta must be finite, got nan");
  CHECK_THROWS_WITH(env.reset(0.0, 8.5), "Pendulum::reset: theta_dot must be finite and in [-8, 8], got 8.5");
  CHECK(env.angle() == 0.5);
  CHECK(env.action_low()[0] == -2.0);
  CHECK(env.action_high()[0] == 2.0);
}

}  // namespace pendulum_test
