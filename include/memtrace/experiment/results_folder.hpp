#pragma once
// The results folder of a sweep program, one invocation at a time: an invocation runs the whole
// sweep, one shard of it, or merges the shards' folders; open_results_folder makes the folder
// ready for it (experiment.txt, shard.txt, provenance, the merged rows) before any work is done,
// and runs_to_do lists the runs it still has to compute. The parts (prepare_results_folder,
// merge_shards, write_merged, record_provenance) are in shard.hpp and provenance.hpp; this is the
// order in which a program calls them. See docs/experiments.md.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memtrace/experiment/provenance.hpp"
#include "memtrace/experiment/results.hpp"
#include "memtrace/experiment/shard.hpp"
#include "memtrace/files.hpp"

namespace memtrace {

/// What one invocation of a sweep program does with its results folder `dir`: run the runs of
/// `shard` (the whole sweep by default), or, with `shard_folders` given, gather the runs of the
/// shards' folders into `dir` (then `shard` must be the whole sweep). `provenance` is appended to
/// dir/provenance.txt; `allow_version_change` lets it resume or merge results of another memtrace
/// version.
struct SweepRequest {
  std::filesystem::path dir{};
  Shard shard{};
  std::vector<std::filesystem::path> shard_folders{};
  Provenance provenance{};
  bool allow_version_change = false;
};

/// What a merge wrote into one results file: the rows merged from the shards, and how many of them
/// the folder did not hold yet (appended).
struct MergedFile {
  std::string results_file{};
  std::size_t rows = 0;
  std::size_t appended = 0;
};

namespace detail {
// Beside the merged runs, each shard's provenance.txt as provenance-shard-I.txt: what computed them.
inline void copy_shard_provenance(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& folders) {
  for (const std::filesystem::path& folder : folders) {
    const Shard shard = read_shard_file(folder);
    const std::filesystem::path source = folder / provenance_file_name;
    std::string text = "# provenance.txt of shard " + shard.to_string() + ", from " + folder.string() + "\n";
    text +=
        std::filesystem::exists(source) ? read_text(source) : "# (none: written before memtrace recorded provenance)\n";
    write_text_atomically(dir / ("provenance-shard-" + std::to_string(shard.index()) + ".txt"), text);
  }
}

inline std::vector<MergedFile> open_results_folder(const SweepRequest& request, std::string_view description,
                                                   std::vector<MergeSpec> specs,
                                                   std::vector<std::string> results_files) {
  // Everything that can refuse is checked before the folder is touched: the versions, then the
  // shards' folders (merge_shards), then the rows the folder holds. prepare_results_folder writes
  // its labels only into a folder that holds no results, where nothing after it can refuse.
  check_folder_version("open_results_folder", request.dir, request.provenance.version, request.allow_version_change);
  if (request.shard_folders.empty()) {
    prepare_results_folder(request.dir, description, request.shard, results_files);
    record_provenance(request.dir, request.provenance, request.allow_version_change);
    return {};
  }
  if (!request.shard.whole())
    invalid("open_results_folder: request.shard is ", request.shard.to_string(),
            ", but a merge writes the whole sweep: merge without a shard");
  if (specs.empty())
    invalid("open_results_folder: specs must hold the results files to merge, got none (", request.shard_folders.size(),
            " shard folders)");
  std::unordered_set<std::string> names;
  for (MergeSpec& spec : specs) {
    if (!names.insert(spec.results_file).second)
      invalid("open_results_folder: specs name ", spec.results_file, " twice");
    spec.description = std::string(description);
    if (std::find(results_files.begin(), results_files.end(), spec.results_file) == results_files.end())
      results_files.push_back(spec.results_file);
  }
  check_provenance_versions(request.shard_folders, request.allow_version_change);
  std::vector<CsvTable> tables;
  for (const MergeSpec& spec : specs) tables.push_back(merge_shards(request.shard_folders, spec));
  prepare_results_folder(request.dir, description, Shard{}, results_files);
  for (std::size_t f = 0; f < specs.size(); ++f)
    (void)check_held_rows("open_results_folder", request.dir, tables[f], specs[f]);
  record_provenance(request.dir, request.provenance, request.allow_version_change);
  std::vector<MergedFile> written(specs.size());
  for (std::size_t f = specs.size(); f-- > 0;)
    written[f] = {specs[f].results_file, tables[f].rows.size(), write_merged(request.dir, tables[f], specs[f])};
  copy_shard_provenance(request.dir, request.shard_folders);
  return written;
}
}  // namespace detail

/// Makes request.dir ready for the runs of the experiment `description` (every setting the runs
/// depend on besides their keys), before any work is done. `results_files` names the folder's
/// results files (those of `specs` are added).
/// - Without request.shard_folders: prepare_results_folder (creates the folder or checks its
///   experiment.txt and shard.txt against this invocation), then record_provenance.
/// - With request.shard_folders: first, without touching request.dir, checks that no shard's folder
///   holds results of another memtrace version (check_provenance_versions) and merges each results
///   file of `specs`, in their order (merge_shards: one experiment, every run of spec.keys exactly
///   once); then prepares the folder for the whole sweep, checks that every row it already holds is
///   the merged one, records provenance, appends the merged rows file by file in the reverse order
///   of `specs` (write_merged) and copies each shard's provenance.txt beside them
///   (provenance-shard-I.txt). Give first the file whose rows mark runs finished (runs.csv): its
///   missing runs are the ones a refusal names, and it is written last, as the sweep itself writes
///   it, so that an interrupted merge never leaves a finished run without its other rows.
/// Each spec's description is set to `description`. Returns what was merged, one entry per spec,
/// in their order (nothing without shard folders). A refusal throws std::invalid_argument (bad
/// input, another experiment or shard, a missing or conflicting run) or std::runtime_error
/// (another memtrace version) whose message starts with "open_results_folder: " and leaves
/// request.dir as it was.
inline std::vector<MergedFile> open_results_folder(const SweepRequest& request, std::string_view description,
                                                   std::vector<MergeSpec> specs,
                                                   const std::vector<std::string>& results_files) {
  // The parts' messages name the part (merge_shards:, record_provenance:); the caller called this.
  const auto named = [](std::string_view what) {
    constexpr std::string_view who = "open_results_folder: ";
    return what.starts_with(who) ? std::string(what) : std::string(who) + std::string(what);
  };
  try {
    return detail::open_results_folder(request, description, std::move(specs), results_files);
  } catch (const std::system_error&) {
    throw;  // the file system's own errors keep their type
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(named(e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(named(e.what()));
  }
}

/// The runs of `shard` among runs 0 ... num_runs-1 that are not done yet (done(i) is false), in
/// increasing order: what an invocation still has to compute after a crash or for more seeds.
template <class Done>
requires std::predicate<Done&, std::size_t>
[[nodiscard]] std::vector<std::size_t> runs_to_do(const Shard& shard, std::size_t num_runs, Done&& done) {
  std::vector<std::size_t> todo;
  for (const std::size_t i : shard.runs(num_runs))
    if (!done(i)) todo.push_back(i);
  return todo;
}

}  // namespace memtrace
