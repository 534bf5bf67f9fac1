#pragma once
// Generalized advantage estimation (Schulman et al. 2016) over a rollout of N environments in
// lockstep, with three ways of treating a truncated episode: the paper's official code (only the
// discount flag counts: a truncation bootstraps from, and chains into, the next episode's first
// state), Stable-Baselines3's (bootstrap from the final observation's value, cut the recursion) and
// CleanRL's (a truncation is a termination). See docs/control.md ("Time limits").

#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <ranges>
#include <span>

#include "memtrace/experience.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// What a truncated episode (a time limit, not a terminal state) contributes to the advantages.
/// The values are the integer codes checkpoints store.
enum class TruncationMode {
  /// The paper's code (docs/minigrid-tmaze.md, "PPO recipe"): only termination sets the discount to
  /// 0. After a truncation the discount stays 1, so δ_t bootstraps from the value of the next stored
  /// state — the first state of the next episode — and the recursion chains the next episode's
  /// advantage into this one.
  official = 0,
  /// Gymnasium's meaning of truncation, as Stable-Baselines3 treats it: δ_t = r_t + γ V(final
  /// observation) − V(φ_t) and the recursion is cut (A_t = δ_t), as if the episode went on beyond
  /// the cut with value V.
  bootstrap = 1,
  textbook = bootstrap,  ///< bootstrap's name in memtrace 0.3
  /// CleanRL's: a truncation ends the episode as a termination does, A_t = r_t − V(φ_t) (for runs
  /// that must match CleanRL's numbers; it teaches the critic that time limits are terminal).
  cut = 2,
};

/// "official", "bootstrap" or "cut" (the names the programs' --truncation takes); "unknown" for a
/// value that is none of them.
[[nodiscard]] constexpr const char* truncation_name(TruncationMode mode) noexcept {
  switch (mode) {
    case TruncationMode::official:
      return "official";
    case TruncationMode::bootstrap:
      return "bootstrap";
    case TruncationMode::cut:
      return "cut";
  }
  return "unknown";
}

/// What GAE reads of a step: its reward and how it ended (a PpoBuffer's steps; an ActedStep has
/// these members too).
struct StepOutcome {
  double reward = 0.0;      ///< r_{t+1} (in a PpoBuffer, times options.reward_scale)
  bool terminated = false;  ///< x_{t+1} is terminal
  bool truncated = false;   ///< the episode was cut (time limit)
  friend bool operator==(const StepOutcome&, const StepOutcome&) = default;
};

/// A random-access range of steps GAE can read: StepOutcome, ActedStep or any type with the
/// members reward, terminated and truncated.
template <class R>
concept GaeSteps = std::ranges::random_access_range<R> && std::ranges::sized_range<R> &&
    requires(const std::ranges::range_value_t<R>& s) {
  { s.reward } -> std::convertible_to<double>;
  { s.terminated } -> std::convertible_to<bool>;
  { s.truncated } -> std::convertible_to<bool>;
};

/// The constants of generalized_advantages (PPO's defaults: γ 0.99, GAE λ 0.95, truncation
/// bootstrapped). gae_lambda is GAE's bias-variance parameter, not the memory trace's λ.
struct GaeOptions {
  double discount = 0.99;
  double gae_lambda = 0.95;
  TruncationMode truncation = TruncationMode::bootstrap;
};

/// Advantages and value targets of a rollout of n_steps x n_envs (steps: GaeSteps), one sample per (step t, env i)
/// at index s = t·n_envs + i (the order RolloutBatch hands them over). Per environment, backwards
/// from t = n_steps - 1 with A_{n_steps} = 0, in double:
///
///   official: d_t = 0 if steps[s].terminated else 1,
///             δ_t = r_t + γ d_t v_next − v_t,   A_t = δ_t + γ λ_gae d_t A_{t+1};
///   bootstrap: terminated: A_t = r_t − v_t;  truncated (not terminated): A_t = r_t + γ v_final − v_t;
///              otherwise as official with d_t = 1;
///   cut:      terminated or truncated: A_t = r_t − v_t;  otherwise as official with d_t = 1;
///   target_t = v_t + A_t,
///
/// where v_t = values[s], v_next = values[s + n_envs] (or bootstrap_values[i] at the last step:
/// the value of the features the rollout continues from, which after an episode end belong to the
/// next episode), and v_final = final_values[s], the value of the final observation of a
/// truncated episode (read only in bootstrap mode, only where truncated and not terminated; pass an
/// empty span in the other modes). Results are rounded to Scalar.
template <class Scalar, GaeSteps Steps>
void generalized_advantages(const GaeOptions& options, std::size_t n_envs, const Steps& steps,
                            std::span<const Scalar> values, std::span<const Scalar> bootstrap_values,
                            std::span<const Scalar> final_values, std::span<Scalar> advantages,
                            std::span<Scalar> targets) {
  constexpr const char* who = "generalized_advantages";
  if (!(options.discount >= 0.0 && options.discount <= 1.0))
    detail::invalid(who, ": options.discount must be in [0, 1], got ", options.discount);
  if (!(options.gae_lambda >= 0.0 && options.gae_lambda <= 1.0))
    detail::invalid(who, ": options.gae_lambda must be in [0, 1], got ", options.gae_lambda);
  if (n_envs == 0) detail::invalid(who, ": n_envs must be at least 1, got 0");
  const auto n = static_cast<std::size_t>(std::ranges::size(steps));
  if (n % n_envs != 0) detail::invalid(who, ": steps holds ", n, " samples, not a multiple of n_envs = ", n_envs);
  if (values.size() != n) detail::invalid(who, ": values has ", values.size(), " entries, expected ", n);
  if (bootstrap_values.size() != n_envs)
    detail::invalid(who, ": bootstrap_values has ", bootstrap_values.size(), " entries, expected n_envs = ", n_envs);
  const TruncationMode mode = options.truncation;
  if (mode != TruncationMode::official && mode != TruncationMode::bootstrap && mode != TruncationMode::cut)
    detail::invalid(who, ": options.truncation must be official, bootstrap or cut, got ", static_cast<int>(mode));
  const bool bootstrap = mode == TruncationMode::bootstrap, cut = mode == TruncationMode::cut;
  if (bootstrap && final_values.size() != n)
    detail::invalid(who, ": final_values has ", final_values.size(), " entries, expected ", n,
                    " (bootstrap truncation)");
  if (advantages.size() != n) detail::invalid(who, ": advantages has ", advantages.size(), " entries, expected ", n);
  if (targets.size() != n) detail::invalid(who, ": targets has ", targets.size(), " entries, expected ", n);

  const double discount = options.discount, decay = options.discount * options.gae_lambda;
  const std::size_t n_steps = n / n_envs;
  for (std::size_t i = 0; i < n_envs; ++i) {
    double next_advantage = 0.0;
    double next_value = static_cast<double>(bootstrap_values[i]);
    for (std::size_t t = n_steps; t-- > 0;) {
      const std::size_t s = t * n_envs + i;
      const auto& step = std::ranges::begin(steps)[static_cast<std::ptrdiff_t>(s)];
      const double value = static_cast<double>(values[s]);
      double advantage;
      if (step.terminated || (cut && step.truncated)) {
        advantage = step.reward - value;
      } else if (bootstrap && step.truncated) {
        advantage = step.reward + discount * static_cast<double>(final_values[s]) - value;
      } else {
        const double delta = step.reward + discount * next_value - value;
        advantage = delta + decay * next_advantage;
      }
      advantages[s] = static_cast<Scalar>(advantage);
      targets[s] = static_cast<Scalar>(value + advantage);
      next_advantage = advantage;
      next_value = value;
    }
  }
}

}  // namespace memtrace
