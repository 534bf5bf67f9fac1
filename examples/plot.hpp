#pragma once
// Figures for the example programs: each program writes its numbers as CSV, then runs a gnuplot
// script of examples/plot/ on them. Shared by the examples only; the library does not plot.

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern char** environ;

namespace memtrace::examples {

/// A script in examples/plot/ of the source tree (MEMTRACE_PLOT_DIR is set by examples/CMakeLists.txt).
[[nodiscard]] inline std::filesystem::path plot_script(std::string_view name) {
  return std::filesystem::path(MEMTRACE_PLOT_DIR) / name;
}

/// Runs `gnuplot -e "name='value'; ..." script` and waits for it. Returns true if gnuplot exited
/// with 0; otherwise prints why to stderr (gnuplot not installed, or its own error messages are
/// already there) and returns false, so that a program still keeps the CSV files it wrote.
/// Values are passed as gnuplot strings in single quotes and must not contain one.
inline bool run_gnuplot(const std::filesystem::path& script,
                        const std::vector<std::pair<std::string, std::string>>& variables) {
  std::string assignments;
  for (const auto& [name, value] : variables) {
    if (value.find('\'') != std::string::npos)
      throw std::invalid_argument("run_gnuplot: value of " + name + " contains a single quote: " + value);
    assignments += name;
    assignments += "='";
    assignments += value;
    assignments += "'; ";
  }
  std::string program = "gnuplot";
  std::string e = "-e";
  std::string path = script.string();
  std::vector<char*> argv{program.data(), e.data(), assignments.data(), path.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ);
  if (spawned != 0) {
    std::fprintf(stderr, "could not run gnuplot (%s): no figure drawn; install gnuplot-nox\n", std::strerror(spawned));
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("waitpid(gnuplot)");
      return false;
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  std::fprintf(stderr, "gnuplot %s failed: no figure drawn\n", path.c_str());
  return false;
}

/// Draws the figure of `script` (a name in examples/plot/) as `png` and as the same name with .svg
/// beside it, and says so on stdout: the script runs once per file with `out` set to it, and
/// style.gp picks the terminal from the extension. `variables` are the script's others. Returns
/// true if both were drawn; otherwise gnuplot's errors are on stderr and the CSV files stay.
inline bool draw_figure(std::string_view script, const std::filesystem::path& png,
                        std::vector<std::pair<std::string, std::string>> variables) {
  std::filesystem::path svg = png;
  svg.replace_extension(".svg");
  variables.emplace_back("out", "");
  for (const std::filesystem::path& file : {png, svg}) {
    variables.back().second = file.string();
    if (!run_gnuplot(plot_script(script), variables)) return false;
    std::printf("wrote %s\n", file.c_str());
  }
  return true;
}

}  // namespace memtrace::examples
