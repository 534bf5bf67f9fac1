#pragma once
// Named tensors in the safetensors format (an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the little-endian data), which the
// `safetensors` package, PyTorch and JAX load, and NumPy with ten lines of Python
// (docs/control.md). Written so that Python can always read it back; read with every rule of the
// format checked, so that a truncated or altered file is refused, never half-loaded. Opt-in: not
// in the core umbrella. See docs/control.md ("Weights Python reads").

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memtrace/files.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The element types memtrace writes and reads: IEEE single and double precision ("F32", "F64"),
/// and unsigned 64-bit integers ("U64": counters and generator states, exact).
enum class TensorDtype { f32, f64, u64 };

/// One named tensor: its element type, its shape (empty for a scalar) and its values in row-major
/// (C) order, as NumPy and PyTorch lay them out: in `values`, held in double (exact for f32), or,
/// for a u64 tensor, in `integers` (and `values` is empty).
struct Tensor {
  std::string name;
  TensorDtype dtype = TensorDtype::f32;
  std::vector<std::size_t> shape;
  std::vector<double> values;
  /// A u64 tensor's values. The default member initialiser keeps {name, dtype, shape, values}
  /// complete for -Wmissing-field-initializers.
  std::vector<std::uint64_t> integers = {};
  friend bool operator==(const Tensor&, const Tensor&) = default;

  /// The number of values it holds (integers.size() for u64, values.size() otherwise).
  [[nodiscard]] std::size_t size() const noexcept {
    return dtype == TensorDtype::u64 ? integers.size() : values.size();
  }
};

/// The contents of a safetensors file: its tensors, in the order of their bytes in the file, and
/// its metadata (the header's "__metadata__", strings to strings).
struct TensorFile {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;
  friend bool operator==(const TensorFile&, const TensorFile&) = default;

  /// The first tensor named `name`, or nullptr if there is none.
  [[nodiscard]] const Tensor* find(std::string_view name) const noexcept {
    for (const Tensor& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  /// The first tensor named `name`. Throws std::invalid_argument naming it if there is none.
  [[nodiscard]] const Tensor& at(std::string_view name) const {
    if (const Tensor* t = find(name)) return *t;
    detail::invalid("TensorFile::at: no tensor named \"", name, "\" (", tensors.size(), " tensors)");
  }
};

namespace detail {
// A shape as the messages write it: [2, 3].
[[nodiscard]] inline std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string out;
  for (const std::size_t n : shape) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return "[" + out + "]";
}
}  // namespace detail

/// A tensor of an Eigen matrix or vector: f32 for float, f64 for double; shape {rows} for a column
/// vector known as one at compile time, {rows, cols} otherwise; the values row by row.
template <class Derived>
[[nodiscard]] Tensor to_tensor(std::string name, const Eigen::MatrixBase<Derived>& m) {
  using Scalar = typename Derived::Scalar;
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>,
                "to_tensor: the matrix's scalar must be float or double");
  Tensor t{std::move(name), std::same_as<Scalar, float> ? TensorDtype::f32 : TensorDtype::f64, {}, {}, {}};
  if constexpr (Derived::ColsAtCompileTime == 1)
    t.shape = {static_cast<std::size_t>(m.rows())};
  else
    t.shape = {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())};
  t.values.reserve(static_cast<std::size_t>(m.size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) t.values.push_back(static_cast<double>(m.coeff(r, c)));
  return t;
}

/// Copies a tensor of shape {rows, cols}, or {rows} into a column, into `out` (whose size must
/// match; its scalar may differ from the tensor's dtype). Throws std::invalid_argument naming the
/// tensor and both shapes otherwise.
template <class Derived>
void copy_tensor(const Tensor& t, Eigen::MatrixBase<Derived>& out) {
  const auto rows = static_cast<std::size_t>(out.rows()), cols = static_cast<std::size_t>(out.cols());
  const bool fits = ((t.shape.size() == 2 && t.shape[0] == rows && t.shape[1] == cols) ||
                     (t.shape.size() == 1 && t.shape[0] == rows && cols == 1)) &&
                    t.values.size() == rows * cols;
  if (t.dtype == TensorDtype::u64)
    detail::invalid("copy_tensor: tensor \"", t.name, "\" holds U64 integers, not real numbers");
  if (!fits)
    detail::invalid("copy_tensor: tensor \"", t.name, "\" has shape ", detail::shape_text(t.shape), " and ",
                    t.values.size(), " values, the destination is ", rows, " x ", cols);
  std::size_t i = 0;
  for (Eigen::Index r = 0; r < out.rows(); ++r)
    for (Eigen::Index c = 0; c < out.cols(); ++c)
      out.coeffRef(r, c) = static_cast<typename Derived::Scalar>(t.values[i++]);
}
template <class Derived>
void copy_tensor(const Tensor& t, Eigen::MatrixBase<Derived>&& out) {
  copy_tensor(t, out);
}

namespace detail {

inline constexpr std::uint64_t safetensors_max_header = 100'000'000;  // the format's own limit

[[nodiscard]] inline std::size_t dtype_size(TensorDtype d) noexcept { return d == TensorDtype::f32 ? 4 : 8; }
// The reference's order of dtypes (its enum: ... F32 < F64 < I64 < U64), by which it lays tensors out.
[[nodiscard]] inline int dtype_rank(TensorDtype d) noexcept {
  return d == TensorDtype::u64 ? 3 : d == TensorDtype::f64 ? 2 : 1;
}
[[nodiscard]] inline const char* dtype_name(TensorDtype d) noexcept {
  return d == TensorDtype::f32 ? "F32" : d == TensorDtype::f64 ? "F64" : "U64";
}

// The length of the UTF-8 sequence starting at s[i], or 0 if it is not a valid one (overlong
// forms, surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
[[nodiscard]] inline std::size_t utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((b & 0xE0) == 0xC0) {
    n = 2;
    cp = b & 0x1Fu;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3;
    cp = b & 0x0Fu;
  } else if ((b & 0xF8) == 0xF0) {
    n = 4;
    cp = b & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

[[nodiscard]] inline bool valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {  // serde_json's and Python's escapes
      out += '\\';
      out += c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f';
    } else if (static_cast<unsigned char>(c) < 0x20) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[static_cast<unsigned char>(c) >> 4];
      out += hex[static_cast<unsigned char>(c) & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

// The little-endian bytes of x, whatever the machine's byte order.
inline void append_le(std::string& out, std::uint64_t x, std::size_t bytes) {
  for (std::size_t k = 0; k < bytes; ++k) out += static_cast<char>((x >> (8 * k)) & 0xFF);
}
[[nodiscard]] inline std::uint64_t read_le(std::string_view s, std::size_t at, std::size_t bytes) noexcept {
  std::uint64_t x = 0;
  for (std::size_t k = bytes; k-- > 0;) x = (x << 8) | static_cast<unsigned char>(s[at + k]);
  return x;
}

// The number of elements of `shape`, or false if it overflows std::size_t.
[[nodiscard]] inline bool element_count(const std::vector<std::size_t>& shape, std::size_t& count) noexcept {
  count = 1;
  for (const std::size_t n : shape) {
    const std::size_t product = checked_mul(count, n);
    if (product == 0 && count != 0 && n != 0) return false;
    count = product;
  }
  return true;
}

// The tensor `name` of `file` (the first of that name, as TensorFile::at finds it), of dtype
// `dtype` and `shape`, with as many values as the shape holds, every real one finite unless
// `finite` is false (a mean of nothing is NaN, a threshold may be infinite); or an exception
// starting "who: " naming what differs (the loaders of weights and checkpoints).
inline const Tensor& expected_tensor(const char* who, const TensorFile& file, const std::string& name,
                                     TensorDtype dtype, const std::vector<std::size_t>& shape, bool finite = true) {
  const Tensor* found = file.find(name);
  if (found == nullptr) invalid(who, ": the file has no tensor \"", name, "\"");
  if (found->dtype != dtype || found->shape != shape)
    invalid(who, ": tensor \"", name, "\" is ", dtype_name(found->dtype), " ", shape_text(found->shape), ", expected ",
            dtype_name(dtype), " ", shape_text(shape));
  std::size_t count = 0;
  if (!element_count(shape, count) || found->size() != count)
    invalid(who, ": tensor \"", name, "\" holds ", found->size(), " values, its shape ", count);
  for (const double v : found->values)
    if (finite && !std::isfinite(v)) invalid(who, ": tensor \"", name, "\" holds ", v, "; it must be finite");
  return *found;
}

// The header of a safetensors file: a JSON object, parsed by the grammar the format uses (strings,
// non-negative integers, arrays of them, objects), every rule checked; the values of fields it
// does not read are checked as JSON and skipped.
class SafetensorsHeader {
 public:
  SafetensorsHeader(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  struct Entry {
    std::string name;
    std::string dtype;
    std::vector<std::size_t> shape;
    std::uint64_t begin = 0, end = 0;
  };

  void parse(std::vector<Entry>& entries, std::map<std::string, std::string>& metadata) {
    if (!valid_utf8(text_)) fail("the header is not valid UTF-8");
    skip_space();  // the reference reader (serde_json) allows white space around the object
    if (pos_ >= text_.size() || text_[pos_] != '{') fail("the header must be a JSON object");
    expect('{');
    std::set<std::string> names;
    bool first = true;
    for (skip_space(); !take('}'); first = false) {
      if (!first) expect(',');
      std::string name = string();
      if (!names.insert(name).second) fail("the key \"" + name + "\" appears twice");
      expect(':');
      if (name == "__metadata__") {
        skip_space();
        if (text_.substr(pos_).starts_with("null"))  // the reference reader's "no metadata"
          pos_ += 4;
        else
          metadata = string_map();
      } else {
        entries.push_back(entry(std::move(name)));
      }
      skip_space();
    }
    skip_space();
    if (pos_ != text_.size()) fail("the header has text after its JSON object");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    detail::invalid("parse_safetensors: ", file_, ": ", why, " (header byte ", pos_, ")");
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  unsigned hex_digit() {
    if (pos_ >= text_.size()) fail("the header ends inside a \\u escape");
    const char c = text_[pos_++];
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    fail("a \\u escape needs four hexadecimal digits");
  }
  std::uint32_t code_unit() {
    std::uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u = (u << 4) | hex_digit();
    return u;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("the header ends inside a string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("a string holds an unescaped control character");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("the header ends inside a string");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::uint32_t cp = code_unit();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a \\u escape is a lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a pair: \uD8xx\uDCxx
            if (pos_ + 2 > text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
              fail("a \\u escape is a high surrogate without its low surrogate");
            pos_ += 2;
            const std::uint32_t low = code_unit();
            if (low < 0xDC00 || low > 0xDFFF) fail("a \\u escape is a high surrogate without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail(std::string("unknown escape \\") + e);
      }
    }
  }
  /// Skips one JSON value (of a field memtrace does not read).
  void skip_value(int depth) {
    if (depth > 64) fail("a value nests more than 64 deep");
    skip_space();
    if (pos_ >= text_.size()) fail("the header ends where a value should be");
    const char c = text_[pos_];
    if (c == '"') {
      (void)string();
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      expect(c);
      for (bool first = true; !take(close); first = false) {
        if (!first) expect(',');
        if (c == '{') {
          (void)string();
          expect(':');
        }
        skip_value(depth + 1);
      }
    } else if (text_.substr(pos_).starts_with("true") || text_.substr(pos_).starts_with("null")) {
      pos_ += 4;
    } else if (text_.substr(pos_).starts_with("false")) {
      pos_ += 5;
    } else {  // a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
      const auto digits = [&] {
        const std::size_t from = pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
        if (pos_ == from) fail("expected a JSON value");
        return pos_ - from;
      };
      if (text_[pos_] == '-') ++pos_;
      const std::size_t first = pos_;
      if (digits() > 1 && text_[first] == '0') fail("a number has a leading zero");
      if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        (void)digits();
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
        (void)digits();
      }
    }
  }
  std::uint64_t integer() {
    skip_space();
    const std::size_t start = pos_;
    std::uint64_t x = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (x > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) fail("an integer does not fit in 64 bits");
      x = x * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail("expected a non-negative integer");
    if (text_[start] == '0' && pos_ - start > 1) fail("an integer has a leading zero");
    return x;
  }
  std::vector<std::uint64_t> integers() {
    expect('[');
    std::vector<std::uint64_t> out;
    for (bool first = true; !take(']'); first = false) {
      if (!first) expect(',');
      out.push_back(integer());
    }
    return out;
  }
  std::map<std::string, std::string> string_map() {
    expect('{');
    std::map<std::string, std::string> out;
    for (bool first = true; !take('}'); first = false) {
      if (!first) expect(',');
      std::string key = string();
      expect(':');
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("__metadata__ must map strings to strings");
      if (!out.emplace(std::move(key), string()).second) fail("a key of __metadata__ appears twice");
    }
    return out;
  }
  Entry entry(std::string name) {
    Entry e{std::move(name), {}, {}, 0, 0};
    expect('{');
    bool dtype = false, shape = false, offsets = false;
    for (bool first = true; !take('}'); first = false) {
      if (!first) expect(',');
      const std::string field = string();
      expect(':');
      if (field == "dtype" && !dtype) {
        dtype = true;
        e.dtype = string();
      } else if (field == "shape" && !shape) {
        shape = true;
        for (const std::uint64_t n : integers()) {
          if (n > std::numeric_limits<std::size_t>::max()) fail("a dimension of \"" + e.name + "\" is too large");
          e.shape.push_back(static_cast<std::size_t>(n));
        }
      } else if (field == "data_offsets" && !offsets) {
        offsets = true;
        const std::vector<std::uint64_t> o = integers();
        if (o.size() != 2) fail("data_offsets of \"" + e.name + "\" must hold two integers");
        e.begin = o[0];
        e.end = o[1];
      } else if (field == "dtype" || field == "shape" || field == "data_offsets") {
        fail("tensor \"" + e.name + "\" has the field \"" + field + "\" twice");
      } else {
        skip_value(0);  // a field of a later format: the reference reader ignores it
      }
    }
    if (!dtype || !shape || !offsets) fail("tensor \"" + e.name + "\" needs dtype, shape and data_offsets");
    return e;
  }

  std::string_view text_;
  std::string_view file_;
  std::size_t pos_ = 0;
};

}  // namespace detail

/// The bytes of a safetensors file holding `file`: the header lists the metadata and then the
/// tensors by dtype size (largest first) and name, as the reference writer orders them, so that
/// every tensor is aligned to its element size; padded with spaces to a multiple of 8 bytes; the
/// data follow in the same order. The bytes do not depend on the order of file.tensors. Throws
/// std::invalid_argument (naming the tensor) for a repeated or reserved name ("__metadata__"), a
/// name or metadata that is not valid UTF-8, values that do not
/// match the shape (in `integers` for u64, in `values` otherwise, the other one empty), an unknown
/// dtype, or an f32 tensor holding a value float cannot represent exactly (write it as f64, or
/// round it first): what is written is what is read back.
[[nodiscard]] inline std::string safetensors_bytes(const TensorFile& file) {
  std::set<std::string_view> names;
  for (const Tensor& t : file.tensors) {
    if (t.name == "__metadata__")
      detail::invalid("safetensors_bytes: a tensor may not be named __metadata__ (the header's metadata)");
    if (!names.insert(t.name).second) detail::invalid("safetensors_bytes: tensor \"", t.name, "\" appears twice");
    if (!detail::valid_utf8(t.name)) detail::invalid("safetensors_bytes: a tensor name is not valid UTF-8");
    if (t.dtype != TensorDtype::f32 && t.dtype != TensorDtype::f64 && t.dtype != TensorDtype::u64)
      detail::invalid("safetensors_bytes: tensor \"", t.name, "\" has dtype ", static_cast<int>(t.dtype),
                      ", expected f32, f64 or u64");
    if (t.dtype == TensorDtype::u64 ? !t.values.empty() : !t.integers.empty())
      detail::invalid("safetensors_bytes: tensor \"", t.name, "\" is ", detail::dtype_name(t.dtype), " but holds ",
                      t.dtype == TensorDtype::u64 ? "real values" : "integers");
    std::size_t count = 0;
    if (!detail::element_count(t.shape, count) || count != t.size())
      detail::invalid("safetensors_bytes: tensor \"", t.name, "\" has ", t.size(),
                      " values, which its shape does not hold");
    if (t.dtype == TensorDtype::f32)
      for (const double v : t.values)
        if (!std::isnan(v) && static_cast<double>(static_cast<float>(v)) != v)
          detail::invalid("safetensors_bytes: tensor \"", t.name, "\" is F32 but holds ", v,
                          ", which float does not represent exactly");
  }
  for (const auto& [key, value] : file.metadata)
    if (!detail::valid_utf8(key) || !detail::valid_utf8(value))
      detail::invalid("safetensors_bytes: the metadata of key \"", key, "\" is not valid UTF-8");
  std::string header = "{";
  if (!file.metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : file.metadata) {
      if (!first) header += ',';
      first = false;
      detail::append_json_string(header, key);
      header += ':';
      detail::append_json_string(header, value);
    }
    header += '}';
  }
  // The reference writer's order: by dtype, largest first in its order of alignment (U64, F64,
  // F32), then by name, so that every tensor's data start at a multiple of its element size
  // (zero-copy readers need it).
  std::vector<const Tensor*> order;
  for (const Tensor& t : file.tensors) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const Tensor* a, const Tensor* b) {
    const int ra = detail::dtype_rank(a->dtype), rb = detail::dtype_rank(b->dtype);
    return ra != rb ? ra > rb : a->name < b->name;
  });
  std::uint64_t offset = 0;
  for (const Tensor* tensor : order) {
    const Tensor& t = *tensor;
    if (header.size() > 1) header += ',';
    detail::append_json_string(header, t.name);
    header += ":{\"dtype\":\"" + std::string(detail::dtype_name(t.dtype)) + "\",\"shape\":[";
    for (std::size_t k = 0; k < t.shape.size(); ++k) header += (k > 0 ? "," : "") + std::to_string(t.shape[k]);
    const std::uint64_t end = offset + t.size() * detail::dtype_size(t.dtype);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // the data start 8-byte aligned
  if (header.size() > detail::safetensors_max_header)
    detail::invalid("safetensors_bytes: the header would be ", header.size(), " bytes, beyond the format's limit of ",
                    detail::safetensors_max_header);
  std::string out;
  out.reserve(8 + header.size() + static_cast<std::size_t>(offset));
  detail::append_le(out, header.size(), 8);
  out += header;
  for (const Tensor* tensor : order) {
    const Tensor& t = *tensor;
    for (const double v : t.values) {
      if (t.dtype == TensorDtype::f32)
        detail::append_le(out, std::bit_cast<std::uint32_t>(static_cast<float>(v)), 4);
      else
        detail::append_le(out, std::bit_cast<std::uint64_t>(v), 8);
    }
    for (const std::uint64_t v : t.integers) detail::append_le(out, v, 8);
  }
  return out;
}

/// The contents of safetensors bytes (`name` says where they came from, in messages). Every rule of
/// the format is checked before a value is read: the header length fits the bytes (and the format's
/// 100 MB limit); the header is one UTF-8 JSON object of tensors, each with dtype, shape and
/// data_offsets once each (other fields skipped), and an optional "__metadata__" of strings (or
/// null); no key repeats; the byte ranges
/// match dtype and shape and cover the data exactly, without gaps or overlaps. Tensors come back in
/// the order of their bytes. Throws std::invalid_argument starting "parse_safetensors: NAME: ";
/// what the reference reader accepts and memtrace does not read (dtypes other than F32, F64 and U64)
/// is refused as "unsupported: ...", naming it. Like the reference reader it allows white space
/// around the header's object, fields of a tensor it does not know (ignored), "__metadata__": null
/// and an empty tensor name.
[[nodiscard]] inline TensorFile parse_safetensors(std::string_view bytes, std::string_view name = "<bytes>") {
  const auto fail = [&](const auto&... why) { detail::invalid("parse_safetensors: ", name, ": ", why...); };
  if (bytes.size() < 8) fail("a safetensors file starts with 8 bytes of header length, got ", bytes.size(), " bytes");
  const std::uint64_t header_size = detail::read_le(bytes, 0, 8);
  if (header_size > detail::safetensors_max_header || header_size > bytes.size() - 8)
    fail("the header length is ", header_size, " bytes, but ", bytes.size() - 8, " bytes follow it");
  std::vector<detail::SafetensorsHeader::Entry> entries;
  TensorFile file;
  detail::SafetensorsHeader(bytes.substr(8, header_size), name).parse(entries, file.metadata);
  const std::string_view data = bytes.substr(8 + header_size);
  std::stable_sort(entries.begin(), entries.end(),  // ties (empty tensors) keep the header's order
                   [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t expected = 0;
  for (const auto& e : entries) {
    TensorDtype dtype{};
    if (e.dtype == "F32")
      dtype = TensorDtype::f32;
    else if (e.dtype == "F64")
      dtype = TensorDtype::f64;
    else if (e.dtype == "U64")
      dtype = TensorDtype::u64;
    else
      fail("unsupported: tensor \"", e.name, "\" has dtype \"", e.dtype, "\"; memtrace reads F32, F64 and U64");
    std::size_t count = 0;
    if (!detail::element_count(e.shape, count) || count > data.size() / detail::dtype_size(dtype))
      fail("tensor \"", e.name, "\" has a shape of more values than the file holds");
    if (e.begin != expected)
      fail("tensor \"", e.name, "\" starts at data byte ", e.begin, ", expected ", expected,
           " (the tensors must cover the data without gaps or overlaps)");
    if (e.end < e.begin || e.end - e.begin != count * detail::dtype_size(dtype))
      fail("tensor \"", e.name, "\" has data_offsets [", e.begin, ", ", e.end, "], which do not hold ", count, " ",
           e.dtype, " values");
    if (e.end > data.size())
      fail("tensor \"", e.name, "\" ends at data byte ", e.end, ", but the data are ", data.size(), " bytes");
    expected = e.end;
  }
  if (expected != data.size()) fail("the tensors cover ", expected, " bytes of data, but the file holds ", data.size());
  for (auto& e : entries) {
    const TensorDtype dtype = e.dtype == "F32"   ? TensorDtype::f32
                              : e.dtype == "F64" ? TensorDtype::f64
                                                 : TensorDtype::u64;
    Tensor t{std::move(e.name), dtype, std::move(e.shape), {}, {}};
    const std::size_t size = detail::dtype_size(t.dtype), count = static_cast<std::size_t>((e.end - e.begin) / size);
    if (dtype == TensorDtype::u64)
      t.integers.resize(count);
    else
      t.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t raw = detail::read_le(data, static_cast<std::size_t>(e.begin) + i * size, size);
      if (dtype == TensorDtype::u64)
        t.integers[i] = raw;
      else
        t.values[i] = size == 4 ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(raw)))
                                : std::bit_cast<double>(raw);
    }
    file.tensors.push_back(std::move(t));
  }
  return file;
}

/// Writes `file` to `path` in the safetensors format, atomically (a temporary file and a rename:
/// a reader never sees half of it, and a failed write leaves an existing file as it was).
inline void write_safetensors(const std::filesystem::path& path, const TensorFile& file) {
  write_text_atomically(path, safetensors_bytes(file));
}

/// Reads a safetensors file (parse_safetensors, with the path in its messages).
[[nodiscard]] inline TensorFile read_safetensors(const std::filesystem::path& path) {
  return parse_safetensors(detail::read_text(path), path.string());
}

}  // namespace memtrace
