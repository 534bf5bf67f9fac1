#pragma once
// Test support for the example programs: start one as a user starts it (stdout and stderr to log
// files) and kill it with SIGKILL once something has happened, as a machine's crash or an
// out-of-memory killer would, with no chance to clean up.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace memtrace::test {

/// Starts `program` with the space-separated `arguments`, stdout to `log` and stderr to log + ".err";
/// returns its process id.
inline pid_t spawn_program(const std::string& program, const std::string& arguments, const std::filesystem::path& log) {
  std::vector<std::string> words{program};
  std::istringstream split(arguments);
  for (std::string w; split >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string err = log.string() + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("spawn_program: cannot start " + program);
  return pid;
}

/// Waits until `happened()` holds, then kills the process `pid` with SIGKILL. Returns true if it
/// was killed, false if it ended on its own first.
template <class Happened>
bool kill_when(pid_t pid, Happened&& happened) {
  int status = 0;
  while (!happened()) {
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    usleep(1000);
  }
  ::kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/// The number of lines of a file (0 if it does not exist yet).
inline std::size_t count_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace memtrace::test
