#pragma once
// Conventions of the example programs' command lines (CLI11): --help shows every default and
// --version says what built the program (build_info.hpp). Shared by the examples only.

#include <CLI/CLI.hpp>
#include <string>

#include "build_info.hpp"

namespace memtrace::examples {

/// --help shows the default of every option added after this call, and --version is handled.
inline void cli_conventions(CLI::App& app, const std::string& program) {
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", version_text(program), "Print what built this program and exit");
}

}  // namespace memtrace::examples
