// Fuzz target of the results reader (experiment/results.hpp). For any bytes and key_columns in
// {0, 1, 2}: parse_csv either refuses with std::invalid_argument or returns a table whose rows all
// have the header's width and whose keys are unique; the table written back (fields joined by ','
// one line each) parses to the same table. Anything else aborts. Built with libFuzzer
// (MEMTRACE_FUZZ) or with tests/fuzz/driver.cpp, which runs a corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memtrace/experiment/results.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "results_csv_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

std::string line_of(const std::vector<std::string>& fields) {
  return memtrace::detail::join_fields(fields, fields.size()) + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memtrace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::size_t key_columns = 0; key_columns <= 2; ++key_columns) {
    CsvTable table;
    try {
      table = parse_csv(text, "fuzz.csv", key_columns);
    } catch (const std::invalid_argument&) {
      continue;
    }
    std::string written = line_of(table.header);
    std::set<std::vector<std::string>> keys;
    for (const auto& row : table.rows) {
      if (row.size() != table.header.size()) finding("a row's width differs from the header's");
      if (key_columns > 0 && !keys.insert({row.begin(), row.begin() + static_cast<long>(key_columns)}).second)
        finding("a key repeats");
      written += line_of(row);
    }
    try {
      const CsvTable back = parse_csv(written, "written.csv", key_columns);
      if (back.header != table.header || back.rows != table.rows) finding("parse, write, parse differs");
    } catch (const std::invalid_argument& e) {
      finding("parse_csv refused the table it read, written back:", e.what());
    }
  }
  return 0;
}
