#pragma once
// Checkpoints of what the loops hold: a Rollout (its environments, memories and generators, and the
// episodes in flight), a LearningCurve (its points, the open bin, the recent episodes), and a whole
// PPO training run (the agent, the rollout, the curve) saved and resumed in one file, so that a
// run killed at any update resumes from its last checkpoint and ends bit for bit as if it had not
// been killed. Opt-in. See docs/control.md ("Checkpoints").

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/learn/ppo_checkpoint.hpp"
#include "memtrace/loop/learning_curve.hpp"
#include "memtrace/loop/rollout.hpp"
#include "memtrace/safetensors.hpp"

namespace memtrace {

namespace detail {

/// A Rollout's state, under the prefix: size (U64 [1]: the number of environments), steps_taken
/// and started (U64 []), episode_start (U64 [N]: 1 where the next step starts an episode), with continuous actions in a
/// box action_clipping (U64 [1]: 0 to_box, 1 off; a rollout of the other setting refuses the file); env.I. and
/// memory.I. for environment I (each part's own state: save_state) and env.I.generator (U64 [4]: environment I draws
/// everything from it); and the episodes in flight, one entry per environment: step.action (U64 [N] for index actions,
/// F64 [N, D] for continuous actions of dimension D), step.terminated, step.truncated, step.episode_length (U64 [N]),
/// step.reward and step.episode_return (F64 [N]). The features the policies act on next are the memories' features, so
/// they are not stored.
template <class Env, class M, class G>
requires Checkpointable<Env> && Checkpointable<M> && Checkpointable<G> &&
    (std::unsigned_integral<action_t<Env>> ||
     ContinuousAction<action_t<Env>>)struct CheckpointState<Rollout<Env, M, G>> {
  using action_type = action_t<Env>;
  using step_type = BasicActedStep<action_type>;

  static void save(TensorFile& file, const std::string& prefix, const Rollout<Env, M, G>& r) {
    const std::size_t n = r.envs_.size();
    put_integers(file, prefix + "size", {1}, {n});
    put_integers(file, prefix + "steps_taken", {}, {r.t_});
    put_integers(file, prefix + "started", {}, {r.started_ ? 1u : 0u});
    put_integers(file, prefix + "episode_start", {n}, {r.starts_.begin(), r.starts_.end()});
    if constexpr (ContinuousActions<Env, G>)
      put_integers(file, prefix + "action_clipping", {1}, {static_cast<std::uint64_t>(r.clipping_)});
    for (std::size_t i = 0; i < n; ++i) {
      save_state(file, part(prefix, "env.", i), r.envs_[i]);
      save_state(file, part(prefix, "memory.", i), r.memories_[i]);
      save_state(file, part(prefix, "env.", i), r.gens_[i]);  // env.I.generator: environment I draws from it
    }
    std::vector<std::uint64_t> terminated(n), truncated(n), length(n);
    std::vector<double> reward(n), episode_return(n);
    save_actions(file, prefix + "step.action", r.steps_);
    for (std::size_t i = 0; i < n; ++i) {
      const step_type& s = r.steps_[i];
      terminated[i] = s.terminated;
      truncated[i] = s.truncated;
      length[i] = s.episode_length;
      reward[i] = s.reward;
      episode_return[i] = s.episode_return;
    }
    put_integers(file, prefix + "step.terminated", {n}, std::move(terminated));
    put_integers(file, prefix + "step.truncated", {n}, std::move(truncated));
    put_integers(file, prefix + "step.episode_length", {n}, std::move(length));
    put_reals(file, prefix + "step.reward", {n}, std::move(reward));
    put_reals(file, prefix + "step.episode_return", {n}, std::move(episode_return));
  }

  static void load(const TensorFile& file, const std::string& prefix, Rollout<Env, M, G>& r) {
    const std::size_t n = r.envs_.size();
    check_parameters(file, prefix + "size", "a Rollout", std::vector<std::uint64_t>{n},
                     [](const std::vector<std::uint64_t>& size) { return message(size[0], " environments"); });
    if constexpr (ContinuousActions<Env, G>)  // 0: to_box, 1: off
      check_parameters<std::uint64_t>(file, prefix + "action_clipping", "a Rollout", {"action_clipping"},
                                      {static_cast<std::uint64_t>(r.clipping_)});
    const std::uint64_t steps_taken = state_integer(file, prefix + "steps_taken");
    const bool started = state_flag(file, prefix + "started");
    // Into copies: a refusal of environment 7's state leaves environments 0-6 of r as they were.
    std::vector<Env> envs = r.envs_;
    std::vector<M> memories = r.memories_;
    std::vector<G> gens = r.gens_;
    for (std::size_t i = 0; i < n; ++i) {
      load_state(file, part(prefix, "env.", i), envs[i]);
      load_state(file, part(prefix, "memory.", i), memories[i]);
      load_state(file, part(prefix, "env.", i), gens[i]);
      if constexpr (ContinuousActions<Env, G>)  // the rollout clips into the boxes it read when it was made
        if (!(static_cast<action_type>(envs[i].action_low()) == r.low_[i] &&
              static_cast<action_type>(envs[i].action_high()) == r.high_[i]))
          invalid("load_state: ", prefix, "env.", i,
                  ": the restored environment's action box differs from the one the "
                  "rollout read when it was made");
    }
    std::vector<step_type> steps(n);
    load_actions(file, prefix + "step.action", steps);
    const auto& terminated = state_integers(file, prefix + "step.terminated", {n});
    const auto& truncated = state_integers(file, prefix + "step.truncated", {n});
    const auto& length = state_integers(file, prefix + "step.episode_length", {n});
    const auto& reward = state_reals(file, prefix + "step.reward", {n});
    const auto& episode_return = state_reals(file, prefix + "step.episode_return", {n});
    check_flags(prefix + "step.terminated", terminated);
    check_flags(prefix + "step.truncated", truncated);
    // Where the next step starts an episode; files before 0.4 have none: then after an episode end, or
    // everywhere before the first step.
    Eigen::Array<bool, Eigen::Dynamic, 1> starts(static_cast<Eigen::Index>(n));
    if (file.find(prefix + "episode_start") != nullptr) {
      const auto& stored = state_integers(file, prefix + "episode_start", {n});
      check_flags(prefix + "episode_start", stored);
      for (std::size_t i = 0; i < n; ++i) starts[static_cast<Eigen::Index>(i)] = stored[i] == 1;
    } else {
      for (std::size_t i = 0; i < n; ++i)
        starts[static_cast<Eigen::Index>(i)] = steps_taken == 0 || terminated[i] == 1 || truncated[i] == 1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      step_type& s = steps[i];
      s.reward = reward[i];
      s.terminated = terminated[i] == 1;
      s.truncated = truncated[i] == 1;
      s.episode_return = episode_return[i];
      s.episode_length = static_cast<std::size_t>(length[i]);
    }
    r.envs_ = std::move(envs);
    r.memories_ = std::move(memories);
    r.gens_ = std::move(gens);
    r.steps_ = std::move(steps);
    r.starts_ = std::move(starts);
    r.t_ = static_cast<std::size_t>(steps_taken);
    r.started_ = started;
    r.features_.clear();
    if (r.started_)
      for (std::size_t i = 0; i < n; ++i) r.features_.push_back(r.memories_[i].features());
    r.next_features_ = r.features_;
  }

 private:
  static std::string part(const std::string& prefix, const char* what, std::size_t i) {
    return prefix + what + std::to_string(i) + ".";
  }

  static void save_actions(TensorFile& file, const std::string& name, const std::vector<step_type>& steps) {
    const std::size_t n = steps.size();
    if constexpr (std::unsigned_integral<action_type>) {
      std::vector<std::uint64_t> action(n);
      for (std::size_t i = 0; i < n; ++i) action[i] = steps[i].action;
      put_integers(file, name, {n}, std::move(action));
    } else {
      const auto d =
          static_cast<std::size_t>(steps[0].action.size());  // every environment's: Rollout's constructor checks it
      std::vector<double> action(n * d);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < d; ++k)
          action[i * d + k] = static_cast<double>(steps[i].action[static_cast<Eigen::Index>(k)]);
      put_reals(file, name, {n, d}, std::move(action));
    }
  }

  static void load_actions(const TensorFile& file, const std::string& name, std::vector<step_type>& steps) {
    const std::size_t n = steps.size();
    if constexpr (std::unsigned_integral<action_type>) {
      const auto& action = state_integers(file, name, {n});
      for (std::size_t i = 0; i < n; ++i) steps[i].action = static_cast<action_type>(action[i]);
    } else {
      const Tensor* t = file.find(name);  // state_reals names it if it is missing or of another shape
      std::size_t d = action_type::SizeAtCompileTime != Eigen::Dynamic
                          ? static_cast<std::size_t>(action_type::SizeAtCompileTime)
                          : 0;
      if (t != nullptr && t->shape.size() == 2) d = t->shape[1];
      const auto& action = state_reals(file, name, {n, d});
      check_action_type<action_type>(("load_state: " + name).c_str(), d);
      for (std::size_t i = 0; i < n; ++i) {
        steps[i].action.resize(static_cast<Eigen::Index>(d));
        for (std::size_t k = 0; k < d; ++k)
          steps[i].action[static_cast<Eigen::Index>(k)] = static_cast<typename action_type::Scalar>(action[i * d + k]);
      }
    }
  }
};

/// A LearningCurve's state, under the prefix: point_steps (U64 [P]) and options (success_return F64
/// [1], recent_episodes U64 [1]), which must equal the curve's own; the points reached
/// (points.env_steps, .updates, .episodes_ended, .successes: U64 [K]; points.return_sum, .entropy,
/// .value_loss, .advantage_std, .approx_kl, .clip_fraction, .explained_variance: F64 [K], NaN where
/// a point had no update); the open bin (bin.*, the same fields, [1]) and its sums (bin.sums F64 [6]); the
/// counters (counters U64 [5]: the last update's environment steps, episodes ended, successes, the
/// ring's next slot and its successes) and the ring of recent successes (recent U64 [R]).
template <>
struct CheckpointState<LearningCurve> {
  static void save(TensorFile& file, const std::string& prefix, const LearningCurve& c) {
    put_integers(file, prefix + "point_steps", {c.at_.size()}, {c.at_.begin(), c.at_.end()});
    put_reals(file, prefix + "options.success_return", {1}, {c.options_.success_return});
    put_integers(file, prefix + "options.recent_episodes", {1}, {c.options_.recent_episodes});
    save_points(file, prefix + "points.", c.points_);
    save_points(file, prefix + "bin.", {c.bin_});
    put_reals(file, prefix + "bin.sums", {std::size(c.sums_)}, {std::begin(c.sums_), std::end(c.sums_)});
    put_integers(file, prefix + "counters", {5},
                 {c.last_env_steps_, c.episodes_ended_, c.successes_, c.recent_next_, c.recent_successes_});
    put_integers(file, prefix + "recent", {c.recent_.size()}, {c.recent_.begin(), c.recent_.end()});
  }

  static void load(const TensorFile& file, const std::string& prefix, LearningCurve& c) {
    check_parameters(file, prefix + "point_steps", "a LearningCurve",
                     std::vector<std::uint64_t>(c.at_.begin(), c.at_.end()), points_text);
    check_parameters<double>(file, prefix + "options.success_return", "a LearningCurve", {"success_return"},
                             {c.options_.success_return});
    check_parameters<std::uint64_t>(file, prefix + "options.recent_episodes", "a LearningCurve", {"recent_episodes"},
                                    {c.options_.recent_episodes});
    const Tensor* points = file.find(prefix + "points.env_steps");
    const std::size_t k = points == nullptr || points->shape.size() != 1 ? 0 : points->shape[0];
    if (k > c.at_.size()) invalid("load_state: ", prefix, "points: ", k, " points saved, the curve has ", c.at_.size());
    std::vector<CurvePoint> reached = load_points(file, prefix + "points.", k);
    const CurvePoint bin = load_points(file, prefix + "bin.", 1)[0];
    const auto& sums = state_reals(file, prefix + "bin.sums", {6}, /*finite=*/false);  // a NaN explained variance
    const auto& counters = state_integers(file, prefix + "counters", {5});
    const Tensor* recent_tensor = file.find(prefix + "recent");
    const std::size_t r = recent_tensor == nullptr || recent_tensor->shape.size() != 1 ? 0 : recent_tensor->shape[0];
    const auto& recent = state_integers(file, prefix + "recent", {r});
    check_flags(prefix + "recent", recent);
    std::size_t recent_successes = 0;
    for (const std::uint64_t x : recent) recent_successes += x;
    if (r > c.options_.recent_episodes || counters[4] != recent_successes || (r > 0 && counters[3] >= r) ||
        (r == 0 && counters[3] != 0) || counters[2] > counters[1])
      invalid("load_state: ", prefix, "counters: inconsistent with the recent episodes saved (the file was altered)");
    c.points_ = std::move(reached);
    c.bin_ = bin;
    std::copy(sums.begin(), sums.end(), std::begin(c.sums_));
    c.last_env_steps_ = static_cast<std::size_t>(counters[0]);
    c.episodes_ended_ = static_cast<std::size_t>(counters[1]);
    c.successes_ = static_cast<std::size_t>(counters[2]);
    c.recent_next_ = static_cast<std::size_t>(counters[3]);
    c.recent_successes_ = static_cast<std::size_t>(counters[4]);
    c.recent_.assign(recent.begin(), recent.end());
  }

 private:
  // "5 points at 64 .. 320 environment steps": the points of a curve (of its budget and update size).
  static std::string points_text(const std::vector<std::uint64_t>& at) {
    if (at.empty()) return "no points";
    return message(at.size(), " points at ", at.front(), " .. ", at.back(), " environment steps");
  }

  static constexpr const char* means[] = {"entropy",   "value_loss",    "advantage_std",
                                          "approx_kl", "clip_fraction", "explained_variance"};
  static double CurvePoint::*mean(int k) {
    constexpr double CurvePoint::*members[] = {&CurvePoint::entropy,       &CurvePoint::value_loss,
                                               &CurvePoint::advantage_std, &CurvePoint::approx_kl,
                                               &CurvePoint::clip_fraction, &CurvePoint::explained_variance};
    return members[k];
  }

  static void save_points(TensorFile& file, const std::string& prefix, const std::vector<CurvePoint>& points) {
    const std::size_t k = points.size();
    std::vector<std::uint64_t> steps(k), updates(k), ended(k), successes(k);
    std::vector<double> returns(k);
    for (std::size_t i = 0; i < k; ++i) {
      steps[i] = points[i].env_steps;
      updates[i] = points[i].updates;
      ended[i] = points[i].episodes_ended;
      successes[i] = points[i].successes;
      returns[i] = points[i].return_sum;
    }
    put_integers(file, prefix + "env_steps", {k}, std::move(steps));
    put_integers(file, prefix + "updates", {k}, std::move(updates));
    put_integers(file, prefix + "episodes_ended", {k}, std::move(ended));
    put_integers(file, prefix + "successes", {k}, std::move(successes));
    put_reals(file, prefix + "return_sum", {k}, std::move(returns));
    for (int m = 0; m < 6; ++m) {
      std::vector<double> values(k);
      for (std::size_t i = 0; i < k; ++i) values[i] = points[i].*mean(m);
      put_reals(file, prefix + means[m], {k}, std::move(values));
    }
  }

  static std::vector<CurvePoint> load_points(const TensorFile& file, const std::string& prefix, std::size_t k) {
    std::vector<CurvePoint> points(k);
    const auto& steps = state_integers(file, prefix + "env_steps", {k});
    const auto& updates = state_integers(file, prefix + "updates", {k});
    const auto& ended = state_integers(file, prefix + "episodes_ended", {k});
    const auto& successes = state_integers(file, prefix + "successes", {k});
    const auto& returns = state_reals(file, prefix + "return_sum", {k});
    for (std::size_t i = 0; i < k; ++i) {
      if (successes[i] > ended[i])
        invalid("load_state: ", prefix, "successes[", i, "] = ", successes[i], " exceeds the episodes ended, ",
                ended[i]);
      points[i].env_steps = static_cast<std::size_t>(steps[i]);
      points[i].updates = static_cast<std::size_t>(updates[i]);
      points[i].episodes_ended = static_cast<std::size_t>(ended[i]);
      points[i].successes = static_cast<std::size_t>(successes[i]);
      points[i].return_sum = returns[i];
    }
    for (int m = 0; m < 6; ++m) {
      const auto& values = state_reals(file, prefix + means[m], {k}, /*finite=*/false);  // NaN: a point without updates
      for (std::size_t i = 0; i < k; ++i) points[i].*mean(m) = values[i];
    }
    return points;
  }
};

/// A rollout whose parts are not all Checkpointable trains, but cannot be saved: say which part.
template <class Env, class M, class G>
constexpr void require_checkpointable() {
  static_assert(Checkpointable<Env>,
                "save_ppo_run, load_ppo_run: the environment type is not Checkpointable: include "
                "memtrace/env/checkpoint.hpp for memtrace's, or give yours save_state and load_state "
                "(docs/control.md, \"Checkpoints\")");
  static_assert(Checkpointable<M>,
                "save_ppo_run, load_ppo_run: the memory type is not Checkpointable: include "
                "memtrace/memory/checkpoint.hpp for memtrace's, or give yours save_state and load_state "
                "(docs/control.md, \"Checkpoints\")");
  static_assert(Checkpointable<G>, "save_ppo_run, load_ppo_run: the generator type is not Checkpointable");
}

}  // namespace detail

/// The format of save_ppo_run's files.
inline constexpr std::string_view ppo_run_format = "memtrace.ppo_run.1";

/// Writes a checkpoint of a whole PPO training run to `path` (write_checkpoint: atomically, with a
/// checksum, the version and the instruction set): the agent (save_state under "agent."),
/// the rollout (under "rollout.": every environment, memory and generator, and the episodes in
/// flight) and, if given, the learning curve (under "curve."); `metadata` adds entries of the
/// caller's (e.g. the program's own counters). Call it between updates (train's on_update).
template <class Phi, class Scalar, class Network, class Env, class M, class G>
void save_ppo_run(const std::filesystem::path& path, const Ppo<Phi, Scalar, Network>& agent,
                  const Rollout<Env, M, G>& rollout, const LearningCurve* curve = nullptr,
                  const std::map<std::string, std::string>& metadata = {}) {
  detail::require_checkpointable<Env, M, G>();
  for (const auto& [key, value] : metadata)
    if (key.starts_with("agent."))
      detail::invalid("save_ppo_run: metadata key \"", key, "\" is the agent's (keys starting agent. are reserved)");
  TensorFile file;
  file.metadata = metadata;
  save_state(file, "agent.", agent);
  save_state(file, "rollout.", rollout);
  if (curve != nullptr) save_state(file, "curve.", *curve);
  write_checkpoint(path, file, ppo_run_format);
}

/// Restores a run saved by save_ppo_run into an agent, a rollout and (if given; the file must then
/// hold one) a curve built as the saved ones were (same options, environments, memories, budget):
/// training on from here ends exactly as the saved run would have. All or nothing: the parts are
/// loaded into copies and assigned only when every one is accepted; a refusal (read_checkpoint's, or
/// load_state's as std::invalid_argument starting "load_ppo_run: PATH: ") changes nothing. Returns
/// the file's metadata (the caller's entries, e.g. its counters).
template <class Phi, class Scalar, class Network, class Env, class M, class G>
std::map<std::string, std::string> load_ppo_run(const std::filesystem::path& path, Ppo<Phi, Scalar, Network>& agent,
                                                Rollout<Env, M, G>& rollout, LearningCurve* curve = nullptr) {
  detail::require_checkpointable<Env, M, G>();
  const TensorFile file = read_checkpoint(path, ppo_run_format);
  Ppo<Phi, Scalar, Network> agent_copy = agent;
  Rollout<Env, M, G> rollout_copy = rollout;
  std::optional<LearningCurve> curve_copy;
  if (curve != nullptr) curve_copy = *curve;
  try {
    load_state(file, "agent.", agent_copy);
    load_state(file, "rollout.", rollout_copy);
    if (curve_copy) load_state(file, "curve.", *curve_copy);
  } catch (const std::invalid_argument& e) {
    detail::invalid("load_ppo_run: ", path.string(), ": ", e.what());
  }
  if (curve_copy) *curve = std::move(*curve_copy);
  agent = std::move(agent_copy);
  rollout = std::move(rollout_copy);
  std::map<std::string, std::string> metadata = file.metadata;
  std::erase_if(metadata, [](const auto& entry) { return entry.first.rfind("agent.", 0) == 0; });
  return metadata;
}

}  // namespace memtrace
