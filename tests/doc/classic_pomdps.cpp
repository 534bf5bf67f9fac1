// The fragments of docs/classic-pomdps.md and of README.md's ".pomdp" example, compiled and run by
// ctest (docs/design.md, "Doc snippets are compiled"). Each function holds one ```cpp block, as it
// is written there; tiger.pomdp is copied from tests/data to the working directory first.
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/env/pomdp_file.hpp>
#include <memtrace/env/pomdp_model.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace {

bool read_and_write() {
  memtrace::PomdpFile tiger = memtrace::read_pomdp("tiger.pomdp");
  const Eigen::MatrixXd& listen = tiger.transition[0];  // T(x' | x, listen), 2 x 2
  const double r = tiger.reward(1, 0, 0, 0);            // R(open-left, tiger-left, tiger-left, tiger-left) = -100
  memtrace::write_pomdp(tiger, "copy.pomdp");           // reads back to the same PomdpFile, exactly
  return listen.rows() == 2 && r == -100.0 && memtrace::read_pomdp("copy.pomdp") == tiger;
}

bool models() {
  memtrace::FinitePomdp tiger = memtrace::to_finite_pomdp(memtrace::read_pomdp("tiger.pomdp"));
  Eigen::VectorXd b = tiger.initial_belief(2);  // y_0 = start (index |Y| = 2): (0.5, 0.5)
  b = tiger.update_belief(b, 0, 0);             // listen, hear tiger-left: (0.85, 0.15)
  memtrace::FiniteHmm hmm = tiger.with_action_probabilities(Eigen::Vector3d::Constant(1.0 / 3));
  memtrace::StationaryProcess process(hmm, 0.95);  // the exact analysis of that policy
  return std::abs(b[0] - 0.85) < 1e-12 && process.num_states() == hmm.num_states();
}

// README.md: which memory suits a .pomdp file (the numbers of docs/classic-pomdps.md, "Which memory
// suits which problem", for --actions 0.6,0.3,0.1).
bool which_memory() {
  const memtrace::FinitePomdp tiger = memtrace::to_finite_pomdp(memtrace::read_pomdp("tiger.pomdp"));
  const memtrace::StationaryProcess process(tiger.with_action_probabilities(Eigen::Vector3d(0.6, 0.3, 0.1)), 0.95);
  for (const double lambda : {0.0, 0.4, 0.9})  // a trace of 3 features: 538.97, 512.82, 593.08
    std::printf("trace  λ = %.1f: VE %.2f\n", lambda, memtrace::optimal_trace_value_error(process, lambda));
  for (const std::size_t m : {1, 3, 6})  // a window of 3^m entries: 538.97, 513.03, 511.86
    std::printf("window m = %zu:   VE %.2f\n", m,
                memtrace::optimal_window_value_error(memtrace::window_moments(process, m)));
  const auto near = [](double x, double expected) { return std::abs(x - expected) < 1e-3; };
  return near(memtrace::optimal_trace_value_error(process, 0.4), 512.819) &&
         near(memtrace::optimal_window_value_error(memtrace::window_moments(process, 6)), 511.862);
}

}  // namespace

int main() {
  std::filesystem::copy_file(MEMTRACE_TEST_DATA_DIR "/tiger.pomdp", "tiger.pomdp",
                             std::filesystem::copy_options::overwrite_existing);
  const bool ok = read_and_write() && models() && which_memory();
  std::puts(ok ? "docs/classic-pomdps.md and README.md: ok" : "classic_pomdps.cpp: a fragment computed something else");
  return ok ? 0 : 1;
}
