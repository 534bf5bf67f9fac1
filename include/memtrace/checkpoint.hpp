#pragma once
// Checkpoints: the state of a run as named tensors (safetensors.hpp) with the metadata that says
// whether it may be resumed here: its format, the memtrace version and the instruction set that
// wrote it (float sums round differently under each, so a run is resumed only by the build that
// ran it), and a checksum, so that an altered or half-written file is refused, never half-loaded.
// Written atomically. Opt-in. See docs/control.md ("Checkpoints").

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memtrace/instruction_set.hpp"
#include "memtrace/random.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/version.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

// The pieces of every state of the opt-in checkpoint headers (env/checkpoint.hpp,
// memory/checkpoint.hpp, analysis/belief_checkpoint.hpp, loop/checkpoint.hpp and the generator's
// below): writing a tensor, reading one back checked, and the refusals, each "load_state: NAME: ...".

/// FNV-1a, 64 bits, fed byte by byte: the checksum of checkpoints (fnv1a_hex) and the fingerprint
/// of a model in a state (a state of another model is refused). Against corruption and mix-ups,
/// not an adversary.
class Fnv1a {
 public:
  constexpr void byte(unsigned char b) noexcept {
    hash_ ^= b;
    hash_ *= 0x100000001b3ULL;
  }
  constexpr void bytes(std::string_view s) noexcept {
    for (const char c : s) byte(static_cast<unsigned char>(c));
  }
  /// A 64-bit word, as its 8 bytes, least significant first.
  constexpr void word(std::uint64_t w) noexcept {
    for (int i = 0; i < 8; ++i, w >>= 8) byte(static_cast<unsigned char>(w & 0xff));
  }
  /// A double, as the word of its bits.
  constexpr void real(double x) noexcept { word(std::bit_cast<std::uint64_t>(x)); }
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

/// Feeds the matrix `m` to a model's fingerprint `h`, so that a model of the same sizes but other
/// matrices refuses a state. A dense matrix or vector (Eigen): rows, columns, then every value's bits,
/// row by row. A sparse one (detected by its InnerIterator): rows, columns, the non-zero count, then
/// every (row, column, value) in storage order.
template <class M>
void add_matrix(Fnv1a& h, const M& m) {
  h.word(static_cast<std::uint64_t>(m.rows()));
  h.word(static_cast<std::uint64_t>(m.cols()));
  if constexpr (requires { typename M::InnerIterator; }) {
    h.word(static_cast<std::uint64_t>(m.nonZeros()));
    for (decltype(m.outerSize()) k = 0; k < m.outerSize(); ++k)
      for (typename M::InnerIterator it(m, k); it; ++it) {
        h.word(static_cast<std::uint64_t>(it.row()));
        h.word(static_cast<std::uint64_t>(it.col()));
        h.real(static_cast<double>(it.value()));
      }
  } else {
    for (decltype(m.rows()) r = 0; r < m.rows(); ++r)
      for (decltype(m.cols()) c = 0; c < m.cols(); ++c) h.real(static_cast<double>(m.coeff(r, c)));
  }
}

/// Feeds the flags `v` (e.g. a model's terminal states) to a fingerprint `h`: their count, then each as a word.
inline void add_flags(Fnv1a& h, const std::vector<bool>& v) {
  h.word(v.size());
  for (const bool b : v) h.word(b ? 1 : 0);
}

/// The FNV-1a hash of `bytes` as 16 hexadecimal digits: a checkpoint's checksum.
[[nodiscard]] inline std::string fnv1a_hex(std::string_view bytes) {
  Fnv1a hash;
  hash.bytes(bytes);
  std::uint64_t h = hash.value();
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = "0123456789abcdef"[h & 15];
  return out;
}

/// Refuses an entry of `values` (of the U64 tensor `name`) not below `bound`; `what` says what
/// the entries are.
inline void check_below(const std::string& name, std::span<const std::uint64_t> values, std::uint64_t bound,
                        const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] >= bound)
      invalid("load_state: ", name, ": entry ", i, " is ", values[i], ", out of range [0, ", bound, ") (", what, ")");
}

/// Refuses the value of the U64 scalar `name` if it is not below `bound`; `what` says what it is.
inline void check_below(const std::string& name, std::uint64_t value, std::uint64_t bound, const char* what) {
  if (value >= bound) invalid("load_state: ", name, ": ", value, " is out of range [0, ", bound, ") (", what, ")");
}

/// What a flag may be, in the refusals of state_flag and check_flags.
inline constexpr const char* flag_text = "a flag: 0 or 1";

/// Refuses an entry of `values` (of the U64 tensor `name`, flags) other than 0 or 1.
inline void check_flags(const std::string& name, std::span<const std::uint64_t> values) {
  check_below(name, values, 2, flag_text);
}

/// "a = 1, b = 2": `values` named by `names`, for check_parameters.
template <class T>
[[nodiscard]] std::string named_values(const std::vector<const char*>& names, const std::vector<T>& values) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
    out += message(i == 0 ? "" : ", ", names[i], " = ", values[i]);
  return out;
}

}  // namespace detail

// The pieces of every state, public so that a type of your own is checkpointed as memtrace's are
// (docs/control.md, "Checkpoints of your own types"): a tensor written, a tensor read back checked
// (refusals "load_state: NAME: ..."), and a state of other parameters refused.

/// The dtype of reals of the scalar `Scalar` (float F32, double F64), so that they are restored bit for bit.
template <class Scalar>
requires std::same_as<Scalar, float> || std::same_as<Scalar, double>
inline constexpr TensorDtype state_dtype = std::same_as<Scalar, float> ? TensorDtype::f32 : TensorDtype::f64;

/// Appends the U64 tensor `name` of `shape` holding `values`.
inline void put_integers(TensorFile& file, std::string name, std::vector<std::size_t> shape,
                         std::vector<std::uint64_t> values) {
  file.tensors.push_back({std::move(name), TensorDtype::u64, std::move(shape), {}, std::move(values)});
}

/// Appends the real tensor `name` of `shape` holding `values`, in Scalar's dtype (state_dtype).
template <class Scalar = double>
void put_reals(TensorFile& file, std::string name, std::vector<std::size_t> shape, std::vector<double> values) {
  file.tensors.push_back({std::move(name), state_dtype<Scalar>, std::move(shape), std::move(values)});
}

/// The integers of the U64 tensor `name` of `shape`; refused if it is missing or other.
[[nodiscard]] inline const std::vector<std::uint64_t>& state_integers(const TensorFile& file, const std::string& name,
                                                                      const std::vector<std::size_t>& shape) {
  return detail::expected_tensor("load_state", file, name, TensorDtype::u64, shape).integers;
}

/// The U64 scalar (shape []) `name`.
[[nodiscard]] inline std::uint64_t state_integer(const TensorFile& file, const std::string& name) {
  return state_integers(file, name, {})[0];
}

/// The U64 scalar `name`, refused unless below `bound` (check_below).
[[nodiscard]] inline std::uint64_t state_integer_below(const TensorFile& file, const std::string& name,
                                                       std::uint64_t bound, const char* what) {
  const std::uint64_t value = state_integer(file, name);
  detail::check_below(name, value, bound, what);
  return value;
}

/// The U64 scalar `name` as a flag: 0 or 1, anything else refused.
[[nodiscard]] inline bool state_flag(const TensorFile& file, const std::string& name) {
  return state_integer_below(file, name, 2, detail::flag_text) == 1;
}

/// The values of the real tensor `name` of `shape`, in Scalar's dtype (state_dtype): finite unless
/// `finite` is false (expected_tensor) and, for float, within float's range, so that converting
/// them is exact.
template <class Scalar = double>
[[nodiscard]] const std::vector<double>& state_reals(const TensorFile& file, const std::string& name,
                                                     const std::vector<std::size_t>& shape, bool finite = true) {
  const std::vector<double>& values =
      detail::expected_tensor("load_state", file, name, state_dtype<Scalar>, shape, finite).values;
  if constexpr (std::same_as<Scalar, float>)
    for (std::size_t i = 0; i < values.size(); ++i)
      if (std::isfinite(values[i]) && !(std::abs(values[i]) <= static_cast<double>(std::numeric_limits<float>::max())))
        detail::invalid("load_state: ", name, ": entry ", i, " is ", values[i], ", which a float does not hold");
  return values;
}

/// The numbers of a state's tensors: U64 or F64.
template <class T>
concept StateNumber = std::same_as<T, std::uint64_t> || std::same_as<T, double>;

/// Refuses a state whose parameters, the U64 or F64 tensor `name` [mine.size()], differ from
/// `mine`, the object's own: a state means nothing in an object of other parameters. The message,
/// "the state was saved from TYPE with ...; this one has ...", describes both with `describe` (of a
/// std::vector<T>). Real parameters are compared, never used: they may be infinite.
template <StateNumber T, std::invocable<const std::vector<T>&> Describe>
void check_parameters(const TensorFile& file, const std::string& name, std::string_view type,
                      const std::vector<T>& mine, const Describe& describe) {
  const std::vector<T>* saved = nullptr;
  if constexpr (std::same_as<T, std::uint64_t>)
    saved = &state_integers(file, name, {mine.size()});
  else
    saved = &state_reals(file, name, {mine.size()}, /*finite=*/false);
  if (*saved != mine)
    detail::invalid("load_state: ", name, ": the state was saved from ", type, " with ", describe(*saved),
                    "; this one has ", describe(mine));
}

/// check_parameters with the parameters described by their names: "a = 1, b = 2".
template <StateNumber T>
void check_parameters(const TensorFile& file, const std::string& name, std::string_view type,
                      const std::vector<const char*>& names, const std::vector<T>& mine) {
  check_parameters(file, name, type, mine,
                   [&names](const std::vector<T>& v) { return detail::named_values(names, v); });
}

namespace detail {

/// Refuses a state whose fingerprint, the U64 scalar `name` (Fnv1a of what the object is built
/// from), differs from `mine`: "the state was saved from TYPE of OTHER" (e.g. "another process").
inline void check_fingerprint(const TensorFile& file, const std::string& name, std::string_view type,
                              std::string_view other, std::uint64_t mine) {
  const std::uint64_t saved = state_integer(file, name);
  if (saved != mine)
    invalid("load_state: ", name, ": the state was saved from ", type, " of ", other, " (fingerprint ", saved,
            ", this one's ", mine, ")");
}

}  // namespace detail

/// Appends x's state to `file`, as tensors whose names start with `prefix` (e.g. "rollout.env.3."),
/// for the types of memtrace that have one (detail::CheckpointState<T>: every environment and
/// memory, with the opt-in headers env/checkpoint.hpp and memory/checkpoint.hpp; Rollout with
/// loop/checkpoint.hpp; the generators here). A type of your own takes part by functions
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
    put_integers(file, prefix + "generator", {4}, {s.begin(), s.end()});
  }
  static void load(const TensorFile& file, const std::string& prefix, Xoshiro256StarStar& gen) {
    const std::vector<std::uint64_t>& saved = state_integers(file, prefix + "generator", {4});
    Xoshiro256StarStar::state_type s{};
    std::copy(saved.begin(), saved.end(), s.begin());
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

namespace detail {
// Why a checkpoint's metadata says it is not one of `format` written by this memtrace version for
// this instruction set ("" if it is one): a run resumes only with the build that ran it.
[[nodiscard]] inline std::string origin_mismatch(const std::map<std::string, std::string>& metadata,
                                                 std::string_view format) {
  const auto entry = [&](const char* key) {
    const auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  if (entry("format") != format)
    return message("a checkpoint of format \"", entry("format"), "\", expected \"", format, "\"");
  if (entry("memtrace_version") != version_string)
    return message("written by memtrace ", entry("memtrace_version"), ", this is memtrace ", version_string,
                   ": a run resumes only with the version that ran it");
  if (entry("isa") != instruction_set())
    return message("written by a build for ", entry("isa"), ", this one is for ", instruction_set(),
                   ": float sums round differently, so a run resumes only with the build that ran it");
  return {};
}

// parse_checkpoint's work, its messages starting "who: NAME: ".
[[nodiscard]] inline TensorFile parse_checkpoint_as(const char* who, std::string_view bytes, std::string_view format,
                                                    std::string_view name) {
  const auto fail = [&](const auto&... why) { invalid(who, ": ", name, ": ", why...); };
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
  // What wrote it before whether it is intact: a file of another format or version is named as
  // such, never as damaged, whatever a later format does to its bytes.
  if (const std::string why = origin_mismatch(file.metadata, format); !why.empty()) fail(why);
  const std::string checksum = entry("checksum");
  if (detail::fnv1a_hex(safetensors_bytes(file)) != checksum)
    fail("the checksum does not match the contents (the file was altered or damaged)");
  for (const char* key : {"format", "memtrace_version", "isa"}) (void)entry(key);
  return file;
}
}  // namespace detail

/// Reads checkpoint bytes (`name` says where they came from, in messages): parse_safetensors, then
/// the format, the memtrace version and the instruction set, each against this build's, then the
/// checksum over what was read. Throws std::invalid_argument starting "parse_checkpoint: NAME: " for bytes
/// that are not a safetensors file (a truncated one), a checksum that does not match (an altered
/// one), or a checkpoint of another format, version or instruction set, naming both. The four
/// entries are removed from the metadata returned.
[[nodiscard]] inline TensorFile parse_checkpoint(std::string_view bytes, std::string_view format,
                                                 std::string_view name = "<bytes>") {
  return detail::parse_checkpoint_as("parse_checkpoint", bytes, format, name);
}

/// Writes checkpoint_bytes(file, format) to `path` atomically (a temporary file and a rename: a
/// run killed while writing leaves the previous checkpoint as it was).
inline void write_checkpoint(const std::filesystem::path& path, const TensorFile& file, std::string_view format) {
  write_text_atomically(path, checkpoint_bytes(file, format));
}

/// parse_checkpoint of the file at `path`; its messages start "read_checkpoint: PATH: ".
[[nodiscard]] inline TensorFile read_checkpoint(const std::filesystem::path& path, std::string_view format) {
  return detail::parse_checkpoint_as("read_checkpoint", detail::read_text(path), format, path.string());
}

}  // namespace memtrace
