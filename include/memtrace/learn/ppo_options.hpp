#pragma once
// PPO's constants (PpoOptions, with the official recipe's defaults), their checks, and what one
// update reports (PpoStats). See docs/control.md ("PPO").

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "memtrace/experience.hpp"
#include "memtrace/learn/adam.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/learn/reward_normalizer.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Every constant of PPO, with the official defaults (the README run of the paper's code:
/// docs/minigrid-tmaze.md, "PPO recipe") except truncation, which the official recipe sets to
/// TruncationMode::official.
struct PpoOptions {
  std::size_t n_envs = 16;    ///< environments acting in lockstep (the rollout's size)
  std::size_t n_steps = 128;  ///< rollout steps per update: an update learns from n_envs·n_steps samples
  double discount = 0.99;     ///< γ, in [0, 1]
  double gae_lambda = 0.95;   ///< GAE's λ, in [0, 1] (not the memory trace's λ)
  /// What a truncated episode bootstraps from (docs/control.md, "Time limits"): γ·V(final
  /// observation) by default; the official recipe (ppo_tmaze) sets official.
  TruncationMode truncation = TruncationMode::bootstrap;
  std::size_t epochs = 2;         ///< passes over the samples per update
  std::size_t minibatches = 8;    ///< minibatches per pass; must divide n_envs·n_steps
  double clip_epsilon = 0.2;      ///< ε of the clipped ratio, > 0
  double vf_coef = 0.5;           ///< weight of the value loss, >= 0
  double ent_coef = 0.01;         ///< weight of the entropy bonus, >= 0
  double max_grad_norm = 0.5;     ///< the global gradient-norm clip over all parameters, > 0
  double learning_rate = 3e-4;    ///< Adam's initial learning rate, >= 0
  bool anneal_lr = true;          ///< decay the learning rate linearly to 0 over total_updates
  std::size_t total_updates = 0;  ///< the schedule's horizon in updates; 0: set_total_updates or the first train()
  std::vector<std::size_t> hidden_sizes = {64, 64};  ///< hidden layers of the actor and of the critic
  AdamOptions adam = {};                             ///< β1 0.9, β2 0.999, ε 1e-8 (outside the sqrt)
  /// Normalise every feature with running statistics of all the features the agent acted on (a
  /// FeatureNormalizer the agent owns; not in the official code). Dense features only.
  bool normalize_features = false;
  NormalizerOptions normalizer = {};  ///< ε 1e-8, clip 10 (used with normalize_features)
  /// Every reward is multiplied by it before GAE (what the agent learns from; episode returns and
  /// statistics stay unscaled), > 0 and finite: reward scaling for returns far from 1 (the
  /// pendulum's reach −1,600 a episode).
  double reward_scale = 1.0;
  /// The initial log standard deviation of the default Gaussian network (GaussianActorCritic), finite.
  double initial_log_std = 0.0;
  /// Early stopping (Stable-Baselines3's target_kl; 0: off): an update stops, before its step, at
  /// the first minibatch whose approx_kl exceeds 1.5·target_kl, and skips the rest of its epochs;
  /// the learning rate's schedule goes on as if no step was skipped. >= 0 and finite.
  double target_kl = 0.0;
  /// Normalise rewards as Stable-Baselines3's VecNormalize(norm_reward=True) (a RewardNormalizer
  /// the agent owns, of its n_envs and discount; after reward_scale): r / sqrt(Var[R] + ε) clipped.
  bool normalize_rewards = false;
  NormalizerOptions reward_normalizer = {};  ///< ε 1e-8, clip 10 (used with normalize_rewards)
  /// Clip the value loss as CleanRL's clip_vloss: 0.5·max((v − R)², (v_old + clip(v − v_old, ±ε) − R)²)
  /// with ε = clip_epsilon and v_old the rollout's value.
  bool clip_value_loss = false;
};

namespace detail {
/// Throws std::invalid_argument naming `who`, the option and its value for options PPO cannot run
/// (sparse_features: the features are MultiHot, which a normaliser refuses).
inline void check_ppo_options(const char* who, const PpoOptions& o, bool sparse_features) {
  if (o.n_envs == 0) invalid(who, ": options.n_envs must be at least 1, got 0");
  if (o.n_steps == 0) invalid(who, ": options.n_steps must be at least 1, got 0");
  if (o.epochs == 0) invalid(who, ": options.epochs must be at least 1, got 0");
  if (o.minibatches == 0) invalid(who, ": options.minibatches must be at least 1, got 0");
  const std::size_t samples = checked_mul(o.n_envs, o.n_steps);
  if (samples == 0 || samples > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    invalid(who, ": options.n_envs·n_steps = ", o.n_envs, "·", o.n_steps, " is too large");
  if (samples % o.minibatches != 0)
    invalid(who, ": options.minibatches must divide n_envs·n_steps = ", samples, ", got ", o.minibatches);
  if (checked_mul(o.epochs, o.minibatches) == 0) invalid(who, ": options.epochs·minibatches overflows");
  if (!(o.discount >= 0.0 && o.discount <= 1.0)) invalid(who, ": options.discount must be in [0, 1], got ", o.discount);
  if (!(o.gae_lambda >= 0.0 && o.gae_lambda <= 1.0))
    invalid(who, ": options.gae_lambda must be in [0, 1], got ", o.gae_lambda);
  if (o.truncation != TruncationMode::official && o.truncation != TruncationMode::bootstrap &&
      o.truncation != TruncationMode::cut)
    invalid(who, ": options.truncation must be official, bootstrap or cut, got ", static_cast<int>(o.truncation));
  const auto finite = [](double x) { return std::isfinite(x); };
  if (!(o.clip_epsilon > 0.0 && finite(o.clip_epsilon)))
    invalid(who, ": options.clip_epsilon must be positive and finite, got ", o.clip_epsilon);
  if (!(o.vf_coef >= 0.0 && finite(o.vf_coef)))
    invalid(who, ": options.vf_coef must be finite and >= 0, got ", o.vf_coef);
  if (!(o.ent_coef >= 0.0 && finite(o.ent_coef)))
    invalid(who, ": options.ent_coef must be finite and >= 0, got ", o.ent_coef);
  if (!(o.max_grad_norm > 0.0 && finite(o.max_grad_norm)))
    invalid(who, ": options.max_grad_norm must be positive and finite, got ", o.max_grad_norm);
  if (!(o.learning_rate >= 0.0 && finite(o.learning_rate)))
    invalid(who, ": options.learning_rate must be finite and >= 0, got ", o.learning_rate);
  if (!(o.adam.beta1 >= 0.0 && o.adam.beta1 < 1.0))
    invalid(who, ": options.adam.beta1 must be in [0, 1), got ", o.adam.beta1);
  if (!(o.adam.beta2 >= 0.0 && o.adam.beta2 < 1.0))
    invalid(who, ": options.adam.beta2 must be in [0, 1), got ", o.adam.beta2);
  if (!(o.adam.epsilon >= 0.0 && finite(o.adam.epsilon)))
    invalid(who, ": options.adam.epsilon must be finite and >= 0, got ", o.adam.epsilon);
  if (o.normalize_features) {
    if (sparse_features)
      invalid(who,
              ": options.normalize_features needs dense features; MultiHot features (a frame stack) "
              "are refused, since centring would make them dense (docs/control.md)");
    FeatureNormalizer::check_options(who, "options.normalizer.", o.normalizer);
  }
  for (std::size_t l = 0; l < o.hidden_sizes.size(); ++l)
    if (o.hidden_sizes[l] == 0) invalid(who, ": options.hidden_sizes[", l, "] must be at least 1, got 0");
  if (!(o.reward_scale > 0.0 && finite(o.reward_scale)))
    invalid(who, ": options.reward_scale must be positive and finite, got ", o.reward_scale);
  if (!finite(o.initial_log_std)) invalid(who, ": options.initial_log_std must be finite, got ", o.initial_log_std);
  if (o.normalize_rewards) FeatureNormalizer::check_options(who, "options.reward_normalizer.", o.reward_normalizer);
  if (!(o.target_kl >= 0.0 && finite(o.target_kl)))
    invalid(who, ": options.target_kl must be finite and >= 0, got ", o.target_kl);
  if (o.anneal_lr && o.total_updates != 0 && checked_mul(o.total_updates, o.epochs * o.minibatches) == 0)
    invalid(who, ": options.total_updates·epochs·minibatches overflows, total_updates = ", o.total_updates);
}
}  // namespace detail

/// What one update did: the means of the loss terms over its minibatches (epochs x minibatches, or
/// fewer when target_kl stopped it), the learning rates of its first and last Adam steps, and the
/// episodes that ended in its rollout.
struct PpoStats {
  std::size_t update = 0;      ///< updates done, this one included
  std::size_t env_steps = 0;   ///< environment steps learned from so far (update x n_envs x n_steps)
  std::size_t adam_steps = 0;  ///< Adam steps taken so far
  double first_learning_rate = 0, last_learning_rate = 0;
  double loss = 0, policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
  double grad_norm = 0;      ///< mean global gradient norm before clipping, over the steps taken
  double advantage_std = 0;  ///< population std of the rollout's advantages (before any normalisation)
  /// 1 − Var[target − v] / Var[target] over the rollout, v the values it acted with (how much of
  /// the targets' variance the critic explains; 1 is perfect, <= 0 no better than a constant); NaN
  /// when Var[target] = 0.
  double explained_variance = std::numeric_limits<double>::quiet_NaN();
  std::size_t minibatches = 0;        ///< minibatch losses computed (epochs·minibatches unless target_kl stopped it)
  bool stopped_at_target_kl = false;  ///< target_kl stopped the update: its last minibatch took no step
  std::span<const EpisodeEnd> episodes;  ///< the rollout's, valid until the agent's next update

  /// The mean return of the episodes that ended in the rollout (the official mean_tot_rew; the
  /// success rate in the T-maze), NaN if none ended.
  [[nodiscard]] double mean_episode_return() const noexcept {
    if (episodes.empty()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (const EpisodeEnd& e : episodes) sum += e.episode_return;
    return sum / static_cast<double>(episodes.size());
  }
};

namespace detail {
/// The last update's statistics with a copy of its episodes of their own: the span in stats()
/// points into this object, also after a copy (which keeps the capacity, so that the copy's
/// updates allocate nothing either).
class PpoStatsRecord {
 public:
  PpoStatsRecord() = default;
  PpoStatsRecord(const PpoStatsRecord& other) { *this = other; }
  PpoStatsRecord& operator=(const PpoStatsRecord& other) {
    if (this == &other) return *this;
    episodes_.reserve(other.episodes_.capacity());
    set(other.stats_, other.episodes_);
    return *this;
  }
  PpoStatsRecord(PpoStatsRecord&&) noexcept = default;  // the vector's storage moves: the span stays valid
  PpoStatsRecord& operator=(PpoStatsRecord&&) noexcept = default;
  ~PpoStatsRecord() = default;

  void reserve(std::size_t episodes) { episodes_.reserve(episodes); }
  void set(const PpoStats& stats, std::span<const EpisodeEnd> episodes) {
    episodes_.assign(episodes.begin(), episodes.end());
    stats_ = stats;
    stats_.episodes = episodes_;
  }
  [[nodiscard]] const PpoStats& stats() const noexcept { return stats_; }

 private:
  std::vector<EpisodeEnd> episodes_;
  PpoStats stats_;
};
}  // namespace detail

}  // namespace memtrace
