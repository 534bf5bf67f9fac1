// The paper's TD random-walk experiment (§6, Fig. 4, Appendix C), end to end: online TD(0) with
// linear function approximation on Sutton's noisy random walk, with memory traces (one λ per
// setting), full windows and concatenated windows, every seed, every step size; the value error
// of every run's final weights computed exactly; the optimal and TD-fixed-point value errors of
// every memory; CSV files and the figure. See docs/experiments.md.
//
//   td_random_walk                 # the paper's protocol: 100 seeds x 100,000 steps
//   td_random_walk --quick         # a few seconds' version (run by ctest)
//   td_random_walk --curve         # also learning curves from 10^3 to 10^6 steps
//   td_random_walk --shard 1/4 --out s1   # one slice of the sweep (on one of several machines)
//   td_random_walk --merge s0 s1 s2 s3 --out all   # the slices checked and summarized as one run
//
// Every setting of seed j sees the same random walk (the stream make_stream(seed, j)): learners
// draw no random numbers, so one pass over the walk serves all step sizes of a memory, and all λ
// of the traces. The results do not depend on the thread count or on which settings are asked for.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <memtrace/experiment/sweep_runner.hpp>
#include <memtrace/memtrace.hpp>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using memtrace::examples::number_check;

using namespace memtrace;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

enum class Kind { trace, window, concat };

const char* name_of(Kind kind) {
  switch (kind) {
    case Kind::trace:
      return "trace";
    case Kind::window:
      return "window";
    case Kind::concat:
      return "concat";
  }
  return "?";
}

struct Options {
  std::size_t seeds = 100;
  std::size_t steps = 100'000;
  std::size_t threads = 0;
  std::uint64_t seed = 0;
  double discount = 0.99;
  std::string out = "td_random_walk_out";
  std::vector<double> lambdas{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};
  bool fine = false;
  std::vector<std::size_t> windows{1, 2, 3, 4, 5};
  std::vector<double> alphas;  // 13 log-spaced in [1e-4, 1] unless given
  double trace_alpha = 0.02;
  bool quick = false;
  bool curve = false;
  std::size_t curve_steps = 1'000'000;
  std::vector<double> curve_lambdas{0.8, 0.9};
  bool plot = true;
  std::size_t stop_after = 0;  // --stop-after N: stop after N (memory group, seed) units, as if killed
  Shard shard;                 // --shard: this machine's slice of the (group, seed) units
  examples::SweepFlags split;  // --shard, --merge (the shards' folders), --allow-version-change
  Provenance provenance;       // what produced the results (provenance.txt)
};

/// n log-spaced values from lo to hi (both included).
std::vector<double> log_spaced(double lo, double hi, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = n == 1 ? lo : lo * std::pow(hi / lo, static_cast<double>(i) / static_cast<double>(n - 1));
  v.back() = hi;
  return v;
}

template <class T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

const CLI::Validator in_unit_interval = number_check("in [0, 1)", [](double x) { return x >= 0.0 && x < 1.0; });
const CLI::Validator positive_step = number_check(
    "positive and finite", [](double x) { return x > 0.0 && x < std::numeric_limits<double>::infinity(); });

/// One memory: a trace with its λ, or a window kind with its length m.
struct MemorySpec {
  Kind kind;
  double lambda = 0.0;  // traces
  std::size_t m = 0;    // windows

  [[nodiscard]] std::string param() const { return kind == Kind::trace ? csv_field(lambda) : csv_field(m); }
};

/// Learners that share one pass over a seed's walk: one window memory with several step sizes, or
/// traces with several λ (each TraceTd holds its own trace).
struct Group {
  Kind kind;
  std::size_t m = 0;                  // windows
  std::vector<std::size_t> memories;  // index into the memory list, one per learner
  std::vector<double> alphas;         // one per learner
};

/// The memory a spec names: the one place the example turns its names (CLI, CSV) into types; the
/// exact analysis is then the same call for every memory (analysis/value_error.hpp).
using AnyMemory = std::variant<MemoryTrace<>, Window<>, ConcatWindow<>>;

AnyMemory memory_of(const MemorySpec& spec, std::size_t num_observations) {
  switch (spec.kind) {
    case Kind::trace:
      return MemoryTrace<>(spec.lambda, num_observations);
    case Kind::window:
      return Window<>(spec.m, num_observations);
    case Kind::concat:
      break;
  }
  return ConcatWindow<>(spec.m, num_observations);
}

/// What the exact analysis knows about one memory.
struct Exact {
  std::variant<TraceMoments, WindowMoments, LinearMoments> moments;
  double ve_optimal = 0.0;
  double ve_td_fixed_point = std::numeric_limits<double>::quiet_NaN();  // NaN: not computed
};

constexpr std::size_t max_fixed_point_table = std::size_t{1} << 21;  // windows of m <= 6 for |Y| = 11

Exact analyse(const StationaryProcess& process, const MemorySpec& spec) {
  return std::visit(
      [&](const auto& memory) {
        auto moments = exact_moments(process, memory);
        Exact e;
        e.ve_optimal = optimal_value_error(moments);
        if (num_weights(moments) <= max_fixed_point_table)
          e.ve_td_fixed_point = value_error(moments, td_fixed_point(process, memory));
        e.moments = std::move(moments);
        return e;
      },
      memory_of(spec, process.num_observations()));
}

/// The value errors of the columns of `weights` under the memory's moments.
template <class Derived>
Eigen::VectorXd value_errors_of(const Exact& e, const Eigen::MatrixBase<Derived>& weights) {
  return std::visit([&](const auto& moments) { return value_errors(moments, weights); }, e.moments);
}

/// One seed of one group: runs every learner of the group on the walk of that seed and returns the
/// VE of each learner's weights after each step count in record_at (learner-major).
template <class Plan>
std::vector<double> run_group(const Group& g, Plan& plan, const NoisyRandomWalk& walk, std::size_t seed,
                              const Options& o, std::span<const std::size_t> record_at) {
  const std::vector<MemorySpec>& memories = plan.memories;
  NoisyRandomWalk env = walk;
  auto gen = make_stream(o.seed, seed);
  const TdRun run{.steps = record_at.back(), .discount = o.discount};
  const std::size_t k = g.alphas.size();
  std::vector<double> ve(k * record_at.size());
  std::size_t column = 0;
  const std::size_t y = walk.num_observations();
  if (g.kind == Kind::trace) {
    // Traces: one memory (λ) per learner. A learner that diverged gets VE +inf.
    const auto record = [&](std::size_t, std::span<const TraceTd<>> learners) {
      for (std::size_t i = 0; i < k; ++i)
        ve[i * record_at.size() + column] = value_errors_of(plan.exact(g.memories[i]), learners[i].weights())[0];
      ++column;
    };
    std::vector<TraceTd<>> learners;
    for (std::size_t i = 0; i < k; ++i) learners.emplace_back(memories[g.memories[i]].lambda, y, g.alphas[i]);
    run_td_shared(env, std::span(learners), gen, run, record_at, record);
  } else {
    // One bank of learners (one per step size) on one window memory.
    const auto record_bank = [&](std::size_t, const LinearTdBank& bank) {
      const Exact& e = plan.exact(g.memories.front());  // one memory for the whole bank
      const Eigen::VectorXd errors = value_errors_of(e, bank.weights());
      for (std::size_t i = 0; i < k; ++i) ve[i * record_at.size() + column] = errors[static_cast<Eigen::Index>(i)];
      ++column;
    };
    const auto learn = [&](auto memory) {
      LinearTdBank bank(memory.dim(), g.alphas);
      run_td(env, memory, bank, gen, run, record_at, record_bank);
    };
    if (g.kind == Kind::window) {
      learn(Window<>(g.m, y));
    } else {
      learn(ConcatWindow<>(g.m, y));
    }
  }
  return ve;
}

/// The settings an experiment's runs depend on besides their keys; a results folder holds runs of
/// one experiment only.
std::string experiment_description(const Options& o, const NoisyRandomWalk& walk) {
  std::ostringstream s;
  s << "experiment=td_random_walk\n"
    << "environment=NoisyRandomWalk(states=" << walk.num_states() << ",max_step=" << walk.parameters().max_step
    << ",allow_stay=" << walk.parameters().allow_stay << ",observations=" << walk.num_observations()
    << ",noise=" << csv_field(walk.noise()) << ",start=" << walk.start()
    << ",rewards=" << csv_field(walk.parameters().left_reward) << "/" << csv_field(walk.parameters().right_reward)
    << ")\n"
    << "steps=" << o.steps << "\n"
    << "discount=" << csv_field(o.discount) << "\n"
    << "seed=" << o.seed << "\n"
    << "trace_init=first_observation\nwindow_padding=repeat_first\n";
  return s.str();
}

std::string fmt(double x, const char* f = "%.4g") {
  if (std::isnan(x)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, f, x);
  return buffer;
}

/// A summary row's statistics; diverged runs make the mean and interval infinite.
Summary summary_of(const std::vector<double>& ve) {
  for (double x : ve) {
    if (!std::isfinite(x)) {
      Summary s;
      s.n = ve.size();
      s.mean = s.sd = s.ci_low = s.ci_high = std::numeric_limits<double>::infinity();
      return s;
    }
  }
  return summarize(ve);
}

std::vector<std::string> summary_fields(const MemorySpec& spec, double alpha, std::size_t seeds, std::size_t steps,
                                        const Summary& s, const Exact& e) {
  return csv_row(name_of(spec.kind), spec.param(), alpha, seeds, steps, s.mean, s.ci_low, s.ci_high, e.ve_optimal,
                 std::isnan(e.ve_td_fixed_point) ? std::string() : csv_field(e.ve_td_fixed_point));
}

/// An experiment: memories, the groups of learners that share a pass, and the exact analysis of
/// every memory, computed once by the first run that needs it (runs wait for their own memories only).
struct Plan {
  std::vector<MemorySpec> memories;
  std::vector<Group> groups;
  const StationaryProcess* process = nullptr;
  std::unique_ptr<std::once_flag[]> analysed;
  std::vector<Exact> analyses;

  void add(const MemorySpec& spec, std::vector<double> alphas) {
    const std::size_t index = memories.size();
    memories.push_back(spec);
    if (spec.kind == Kind::trace) {  // all traces share one group
      if (groups.empty() || groups.front().kind != Kind::trace)
        groups.insert(groups.begin(), Group{Kind::trace, 0, {}, {}});
      for (double a : alphas) {
        groups.front().memories.push_back(index);
        groups.front().alphas.push_back(a);
      }
    } else {
      groups.push_back(Group{spec.kind, spec.m, std::vector<std::size_t>(alphas.size(), index), alphas});
    }
  }
  void start(const StationaryProcess& p) {
    process = &p;
    analysed = std::make_unique<std::once_flag[]>(memories.size());
    analyses.resize(memories.size());
  }
  /// The exact analysis of memory mi (computed on first use; concurrent callers wait for it).
  const Exact& exact(std::size_t mi) {
    std::call_once(analysed[mi], [&] { analyses[mi] = analyse(*process, memories[mi]); });
    return analyses[mi];
  }
};

/// The key of a run: memory, param, alpha, seed[, steps].
std::vector<std::string> run_key(const MemorySpec& spec, double alpha, std::size_t seed, const std::size_t* steps) {
  auto key = csv_row(name_of(spec.kind), spec.param(), alpha, seed);
  if (steps != nullptr) key.push_back(csv_field(*steps));
  return key;
}

/// Runs every (group, seed) unit of `shard` of which the folder lacks a row (one pass over the walk
/// serves all learners of the group and all record points) and appends its rows as soon as it
/// finishes. Unit group * seeds + seed is in shard I of N if that number mod N is I, so each shard
/// gets an equal share of the seeds of every group. Units start seed by seed (their "cost" is
/// seeds − seed, and the groups of a seed keep their order): the first units then need the exact
/// analyses of different memories, which their workers compute in parallel (costliest first made
/// both workers wait for the longest analysis, 15% slower on two cores). `units_done`: the units
/// this invocation computed before, which count against --stop-after.
SweepOutcome sweep(Plan& plan, const NoisyRandomWalk& walk, const Options& o, std::span<const std::size_t> record_at,
                   const SweepRequest& request, const std::string& description, const std::string& file,
                   bool with_steps, const std::string& label, bool open_folder, std::size_t units_done) {
  std::vector<std::string> header{"memory", "param", "alpha", "seed"};
  if (with_steps) header.push_back("steps");
  header.push_back("ve");
  SweepPlan sweep_plan{description, {{file, header, header.size() - 1}}, {}};
  for (const Group& g : plan.groups)
    for (std::size_t seed = 0; seed < o.seeds; ++seed) {
      SweepRun run{{{}}, static_cast<double>(o.seeds - seed)};
      for (std::size_t i = 0; i < g.alphas.size(); ++i) {
        const MemorySpec& spec = plan.memories[g.memories[i]];
        for (const std::size_t& step : record_at)
          run.keys[0].push_back(run_key(spec, g.alphas[i], seed, with_steps ? &step : nullptr));
      }
      sweep_plan.runs.push_back(std::move(run));
    }
  return run_sweep(request, sweep_plan,
                   [&](const SweepRunContext& c) -> std::optional<SweepRows> {
                     const Group& g = plan.groups[c.index / o.seeds];
                     const std::size_t seed = c.index % o.seeds;
                     const std::vector<double> ve = run_group(g, plan, walk, seed, o, record_at);
                     SweepRows rows(1);
                     for (std::size_t a = 0; a < g.alphas.size(); ++a)
                       for (std::size_t r = 0; r < record_at.size(); ++r) {
                         rows[0].push_back(run_key(plan.memories[g.memories[a]], g.alphas[a], seed,
                                                   with_steps ? &record_at[r] : nullptr));
                         rows[0].back().push_back(csv_field(ve[a * record_at.size() + r]));
                       }
                     return rows;
                   },
                   {.threads = o.threads,
                    .label = label,
                    .open_folder = open_folder,
                    .max_runs = o.stop_after == 0 ? 0 : o.stop_after - units_done,
                    .other_files = {"curve_runs.csv"}});
}

/// 10^3, 10^3.25, ... up to max_steps, and max_steps and the runs' step count.
std::vector<std::size_t> curve_points(std::size_t max_steps, std::size_t run_steps) {
  std::vector<std::size_t> points;
  for (int k = 0;; ++k) {
    const auto step = static_cast<std::size_t>(std::llround(std::pow(10.0, 3.0 + k / 4.0)));
    if (step > max_steps) break;
    points.push_back(step);
  }
  points.push_back(max_steps);
  points.push_back(run_steps);
  sort_unique(points);
  return points;
}

int run(const Options& o) {
  const auto start = Clock::now();
  const fs::path dir(o.out);
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw std::runtime_error("--out " + dir.string() + " is a file, not a folder");
  const NoisyRandomWalk walk;
  const std::string description = experiment_description(o, walk);

  Plan plan;
  for (double lambda : o.lambdas) plan.add({Kind::trace, lambda, 0}, {o.trace_alpha});
  for (Kind kind : {Kind::window, Kind::concat})
    for (std::size_t m : o.windows) plan.add({kind, 0.0, m}, o.alphas);
  const StationaryProcess process(walk, o.discount);
  plan.start(process);
  // A merge checks the shards' folders (one experiment, every run exactly once) before --out is
  // touched; their runs then fill --out/runs.csv, and the sweep finds every run done.
  const std::size_t steps[] = {o.steps};
  const SweepRequest request = examples::sweep_request(dir, o.shard, o.split, o.provenance);
  const auto stopped = [] {
    std::printf("run the same command without --stop-after to resume them\n");
    return 3;
  };
  const SweepOutcome runs_done = sweep(plan, walk, o, steps, request, description, "runs.csv", false, "runs", true, 0);
  if (const std::optional<int> status = examples::unfinished(runs_done, "td_random_walk")) return *status;
  if (!o.shard.whole()) return 0;  // a shard writes its runs only: the summary needs every seed
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // The exact analysis of every memory, for the summary (those no run of this invocation needed).
  parallel_runs(plan.memories.size(), [&](std::size_t mi) { (void)plan.exact(mi); },
                {.threads = o.threads, .progress = false, .label = {}});

  // summary.csv (every step size), figure.csv (the best step size of each memory) and the table.
  const RunsBySetting runs(read_csv(dir / "runs.csv", 4), 4, 3, o.seeds);  // key: memory, param, alpha, seed
  const std::string header =
      "memory,param,alpha,seeds,steps,ve_mean,ve_ci_low,ve_ci_high,ve_optimal,ve_td_fixed_point\n";
  std::string summary = header, figure = header;
  std::printf("%-7s %-6s %-9s %-31s %-10s %s\n", "memory", "param", "alpha", "VE of TD: mean [95% CI]", "optimal",
              "TD fixed point");
  struct Best {
    MemorySpec spec;
    double alpha, ve;
  };
  std::vector<Best> best;
  for (std::size_t mi = 0; mi < plan.memories.size(); ++mi) {
    const MemorySpec& spec = plan.memories[mi];
    const Exact& e = plan.exact(mi);
    const auto& alphas = spec.kind == Kind::trace ? std::vector<double>{o.trace_alpha} : o.alphas;
    Summary best_summary;
    double best_alpha = alphas.front();
    std::vector<std::string> best_row;
    for (double a : alphas) {
      const Summary s = summary_of(runs.values(csv_row(name_of(spec.kind), spec.param(), a), 4));
      const auto row = summary_fields(spec, a, o.seeds, o.steps, s, e);
      summary += csv_line(row);
      if (best_row.empty() || s.mean < best_summary.mean) {
        best_summary = s;
        best_alpha = a;
        best_row = row;
      }
    }
    figure += csv_line(best_row);
    best.push_back({spec, best_alpha, best_summary.mean});
    std::printf(
        "%-7s %-6s %-9s %-31s %-10s %s\n", name_of(spec.kind), spec.param().c_str(), fmt(best_alpha).c_str(),
        (fmt(best_summary.mean) + " [" + fmt(best_summary.ci_low) + ", " + fmt(best_summary.ci_high) + "]").c_str(),
        fmt(e.ve_optimal).c_str(), fmt(e.ve_td_fixed_point).c_str());
  }
  write_text_atomically(dir / "summary.csv", summary);
  write_text_atomically(dir / "figure.csv", figure);
  std::printf("(window and concat rows: the best of %zu step sizes; every step size is in summary.csv)\n",
              o.alphas.size());
  std::printf("%zu seeds x %zu steps: %.2f s on %zu threads, exact analysis included\n", o.seeds, o.steps, seconds,
              sweep_threads(o.threads));
  bool plotted = true;
  if (o.plot)  // the script says how wide the confidence bands are, from figure.csv
    plotted = examples::draw_figure(
        "td_random_walk.gp", dir / "td_random_walk.png",
        {{"csv", (dir / "figure.csv").string()},
         {"subtitle", std::to_string(o.seeds) + " seeds × " + std::to_string(o.steps) + " steps"}});

  if (o.curve) {
    // The traces at --curve-lambdas with the trace step size, and the best window and concat.
    const auto curve_start = Clock::now();
    Plan curves;
    for (double lambda : o.curve_lambdas) curves.add({Kind::trace, lambda, 0}, {o.trace_alpha});
    for (Kind kind : {Kind::window, Kind::concat}) {
      const Best* pick = nullptr;
      for (const Best& b : best)
        if (b.spec.kind == kind && (pick == nullptr || b.ve < pick->ve)) pick = &b;
      if (pick != nullptr) curves.add(pick->spec, {pick->alpha});
    }
    curves.start(process);
    const std::vector<std::size_t> points = curve_points(o.curve_steps, o.steps);
    // --stop-after counts the units of the invocation: those the runs computed count against it.
    if (o.stop_after != 0 && runs_done.computed >= o.stop_after) return stopped();
    const SweepOutcome curves_done = sweep(curves, walk, o, points, request, description, "curve_runs.csv", true,
                                           "curves", false, runs_done.computed);
    if (const std::optional<int> status = examples::unfinished(curves_done, "td_random_walk")) return *status;
    const RunsBySetting curve_runs(read_csv(dir / "curve_runs.csv", 5), 5, 3, o.seeds);
    std::string curve = header;
    for (const Group& g : curves.groups)
      for (std::size_t i = 0; i < g.alphas.size(); ++i) {
        const MemorySpec& spec = curves.memories[g.memories[i]];
        for (std::size_t step : points) {
          const auto ve = curve_runs.values(csv_row(name_of(spec.kind), spec.param(), g.alphas[i], step), 5);
          curve +=
              csv_line(summary_fields(spec, g.alphas[i], o.seeds, step, summary_of(ve), curves.exact(g.memories[i])));
        }
      }
    write_text_atomically(dir / "curve.csv", curve);
    std::string settings, alphas;  // memory:param and step size of each curve, for the plot
    for (const Group& g : curves.groups)
      for (std::size_t i = 0; i < g.alphas.size(); ++i) {
        const MemorySpec& spec = curves.memories[g.memories[i]];
        settings += std::string(settings.empty() ? "" : " ") + name_of(spec.kind) + ":" + spec.param();
        alphas += std::string(alphas.empty() ? "" : " ") + csv_field(g.alphas[i]);
      }
    std::printf("learning curves to %zu steps: %.2f s; wrote %s\n", o.curve_steps,
                std::chrono::duration<double>(Clock::now() - curve_start).count(), (dir / "curve.csv").c_str());
    if (o.plot)
      plotted =
          examples::draw_figure("td_random_walk_curve.gp", dir / "td_random_walk_curve.png",
                                {{"csv", (dir / "curve.csv").string()}, {"settings", settings}, {"alphas", alphas}}) &&
          plotted;
  }
  return plotted ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "The paper's TD random-walk experiment (Fig. 4): TD(0) with memory traces, full windows and\n"
      "concatenated windows on Sutton's noisy random walk, value errors computed exactly.\n"
      "Writes DIR/summary.csv, DIR/runs.csv (resumable), DIR/figure.csv and DIR/td_random_walk.png (and .svg).\n"
      "Across machines: --shard I/N on each, then --merge with the same flags (docs/experiments.md)."};
  memtrace::examples::cli_conventions(app, "td_random_walk");
  app.add_option("--seeds", o.seeds, "Runs per setting (seeds 0..N-1)")
      ->check(number_check(
          "an integer in [2, 10^6]", [](double x) { return x >= 2 && x <= 1e6; },
          " (a confidence interval needs two runs; every run's key and value are kept in memory)"));
  const CLI::Validator at_least_one = number_check("at least 1", [](double x) { return x >= 1; });
  app.add_option("--steps", o.steps, "TD steps per run")->check(at_least_one);
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")
      ->check(number_check("in [0, 1024] (0: all cores)", [](double x) { return x >= 0 && x <= 1024; }));
  app.add_option("--seed", o.seed, "Base seed; run j of every setting uses make_stream(seed, j)")
      ->check(number_check("a non-negative integer", [](double x) { return x >= 0; }));
  app.add_option("--discount", o.discount, "Discount γ")->check(in_unit_interval);
  app.add_option("--out", o.out, "Output folder (re-running resumes the runs it holds)");
  app.add_option("--lambdas", o.lambdas, "Memory-trace λ values, each in [0, 1) (duplicates are ignored)")
      ->check(in_unit_interval)
      ->expected(1, -1);
  app.add_flag("--fine", o.fine, "λ from 0 to 0.99 in steps of 0.01 (replaces --lambdas)");
  app.add_option("--windows", o.windows,
                 "Window lengths m (observations) for full and concatenated windows, each in 1..6 (duplicates "
                 "are ignored)")
      ->check(number_check(
          "in 1..6", [](double x) { return x >= 1 && x <= 6; },
          " (a full window of m = 7 has 11^7 entries: 2 GB of weights per run in flight)"))
      ->expected(1, -1);
  app.add_option("--alphas", o.alphas,
                 "Step sizes of the windows (default: 13 log-spaced in [1e-4, 1]; duplicates are ignored)")
      ->check(positive_step)
      ->expected(1, -1);
  app.add_option("--trace-alpha", o.trace_alpha, "Step size of the traces")->check(positive_step);
  app.add_flag("--quick", o.quick,
               "A small version in seconds: 8 seeds x 20,000 steps, λ in {0, 0.5, 0.9}, m in 1..3, 5 step sizes");
  app.add_flag("--curve", o.curve,
               "Also learning curves (VE after 10^3 ... --curve-steps steps) of the traces at --curve-lambdas and "
               "the best window and concat settings; writes DIR/curve.csv and DIR/td_random_walk_curve.png (and .svg)");
  app.add_option("--curve-steps", o.curve_steps, "Longest run of the learning curves (at least --steps)")
      ->check(number_check("in [1000, 10^8]", [](double x) { return x >= 1000 && x <= 1e8; }));
  app.add_option("--curve-lambdas", o.curve_lambdas, "λ of the traces in the learning curves")
      ->check(in_unit_interval)
      ->expected(1, -1);
  app.add_flag("!--no-plot", o.plot, "Write the CSV files only");
  examples::add_sweep_flags(app, o.split, "every N-th (memory group, seed) unit", "runs.csv");
  app.add_option("--stop-after", o.stop_after,
                 "Stop after this many (memory group, seed) units, as if killed there (exit status 3): to try "
                 "resumption")
      ->check(number_check("an integer of at least 1", [](double x) { return x >= 1; }));
  CLI11_PARSE(app, argc, argv);
  o.provenance = memtrace::examples::build_provenance(argc, argv);

  try {
    o.shard = examples::parse_sweep_flags(app, o.split);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "td_random_walk: %s\n", e.what());
    return 1;
  }
  if (o.curve && !o.shard.whole()) {
    std::fprintf(
        stderr,
        "td_random_walk: --curve cannot be combined with --shard: the learning curves follow the best step sizes, "
        "which only the whole sweep knows; give --curve to the --merge run instead\n");
    return 1;
  }

  if (o.quick) {
    if (app.count("--seeds") == 0) o.seeds = 8;
    if (app.count("--steps") == 0) o.steps = 20'000;
    if (app.count("--lambdas") == 0) o.lambdas = {0.0, 0.5, 0.9};
    if (app.count("--windows") == 0) o.windows = {1, 2, 3};
    if (app.count("--alphas") == 0) o.alphas = log_spaced(1e-3, 1.0, 5);
    if (app.count("--curve-steps") == 0) o.curve_steps = 100'000;
  }
  if (o.alphas.empty()) o.alphas = log_spaced(1e-4, 1.0, 13);
  if (o.fine) {
    o.lambdas.clear();
    for (int i = 0; i < 100; ++i) o.lambdas.push_back(i / 100.0);
  }
  sort_unique(o.lambdas);
  sort_unique(o.windows);
  sort_unique(o.alphas);
  sort_unique(o.curve_lambdas);
  if (o.curve && o.curve_steps < o.steps) {
    std::fprintf(stderr, "td_random_walk: --curve-steps (%zu) must be at least --steps (%zu)\n", o.curve_steps,
                 o.steps);
    return 1;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "td_random_walk: %s\n", e.what());
    return 1;
  }
}
