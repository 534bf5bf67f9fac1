// The paper's Figure 3 (§5.2 "Slow forgetting"): the two-state HMM with switching probability
// p and observation error q. Left: the state estimate P(x_t = 1 | y = 1, ..., 1, 0) after a
// length-m history whose most recent observation is 0 but whose older ones all say 1. Right: λ*, the
// λ in [0, 1) that minimises the smallest Lipschitz constant L of a function f of the trace with
// f(z_λ(h)) = v(h) on every length-m history (R(F_{λ,L}) = 0 restricted to length-m histories).
// See docs/theory.md.
//
//   two_state_lambda                        # 41 x 41 grid over (0, 1/2)², m = 4
//   two_state_lambda --grid 81 --length 5   # finer, longer histories
//
// Grid: the centres of --grid equal cells of [0, --max] on each axis (the default max 1/2 keeps the
// hidden bit persistent, p < 1/2, and the observations informative, q < 1/2; q and 1 - q give the
// same λ* by relabelling the observations). Histories start from the stationary distribution, so a
// length-m history is a window of a long stationary history. The reward is the observation (r(0) = 0,
// r(1) = 1) with discount --discount; v(h) is then affine in P(x_t = 1 | h), so neither changes λ*.
// λ*: the grid λ = k / --lambda-grid, then golden-section search around the grid minimum
// (lipschitz_optimal_lambda). Cells are independent: results do not depend on the thread count.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memtrace/analysis/belief.hpp>
#include <memtrace/analysis/lipschitz.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/env/two_state_hmm.hpp>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/sweep.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using namespace memtrace;
namespace fs = std::filesystem;

struct Options {
  std::size_t grid = 41;
  double max = 0.5;
  std::size_t length = 4;
  std::size_t lambda_grid = 200;
  double discount = 0.9;
  std::size_t threads = 0;
  std::string out = "two_state_lambda_out";
  bool plot = true;
};

struct Cell {
  double p = 0.0, q = 0.0;
  double state_estimate = 0.0;
  LipschitzOptimum optimum;
};

/// The history 1, ..., 1, 0 of length m (chronological: the 0 is the most recent observation).
std::vector<Observation> contradicted_history(std::size_t m) {
  std::vector<Observation> h(m, 1);
  h.back() = 0;
  return h;
}

Cell compute(double p, double q, const Options& o) {
  const StationaryProcess process(TwoStateHmm(p, q), o.discount);
  Cell cell{p, q, 0.0, {}};
  cell.state_estimate = belief(process, contradicted_history(o.length))[1];
  cell.optimum = lipschitz_optimal_lambda(labelled_histories(process, o.length), 2, o.lambda_grid);
  return cell;
}

int run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t g = o.grid;
  std::vector<double> axis(g);
  for (std::size_t i = 0; i < g; ++i) axis[i] = o.max * (static_cast<double>(i) + 0.5) / static_cast<double>(g);
  std::vector<Cell> cells(g * g);
  // Cell i is (p, q) = (axis[i / g], axis[i % g]): p outer, q inner, the scan order of `with image`.
  parallel_runs(cells.size(), [&](std::size_t i) { cells[i] = compute(axis[i / g], axis[i % g], o); },
                {.threads = o.threads, .progress = true, .label = "two_state_lambda"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const fs::path dir(o.out);
  fs::create_directories(dir);
  const fs::path csv = dir / "two_state_lambda.csv";
  {
    std::ofstream out(csv);
    out << "p,q,state_estimate,lambda_star,min_lipschitz\n";
    for (const Cell& c : cells)
      out << csv_field(c.p) << ',' << csv_field(c.q) << ',' << csv_field(c.state_estimate) << ','
          << csv_field(c.optimum.lambda) << ',' << csv_field(c.optimum.constant) << '\n';
    if (!out) throw std::runtime_error("could not write " + csv.string());
  }
  std::size_t slow = 0, red = 0;
  for (const Cell& c : cells) {
    slow += c.optimum.lambda >= 0.5 ? 1 : 0;
    red += c.state_estimate > 0.5 ? 1 : 0;
  }
  std::string history;
  for (const Observation y : contradicted_history(o.length))
    history += (history.empty() ? "" : ",") + std::to_string(y);
  std::printf("%zu x %zu cells, length-%zu histories: lambda* >= 1/2 in %zu cells, P(x = 1 | %s) > 1/2 in %zu\n", g, g,
              o.length, slow, history.c_str(), red);
  for (const std::size_t i : {std::size_t{0}, g - 1, g * (g - 1), g * g - 1, g * (g / 2) + g / 2}) {
    const Cell& c = cells[i];
    std::printf("  p = %.4f, q = %.4f: P(x = 1 | %s) = %.4f, lambda* = %.4f, L = %.4g\n", c.p, c.q, history.c_str(),
                c.state_estimate, c.optimum.lambda, c.optimum.constant);
  }
  std::printf("%.2f s on %zu threads; wrote %s\n", seconds, sweep_threads(o.threads, cells.size()), csv.c_str());
  if (!o.plot) return 0;
  return examples::draw_figure("two_state_lambda.gp", dir / "two_state_lambda.png",
                               {{"csv", csv.string()},
                                {"history", history},
                                {"length", std::to_string(o.length)},
                                {"axis_max", csv_field(o.max)}})
             ? 0
             : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "The paper's Fig. 3: the two-state HMM (switching probability p, observation error q).\n"
      "Left: P(x_t = 1 | 1,...,1,0) after a length-m history from the stationary distribution.\n"
      "Right: lambda*, the forgetting factor that minimises the Lipschitz constant a function of the\n"
      "trace needs to represent the value of every length-m history.\n"
      "Writes DIR/two_state_lambda.csv (p,q,state_estimate,lambda_star,min_lipschitz) and DIR/two_state_lambda.png "
      "(and .svg)."};
  memtrace::examples::cli_conventions(app, "two_state_lambda");
  app.add_option("--grid", o.grid, "Points per axis: the centres of this many equal cells of [0, --max]")
      ->check(CLI::Range(1, 1000));
  app.add_option("--max", o.max, "Upper end of both axes p and q (1/2: persistent states, informative observations)")
      ->check(CLI::Range(0.001, 1.0));
  app.add_option("--length", o.length, "History length m (the paper uses 4); 2^m histories per cell")
      ->check(CLI::Range(1, 12));
  app.add_option("--lambda-grid", o.lambda_grid,
                 "lambda grid k / K, k = 0..K-1, before the golden-section refinement around its minimum")
      ->check(CLI::Range(2, 100000));
  app.add_option("--discount", o.discount, "Discount of the values (does not change lambda*)")
      ->check(CLI::Range(0.0, 0.999999));
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)");
  app.add_option("--out", o.out, "Output folder");
  app.add_flag("!--no-plot", o.plot, "Write the CSV file only");
  CLI11_PARSE(app, argc, argv);
  try {
    memtrace::examples::record_run(o.out, argc, argv, true);  // a fresh result each run
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "two_state_lambda: %s\n", e.what());
    return 1;
  }
}
