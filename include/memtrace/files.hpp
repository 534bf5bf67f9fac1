#pragma once
// Whole files, read and written safely: a reader never sees half a file, a failed write leaves the
// old file as it was, and concurrent writers (threads or processes) never share a temporary file.
// Used by the results folders (experiment/) and by the .pomdp writer (env/pomdp_file.hpp).

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

/// Writes `text` to a fresh temporary file (see unique_temporary), flushed to the disk (fsync) and
/// closed with every error checked, and returns its name; on an error it removes the file and
/// throws std::system_error naming it.
[[nodiscard]] inline std::filesystem::path write_temporary(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path tmp = unique_temporary(path);
  const auto fail = [&tmp](int error, bool remove) {
    if (remove) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
    }
    throw std::system_error(error, std::generic_category(), "cannot write " + tmp.string());
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // the umask applies
  if (fd < 0) fail(errno, false);
  for (std::size_t done = 0; done < text.size();) {
    const ::ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      (void)::close(fd);
      fail(error, true);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {  // the bytes are on the disk before the rename makes them the file
    const int error = errno;
    (void)::close(fd);
    fail(error, true);
  }
  if (::close(fd) != 0) fail(errno, true);
  return tmp;
}

/// Flushes a folder's entries (a rename into it) to the disk; file systems that cannot (EINVAL)
/// are left as they are.
inline void sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // nothing to flush that we could reach
  const int result = ::fsync(fd);
  const int error = errno;
  (void)::close(fd);
  if (result != 0 && error != EINVAL && error != EROFS)
    throw std::system_error(error, std::generic_category(), "cannot flush the folder " + folder.string());
}

/// Removes the temporary files of `path` (path.tmp.<pid>.<n>) that a process which no longer runs
/// left behind (killed between writing and renaming). Processes are those of this machine: on a file
/// system shared between machines, another host's temporary files are not recognised as stale.
inline void remove_stale_temporaries(const std::filesystem::path& path) {
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = path.filename().string() + ".tmp.";
  std::error_code error;
  std::vector<std::filesystem::path> stale;
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    long long pid = 0;
    const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parsed != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.' || pid <= 0)
      continue;
    if (pid == static_cast<long long>(::getpid())) continue;                    // another thread's write in progress
    if (::kill(static_cast<::pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // it runs (or may)
    stale.push_back(it->path());
  }
  for (const std::filesystem::path& file : stale) std::filesystem::remove(file, error);
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
/// (replaces an existing file). The temporary file is flushed to the disk before the rename and the
/// folder after it, so that a crash of the machine leaves the old file or the new one; temporary
/// files of `path` that killed processes left are removed first (remove_stale_temporaries). Throws std::system_error or
/// std::filesystem::filesystem_error naming the file if it cannot be written. What the results folders, checkpoints and
/// .pomdp files use.
inline void write_text_atomically(const std::filesystem::path& path, std::string_view text) {
  detail::remove_stale_temporaries(path);
  const std::filesystem::path tmp = detail::write_temporary(path, text);
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::filesystem::filesystem_error("cannot write " + path.string(), tmp, path, error);
  }
  detail::sync_folder(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

}  // namespace memtrace
