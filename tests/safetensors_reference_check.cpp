// Reads what tests/safetensors_reference_writer.py wrote (ctest runs both) from the folder argv[1]:
// a file laid out as the reference safetensors writer lays it out. memtrace reads every tensor and
// the metadata, every tensor starts at a multiple of its element size, and memtrace's own writer
// gives the same bytes back (it orders the tensors as the reference does).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memtrace/files.hpp>
#include <memtrace/safetensors.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace memtrace;
  if (argc != 2) {
    std::fprintf(stderr, "usage: safetensors_reference_check FOLDER\n");
    return 2;
  }
  try {
    const std::filesystem::path path = std::filesystem::path(argv[1]) / "reference.safetensors";
    const std::string bytes = detail::read_text(path);
    const TensorFile file = parse_safetensors(bytes, path.string());
    bool ok =
        file.metadata == std::map<std::string, std::string>{{"format", "reference"}, {"note", "λ = 0.9\ntwo lines"}};
    ok = ok && file.at("z.weight").values == std::vector<double>{1.5, -2.25, 3.0};
    ok = ok && file.at("a.bias").shape == std::vector<std::size_t>{2, 2} &&
         file.at("a.bias").values == std::vector<double>{0.5, 0.25, -1.0, 8.0};
    ok = ok && file.at("m.moment").values.size() == 6 && file.at("m.moment").values[4] == 4.0 / 7.0;
    ok = ok && file.at("count").dtype == TensorDtype::u64 && file.at("count").shape.empty() &&
         file.at("count").integers == std::vector<std::uint64_t>{(std::uint64_t{1} << 63) + 5};
    // In the file's order (parse keeps the order of the bytes), each at a multiple of its size.
    const std::vector<std::string> order = {"count", "z.steps", "a.mean", "m.moment", "a.bias", "z.weight"};
    for (std::size_t i = 0; i < order.size(); ++i) ok = ok && file.tensors[i].name == order[i];
    const bool same_bytes = safetensors_bytes(file) == bytes;
    std::printf("read %zu tensors: %s; memtrace writes the same bytes: %s\n", file.tensors.size(),
                ok ? "as written" : "DIFFERENT", same_bytes ? "yes" : "no");
    return ok && same_bytes ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "safetensors_reference_check: %s\n", e.what());
    return 1;
  }
}
