#pragma once
// The acting side of a PPO agent bound to one buffer: the policy Rollout acts with and the sink
// that writes each step into the buffer once its outcome is known. Included by learn/ppo.hpp.
// See docs/control.md ("PPO's data path").

#include <Eigen/Core>
#include <cstddef>
#include <random>
#include <span>
#include <stdexcept>

#include "memtrace/concepts.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/learn/distributions.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/learn/ppo_buffer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

template <class Phi, class Scalar, class Network>
class Ppo;

/// The acting side of a Ppo agent bound to one buffer (Ppo::acting(buffer)), for Rollout: a
/// BatchPolicy (act) and the rollout's sink (operator(), which is record), so that
/// `rollout.collect(acting, n_steps, acting)` fills the buffer; then bootstrap(rollout.features())
/// and agent.update(buffer). act keeps the step's features, actions, log-probabilities and values
/// aside (in the buffer's private pending step) until the sink hands over the step's outcome, and
/// the step is then written into the buffer's samples at once. Refers to the agent and the buffer:
/// keep both alive; it holds nothing else, so binding a buffer again allocates nothing.
template <class Phi, class Scalar, class Network>
class PpoActing {
  using D = policy_distribution_t<Network>;
  static constexpr bool recurrent = RecurrentActorCriticNetwork<Network, Phi>;

 public:
  using buffer_type = PpoBuffer<Phi, Scalar, D>;

  /// The next step of the buffer: runs one forward pass of both heads over the n_envs features and
  /// picks actions[i] from the network's distribution with gens[i] (Distribution::act: index
  /// actions by sample_categorical; continuous ones as sample_diagonal_gaussian draws them, rounded
  /// to Scalar and to A's scalar, unclipped), keeping them with their log-probabilities, the
  /// values and the features (normalised) until the sink writes the step. Acting again before the
  /// sink acts anew on the same step. With options.normalize_features the features first update
  /// the agent's normaliser (the one change outside update). Throws std::invalid_argument for
  /// spans whose size is not n_envs, features that do not fit input_dim() or an action type that
  /// cannot hold the actions, std::logic_error when the buffer is full (bootstrap and update it);
  /// a refused call changes nothing.
  template <std::uniform_random_bit_generator G, class A>
  void act(std::span<const Phi> features, std::span<G> gens,
           std::span<A> actions) requires(D::template acts_with<A> && !recurrent) {
    act(features, std::span<const bool>(), gens, actions);
  }

  /// act, told where episodes start (EpisodeStartPolicy; Rollout prefers it): a recurrent agent's
  /// network steps from its states (Ppo::states()) reset to zero where starts[i], keeping the new
  /// states aside until the sink writes the step; a feed-forward agent ignores starts. Throws
  /// std::invalid_argument as act does, and for a recurrent agent's starts whose size is not n_envs.
  template <std::uniform_random_bit_generator G, class A>
  void act(std::span<const Phi> features, std::span<const bool> starts, std::span<G> gens,
           std::span<A> actions) requires D::template acts_with<A> {
    auto& p = buffer_->pending_;
    const std::size_t n = buffer_->n_envs();
    if (recurrent && starts.size() != n)
      detail::invalid("PpoActing::act: starts holds ", starts.size(), " entries, expected options.n_envs = ", n);
    if (features.size() != n)
      detail::invalid("PpoActing::act: features holds ", features.size(), " entries, expected options.n_envs = ", n);
    if (gens.size() != n)
      detail::invalid("PpoActing::act: gens holds ", gens.size(), " entries, expected options.n_envs = ", n);
    if (actions.size() != n)
      detail::invalid("PpoActing::act: actions holds ", actions.size(), " entries, expected options.n_envs = ", n);
    if (buffer_->full())
      throw std::logic_error(detail::message("PpoActing::act: the buffer already holds n_steps = ", buffer_->n_steps(),
                                             " steps; bootstrap and update it first"));
    detail::check_ppo_features("PpoActing::act", "features", features, agent_->input_dim());
    D::template check_action_type<A>("PpoActing::act", agent_->networks().policy_dim());
    if constexpr (!detail::ppo_sparse<Phi>)
      if (agent_->options().normalize_features) agent_->normalizer_.update(features);  // refuses non-finite ones
    p.acted = false;  // until this step is complete (a failing network leaves it unacted)
    for (std::size_t i = 0; i < n; ++i) p.features.set(i, features[i]);
    agent_->normalize(p.features, 0, n);
    auto& nets = agent_->networks();
    const auto input = p.features.block(0, n);
    const auto sample = [&](const auto& out) {
      detail::check_network_output("PpoActing::act", "policy output", out, nets.policy_dim(), n);
      for (std::size_t i = 0; i < n; ++i)
        p.log_probs[static_cast<Eigen::Index>(i)] =
            static_cast<Scalar>(D::template act<Scalar>("PpoActing::act", out.col(static_cast<Eigen::Index>(i)),
                                                        ActionSelection::sample, gens[i], actions[i], p.actions, i));
    };
    const auto keep_values = [&](const auto& value_output) {
      detail::check_network_output("PpoActing::act", "value output", value_output, 1, n);
      p.values = value_output.row(0).transpose();
    };
    if constexpr (recurrent) {
      if (buffer_->recorded_ == 0) p.states_before = agent_->states_;  // the segment's start, for replay
      p.states = agent_->states_;
      for (std::size_t i = 0; i < n; ++i) {
        p.starts[static_cast<Eigen::Index>(i)] = starts[i];
        if (starts[i]) p.states.col(static_cast<Eigen::Index>(i)).setZero();
      }
      const auto out = nets.forward_step(input, p.states);
      sample(out.policy);
      keep_values(out.value);
    } else {
      sample(nets.forward_policy(input));
      keep_values(nets.forward_value(input));
    }
    p.acted = true;
  }

  /// Writes the step act acted on into the buffer (features, the actions act sampled — not the
  /// steps' actions Rollout clipped into the box —, log-probabilities, values; rewards times options.reward_scale, then
  /// normalised with options.normalize_rewards, and episode ends; in bootstrap truncation the value of the final
  /// observation of every episode truncated and not terminated, from batch.next_features) and lists the episodes that
  /// ended (the first step of a rollout clears the list of the last). Throws std::logic_error unless act acted on this
  /// step, std::invalid_argument for a batch of the wrong size or whose actions are not the ones act chose; a refused
  /// call changes nothing.
  template <class A>
  void record(const RolloutBatch<Phi, A>& batch) requires D::template acts_with<A> {
    buffer_type& buffer = *buffer_;
    auto& p = buffer.pending_;
    const std::size_t n = buffer.n_envs();
    const auto& o = agent_->options();
    if (!p.acted || buffer.full())
      throw std::logic_error("PpoActing::record: no act for this step (call act on batch.features first)");
    if (batch.steps.size() != n)
      detail::invalid("PpoActing::record: batch.steps holds ", batch.steps.size(),
                      " entries, expected options.n_envs = ", n);
    const bool bootstrap = o.truncation == TruncationMode::bootstrap;
    if (bootstrap) {
      if (batch.next_features.size() != n)
        detail::invalid("PpoActing::record: batch.next_features holds ", batch.next_features.size(),
                        " entries, expected options.n_envs = ", n);
      detail::check_ppo_features("PpoActing::record", "batch.next_features", batch.next_features, agent_->input_dim());
    }
    // The policy's sample is what the buffer keeps; the steps may hold it clipped into the box.
    const bool clipped = !batch.policy_actions.empty();
    if (clipped && batch.policy_actions.size() != n)
      detail::invalid("PpoActing::record: batch.policy_actions holds ", batch.policy_actions.size(),
                      " entries, expected options.n_envs = ", n);
    for (std::size_t i = 0; i < n; ++i)
      if (!D::holds(p.actions, i, clipped ? batch.policy_actions[i] : batch.steps[i].action))
        detail::invalid("PpoActing::record: batch.", clipped ? "policy_actions[" : "steps[", i,
                        clipped ? "]" : "].action", " is not the action act chose for environment ", i);
    const std::size_t base = buffer.recorded_ * n;
    // First what may still be refused (a final observation the normaliser refuses): the final
    // values, read through the bootstrap columns, which hold nothing until bootstrap.
    if (bootstrap)
      for (std::size_t i = 0; i < n; ++i)
        if (batch.steps[i].truncated && !batch.steps[i].terminated)
          buffer.final_values[static_cast<Eigen::Index>(base + i)] = value(batch.next_features[i], i);
    // Normalised rewards (a reward that is not finite is refused before anything changes) go into
    // the step's slot, which the loop below completes.
    if (o.normalize_rewards)
      agent_->reward_normalizer_.normalize(
          batch.steps, o.reward_scale, [&](std::size_t i, double reward) { buffer.steps[base + i].reward = reward; });
    if (buffer.recorded_ == 0) buffer.episodes.clear();
    if constexpr (recurrent) {  // the states move on with the step
      if (buffer.recorded_ == 0) buffer.initial_states = p.states_before;
      buffer.starts.segment(static_cast<Eigen::Index>(base), static_cast<Eigen::Index>(n)) = p.starts;
      agent_->states_ = p.states;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<Eigen::Index>(base + i), ii = static_cast<Eigen::Index>(i);
      const BasicActedStep<A>& step = batch.steps[i];
      buffer.features.copy_from(base + i, p.features, i);
      D::copy(buffer.actions, base + i, p.actions, i);
      buffer.log_probs[s] = p.log_probs[ii];
      buffer.values[s] = p.values[ii];
      const double reward = o.normalize_rewards ? buffer.steps[base + i].reward : step.reward * o.reward_scale;
      buffer.steps[base + i] = {reward, step.terminated, step.truncated};  // exact for scale 1
      if (step.terminated || step.truncated)
        buffer.episodes.push_back(
            {i, buffer.recorded_, step.episode_return, step.episode_length, step.terminated, step.truncated});
    }
    ++buffer.recorded_;
    p.acted = false;
  }

  /// record(batch): the sink Rollout calls.
  template <class A>
  void operator()(const RolloutBatch<Phi, A>& batch) requires D::template acts_with<A> {
    record(batch);
  }

  /// After n_steps steps: stores the n_envs features the environments continue from (after any
  /// episode-end reset: Rollout::features()), normalised with the statistics of the moment, as the
  /// columns the advantages bootstrap from. Throws std::logic_error unless the buffer is full and
  /// not yet bootstrapped, std::invalid_argument for a span of the wrong size or features that do
  /// not fit input_dim().
  void bootstrap(std::span<const Phi> bootstrap_features) requires(!recurrent) {
    bootstrap(bootstrap_features, std::span<const bool>());
  }

  /// bootstrap, told where the environments start episodes (Rollout::episode_starts()): a recurrent
  /// agent reads the bootstrap features with its states reset to zero there (buffer.bootstrap_states);
  /// a feed-forward agent ignores starts.
  void bootstrap(std::span<const Phi> bootstrap_features, std::span<const bool> starts) {
    buffer_type& buffer = *buffer_;
    if (recurrent && starts.size() != buffer.n_envs())
      detail::invalid("PpoActing::bootstrap: starts holds ", starts.size(),
                      " entries, expected options.n_envs = ", buffer.n_envs());
    const std::size_t n = buffer.n_envs(), samples = buffer.samples();
    if (!buffer.full())
      throw std::logic_error(detail::message("PpoActing::bootstrap: the buffer holds ", buffer.recorded(),
                                             " steps, expected n_steps = ", buffer.n_steps()));
    if (buffer.bootstrapped())
      throw std::logic_error("PpoActing::bootstrap: the buffer is already bootstrapped (update it)");
    if (bootstrap_features.size() != n)
      detail::invalid("PpoActing::bootstrap: bootstrap_features holds ", bootstrap_features.size(),
                      " entries, expected options.n_envs = ", n);
    detail::check_ppo_features("PpoActing::bootstrap", "bootstrap_features", bootstrap_features, agent_->input_dim());
    for (std::size_t i = 0; i < n; ++i) buffer.features.set(samples + i, bootstrap_features[i]);
    agent_->normalize(buffer.features, samples, n);
    if constexpr (recurrent) {
      buffer.bootstrap_states = agent_->states_;
      for (std::size_t i = 0; i < n; ++i)
        if (starts[i]) buffer.bootstrap_states.col(static_cast<Eigen::Index>(i)).setZero();
    }
    buffer.bootstrapped_ = true;
  }

  /// Whether act has acted on a step the sink has not written yet.
  [[nodiscard]] bool acted() const noexcept { return buffer_->pending_.acted; }
  [[nodiscard]] buffer_type& buffer() const noexcept { return *buffer_; }

 private:
  /// The critic's value of environment i's feature vector phi, normalised with the statistics of the
  /// moment, read through the first bootstrap column (unused until bootstrap; it has the capacity
  /// after the first update, so no allocation); a recurrent agent's from environment i's state
  /// after the pending step.
  Scalar value(const Phi& phi, [[maybe_unused]] std::size_t i) {
    auto& columns = buffer_->features;
    const std::size_t scratch = buffer_->samples();
    columns.set(scratch, phi);
    agent_->normalize(columns, scratch, 1);
    if constexpr (recurrent) {
      auto& state = buffer_->pending_.state;
      state = buffer_->pending_.states.col(static_cast<Eigen::Index>(i));
      const auto out = agent_->networks().forward_step(columns.block(scratch, 1), state);
      detail::check_network_output("PpoActing::record", "value output", out.value, 1, 1);
      return out.value(0, 0);
    } else {
      const auto& out = agent_->networks().forward_value(columns.block(scratch, 1));
      detail::check_network_output("PpoActing::record", "value output", out, 1, 1);
      return out(0, 0);
    }
  }

  friend class Ppo<Phi, Scalar, Network>;
  /// Binds buffer (Ppo::acting checks its shape first). Allocates nothing.
  PpoActing(Ppo<Phi, Scalar, Network>& agent, buffer_type& buffer) noexcept : agent_(&agent), buffer_(&buffer) {}

  Ppo<Phi, Scalar, Network>* agent_;
  buffer_type* buffer_;  // its private pending step holds what act keeps
};

}  // namespace memtrace
