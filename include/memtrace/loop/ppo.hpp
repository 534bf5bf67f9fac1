#pragma once
// PPO's driver: train an agent on a rollout for a budget of environment steps, and evaluate its
// stochastic policy on a copy of an environment and memory. Free functions over the agent's public
// data path (make_buffer, acting, bootstrap, update, policy), so that the agent (learn/ppo.hpp)
// knows nothing of the loop.
// See docs/control.md ("PPO").

#include <concepts>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/loop/rollout.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Trains agent on rollout (n_envs environments whose memories give features of type Phi and
/// dimension input_dim()) for total_env_steps / (n_envs·n_steps) updates (the remainder is not
/// run), on the caller's empty buffer (agent.make_buffer(); keeping it across calls, training
/// allocates nothing after its first update): each update runs n_steps rollout steps with
/// agent.acting(buffer) as the policy and the sink, bootstraps from the features the environments
/// continue from (rollout.features(), with where they start episodes for a recurrent agent), calls
/// agent.update(buffer), then on_update(const PpoStats&); if on_update returns bool, false stops training. With
/// annealing and no horizon yet (agent.total_updates() == 0), the first train sets it to its number of updates. Throws
/// std::invalid_argument (before any step) for a rollout whose size is not n_envs, a memory whose
/// dim() is not input_dim(), total_env_steps < n_envs·n_steps, a horizon whose Adam steps would
/// overflow or a buffer of another shape; std::logic_error for a buffer that is not empty.
template <class Phi, class Scalar, class Net, class Env, class M, class G, class OnUpdate>
requires std::same_as<features_t<M>, Phi>
void train(Ppo<Phi, Scalar, Net>& agent, typename Ppo<Phi, Scalar, Net>::buffer_type& buffer,
           Rollout<Env, M, G>& rollout, std::size_t total_env_steps, OnUpdate&& on_update) {
  const PpoOptions& options = agent.options();
  const std::size_t n = options.n_envs;
  const std::size_t samples = n * options.n_steps;  // no overflow: the agent checked it
  if (rollout.size() != n)
    detail::invalid("train: rollout has ", rollout.size(), " environments, expected options.n_envs = ", n);
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<std::size_t>(rollout.memory(i).dim()) != agent.input_dim())
      detail::invalid("train: rollout's memory ", i, " has dim ", rollout.memory(i).dim(),
                      ", expected input_dim = ", agent.input_dim());
  if (total_env_steps < samples)
    detail::invalid("train: total_env_steps must be at least n_envs·n_steps = ", samples, ", got ", total_env_steps);
  PpoActing<Phi, Scalar, Net> acting = agent.acting(buffer);  // checks the buffer's shape
  if (buffer.recorded() != 0 || buffer.bootstrapped())
    throw std::logic_error(
        detail::message("train: the buffer holds ", buffer.recorded(), " steps (update or clear it first)"));
  const std::size_t n_updates = total_env_steps / samples;
  if (options.anneal_lr && agent.total_updates() == 0) {
    if (detail::checked_mul(n_updates, options.epochs * options.minibatches) == 0)
      detail::invalid("train: the schedule's Adam steps overflow: total_env_steps / (n_envs·n_steps) = ", n_updates,
                      " updates of epochs·minibatches = ", options.epochs * options.minibatches, " steps each");
    agent.set_total_updates(n_updates);
  }
  for (std::size_t u = 0; u < n_updates; ++u) {
    rollout.collect(acting, options.n_steps, acting);
    acting.bootstrap(rollout.features(), rollout.episode_starts());
    const PpoStats& stats = agent.update(buffer);
    if constexpr (std::same_as<std::invoke_result_t<OnUpdate&, const PpoStats&>, bool>) {
      if (!on_update(stats)) return;
    } else {
      on_update(stats);
    }
  }
}

/// train on a buffer of its own (allocated at each call).
template <class Phi, class Scalar, class Net, class Env, class M, class G, class OnUpdate>
requires std::same_as<features_t<M>, Phi>
void train(Ppo<Phi, Scalar, Net>& agent, Rollout<Env, M, G>& rollout, std::size_t total_env_steps,
           OnUpdate&& on_update) {
  auto buffer = agent.make_buffer();
  train(agent, buffer, rollout, total_env_steps, std::forward<OnUpdate>(on_update));
}

template <class Phi, class Scalar, class Net, class Env, class M, class G>
requires std::same_as<features_t<M>, Phi>
void train(Ppo<Phi, Scalar, Net>& agent, Rollout<Env, M, G>& rollout, std::size_t total_env_steps) {
  train(agent, rollout, total_env_steps, [](const PpoStats&) {});
}

template <class Phi, class Scalar, class Net, class Env, class M, class G>
requires std::same_as<features_t<M>, Phi>
void train(Ppo<Phi, Scalar, Net>& agent, typename Ppo<Phi, Scalar, Net>::buffer_type& buffer,
           Rollout<Env, M, G>& rollout, std::size_t total_env_steps) {
  train(agent, buffer, rollout, total_env_steps, [](const PpoStats&) {});
}

/// The official evaluation (docs/control.md, "Evaluation"): `episodes` episodes of a copy of env
/// with a copy of memory, one after the other (a Rollout of one environment: the memory is reset
/// with the environment at every episode start), acting with agent.policy(selection) (sampled, the
/// official evaluation, or greedy), drawing from gen (which advances; a greedy policy draws only
/// what the environment draws). Returns the episodes (env 0, step counted from the first step of
/// the evaluation). It stops early after max_steps steps (an episode still running then is not
/// returned): fewer than `episodes` come back when the cap binds, so that a policy that never ends
/// its episodes is evaluated in bounded time. Continuous actions are clipped into the
/// environment's box as in training unless `clipping` is ActionClipping::off. Throws
/// std::invalid_argument for max_steps = 0, a clipping that is neither, or a memory whose dim() is
/// not input_dim().
template <class Phi, class Scalar, class Net, class Env, class M, std::uniform_random_bit_generator G>
requires std::same_as<features_t<M>, Phi> std::vector<EpisodeEnd> evaluate(
    Ppo<Phi, Scalar, Net>& agent, const Env& env, const M& memory, G& gen, std::size_t episodes,
    std::size_t max_steps = std::numeric_limits<std::size_t>::max(),
    ActionSelection selection = ActionSelection::sample, ActionClipping clipping = ActionClipping::to_box) {
  if (static_cast<std::size_t>(memory.dim()) != agent.input_dim())
    detail::invalid("evaluate: memory has dim ", memory.dim(), ", expected input_dim = ", agent.input_dim());
  if (max_steps == 0) detail::invalid("evaluate: max_steps must be at least 1, got 0");
  if (clipping != ActionClipping::to_box && clipping != ActionClipping::off)
    detail::invalid("evaluate: clipping must be to_box or off, got ", static_cast<int>(clipping));
  std::vector<EpisodeEnd> out;
  out.reserve(episodes);
  Rollout<Env, M, G> one(std::vector<Env>{env}, std::vector<M>{memory}, std::vector<G>{gen}, clipping);
  auto pi = agent.policy(selection);
  std::size_t t = 0;
  while (out.size() < episodes && t < max_steps) {
    one.step(pi, [&](const auto& batch) {
      const auto& s = batch.steps[0];
      if (s.terminated || s.truncated)
        out.push_back({0, t, s.episode_return, s.episode_length, s.terminated, s.truncated});
    });
    ++t;
  }
  gen = one.generator(0);
  return out;
}

/// evaluate with the selection before the (optional) step cap: evaluate(agent, env, memory, gen,
/// 100, ActionSelection::greedy).
template <class Phi, class Scalar, class Net, class Env, class M, std::uniform_random_bit_generator G>
requires std::same_as<features_t<M>, Phi> std::vector<EpisodeEnd> evaluate(
    Ppo<Phi, Scalar, Net>& agent, const Env& env, const M& memory, G& gen, std::size_t episodes,
    ActionSelection selection, std::size_t max_steps = std::numeric_limits<std::size_t>::max(),
    ActionClipping clipping = ActionClipping::to_box) {
  return evaluate(agent, env, memory, gen, episodes, max_steps, selection, clipping);
}

}  // namespace memtrace
