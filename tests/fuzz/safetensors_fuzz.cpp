// Fuzz target of the safetensors reader (safetensors.hpp). For any bytes: parse_safetensors either
// refuses with std::invalid_argument or returns tensors whose values (U64: integers) fill their shapes; the file
// written back (safetensors_bytes) is accepted by the writer and reads back to the same tensors
// and metadata (NaN as NaN). Anything else aborts. Built with libFuzzer (MEMTRACE_FUZZ) or with
// tests/fuzz/driver.cpp, which runs a corpus.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memtrace/safetensors.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "safetensors_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

/// The same tensors (by name: the writer orders them by dtype size and name) and metadata.
bool same(memtrace::TensorFile a, memtrace::TensorFile b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  const auto by_name = [](const memtrace::Tensor& x, const memtrace::Tensor& y) { return x.name < y.name; };
  std::sort(a.tensors.begin(), a.tensors.end(), by_name);
  std::sort(b.tensors.begin(), b.tensors.end(), by_name);
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const memtrace::Tensor &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape || x.values.size() != y.values.size() ||
        x.integers != y.integers)
      return false;
    for (std::size_t k = 0; k < x.values.size(); ++k)
      if (!(x.values[k] == y.values[k] || (std::isnan(x.values[k]) && std::isnan(y.values[k])))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memtrace;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  TensorFile file;
  try {
    file = parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (const Tensor& t : file.tensors) {
    std::size_t count = 1;
    for (const std::size_t n : t.shape) count *= n;  // no overflow: the values exist
    if (count != t.size()) finding("values do not fill the shape of", t.name);
    if (t.dtype == TensorDtype::u64 ? !t.values.empty() : !t.integers.empty())
      finding("values of the other kind in", t.name);
  }
  std::string written;
  try {
    written = safetensors_bytes(file);
  } catch (const std::invalid_argument& e) {
    finding("an accepted file cannot be written back:", e.what());
  }
  try {
    if (!same(parse_safetensors(written, "written"), file)) finding("the file written back reads differently");
  } catch (const std::invalid_argument& e) {
    finding("the file written back is refused:", e.what());
  }
  return 0;
}
