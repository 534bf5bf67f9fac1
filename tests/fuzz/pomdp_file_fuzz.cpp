// Fuzz target of the .pomdp reader (env/pomdp_file.hpp, env/pomdp_model.hpp). For any bytes:
// parse_pomdp either refuses with std::invalid_argument or returns a file that format_pomdp
// writes and parse_pomdp reads back to the same PomdpFile, exactly; the file becomes a
// FinitePomdp or is refused with std::invalid_argument; and a model it becomes holds rows that
// the analyses accept (their own check, at default_row_sum_tolerance), as do the HMMs of the
// uniform policy. Anything else (another exception, a sanitizer report, a broken round trip)
// aborts. Built with libFuzzer (MEMTRACE_FUZZ) or with tests/fuzz/driver.cpp, which runs a corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memtrace/env/pomdp_model.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "pomdp_file_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

// 2^16 doubles a table (512 KiB): large enough for every construct, small enough to run fast.
constexpr std::size_t fuzz_max_table = std::size_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memtrace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  PomdpFile file;
  try {
    file = parse_pomdp(text, "fuzz.pomdp", fuzz_max_table);
  } catch (const std::invalid_argument&) {
    return 0;  // a refusal is an answer
  }
  std::string written;
  try {
    written = format_pomdp(file);
  } catch (const std::exception& e) {
    finding("format_pomdp refused a file parse_pomdp accepted:", e.what());
  }
  try {
    if (!(parse_pomdp(written, "written.pomdp", fuzz_max_table) == file)) finding("parse, format, parse differs");
  } catch (const std::invalid_argument& e) {
    finding("parse_pomdp refused what format_pomdp wrote:", e.what());
  }
  // A model with rewards that depend on the observation holds |U| |X|^2 |Y| joint entries: skip
  // the models whose conversion alone would outgrow libFuzzer's memory limit.
  const double joint = static_cast<double>(file.num_actions()) * static_cast<double>(file.num_states()) *
                       static_cast<double>(file.num_states()) * static_cast<double>(file.num_observations());
  if (joint > static_cast<double>(fuzz_max_table) * 16) return 0;
  std::optional<FinitePomdp> model;
  try {
    model.emplace(to_finite_pomdp(file));
  } catch (const std::invalid_argument&) {
    return 0;  // a file that is not a model is refused: an answer
  }
  try {
    const auto actions = static_cast<Eigen::Index>(model->num_actions());
    const FiniteHmm hmm =
        model->with_action_probabilities(Eigen::VectorXd::Constant(actions, 1.0 / static_cast<double>(actions)));
    detail::check_row_stochastic("fuzz", "transition", hmm.transition(), default_row_sum_tolerance);
    detail::check_row_stochastic("fuzz", "emission", hmm.emission(), default_row_sum_tolerance);
    detail::check_distribution("fuzz", "initial", hmm.initial(), default_row_sum_tolerance);
  } catch (const std::exception& e) {
    finding("the model's HMM under the uniform policy, or its rows, refused:", e.what());
  }
  return 0;
}
