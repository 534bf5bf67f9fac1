#pragma once
// Conventions of the example programs' command lines (CLI11): --help shows every default and
// --version says what built the program (build_info.hpp). Shared by the examples only.

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "build_info.hpp"
#include "memtrace/experiment/results_folder.hpp"

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
                     "--out; a killed run resumes from its checkpoint when run again with the same flags (0: no "
                     "checkpoints)")
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

/// The line a shard's invocation ends with: how to write the summary once every shard has run.
[[nodiscard]] inline std::string merge_hint(const Shard& shard) {
  return "when all " + std::to_string(shard.count()) +
         " shards have run: the same flags with --merge FOLDER... --out DIR write the summary\n";
}

}  // namespace memtrace::examples
