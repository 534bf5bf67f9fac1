#pragma once
// The results folder of a sweep program, one invocation at a time: an invocation runs the whole
// sweep, one shard of it, or merges the shards' folders; open_results_folder makes the folder
// ready for it (experiment.txt, shard.txt, provenance, the merged rows) before any work is done,
// and runs_to_do lists the runs it still has to compute. The parts (prepare_results_folder,
// merge_shards, write_merged, record_provenance) are in shard.hpp and provenance.hpp; this is the
// order in which a program calls them. See docs/experiments.md.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memtrace/experiment/provenance.hpp"
#include "memtrace/experiment/results.hpp"
#include "memtrace/experiment/shard.hpp"
#include "memtrace/files.hpp"

namespace memtrace {

/// What one invocation of a sweep program does with its results folder `dir`: run the runs of
/// `shard` (the whole sweep by default), or, with `merge` given, gather the runs of the shards'
/// folders `merge` into `dir` (then `shard` must be the whole sweep). `provenance` is appended to
/// dir/provenance.txt; `allow_version_change` lets it resume or merge results of another memtrace
/// version.
struct SweepRequest {
  std::filesystem::path dir{};
  Shard shard{};
  std::vector<std::filesystem::path> merge{};
  Provenance provenance{};
  bool allow_version_change = false;
};

/// What a merge wrote into one results file: the rows merged from the shards, and how many of them
/// the folder did not hold yet.
struct MergedFile {
  std::string results_file{};
  std::size_t rows = 0;
  std::size_t added = 0;
};

namespace detail {
// Beside the merged runs, each shard's provenance.txt as provenance-shard-I.txt: what computed them.
template <class Lazy = void>
void copy_shard_provenance(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& folders) {
  for (const std::filesystem::path& folder : folders) {
    const Shard shard = read_shard_file(folder);
    const std::filesystem::path source = folder / provenance_file_name;
    std::string text = "# provenance.txt of shard " + shard.to_string() + ", from " + folder.string() + "\n";
    text +=
        std::filesystem::exists(source) ? read_text(source) : "# (none: written before memtrace recorded provenance)\n";
    write_text_atomically(dir / ("provenance-shard-" + std::to_string(shard.index()) + ".txt"), text);
  }
}
}  // namespace detail

/// Makes request.dir ready for the runs of the experiment `description` (every setting the runs
/// depend on besides their keys), before any work is done. `results_files` names every results
/// file the folder holds.
/// - Without request.merge: prepare_results_folder (creates the folder or checks its
///   experiment.txt and shard.txt against this invocation), then record_provenance.
/// - With request.merge: first, without touching request.dir, checks that no shard's folder holds
///   results of another memtrace version (check_provenance_versions) and merges each file of
///   `merged`, in its order (merge_shards: one experiment, every run of spec.keys exactly once);
///   then prepares the folder for the whole sweep, records provenance, appends the merged rows
///   file by file in the reverse order (write_merged: a row the folder holds must be identical) and
///   copies each shard's provenance.txt beside them (provenance-shard-I.txt). Give first the file
///   whose rows mark runs finished (runs.csv): its missing runs are the ones a refusal names, and
///   it is written last, as the sweep itself writes it, so that an interrupted merge never leaves
///   a finished run without its other rows.
/// Each spec's description is set to `description`. Returns what was merged, one entry per spec of
/// `merged`, in its order (nothing without request.merge). Refusals throw std::invalid_argument or
/// std::runtime_error naming the folder or the function and what it holds; request.dir is then
/// unchanged if the refusal came from the shards' folders.
template <class Lazy = void>
std::vector<MergedFile> open_results_folder(const SweepRequest& request, std::string_view description,
                                            std::vector<MergeSpec> merged,
                                            const std::vector<std::string>& results_files) {
  if (!request.merge.empty() && !request.shard.whole())
    detail::invalid("open_results_folder: request.shard is ", request.shard.to_string(),
                    ", but a merge writes the whole sweep: merge without a shard");
  std::vector<MergedFile> written;
  if (request.merge.empty()) {
    prepare_results_folder(request.dir, description, request.shard, results_files);
    record_provenance(request.dir, request.provenance, request.allow_version_change);
    return written;
  }
  check_provenance_versions(request.merge, request.allow_version_change);
  std::vector<CsvTable> tables;
  for (MergeSpec& spec : merged) {
    spec.description = std::string(description);
    tables.push_back(merge_shards(request.merge, spec));
  }
  prepare_results_folder(request.dir, description, Shard{}, results_files);
  record_provenance(request.dir, request.provenance, request.allow_version_change);
  written.resize(merged.size());
  for (std::size_t f = merged.size(); f-- > 0;)
    written[f] = {merged[f].results_file, tables[f].rows.size(), write_merged(request.dir, tables[f], merged[f])};
  detail::copy_shard_provenance(request.dir, request.merge);
  return written;
}

/// The runs of `shard` among runs 0 ... num_runs-1 that are not done yet (done(i) is false), in
/// increasing order: what an invocation still has to compute after a crash or for more seeds.
template <class Done>
[[nodiscard]] std::vector<std::size_t> runs_to_do(const Shard& shard, std::size_t num_runs, Done&& done) {
  std::vector<std::size_t> todo;
  for (const std::size_t i : shard.runs(num_runs))
    if (!done(i)) todo.push_back(i);
  return todo;
}

/// The line a shard's invocation ends with: how to write the summary once every shard has run.
[[nodiscard]] inline std::string merge_hint(const Shard& shard) {
  return "when all " + std::to_string(shard.count()) +
         " shards have run: the same flags with --merge FOLDER... --out DIR write the summary\n";
}

}  // namespace memtrace
