#pragma once
// What the PPO tests share (ppo_test.cpp, ppo_loss_test.cpp, gae_test.cpp): small environments
// that end their episodes both ways, memories over them, rollouts, a filled buffer, and
// comparisons of buffers and agents.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_buffer.hpp>
#include <memtrace/learn/ppo_loss.hpp>
#include <memtrace/loop/rollout.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <span>
#include <utility>
#include <vector>

namespace ppo_fixtures {

using namespace memtrace;

/// A small episodic environment: states 0 .. num_states-1 observed as indices, a random walk
/// nudged by the action, rewards N(0, 1) + [action == state mod actions], terminating with
/// probability 0.15 a step and truncated after `limit` steps, so that both episode ends occur.
struct Wander {
  std::size_t num_states = 5;
  std::size_t actions = 3;
  std::size_t limit = 6;
  std::size_t state = 0, t = 0;
  template <class G>
  Observation reset(G& gen) {
    state = static_cast<std::size_t>(uniform_index(gen, num_states));
    t = 0;
    return state;
  }
  template <class G>
  TimeStep<> step(Action u, G& gen) {
    TimeStep<> out;
    out.reward = standard_normal(gen) + (u == state % actions ? 1.0 : 0.0);
    state = (state + u + static_cast<std::size_t>(uniform_index(gen, 2))) % num_states;
    ++t;
    out.observation = state;
    out.terminated = uniform_real(gen) < 0.15;
    out.truncated = t == limit;
    return out;
  }
  [[nodiscard]] std::size_t num_actions() const { return actions; }
};

/// A one-step task whose best action depends on the observation: context c in {0, 1} drawn
/// uniformly, reward 1 iff the action is c, then the episode terminates.
struct ContextBandit {
  std::size_t context = 0;
  template <class G>
  Observation reset(G& gen) {
    context = static_cast<std::size_t>(uniform_index(gen, 2));
    return context;
  }
  template <class G>
  TimeStep<> step(Action u, G& gen) {
    TimeStep<> out;
    out.reward = u == context ? 1.0 : 0.0;
    out.terminated = true;
    out.observation = static_cast<Observation>(uniform_index(gen, 2));  // never acted on
    return out;
  }
  [[nodiscard]] std::size_t num_actions() const { return 2; }
};

/// An environment that pays nothing.
struct Silent {
  std::size_t t = 0;
  template <class G>
  Observation reset(G& gen) {
    t = 0;
    return static_cast<Observation>(uniform_index(gen, 4));
  }
  template <class G>
  TimeStep<> step(Action, G& gen) {
    TimeStep<> out;
    out.observation = static_cast<Observation>(uniform_index(gen, 4));
    out.truncated = ++t == 5;
    return out;
  }
  [[nodiscard]] std::size_t num_actions() const { return 3; }
};

/// A memory trace of index observations, z = λ z + (1 − λ) e_y (z_0 = e_{y_0}), with dense features
/// returned by reference (or by value).
template <class Vec, bool ByValue = false>
struct DenseTrace {
  std::size_t n = 5;
  double lambda = 0.5;
  Vec z = Vec::Zero(static_cast<Eigen::Index>(n));
  void reset(Observation y) {
    z.setZero();
    z[static_cast<Eigen::Index>(y)] = 1;
  }
  void update(Observation y) {
    z *= static_cast<typename Vec::Scalar>(lambda);
    z[static_cast<Eigen::Index>(y)] += static_cast<typename Vec::Scalar>(1 - lambda);
  }
  [[nodiscard]] std::size_t dim() const { return n; }
  [[nodiscard]] auto features() const -> std::conditional_t<ByValue, Vec, const Vec&> { return z; }
};

/// The last two observations as a MultiHot over 2n entries (the current one in [0, n), the previous
/// in [n, 2n)): a frame stack of one-hot frames; to_dense of it is DenseStack's features.
struct SparseStack {
  std::size_t n = 5;
  MultiHot<2> phi;
  void reset(Observation y) {
    phi[0] = y;
    phi.set_size(1);
  }
  void update(Observation y) {
    const std::size_t previous = phi[0];
    phi[0] = y;
    phi[1] = n + previous;
    phi.set_size(2);
  }
  [[nodiscard]] std::size_t dim() const { return 2 * n; }
  [[nodiscard]] const MultiHot<2>& features() const { return phi; }
};
struct DenseStack {
  SparseStack sparse;
  Eigen::VectorXd z = Eigen::VectorXd::Zero(10);
  void reset(Observation y) {
    sparse.reset(y);
    z = to_dense(sparse.phi, 10);
  }
  void update(Observation y) {
    sparse.update(y);
    z = to_dense(sparse.phi, 10);
  }
  [[nodiscard]] std::size_t dim() const { return 10; }
  [[nodiscard]] const Eigen::VectorXd& features() const { return z; }
};

/// n copies of env and memory, streams (seed, i).
template <class Env, class M>
Rollout<Env, M> make_rollout(std::size_t n, const Env& env, const M& memory, std::uint64_t seed) {
  std::vector<Env> envs(n, env);
  std::vector<M> memories(n, memory);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) gens.push_back(make_stream(seed, i));
  return Rollout<Env, M>(std::move(envs), std::move(memories), std::move(gens));
}

/// A buffer of the agent filled with n_steps rollout steps, bootstrapped, with its advantages.
template <class Agent, class Env, class M>
typename Agent::buffer_type collect(Agent& agent, Rollout<Env, M>& rollout) {
  typename Agent::buffer_type buffer = agent.make_buffer();
  auto acting = agent.acting(buffer);
  rollout.collect(acting, agent.options().n_steps, acting);
  acting.bootstrap(rollout.features());
  agent.compute_advantages(buffer);
  return buffer;
}

/// train's loop on a buffer the caller keeps: `updates` times n_steps rollout steps, bootstrapped,
/// shown to `inspect(buffer)` and learned from.
template <class Agent, class R, class F>
void learn(Agent& agent, typename Agent::buffer_type& buffer, R& rollout, std::size_t updates, F&& inspect) {
  auto acting = agent.acting(buffer);
  for (std::size_t u = 0; u < updates; ++u) {
    rollout.collect(acting, agent.options().n_steps, acting);
    acting.bootstrap(rollout.features());
    inspect(std::as_const(buffer));
    agent.update(buffer);
  }
}

/// Every member of two buffers equal (the features' columns bit for bit).
template <class Phi, class Scalar>
bool same_contents(const PpoBuffer<Phi, Scalar>& a, const PpoBuffer<Phi, Scalar>& b) {
  return a.n_envs() == b.n_envs() && a.n_steps() == b.n_steps() && a.features.size() == b.features.size() &&
         a.features.block(0, a.features.size()) == b.features.block(0, b.features.size()) && a.steps == b.steps &&
         a.log_probs == b.log_probs && a.values == b.values && a.final_values == b.final_values &&
         a.bootstrap_values == b.bootstrap_values && a.advantages == b.advantages && a.targets == b.targets &&
         a.episodes == b.episodes && a.recorded() == b.recorded() && a.bootstrapped() == b.bootstrapped() &&
         a.actions == b.actions;
}

/// ppo_loss with the agent's networks and coefficients on the given samples of buffer.
template <class Agent>
PpoLoss loss_on(Agent& agent, const typename Agent::buffer_type& buffer, std::span<const std::size_t> samples,
                bool gradients) {
  PpoMinibatch<typename Agent::features_type, typename Agent::scalar_type> minibatch;
  minibatch.gather(buffer, samples);
  return ppo_loss(agent.networks(), minibatch, agent.loss_coefficients(), gradients);
}

/// Both networks' parameters equal, bit for bit.
template <class Agent>
bool same_parameters(const Agent& a, const Agent& b) {
  return a.actor().parameters() == b.actor().parameters() && a.critic().parameters() == b.critic().parameters();
}

inline PpoOptions small_options() {
  PpoOptions o;
  o.n_envs = 2;
  o.n_steps = 8;
  o.epochs = 1;
  o.minibatches = 2;
  o.hidden_sizes = {5, 4};
  o.anneal_lr = false;
  return o;
}

template <class V>
std::vector<double> copy_of(const V& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

}  // namespace ppo_fixtures
