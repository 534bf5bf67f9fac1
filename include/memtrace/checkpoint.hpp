#pragma once
// Checkpoints: the state of a run as named tensors (safetensors.hpp) with the metadata that says
// whether it may be resumed here: its format, the memtrace version and the instruction set that
// wrote it (float sums round differently under each, so a run is resumed only by the build that
// ran it), and a checksum, so that an altered or half-written file is refused, never half-loaded.
// Written atomically. Opt-in. See docs/control.md ("Checkpoints").

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "memtrace/instruction_set.hpp"
#include "memtrace/random.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/version.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {
// FNV-1a, 64 bits, as 16 hexadecimal digits: a checksum against corruption, not an adversary.
[[nodiscard]] inline std::string fnv1a_hex(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = "0123456789abcdef"[h & 15];
  return out;
}
}  // namespace detail

/// Appends x's state to `file`, as tensors whose names start with `prefix` (e.g. "rollout.env.3."),
/// for the types of memtrace that have one (detail::CheckpointState<T>: every environment and
/// memory, with the opt-in headers env/checkpoint.hpp and memory/checkpoint.hpp; Rollout with
/// loop/rollout_checkpoint.hpp; the generators here). A type of your own takes part by functions
/// save_state(TensorFile&, const std::string&, const T&) and load_state(const TensorFile&, const
/// std::string&, T&) in its namespace.
template <class T>
requires requires(TensorFile& f, const std::string& p, const T& x) { detail::CheckpointState<T>::save(f, p, x); }
void save_state(TensorFile& file, const std::string& prefix, const T& x) {
  detail::CheckpointState<T>::save(file, prefix, x);
}

/// Restores into x (built with the same parameters as the one saved) the state save_state wrote
/// under `prefix`: afterwards x behaves exactly as the saved object would have. Every check (the
/// tensors are there with their dtypes and shapes; the parameters the state belongs to equal x's)
/// runs before anything changes: a refusal, std::invalid_argument starting "load_state: " and
/// naming the prefix, leaves x as it was.
template <class T>
requires requires(const TensorFile& f, const std::string& p, T& x) { detail::CheckpointState<T>::load(f, p, x); }
void load_state(const TensorFile& file, const std::string& prefix, T& x) {
  detail::CheckpointState<T>::load(file, prefix, x);
}

/// A type whose state a checkpoint can hold: save_state and load_state (above, or your own found by
/// argument-dependent lookup).
template <class T>
concept Checkpointable = requires(TensorFile& f, const TensorFile& cf, const std::string& p, T& x, const T& cx) {
  save_state(f, p, cx);
  load_state(cf, p, x);
};

namespace detail {
/// A generator's state: U64 [4] (all zero is refused).
template <>
struct CheckpointState<Xoshiro256StarStar> {
  static void save(TensorFile& file, const std::string& prefix, const Xoshiro256StarStar& gen) {
    const auto& s = gen.state();
    file.tensors.push_back({prefix + "generator", TensorDtype::u64, {4}, {}, {s.begin(), s.end()}});
  }
  static void load(const TensorFile& file, const std::string& prefix, Xoshiro256StarStar& gen) {
    const Tensor& t = expected_tensor("load_state", file, prefix + "generator", TensorDtype::u64, {4});
    Xoshiro256StarStar::state_type s{};
    std::copy(t.integers.begin(), t.integers.end(), s.begin());
    if (s == Xoshiro256StarStar::state_type{})
      invalid("load_state: ", prefix, "generator: the state is all zero, which xoshiro256** cannot have");
    gen = Xoshiro256StarStar::from_state(s);
  }
};
}  // namespace detail

/// The bytes of a checkpoint: `file` with metadata format = `format`, memtrace_version,
/// isa (instruction_set()) and checksum, the FNV-1a hash of the file's bytes without the checksum
/// entry (safetensors_bytes). Throws std::invalid_argument for a metadata key of its own in `file`,
/// or what safetensors_bytes refuses.
[[nodiscard]] inline std::string checkpoint_bytes(TensorFile file, std::string_view format) {
  for (const char* key : {"format", "memtrace_version", "isa", "checksum"})
    if (file.metadata.contains(key))
      detail::invalid("checkpoint_bytes: the metadata key \"", key, "\" is the checkpoint's own");
  file.metadata["format"] = std::string(format);
  file.metadata["memtrace_version"] = std::string(version_string);
  file.metadata["isa"] = instruction_set();
  file.metadata["checksum"] = detail::fnv1a_hex(safetensors_bytes(file));
  return safetensors_bytes(file);
}

/// Reads checkpoint bytes (`name` says where they came from, in messages): parse_safetensors, then
/// the checksum over what was read, the format, the memtrace version and the instruction set, each
/// against this build's. Throws std::invalid_argument starting "read_checkpoint: NAME: " for bytes
/// that are not a safetensors file (a truncated one), a checksum that does not match (an altered
/// one), or a checkpoint of another format, version or instruction set, naming both. The four
/// entries are removed from the metadata returned.
[[nodiscard]] inline TensorFile parse_checkpoint(std::string_view bytes, std::string_view format,
                                                 std::string_view name = "<bytes>") {
  const auto fail = [&](const auto&... why) { detail::invalid("read_checkpoint: ", name, ": ", why...); };
  TensorFile file;
  try {
    file = parse_safetensors(bytes, name);
  } catch (const std::invalid_argument& e) {
    fail("not a readable checkpoint (", e.what(), ")");
  }
  const auto entry = [&](const char* key) {
    const auto it = file.metadata.find(key);
    if (it == file.metadata.end()) fail("the metadata has no \"", key, "\": not a memtrace checkpoint");
    std::string value = it->second;
    file.metadata.erase(it);
    return value;
  };
  const std::string checksum = entry("checksum");
  if (detail::fnv1a_hex(safetensors_bytes(file)) != checksum)
    fail("the checksum does not match the contents (the file was altered or damaged)");
  const std::string written_format = entry("format"), written_version = entry("memtrace_version"), isa = entry("isa");
  if (written_format != format) fail("a checkpoint of format \"", written_format, "\", expected \"", format, "\"");
  if (written_version != version_string)
    fail("written by memtrace ", written_version, ", this is memtrace ", version_string,
         ": a run resumes only with the version that ran it");
  if (isa != instruction_set())
    fail("written by a build for ", isa, ", this one is for ", instruction_set(),
         ": float sums round differently, so a run resumes only with the build that ran it");
  return file;
}

/// Writes checkpoint_bytes(file, format) to `path` atomically (a temporary file and a rename: a
/// run killed while writing leaves the previous checkpoint as it was).
inline void write_checkpoint(const std::filesystem::path& path, const TensorFile& file, std::string_view format) {
  detail::write_text_atomically(path, checkpoint_bytes(file, format));
}

/// parse_checkpoint of the file at `path`, with the path in its messages.
[[nodiscard]] inline TensorFile read_checkpoint(const std::filesystem::path& path, std::string_view format) {
  return parse_checkpoint(detail::read_text(path), format, path.string());
}

}  // namespace memtrace
