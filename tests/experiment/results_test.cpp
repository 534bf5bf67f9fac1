// Tests of experiment/results.hpp: rows round-trip bit for bit, reopening skips what is there,
// torn lines left by a crash are dropped, and bad input is refused with clear messages.
#include <unistd.h>

#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memtrace/experiment/results.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>
#include "temp_dir.hpp"

namespace results_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// A scratch directory for this test program.
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("memtrace_results_test") {}
};
using test::slurp;

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

const std::vector<std::string> header{"setting", "seed", "value"};

}  // namespace

TEST_CASE("csv_field writes numbers that read back bit for bit", "[results]") {
  const double values[] = {0.1,
                           1.0 / 3.0,
                           -0.0,
                           1e-310,  // subnormal
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           123456789.0,
                           0x1.fffffffffffffp-1};
  for (double v : values) {
    const double back = parse_field<double>(csv_field(v));
    CHECK(std::bit_cast<std::uint64_t>(back) == std::bit_cast<std::uint64_t>(v));
  }
  CHECK(std::isnan(parse_field<double>(csv_field(std::numeric_limits<double>::quiet_NaN()))));
  CHECK(csv_field(0.1) == "0.1");  // shortest form, not 0.10000000000000001
  CHECK(csv_field(std::uint64_t{18446744073709551615ULL}) == "18446744073709551615");
  CHECK(parse_field<std::uint64_t>("18446744073709551615") == 18446744073709551615ULL);
  CHECK(csv_row(3, -7, 0.5, "td", std::string("x")) == std::vector<std::string>{"3", "-7", "0.5", "td", "x"});
  CHECK_THROWS_WITH(parse_field<double>("1.5x"), "parse_field: cannot read \"1.5x\" as a number of the requested type");
  CHECK_THROWS_AS(parse_field<int>(""), std::invalid_argument);
  CHECK_THROWS_AS(parse_field<int>("1.5"), std::invalid_argument);
}

TEST_CASE("ResultsCsv writes a header and complete rows, and reopening remembers them", "[results]") {
  TempDir dir;
  const auto path = dir / "out.csv";
  {
    ResultsCsv out(path, header, 2);
    CHECK(out.size() == 0);
    CHECK(slurp(path) == "setting,seed,value\n");  // the header is written at once
    out.append(csv_row(0, 1, 0.25));
    out.append(csv_row(0, 2, 1.0 / 3.0));
    CHECK(out.contains(csv_row(0, 1)));
    CHECK_FALSE(out.contains(csv_row(1, 1)));
    CHECK(out.size() == 2);
  }
  CHECK(slurp(path) == "setting,seed,value\n0,1,0.25\n0,2,0.3333333333333333\n");
  ResultsCsv again(path, header, 2);
  CHECK(again.size() == 2);
  CHECK_FALSE(again.dropped_partial_line());
  CHECK(again.contains(csv_row(0, 2)));
  CHECK_FALSE(again.contains(csv_row(2, 0)));
  CHECK_THROWS_WITH(again.append(csv_row(0, 2, 9.0)), "ResultsCsv::append: key 0,2 is already in " + path.string());
  again.append(csv_row(1, 1, -2.0));
  const CsvTable table = read_csv(path);
  CHECK(table.header == header);
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[2] == csv_row(1, 1, -2.0));
  CHECK(parse_field<double>(table.rows[1][table.column("value")]) == 1.0 / 3.0);
  CHECK_THROWS_WITH(table.column("lambda"), "CsvTable::column: no column named \"lambda\"");
  CHECK(table.number<double>(1, table.column("value")) == 1.0 / 3.0);
  CHECK(table.number<int>(2, 0) == 1);
}

TEST_CASE("A field that is not a number is named by file, line and column", "[results]") {
  TempDir dir;
  const auto path = dir / "bad.csv";
  {
    std::ofstream out(path);
    out << "setting,seed,value\n0,0,0.5\n0,1,0.5x\n";
  }
  const CsvTable table = read_csv(path);
  CHECK(table.number<double>(0, 2) == 0.5);
  CHECK_THROWS_WITH(
      table.number<double>(1, 2),
      path.string() + ": line 3, column 3 (value): cannot read \"0.5x\" as a number of the requested type");
  CHECK_THROWS_WITH(
      table.number<int>(0, 2),
      path.string() + ": line 2, column 3 (value): cannot read \"0.5\" as a number of the requested type");
  CHECK_THROWS_WITH(table.number<double>(2, 0), Catch::Contains("CsvTable::number: no field at row 2, column 0"));
}

TEST_CASE("ResultsCsv drops a torn last line", "[results]") {
  TempDir dir;
  const auto path = dir / "torn.csv";
  write_file(path, "setting,seed,value\n0,0,1.5\n0,1,2.5\n0,2,0.12");  // killed while writing 0,2
  CHECK(read_csv(path).rows.size() == 2);                              // read_csv ignores it
  CHECK(slurp(path).ends_with("0.12"));                                // without touching the file
  {
    ResultsCsv out(path, header, 2);
    CHECK(out.dropped_partial_line());
    CHECK(out.size() == 2);
    CHECK(slurp(path) == "setting,seed,value\n0,0,1.5\n0,1,2.5\n");
    CHECK_FALSE(out.contains(csv_row(0, 2)));
    out.append(csv_row(0, 2, 0.125));
  }
  CHECK(slurp(path) == "setting,seed,value\n0,0,1.5\n0,1,2.5\n0,2,0.125\n");

  // A crash while the header itself was written leaves a prefix of it.
  const auto fresh = dir / "fresh.csv";
  write_file(fresh, "setting,se");
  ResultsCsv out(fresh, header, 2);
  CHECK(out.dropped_partial_line());
  CHECK(slurp(fresh) == "setting,seed,value\n");
}

TEST_CASE("ResultsCsv refuses a file with another header and leaves it alone", "[results]") {
  TempDir dir;
  const auto path = dir / "other.csv";
  write_file(path, "lambda,seed,error\n0.5,1,0.25\n0.9,1,0.1");
  CHECK_THROWS_WITH(
      ResultsCsv(path, header, 2),
      "ResultsCsv: " + path.string() + " has header \"lambda,seed,error\", expected \"setting,seed,value\"");
  CHECK(slurp(path) == "lambda,seed,error\n0.5,1,0.25\n0.9,1,0.1");  // the torn line is not cut from a foreign file
  write_file(path, "no newline here");
  CHECK_THROWS_WITH(ResultsCsv(path, header, 2),
                    "ResultsCsv: " + path.string() +
                        " is not a results file with header \"setting,seed,value\", found \"no newline here\"");
  write_file(path, "setting,seed,value\n0,0,1\n0,1\n");
  CHECK_THROWS_WITH(ResultsCsv(path, header, 2), path.string() + ": line 3 has 2 fields, the header has 3");
  CHECK_THROWS_WITH(read_csv(path), path.string() + ": line 3 has 2 fields, the header has 3");
}

TEST_CASE("ResultsCsv refuses bad arguments", "[results]") {
  TempDir dir;
  const auto path = dir / "bad.csv";
  using Header = std::vector<std::string>;
  CHECK_THROWS_WITH(ResultsCsv(path, Header{}, 1), "ResultsCsv: header must have at least one column, got none");
  CHECK_THROWS_WITH(ResultsCsv(path, Header{"a", "a"}, 1), "ResultsCsv: column names must be unique, got \"a\" twice");
  CHECK_THROWS_WITH(ResultsCsv(path, Header{"a", "b,c"}, 1),
                    "ResultsCsv: column names must be non-empty without ',' or line breaks, got \"b,c\"");
  CHECK_THROWS_WITH(ResultsCsv(path, header, 0), "ResultsCsv: key_columns must be in [1, 3], got 0");
  CHECK_THROWS_WITH(ResultsCsv(path, header, 4), "ResultsCsv: key_columns must be in [1, 3], got 4");
  CHECK_FALSE(std::filesystem::exists(path));  // checked before the file is created

  ResultsCsv out(path, header, 2);
  CHECK_THROWS_WITH(out.append(csv_row(1, 2)),
                    "ResultsCsv::append: row must have 3 fields (setting,seed,value), got 2");
  CHECK_THROWS_WITH(out.append(csv_row(1, 2, "a,b")),
                    "ResultsCsv::append: field value must not contain ',' or a line break, got \"a,b\"");
  CHECK_THROWS_AS(out.append(csv_row(1, "x\ny", 3)), std::invalid_argument);
  CHECK_THROWS_WITH(out.contains(csv_row(1)), "ResultsCsv::contains: key must have 2 fields (setting,seed), got 1");
  CHECK(out.size() == 0);
  // One writer per file: a second one would duplicate rows.
  CHECK_THROWS_WITH(ResultsCsv(path, header, 2),
                    "ResultsCsv: " + path.string() + " is already open for writing (by this or another process)");
  CHECK_THROWS_AS(ResultsCsv(dir / "missing" / "x.csv", header, 2), std::system_error);
  CHECK_THROWS_AS(read_csv(dir / "missing.csv"), std::system_error);
}

TEST_CASE("a results file in which a key repeats is refused, naming the file, both lines and the key", "[results]") {
  TempDir dir;
  const auto path = dir / "doubled.csv";
  // Two files concatenated by hand: setting 0, seed 1 twice (lines 3 and 5).
  const std::string content = "setting,seed,value\n0,0,1.5\n0,1,2.5\n1,0,3.5\n0,1,2.5\n";
  write_file(path, content);
  CHECK_THROWS_WITH(ResultsCsv(path, header, 2),
                    "ResultsCsv: " + path.string() + ": line 5 repeats the key (setting=0, seed=1) of line 3");
  CHECK(slurp(path) == content);  // refused before anything is changed
  CHECK_THROWS_WITH(read_csv(path, 2),
                    "read_csv: " + path.string() + ": line 5 repeats the key (setting=0, seed=1) of line 3");
  CHECK(read_csv(path).rows.size() == 4);  // without key columns, nothing is a key
  CHECK_THROWS_WITH(read_csv(path, 4),
                    "read_csv: key_columns must be at most the 3 columns of " + path.string() + ", got 4");
  // The key is the first key_columns fields only: rows that differ there are different runs.
  write_file(path, "setting,seed,value\n0,1,2.5\n0,1,2.75\n");
  CHECK_THROWS_AS(ResultsCsv(path, header, 2), std::invalid_argument);
  CHECK(ResultsCsv(path, header, 3).size() == 2);
}

TEST_CASE("parse_csv reads from memory what read_csv reads from a file", "[results]") {
  TempDir dir;
  const auto path = dir / "runs.csv";
  const std::string content = "setting,seed,value\n0,0,1.5\n0,1,2.5\n1,0,3.5\n1,1,4";  // torn last line
  write_file(path, content);
  const CsvTable from_file = read_csv(path, 2), from_memory = parse_csv(content, "runs.csv", 2);
  CHECK(from_memory.header == from_file.header);
  CHECK(from_memory.rows == from_file.rows);
  CHECK(from_memory.rows.size() == 3);
  CHECK(from_memory.path == "runs.csv");
  CHECK(parse_csv("a,b\n").rows.empty());
  CHECK_THROWS_WITH(parse_csv("a,b"), "parse_csv: <string> has no complete header line");
  CHECK_THROWS_WITH(parse_csv("a,b\n1,2\n1,3\n", "x.csv", 1),
                    "parse_csv: x.csv: line 3 repeats the key (a=1) of line 2");
  CHECK_THROWS_WITH(parse_csv("a,b\n1\n", "x.csv"), "x.csv: line 2 has 1 fields, the header has 2");
  CHECK_THROWS_WITH(parse_csv("a,b\n", "x.csv", 3),
                    "parse_csv: key_columns must be at most the 2 columns of x.csv, got 3");
}

TEST_CASE(
    "csv_line writes the fields as ResultsCsv writes a row: commas between, a newline after, and it refuses a "
    "field the line cannot hold") {
  CHECK(csv_line(csv_row("trace", 0.5, std::size_t{3})) == "trace,0.5,3\n");
  CHECK(csv_line({"a"}) == "a\n");
  CHECK_THROWS_WITH(csv_line({}), "csv_line: fields must hold at least one field, got none");
  CHECK_THROWS_WITH(csv_line({"a", "b,c"}), "csv_line: fields[1] must not contain ',' or a line break, got \"b,c\"");
  CHECK_THROWS_AS(csv_line({"a\nb"}), std::invalid_argument);
  TempDir tmp;
  {
    ResultsCsv out(tmp / "r.csv", {"k", "v"}, 1);
    out.append(csv_row("x", 0.1));
  }
  CHECK(slurp(tmp / "r.csv") == csv_line({"k", "v"}) + csv_line(csv_row("x", 0.1)));
}

TEST_CASE("RunsBySetting reads each setting's seeds in seed order, whatever the order of the rows", "[results]") {
  // Rows in the order runs finished, seeds 0-2 of two settings and a seed 3 that the summary skips.
  const std::string content =
      "memory,k,seed,steps,value\n"
      "trace,8,2,100,0.3\ntrace,16,0,100,1.0\ntrace,8,0,100,0.1\ntrace,8,3,100,9\n"
      "trace,16,2,100,3.0\ntrace,8,1,100,0.2\ntrace,16,1,100,2.0\n";
  const RunsBySetting runs(parse_csv(content, "runs.csv", 4), 4, 2, 3);
  CHECK(runs.values(csv_row("trace", 8, 100), 4) == std::vector<double>{0.1, 0.2, 0.3});
  CHECK(runs.values(csv_row("trace", 16, 100), 4) == std::vector<double>{1.0, 2.0, 3.0});
  CHECK(runs.rows(csv_row("trace", 8, 100)) == std::vector<std::size_t>{2, 5, 0});
  CHECK(runs.seeds() == 3);
  CHECK(runs.table().rows.size() == 7);
  // Empty fields (a curve point without episodes) are left out of present_values, in seed order.
  const RunsBySetting curve(parse_csv("memory,seed,at,success\nt,1,5,0.5\nt,0,5,\nt,2,5,0.25\n", "curves.csv", 3), 3, 1,
                            3);
  CHECK(curve.present_values(csv_row("t", 5), 3) == std::vector<double>{0.5, 0.25});
  CHECK_THROWS_WITH(curve.values(csv_row("t", 5), 3), Catch::Contains("curves.csv: line 3, column 4 (success)"));
  // Four seeds are asked for: setting k = 8 has them, k = 16 lacks seed 3.
  const RunsBySetting four(parse_csv(content, "runs.csv", 4), 4, 2, 4);
  CHECK(four.values(csv_row("trace", 8, 100), 4) == std::vector<double>{0.1, 0.2, 0.3, 9.0});
  CHECK_THROWS_WITH(four.values(csv_row("trace", 16, 100), 4),
                    "RunsBySetting::values: runs.csv lacks 1 of the 4 seeds of memory=trace k=16 steps=100 (seeds 3)");
  CHECK_THROWS_WITH(
      four.rows(csv_row("trace", 32, 100)),
      "RunsBySetting::rows: runs.csv lacks 4 of the 4 seeds of memory=trace k=32 steps=100 (seeds 0, 1, 2, 3)");
  const RunsBySetting many(parse_csv(content, "runs.csv", 4), 4, 2, 20);
  CHECK_THROWS_WITH(
      many.rows(csv_row("trace", 8, 100)),
      "RunsBySetting::rows: runs.csv lacks 16 of the 20 seeds of memory=trace k=8 steps=100 (seeds 4, 5, 6, "
      "7, 8, 9, 10, 11, 12, 13, ...)");
}

TEST_CASE("RunsBySetting refuses a seed that repeats in a setting, a seed that is not one, and bad columns",
          "[results]") {
  // Without key_columns, read_csv lets the repeated key through; RunsBySetting does not.
  CHECK_THROWS_WITH(RunsBySetting(parse_csv("m,seed,v\na,0,1\nb,0,2\na,0,3\n", "r.csv"), 2, 1, 5),
                    "RunsBySetting: r.csv has seed 0 of one setting twice, on lines 2 and 4");
  CHECK_THROWS_WITH(RunsBySetting(parse_csv("m,seed,v\na,x,1\n", "r.csv"), 2, 1, 5),
                    "r.csv: line 2, column 2 (seed): cannot read \"x\" as a number of the requested type");
  CHECK_THROWS_WITH(RunsBySetting(parse_csv("m,seed,v\n", "r.csv"), 1, 1, 5),
                    "RunsBySetting: seed_column (1) must be below key_columns (1), which must be at most the columns "
                    "of r.csv (3)");
  CHECK_THROWS_WITH(RunsBySetting(parse_csv("m,seed,v\n", "r.csv"), 4, 1, 5),
                    "RunsBySetting: seed_column (1) must be below key_columns (4), which must be at most the columns "
                    "of r.csv (3)");
  CHECK_THROWS_WITH(RunsBySetting(parse_csv("m,seed,v\n", "r.csv"), 2, 1, 0),
                    "RunsBySetting: seeds must be positive, got 0");
  CsvTable hand_made{{"m", "seed", "v"}, {{"a", "0"}}, "hand.csv"};
  CHECK_THROWS_WITH(RunsBySetting(hand_made, 2, 1, 1), "RunsBySetting: hand.csv: row 0 has 2 fields, the header has 3");
  // A setting that still holds the seed, or lacks a field, is named as such.
  const RunsBySetting runs(parse_csv("m,k,seed,v\na,8,0,1\n", "r.csv"), 3, 2, 1);
  CHECK(runs.values(csv_row("a", 8), 3) == std::vector<double>{1.0});
  CHECK_THROWS_WITH(runs.values(csv_row("a", 8, 0), 3),
                    "RunsBySetting::values: setting has 3 fields, expected 2 (m, k: the key without the seed)");
  CHECK_THROWS_WITH(runs.rows(csv_row("a")),
                    "RunsBySetting::rows: setting has 1 fields, expected 2 (m, k: the key without the seed)");
}

}  // namespace results_test
