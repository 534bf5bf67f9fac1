#pragma once
// Conventions of the example programs' command lines (CLI11): --help shows every default and
// --version says what built the program (build_info.hpp). Shared by the examples only.

#include <CLI/CLI.hpp>
#include <charconv>
#include <string>
#include <system_error>

#include "build_info.hpp"

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

}  // namespace memtrace::examples
