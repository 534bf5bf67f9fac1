// Which memory suits which classic POMDP: for each .pomdp file, a fixed policy that does not look
// at the observations turns the POMDP into an HMM (FinitePomdp::with_action_probabilities), and the
// exact analysis gives the value error (VE) of the optimal estimator and of the TD(0) fixed point
// for memory traces over a λ grid, full windows and frame stacks (concatenated windows) of m = 1..M
// observations. See docs/classic-pomdps.md.
//
//   pomdp_memory tests/data/tiger.pomdp tests/data/grid4x3.pomdp
//   pomdp_memory tiger.pomdp --actions 0.8,0.1,0.1 --discount 0.9 --max-window 8 --out tiger_out
//
// --learn adds online TD(0) with every memory and step size (--steps, --seeds, --alphas), the VE of
// the final weights computed exactly, into DIR/learn.csv and the table.
//
// Writes DIR/results.csv (problem,memory,parameter,ve_optimal,ve_td_fixed_point; memory is trace,
// window or concat, parameter λ or m), DIR/PROBLEM.csv (the rows of one problem) and DIR/PROBLEM.png (and .svg).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memtrace/analysis/concat_value_error.hpp>
#include <memtrace/analysis/linear_estimator.hpp>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/env/pomdp_model.hpp>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/statistics.hpp>
#include <memtrace/files.hpp>
#include <memtrace/learn/td_bank.hpp>
#include <memtrace/loop/run_td.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using memtrace::examples::number_check;

using namespace memtrace;
namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> files;
  std::vector<double> actions;     // empty: uniform
  std::optional<double> discount;  // empty: the file's discount
  std::vector<double> lambdas{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};
  std::size_t max_window = 6;
  std::size_t max_table = std::size_t{1} << 20;
  std::string out = "pomdp_memory_out";
  bool plot = true;
  bool learn = false;           // --learn: online TD(0) with every memory as well
  std::size_t steps = 100'000;  // per run
  std::size_t seeds = 10;
  std::uint64_t seed = 0;
  std::vector<double> alphas;  // 13 log-spaced in [1e-4, 1] unless given
};

struct Row {
  std::string memory;
  std::string parameter;
  double value;  // λ or m, for finding the best
  double ve_optimal;
  double ve_td_fixed_point;
  LinearMoments linear{};  // traces and concat windows
  WindowMoments window{};  // full windows
  // --learn: the step size with the least mean VE after --steps steps, and that VE over the seeds.
  double best_alpha = std::numeric_limits<double>::quiet_NaN();
  Summary learned{};
};

/// The rows of one problem: traces for every λ, windows and concat windows for m = 1..M (windows of
/// more than max_table entries skipped with a note on stderr).
std::vector<Row> analyse(const StationaryProcess& process, const Options& o, const std::string& problem) {
  std::vector<Row> rows;
  const auto linear = [&](const char* memory, std::string parameter, double value, const LinearMoments& moments) {
    rows.push_back({memory, std::move(parameter), value, linear_value_error(moments, optimal_linear_weights(moments)),
                    linear_value_error(moments, linear_td_fixed_point(moments, process.discount())), moments});
  };
  for (double lambda : o.lambdas) linear("trace", csv_field(lambda), lambda, trace_moments(process, lambda));
  const std::size_t ny = process.num_observations();
  double size = 1.0;
  for (std::size_t m = 1; m <= o.max_window; ++m) {
    size *= static_cast<double>(ny);
    if (size > static_cast<double>(o.max_table)) {
      std::fprintf(stderr,
                   "%s: full windows of m >= %zu skipped: |Y|^m = %zu^%zu = %.4g entries exceed --max-table %zu\n",
                   problem.c_str(), m, ny, m, size, o.max_table);
      break;
    }
    const WindowMoments w = window_moments(process, m, o.max_table);
    rows.push_back({"window",
                    csv_field(m),
                    static_cast<double>(m),
                    optimal_window_value_error(w),
                    window_value_error(w, window_td_fixed_point(process, m, o.max_table)),
                    {},
                    w});
  }
  for (std::size_t m = 1; m <= o.max_window; ++m) {
    if (static_cast<double>(m) * static_cast<double>(ny) >
        static_cast<double>(std::min<std::size_t>(o.max_table, 1 << 16))) {
      std::fprintf(stderr, "%s: frame stacks of m >= %zu skipped: m(|Y|+1) = %zu features exceed --max-table or 2^16\n",
                   problem.c_str(), m, m * ny);
      break;
    }
    linear("concat", csv_field(m), static_cast<double>(m), concat_moments(process, m));
  }
  return rows;
}

/// The mean and 95% interval of the seeds' VEs; infinite if a run diverged.
Summary summary_of(const std::vector<double>& ve) {
  for (double x : ve)
    if (!std::isfinite(x)) {
      const double inf = std::numeric_limits<double>::infinity();
      return Summary{ve.size(), inf, inf, inf, inf};
    }
  return summarize(ve);
}

/// --learn: online TD(0) (one LinearTdBank over the step sizes) with each memory on the HMM of the
/// policy, seeds independent streams make_stream(seed, j); the VE of the final weights computed
/// exactly. Appends every (memory, α) to `csv` and keeps the best α of each memory in its row.
void learn(std::vector<Row>& rows, const FiniteHmm& hmm, const StationaryProcess& process, const Options& o,
           const std::string& problem, std::string& csv) {
  const std::size_t y = hmm.num_observations();
  const TdRun run{.steps = o.steps, .discount = process.discount()};
  const std::size_t record_at[] = {o.steps};
  for (Row& row : rows) {
    std::vector<std::vector<double>> ve(o.alphas.size());  // [α][seed]
    for (std::size_t seed = 0; seed < o.seeds; ++seed) {
      FiniteHmm env = hmm;
      auto gen = make_stream(o.seed, seed);
      const auto record = [&](std::size_t, const LinearTdBank& bank) {
        const Eigen::VectorXd errors = row.memory == "window" ? window_value_errors(row.window, bank.weights())
                                                              : linear_value_errors(row.linear, bank.weights());
        for (std::size_t a = 0; a < o.alphas.size(); ++a) ve[a].push_back(errors[static_cast<Eigen::Index>(a)]);
      };
      const auto go = [&](auto memory) {
        LinearTdBank bank(memory.dim(), o.alphas);
        run_td(env, memory, bank, gen, run, record_at, record);
      };
      const auto m = static_cast<std::size_t>(row.value);
      if (row.memory == "trace")
        go(MemoryTrace<>(row.value, y));
      else if (row.memory == "window")
        go(Window<>(m, y));
      else
        go(ConcatWindow<>(m, y));
    }
    for (std::size_t a = 0; a < o.alphas.size(); ++a) {
      const Summary s = summary_of(ve[a]);
      csv += problem + "," + row.memory + "," + row.parameter + "," + csv_field(o.alphas[a]) + "," +
             csv_field(o.seeds) + "," + csv_field(o.steps) + "," + csv_field(s.mean) + "," +
             (std::isnan(s.ci_low) ? std::string() : csv_field(s.ci_low)) + "," +
             (std::isnan(s.ci_high) ? std::string() : csv_field(s.ci_high)) + "\n";
      if (std::isnan(row.best_alpha) || s.mean < row.learned.mean) {
        row.best_alpha = o.alphas[a];
        row.learned = s;
      }
    }
  }
}

std::string fmt(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", x);
  return buffer;
}

const char* display_name(const std::string& memory) {
  return memory == "trace" ? "trace λ" : memory == "window" ? "window m" : "frame stack m";
}

/// "trace λ = 0.9: 12.3" for the memory of the kind with the least VE in column `which` (0: optimal,
/// 1: TD fixed point, 2: learned).
std::string best_of(const std::vector<Row>& rows, const std::string& memory, int which) {
  const auto ve = [which](const Row& r) {
    return which == 0 ? r.ve_optimal : which == 1 ? r.ve_td_fixed_point : r.learned.mean;
  };
  const Row* best = nullptr;
  for (const Row& r : rows)
    if (r.memory == memory && (best == nullptr || ve(r) < ve(*best))) best = &r;
  if (best == nullptr) return std::string(display_name(memory)) + ": none";
  return std::string(display_name(memory)) + " = " + best->parameter + ": " + fmt(ve(*best));
}

int run(const Options& o) {
  const fs::path out(o.out);
  fs::create_directories(out);
  const std::string header = "problem,memory,parameter,ve_optimal,ve_td_fixed_point\n";
  std::string all = header;
  std::string learned = "problem,memory,parameter,alpha,seeds,steps,ve_mean,ve_ci_low,ve_ci_high\n";
  std::set<std::string> problems;
  for (const std::string& name : o.files) {
    const PomdpFile file = read_pomdp(name);
    const std::string problem = fs::path(name).stem().string();
    if (problem.empty() || problem.find_first_of("',\"") != std::string::npos)
      throw std::invalid_argument(name + ": the file name must be non-empty and hold no quote or comma");
    if (!problems.insert(problem).second)
      throw std::invalid_argument(name + ": two files named " + problem + " (the results are written by name)");
    Eigen::VectorXd p = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(file.num_actions()),
                                                  1.0 / static_cast<double>(file.num_actions()));
    if (!o.actions.empty()) {
      if (o.actions.size() != file.num_actions())
        throw std::invalid_argument("--actions: " + name + " has " + std::to_string(file.num_actions()) +
                                    " actions, got " + std::to_string(o.actions.size()) + " probabilities");
      p = Eigen::Map<const Eigen::VectorXd>(o.actions.data(), static_cast<Eigen::Index>(o.actions.size()));
    }
    const double discount = o.discount.value_or(file.discount);
    if (!(discount < 1.0))
      throw std::invalid_argument(name + ": the discount " + fmt(discount) +
                                  " is not below 1: the values of a continuing process need --discount in [0, 1)");
    const FinitePomdp pomdp = to_finite_pomdp(file);
    const FiniteHmm hmm = pomdp.with_action_probabilities(p);
    const StationaryProcess process(hmm, discount);
    std::vector<Row> rows = analyse(process, o, problem);
    if (o.learn) learn(rows, hmm, process, o, problem, learned);

    std::printf("\n%s (%s): %zu states, %zu actions, %zu observations + start; γ = %s; actions", problem.c_str(),
                name.c_str(), file.num_states(), file.num_actions(), file.num_observations(), fmt(discount).c_str());
    for (Eigen::Index u = 0; u < p.size(); ++u) std::printf("%s%s", u == 0 ? " " : ",", fmt(p[u]).c_str());
    std::printf("; HMM of %zu states\n", hmm.num_states());
    std::printf("  %-8s %-9s %14s %18s", "memory", "parameter", "VE optimal", "VE TD fixed point");
    if (o.learn) std::printf("  %14s %8s", "VE TD learned", "best α");
    std::printf("\n");
    std::string csv = header;
    for (const Row& r : rows) {
      std::printf("  %-8s %-9s %14s %18s", r.memory.c_str(), r.parameter.c_str(), fmt(r.ve_optimal).c_str(),
                  fmt(r.ve_td_fixed_point).c_str());
      if (o.learn) std::printf("  %14s %8s", fmt(r.learned.mean).c_str(), fmt(r.best_alpha).c_str());
      std::printf("\n");
      const std::string line = problem + "," + r.memory + "," + r.parameter + "," + csv_field(r.ve_optimal) + "," +
                               csv_field(r.ve_td_fixed_point) + "\n";
      csv += line;
      all += line;
    }
    const char* const by[] = {"optimal", "TD fixed point", "TD learned"};
    for (int which = 0; which < (o.learn ? 3 : 2); ++which)
      std::printf("  best by VE %s: %s | %s | %s\n", by[which], best_of(rows, "trace", which).c_str(),
                  best_of(rows, "window", which).c_str(), best_of(rows, "concat", which).c_str());
    const fs::path data = out / (problem + ".csv");
    memtrace::write_text_atomically(data, csv);
    if (o.plot) {
      const std::string subtitle =
          fmt(discount) == fmt(file.discount) ? "γ = " + fmt(discount) : "γ = " + fmt(discount) + " (--discount)";
      examples::draw_figure(
          "pomdp_memory.gp", out / (problem + ".png"),
          {{"csv", data.string()},
           {"problem", problem},
           {"subtitle", subtitle + (o.actions.empty() ? ", uniformly random actions" : ", --actions")}});
    }
  }
  memtrace::write_text_atomically(out / "results.csv", all);
  std::printf("\nwrote %s\n", (out / "results.csv").c_str());
  if (o.learn) {
    memtrace::write_text_atomically(out / "learn.csv", learned);
    std::printf("wrote %s\n", (out / "learn.csv").c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Which memory suits which classic POMDP: for each .pomdp file, the exact value error of the optimal\n"
      "estimator and of the TD(0) fixed point with memory traces (over λ), full windows and frame stacks\n"
      "(concatenated windows) of m = 1..M observations, under a fixed policy that does not look at the\n"
      "observations. Writes DIR/results.csv (problem,memory,parameter,ve_optimal,ve_td_fixed_point),\n"
      "DIR/PROBLEM.csv and DIR/PROBLEM.png (and .svg) per file. See docs/classic-pomdps.md."};
  memtrace::examples::cli_conventions(app, "pomdp_memory");
  app.add_option("files", o.files, "The .pomdp files (Cassandra's format)")->required()->type_name("FILE");
  app.add_option("--actions", o.actions,
                 "The policy: action probabilities p0,p1,... (one per action of every file, summing to 1; default: "
                 "uniform)")
      ->check(number_check("in [0, 1]", [](double x) { return x >= 0.0 && x <= 1.0; }))
      ->delimiter(',')
      ->expected(1, -1);
  app.add_option("--discount", o.discount, "Discount γ in [0, 1) (default: each file's discount)")
      ->check(number_check("in [0, 1)", [](double x) { return x >= 0.0 && x < 1.0; }));
  app.add_option("--lambdas", o.lambdas, "Memory-trace λ values, each in [0, 1) (duplicates are ignored)")
      ->check(number_check("in [0, 1)", [](double x) { return x >= 0.0 && x < 1.0; }))
      ->delimiter(',')
      ->expected(1, -1);
  app.add_option("--max-window", o.max_window, "Longest full window and frame stack m, in 1..64")
      ->check(number_check("an integer in 1..64", [](double x) { return x >= 1 && x <= 64 && x == std::floor(x); }));
  app.add_option("--max-table", o.max_table,
                 "Largest full-window table (|Y|+1)^m computed; longer windows are skipped with a note")
      ->check(number_check("an integer in 1..2^30",
                           [](double x) { return x >= 1 && x <= 1073741824.0 && x == std::floor(x); }));
  app.add_option("--out", o.out, "Output folder");
  app.add_flag("!--no-plot", o.plot, "Write the CSV files only");
  app.add_flag("--learn", o.learn,
               "Also online TD(0) with every memory on the HMM of the policy, every step size, --seeds runs of "
               "--steps steps; writes DIR/learn.csv and the best step size's mean VE in the table");
  app.add_option("--steps", o.steps, "TD steps per run (--learn)")
      ->check(number_check("an integer in 1..10^9", [](double x) { return x >= 1 && x <= 1e9 && x == std::floor(x); }));
  app.add_option("--seeds", o.seeds, "Runs per memory and step size (--learn)")
      ->check(number_check("an integer in 1..10^6", [](double x) { return x >= 1 && x <= 1e6 && x == std::floor(x); }));
  app.add_option("--seed", o.seed, "Base seed; run j uses make_stream(seed, j) (--learn)")
      ->check(number_check("a non-negative integer", [](double x) { return x >= 0 && x == std::floor(x); }));
  app.add_option("--alphas", o.alphas, "TD step sizes (--learn; default: 13 log-spaced in [1e-4, 1])")
      ->check(number_check("positive and at most 1", [](double x) { return x > 0.0 && x <= 1.0; }))
      ->delimiter(',')
      ->expected(1, -1);
  CLI11_PARSE(app, argc, argv);
  if (o.alphas.empty())
    for (int i = 0; i <= 12; ++i) o.alphas.push_back(i == 12 ? 1.0 : 1e-4 * std::pow(10.0, i / 3.0));
  std::sort(o.alphas.begin(), o.alphas.end());
  o.alphas.erase(std::unique(o.alphas.begin(), o.alphas.end()), o.alphas.end());
  std::sort(o.lambdas.begin(), o.lambdas.end());
  o.lambdas.erase(std::unique(o.lambdas.begin(), o.lambdas.end()), o.lambdas.end());
  if (!o.actions.empty()) {
    double sum = 0.0;
    for (double p : o.actions) sum += p;
    if (!(std::abs(sum - 1.0) <= 1e-9)) {
      std::fprintf(stderr, "pomdp_memory: --actions: the probabilities must sum to 1, got %.17g\n", sum);
      return 2;
    }
  }
  try {
    memtrace::examples::record_run(o.out, argc, argv, true);  // a fresh result each run
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pomdp_memory: %s\n", e.what());
    return 1;
  }
}
