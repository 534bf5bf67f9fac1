#pragma once
// Conventions of the example programs' command lines (CLI11): --help shows every default and
// --version says what built the program (build_info.hpp). Shared by the examples only.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "build_info.hpp"
#include "memtrace/experiment/results_folder.hpp"
#include "memtrace/experiment/sweep_runner.hpp"

namespace memtrace::examples {

/// --help shows the default of every option added after this call, and --version is handled.
inline void cli_conventions(CLI::App& app, const std::string& program) {
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", version_text(program), "Print what built this program and exit");
}

/// A CLI11 check of each value of a flag: a number (read as a double) for which ok holds. Unlike
/// CLI::Range and CLI::PositiveNumber it refuses nan and a negative value for an unsigned flag,
/// and says what is expected: "--alphas: value nan must be positive and finite". `why` is added to
/// the error message only, not to --help.
[[nodiscard]] inline CLI::Validator number_check(const std::string& expected, bool (*ok)(double),
                                                 const std::string& why = {}) {
  return CLI::Validator(
      [expected, ok, why](std::string& text) -> std::string {
        double x = 0.0;
        const char* end = text.data() + text.size();
        const auto parsed = std::from_chars(text.data(), end, x);
        if (parsed.ec != std::errc() || parsed.ptr != end || !ok(x))
          return "value " + text + " must be " + expected + why;
        return {};
      },
      expected);
}

/// The flags of a sweep split across machines (docs/experiments.md), as given.
struct SweepFlags {
  std::string shard_text;                  // --shard I/N
  std::vector<std::string> shard_folders;  // --merge DIR...
  bool allow_version_change = false;       // --allow-version-change
};

/// Adds --shard, --merge and --allow-version-change. `shard_takes` says which runs shard I of N
/// runs, `shard_writes` which files its folder gets; `help_prefix` starts the help of the first two
/// (e.g. "Sweeps: " in a program that also makes single runs).
inline void add_sweep_flags(CLI::App& app, SweepFlags& flags, const std::string& shard_takes,
                            const std::string& shard_writes, const std::string& help_prefix = "") {
  const auto help = [&](std::string text) {
    if (help_prefix.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    return help_prefix + text;
  };
  app.add_option("--shard", flags.shard_text,
                 help("run only shard I of N (I/N, 0 <= I < N), " + shard_takes + ", into --out; writes " +
                      shard_writes + ", no summary. Merge the N folders with --merge"))
      ->type_name("I/N");
  app.add_option("--merge", flags.shard_folders,
                 help("check the folders of the shards of this experiment (run with the same flags and --shard), "
                      "merge their runs into --out and write the summary, as one run on one machine would"))
      ->type_name("DIR")
      ->expected(1, -1);
  app.add_flag("--allow-version-change", flags.allow_version_change,
               "Resume a results folder written by another memtrace version (provenance.txt)");
}

/// Adds PPO's flags, each bound to its field of `p` (a PpoOptions; a template so that the programs
/// without PPO do not compile it), their defaults those of the program's recipe: --n-envs, --n-steps,
/// --gae-lambda, --epochs, --minibatches, --clip, --vf-coef, --ent-coef, --max-grad-norm, --lr,
/// --constant-lr, --adam-eps, --hidden, --reward-scale, --truncation (--textbook-truncation, 0.3's
/// flag, is an alias of --truncation bootstrap), --target-kl, --normalize-rewards, --clip-value-loss
/// and, for a Gaussian policy, --initial-log-std. The
/// discount is each program's own (a sweep key in ppo_tmaze).
template <class PpoOptions>
void add_ppo_flags(CLI::App& app, PpoOptions& p, bool gaussian) {
  const auto in = [](const char* what, bool (*ok)(double)) { return number_check(what, ok); };
  const auto positive_int = in("an integer of at least 1", [](double x) { return x >= 1; });
  const auto positive = in("positive and finite", [](double x) { return x > 0 && x < 1e308; });
  const auto non_negative = in("non-negative and finite", [](double x) { return x >= 0 && x < 1e308; });
  app.add_option("--n-envs", p.n_envs, "Environments in lockstep")->check(positive_int);
  app.add_option("--n-steps", p.n_steps, "Rollout steps per update")->check(positive_int);
  app.add_option("--gae-lambda", p.gae_lambda, "GAE's λ")->check(in("in [0, 1]", [](double x) {
    return x >= 0 && x <= 1;
  }));
  app.add_option("--epochs", p.epochs, "Epochs per update")->check(positive_int);
  app.add_option("--minibatches", p.minibatches, "Minibatches per epoch")->check(positive_int);
  app.add_option("--clip", p.clip_epsilon, "Clip ε of the ratio")->check(positive);
  app.add_option("--vf-coef", p.vf_coef, "Weight of the value loss")->check(non_negative);
  app.add_option("--ent-coef", p.ent_coef, "Weight of the entropy bonus")->check(non_negative);
  app.add_option("--max-grad-norm", p.max_grad_norm, "Global gradient-norm clip over both networks")->check(positive);
  app.add_option("--lr", p.learning_rate, "Adam's learning rate (decayed linearly to 0)")->check(non_negative);
  app.add_flag("!--constant-lr", p.anneal_lr, "Do not decay the learning rate");
  app.add_option("--adam-eps", p.adam.epsilon, "Adam's ε (added to the root of the second moment)")->check(positive);
  app.add_option("--hidden", p.hidden_sizes, "Hidden layer sizes of the actor and of the critic")
      ->check(positive_int)
      ->expected(1, -1);
  app.add_option("--reward-scale", p.reward_scale, "Rewards are multiplied by it before GAE")->check(positive);
  using Truncation = decltype(p.truncation);
  auto* truncation =
      app.add_option_function<std::string>(
             "--truncation",
             [&p](const std::string& mode) {
               p.truncation = mode == "official" ? Truncation::official
                              : mode == "cut"    ? Truncation::cut
                                                 : Truncation::bootstrap;  // bootstrap, textbook
             },
             "What a time limit's last step bootstraps from: official (the paper's code: the next episode's first "
             "state), bootstrap (Stable-Baselines3: the final observation's value) or cut (CleanRL: nothing, as a "
             "termination); docs/control.md, \"Time limits\"")
          ->check(CLI::IsMember({"official", "bootstrap", "textbook", "cut"}))
          ->default_str(truncation_name(p.truncation));
  app.add_option("--target-kl", p.target_kl,
                 "Stop an update at the first minibatch whose approx_kl exceeds 1.5 x this (Stable-Baselines3's "
                 "target_kl; 0: never)")
      ->check(non_negative);
  app.add_flag("--normalize-rewards", p.normalize_rewards,
               "Divide rewards by the running std of the discounted returns, clipped to 10 (Stable-Baselines3's "
               "VecNormalize(norm_reward=True))");
  app.add_flag("--clip-value-loss", p.clip_value_loss,
               "Clip the value loss around the rollout's values with --clip (CleanRL's clip_vloss)");
  app.add_flag_callback(
         "--textbook-truncation", [&p] { p.truncation = Truncation::bootstrap; }, "--truncation bootstrap (0.3's flag)")
      ->excludes(truncation);
  if (gaussian)
    app.add_option("--initial-log-std", p.initial_log_std, "The policy's initial log standard deviation")
        ->check(in("in [-10, 10]", [](double x) { return x >= -10 && x <= 10; }));
}

/// The PPO settings of add_ppo_flags as "name", "value" pairs (csv_field), in one order.
template <class PpoOptions>
[[nodiscard]] std::vector<std::pair<std::string, std::string>> ppo_settings(const PpoOptions& p) {
  std::string hidden;
  for (const auto h : p.hidden_sizes) hidden += csv_field(h) + " ";
  return {{"n_envs", csv_field(p.n_envs)},
          {"n_steps", csv_field(p.n_steps)},
          {"gae_lambda", csv_field(p.gae_lambda)},
          {"epochs", csv_field(p.epochs)},
          {"minibatches", csv_field(p.minibatches)},
          {"clip", csv_field(p.clip_epsilon)},
          {"vf_coef", csv_field(p.vf_coef)},
          {"ent_coef", csv_field(p.ent_coef)},
          {"max_grad_norm", csv_field(p.max_grad_norm)},
          {"learning_rate", csv_field(p.learning_rate)},
          {"anneal_lr", csv_field(int(p.anneal_lr))},
          {"adam_eps", csv_field(p.adam.epsilon)},
          {"hidden", hidden},
          {"reward_scale", csv_field(p.reward_scale)},
          {"initial_log_std", csv_field(p.initial_log_std)},
          {"truncation", truncation_name(p.truncation)},
          {"target_kl", csv_field(p.target_kl)},
          {"clip_value_loss", csv_field(int(p.clip_value_loss))},
          {"normalize_rewards", csv_field(int(p.normalize_rewards))}};
}

/// Lines "name=value" of an experiment's description for the PPO settings of `p` that differ from
/// the program's `recipe` and are not among `recorded` (the names its description always writes):
/// a results folder's experiment.txt gains a line only for a setting not at its default, so that
/// folders written before a flag existed keep resuming.
template <class PpoOptions>
[[nodiscard]] std::string ppo_settings_changed(const PpoOptions& p, const PpoOptions& recipe,
                                               const std::vector<std::string>& recorded) {
  const auto mine = ppo_settings(p), base = ppo_settings(recipe);
  std::string lines;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const auto& [name, value] = mine[k];
    if (value != base[k].second && std::find(recorded.begin(), recorded.end(), name) == recorded.end())
      lines += name + "=" + value + "\n";
  }
  return lines;
}

/// The flags of a resumable training run (docs/control.md, "A training run"), as given.
struct RunFlags {
  std::string checkpoint_every = "300s";  // --checkpoint-every N|Ns (memtrace::parse_checkpoint_every)
  std::size_t stop_after = 0;             // --stop-after U (0: never)
};

/// Adds --checkpoint-every and --stop-after; `runs` says whose runs ("every run", "the run").
inline void add_run_flags(CLI::App& app, RunFlags& flags, const std::string& runs = "every run") {
  app.add_option("--checkpoint-every", flags.checkpoint_every,
                 "Checkpoint " + runs +
                     " every N updates (N) or every N seconds of its work (Ns), and once its training ends, into "
                     "--out; a killed run resumes from its checkpoint when run again with the same flags (0: none "
                     "written; a run still resumes from one it finds)")
      ->type_name("N|Ns")
      ->capture_default_str();
  app.add_option("--stop-after", flags.stop_after,
                 "Stop " + runs +
                     " after this many updates, as if killed there (its checkpoint stays; the program exits with "
                     "status 3): to try resumption")
      ->check(number_check("an integer of at least 1", [](double x) { return x >= 1; }));
}

/// The shard --shard names (the whole sweep without it). Throws std::invalid_argument for a
/// malformed I/N and for --shard with --merge.
[[nodiscard]] inline Shard parse_sweep_flags(const CLI::App& app, const SweepFlags& flags) {
  if (app.count("--shard") == 0) return Shard{};
  const Shard shard = parse_shard(flags.shard_text, "--shard");
  if (!flags.shard_folders.empty())
    throw std::invalid_argument(
        "--shard and --merge cannot be combined: run each shard with --shard, then merge their folders with "
        "--merge (without --shard)");
  return shard;
}

/// What this invocation does with its results folder `dir` (open_results_folder).
[[nodiscard]] inline SweepRequest sweep_request(const std::filesystem::path& dir, const Shard& shard,
                                                const SweepFlags& flags, const Provenance& provenance) {
  return {dir, shard, std::vector<std::filesystem::path>(flags.shard_folders.begin(), flags.shard_folders.end()),
          provenance, flags.allow_version_change};
}

/// The exit status of a program whose sweep did not finish every run, std::nullopt if it did: 4 if
/// runs failed (the runner listed them; the summary needs every run), 3 if --stop-after stopped it.
[[nodiscard]] inline std::optional<int> unfinished(const SweepOutcome& outcome, const char* program) {
  if (!outcome.failed.empty()) {
    std::fprintf(stderr, "%s: %zu runs failed (listed above): no summary\n", program, outcome.failed.size());
    return 4;
  }
  if (outcome.complete()) return std::nullopt;
  std::printf("run the same command without --stop-after to resume them\n");
  return 3;
}

}  // namespace memtrace::examples
