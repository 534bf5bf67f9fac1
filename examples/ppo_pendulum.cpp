// Continuous control with memory: PPO with a Gaussian policy on Gymnasium's Pendulum-v1, with the
// angular velocity observed or hidden, and memories that recover it (frame stacks of 2 and 4
// observations, a bank of memory traces) or not (memoryless). See docs/experiments.md.
//
//   ppo_pendulum            # the sweep: velocity full and hidden x 8 memories x 10 seeds x 1 M steps
//   ppo_pendulum --quick    # velocity hidden, normalised traces against memoryless (run by ctest)
//   ppo_pendulum --play=0.5,-2,1 --start=3.1,-0.2   # replay torques, one line a step
//   ppo_pendulum --shard 1/4 --out s1                # one slice of the sweep (one of several machines)
//   ppo_pendulum --merge s0 s1 s2 s3 --out all       # the slices checked and summarized as one sweep
//
// Run j of a setting (its seed index) draws everything from streams of stream_key(seed, j): the
// environments' generators make_stream(key, i), the agent's make_stream(key, n_envs), the
// evaluations' make_stream(key, n_envs + 1). Every memory and observation of seed j sees the same
// streams, and the results do not depend on the thread count.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/experiment/bootstrap.hpp>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/statistics.hpp>
#include <memtrace/experiment/sweep_runner.hpp>
#include <memtrace/instruction_set.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/gru_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/loop/ppo_run.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using namespace memtrace;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
/// The Gaussian actor-critic, and the same heads on a GRU's state (a learned memory).
using Heads = GaussianActorCritic<float>;
using GruNetwork = GruActorCritic<float, Heads>;

/// A memory of the sweep: a kind, whether the agent normalises its features (the name with "+norm")
/// and for a GRU its state's size (gru64: the observation through a GRU of 64).
enum class Kind { memoryless, stack2, stack4, traces, gru };
const std::vector<std::pair<std::string, Kind>> kind_names{
    {"memoryless", Kind::memoryless}, {"stack2", Kind::stack2}, {"stack4", Kind::stack4}, {"traces", Kind::traces}};
struct MemoryChoice {
  Kind kind = Kind::traces;
  bool normalize = true;
  std::size_t hidden = 0;
};
const std::vector<std::size_t> gru_sizes{32, 64, 128};
std::string name_of(MemoryChoice m) {
  if (m.kind == Kind::gru) return "gru" + std::to_string(m.hidden) + (m.normalize ? "+norm" : "");
  for (const auto& [name, kind] : kind_names)
    if (kind == m.kind) return name + (m.normalize ? "+norm" : "");
  return "?";
}
MemoryChoice parse_memory(const std::string& text) {
  const bool normalize = text.ends_with("+norm");
  const std::string base = normalize ? text.substr(0, text.size() - 5) : text;
  for (const auto& [name, kind] : kind_names)
    if (name == base) return {kind, normalize};
  for (const std::size_t h : gru_sizes)
    if (base == "gru" + std::to_string(h)) return {Kind::gru, normalize, h};
  throw std::invalid_argument("unknown memory " + text +
                              " (memoryless, stack2, stack4, traces, gru32, gru64, gru128, each with +norm)");
}
std::vector<std::string> memory_flag_values() {
  std::vector<std::string> v;
  for (const auto& [name, kind] : kind_names) {
    v.push_back(name);
    v.push_back(name + "+norm");
  }
  for (const std::size_t h : gru_sizes) {
    v.push_back("gru" + std::to_string(h));
    v.push_back("gru" + std::to_string(h) + "+norm");
  }
  return v;
}

struct Options {
  std::vector<std::string> observations = {"full", "hidden"};
  std::vector<std::string> memories = {"memoryless+norm", "stack2+norm", "stack4+norm", "traces+norm",
                                       "memoryless",      "stack2",      "stack4",      "traces"};
  std::vector<double> lambdas = {0.0, 0.5, 0.8};
  std::size_t seeds = 10, steps = 1'000'000, seed = 0, threads = 0, eval_episodes = 20, curve_points = 20;
  PpoOptions ppo = recipe();
  std::string out = "ppo_pendulum";
  bool plot = true, quick = false;
  std::string play, start;
  Shard shard;                 // --shard: this machine's slice of the runs
  examples::SweepFlags split;  // --shard, --merge (the shards' folders), --allow-version-change
  examples::RunFlags run;      // --checkpoint-every, --stop-after
  CheckpointEvery checkpoint_every;
  Provenance provenance;

  /// The recipe that learns the pendulum in 1 M steps (docs/experiments.md): 16 environments x 64
  /// steps, 2 epochs of 4 minibatches (as light as the T-maze's), γ 0.9, lr 3e-3 annealed, no entropy
  /// bonus, rewards scaled by 0.1, time limits bootstrapped from the final observation (PpoOptions'
  /// default truncation).
  static PpoOptions recipe() {
    PpoOptions p;
    p.n_envs = 16;
    p.n_steps = 64;
    p.epochs = 2;
    p.minibatches = 4;
    p.discount = 0.9;
    p.learning_rate = 3e-3;
    p.ent_coef = 0.0;
    p.reward_scale = 0.1;
    return p;
  }
};

struct RunSpec {
  bool observe_velocity = true;
  MemoryChoice memory;
  std::size_t seed = 0;
};

struct RunResult {
  double train_return = 0, eval_return = 0, greedy_return = 0, seconds = 0, cpu_seconds = 0;
  std::vector<CurvePoint> curve;
};

/// Mean return of `episodes` (NaN if none).
double mean_return(const std::vector<EpisodeEnd>& episodes) {
  if (episodes.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (const EpisodeEnd& e : episodes) sum += e.episode_return;
  return sum / static_cast<double>(episodes.size());
}

/// One run of a memory M with the network Network (the Gaussian actor-critic, or a GRU under it): train
/// (resuming from, and writing, the checkpoint `where` names), then evaluate sampled and greedy.
/// std::nullopt: --stop-after stopped it.
template <class Network, class M>
std::optional<RunResult> run_with(const Options& o, const RunSpec& spec, const M& memory, const SweepRunContext& where,
                                  const std::string& identity) {
  PendulumOptions po;
  po.observe_velocity = spec.observe_velocity;
  const std::uint64_t key = stream_key(o.seed, spec.seed);
  PpoOptions p = o.ppo;
  p.normalize_features = spec.memory.normalize;
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < p.n_envs; ++i) gens.push_back(make_stream(key, i));
  Rollout rollout(std::vector<Pendulum>(p.n_envs, Pendulum(po)), std::vector<M>(p.n_envs, memory), std::move(gens));
  const std::uint64_t agent_seed = make_stream(key, p.n_envs)();
  using Agent = Ppo<Eigen::VectorXf, float, Network>;
  Agent agent = [&] {
    if constexpr (Agent::recurrent) {  // the GRU and its heads from stream n_envs + 3, a stream of their own
      GruNetwork nets(memory.dim(), Heads(spec.memory.hidden, 1, p.hidden_sizes, p.initial_log_std));
      DefaultGenerator init = make_stream(key, p.n_envs + 3);
      nets.initialize_orthogonal(init);
      return Agent(std::move(nets), p, agent_seed);
    } else {
      return Agent(memory.dim(), 1, p, agent_seed);
    }
  }();
  const std::size_t batch = p.n_envs * p.n_steps;
  LearningCurve curve(o.steps, batch, {.points = o.curve_points});
  // train_return: the mean return of the episodes of the last tenth of training, its sums kept in
  // the checkpoint (metadata late_sum, late_episodes) so that a resumed run counts them all.
  double late_sum = 0, late_episodes = 0;
  const std::size_t total = o.steps / batch * batch;
  const auto late = [&](const PpoStats& s) {
    if (s.env_steps > total - total / 10)  // the last tenth of training
      for (const EpisodeEnd& e : s.episodes) {
        late_sum += e.episode_return;
        ++late_episodes;
      }
  };
  PpoRunCheckpoint checkpoint(where.checkpoint, identity, agent, rollout, &curve, o.checkpoint_every);
  if (checkpoint.resume_or_start() == RunStart::resumed) {
    late_sum = parse_field<double>(checkpoint.metadata().at("late_sum"));
    late_episodes = parse_field<double>(checkpoint.metadata().at("late_episodes"));
  }
  StopAfter stop{o.run.stop_after};
  const auto save = [&](const PpoStats& s) {
    checkpoint.metadata() = {{"late_sum", csv_field(late_sum)}, {"late_episodes", csv_field(late_episodes)}};
    checkpoint(s);
  };
  if (!train_to(agent, rollout, o.steps, on_updates(curve, late, save, stop))) return std::nullopt;
  checkpoint.finish();  // the evaluations are still to come: a kill from here on does not train again
  RunResult r;
  r.train_return = late_episodes == 0 ? std::numeric_limits<double>::quiet_NaN() : late_sum / late_episodes;
  DefaultGenerator eval = make_stream(key, p.n_envs + 1);
  r.eval_return = mean_return(evaluate(agent, Pendulum(po), memory, eval, o.eval_episodes));
  r.greedy_return = mean_return(evaluate(agent, Pendulum(po), memory, eval, o.eval_episodes, ActionSelection::greedy));
  r.curve = curve.points();
  r.seconds = checkpoint.seconds();  // of every process that worked on the run
  r.cpu_seconds = checkpoint.cpu_seconds();
  return r;
}

std::optional<RunResult> run_one(const Options& o, const RunSpec& spec, const SweepRunContext& where,
                                 const std::string& identity) {
  const std::size_t d = spec.observe_velocity ? 3 : 2;
  switch (spec.memory.kind) {
    case Kind::memoryless:
      return run_with<Heads>(o, spec, TraceBank<dynamic, float>({0.0}, d), where, identity);
    case Kind::stack2:
      return run_with<Heads>(o, spec, FrameStack<Eigen::VectorXf>(2, d, WindowPadding::repeat_first), where, identity);
    case Kind::stack4:
      return run_with<Heads>(o, spec, FrameStack<Eigen::VectorXf>(4, d, WindowPadding::repeat_first), where, identity);
    case Kind::traces:
      return run_with<Heads>(o, spec, TraceBank<dynamic, float>(o.lambdas, d), where, identity);
    case Kind::gru:  // the observation (a trace of λ = 0), remembered by the network
      return run_with<GruNetwork>(o, spec, TraceBank<dynamic, float>({0.0}, d), where, identity);
  }
  return {};
}

/// The uniformly random policy's mean return (torques U[−2, 2]) over 1000 episodes: the bottom of
/// the gap a memory closes. The velocity does not matter to it.
double random_return(std::uint64_t seed) {
  Pendulum env;
  DefaultGenerator gen = make_stream(stream_key(seed, 1'000'000), 0);
  double sum = 0;
  const int episodes = 1000;
  for (int e = 0; e < episodes; ++e) {
    env.reset(gen);
    for (bool truncated = false; !truncated;) {
      const TimeStep<Pendulum::observation_type> s =
          env.step(Pendulum::action_type::Constant(4.0 * uniform_real(gen) - 2.0), gen);
      sum += s.reward;
      truncated = s.truncated;
    }
  }
  return sum / episodes;
}

/// Comma-separated numbers (negative ones too: --play=-1,2), all finite.
std::vector<double> numbers(const std::string& text, const char* flag) {
  std::vector<double> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    double x = 0;
    const auto [ptr, error] = std::from_chars(text.data() + begin, text.data() + end, x);
    if (error != std::errc() || ptr != text.data() + end || !std::isfinite(x))
      throw std::invalid_argument(std::string(flag) + " must be comma-separated finite numbers, got " + text);
    out.push_back(x);
    begin = end + 1;
  }
  return out;
}

/// --play: the torques applied one after the other from --start (or a start drawn from --seed),
/// one line a step, computed in double, until the replay ends or the episode is truncated.
int play(const Options& o) {
  Pendulum env;
  if (o.start.empty()) {
    DefaultGenerator gen(o.seed);
    env.reset(gen);
  } else {
    const std::vector<double> s = numbers(o.start, "--start");
    if (s.size() != 2) throw std::invalid_argument("--start takes THETA,THETA_DOT, got " + o.start);
    env.reset(s[0], s[1]);
  }
  std::size_t t = 0;
  for (const double u : numbers(o.play, "--play")) {
    const TimeStep<Pendulum::observation_type> step = env.step(u);
    std::printf("t=%zu theta=%.9g theta_dot=%.9g reward=%.9g truncated=%d\n", ++t, env.angle(), env.angular_velocity(),
                step.reward, step.truncated ? 1 : 0);
    if (step.truncated) break;
  }
  return 0;
}

/// What a GRU's runs depend on, for a sweep with one ("" otherwise: the folders of the other memories
/// keep their description).
std::string gru_description(const Options& o) {
  for (const std::string& m : o.memories)
    if (parse_memory(m).kind == Kind::gru)
      return "gru=the observation through torch.nn.GRU's cell, its state under the Gaussian heads; CleanRL's "
             "initialisation (orthogonal, gain 1, biases 0; stream n_envs+3); minibatches of whole environments\n";
  return "";
}

/// What the sweep's results depend on, for the results folder (a folder of other flags is refused).
std::string describe(const Options& o) {
  std::ostringstream d;
  d << "experiment=ppo_pendulum\nsteps=" << o.steps << "\nseed=" << o.seed << "\nlambdas=";
  for (const double l : o.lambdas) d << csv_field(l) << ' ';
  const PpoOptions& p = o.ppo;
  d << "\neval_episodes=" << o.eval_episodes << "\ncurve_points=" << o.curve_points << "\nn_envs=" << p.n_envs
    << "\nn_steps=" << p.n_steps << "\nepochs=" << p.epochs << "\nminibatches=" << p.minibatches
    << "\ndiscount=" << csv_field(p.discount) << "\ngae_lambda=" << csv_field(p.gae_lambda)
    << "\nlr=" << csv_field(p.learning_rate) << "\nent_coef=" << csv_field(p.ent_coef)
    << "\nreward_scale=" << csv_field(p.reward_scale) << "\ninitial_log_std=" << csv_field(p.initial_log_std)
    << "\nhidden=";
  for (const std::size_t h : p.hidden_sizes) d << h << ' ';
  // Always written: folders of 0.3, which truncated officially and wrote no line, are refused.
  d << "\ntruncation=" << truncation_name(p.truncation) << '\n'
    << examples::ppo_settings_changed(p, Options::recipe(),
                                      {"n_envs", "n_steps", "epochs", "minibatches", "gae_lambda", "learning_rate",
                                       "ent_coef", "reward_scale", "initial_log_std", "hidden", "truncation"})
    << gru_description(o) << "isa=" << instruction_set() << '\n';
  return d.str();
}

int sweep(const Options& o) {
  const auto start = Clock::now();
  const fs::path dir(o.out);
  const std::vector<std::string> runs_header{"observation", "memory",        "seed",    "steps",      "train_return",
                                             "eval_return", "greedy_return", "seconds", "cpu_seconds"};
  const std::vector<std::string> curves_header{"observation", "memory", "seed", "steps", "at_steps", "mean_return"};
  std::vector<RunSpec> specs;
  for (const std::string& obs : o.observations)
    for (const std::string& m : o.memories)
      for (std::size_t seed = 0; seed < o.seeds; ++seed) specs.push_back({obs == "full", parse_memory(m), seed});
  const auto key_of = [&](const RunSpec& r) {
    return csv_row(r.observe_velocity ? "full" : "hidden", name_of(r.memory), r.seed, o.steps);
  };
  // The plan: every run writes its row of runs.csv and one row of curves.csv per curve point.
  const std::vector<std::size_t> at = distinct_curve_steps(o.steps, o.ppo.n_envs * o.ppo.n_steps, o.curve_points);
  SweepPlan plan{describe(o), {{"runs.csv", runs_header, 4}, {"curves.csv", curves_header, 5}}, {}};
  for (const RunSpec& spec : specs) {
    SweepRun run{{{key_of(spec)}, {}}, 1.0};
    for (const std::size_t a : at) {
      run.keys[1].push_back(key_of(spec));
      run.keys[1].back().push_back(csv_field(a));
    }
    plan.runs.push_back(std::move(run));
  }
  const SweepOutcome outcome =
      run_sweep(examples::sweep_request(dir, o.shard, o.split, o.provenance), plan,
                [&](const SweepRunContext& c) -> std::optional<SweepRows> {
                  const RunSpec& spec = specs[c.index];
                  const std::optional<RunResult> r =
                      run_one(o, spec, c, plan.description + "run=" + sweep_run_name(key_of(spec)) + "\n");
                  if (!r) return std::nullopt;
                  SweepRows rows(2);
                  for (const CurvePoint& p : distinct_points(r->curve)) {
                    auto row = key_of(spec);
                    row.push_back(csv_field(p.env_steps));
                    row.push_back(std::isnan(p.mean_return()) ? std::string() : csv_field(p.mean_return()));
                    rows[1].push_back(std::move(row));
                  }
                  rows[0].push_back(key_of(spec));
                  for (const double x : {r->train_return, r->eval_return, r->greedy_return, r->seconds, r->cpu_seconds})
                    rows[0][0].push_back(csv_field(x));
                  return rows;
                },
                // checkpoints: a run resumes from its checkpoint even with --checkpoint-every 0
                {.threads = o.threads, .label = "ppo_pendulum runs", .checkpoints = true});
  if (const std::optional<int> status = examples::unfinished(outcome, "ppo_pendulum")) return *status;
  if (!o.shard.whole()) return 0;  // a shard writes its runs only: the summary needs every seed
  // summary.csv: one row per observation and memory. gap_closed: for a memory with the velocity
  // hidden, the fraction of the gap on train_return between the hidden memoryless agent of the same
  // normalisation (floor) and the same memory observing the velocity (ceiling) that it closes,
  // (R − R_floor) / (R_ceiling − R_floor), with a 95% percentile-bootstrap interval (10,000
  // resamples of each setting's seeds, from a stream of the memory's own).
  const double random = random_return(o.seed);
  const RunsBySetting runs(read_csv(dir / "runs.csv", 4), 4, 2, o.seeds);
  const auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::string summary =
      "observation,memory,seeds,steps,train_mean,train_ci_low,train_ci_high,eval_mean,eval_ci_low,eval_ci_high,"
      "greedy_mean,greedy_ci_low,greedy_ci_high,gap_closed,gap_ci_low,gap_ci_high,cpu_seconds\n";
  std::printf("random policy: mean return %.1f (1000 episodes)\n", random);
  std::printf("%-7s %-16s %6s %9s  %-24s %-24s %-24s %-20s %s\n", "obs", "memory", "seeds", "steps",
              "train return [95% CI]", "eval return [95% CI]", "greedy return [95% CI]", "gap closed [95% CI]",
              "CPU s a run");
  std::vector<std::string> meets;
  for (const std::string& obs : o.observations)
    for (const std::string& m : o.memories) {
      const MemoryChoice memory = parse_memory(m);
      const auto setting = csv_row(obs, name_of(memory), o.steps);
      const Summary t = summarize(runs.values(setting, 4)), e = summarize(runs.values(setting, 5)),
                    g = summarize(runs.values(setting, 6)), cpu = summarize(runs.values(setting, 8));
      const double nan = std::numeric_limits<double>::quiet_NaN();
      BootstrapInterval gap{nan, nan, nan};
      const std::string floor = name_of({Kind::memoryless, memory.normalize});
      if (obs == "hidden" && memory.kind != Kind::memoryless && has(o.observations, "full") && has(o.memories, floor)) {
        const std::vector<std::vector<double>> samples = {runs.values(setting, 4),
                                                          runs.values(csv_row("hidden", floor, o.steps), 4),
                                                          runs.values(csv_row("full", name_of(memory), o.steps), 4)};
        DefaultGenerator gen =
            make_stream(stream_key(o.seed, 2'000'000), 2 * static_cast<std::uint64_t>(memory.kind) +
                                                           (memory.normalize ? 1 : 0) + 1000 * memory.hidden);
        gap = percentile_bootstrap(
            std::span(samples), [](std::span<const double> r) { return (r[0] - r[1]) / (r[2] - r[1]); }, gen);
        if (gap.low >= 0.9) meets.push_back(name_of(memory));
      }
      const auto field = [](double x) { return std::isnan(x) ? std::string() : csv_field(x); };
      summary += csv_line(csv_row(obs, name_of(memory), o.seeds, o.steps, t.mean, t.ci_low, t.ci_high, e.mean, e.ci_low,
                                  e.ci_high, g.mean, g.ci_low, g.ci_high, field(gap.estimate), field(gap.low),
                                  field(gap.high), cpu.mean));
      char ct[64], ce[64], cg[64], cgap[64] = "";
      std::snprintf(ct, sizeof ct, "%.1f [%.1f, %.1f]", t.mean, t.ci_low, t.ci_high);
      std::snprintf(ce, sizeof ce, "%.1f [%.1f, %.1f]", e.mean, e.ci_low, e.ci_high);
      std::snprintf(cg, sizeof cg, "%.1f [%.1f, %.1f]", g.mean, g.ci_low, g.ci_high);
      if (!std::isnan(gap.estimate))
        std::snprintf(cgap, sizeof cgap, "%.2f [%.2f, %.2f]", gap.estimate, gap.low, gap.high);
      std::printf("%-7s %-16s %6zu %9zu  %-24s %-24s %-24s %-20s %.1f\n", obs.c_str(), name_of(memory).c_str(), o.seeds,
                  o.steps, ct, ce, cg, cgap, cpu.mean);
    }
  std::string met;
  for (const std::string& m : meets) met += " " + m;
  std::printf("closing at least 0.9 of the gap (the interval's lower end): %s\n", met.empty() ? " none" : met.c_str());
  summary += csv_line(csv_row("any", "random", 1000, 0, random, random, random, random, random, random, random, random,
                              random, std::string(), std::string(), std::string(), 0.0));
  write_text_atomically(dir / "summary.csv", summary);

  // learning_curves.csv: each curve point's mean return averaged over the seeds whose bin saw episodes.
  const RunsBySetting points(read_csv(dir / "curves.csv", 5), 5, 2, o.seeds);
  std::string curves = "observation,memory,at_steps,seeds_with_episodes,mean_return\n";
  for (const std::string& obs : o.observations)
    for (const std::string& m : o.memories)
      for (const std::size_t a : at) {
        const auto v = points.present_values(csv_row(obs, name_of(parse_memory(m)), o.steps, a), 5);
        const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
        curves += csv_line(csv_row(obs, name_of(parse_memory(m)), a, v.size(), v.empty() ? "" : csv_field(mean)));
      }
  write_text_atomically(dir / "learning_curves.csv", curves);
  std::printf("%zu runs in %.1f s; wrote %s\n", specs.size(),
              std::chrono::duration<double>(Clock::now() - start).count(), (dir / "summary.csv").c_str());
  if (!o.plot) return 0;
  std::string observations;
  for (const std::string& obs : o.observations) observations += (observations.empty() ? "" : " ") + obs;
  const bool drawn = examples::draw_figure(
      "ppo_pendulum.gp", dir / "ppo_pendulum.png",
      {{"csv", (dir / "learning_curves.csv").string()},
       {"observations", observations},
       {"random", csv_field(random)},
       {"subtitle", std::to_string(o.seeds) + " seeds, " + csv_field(static_cast<double>(o.steps) / 1e6) +
                        " M steps a run; the dashed line is the random policy"}});
  return drawn ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "PPO with a Gaussian policy on the pendulum (Gymnasium's Pendulum-v1), with the angular velocity observed\n"
      "or hidden, and memoryless, frame-stack and memory-trace agents. Default: the sweep of docs/experiments.md\n"
      "(full and hidden velocity x 8 memories x 10 seeds x 1 M steps, minutes on two cores)."};
  examples::cli_conventions(app, "ppo_pendulum");
  app.get_formatter()->column_width(34);
  const CLI::Validator positive_int =
      examples::number_check("an integer of at least 1", [](double x) { return x >= 1; });
  const CLI::Validator unit = examples::number_check("in [0, 1]", [](double x) { return x >= 0 && x <= 1; });
  app.add_option("--observations", o.observations, "full (cos θ, sin θ, θ̇) and/or hidden (cos θ, sin θ)")
      ->check(CLI::IsMember({"full", "hidden"}))
      ->expected(1, -1);
  app.add_option("--memories", o.memories,
                 "memoryless, stack2, stack4 (frame stacks of 2 and 4 observations), traces (a bank of --lambdas), "
                 "gru32, gru64, gru128 (the observation through a GRU of that state size); +norm: the agent "
                 "normalises its features")
      ->check(CLI::IsMember(memory_flag_values()))
      ->expected(1, -1);
  app.add_option("--lambdas", o.lambdas, "λ of the trace bank")
      ->check(examples::number_check("in [0, 1)", [](double x) { return x >= 0 && x < 1; }))
      ->expected(1, -1);
  app.add_option("--seeds", o.seeds, "Runs per setting (seeds 0..N-1)")
      ->check(examples::number_check("an integer in [2, 10^6] (a confidence interval needs two runs)",
                                     [](double x) { return x >= 2 && x <= 1e6; }));
  app.add_option("--steps", o.steps, "Environment steps a run (a multiple of n-envs x n-steps is used)")
      ->check(examples::number_check("in [1, 10^12]", [](double x) { return x >= 1 && x <= 1e12; }));
  app.add_option("--seed", o.seed, "Base seed")->check(examples::number_check("a non-negative integer", [](double x) {
    return x >= 0;
  }));
  app.add_option("--eval-episodes", o.eval_episodes, "Episodes of each final evaluation (sampled and greedy)")
      ->check(positive_int);
  app.add_option("--curve-points", o.curve_points, "Points of each run's learning curve")
      ->check(examples::number_check("an integer in [1, 10^4]", [](double x) { return x >= 1 && x <= 1e4; }));
  app.add_option("--discount", o.ppo.discount, "Discount γ")->check(unit);
  examples::add_ppo_flags(app, o.ppo, true);
  app.add_option("--out", o.out, "Output folder (a sweep resumes the runs it holds)");
  app.add_flag("!--no-plot", o.plot, "Write the CSV files only");
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")
      ->check(examples::number_check("in [0, 1024]", [](double x) { return x >= 0 && x <= 1024; }));
  app.add_flag("--quick", o.quick,
               "Seconds: the velocity hidden, normalised traces against the memoryless agent, 3 seeds x 1 M steps");
  examples::add_run_flags(app, o.run);
  examples::add_sweep_flags(app, o.split, "the runs i with i mod N = I", "runs.csv and curves.csv");
  app.add_option("--play", o.play,
                 "Replay torques U1,U2,... (one line a step: t, θ and θ̇ after the step, its reward, truncated); "
                 "write --play=-1,2 for a first negative torque")
      ->type_name("U1,U2,...");
  app.add_option("--start", o.start, "--play: the start THETA,THETA_DOT (default: drawn from --seed)")
      ->type_name("THETA,THETA_DOT");
  CLI11_PARSE(app, argc, argv);
  o.provenance = examples::build_provenance(argc, argv);
  try {
    if (!o.play.empty()) return play(o);
    if (app.count("--start") != 0) throw std::invalid_argument("--start is the start of --play");
    o.shard = examples::parse_sweep_flags(app, o.split);
    o.checkpoint_every = parse_checkpoint_every(o.run.checkpoint_every, "--checkpoint-every");
    if (o.quick) {  // docs/experiments.md: calibrated on seeds 0-9
      if (app.count("--observations") == 0) o.observations = {"hidden"};
      if (app.count("--memories") == 0) o.memories = {"traces+norm", "memoryless+norm"};
      if (app.count("--seeds") == 0) o.seeds = 3;
      if (app.count("--steps") == 0) o.steps = 1'000'000;
      if (app.count("--out") == 0) o.out = "ppo_pendulum_quick";
    }
    return sweep(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ppo_pendulum: %s\n", e.what());
    return 1;
  }
}
