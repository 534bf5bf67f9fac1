// The T-maze complexity of Theorem 5.8: windows need length m = k, whose class F_k has metric
// entropy |Y|^k log⌈Δ/(2ε)⌉ (Lemma 5.3, exponential in k), while memory traces with
// λ = (k − 1)/k and a Lipschitz constant L = √2 e k represent the value function exactly, and
// F_{λ,L} has entropy at most log⌈Δ/ε⌉ ⌈2L√(|Y| − 1)/ε⌉^{|Y|−1} (Lemma 5.4, polynomial in k).
// The program prints both for every corridor length k in [--kmin, --kmax], and the smallest
// Lipschitz constant that actually suffices on the T-maze's histories (Table 2, from
// TMazeAlwaysUp's model) next to the proof's √2 e k. See docs/theory.md.
//
//   tmaze_complexity                          # k = 2 ... 64, epsilon = 0.1
//   tmaze_complexity --kmax 16 --epsilon 0.01 --no-plot
//
// Entropies are printed as log10 (5^64 ≈ 5e44 and the first bound of Lemma 5.4 reaches 10^378,
// beyond a double). Δ = 2: the values lie in [−1, 1].
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memtrace/analysis/lipschitz.hpp>
#include <memtrace/analysis/metric_entropy.hpp>
#include <memtrace/analysis/tmaze_complexity.hpp>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/env/tmaze.hpp>
#include <memtrace/experiment/results.hpp>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using namespace memtrace;
namespace fs = std::filesystem;

constexpr double value_range = 2.0;  // Δ = v̄ − v_ = 1 − (−1)
constexpr std::size_t num_observations = tmaze::num_observations;

struct Options {
  std::size_t kmin = 2;
  std::size_t kmax = 64;
  double epsilon = 0.1;
  std::string out = "tmaze_complexity_out";
  bool plot = true;
};

struct Row {
  std::size_t k = 0, m = 0;
  double lambda = 0.0, lipschitz = 0.0, d = 0.0;
  double window = 0.0, dimension = 0.0, subspace = 0.0, trace = 0.0;  // log10 of the entropies
  double minimal = 0.0, ratio = 0.0;
};

Row compute(std::size_t k, double epsilon) {
  Row r;
  r.k = k;
  r.m = tmaze_window_length(k);
  r.lambda = tmaze_lambda(k);
  r.lipschitz = tmaze_lipschitz(k);
  r.d = d_lambda(r.lambda, num_observations);
  const double to_log10 = 1.0 / std::numbers::ln10;
  r.window = log_window_entropy(r.m, num_observations, epsilon, value_range) * to_log10;
  r.dimension =
      log_trace_entropy_bound_dimension(r.lambda, r.lipschitz, num_observations, epsilon, value_range) * to_log10;
  r.subspace = log_trace_entropy_bound_subspace(r.lipschitz, num_observations, epsilon, value_range) * to_log10;
  r.trace = log_trace_entropy_bound(r.lambda, r.lipschitz, num_observations, epsilon, value_range) * to_log10;
  r.minimal = minimal_lipschitz_constant(tmaze_histories(k), r.lambda, num_observations);
  r.ratio = r.minimal / r.lipschitz;
  return r;
}

/// Rows worth printing: the ends of the range, powers of two and three times powers of two.
bool printed(std::size_t k, const Options& o) {
  if (k == o.kmin || k == o.kmax) return true;
  std::size_t odd = k;
  while (odd % 2 == 0) odd /= 2;
  return odd == 1 || odd == 3;
}

int run(const Options& o) {
  if (o.kmax < o.kmin) throw std::invalid_argument("--kmax must be at least --kmin");
  std::vector<Row> rows;
  for (std::size_t k = o.kmin; k <= o.kmax; ++k) rows.push_back(compute(k, o.epsilon));

  const fs::path dir(o.out);
  fs::create_directories(dir);
  const fs::path csv = dir / "tmaze_complexity.csv";
  {
    std::ofstream out(csv);
    out << "k,m,lambda,lipschitz_proof,d_lambda,log10_window_entropy,log10_trace_bound_dimension,"
           "log10_trace_bound_subspace,log10_trace_bound,minimal_lipschitz,ratio\n";
    for (const Row& r : rows)
      out << r.k << ',' << r.m << ',' << csv_field(r.lambda) << ',' << csv_field(r.lipschitz) << ',' << csv_field(r.d)
          << ',' << csv_field(r.window) << ',' << csv_field(r.dimension) << ',' << csv_field(r.subspace) << ','
          << csv_field(r.trace) << ',' << csv_field(r.minimal) << ',' << csv_field(r.ratio) << '\n';
    if (!out) throw std::runtime_error("could not write " + csv.string());
  }

  std::printf("T-maze (Theorem 5.8), |Y| = %zu, Delta = 2, epsilon = %g; entropies as log10 H\n", num_observations,
              o.epsilon);
  std::printf("  window F_m: m = k, H = |Y|^k log ceil(Delta/(2 eps))                        (Lemma 5.3)\n");
  std::printf("  trace F_{lambda,L}: lambda = (k-1)/k, L = sqrt(2) e k, bounds of Lemma 5.4:\n");
  std::printf(
      "    dim: log ceil(Delta/eps) |Y| (2L/eps)^d_lambda, sub: log ceil(Delta/eps) ceil(2L "
      "sqrt(|Y|-1)/eps)^(|Y|-1)\n");
  std::printf("  minimal L: smallest Lipschitz constant representing v on the histories of Table 2\n\n");
  std::printf("%4s %4s %8s %9s %8s %10s %10s %10s %10s %10s %7s\n", "k", "m", "lambda", "d_lambda", "window",
              "trace dim", "trace sub", "trace min", "minimal L", "sqrt2 e k", "ratio");
  for (const Row& r : rows) {
    if (!printed(r.k, o)) continue;
    std::printf("%4zu %4zu %8.5f %9.3f %8.2f %10.2f %10.2f %10.2f %10.4f %10.4f %7.4f\n", r.k, r.m, r.lambda, r.d,
                r.window, r.dimension, r.subspace, r.trace, r.minimal, r.lipschitz, r.ratio);
  }
  std::printf(
      "\nwindow entropy: x%d per tile of corridor (exponential); trace bound: about x%d per doubling of k "
      "(polynomial, k^%zu)\nwrote %s\n",
      static_cast<int>(num_observations), 1 << (num_observations - 1), num_observations - 1, csv.c_str());
  if (!o.plot) return 0;
  return examples::draw_figure("tmaze_complexity.gp", dir / "tmaze_complexity.png",
                               {{"csv", csv.string()}, {"epsilon", csv_field(o.epsilon)}})
             ? 0
             : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "The T-maze of Theorem 5.8: metric entropy of the length-k window class against the bounds of\n"
      "Lemma 5.4 for memory traces with lambda = (k-1)/k and L = sqrt(2) e k, and the minimal Lipschitz\n"
      "constant on the T-maze's histories. Writes DIR/tmaze_complexity.csv and DIR/tmaze_complexity.png (and .svg)."};
  memtrace::examples::cli_conventions(app, "tmaze_complexity");
  // Corridor length k costs O(k²) (its 2k + 2 histories, pairwise): k up to 1024 takes minutes in a Debug build.
  app.add_option("--kmin", o.kmin, "Shortest corridor length k")->check(CLI::Range(2, 1024));
  app.add_option("--kmax", o.kmax, "Longest corridor length k (every k from --kmin on is computed)")
      ->check(CLI::Range(2, 1024));
  app.add_option("--epsilon", o.epsilon, "Cover radius epsilon of the metric entropies (below 1: Delta = 2)")
      ->check(CLI::Range(1e-12, 0.99));
  app.add_option("--out", o.out, "Output folder");
  app.add_flag("!--no-plot", o.plot, "Write the CSV file only");
  CLI11_PARSE(app, argc, argv);
  try {
    memtrace::examples::record_run(o.out, argc, argv, true);  // a fresh result each run
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tmaze_complexity: %s\n", e.what());
    return 1;
  }
}
