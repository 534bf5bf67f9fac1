// provenance.hpp: the blocks of provenance.txt, and the refusal of a folder of another version.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memtrace/experiment/provenance.hpp>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace provenance_test {  // a namespace of its own: the folder's tests are compiled as one file

namespace {

/// A fresh results folder, removed at the end of the test.
struct Folder {
  memtrace::test::TempDir dir{"memtrace_provenance_test"};
  std::filesystem::path path() const { return dir / "results"; }
  Folder() { std::filesystem::create_directories(path()); }
};

std::string read(const std::filesystem::path& path) { return memtrace::test::slurp(path); }

}  // namespace

TEST_CASE("command_line joins the arguments and quotes those a shell would split", "[provenance]") {
  const char* argv[] = {"prog", "--out", "my results", "it's", ""};
  CHECK(memtrace::command_line(3, argv) == "prog --out 'my results'");
  CHECK(memtrace::command_line(5, argv) == "prog --out 'my results' 'it'\\''s' ''");
  CHECK(memtrace::command_line(0, argv).empty());
}

TEST_CASE("record_provenance appends one block per invocation with every field on one line", "[provenance]") {
  const Folder dir;
  memtrace::Provenance p;
  p.commit = "abc123";
  p.compiler = "GNU 12.2.0";
  p.build_type = "Release";
  p.flags = "-O3\n-DNDEBUG";  // a newline cannot split a field
  p.command = "prog --figure";
  CHECK(p.version == std::string(memtrace::version_string));
  memtrace::record_provenance(dir.path(), p);
  memtrace::record_provenance(dir.path(), p);
  const std::string text = read(dir.path() / memtrace::provenance_file_name);
  CHECK_THAT(text, Catch::Contains("\nmemtrace=" + std::string(memtrace::version_string) +
                                   "\ncommit=abc123\n"
                                   "compiler=GNU 12.2.0\nbuild_type=Release\nflags=-O3 -DNDEBUG\n"
                                   "command=prog --figure\n"));
  CHECK(text.front() == '[');
  CHECK(memtrace::provenance_versions(dir.path()) ==
        std::vector<std::string>(2, std::string(memtrace::version_string)));
}

TEST_CASE("record_provenance refuses a folder of another memtrace version unless allowed", "[provenance]") {
  const Folder dir;
  memtrace::Provenance old;
  old.version = "0.0.1";
  memtrace::record_provenance(dir.path(), old);
  const std::string before = read(dir.path() / memtrace::provenance_file_name);
  memtrace::Provenance now;
  CHECK_THROWS_WITH(
      memtrace::record_provenance(dir.path(), now),
      Catch::Contains("written by memtrace 0.0.1, this is memtrace " + std::string(memtrace::version_string)));
  CHECK(read(dir.path() / memtrace::provenance_file_name) == before);  // refused: nothing written
  memtrace::record_provenance(dir.path(), now, true);
  CHECK(memtrace::provenance_versions(dir.path()) ==
        std::vector<std::string>{"0.0.1", std::string(memtrace::version_string)});
}

}  // namespace provenance_test
