#pragma once
// Whole files, read and written safely: a reader never sees half a file, a failed write leaves the
// old file as it was, and concurrent writers (threads or processes) never share a temporary file.
// Used by the results folders (experiment/) and by the .pomdp writer (env/pomdp_file.hpp).

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>

namespace memtrace::detail {

[[nodiscard]] inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(errno, std::generic_category(), "cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A temporary file name next to `path` that no other thread or process uses at the same time:
/// path.tmp.<pid>.<counter>.
[[nodiscard]] inline std::filesystem::path unique_temporary(const std::filesystem::path& path) {
  static std::atomic<unsigned long long> counter{0};
  return path.string() + ".tmp." + std::to_string(static_cast<long long>(::getpid())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

/// Writes `text` to a fresh temporary file (see unique_temporary) and returns its name.
[[nodiscard]] inline std::filesystem::path write_temporary(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path tmp = unique_temporary(path);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) {
    const int error = errno;
    out.close();
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::system_error(error, std::generic_category(), "cannot write " + tmp.string());
  }
  return tmp;
}

/// Creates `path` holding `text` unless it exists, atomically: the text goes to a temporary file
/// of its own, which is then hard-linked to `path` (link() never replaces a file: of processes that
/// race, exactly one creates it, and readers never see half of it). Returns false if `path`
/// existed (then nothing is written).
[[nodiscard]] inline bool create_text_exclusively(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path tmp = write_temporary(path, text);
  const int result = ::link(tmp.c_str(), path.c_str());
  const int error = errno;
  std::error_code ignored;
  std::filesystem::remove(tmp, ignored);
  if (result == 0) return true;
  if (error == EEXIST) return false;
  throw std::system_error(error, std::generic_category(), "cannot create " + path.string());
}

}  // namespace memtrace::detail

namespace memtrace {

/// Writes `text` to `path` through a temporary file of its own in the same folder and a rename, so
/// that a reader never sees half of the text and a failed write leaves the old file as it was
/// (replaces an existing file). Throws std::system_error or std::filesystem::filesystem_error naming
/// the file if it cannot be written. What the results folders, checkpoints and .pomdp files use.
inline void write_text_atomically(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path tmp = detail::write_temporary(path, text);
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::filesystem::filesystem_error("cannot write " + path.string(), tmp, path, error);
  }
}

}  // namespace memtrace
