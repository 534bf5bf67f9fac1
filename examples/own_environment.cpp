// Your own environment with memtrace: written from scratch, with vector observations, actions and a
// hidden state the library never sees. A bank of memory traces turns its noisy observations into
// features (the difference of a fast and a slow trace estimates the unobserved velocity), a simple
// policy acts on them, the library's rollout loop steps four copies of the environment in lockstep,
// and linear TD(0) evaluates the policy. docs/concepts.md walks through it; ctest runs it.
#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <memtrace/learn/td.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/random.hpp>
#include <vector>

namespace cart {

/// A cart on a line. Hidden state: position p and velocity v. Action 0 pushes left, 1 pushes
/// right; the cart also drifts at random. The agent observes only its position, with noise, plus a
/// constant 1 (a bias feature for linear learners). Reward 1 a step; the episode terminates when
/// the cart leaves [-1, 1] and is truncated after 500 steps.
class Cart {
 public:
  using observation_type = Eigen::Vector2f;

  template <class G>
  observation_type reset(G& gen) {
    p_ = 0.4 * (memtrace::uniform_real(gen) - 0.5);
    v_ = 0.0;
    steps_ = 0;
    return observe(gen);
  }

  template <class G>
  memtrace::TimeStep<observation_type> step(memtrace::Action u, G& gen) {
    v_ = 0.9 * v_ + (u == 1 ? 0.01 : -0.01) + 0.1 * (memtrace::uniform_real(gen) - 0.5);
    p_ += v_;
    ++steps_;
    const bool out = std::abs(p_) > 1.0;
    return {observe(gen), 1.0, out, !out && steps_ == 500};
  }

  [[nodiscard]] std::size_t num_actions() const { return 2; }

 private:
  template <class G>
  observation_type observe(G& gen) const {
    const double noise = 0.2 * (memtrace::uniform_real(gen) - 0.5);
    return {static_cast<float>(p_ + noise), 1.0f};
  }

  double p_ = 0.0, v_ = 0.0;
  std::size_t steps_ = 0;
};

/// Pushes against where the cart is heading: position plus 5 × velocity, both estimated from the
/// traces (λ = 0.5 for the position, fast − slow trace for the velocity); 10% random actions.
struct LeanBack {
  template <class G>
  memtrace::Action act(const Eigen::VectorXf& z, G& gen) const {
    if (memtrace::bernoulli(gen, 0.1)) return static_cast<memtrace::Action>(memtrace::uniform_index(gen, 2));
    const float position = z[2], velocity = z[0] - z[4];  // blocks λ-major: [λ=0 | λ=0.5 | λ=0.9] × [p, 1]
    return position + 5.0f * velocity < 0.0f ? 1 : 0;
  }
};

}  // namespace cart

// The environment plugs into the acting loop's concept, and the library knows it asks for no more:
// no index observations, no visible state.
static_assert(memtrace::Pomdp<cart::Cart>);
static_assert(std::is_same_v<memtrace::observation_t<cart::Cart>, Eigen::Vector2f>);
static_assert(!memtrace::FiniteObservations<cart::Cart>);
static_assert(!memtrace::ExposedState<cart::Cart>);
static_assert(memtrace::Memory<memtrace::TraceBank<memtrace::dynamic, float>, Eigen::Vector2f>);
static_assert(memtrace::Policy<cart::LeanBack, Eigen::VectorXf>);

int main() {
  using Bank = memtrace::TraceBank<memtrace::dynamic, float>;
  constexpr std::size_t n = 4;
  constexpr double discount = 0.95;
  std::vector<cart::Cart> envs(n);
  std::vector<Bank> memories(n, Bank({0.0, 0.5, 0.9}, 2, memtrace::TraceInit::first_observation));
  std::vector<memtrace::DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) gens.push_back(memtrace::make_stream(2025, i));  // one stream per environment
  memtrace::Rollout rollout(std::move(envs), std::move(memories), std::move(gens));

  memtrace::LinearTd<float> td(rollout.memory(0).dim(), 0.005);
  cart::LeanBack policy;
  // Monte Carlo check: the discounted return of each episode from its start, against TD's value of
  // the start's features (an episode cut after 500 steps misses only γ^500 ≈ 7e-12 of its return).
  std::vector<double> episode_return(n, 0.0), weight(n, 1.0), start_value(n, 0.0);
  std::vector<bool> fresh(n, true);
  double sum_return = 0.0, sum_value = 0.0;
  std::size_t episodes = 0, lengths = 0;
  const std::size_t steps = 200'000, learn_only = 100'000;
  rollout.collect(policy, steps, [&](const memtrace::RolloutBatch<Eigen::VectorXf>& batch) {
    for (std::size_t i = 0; i < n; ++i) {
      const memtrace::ActedStep& s = batch.steps[i];
      td.update(batch.features[i], s.reward, s.terminated ? 0.0 : discount, batch.next_features[i]);
      if (fresh[i]) start_value[i] = td.value(batch.features[i]);
      fresh[i] = false;
      episode_return[i] += weight[i] * s.reward;
      weight[i] *= discount;
      if (s.terminated || s.truncated) {
        if (batch.t >= learn_only) {
          sum_return += episode_return[i];
          sum_value += start_value[i];
          ++episodes;
          lengths += s.episode_length;
        }
        episode_return[i] = 0.0;
        weight[i] = 1.0;
        fresh[i] = true;
      }
    }
  });
  const double mc = sum_return / static_cast<double>(episodes), estimate = sum_value / static_cast<double>(episodes);
  std::printf("%zu episodes after the first %zu steps, mean length %.1f\n", episodes, learn_only,
              static_cast<double>(lengths) / static_cast<double>(episodes));
  std::printf("value of the start: TD(0) on 6 trace features %.3f, Monte Carlo %.3f\n", estimate, mc);
  std::printf("weights:");
  for (const float w : td.weights()) std::printf(" %.3f", static_cast<double>(w));
  std::printf("\n");
  // TD(0) with 6 features is biased, but it must be in the right range.
  return episodes > 100 && std::abs(estimate - mc) < 0.15 * mc ? 0 : 1;
}
