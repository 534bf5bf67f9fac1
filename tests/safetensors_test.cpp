// Tests of safetensors.hpp: the bytes follow the format to the byte (a file written by hand from its
// specification), a file round-trips exactly (values, shapes, metadata with escapes and non-ASCII
// text, empty and scalar tensors), Eigen matrices go in and out row by row, and every broken rule
// of the format is refused with a message naming the file and the rule, never half-loaded.
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memtrace/safetensors.hpp>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "temp_dir.hpp"

namespace safetensors_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

// 8 bytes of little-endian length, then the header.
std::string with_length(const std::string& header) {
  std::string out;
  for (int k = 0; k < 8; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return out + header;
}

// A file of one F32 tensor "x" of shape [2] holding 1 and -2: the header, then 8 data bytes.
std::string one_tensor(const std::string& entry = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                       const std::string& data = std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8)) {
  return with_length(entry) + data;
}

/// The file's tensors in the order the writer puts them (U64, F64, F32, then by name),
/// which is the order they read back in.
TensorFile in_writer_order(TensorFile file) {
  std::stable_sort(file.tensors.begin(), file.tensors.end(), [](const Tensor& a, const Tensor& b) {
    const int ra = detail::dtype_rank(a.dtype), rb = detail::dtype_rank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  return file;
}

}  // namespace

TEST_CASE("safetensors_bytes writes the format's bytes: length, JSON header padded to 8, little-endian data",
          "[safetensors]") {
  TensorFile file;
  file.tensors.push_back({"x", TensorDtype::f32, {2}, {1.0, -2.0}});
  file.tensors.push_back({"s", TensorDtype::f64, {}, {0.5}});
  file.metadata["k"] = "v";
  const std::string header = R"({"__metadata__":{"k":"v"},"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
                             R"("x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";  // F64 first
  const std::string padding((8 - header.size() % 8) % 8, ' ');
  const std::string expected = with_length(header + padding) + std::string("\x00\x00\x00\x00\x00\x00\xe0\x3f", 8) +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  CHECK(safetensors_bytes(file) == expected);
  CHECK((safetensors_bytes(file).size() - 8 - 16) % 8 == 0);
}

TEST_CASE("A file round-trips exactly: values, shapes, dtypes, metadata with escapes and non-ASCII text",
          "[safetensors]") {
  TensorFile file;
  file.tensors.push_back({"actor.0.weight", TensorDtype::f32, {2, 3}, {1, 2, 3, 4, 5, 6.5}});
  file.tensors.push_back({"empty", TensorDtype::f64, {0, 4}, {}});
  file.tensors.push_back({"scalar", TensorDtype::f64, {}, {0.1}});
  file.tensors.push_back({"extremes",
                          TensorDtype::f64,
                          {4},
                          {std::numeric_limits<double>::denorm_min(), -0.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::max()}});
  file.tensors.push_back({"λ \"quoted\"\n", TensorDtype::f32, {1, 1, 1}, {0.25}});
  file.metadata["format"] = "memtrace";
  file.metadata["tab\tand\x01"] = "é ∑ 😀 \\ /";
  const TensorFile back = parse_safetensors(safetensors_bytes(file), "round trip");
  CHECK(back == in_writer_order(file));
  CHECK(std::signbit(back.at("extremes").values[1]));

  // NaN is kept (its bits are the payload; it compares unequal, so check it alone).
  TensorFile nan;
  nan.tensors.push_back({"nan", TensorDtype::f32, {1}, {std::numeric_limits<double>::quiet_NaN()}});
  CHECK(std::isnan(parse_safetensors(safetensors_bytes(nan)).at("nan").values[0]));

  const memtrace::test::TempDir dir("safetensors_test");
  const auto path = dir / "weights.safetensors";
  write_safetensors(path, file);
  CHECK(read_safetensors(path) == in_writer_order(file));
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path()))
    CHECK(entry.path().filename() == "weights.safetensors");  // no temporary file left
}

TEST_CASE("U64 tensors hold unsigned 64-bit integers exactly, little-endian, beside real ones", "[safetensors]") {
  // Counters and generator states: every bit matters, so they are integers, never doubles.
  TensorFile file;
  Tensor state{"generator", TensorDtype::u64, {2, 2}, {}, {0, 1, 0x0123456789abcdefULL, ~0ULL}};
  file.tensors.push_back(state);
  file.tensors.push_back({"x", TensorDtype::f32, {1}, {0.5}});
  file.tensors.push_back({"count", TensorDtype::u64, {}, {}, {9007199254740993ULL}});  // 2^53 + 1: no double holds it
  const std::string bytes = safetensors_bytes(file);
  const std::string header = R"({"count":{"dtype":"U64","shape":[],"data_offsets":[0,8]},)"
                             R"("generator":{"dtype":"U64","shape":[2,2],"data_offsets":[8,40]},)"
                             R"("x":{"dtype":"F32","shape":[1],"data_offsets":[40,44]}})";
  const std::string padding((8 - header.size() % 8) % 8, ' ');
  REQUIRE(bytes.substr(8, header.size() + padding.size()) == header + padding);
  CHECK(bytes.substr(8 + header.size() + padding.size() + 24, 8) == std::string("\xef\xcd\xab\x89\x67\x45\x23\x01", 8));
  const TensorFile back = parse_safetensors(bytes, "u64");
  CHECK(back == in_writer_order(file));
  CHECK(back.at("count").integers[0] == 9007199254740993ULL);
  CHECK(back.at("count").values.empty());
  CHECK(back.at("generator").size() == 4);
  Eigen::VectorXd out(4);
  CHECK_THROWS_WITH(copy_tensor(back.at("generator"), out),
                    "copy_tensor: tensor \"generator\" holds U64 integers, not real numbers");
  // Values in the other vector than the dtype says are refused.
  TensorFile mixed;
  mixed.tensors.push_back({"m", TensorDtype::u64, {1}, {1.0}, {1}});
  CHECK_THROWS_WITH(safetensors_bytes(mixed), "safetensors_bytes: tensor \"m\" is U64 but holds real values");
  mixed.tensors[0] = {"m", TensorDtype::f64, {1}, {1.0}, {1}};
  CHECK_THROWS_WITH(safetensors_bytes(mixed), "safetensors_bytes: tensor \"m\" is F64 but holds integers");
  mixed.tensors[0] = {"m", TensorDtype::u64, {3}, {}, {1, 2}};
  CHECK_THROWS_WITH(safetensors_bytes(mixed),
                    "safetensors_bytes: tensor \"m\" has 2 values, which its shape does not hold");
}

TEST_CASE("Tensors come back in the order of their bytes, whatever the order of the header's keys", "[safetensors]") {
  const std::string header = R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                             R"( "a" : { "shape" : [1], "data_offsets" : [0, 4], "dtype" : "F32" } })";
  const TensorFile file = parse_safetensors(with_length(header) + std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
  REQUIRE(file.tensors.size() == 2);
  CHECK(file.tensors[0].name == "a");
  CHECK(file.tensors[0].values == std::vector<double>{1.0});
  CHECK(file.tensors[1].name == "b");
  CHECK(file.tensors[1].values == std::vector<double>{2.0});
}

TEST_CASE(
    "Tensors are written as the reference writer orders them (U64, F64, F32, then name), each aligned to its "
    "element size, whatever their order in the TensorFile",
    "[safetensors]") {
  TensorFile file;
  for (const char* name : {"z", "a", "m"}) file.tensors.push_back({name, TensorDtype::f32, {0}, {}});
  file.tensors.push_back(
      {"x", TensorDtype::f32, {3}, {1.0, 2.0, 3.0}});  // 12 bytes: an F64 after it would be unaligned
  file.tensors.push_back({"c", TensorDtype::u64, {}, {}, {7}});
  for (const char* name : {"q", "b"}) file.tensors.push_back({name, TensorDtype::f64, {2, 0}, {}});
  file.tensors.push_back({"d", TensorDtype::f64, {2}, {0.5, -0.5}});
  const std::string bytes = safetensors_bytes(file);
  const TensorFile back = parse_safetensors(bytes);
  std::vector<std::string> order;
  for (const Tensor& t : back.tensors) order.push_back(t.name);
  CHECK(order == std::vector<std::string>{"c", "b", "d", "q", "a", "m", "x", "z"});  // U64 before F64 named "b"
  CHECK(back.at("d").values == std::vector<double>{0.5, -0.5});
  CHECK(back.at("c").integers == std::vector<std::uint64_t>{7});
  TensorFile reversed = file;
  std::reverse(reversed.tensors.begin(), reversed.tensors.end());
  CHECK(safetensors_bytes(reversed) == bytes);  // the bytes do not depend on the order
  CHECK(safetensors_bytes(back) == bytes);
  // Every tensor starts at a multiple of its element size (the header is padded to 8 bytes).
  const std::uint64_t header = 8 + (static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[0])) |
                                    static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[1])) << 8);
  CHECK(header % 8 == 0);
  CHECK(bytes.find("\"d\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[8,24]}") != std::string::npos);
}

TEST_CASE("to_tensor and copy_tensor move Eigen matrices row by row, as NumPy and PyTorch lay them out",
          "[safetensors]") {
  Eigen::MatrixXf w(2, 3);
  w << 1, 2, 3, 4, 5, 6;
  const Tensor t = to_tensor("w", w);
  CHECK(t.dtype == TensorDtype::f32);
  CHECK(t.shape == std::vector<std::size_t>{2, 3});
  CHECK(t.values == std::vector<double>{1, 2, 3, 4, 5, 6});
  const Tensor v = to_tensor("v", Eigen::VectorXd::LinSpaced(3, 0.0, 1.0));
  CHECK(v.dtype == TensorDtype::f64);
  CHECK(v.shape == std::vector<std::size_t>{3});

  Eigen::MatrixXf back(2, 3);
  copy_tensor(t, back);
  CHECK(back == w);
  Eigen::VectorXf column(3);
  copy_tensor(v, column);
  CHECK(column[2] == 1.0f);
  Eigen::MatrixXf wrong(3, 2);
  CHECK_THROWS_WITH(copy_tensor(t, wrong),
                    "copy_tensor: tensor \"w\" has shape [2, 3] and 6 values, the destination is 3 x 2");
  Tensor short_tensor = t;
  short_tensor.values.pop_back();
  CHECK_THROWS_WITH(copy_tensor(short_tensor, back), Catch::Contains("has shape [2, 3] and 5 values"));
  CHECK(wrong.rows() == 3);
}

TEST_CASE("safetensors_bytes refuses what Python could not read back as written", "[safetensors]") {
  const auto refused = [](Tensor t, const std::string& what) {
    TensorFile file;
    file.tensors.push_back(std::move(t));
    CHECK_THROWS_WITH(safetensors_bytes(file), Catch::StartsWith("safetensors_bytes: ") && Catch::Contains(what));
  };
  refused({"__metadata__", TensorDtype::f32, {}, {1}}, "__metadata__");
  refused({"x", TensorDtype::f32, {2}, {1}}, "has 1 values");
  refused({"x", TensorDtype::f32, {1}, {0.1}}, "float does not represent exactly");
  refused({"\xff", TensorDtype::f32, {1}, {1}}, "UTF-8");
  TensorFile twice;
  twice.tensors = {{"x", TensorDtype::f32, {}, {1}}, {"x", TensorDtype::f32, {}, {1}}};
  CHECK_THROWS_WITH(safetensors_bytes(twice), Catch::Contains("\"x\" appears twice"));
  TensorFile metadata;
  metadata.metadata["k"] = "\xc0\x80";  // an overlong encoding
  CHECK_THROWS_WITH(safetensors_bytes(metadata), Catch::Contains("not valid UTF-8"));
}

TEST_CASE(
    "parse_safetensors reads what the reference reader accepts: white space around the header, fields it "
    "does not know, metadata null, an empty name",
    "[safetensors]") {
  const std::vector<double> values = {1.0, -2.0};
  CHECK(parse_safetensors(one_tensor(R"(  {"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})")).at("x").values ==
        values);
  const TensorFile extra = parse_safetensors(one_tensor(
      R"({"x":{"dtype":"F32","extra":{"a":[1,-2.5e3,true,null,"s",{}]},"shape":[2],"data_offsets":[0,8],"z":false}})"));
  CHECK(extra.at("x").values == values);
  const TensorFile null_metadata =
      parse_safetensors(one_tensor(R"({"__metadata__":null,"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"));
  CHECK(null_metadata.metadata.empty());
  const TensorFile empty_name =
      parse_safetensors(one_tensor(R"({"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"));
  CHECK(empty_name.at("").values == values);
  CHECK(parse_safetensors(safetensors_bytes(empty_name)) == empty_name);  // and written back
}

TEST_CASE("parse_safetensors refuses every broken rule of the format, naming the file", "[safetensors]") {
  const auto refused = [](const std::string& bytes, const std::string& what) {
    CHECK_THROWS_WITH(parse_safetensors(bytes, "w.st"),
                      Catch::StartsWith("parse_safetensors: w.st: ") && Catch::Contains(what));
  };
  CHECK(parse_safetensors(one_tensor()).at("x").values == std::vector<double>{1.0, -2.0});
  refused("", "8 bytes of header length");
  refused(one_tensor().substr(0, 20), "bytes follow it");                                 // truncated header
  refused(one_tensor().substr(0, one_tensor().size() - 1), "more values than the file");  // truncated data
  refused(one_tensor() + "x", "cover 8 bytes of data, but the file holds 9");             // trailing bytes
  refused(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "header length is");        // 2^64 - 1
  refused(one_tensor(R"({"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,8]}})"),
          "unsupported: tensor \"x\" has dtype \"BF16\"; memtrace reads F32, F64 and U64");
  refused(one_tensor(R"({"x":{"dtype":"U64","shape":[2],"data_offsets":[0,8]}})"), "more values than");
  CHECK(parse_safetensors(one_tensor(R"({"x":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}})")).at("x").integers ==
        std::vector<std::uint64_t>{0xc00000003f800000ULL});  // the same 8 bytes, read as one integer
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})"), "more values than");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})"), "do not hold 1 F32");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})"), "starts at data byte 4");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})"), "two integers");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                     R"("y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})"),
          "starts at data byte 0, expected 4");  // overlap
  refused(one_tensor(R"({"x":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})"), "twice");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2]}})"), "needs dtype, shape and data_offsets");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{}})"), "appears twice");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})"), "non-negative integer");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}})"), "leading zero");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}})"), "64 bits");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})"),
          "more values than");
  refused(one_tensor(R"({"__metadata__":{"k":1},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"),
          "strings to strings");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)"), "text after");
  refused(one_tensor(R"([{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}])"), "must be a JSON object");
  for (const char* number : {"-", "+1", "01", "1.", "1e", ".5", "--1"})  // numbers JSON does not have
    refused(one_tensor(std::string(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":)") + number + "}}"),
            "");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":[1,}})"), "expected");
  refused(one_tensor(R"({"x\q":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"), "unknown escape");
  refused(one_tensor(R"({"\ud800":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"), "surrogate");
  refused(one_tensor("{\"\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"), "UTF-8");
  refused(one_tensor("{\"a\tb\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"), "control character");
  refused(one_tensor(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8])"), "expected");  // unclosed

  const memtrace::test::TempDir dir("safetensors_test");
  CHECK_THROWS_AS(read_safetensors(dir / "missing.safetensors"), std::system_error);
}

TEST_CASE("JSON u-escapes (backslash u) decode to UTF-8, surrogate pairs included", "[safetensors]") {
  const std::string header = R"({"\u00e9\ud83d\ude00\/":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK(parse_safetensors(one_tensor(header)).tensors[0].name == "é😀/");
}

}  // namespace safetensors_test
