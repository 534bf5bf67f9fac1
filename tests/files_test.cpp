// Tests of files.hpp: write_text_atomically replaces a file whole, leaves no temporary file behind,
// and a failed write leaves the old file as it was and names the file.
#include <catch2/catch.hpp>
#include <filesystem>
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

}  // namespace files_test
