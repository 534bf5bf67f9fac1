#pragma once
// What built an example program, for its --version and for the provenance.txt of the results
// folders it writes (memtrace/experiment/provenance.hpp). Shared by the examples only.

#include <Eigen/Core>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "memtrace/experiment/provenance.hpp"
#include "memtrace/instruction_set.hpp"
#include "memtrace/version.hpp"
#include "memtrace_build_info.hpp"  // generated at build time by cmake/build_info.cmake

namespace memtrace::examples {

/// What built this program (memtrace/experiment/provenance.hpp), with the command line.
[[nodiscard]] inline Provenance build_provenance(int argc, const char* const* argv) {
  Provenance p;
  p.commit = MEMTRACE_BUILD_COMMIT;
  p.compiler = MEMTRACE_BUILD_COMPILER;
  p.build_type = MEMTRACE_BUILD_BUILD_TYPE;
  p.flags = MEMTRACE_BUILD_FLAGS;
#ifdef MEMTRACE_EXAMPLE_OPTIMIZATION
  p.flags += std::string(p.flags.empty() ? "" : " ") + MEMTRACE_EXAMPLE_OPTIMIZATION;
#endif
#ifdef MEMTRACE_EXAMPLE_ISA
  p.flags += std::string(p.flags.empty() ? "" : " ") + "(" + MEMTRACE_EXAMPLE_ISA + ")";
#endif
  p.command = command_line(argc, argv);
  return p;
}

/// The text of --version.
[[nodiscard]] inline std::string version_text(const std::string& program) {
  const Provenance p = build_provenance(0, nullptr);
  return program + " (memtrace " + p.version + ")\ncommit " + p.commit + "\ncompiler " + p.compiler + "\nbuild type " +
         (p.build_type.empty() ? std::string("(none)") : p.build_type) + "\nflags " + p.flags;
}

/// Appends this run's provenance block to dir/provenance.txt (creating dir), refusing a folder of
/// another memtrace version unless allowed.
inline void record_run(const std::filesystem::path& dir, int argc, const char* const* argv,
                       bool allow_other_version = false) {
  std::filesystem::create_directories(dir);
  record_provenance(dir, build_provenance(argc, argv), allow_other_version);
}

/// For the programs that take no flags: --help prints `what` and --version what built the program
/// (returns 0: the caller exits), any other argument is refused (returns 2); no argument: nullopt.
[[nodiscard]] inline std::optional<int> no_flags(int argc, char** argv, const char* program, const char* what) {
  if (argc < 2) return std::nullopt;
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("%s\nUsage: %s [--help | --version]\n", what, program);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s\n", version_text(program).c_str());
    return 0;
  }
  std::fprintf(stderr, "%s: takes no arguments, got '%s' (--help says what it shows)\n", program, argv[1]);
  return 2;
}

}  // namespace memtrace::examples
