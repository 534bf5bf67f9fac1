#pragma once
// A sweep as a library object. A program describes its runs (SweepPlan: the experiment's
// description, its results files with their key columns, and every run with the keys of the rows
// it writes and a cost estimate) and gives one function that does a run and returns its rows;
// run_sweep does the rest: it opens or resumes the results folder (or merges the shards' folders
// into it, with merge rules derived from the keys), lists the runs of its shard still to do,
// starts the costliest first on every core with a progress line, writes each run's rows as soon as
// it finishes (its first results file last: a row there marks the run finished), names each run's
// checkpoint file and removes it once the rows are written, and says what it did. The numbers do
// not depend on the thread count, the shard or an interruption. See docs/experiments.md
// ("A sweep runner").

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memtrace/experiment/results.hpp"
#include "memtrace/experiment/results_folder.hpp"
#include "memtrace/experiment/shard.hpp"
#include "memtrace/experiment/sweep.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A results file of a sweep: its name in the folder, its header, and how many leading columns
/// identify a row.
struct ResultsFileSpec {
  std::string name{};
  std::vector<std::string> header{};
  std::size_t key_columns = 1;
};

/// One run of a sweep: the keys of the rows it writes, file by file (keys[f] for SweepPlan::files[f];
/// at least one in the first file), and an estimate of its cost (any unit: runs start costliest
/// first, so that no worker is left with a long run after the others have finished).
struct SweepRun {
  std::vector<std::vector<std::vector<std::string>>> keys{};
  double cost = 1.0;
};

/// What a sweep is: `description` (every setting the runs depend on besides their keys: the
/// folder's experiment.txt), its results files (the first, e.g. runs.csv, marks runs finished),
/// and its runs, in the order shards count them (run i is in shard I of N if i mod N = I).
struct SweepPlan {
  std::string description{};
  std::vector<ResultsFileSpec> files{};
  std::vector<SweepRun> runs{};
};

/// A run's rows, file by file (rows[f] for SweepPlan::files[f]), each a whole row, key first.
using SweepRows = std::vector<std::vector<std::vector<std::string>>>;

/// What run_sweep hands the function that does run `index`: the path of the run's checkpoint file
/// (empty unless SweepRunOptions::checkpoints), which it may resume from and write; run_sweep
/// removes it once the run's rows are written.
struct SweepRunContext {
  std::size_t index = 0;
  std::filesystem::path checkpoint{};
};

struct SweepRunOptions {
  /// Worker threads (sweep_threads: 0 is every core).
  std::size_t threads = 0;
  /// The progress line on stderr (ProgressLine), and its label.
  bool progress = true;
  std::string label{};
  /// Give every run a checkpoint file, DIR/checkpoints/NAME.safetensors (NAME: the first key of
  /// its first file, fields joined by '_').
  bool checkpoints = false;
  /// Open the folder (prepare it, record provenance, merge): false when an earlier run_sweep of
  /// the same invocation opened it for another plan of the same experiment.
  bool open_folder = true;
  /// Print to stdout what was merged, how many runs stopped early, and a shard's hint to merge.
  bool report = true;
  /// Start at most this many runs (0: all), as if the sweep were killed once they finish: to try
  /// resumption (the examples' --stop-after of a sweep of short runs).
  std::size_t max_runs = 0;
  /// The folder's other results files (of another plan of the same experiment, which a later
  /// run_sweep writes): opening the folder refuses them too when they lack an experiment.txt.
  std::vector<std::string> other_files{};
};

/// What a run_sweep did.
/// A run that threw (a diverged network, a checkpoint it refused): which, and why.
struct FailedRun {
  std::size_t index = 0;  ///< in plan.runs
  std::string key;        ///< its first key, as "column=value, ..." of plan.files[0]
  std::string what;       ///< the exception's message
};

struct SweepOutcome {
  std::vector<MergedFile> merged{};  ///< open_results_folder's, one per results file (empty without a merge)
  std::size_t runs = 0;              ///< of the plan
  std::size_t in_shard = 0;          ///< of the request's shard
  std::size_t computed = 0;          ///< finished by this call
  std::size_t stopped = 0;           ///< returned no rows (stopped early: their checkpoints stay)
  std::size_t resumable = 0;         ///< of them, those with a checkpoint to resume from
  std::size_t not_started = 0;       ///< left to do by options.max_runs
  std::vector<FailedRun> failed{};   ///< runs that threw, in plan order (their rows are not written)
  double seconds = 0;                ///< wall time of the call
  /// Whether every run of the shard is finished.
  [[nodiscard]] bool complete() const noexcept { return stopped == 0 && not_started == 0 && failed.empty(); }
};

/// The name of the checkpoint file of a run whose first key is `key`: its fields joined by '_',
/// with '/' and '\\' replaced by '-'.
[[nodiscard]] inline std::string sweep_run_name(const std::vector<std::string>& key) {
  std::string name;
  for (std::size_t k = 0; k < key.size(); ++k) name += (k > 0 ? "_" : "") + key[k];
  std::replace(name.begin(), name.end(), '/', '-');
  std::replace(name.begin(), name.end(), '\\', '-');
  return name;
}

namespace detail {

// Checks a plan before anything is touched; throws std::invalid_argument naming what is wrong.
inline void check_sweep_plan(const SweepPlan& plan, bool checkpoints) {
  if (plan.files.empty()) invalid("run_sweep: plan.files must name at least one results file, got none");
  if (plan.runs.empty()) invalid("run_sweep: plan.runs is empty: a sweep of no runs");
  std::unordered_set<std::string> names;
  for (std::size_t f = 0; f < plan.files.size(); ++f) {
    const ResultsFileSpec& file = plan.files[f];
    if (!names.insert(file.name).second) invalid("run_sweep: plan.files names ", file.name, " twice");
    check_results_header(message("run_sweep: plan.files[", f, "] (", file.name, ")"), file.header, file.key_columns);
  }
  std::unordered_map<std::string, std::size_t> checkpoint_names;                      // name -> run
  std::vector<std::unordered_map<std::string, std::size_t>> seen(plan.files.size());  // key -> run
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const SweepRun& run = plan.runs[i];
    if (run.keys.size() != plan.files.size())
      invalid("run_sweep: plan.runs[", i, "] gives keys for ", run.keys.size(), " files, plan.files has ",
              plan.files.size());
    if (run.keys[0].empty())
      invalid("run_sweep: plan.runs[", i, "] writes no row to ", plan.files[0].name,
              ", whose rows mark a run finished");
    if (!(run.cost >= 0.0 && std::isfinite(run.cost)))
      invalid("run_sweep: plan.runs[", i, "].cost must be non-negative and finite, got ", run.cost);
    for (std::size_t f = 0; f < plan.files.size(); ++f)
      for (const auto& key : run.keys[f]) {
        const ResultsFileSpec& file = plan.files[f];
        if (key.size() != file.key_columns)
          invalid("run_sweep: plan.runs[", i, "] has a key of ", key.size(), " fields for ", file.name, ", expected ",
                  file.key_columns, " (", join_fields(file.header, file.key_columns), ")");
        for (const std::string& field : key)
          if (!valid_field(field))
            invalid("run_sweep: plan.runs[", i, "] has a key field \"", field, "\" for ", file.name,
                    " that holds ',' or a line break");
        const auto [where, inserted] = seen[f].emplace(join_fields(key, key.size()), i);
        if (!inserted)
          invalid("run_sweep: plan.runs[", where->second, "] and plan.runs[", i, "] both write the row ",
                  key_text(file.header, key, file.key_columns), " of ", file.name);
      }
    if (checkpoints) {  // two runs must never share a checkpoint file
      const auto [where, inserted] = checkpoint_names.emplace(sweep_run_name(run.keys[0].front()), i);
      if (!inserted)
        invalid("run_sweep: plan.runs[", where->second, "] and plan.runs[", i, "] would share the checkpoint file ",
                where->first, ".safetensors (sweep_run_name of their first keys)");
    }
  }
}

// Checks that `rows` are the rows plan.runs[i] declared (each declared key exactly once, whole
// rows): a program's mistake would otherwise show only when a merge misses a row.
inline void check_sweep_rows(const SweepPlan& plan, std::size_t i, const SweepRows& rows) {
  if (rows.size() != plan.files.size())
    throw std::logic_error(message("run_sweep: run ", i, " returned rows for ", rows.size(), " files, plan.files has ",
                                   plan.files.size()));
  for (std::size_t f = 0; f < plan.files.size(); ++f) {
    const ResultsFileSpec& file = plan.files[f];
    std::unordered_set<std::string> declared;
    for (const auto& key : plan.runs[i].keys[f]) declared.insert(join_fields(key, key.size()));
    std::size_t found = 0;
    for (const auto& row : rows[f]) {
      if (row.size() != file.header.size())
        throw std::logic_error(message("run_sweep: run ", i, " returned a row of ", row.size(), " fields for ",
                                       file.name, ", whose header has ", file.header.size()));
      for (std::size_t c = 0; c < row.size(); ++c)
        if (!valid_field(row[c]))
          throw std::logic_error(message("run_sweep: run ", i, " returned the field ", file.header[c], " = \"", row[c],
                                         "\" for ", file.name, ", which holds ',' or a line break"));
      if (declared.erase(join_fields(row, file.key_columns)) == 0)
        throw std::logic_error(message("run_sweep: run ", i, " returned the row ",
                                       key_text(file.header, row, file.key_columns), " for ", file.name,
                                       ", which its plan does not declare (or twice)"));
      ++found;
    }
    if (!declared.empty())
      throw std::logic_error(message("run_sweep: run ", i, " returned ", found, " rows for ", file.name,
                                     ", its plan declares ", found + declared.size()));
  }
}

}  // namespace detail

/// Runs the sweep `plan` as the invocation `request` asks (open_results_folder: the whole sweep, a
/// shard of it, or a merge of the shards' folders, whose runs then need no computing):
/// 1. checks the plan (keys of their file's width, fields a CSV holds, no row written by two runs
///    nor, with options.checkpoints, a checkpoint file shared by two) and, unless
///    options.open_folder is false, opens request.dir (experiment.txt, shard.txt, provenance, the
///    merged rows), refusing another experiment, shard or version;
/// 2. lists the runs of request.shard whose rows in plan.files[0] are not all in the folder, and
///    starts them (at most options.max_runs of them) costliest first (stable: equal costs in plan
///    order) on options.threads workers;
/// 3. calls run(SweepRunContext{i, checkpoint}) for each (concurrently: a run's numbers must depend
///    on its index only), which returns its rows (SweepRows), or std::nullopt if it stopped before
///    finishing (its checkpoint stays; the run counts as stopped);
/// 4. appends each finished run's rows that the folder does not hold yet, plan.files[1...] first
///    and plan.files[0] last, then removes its checkpoint; removes DIR/checkpoints once empty.
///    What a kill left there — temporary files of a checkpoint being written, the checkpoint of a
///    run whose rows were written — is removed at the start (the results files are locked then).
/// A run that throws a std::exception fails alone: its rows are not written (its checkpoint stays),
/// the other runs go on, and the outcome lists it (SweepOutcome::failed; options.report prints each
/// with its message); a run again retries it. Rows of other shapes or keys than the plan declares
/// throw std::logic_error, which stops the sweep (runs in progress finish). A sweep killed at any
/// point and run again computes only what is missing and ends with the same files.
template <class Run>
requires std::invocable<Run&, const SweepRunContext&> &&
    std::same_as<std::invoke_result_t<Run&, const SweepRunContext&>, std::optional<SweepRows>>
        SweepOutcome run_sweep(const SweepRequest& request, const SweepPlan& plan, Run&& run,
                               const SweepRunOptions& options = {}) {
  namespace fs = std::filesystem;
  const auto start = std::chrono::steady_clock::now();
  detail::check_sweep_plan(plan, options.checkpoints);
  if (options.checkpoints && !options.open_folder)
    detail::invalid(
        "run_sweep: options.checkpoints needs options.open_folder: the checkpoints of two plans of one "
        "folder would share DIR/checkpoints");
  SweepOutcome outcome;
  outcome.runs = plan.runs.size();
  outcome.in_shard = request.shard.size(plan.runs.size());
  const fs::path& dir = request.dir;
  std::vector<std::string> file_names;
  for (const ResultsFileSpec& file : plan.files) file_names.push_back(file.name);
  if (options.open_folder) {
    std::vector<MergeSpec> specs;
    if (!request.shard_folders.empty())
      for (std::size_t f = 0; f < plan.files.size(); ++f) {
        MergeSpec spec{{}, plan.files[f].name, plan.files[f].header, plan.files[f].key_columns, {}};
        for (const SweepRun& r : plan.runs) spec.keys.insert(spec.keys.end(), r.keys[f].begin(), r.keys[f].end());
        specs.push_back(std::move(spec));
      }
    std::vector<std::string> files_of_folder = file_names;
    files_of_folder.insert(files_of_folder.end(), options.other_files.begin(), options.other_files.end());
    outcome.merged = open_results_folder(request, plan.description, std::move(specs), files_of_folder);
    if (options.report && !outcome.merged.empty()) {
      std::printf("merged the %zu runs of the plan from %zu folders into %s:", plan.runs.size(),
                  request.shard_folders.size(), dir.c_str());
      for (const MergedFile& m : outcome.merged)
        std::printf(" %s %zu rows (%zu new)%s", m.results_file.c_str(), m.rows, m.appended,
                    &m == &outcome.merged.back() ? "\n" : ",");
    }
  }
  {
    std::vector<std::unique_ptr<ResultsCsv>> files;
    for (const ResultsFileSpec& file : plan.files)
      files.push_back(std::make_unique<ResultsCsv>(dir / file.name, file.header, file.key_columns));
    const auto done = [&](std::size_t i) {
      for (const auto& key : plan.runs[i].keys[0])
        if (!files[0]->contains(key)) return false;
      return true;
    };
    std::vector<std::size_t> todo = runs_to_do(request.shard, plan.runs.size(), done);
    std::stable_sort(todo.begin(), todo.end(),
                     [&](std::size_t a, std::size_t b) { return plan.runs[a].cost > plan.runs[b].cost; });
    if (options.max_runs != 0 && todo.size() > options.max_runs) {
      outcome.not_started = todo.size() - options.max_runs;
      todo.resize(options.max_runs);
    }
    const fs::path checkpoints = dir / "checkpoints";
    if (options.checkpoints) {
      // What a kill left behind, now that the results files are locked (no other process works in
      // this folder): half-written temporary files, and checkpoints of runs whose rows are written.
      std::error_code ignored;
      std::unordered_map<std::string, std::size_t> run_of;  // checkpoint file name -> run
      for (const std::size_t i : request.shard.runs(plan.runs.size()))
        run_of.emplace(sweep_run_name(plan.runs[i].keys[0].front()) + ".safetensors", i);
      std::vector<fs::path> stale;
      for (const auto& entry : fs::directory_iterator(checkpoints, ignored)) {
        const std::string file = entry.path().filename().string();
        const std::size_t tmp = file.find(".safetensors.tmp.");  // write_text_atomically's temporary files
        const auto owner = run_of.find(tmp == std::string::npos ? file : file.substr(0, tmp + 12));
        if (owner != run_of.end() && (tmp != std::string::npos || done(owner->second))) stale.push_back(entry.path());
      }
      for (const fs::path& path : stale) fs::remove(path, ignored);
      if (!todo.empty()) fs::create_directories(checkpoints);
    }
    std::atomic<std::size_t> computed{0}, stopped{0}, resumable{0};
    std::mutex failures;  // guards outcome.failed
    parallel_runs(
        todo.size(),
        [&](std::size_t j) {
          const std::size_t i = todo[j];
          SweepRunContext context{i, {}};
          if (options.checkpoints)
            context.checkpoint = checkpoints / (sweep_run_name(plan.runs[i].keys[0].front()) + ".safetensors");
          std::optional<SweepRows> rows;
          try {
            rows = run(std::as_const(context));
          } catch (const std::exception& e) {  // this run fails; the others go on
            const ResultsFileSpec& first = plan.files[0];
            std::lock_guard lock(failures);
            outcome.failed.push_back(
                {i, detail::key_text(first.header, plan.runs[i].keys[0].front(), first.key_columns), e.what()});
            return;
          }
          if (!rows) {
            ++stopped;
            if (!context.checkpoint.empty() && fs::exists(context.checkpoint)) ++resumable;
            return;
          }
          detail::check_sweep_rows(plan, i, *rows);
          const auto write = [&](std::size_t f) {
            const auto width = static_cast<std::ptrdiff_t>(plan.files[f].key_columns);
            for (const auto& row : (*rows)[f])
              if (!files[f]->contains({row.begin(), row.begin() + width})) files[f]->append(row);
          };
          for (std::size_t f = 1; f < plan.files.size(); ++f) write(f);
          write(0);  // last: a row in the first file marks the run finished
          if (!context.checkpoint.empty()) fs::remove(context.checkpoint);
          ++computed;
        },
        SweepOptions{.threads = options.threads, .progress = options.progress, .label = options.label});
    std::sort(outcome.failed.begin(), outcome.failed.end(),
              [](const FailedRun& a, const FailedRun& b) { return a.index < b.index; });
    outcome.computed = computed;
    outcome.stopped = stopped;
    outcome.resumable = resumable;
    std::error_code ignored;
    if (options.checkpoints) fs::remove(checkpoints, ignored);  // only if empty: a stopped run's checkpoint stays
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.report) {
    for (const FailedRun& f : outcome.failed) std::printf("run %s failed: %s\n", f.key.c_str(), f.what.c_str());
    if (!outcome.failed.empty())
      std::printf("%zu of the runs failed (their rows are not written; the same command tries them again)\n",
                  outcome.failed.size());
    if (outcome.stopped > 0)
      std::printf(
          "stopped %zu of the %zu runs to do before they finished; %zu of them have a checkpoint to resume from\n",
          outcome.stopped, outcome.computed + outcome.stopped + outcome.not_started, outcome.resumable);
    else if (outcome.not_started > 0)
      std::printf("stopped after %zu runs, %zu not started\n", outcome.computed, outcome.not_started);
    else if (!request.shard.whole())
      std::printf(
          "shard %s: %zu of %zu runs in %s, %.1f s\nwhen all %zu shards have run: the same flags with --merge "
          "FOLDER... --out DIR write the summary\n",
          request.shard.to_string().c_str(), outcome.in_shard, outcome.runs, dir.c_str(), outcome.seconds,
          request.shard.count());
  }
  return outcome;
}

}  // namespace memtrace
