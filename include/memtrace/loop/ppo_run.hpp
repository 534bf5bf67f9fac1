#pragma once
// A PPO training run as a library object: small pieces for train's per-update hook, in the spirit
// of Stable-Baselines3's callbacks (a LearningCurve records, PpoRunCheckpoint resumes or starts
// the run and checkpoints it every N updates or seconds, StopAfter stops it as if killed,
// FreezeNormalizerAt freezes the feature statistics, EvaluateEvery evaluates the agent on a stream
// of its own, TrainingProgress shows a progress line),
// chained by on_updates, and train_to, which trains a resumed agent only for what is left.
// Opt-in. See docs/control.md ("A training run").

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/files.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/loop/checkpoint.hpp"
#include "memtrace/loop/learning_curve.hpp"
#include "memtrace/loop/ppo.hpp"
#include "memtrace/loop/rollout.hpp"
#include "memtrace/progress.hpp"
#include "memtrace/random.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// How often PpoRunCheckpoint writes: every `updates` updates or, with updates 0, every `seconds`
/// seconds of the run (checked after each update), and once training ends (finish); both 0: only
/// when save() is called.
struct CheckpointEvery {
  std::size_t updates = 0;
  double seconds = 0;
};

/// A cadence written as on the example programs' command lines: "N" (every N updates) or "Ns"
/// (every N seconds), N a decimal integer in [0, 10^9]; "0" never. Throws std::invalid_argument
/// naming `flag` and the text otherwise.
[[nodiscard]] inline CheckpointEvery parse_checkpoint_every(std::string_view text,
                                                            std::string_view flag = "parse_checkpoint_every") {
  const bool seconds = text.ends_with('s');
  const std::string_view digits = seconds ? text.substr(0, text.size() - 1) : text;
  std::size_t n = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || n > 1'000'000'000)
    detail::invalid(flag, ": expected N (updates) or Ns (seconds), N in [0, 10^9], got \"", text, "\"");
  return seconds ? CheckpointEvery{0, static_cast<double>(n)} : CheckpointEvery{n, 0.0};
}

/// What PpoRunCheckpoint::resume_or_start found.
enum class RunStart {
  started,   ///< no checkpoint: the run starts from the beginning
  resumed,   ///< the run continues from its checkpoint
  restarted  ///< the checkpoint was damaged (say, a machine crashed while writing it): the run starts again
};

namespace detail {
// check_run_checkpoint's work, its refusals starting "who: ".
inline RunStart check_run_checkpoint(const char* who, const std::filesystem::path& path, std::string_view identity,
                                     std::string* damage) {
  if (!std::filesystem::exists(path)) return RunStart::started;
  TensorFile file;
  try {
    file = parse_safetensors(read_text(path), path.string());
  } catch (const std::invalid_argument& e) {
    if (damage != nullptr) *damage = e.what();
    return RunStart::restarted;
  }
  const auto refuse = [&](const auto&... why) {
    throw std::runtime_error(message(who, ": ", path.string(), why..., "; it is left in place"));
  };
  const auto quoted = [](const std::string& line) { return line == "(none)" ? line : "\"" + line + "\""; };
  // Another build's before the checksum: a file of another version is named as such, not as damaged.
  if (const std::string why = origin_mismatch(file.metadata, ppo_run_format); !why.empty()) refuse(": ", why);
  const auto run = file.metadata.find("run");
  if (const LineDifference d = first_different_line(run == file.metadata.end() ? "" : run->second, identity);
      d.line != 0)
    refuse(" is the checkpoint of another run: line ", d.line, " of its description is ", quoted(d.a), ", this run's ",
           quoted(d.b), "; resume it with its own settings, or delete it");
  return RunStart::resumed;
}
}  // namespace detail

/// What PpoRunCheckpoint::resume_or_start would do with the file at `path`, for the run `identity`,
/// without loading it: `started` if there is none, `restarted` if it cannot be read (`damage`, if
/// given, says why), `resumed` if it is this run's. Throws std::runtime_error naming the file
/// (which stays as it is) for a checkpoint of another run (quoting the first line of the
/// descriptions that differs), memtrace version or instruction set, or not of a PPO run; these are
/// checked before its checksum, so that a file of another version is named as such. A program
/// calls it before it changes anything of its own.
inline RunStart check_run_checkpoint(const std::filesystem::path& path, std::string_view identity,
                                     std::string* damage = nullptr) {
  return detail::check_run_checkpoint("check_run_checkpoint", path, identity, damage);
}

/// The checkpoint of one PPO training run at `path`: the agent, the rollout and (if given) the
/// learning curve, with the run's identity (a text that says what the run is: its settings, its
/// seed) and the time it has taken so far. As a hook of train it writes every `every`; the run
/// resumes from it with resume_or_start, which refuses, leaving the file in place, a checkpoint of
/// another run, memtrace version or instruction set (a killed run is resumed only by the same
/// command and build). Time is counted from construction, plus what a resumed checkpoint recorded.
template <class Agent, class R>
class PpoRunCheckpoint {
 public:
  using Clock = std::chrono::steady_clock;

  /// Throws std::invalid_argument for a negative or non-finite every.seconds or an empty path.
  PpoRunCheckpoint(std::filesystem::path path, std::string identity, Agent& agent, R& rollout,
                   LearningCurve* curve = nullptr, CheckpointEvery every = {})
      : path_(std::move(path)),
        identity_(std::move(identity)),
        agent_(&agent),
        rollout_(&rollout),
        curve_(curve),
        every_(every),
        start_(Clock::now()),
        last_save_(start_),
        cpu_start_(thread_cpu_seconds()) {
    if (path_.empty()) detail::invalid("PpoRunCheckpoint: path must not be empty");
    if (!(every.seconds >= 0.0 && std::isfinite(every.seconds)))
      detail::invalid("PpoRunCheckpoint: every.seconds must be non-negative and finite, got ", every.seconds);
  }

  /// Resumes the run from the checkpoint at path() if there is one (load_ppo_run into the agent,
  /// rollout and curve), or leaves them as they are. Throws std::runtime_error naming the file, which
  /// stays as it is, if it is another run's (its identity differs), another memtrace version's or
  /// another instruction set's, or not a run checkpoint (check_run_checkpoint); a file that cannot
  /// be read (truncated, altered: its checksum) is reported by damage() and the run starts again
  /// (the next save replaces it).
  RunStart resume_or_start() {
    damage_.clear();
    const RunStart found =
        detail::check_run_checkpoint("PpoRunCheckpoint::resume_or_start", path_, identity_, &damage_);
    if (found != RunStart::resumed) return found;
    std::map<std::string, std::string> metadata;
    try {  // all or nothing: a refusal leaves agent, rollout and curve as they were
      metadata = load_ppo_run(path_, *agent_, *rollout_, curve_);
    } catch (const std::invalid_argument& e) {
      damage_ = e.what();
      return RunStart::restarted;
    }
    const auto number = [&](const char* key) {  // the time before the stop; 0 if unreadable
      const std::string text = metadata.count(key) != 0 ? metadata.at(key) : std::string();
      double x = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), x);
      return error == std::errc() && end == text.data() + text.size() && std::isfinite(x) && x >= 0 ? x : 0.0;
    };
    seconds_before_ = number("seconds");
    cpu_before_ = number("cpu_seconds");
    metadata.erase("run");
    metadata.erase("seconds");
    metadata.erase("cpu_seconds");
    metadata_ = std::move(metadata);
    saved_update_ = agent_->updates();
    return RunStart::resumed;
  }

  /// train's hook: writes the checkpoint if it is due. Returns true (training goes on).
  bool operator()(const PpoStats& stats) {
    const bool due =
        every_.updates > 0
            ? stats.update % every_.updates == 0
            : every_.seconds > 0 && std::chrono::duration<double>(Clock::now() - last_save_).count() >= every_.seconds;
    if (due) save();
    return true;
  }

  /// Writes the checkpoint now (save_ppo_run: atomically, so a kill while writing leaves the
  /// previous one).
  void save() {
    const auto text = [](double x) {  // the shortest form that reads back to the same double
      char buffer[64];
      return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, x).ptr);
    };
    std::map<std::string, std::string> metadata = metadata_;
    metadata["run"] = identity_;
    metadata["seconds"] = text(seconds());
    metadata["cpu_seconds"] = text(cpu_seconds());
    save_ppo_run(path_, *agent_, *rollout_, curve_, metadata);
    last_save_ = Clock::now();
    saved_update_ = agent_->updates();
  }

  /// After training, so that a run killed in what follows (an evaluation) does not train again:
  /// writes the checkpoint unless the last one holds the agent's current update, or the cadence is
  /// never (CheckpointEvery's both 0: a run that writes no checkpoints).
  void finish() {
    if ((every_.updates > 0 || every_.seconds > 0) && saved_update_ != agent_->updates()) save();
  }

  /// Removes the checkpoint (once the run's results are written).
  void remove() { std::filesystem::remove(path_); }

  /// Seconds of wall time and of CPU time of this thread since construction, plus those of the
  /// processes before a resume.
  [[nodiscard]] double seconds() const {
    return seconds_before_ + std::chrono::duration<double>(Clock::now() - start_).count();
  }
  [[nodiscard]] double cpu_seconds() const { return cpu_before_ + thread_cpu_seconds() - cpu_start_; }

  /// Entries of the program's own saved with every checkpoint and restored by resume_or_start (a
  /// program's counters that the agent, rollout and curve do not hold). The keys run, seconds and
  /// cpu_seconds are the checkpoint's own, and keys starting "agent." the agent's.
  [[nodiscard]] std::map<std::string, std::string>& metadata() noexcept { return metadata_; }

  /// Why the last resume_or_start could not read the checkpoint (empty unless it returned restarted).
  [[nodiscard]] const std::string& damage() const noexcept { return damage_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& identity() const noexcept { return identity_; }

 private:
  std::filesystem::path path_;
  std::string identity_;
  Agent* agent_;
  R* rollout_;
  LearningCurve* curve_;
  CheckpointEvery every_;
  Clock::time_point start_, last_save_;
  double cpu_start_;
  double seconds_before_ = 0, cpu_before_ = 0;
  std::size_t saved_update_ = static_cast<std::size_t>(-1);
  std::string damage_;
  std::map<std::string, std::string> metadata_;
};

/// Stops training after the update numbered `update` (the agent's count, PpoStats::update, which a
/// resumed run continues), as if the process were killed there; 0 never stops. To try resumption.
struct StopAfter {
  std::size_t update = 0;
  bool stopped = false;  ///< whether it stopped training

  bool operator()(const PpoStats& stats) noexcept {
    stopped = update != 0 && stats.update == update;
    return !stopped;
  }
};

/// Freezes the agent's feature normaliser (freeze_normalizer) after the update nearest to
/// fraction x total_updates (at least the first); fraction 1 never freezes it. Build it after
/// PpoRunCheckpoint::resume_or_start: an agent resumed at or past that update is frozen at once.
template <class Agent>
class FreezeNormalizerAt {
 public:
  /// Throws std::invalid_argument unless fraction is in (0, 1].
  FreezeNormalizerAt(Agent& agent, double fraction, std::size_t total_updates) : agent_(&agent), fraction_(fraction) {
    if (!(fraction > 0.0 && fraction <= 1.0))
      detail::invalid("FreezeNormalizerAt: fraction must be in (0, 1], got ", fraction);
    // The nearest whole number, so that 0.07 x 100 is 7 although the product is 7.000000000000001.
    const auto nearest = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(total_updates)));
    after_ = nearest < 1 ? 1 : nearest;
    // A run resumed at or past that update (built after resume_or_start): frozen from the start, as
    // the run never stopped was, even if its checkpoint was written before this piece ran.
    if (fraction_ < 1.0 && agent.updates() >= after_) agent.freeze_normalizer();
  }

  bool operator()(const PpoStats& stats) noexcept {
    if (fraction_ < 1.0 && stats.update == after_) agent_->freeze_normalizer();
    return true;
  }

  /// The update after which the statistics freeze.
  [[nodiscard]] std::size_t after() const noexcept { return after_; }

 private:
  Agent* agent_;
  double fraction_;
  std::size_t after_ = 1;
};

/// One evaluation of EvaluateEvery: after which update, and the episodes it ran.
struct EvaluationPoint {
  std::size_t update = 0;
  std::size_t env_steps = 0;
  std::vector<EpisodeEnd> episodes{};

  /// The mean return of the episodes, NaN if none ended.
  [[nodiscard]] double mean_return() const noexcept {
    if (episodes.empty()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (const EpisodeEnd& e : episodes) sum += e.episode_return;
    return sum / static_cast<double>(episodes.size());
  }
};

/// Evaluates the agent every `every` updates while it trains (Stable-Baselines3's EvalCallback):
/// `episodes` episodes of a copy of `env` with a copy of `memory` (memtrace::evaluate, capped at
/// `max_steps`, with `selection` and `clipping`), drawing from make_stream(stream_key(seed, update), 0), a stream
/// of each evaluation's own (not one of make_stream(seed, i), even if `seed` is the run's key):
/// training is unchanged (the agent's generator and statistics are not touched), and a resumed run
/// evaluates each update exactly as a run never stopped. points() holds the evaluations of this
/// process; on_evaluation, if given, is called with each, to write it as it comes. Put it before
/// PpoRunCheckpoint in on_updates and key what on_evaluation writes by update: a run resumed from
/// a checkpoint of update c evaluates again the updates after c that the killed process had
/// evaluated, with the same result.
template <class Agent, class Env, class M>
class EvaluateEvery {
 public:
  using Callback = std::function<void(const EvaluationPoint&)>;

  /// Throws std::invalid_argument for every = 0, episodes = 0, max_steps = 0 or a clipping that is
  /// neither to_box nor off.
  EvaluateEvery(Agent& agent, Env env, M memory, std::uint64_t seed, std::size_t every, std::size_t episodes,
                std::size_t max_steps = std::numeric_limits<std::size_t>::max(),
                ActionSelection selection = ActionSelection::sample, Callback on_evaluation = {},
                ActionClipping clipping = ActionClipping::to_box)
      : agent_(&agent),
        env_(std::move(env)),
        memory_(std::move(memory)),
        seed_(seed),
        every_(every),
        episodes_(episodes),
        max_steps_(max_steps),
        selection_(selection),
        clipping_(clipping),
        on_evaluation_(std::move(on_evaluation)) {
    if (every == 0) detail::invalid("EvaluateEvery: every must be at least 1, got 0");
    if (episodes == 0) detail::invalid("EvaluateEvery: episodes must be at least 1, got 0");
    if (max_steps == 0) detail::invalid("EvaluateEvery: max_steps must be at least 1, got 0");
    if (clipping != ActionClipping::to_box && clipping != ActionClipping::off)
      detail::invalid("EvaluateEvery: clipping must be to_box or off, got ", static_cast<int>(clipping));
  }

  bool operator()(const PpoStats& stats) {
    if (stats.update % every_ != 0) return true;
    DefaultGenerator gen = make_stream(stream_key(seed_, stats.update), 0);
    points_.push_back({stats.update, stats.env_steps,
                       evaluate(*agent_, env_, memory_, gen, episodes_, max_steps_, selection_, clipping_)});
    if (on_evaluation_) on_evaluation_(points_.back());
    return true;
  }

  [[nodiscard]] const std::vector<EvaluationPoint>& points() const noexcept { return points_; }

 private:
  Agent* agent_;
  Env env_;
  M memory_;
  std::uint64_t seed_;
  std::size_t every_, episodes_, max_steps_;
  ActionSelection selection_;
  ActionClipping clipping_;
  Callback on_evaluation_;
  std::vector<EvaluationPoint> points_;
};

/// A training run's progress line (ProgressLine, counting environment steps) with, if a curve is
/// given, the success rate of its last episodes when it counts successes, else the mean return of
/// the last update's episodes.
class TrainingProgress {
 public:
  TrainingProgress(std::size_t total_env_steps, ProgressOptions options, const LearningCurve* curve = nullptr,
                   bool enabled = true)
      : line_(total_env_steps, std::move(options), enabled), curve_(curve) {}

  bool operator()(const PpoStats& stats) {
    if (line_.enabled()) line_.update(stats.env_steps, note(stats.mean_episode_return()));
    return true;
  }

  /// The last line (into a log) or a cleared one (on a terminal).
  void finish(std::size_t env_steps) { line_.finish(env_steps, note(last_return_)); }

 private:
  std::string note(double mean_return) {
    if (curve_ == nullptr) return {};
    char buffer[64];
    if (std::isfinite(curve_->options().success_return)) {
      const double r = curve_->recent_success_rate();
      if (std::isnan(r)) return "success (last " + std::to_string(curve_->options().recent_episodes) + " episodes) -";
      std::snprintf(buffer, sizeof buffer, "success (last %zu episodes) %.2f", curve_->options().recent_episodes, r);
      return buffer;
    }
    if (!std::isnan(mean_return)) last_return_ = mean_return;
    if (std::isnan(last_return_)) return {};
    std::snprintf(buffer, sizeof buffer, "return %.1f", last_return_);
    return buffer;
  }

  ProgressLine line_;
  const LearningCurve* curve_;
  double last_return_ = std::numeric_limits<double>::quiet_NaN();
};

namespace detail {
template <class Hook>
bool call_hook(Hook& hook, const PpoStats& stats) {
  if constexpr (std::same_as<std::remove_cv_t<Hook>, LearningCurve>) {
    hook.record(stats);
    return true;
  } else if constexpr (std::same_as<std::invoke_result_t<Hook&, const PpoStats&>, bool>) {
    return hook(stats);
  } else {
    hook(stats);
    return true;
  }
}
}  // namespace detail

/// One hook for train from several, called in order after every update: a LearningCurve records
/// the statistics, any other piece is called with them; a piece that returns false stops training
/// (the pieces after it are not called for that update). The pieces are held by reference.
template <class... Hooks>
[[nodiscard]] auto on_updates(Hooks&... hooks) {
  return [&hooks...](const PpoStats& stats) { return (detail::call_hook(hooks, stats) && ...); };
}

/// Trains agent on rollout until it has done total_env_steps / (n_envs·n_steps) updates in all, so
/// that a run resumed from a checkpoint trains only what is left (nothing if it is done; train
/// with the remaining steps otherwise). Returns true if training got there, false if on_update
/// stopped it. Throws std::invalid_argument, as train does, for total_env_steps < n_envs·n_steps.
template <class Phi, class Scalar, class Net, class Env, class M, class G, class OnUpdate>
bool train_to(Ppo<Phi, Scalar, Net>& agent, Rollout<Env, M, G>& rollout, std::size_t total_env_steps,
              OnUpdate&& on_update) {
  const std::size_t batch = agent.options().n_envs * agent.options().n_steps;
  if (total_env_steps < batch)
    detail::invalid("train_to: total_env_steps must be at least n_envs·n_steps = ", batch, ", got ", total_env_steps);
  const std::size_t total = total_env_steps / batch, done = agent.updates();
  if (done >= total) return true;
  bool stopped = false;
  train(agent, rollout, (total - done) * batch, [&](const PpoStats& stats) {
    stopped = !detail::call_hook(on_update, stats);
    return !stopped;
  });
  return !stopped;
}

}  // namespace memtrace
