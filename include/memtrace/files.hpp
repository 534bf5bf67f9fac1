#pragma once
// Whole files, read and written safely: a reader never sees half a file, a failed write leaves the
// old file as it was, and concurrent writers (threads or processes) never share a temporary file.
// Used by the results folders (experiment/) and by the .pomdp writer (env/pomdp_file.hpp).

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
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

/// A temporary file name next to `path`: path.tmp.<pid>.<counter>.
[[nodiscard]] inline std::filesystem::path unique_temporary(const std::filesystem::path& path) {
  static std::atomic<unsigned long long> counter{0};
  return path.string() + ".tmp." + std::to_string(static_cast<long long>(::getpid())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

/// A temporary file written in full and flushed to the disk, still open and locked (flock) until
/// it is destroyed: while a writer lives, no cleanup takes its file for a killed writer's.
class Temporary {
 public:
  /// Writes `text` to a fresh temporary file next to `path` (unique_temporary; a name that exists,
  /// a killed process's of the same pid, is skipped), fsync, every error checked; on an error it
  /// removes the file and throws std::system_error naming it.
  Temporary(const std::filesystem::path& path, std::string_view text) {
    for (int attempt = 0; fd_ < 0; ++attempt) {
      path_ = unique_temporary(path);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // the umask applies
      if (fd_ < 0 && (errno != EEXIST || attempt == 1000)) fail(errno, false);
    }
    if (::flock(fd_, LOCK_EX) != 0) fail(errno, true);
    for (std::size_t done = 0; done < text.size();) {
      const ::ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(n < 0 ? errno : EIO, true);
      done += static_cast<std::size_t>(n);
    }
    while (::fsync(fd_) != 0)  // the bytes are on the disk before a rename makes them the file
      if (errno != EINTR) fail(errno, true);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  /// Closes the file (its lock goes with it) and removes it unless it was kept (renamed or linked).
  ~Temporary() {
    if (fd_ >= 0) (void)::close(fd_);
    if (!kept_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Its name now belongs to `path` (a rename): nothing to remove.
  void keep() noexcept { kept_ = true; }
  /// Closes it, checked (EINTR: Linux has closed it all the same).
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "cannot write " + path_.string());
  }

 private:
  [[noreturn]] void fail(int error, bool remove) {
    if (fd_ >= 0) (void)::close(fd_);
    fd_ = -1;
    if (remove) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
    kept_ = true;  // nothing left for the destructor
    throw std::system_error(error, std::generic_category(), "cannot write " + path_.string());
  }

  std::filesystem::path path_;
  int fd_ = -1;
  bool kept_ = false;
};

/// Flushes a folder's entries (a rename into it) to the disk. File systems that cannot (EINVAL,
/// ENOTSUP, ...) are left as they are; another error throws std::system_error saying that `file`
/// was written but its folder not flushed.
inline void sync_folder(const std::filesystem::path& folder, const std::filesystem::path& file) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // nothing we could reach to flush
  const int result = ::fsync(fd);
  const int error = errno;
  (void)::close(fd);
  if (result != 0 && error != EINVAL && error != EROFS && error != ENOTSUP && error != EOPNOTSUPP && error != ENOSYS &&
      error != EINTR)
    throw std::system_error(error, std::generic_category(),
                            "wrote " + file.string() + ", but could not flush its folder to the disk");
}

/// Removes the temporary files of `path` (path.tmp.<pid>.<n>) that a killed writer left: those of
/// a process of this machine that no longer runs and that no writer holds locked (Temporary). On a
/// file system shared between machines that is not enough: memtrace does not support writing one
/// folder from two machines at once.
inline void remove_stale_temporaries(const std::filesystem::path& path) {
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = path.filename().string() + ".tmp.";
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    long long pid = 0;
    const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parsed != std::errc() || end == rest.data() + rest.size() || *end != '.' || pid <= 0 ||
        pid > static_cast<long long>(std::numeric_limits<::pid_t>::max()))
      continue;
    if (pid == static_cast<long long>(::getpid())) continue;                    // this process's
    if (::kill(static_cast<::pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // it runs (or may)
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const bool unlocked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;  // no writer holds it
    if (unlocked) std::filesystem::remove(it->path(), error);
    (void)::close(fd);
    error.clear();
  }
}

/// Creates `path` holding `text` unless it exists, atomically: the text goes to a temporary file
/// of its own, which is then hard-linked to `path` (link() never replaces a file: of processes that
/// race, exactly one creates it, and readers never see half of it). Returns false if `path`
/// existed (then nothing is written).
[[nodiscard]] inline bool create_text_exclusively(const std::filesystem::path& path, std::string_view text) {
  remove_stale_temporaries(path);
  Temporary tmp(path, text);
  const int result = ::link(tmp.path().c_str(), path.c_str());
  const int error = errno;
  if (result == 0) {
    sync_folder(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."), path);
    return true;
  }
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
  detail::Temporary tmp(path, text);
  std::error_code error;
  std::filesystem::rename(tmp.path(), path, error);  // the lock is held until the name is path's
  if (error) throw std::filesystem::filesystem_error("cannot write " + path.string(), tmp.path(), path, error);
  tmp.keep();
  tmp.close();
  detail::sync_folder(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."), path);
}

}  // namespace memtrace
