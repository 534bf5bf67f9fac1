#pragma once
// Checkpointed results: a CSV file to which a sweep appends each finished run as one complete
// line, and which a re-run reopens to skip the runs already there. Linux/POSIX (open, write,
// flock). See docs/experiments.md.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A field of a results row: a double in its shortest form that reads back to the same bits
/// (std::to_chars), so that results reloaded from a file are bit-identical to computed ones.
template <std::floating_point T>
[[nodiscard]] std::string csv_field(T value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

template <std::integral T>
[[nodiscard]] std::string csv_field(T value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

[[nodiscard]] inline std::string csv_field(std::string_view value) { return std::string(value); }

/// A row (or a key) from values of any mix of arithmetic and string types: csv_row(i, 0.9, "td").
template <class... Values>
[[nodiscard]] std::vector<std::string> csv_row(const Values&... values) {
  return {csv_field(values)...};
}

/// The value of a field written by csv_field (or any number std::from_chars reads); throws
/// std::invalid_argument naming the field unless all of it is a number of type T.
template <class T>
requires(std::floating_point<T> || (std::integral<T> && !std::same_as<T, bool>)) [[nodiscard]] T
    parse_field(std::string_view field) {
  T value{};
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size() || field.empty())
    detail::invalid("parse_field: cannot read \"", field, "\" as a number of the requested type");
  return value;
}

/// A results file as read back: the header and the complete rows (a torn last line is left out).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::filesystem::path path;  // the file it was read from (read_csv), for messages; rows are its lines 2, 3, ...

  /// The index of the column called `name`; throws if there is none.
  [[nodiscard]] std::size_t column(std::string_view name) const {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    detail::invalid("CsvTable::column: no column named \"", name, "\"");
  }

  /// The field of row `row` (0: the first row after the header) and column `column` read as a
  /// number of type T (parse_field). Throws std::invalid_argument naming the file, its line and
  /// the column (number and name) if the field is not such a number or is out of range.
  template <class T>
  [[nodiscard]] T number(std::size_t row, std::size_t column) const {
    if (row >= rows.size() || column >= rows[row].size())
      detail::invalid("CsvTable::number: no field at row ", row, ", column ", column, " of ", path.string(), " (",
                      rows.size(), " rows)");
    try {
      return parse_field<T>(rows[row][column]);
    } catch (const std::invalid_argument&) {
      detail::invalid(path.string(), ": line ", row + 2, ", column ", column + 1,
                      column < header.size() ? " (" + header[column] + ")" : std::string(), ": cannot read \"",
                      rows[row][column], "\" as a number of the requested type");
    }
  }
};

namespace detail {

[[noreturn]] inline void system_failure(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// Owns a file descriptor; closing also releases its flock.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

/// The whole content of an open file.
[[nodiscard]] inline std::string read_whole(int fd, const std::filesystem::path& path) {
  std::string content;
  char buffer[1 << 16];
  for (off_t offset = 0;;) {
    const ssize_t got = ::pread(fd, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) system_failure("cannot read " + path.string());
    if (got == 0) return content;
    content.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
}

[[nodiscard]] inline std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> fields;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    fields.emplace_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

[[nodiscard]] inline std::string join_fields(const std::vector<std::string>& fields, std::size_t count) {
  std::string joined;
  for (std::size_t c = 0; c < count; ++c) {
    if (c > 0) joined += ',';
    joined += fields[c];
  }
  return joined;
}

/// Fields are written unquoted, so separators and line breaks cannot be represented.
[[nodiscard]] inline bool valid_field(std::string_view field) noexcept {
  return field.find_first_of(",\n\r") == std::string_view::npos;
}

/// "(setting=0, seed=1)": a run's key with its column names, for messages.
[[nodiscard]] inline std::string key_text(const std::vector<std::string>& header, const std::vector<std::string>& row,
                                          std::size_t key_columns) {
  std::string text = "(";
  for (std::size_t c = 0; c < key_columns; ++c) {
    if (c > 0) text += ", ";
    text += header[c] + "=" + row[c];
  }
  return text + ")";
}

/// Splits complete lines (content up to and including its last '\n') into the header (the first
/// line) and rows, each of which must have as many fields as the header.
[[nodiscard]] inline CsvTable parse_table(std::string_view complete, const std::filesystem::path& path) {
  CsvTable table;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < complete.size();) {
    const std::size_t end = complete.find('\n', start);
    auto fields = split_fields(complete.substr(start, end - start));
    ++line_number;
    if (line_number == 1) {
      table.header = std::move(fields);
    } else if (fields.size() != table.header.size()) {
      invalid(path.string(), ": line ", line_number, " has ", fields.size(), " fields, the header has ",
              table.header.size());
    } else {
      table.rows.push_back(std::move(fields));
    }
    start = end + 1;
  }
  return table;
}

/// The keys (first key_columns fields, joined) of the rows of a table read from `path`; throws,
/// naming the file, both lines and the key, if a key repeats (rows are lines 2, 3, ...): a run
/// must be in a results file once, and a file concatenated by hand must not pass for a sweep's.
[[nodiscard]] inline std::unordered_set<std::string> unique_keys(const CsvTable& table, std::size_t key_columns,
                                                                 const std::filesystem::path& path,
                                                                 std::string_view who) {
  std::unordered_set<std::string> keys;
  keys.reserve(table.rows.size());
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    std::string key = join_fields(table.rows[r], key_columns);
    if (keys.insert(key).second) continue;
    std::size_t first = 0;
    while (join_fields(table.rows[first], key_columns) != key) ++first;
    invalid(who, path.string(), ": line ", r + 2, " repeats the key ",
            key_text(table.header, table.rows[r], key_columns), " of line ", first + 2);
  }
  return keys;
}

}  // namespace detail

/// One line of a CSV file: the fields separated by commas, then '\n', as ResultsCsv writes a row
/// (for files written whole, such as a summary). Throws std::invalid_argument for no fields or a
/// field holding a comma or a line break, which the line could not represent.
[[nodiscard]] inline std::string csv_line(const std::vector<std::string>& fields) {
  if (fields.empty()) detail::invalid("csv_line: fields must hold at least one field, got none");
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (!detail::valid_field(fields[i]))
      detail::invalid("csv_line: fields[", i, "] must not contain ',' or a line break, got \"", fields[i], "\"");
  return detail::join_fields(fields, fields.size()) + '\n';
}

namespace detail {

[[nodiscard]] inline CsvTable parse_csv(std::string_view content, const std::filesystem::path& path,
                                        std::size_t key_columns, const char* who) {
  const std::size_t last_newline = content.rfind('\n');
  if (last_newline == std::string_view::npos) invalid(who, ": ", path.string(), " has no complete header line");
  CsvTable table = parse_table(content.substr(0, last_newline + 1), path);
  if (key_columns > table.header.size())
    invalid(who, ": key_columns must be at most the ", table.header.size(), " columns of ", path.string(), ", got ",
            key_columns);
  if (key_columns > 0) (void)unique_keys(table, key_columns, path, std::string(who) + ": ");
  table.path = path;
  return table;
}

}  // namespace detail

/// The table of a results file's content, as read_csv reads it (`name` stands for the file in
/// messages and in the table's `path`): the header and every complete row, a torn last line
/// ignored; with key_columns > 0 a key that repeats is refused. Throws std::invalid_argument.
[[nodiscard]] inline CsvTable parse_csv(std::string_view content, std::string_view name = "<string>",
                                        std::size_t key_columns = 0) {
  return detail::parse_csv(content, std::filesystem::path(name), key_columns, "parse_csv");
}

/// Reads a results file: its header and every complete row. A torn last line (one without its
/// '\n', left by a crash) is ignored; the file is not modified. With key_columns > 0, the first
/// key_columns columns identify a run, and a key that repeats is refused (std::invalid_argument
/// naming the file, both lines and the key).
[[nodiscard]] inline CsvTable read_csv(const std::filesystem::path& path, std::size_t key_columns = 0) {
  const detail::FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) detail::system_failure("read_csv: cannot open " + path.string());
  return detail::parse_csv(detail::read_whole(file.get(), path), path, key_columns, "read_csv");
}

/// A sweep's runs grouped by setting, in seed order. A results file holds one row per run, in the
/// order the runs finished; a summary reads the seeds of each setting in seed order, so that its
/// numbers do not depend on the thread count, on a resume or on a merge. The setting of a row is
/// its first `key_columns` fields without the seed's (column `seed_column`, an integer); rows of
/// seeds at or above `seeds` are left out (a folder may hold more seeds than a summary asks for).
class RunsBySetting {
 public:
  /// Throws std::invalid_argument for seeds = 0, seed_column >= key_columns, key_columns beyond
  /// the header, a row shorter than the header, a seed that is not a non-negative integer, or a
  /// seed that repeats within a setting (naming the file and both lines).
  RunsBySetting(CsvTable table, std::size_t key_columns, std::size_t seed_column, std::size_t seeds)
      : table_(std::move(table)), seeds_(seeds) {
    if (seed_column >= key_columns || key_columns > table_.header.size())
      detail::invalid("RunsBySetting: seed_column (", seed_column, ") must be below key_columns (", key_columns,
                      "), which must be at most the columns of ", table_.path.string(), " (", table_.header.size(),
                      ")");
    if (seeds == 0) detail::invalid("RunsBySetting: seeds must be positive, got 0");
    for (std::size_t c = 0; c < key_columns; ++c)
      if (c != seed_column) setting_header_.push_back(table_.header[c]);
    for (std::size_t r = 0; r < table_.rows.size(); ++r) {
      if (table_.rows[r].size() != table_.header.size())  // a hand-made table; read_csv checks this
        detail::invalid("RunsBySetting: ", table_.path.string(), ": row ", r, " has ", table_.rows[r].size(),
                        " fields, the header has ", table_.header.size());
      const auto seed = table_.number<std::size_t>(r, seed_column);
      if (seed >= seeds) continue;
      const std::vector<std::string>& row = table_.rows[r];
      std::vector<std::string> setting(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(key_columns));
      setting.erase(setting.begin() + static_cast<std::ptrdiff_t>(seed_column));
      settings_[std::move(setting)].emplace_back(seed, r);
    }
    for (auto& [setting, runs] : settings_) {
      std::sort(runs.begin(), runs.end());
      for (std::size_t i = 1; i < runs.size(); ++i)
        if (runs[i].first == runs[i - 1].first)
          detail::invalid("RunsBySetting: ", table_.path.string(), " has seed ", runs[i].first,
                          " of one setting twice, on lines ", runs[i - 1].second + 2, " and ", runs[i].second + 2);
    }
  }

  /// The rows (indices into table().rows) of seeds 0 ... seeds-1 of `setting` (the key fields
  /// without the seed, as csv_row writes them), in seed order. Throws std::invalid_argument naming
  /// the file, the setting and the seeds it lacks.
  [[nodiscard]] std::vector<std::size_t> rows(const std::vector<std::string>& setting) const {
    return rows_of("RunsBySetting::rows", setting);
  }

  /// Column `column` of those rows, read as numbers (CsvTable::number), in seed order.
  [[nodiscard]] std::vector<double> values(const std::vector<std::string>& setting, std::size_t column) const {
    std::vector<double> out;
    for (const std::size_t r : rows_of("RunsBySetting::values", setting))
      out.push_back(table_.number<double>(r, column));
    return out;
  }

  /// The numbers of column `column` of those rows whose field is not empty (a learning curve's
  /// point without episodes is an empty field), in seed order.
  [[nodiscard]] std::vector<double> present_values(const std::vector<std::string>& setting, std::size_t column) const {
    std::vector<double> out;
    for (const std::size_t r : rows_of("RunsBySetting::present_values", setting))
      if (column >= table_.rows[r].size() || !table_.rows[r][column].empty())
        out.push_back(table_.number<double>(r, column));
    return out;
  }

  [[nodiscard]] const CsvTable& table() const noexcept { return table_; }
  [[nodiscard]] std::size_t seeds() const noexcept { return seeds_; }

 private:
  [[nodiscard]] std::vector<std::size_t> rows_of(const char* who, const std::vector<std::string>& setting) const {
    if (setting.size() != setting_header_.size()) {
      std::string names;
      for (const std::string& name : setting_header_) names += (names.empty() ? "" : ", ") + name;
      detail::invalid(who, ": setting has ", setting.size(), " fields, expected ", setting_header_.size(), " (", names,
                      ": the key without the seed)");
    }
    const auto it = settings_.find(setting);
    const std::size_t found = it == settings_.end() ? 0 : it->second.size();
    if (found != seeds_) {  // the seeds found are distinct and below seeds_: some are missing
      std::string what, lacking;
      for (std::size_t c = 0; c < setting.size(); ++c)
        what += (c > 0 ? " " : "") + setting_header_[c] + "=" + setting[c];
      std::size_t listed = 0, next = 0;
      for (std::size_t s = 0; s < seeds_ && listed <= 10; ++s) {
        if (next < found && it->second[next].first == s) {
          ++next;
          continue;
        }
        lacking += listed == 10 ? ", ..." : (listed > 0 ? ", " : "") + std::to_string(s);
        ++listed;
      }
      detail::invalid(who, ": ", table_.path.string(), " lacks ", seeds_ - found, " of the ", seeds_, " seeds of ",
                      what, " (seeds ", lacking, ")");
    }
    std::vector<std::size_t> out;
    out.reserve(found);
    for (const auto& run : it->second) out.push_back(run.second);
    return out;
  }

  CsvTable table_;
  std::size_t seeds_;
  std::vector<std::string> setting_header_;
  std::map<std::vector<std::string>, std::vector<std::pair<std::size_t, std::size_t>>> settings_;  // (seed, row)
};

namespace detail {
/// Refuses, with messages starting "who: ", a results file's header without columns, with an empty,
/// repeated or unwritable column name, or key_columns outside [1, columns].
inline void check_results_header(std::string_view who, const std::vector<std::string>& header,
                                 std::size_t key_columns) {
  if (header.empty()) invalid(who, ": header must have at least one column, got none");
  std::unordered_set<std::string> names;
  for (const auto& name : header) {
    if (name.empty() || !valid_field(name))
      invalid(who, ": column names must be non-empty without ',' or line breaks, got \"", name, "\"");
    if (!names.insert(name).second) invalid(who, ": column names must be unique, got \"", name, "\" twice");
  }
  if (key_columns < 1 || key_columns > header.size())
    invalid(who, ": key_columns must be in [1, ", header.size(), "], got ", key_columns);
}
}  // namespace detail

/// The output of a sweep: a CSV file with a fixed header whose first `key_columns` columns
/// identify a run (for example setting and seed). Each append writes one complete line with a
/// single write(2) in O_APPEND mode, so finished runs survive a crash of the program; reopening
/// drops a torn last line (the only damage a crash can leave) and remembers the keys present, so
/// that a re-run computes only what is missing. A file in which a key repeats (never written by a
/// ResultsCsv: say, results files concatenated by hand) is refused, naming both lines and the key.
///
/// append and contains may be called from several threads. The file is locked (flock) while the
/// object lives: a second ResultsCsv on the same file, in this or another process, throws.
class ResultsCsv {
 public:
  /// Whether each row is flushed to the disk before append returns (fdatasync). Without it, a
  /// row survives a crash of the program but not necessarily one of the machine.
  enum class Sync { none, each_row };

  ResultsCsv(std::filesystem::path path, std::vector<std::string> header, std::size_t key_columns,
             Sync sync = Sync::none)
      : path_(std::move(path)),
        header_(std::move(header)),
        key_columns_(key_columns),
        sync_(sync),
        file_(open_checked(header_, key_columns, path_)) {
    if (::flock(file_.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK)
        throw std::runtime_error("ResultsCsv: " + path_.string() +
                                 " is already open for writing (by this or another process)");
      detail::system_failure("ResultsCsv: cannot lock " + path_.string());
    }
    load();
  }

  ResultsCsv(const ResultsCsv&) = delete;
  ResultsCsv& operator=(const ResultsCsv&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] const std::vector<std::string>& header() const noexcept { return header_; }
  [[nodiscard]] std::size_t key_columns() const noexcept { return key_columns_; }

  /// The number of rows in the file (found on opening plus appended since).
  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return rows_;
  }

  /// Whether opening found a torn last line and removed it.
  [[nodiscard]] bool dropped_partial_line() const noexcept { return dropped_partial_line_; }

  /// Whether a row with this key (the first key_columns() fields) is in the file.
  [[nodiscard]] bool contains(const std::vector<std::string>& key) const {
    if (key.size() != key_columns_)
      detail::invalid("ResultsCsv::contains: key must have ", key_columns_, " fields (",
                      detail::join_fields(header_, key_columns_), "), got ", key.size());
    const std::string joined = detail::join_fields(key, key.size());
    std::lock_guard lock(mutex_);
    return keys_.contains(joined);
  }

  /// Appends one complete row (header().size() fields, none containing ',' or a line break) whose
  /// key is not yet in the file.
  void append(const std::vector<std::string>& row) {
    if (row.size() != header_.size())
      detail::invalid("ResultsCsv::append: row must have ", header_.size(), " fields (",
                      detail::join_fields(header_, header_.size()), "), got ", row.size());
    for (std::size_t c = 0; c < row.size(); ++c)
      if (!detail::valid_field(row[c]))
        detail::invalid("ResultsCsv::append: field ", header_[c], " must not contain ',' or a line break, got \"",
                        row[c], "\"");
    std::string key = detail::join_fields(row, key_columns_);
    const std::string line = detail::join_fields(row, row.size()) + '\n';
    std::lock_guard lock(mutex_);
    if (keys_.contains(key)) detail::invalid("ResultsCsv::append: key ", key, " is already in ", path_.string());
    write_line(line);
    keys_.insert(std::move(key));
    ++rows_;
  }

 private:
  static int open_checked(const std::vector<std::string>& header, std::size_t key_columns,
                          const std::filesystem::path& path) {
    detail::check_results_header("ResultsCsv", header, key_columns);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) detail::system_failure("ResultsCsv: cannot open " + path.string());
    return fd;
  }

  // Checks the header and rows before changing anything, so that a wrong path is never modified.
  void load() {
    const std::string content = detail::read_whole(file_.get(), path_);
    const std::string header_line = detail::join_fields(header_, header_.size()) + '\n';
    const std::size_t last_newline = content.rfind('\n');
    const std::size_t complete = last_newline == std::string::npos ? 0 : last_newline + 1;
    if (complete == 0) {
      // Empty, or a header torn while being written: anything else is some other file.
      if (!header_line.starts_with(content))
        detail::invalid("ResultsCsv: ", path_.string(), " is not a results file with header \"",
                        header_line.substr(0, header_line.size() - 1), "\", found \"", content, "\"");
    } else {
      const std::size_t first_newline = content.find('\n');
      if (content.compare(0, first_newline + 1, header_line) != 0)
        detail::invalid("ResultsCsv: ", path_.string(), " has header \"", content.substr(0, first_newline),
                        "\", expected \"", header_line.substr(0, header_line.size() - 1), "\"");
      const CsvTable table = detail::parse_table(std::string_view(content).substr(0, complete), path_);
      keys_ = detail::unique_keys(table, key_columns_, path_, "ResultsCsv: ");
      rows_ = table.rows.size();
    }
    if (complete < content.size()) {
      if (::ftruncate(file_.get(), static_cast<off_t>(complete)) != 0)
        detail::system_failure("ResultsCsv: cannot truncate the torn last line of " + path_.string());
      dropped_partial_line_ = true;
    }
    size_ = complete;
    if (complete == 0) write_line(header_line);
  }

  // One write(2) for the whole line; should it fail part-way (disk full), the file is cut back
  // so that the next line does not start in the middle of this one.
  void write_line(const std::string& line) {
    for (std::size_t written = 0; written < line.size();) {
      const ssize_t n = ::write(file_.get(), line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : EIO;
        [[maybe_unused]] const int ignored = ::ftruncate(file_.get(), static_cast<off_t>(size_));
        errno = error;
        detail::system_failure("ResultsCsv: cannot write to " + path_.string());
      }
      written += static_cast<std::size_t>(n);
    }
    if (sync_ == Sync::each_row && ::fdatasync(file_.get()) != 0)
      detail::system_failure("ResultsCsv: cannot sync " + path_.string());
    size_ += line.size();
  }

  std::filesystem::path path_;
  std::vector<std::string> header_;
  std::size_t key_columns_;
  Sync sync_;
  detail::FileDescriptor file_;
  mutable std::mutex mutex_;  // guards keys_, rows_, size_ and the writes
  std::unordered_set<std::string> keys_;
  std::size_t rows_ = 0;
  std::size_t size_ = 0;  // bytes of complete lines in the file
  bool dropped_partial_line_ = false;
};

}  // namespace memtrace
