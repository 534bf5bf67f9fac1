#pragma once
// Provenance of a results folder: every program that writes into it appends one block to
// provenance.txt saying what produced the results (memtrace version, commit, compiler, build type
// and flags, command line, time), and a folder written by another memtrace version is refused
// unless the caller allows it. See docs/experiments.md.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memtrace/version.hpp"

namespace memtrace {

inline constexpr std::string_view provenance_file_name = "provenance.txt";

/// What produced a set of results. `version` is this memtrace's; the rest is the caller's to fill
/// (the example programs fill it from what CMake recorded at build time).
struct Provenance {
  std::string version{version_string};
  std::string commit;      // the source's git commit, if known
  std::string compiler;    // e.g. "GCC 12.2.0"
  std::string build_type;  // e.g. "Release"
  std::string flags;       // the compiler flags that matter for the numbers
  std::string command;     // the command line
};

/// The command line as one string, arguments separated by spaces (quoted where they hold a space).
[[nodiscard]] inline std::string command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (i > 0) line += ' ';
    if (arg.find_first_of(" \t'\"") == std::string_view::npos && !arg.empty()) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

/// The memtrace versions named in the provenance blocks of `dir` (empty if it has none).
[[nodiscard]] inline std::vector<std::string> provenance_versions(const std::filesystem::path& dir) {
  std::vector<std::string> versions;
  std::ifstream in(dir / provenance_file_name);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("memtrace=")) versions.push_back(line.substr(9));
  return versions;
}

/// Throws std::runtime_error naming the folder if one of `folders` holds results of another memtrace
/// version than this one (per its provenance.txt) and `allow_other_version` is false: merging
/// shards of two versions would summarize them together.
inline void check_provenance_versions(const std::vector<std::filesystem::path>& folders,
                                      bool allow_other_version = false) {
  if (allow_other_version) return;
  for (const auto& folder : folders)
    for (const std::string& v : provenance_versions(folder))
      if (v != version_string)
        throw std::runtime_error("check_provenance_versions: " + (folder / provenance_file_name).string() +
                                 " says these results were written by memtrace " + v + ", this is memtrace " +
                                 std::string(version_string) + "; allow the version change to merge them anyway");
}

/// Appends one block describing `p` to dir/provenance.txt (dir must exist). Throws
/// std::runtime_error, before writing anything, if the folder already holds results of another
/// memtrace version and `allow_other_version` is false: results of two versions in one folder
/// would be summarized together.
namespace detail {
// record_provenance's refusal, also checked before a folder is prepared (open_results_folder).
inline void check_folder_version(const char* who, const std::filesystem::path& dir, const std::string& version,
                                 bool allow_other_version) {
  if (allow_other_version) return;
  for (const std::string& v : provenance_versions(dir))
    if (v != version)
      throw std::runtime_error(std::string(who) + ": " + (dir / provenance_file_name).string() +
                               " says these results were written by memtrace " + v + ", this is memtrace " + version +
                               "; use a new folder, or allow the version change to resume");
}
}  // namespace detail

inline void record_provenance(const std::filesystem::path& dir, const Provenance& p, bool allow_other_version = false) {
  detail::check_folder_version("record_provenance", dir, p.version, allow_other_version);
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  std::ostringstream block;
  const auto one_line = [](std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s;
  };
  const auto day = std::chrono::floor<std::chrono::days>(now);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss time(now - day);
  block << '[' << static_cast<int>(date.year()) << '-' << std::setfill('0') << std::setw(2)
        << static_cast<unsigned>(date.month()) << '-' << std::setw(2) << static_cast<unsigned>(date.day()) << 'T'
        << std::setw(2) << time.hours().count() << ':' << std::setw(2) << time.minutes().count() << ':' << std::setw(2)
        << time.seconds().count() << "Z]\n";
  block << "memtrace=" << one_line(p.version) << "\ncommit=" << one_line(p.commit)
        << "\ncompiler=" << one_line(p.compiler) << "\nbuild_type=" << one_line(p.build_type)
        << "\nflags=" << one_line(p.flags) << "\ncommand=" << one_line(p.command) << "\n";
  std::ofstream out(dir / provenance_file_name, std::ios::app);
  out << block.str();
  out.flush();
  if (!out) throw std::runtime_error("record_provenance: cannot write " + (dir / provenance_file_name).string());
}

}  // namespace memtrace
