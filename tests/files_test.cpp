// Tests of files.hpp: write_text_atomically replaces a file whole, leaves no temporary file behind,
// and a failed write leaves the old file as it was and names the file; a killed writer's temporary
// files are removed, a live writer's are not, and a killed writer of this process's pid does not
// block the next write.
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memtrace/files.hpp>
#include <string>

#include "temp_dir.hpp"

namespace files_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

std::size_t entries(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("write_text_atomically writes and replaces a whole file and leaves nothing else", "[files]") {
  const test::TempDir dir("memtrace_files_test");
  const auto path = dir / "summary.csv";
  write_text_atomically(path, "a,b\n1,2\n");
  CHECK(test::slurp(path) == "a,b\n1,2\n");
  write_text_atomically(path, "a\n");  // shorter: no tail of the old text survives
  CHECK(test::slurp(path) == "a\n");
  write_text_atomically(path, "");
  CHECK(test::slurp(path).empty());
  CHECK(entries(path.parent_path()) == 1);  // no temporary file left beside it
}

TEST_CASE("a write that fails leaves the old file as it was, names the file and leaves no temporary file", "[files]") {
  const test::TempDir dir("memtrace_files_test");
  const auto path = dir / "figure.csv";
  write_text_atomically(path, "old\n");
  // A folder where the file should be: the rename fails.
  const auto folder = dir / "taken";
  std::filesystem::create_directories(folder / "inside");
  CHECK_THROWS_WITH(write_text_atomically(folder, "new\n"), Catch::Contains(folder.string()));
  CHECK(std::filesystem::is_directory(folder / "inside"));
  // A folder that does not exist: the temporary file cannot be created.
  CHECK_THROWS_WITH(write_text_atomically(dir / "missing" / "x.csv", "new\n"), Catch::Contains("missing"));
  CHECK(test::slurp(path) == "old\n");
  CHECK(entries(path.parent_path()) == 2);  // figure.csv and the folder
}

TEST_CASE("the temporary files of a killed writer are removed before a write, those of a live one are kept",
          "[files]") {
  const test::TempDir dir("memtrace_files_stale");
  const auto path = dir / "run.safetensors";
  const auto touch = [](const std::filesystem::path& file) { std::ofstream(file) << "half a file"; };
  // A process that has exited and been reaped: its pid names no process (until it is reused).
  const ::pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const std::string dead = path.string() + ".tmp." + std::to_string(child) + ".3";
  const std::string parent = path.string() + ".tmp." + std::to_string(::getppid()) + ".0";  // it runs
  const std::string other_file = (dir / "other.csv").string() + ".tmp." + std::to_string(child) + ".1";
  for (const std::string& file : {dead, parent, other_file}) touch(file);
  // A writer of a pid that no longer runs but that still holds its file locked: alive (another pid
  // namespace, say): kept.
  const std::string locked = path.string() + ".tmp." + std::to_string(child) + ".9";
  touch(locked);
  const int fd = ::open(locked.c_str(), O_RDONLY);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  write_text_atomically(path, "whole\n");
  CHECK(test::slurp(path) == "whole\n");
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(parent));
  CHECK(std::filesystem::exists(other_file));  // another file's temporaries are not this write's to judge
  CHECK(std::filesystem::exists(locked));
  ::close(fd);
  // Temporary names of this process's pid that exist already (a killed run of the same pid, as in
  // a container) are skipped, not fatal.
  for (int n = 0; n < 200; ++n) touch(path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n));
  write_text_atomically(path, "again\n");
  CHECK(test::slurp(path) == "again\n");
}

}  // namespace files_test
