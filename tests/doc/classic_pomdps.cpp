// The fragments of docs/classic-pomdps.md, compiled and run by ctest (docs/design.md, "Doc
// snippets are compiled"). Each function holds one ```cpp block of the page, as it is written
// there; tiger.pomdp is copied from tests/data to the working directory first.
#include <memtrace/analysis/markov.hpp>
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

}  // namespace

int main() {
  std::filesystem::copy_file(MEMTRACE_TEST_DATA_DIR "/tiger.pomdp", "tiger.pomdp",
                             std::filesystem::copy_options::overwrite_existing);
  const bool ok = read_and_write() && models();
  std::puts(ok ? "docs/classic-pomdps.md: ok" : "docs/classic-pomdps.md: a fragment computed something else");
  return ok ? 0 : 1;
}
