#pragma once
// Sweeps split across machines. Shard I of N of a sweep whose runs are numbered 0 ... R-1 holds
// the runs i with i mod N = I; each shard writes its own results folder, and a merge checks that
// the folders hold runs of one experiment, every run exactly once, and gathers them into one
// table, from which the sweep summarizes exactly as if it had run on one machine.
// See docs/experiments.md.

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memtrace/experiment/results.hpp"
#include "memtrace/files.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Shard `index` of `count` of a sweep whose runs are numbered 0 ... R-1: the runs i with
/// i mod count = index. Every run is in exactly one shard for any R and count, and shards differ
/// in size by at most one run. Round robin rather than contiguous blocks because sweeps number
/// their runs setting by setting (run = setting * num_seeds + seed): a block would hand one shard
/// the cheap settings and another the expensive ones, while round robin gives every shard
/// floor(S/N) or ceil(S/N) of the S seeds of every setting, so shards take the same time.
class Shard {
 public:
  /// The whole sweep: shard 0 of 1.
  constexpr Shard() noexcept = default;

  /// Shard `index` of `count`; throws std::invalid_argument unless 0 <= index < count.
  Shard(std::size_t index, std::size_t count) : index_(index), count_(count) {
    if (count == 0) detail::invalid("Shard: count must be at least 1, got 0");
    if (index >= count) detail::invalid("Shard: index must be below count ", count, ", got ", index);
  }

  [[nodiscard]] constexpr std::size_t index() const noexcept { return index_; }
  [[nodiscard]] constexpr std::size_t count() const noexcept { return count_; }
  /// Whether this is the whole sweep (count 1).
  [[nodiscard]] constexpr bool whole() const noexcept { return count_ == 1; }

  /// Whether run `run` belongs to this shard.
  [[nodiscard]] constexpr bool contains(std::size_t run) const noexcept { return run % count_ == index_; }

  /// How many of the runs 0 ... num_runs-1 belong to this shard.
  [[nodiscard]] constexpr std::size_t size(std::size_t num_runs) const noexcept {
    return num_runs / count_ + (index_ < num_runs % count_ ? 1 : 0);
  }

  /// The runs of 0 ... num_runs-1 that belong to this shard, in increasing order.
  [[nodiscard]] std::vector<std::size_t> runs(std::size_t num_runs) const {
    std::vector<std::size_t> mine;
    mine.reserve(size(num_runs));
    for (std::size_t run = index_; run < num_runs; run += count_) mine.push_back(run);
    return mine;
  }

  /// "I/N", as parse_shard reads it.
  [[nodiscard]] std::string to_string() const { return std::to_string(index_) + "/" + std::to_string(count_); }

  friend constexpr bool operator==(const Shard&, const Shard&) noexcept = default;

 private:
  std::size_t index_ = 0;
  std::size_t count_ = 1;
};

/// Reads a shard spec "I/N" (two decimal integers, 0 <= I < N, nothing else). Throws
/// std::invalid_argument whose message starts with `flag` (the command-line flag or file the text
/// came from) and quotes the text.
[[nodiscard]] inline Shard parse_shard(std::string_view text, std::string_view flag = "parse_shard") {
  const auto number = [](std::string_view digits, std::size_t& value) {
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  };
  const std::size_t slash = text.find('/');
  std::size_t index = 0, count = 0;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count))
    detail::invalid(flag, ": expected I/N, shard I of N with 0 <= I < N (e.g. 0/4), got \"", text, "\"");
  if (count == 0) detail::invalid(flag, ": N must be at least 1, got \"", text, "\"");
  if (index >= count)
    detail::invalid(flag, ": I must be below N (the shards of N are 0/N ... ", count - 1, "/N), got \"", text, "\"");
  return Shard(index, count);
}

/// The files of a results folder that say what its runs are: the description of the experiment
/// (every setting the runs depend on besides their keys), and, in a shard's folder, which shard.
inline constexpr std::string_view experiment_file_name = "experiment.txt";
inline constexpr std::string_view shard_file_name = "shard.txt";

namespace detail {

/// Creates the label file `path` holding `text`, or checks the label another process wrote first
/// (exactly one of racing processes creates it); `refuse(existing)` throws for a label that does not match.
template <class Refuse>
void label_folder(const std::filesystem::path& path, std::string_view text, Refuse&& refuse) {
  if (create_text_exclusively(path, text)) return;
  const std::string existing = read_text(path);
  if (existing != text) refuse(existing);
}

[[nodiscard]] inline std::string shard_name(const Shard& shard) {
  return shard.whole() ? std::string("the whole sweep") : "shard " + shard.to_string();
}

}  // namespace detail

/// The shard whose runs the results folder `dir` holds: the one in its shard.txt, or the whole
/// sweep if it has none.
[[nodiscard]] inline Shard read_shard_file(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / shard_file_name;
  if (!std::filesystem::exists(path)) return Shard{};
  const std::string text = detail::read_text(path);
  constexpr std::string_view prefix = "shard=";
  if (!text.starts_with(prefix) || !text.ends_with('\n'))
    detail::invalid(path.string(), ": expected one line shard=I/N, got \"", text, "\"");
  return parse_shard(std::string_view(text).substr(prefix.size(), text.size() - prefix.size() - 1), path.string());
}

/// Makes `dir` ready to receive runs of the experiment `description` (compared byte for byte), or
/// of one shard of it, before any work is done:
/// - creates it, or refuses it if its experiment.txt describes another experiment, or if it holds
///   one of `results_files` but no experiment.txt (runs of unknown origin);
/// - refuses it if it holds another shard's runs (shard.txt), the whole sweep's runs for a shard
///   or a shard's for the whole sweep (a folder holds one shard, or the whole sweep);
/// - writes experiment.txt and, for a shard, shard.txt ("shard=I/N"); the description of the
///   experiment is thus the same in every shard's folder, and the shard is recorded beside it.
///   Both are created atomically (a temporary file of the process's own, then link(), which never
///   replaces a file): of processes that start on one new folder at the same moment, exactly one
///   labels it, and one with another experiment or shard is refused like a later one would be.
/// Refusals throw std::invalid_argument naming the folder and what it holds; nothing is written
/// then.
inline void prepare_results_folder(const std::filesystem::path& dir, std::string_view description,
                                   const Shard& shard = {},
                                   const std::vector<std::string>& results_files = {"runs.csv"}) {
  namespace fs = std::filesystem;
  if (fs::exists(dir) && !fs::is_directory(dir)) detail::invalid(dir.string(), " is a file, not a folder");
  const fs::path experiment = dir / experiment_file_name;
  bool has_results = false;
  for (const auto& name : results_files) has_results = has_results || fs::exists(dir / name);
  const bool known = fs::exists(experiment);
  if (known) {
    const std::string existing = detail::read_text(experiment);
    if (existing != description)
      detail::invalid(experiment.string(), " describes a different experiment:\n", existing, "this run is:\n",
                      description, "use another folder or remove that one");
  } else {
    for (const auto& name : results_files)
      if (fs::exists(dir / name))
        detail::invalid((dir / name).string(), " exists but ", experiment.string(),
                        " does not, so it may hold runs of another experiment: use another folder or remove that one");
  }
  const Shard recorded = read_shard_file(dir);
  const bool has_shard_file = fs::exists(dir / shard_file_name);
  if (has_shard_file ? recorded != shard : !shard.whole() && has_results)
    detail::invalid(
        dir.string(), " holds runs of ", detail::shard_name(recorded),
        has_shard_file ? " (" + (dir / shard_file_name).string() + ")" : std::string(" (it has no shard.txt)"),
        ", this run is ", detail::shard_name(shard),
        ": a folder holds the runs of one shard, or of the whole sweep; use another folder");
  fs::create_directories(dir);
  // Another process may have labelled the folder since the checks above: the labels are created
  // atomically (exactly one of racing processes creates each), and a loser compares what it finds.
  if (!known)
    detail::label_folder(experiment, description, [&](const std::string& existing) {
      detail::invalid(experiment.string(), " describes a different experiment:\n", existing, "this run is:\n",
                      description, "another process labelled the folder first; use another folder or remove that one");
    });
  if (!has_shard_file && !shard.whole())
    detail::label_folder(dir / shard_file_name, "shard=" + shard.to_string() + "\n", [&](const std::string&) {
      detail::invalid(dir.string(), " holds runs of ", detail::shard_name(read_shard_file(dir)), " (",
                      (dir / shard_file_name).string(), "), this run is ", detail::shard_name(shard),
                      ": another process labelled the folder first; use another folder");
    });
}

/// What a merge checks results folders against: one results file of an experiment.
struct MergeSpec {
  /// The experiment's description: every folder's experiment.txt must be exactly this.
  std::string description{};
  /// The results file in each folder, its header, and how many leading columns identify a run.
  std::string results_file{"runs.csv"};
  std::vector<std::string> header{};
  std::size_t key_columns{1};
  /// The key (key_columns fields) of every run of the experiment, in the order of the merged table.
  std::vector<std::vector<std::string>> keys{};
};

namespace detail {

inline void check_merge_spec(const MergeSpec& spec) {
  if (spec.header.empty()) invalid("merge_shards: spec.header must have at least one column, got none");
  if (spec.key_columns < 1 || spec.key_columns > spec.header.size())
    invalid("merge_shards: spec.key_columns must be in [1, ", spec.header.size(), "], got ", spec.key_columns);
  for (std::size_t k = 0; k < spec.keys.size(); ++k)
    if (spec.keys[k].size() != spec.key_columns)
      invalid("merge_shards: spec.keys[", k, "] must have ", spec.key_columns, " fields (",
              join_fields(spec.header, spec.key_columns), "), got ", spec.keys[k].size());
}

/// "a/runs.csv line 5 (shard 0/3)", for messages.
[[nodiscard]] inline std::string source_name(const std::filesystem::path& folder, const MergeSpec& spec,
                                             std::size_t line, const Shard& shard) {
  return (folder / spec.results_file).string() + " line " + std::to_string(line) + " (" + shard_name(shard) + ")";
}

}  // namespace detail

/// Gathers the runs of an experiment from the results folders of its shards, after checking that
/// - every folder's experiment.txt is spec.description, byte for byte (the same experiment);
/// - every folder's results file has spec.header, and no key repeats within it;
/// - every run of spec.keys is in exactly one folder: a run in two folders, or in none, is refused
///   naming its key and the folders (with the shard each holds, from its shard.txt).
/// Rows whose keys are not in spec.keys (more seeds or other settings of the same experiment)
/// are left out, as a re-run on one machine leaves them out. Nothing is written. Returns
/// spec.header and the rows of spec.keys, in that order, as the shards wrote them; refusals throw
/// std::invalid_argument.
[[nodiscard]] inline CsvTable merge_shards(std::span<const std::filesystem::path> folders, const MergeSpec& spec) {
  namespace fs = std::filesystem;
  detail::check_merge_spec(spec);
  if (folders.empty()) detail::invalid("merge_shards: no folders to merge");
  std::unordered_map<std::string, std::size_t> position;
  position.reserve(spec.keys.size());
  for (std::size_t k = 0; k < spec.keys.size(); ++k)
    if (!position.emplace(detail::join_fields(spec.keys[k], spec.key_columns), k).second)
      detail::invalid("merge_shards: spec.keys holds the run ",
                      detail::key_text(spec.header, spec.keys[k], spec.key_columns), " twice");

  std::vector<Shard> shards;
  for (std::size_t f = 0; f < folders.size(); ++f) {
    const fs::path& folder = folders[f];
    if (!fs::is_directory(folder)) detail::invalid("merge_shards: ", folder.string(), " is not a folder");
    for (std::size_t g = 0; g < f; ++g)
      if (fs::equivalent(folders[g], folder))
        detail::invalid("merge_shards: the folder ", folder.string(), " is given twice");
    const fs::path experiment = folder / experiment_file_name;
    if (!fs::exists(experiment))
      detail::invalid("merge_shards: ", folder.string(), " has no ", experiment_file_name,
                      ", so its runs are of unknown origin");
    const std::string described = detail::read_text(experiment);
    if (described != spec.description)
      detail::invalid("merge_shards: ", experiment.string(), " describes a different experiment:\n", described,
                      "this merge is of:\n", spec.description);
    shards.push_back(read_shard_file(folder));
  }

  std::vector<std::vector<std::string>> rows(spec.keys.size());
  struct Source {
    std::size_t folder = 0, line = 0;  // line 0: not found yet
  };
  std::vector<Source> from(spec.keys.size());
  for (std::size_t f = 0; f < folders.size(); ++f) {
    const fs::path path = folders[f] / spec.results_file;
    if (!fs::exists(path))
      detail::invalid("merge_shards: ", path.string(), " does not exist (has ", detail::shard_name(shards[f]),
                      " not run?)");
    CsvTable table = read_csv(path, spec.key_columns);
    if (table.header != spec.header)
      detail::invalid("merge_shards: ", path.string(), " has header \"",
                      detail::join_fields(table.header, table.header.size()), "\", expected \"",
                      detail::join_fields(spec.header, spec.header.size()), "\"");
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const auto it = position.find(detail::join_fields(table.rows[r], spec.key_columns));
      if (it == position.end()) continue;
      Source& source = from[it->second];
      if (source.line != 0) {
        const Shard& a = shards[source.folder];
        const Shard& b = shards[f];
        std::string why;
        if (a == b) why = "; the two folders hold the same shard";
        if (a.count() != b.count()) why = "; the folders were split into different numbers of shards";
        detail::invalid("merge_shards: the run ", detail::key_text(spec.header, table.rows[r], spec.key_columns),
                        " is in both ", detail::source_name(folders[source.folder], spec, source.line, a), " and ",
                        detail::source_name(folders[f], spec, r + 2, b),
                        ": each run must be in exactly one of the merged folders", why);
      }
      source = {f, r + 2};
      rows[it->second] = std::move(table.rows[r]);
    }
  }

  std::size_t missing = 0, first_missing = 0;
  for (std::size_t k = 0; k < from.size(); ++k)
    if (from[k].line == 0 && missing++ == 0) first_missing = k;
  if (missing > 0) {
    std::string merged;
    for (std::size_t f = 0; f < folders.size(); ++f)
      merged += (f > 0 ? ", " : "") + folders[f].string() + " (" + detail::shard_name(shards[f]) + ")";
    std::string why;  // which shards are absent, when the folders agree on their number
    bool same_count = true;
    for (const Shard& s : shards) same_count = same_count && s.count() == shards.front().count();
    if (same_count && !shards.front().whole()) {
      for (std::size_t i = 0; i < shards.front().count(); ++i) {
        bool present = false;
        for (const Shard& s : shards) present = present || s.index() == i;
        if (!present)
          why += (why.empty() ? "; no folder holds shard " : ", ") + Shard(i, shards.front().count()).to_string();
      }
    }
    detail::invalid("merge_shards: ", missing, " of the ", spec.keys.size(), " runs are in none of the folders, ",
                    "the first being ", detail::key_text(spec.header, spec.keys[first_missing], spec.key_columns),
                    "; merged ", merged, why);
  }
  return CsvTable{spec.header, std::move(rows), {}};  // from several files: no one path
}

/// Writes merged runs (merge_shards's result) into the results folder `out` as the whole sweep's:
/// prepares `out` for spec.description (prepare_results_folder: it must not hold another
/// experiment or a shard), then appends to out/spec.results_file each merged row it does not hold
/// yet. A row `out` already holds must be identical (so that merging again changes nothing);
/// otherwise std::invalid_argument names the run. Returns the number of rows appended.
namespace detail {
// The keys of the rows out/spec.results_file holds (none if it does not exist yet), after checking
// its header and that every merged row it holds is identical; a conflict throws naming `who`, the
// file, the line and the run. Reads only.
[[nodiscard]] inline std::unordered_map<std::string, std::size_t> check_held_rows(const char* who,
                                                                                  const std::filesystem::path& out,
                                                                                  const CsvTable& merged,
                                                                                  const MergeSpec& spec) {
  std::unordered_map<std::string, std::size_t> held;  // key -> row of the existing file
  const std::filesystem::path path = out / spec.results_file;
  if (!std::filesystem::exists(path)) return held;
  const CsvTable existing = read_csv(path, spec.key_columns);
  if (existing.header != spec.header)
    invalid(who, ": ", path.string(), " has the header \"", join_fields(existing.header, existing.header.size()),
            "\", expected \"", join_fields(spec.header, spec.header.size()), "\": use another folder");
  for (std::size_t r = 0; r < existing.rows.size(); ++r)
    held.emplace(join_fields(existing.rows[r], spec.key_columns), r);
  for (const auto& row : merged.rows) {
    const auto it = held.find(join_fields(row, spec.key_columns));
    if (it != held.end() && existing.rows[it->second] != row)
      invalid(who, ": ", path.string(), " line ", it->second + 2, " holds the run ",
              key_text(spec.header, row, spec.key_columns), " as \"",
              join_fields(existing.rows[it->second], spec.header.size()), "\", the shards as \"",
              join_fields(row, spec.header.size()), "\": use another folder");
  }
  return held;
}
}  // namespace detail

inline std::size_t write_merged(const std::filesystem::path& out, const CsvTable& merged, const MergeSpec& spec) {
  detail::check_merge_spec(spec);
  if (merged.header != spec.header) detail::invalid("write_merged: the merged table's header is not spec.header");
  prepare_results_folder(out, spec.description, Shard{}, {spec.results_file});
  ResultsCsv file(out / spec.results_file, spec.header, spec.key_columns);  // also creates it, and locks
  // All checked before anything is appended.
  const auto held = detail::check_held_rows("write_merged", out, merged, spec);
  std::size_t appended = 0;
  for (const auto& row : merged.rows) {
    if (held.contains(detail::join_fields(row, spec.key_columns))) continue;
    file.append(row);
    ++appended;
  }
  return appended;
}

/// merge_shards, then write_merged into `out`: the shards' folders merged into one folder that
/// holds the whole sweep's runs, as if it had run on one machine. Returns the merged table.
inline CsvTable merge_shards_into(const std::filesystem::path& out, std::span<const std::filesystem::path> folders,
                                  const MergeSpec& spec) {
  CsvTable merged = merge_shards(folders, spec);
  (void)write_merged(out, merged, spec);
  return merged;
}

}  // namespace memtrace
