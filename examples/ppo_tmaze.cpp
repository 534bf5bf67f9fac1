// The paper's second experiment (§6 "Proximal policy optimization", Fig. 5): PPO in the Minigrid
// T-maze with memory traces against frame stacking, as the official code runs it
// (docs/minigrid-tmaze.md). See docs/experiments.md.
//
//   ppo_tmaze                         # the official README run: corridor 64, 20.48 M steps, traces {0, 0.985}
//   ppo_tmaze --normalize             # the same with memtrace's feature normalisation (FeatureNormalizer)
//   ppo_tmaze --memory frame-stack    # the same with a frame stack of 65 frames ("fails to learn")
//   ppo_tmaze --play 0000000200 --cue green --sides 1   # replay actions, print grid and view
//   ppo_tmaze --figure                # Figure 5: success rate against corridor length, 5 memories, two recipes
//   ppo_tmaze --long                  # corridors 64, 128, 256: hours, in the background
//   ppo_tmaze --quick                 # normalised traces at corridor 8, in well under a minute (run by ctest)
//   ppo_tmaze --paper --shard 3/50 --out s3            # one slice of a sweep (one of several machines)
//   ppo_tmaze --paper --merge s0 s1 ... s49 --out paper   # the slices checked and summarized as one run
//
// Run j of a sweep (its seed index) draws everything from streams of stream_key(seed, j): the
// environments' generators make_stream(key, i), the agent's make_stream(key, n_envs), the
// evaluation's make_stream(key, n_envs + 1). Every memory and corridor of seed j therefore sees the
// same streams, and the results do not depend on the thread count or on the shard that runs them.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/statistics.hpp>
#include <memtrace/experiment/sweep_runner.hpp>
#include <memtrace/learn/gru_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_weights.hpp>
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

using memtrace::examples::number_check;

using namespace memtrace;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

enum class MemoryKind { trace, trace_slow, memoryless, frame_stack, gru };
const std::vector<std::pair<std::string, MemoryKind>> memory_names{{"trace", MemoryKind::trace},
                                                                   {"trace-slow", MemoryKind::trace_slow},
                                                                   {"memoryless", MemoryKind::memoryless},
                                                                   {"frame-stack", MemoryKind::frame_stack}};
/// A sweep's memory: a kind, for traces whether the agent normalises its features (the name
/// with "+norm": PpoOptions::normalize_features), for a GRU its state's size (gru64: 64).
struct MemoryChoice {
  MemoryKind kind = MemoryKind::trace;
  bool normalize = false;
  std::size_t hidden = 0;
};
const std::vector<std::string> memory_flag_values{
    "trace", "trace+norm", "trace-slow", "trace-slow+norm", "memoryless", "frame-stack", "gru32", "gru64", "gru128"};
bool is_trace(MemoryKind kind) { return kind == MemoryKind::trace || kind == MemoryKind::trace_slow; }
std::string name_of(MemoryChoice m) {
  if (m.kind == MemoryKind::gru) return "gru" + std::to_string(m.hidden);
  for (const auto& [name, k] : memory_names)
    if (k == m.kind) return name + (m.normalize ? "+norm" : "");
  return "?";
}
MemoryChoice parse_memory(const std::string& name) {
  for (const std::size_t hidden : {32u, 64u, 128u})
    if (name == "gru" + std::to_string(hidden)) return {MemoryKind::gru, false, hidden};
  const bool normalize = name.ends_with("+norm");
  const std::string base = normalize ? name.substr(0, name.size() - 5) : name;
  for (const auto& [n, k] : memory_names)
    if (n == base && (!normalize || is_trace(k))) return {k, normalize};
  throw std::invalid_argument("unknown memory '" + name + "'");
}

struct Options {
  /// The official recipe (docs/minigrid-tmaze.md, "PPO recipe"): PpoOptions' defaults with the
  /// official code's truncation.
  static PpoOptions recipe() {
    PpoOptions p;
    p.truncation = TruncationMode::official;
    return p;
  }
  // One run (the official README run by default).
  MemoryChoice memory;
  std::vector<double> lambdas{0.0, 0.985};  // --memory trace; --figure uses {0, (k-1)/k} unless given
  std::size_t frames = 0;                   // --memory frame-stack: 0 means k + 1 (the official Window(m = k))
  std::size_t corridor = 64;
  std::size_t steps = 20'480'000;
  std::uint64_t seed = 42;
  double discount = 0.99;
  std::size_t eval_episodes = 100;
  std::size_t eval_steps = 10'000'000;  // the evaluation's step cap (binds only beyond corridor 128)
  bool eval_greedy = false;             // evaluate the most probable action instead of sampling
  double freeze_normalizer_at = 1.0;    // +norm: freeze the statistics after this fraction of the updates
  double gru_update_bias = 0;           // a GRU's update-gate bias b_iz after initialisation (0: CleanRL's)
  std::string load_agent, save_agent;   // one run: start from saved weights, save the trained ones
  examples::RunFlags run;               // --checkpoint-every, --stop-after
  CheckpointEvery checkpoint_every;     // --checkpoint-every, read
  PpoOptions ppo = recipe();            // every PPO constant (its discount is set from --discount or the sweep's)
  std::string out = "ppo_tmaze_out";
  bool plot = true;
  std::size_t threads = 0;
  // --play
  std::string play;
  std::string cue = "green";
  std::size_t sides = 1;
  // Sweeps.
  bool figure = false, quick = false, paper = false, long_corridors = false;
  Shard shard;                 // --shard: this machine's slice of the sweep's runs
  examples::SweepFlags split;  // --shard, --merge (the shards' folders), --allow-version-change
  std::vector<std::size_t> corridors{8, 16, 32, 64};
  std::vector<std::string> memories{"trace", "trace+norm", "trace-slow", "memoryless", "frame-stack"};
  std::vector<double> discounts{0.99};
  std::size_t seeds = 5;
  std::vector<std::size_t> sweep_steps;  // per corridor (one value: all corridors)
  std::size_t curve_points = 20;
  Provenance provenance;  // what produced the results (provenance.txt)
};

/// The λ_k = (k - 1)/k of the paper's Fig. 5.
double lambda_of(std::size_t k) { return static_cast<double>(k - 1) / static_cast<double>(k); }

/// A run's n_steps: the recipe's, and for a GRU at least 2(k + 2), so that a rollout segment holds
/// a whole shortest episode (the cue and the decision inside one sequence: the gradient through
/// time reaches the cue).
std::size_t n_steps_of(const Options& o, MemoryChoice memory, std::size_t k) {
  return memory.kind == MemoryKind::gru ? std::max(o.ppo.n_steps, 2 * (k + 2)) : o.ppo.n_steps;
}
std::size_t batch_of(const Options& o, MemoryChoice memory, std::size_t k) {
  return o.ppo.n_envs * n_steps_of(o, memory, k);
}

/// One run of a sweep.
struct RunSpec {
  MemoryChoice memory;
  std::size_t corridor;
  double discount;
  std::size_t seed;  // index: the run's streams are stream_key(Options::seed, seed)
  std::size_t steps;
};

const std::vector<std::string> diagnostics_columns{"updates",       "entropy",   "value_loss",
                                                   "advantage_std", "approx_kl", "clip_fraction"};

/// An evaluation's numbers.
struct Evaluation {
  double success = 0;  // successes / eval_episodes (episodes cut off by the step cap are failures)
  double goal = 0;     // evaluation episodes that reached either goal / eval_episodes (0: collapsed)
  std::size_t steps = 0;
};

struct RunResult {
  double train_success = 0;  // over all training episodes
  double eval_success = 0;   // Evaluation::success of the evaluation --eval-greedy chooses
  double eval_goal = 0;
  std::size_t eval_steps = 0;
  Evaluation other;    // a single run's evaluation with the other action selection
  TensorFile weights;  // a single run's trained agent, for --save-agent
  std::size_t train_episodes = 0;
  double seconds = 0;             // wall time
  double cpu_seconds = 0;         // CPU time of the run's thread
  std::vector<CurvePoint> curve;  // success and diagnostics since the last point
};

/// Trains one agent with `memory` (copied into every environment), or loads it (--load-agent) and
/// trains it on, evaluates it and, in a single run, evaluates it with the other action selection
/// too and keeps its weights (--save-agent). With a `checkpoint` path the run resumes from the
/// checkpoint there (of the run `identity`: another run's is refused) and writes its own as
/// --checkpoint-every says. std::nullopt: --stop-after stopped it.
template <class Network, class M>
std::optional<RunResult> train_with(const Options& o, const RunSpec& spec, const M& memory, bool single,
                                    const fs::path& checkpoint, const std::string& identity,
                                    const std::function<void()>& ready) {
  using Phi = features_t<M>;
  using Agent = Ppo<Phi, float, Network>;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  PpoOptions po = o.ppo;
  po.discount = spec.discount;
  po.normalize_features = spec.memory.normalize;
  po.n_steps = n_steps_of(o, spec.memory, spec.corridor);
  const std::uint64_t key = stream_key(o.seed, spec.seed);
  std::vector<MinigridTMaze> envs(po.n_envs, MinigridTMaze(spec.corridor));
  std::vector<M> memories(po.n_envs, memory);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < po.n_envs; ++i) gens.push_back(make_stream(key, i));
  Rollout rollout(std::move(envs), std::move(memories), std::move(gens));
  // The paper's networks from stream n_envs; a GRU's from stream n_envs + 3 (its own), the agent's
  // permutations from stream n_envs as for the others.
  Agent agent = [&] {
    if constexpr (Agent::recurrent) {
      GruActorCritic<float> nets(memory.dim(), minigrid::num_actions, spec.memory.hidden, po.hidden_sizes);
      DefaultGenerator init = make_stream(key, po.n_envs + 3);
      nets.initialize_orthogonal(init);
      const auto h = static_cast<Eigen::Index>(spec.memory.hidden);
      nets.gru().input_layer().bias(0).segment(h, h).setConstant(static_cast<float>(o.gru_update_bias));
      return Agent(std::move(nets), po, make_stream(key, po.n_envs)());
    } else {
      return Agent(memory.dim(), minigrid::num_actions, po, make_stream(key, po.n_envs)());
    }
  }();
  if (!o.load_agent.empty()) load_ppo_weights(fs::path(o.load_agent), agent);  // a fresh optimiser

  // Whole updates only: the steps actually taken (none: --load-agent with --steps 0).
  const std::size_t batch = po.n_envs * po.n_steps, total = spec.steps / batch * batch;
  if (total == 0 && spec.steps != 0)
    throw std::invalid_argument("--steps " + std::to_string(spec.steps) +
                                " is less than one update of n_envs x n_steps = " + std::to_string(batch) + " steps");
  RunResult result;
  // Learning curve: o.curve_points points evenly spaced in steps; each the success rate of the
  // episodes that ended since the previous point (reward 1 exactly on the success cell).
  LearningCurve curve(std::max(total, batch), batch, {.points = o.curve_points, .success_return = 0.5});
  std::optional<PpoRunCheckpoint<Agent, decltype(rollout)>> saved;
  if (total > 0) {
    if (!checkpoint.empty()) {
      saved.emplace(checkpoint, identity, agent, rollout, &curve, o.checkpoint_every);
      const RunStart found = saved->resume_or_start();
      if (found == RunStart::resumed && single)
        std::printf("resumed from %s after %zu updates\n", checkpoint.c_str(), agent.updates());
      if (found == RunStart::restarted)  // the machine crashed while writing it
        std::fprintf(stderr, "ppo_tmaze: %s cannot be resumed (%s); the run starts again\n", checkpoint.c_str(),
                     saved->damage().c_str());
    }
  }
  if (ready) ready();  // the agent is set up (its weights loaded, its checkpoint resumed): nothing refused it
  if (total > 0) {
    // Progress on stderr: on a terminal in place, into a log a line every 30 s.
    TrainingProgress progress(total, {.label = "ppo_tmaze", .unit = "steps", .log_interval = 30}, &curve, single);
    FreezeNormalizerAt freeze(agent, o.freeze_normalizer_at, total / batch);
    StopAfter stop{o.run.stop_after};
    const auto save = [&](const PpoStats& s) {
      if (saved) (*saved)(s);
    };
    if (!train_to(agent, rollout, total, on_updates(curve, freeze, progress, save, stop))) return std::nullopt;
    if (saved) saved->finish();  // the evaluation and the files are still to come: a kill does not train again
    progress.finish(total);
    result.train_episodes = curve.episodes_ended();
    result.train_success = curve.episodes_ended() == 0 ? 0.0 : curve.success_rate();
    result.curve = curve.points();
  }
  const auto evaluation = [&](ActionSelection selection, std::size_t stream) {
    DefaultGenerator eval_gen = make_stream(key, stream);
    const auto episodes =
        evaluate(agent, MinigridTMaze(spec.corridor), memory, eval_gen, o.eval_episodes, o.eval_steps, selection);
    Evaluation e;
    std::size_t successes = 0, goals = 0;
    for (const EpisodeEnd& end : episodes) {
      successes += end.episode_return > 0.5;
      goals += end.terminated;  // only a goal terminates an episode
      e.steps += end.length;
    }
    if (episodes.size() < o.eval_episodes) e.steps = o.eval_steps;  // the cap bound
    e.success = static_cast<double>(successes) / static_cast<double>(o.eval_episodes);
    e.goal = static_cast<double>(goals) / static_cast<double>(o.eval_episodes);
    return e;
  };
  const ActionSelection chosen = o.eval_greedy ? ActionSelection::greedy : ActionSelection::sample;
  const Evaluation e = evaluation(chosen, po.n_envs + 1);
  result.eval_success = e.success;
  result.eval_goal = e.goal;
  result.eval_steps = e.steps;
  result.seconds = saved ? saved->seconds() : std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = saved ? saved->cpu_seconds() : thread_cpu_seconds() - cpu_start;
  if (single) {  // not timed, on a stream of its own
    result.other = evaluation(o.eval_greedy ? ActionSelection::sample : ActionSelection::greedy, po.n_envs + 2);
    if (!o.save_agent.empty()) result.weights = ppo_weights(agent);  // written after the run's files
  }
  return result;
}

constexpr std::size_t view_dim = MinigridTMaze::observation_dim;

std::optional<RunResult> run_one(const Options& o, const RunSpec& spec, const std::vector<double>& lambdas,
                                 std::size_t frames, bool progress, const fs::path& checkpoint,
                                 const std::string& identity, const std::function<void()>& ready = {}) {
  switch (spec.memory.kind) {
    case MemoryKind::trace:
    case MemoryKind::trace_slow:
      // Non-episodic traces of the official code: reset to 0, then the first view (TraceInit::zero).
      return train_with<ActorCritic<float>>(o, spec, TraceBank<dynamic, float>(lambdas, view_dim, TraceInit::zero),
                                            progress, checkpoint, identity, ready);
    case MemoryKind::memoryless:
      return train_with<ActorCritic<float>>(o, spec, FrameStack<MultiHot<9>>(1, view_dim, WindowPadding::zero),
                                            progress, checkpoint, identity, ready);
    case MemoryKind::frame_stack:
      return train_with<ActorCritic<float>>(o, spec, FrameStack<MultiHot<9>>(frames, view_dim, WindowPadding::zero),
                                            progress, checkpoint, identity, ready);
    case MemoryKind::gru:  // the memoryless view, remembered by the network
      return train_with<GruActorCritic<float>>(o, spec, FrameStack<MultiHot<9>>(1, view_dim, WindowPadding::zero),
                                               progress, checkpoint, identity, ready);
  }
  throw std::logic_error("unknown memory");
}

/// The memory's λ (traces) and frames (frame stacks) of a sweep's run at corridor k.
std::vector<double> sweep_lambdas(const Options& o, MemoryChoice memory, std::size_t k, bool lambdas_given) {
  const MemoryKind kind = memory.kind;
  if (kind == MemoryKind::trace) return lambdas_given ? o.lambdas : std::vector<double>{0.0, lambda_of(k)};
  return {lambda_of(k)};  // trace-slow
}
std::size_t frames_of(const Options& o, std::size_t k) { return o.frames != 0 ? o.frames : k + 1; }

/// A run's arithmetic, in multiply-adds (640 per active input and 59,136 per step:
/// docs/minigrid-tmaze.md, "Arithmetic per step"): traces are dense (45 inputs per λ), frame stacks
/// cost their 9 active cells per frame.
double run_cost(const Options& o, const RunSpec& r, bool lambdas_given) {
  if (r.memory.kind == MemoryKind::gru) {  // acting, then 2 epochs of forward and backward (about 3 forwards)
    const auto h = static_cast<double>(r.memory.hidden);
    return static_cast<double>(r.steps) * 7.0 * (3.0 * h * (9.0 + h) + 2.0 * (64.0 * h + 64.0 * 64.0 + 64.0 * 4.0));
  }
  double inputs = 9.0;  // memoryless: one view
  if (is_trace(r.memory.kind))
    inputs = 45.0 * static_cast<double>(sweep_lambdas(o, r.memory, r.corridor, lambdas_given).size());
  if (r.memory.kind == MemoryKind::frame_stack) inputs = 9.0 * static_cast<double>(frames_of(o, r.corridor));
  return static_cast<double>(r.steps) * (59136.0 + 640.0 * inputs);
}

// ---------------------------------------------------------------------------------------------
// --play

int play(const Options& o) {
  MinigridTMaze env(o.corridor);
  const std::size_t cue = o.cue == "green" ? minigrid::green : minigrid::blue;
  env.reset(cue, o.sides);
  const auto view = [&] {
    std::string v;
    for (const std::size_t tile : env.view()) v += static_cast<char>('0' + tile);
    return v;
  };
  const auto line = [&](std::size_t t, long action, double reward, bool terminated, bool truncated) {
    std::printf("t=%zu action=%ld row=%zu col=%zu dir=%zu reward=%s terminated=%d truncated=%d view=%s\n", t, action,
                env.row(), env.col(), env.direction(), csv_field(reward).c_str(), terminated ? 1 : 0, truncated ? 1 : 0,
                view().c_str());
    std::fprintf(stderr, "%s%s", env.render().c_str(), env.render_view().c_str());  // stdout: one line a step
  };
  line(0, -1, 0.0, false, false);
  std::size_t t = 0;
  for (const char c : o.play) {
    const auto u = static_cast<Action>(c - '0');
    const TimeStep<MultiHot<9>> step = env.step(u);
    line(++t, static_cast<long>(u), step.reward, step.terminated, step.truncated);
    if (step.terminated || step.truncated) break;
  }
  return 0;
}

/// A success rate of the CSV files; NaN (a bin without episodes) is an empty field.
std::string field(double x) { return std::isnan(x) ? std::string() : csv_field(x); }

/// diagnostics.csv's numbers of one curve point (empty fields when no update fell in it).
std::vector<std::string> diagnostics_row(const CurvePoint& p) {
  std::vector<std::string> row{csv_field(p.updates)};
  for (const double x : {p.entropy, p.value_loss, p.advantage_std, p.approx_kl, p.clip_fraction})
    row.push_back(p.updates == 0 ? std::string() : csv_field(x));
  return row;
}

std::string experiment_description(const Options& o, bool lambdas_given);

// ---------------------------------------------------------------------------------------------
// One run (the README run)

int single(const Options& o) {
  const fs::path dir(o.out);
  const RunSpec spec{o.memory, o.corridor, o.discount, 0, o.steps};
  const std::vector<double> lambdas =
      o.memory.kind == MemoryKind::trace_slow ? std::vector<double>{lambda_of(o.corridor)} : o.lambdas;
  const std::size_t frames = frames_of(o, o.corridor);
  std::printf("PPO in the Minigrid T-maze: corridor %zu, %s", o.corridor, name_of(o.memory).c_str());
  if (is_trace(o.memory.kind)) {
    std::printf(" (lambdas");
    for (double l : lambdas) std::printf(" %s", csv_field(l).c_str());
    std::printf(")");
  }
  if (o.memory.kind == MemoryKind::frame_stack) std::printf(" (%zu frames)", frames);
  std::printf(", %zu steps, discount %s, seed %llu, %s build\n", o.steps, csv_field(o.discount).c_str(),
              static_cast<unsigned long long>(o.seed), instruction_set().c_str());
  // What this run is, before any work: its flags' meaning, as a sweep's experiment.txt says.
  Options described = o;
  described.lambdas = lambdas;  // trace-slow runs with (k - 1)/k
  std::ostringstream what;
  what << experiment_description(described, true) << "memory=" << name_of(o.memory) << "\ncorridor=" << o.corridor
       << "\nsteps=" << o.steps << "\ndiscount=" << csv_field(o.discount) << '\n'
       << (o.load_agent.empty() ? "" : "load_agent=" + o.load_agent + "\n");
  // A killed run resumes from its checkpoint (--checkpoint-every), which is removed once its files
  // are written; another run's checkpoint is refused before anything in the folder changes.
  const fs::path checkpoint = dir / "checkpoint.safetensors";
  if (o.steps != 0) (void)check_run_checkpoint(checkpoint, what.str());  // --steps 0 trains nothing
  // The folder is written once the run is set up: a run refused before (--load-agent of another
  // memory, say) writes nothing to it.
  const auto ready = [&] {
    fs::create_directories(dir);
    record_provenance(dir, o.provenance, true);  // a single run rewrites its files
    write_text_atomically(dir / "run.txt", what.str());
  };
  const std::optional<RunResult> result =
      run_one(o, spec, lambdas, frames, true, o.steps != 0 ? checkpoint : fs::path(), what.str(),
              ready);  // resumed even with --checkpoint-every 0
  if (!result) {
    std::printf("stopped after update %zu (--stop-after); run it again without --stop-after to resume from %s\n",
                o.run.stop_after, fs::exists(checkpoint) ? checkpoint.c_str() : "the start (no checkpoint yet)");
    return 3;
  }
  const RunResult& r = *result;
  // A single run's diagnostics.csv has explained_variance too (a sweep's keeps the columns its
  // stored folders have, so that they resume).
  std::vector<std::string> columns = diagnostics_columns;
  columns.push_back("explained_variance");
  std::string curve = "steps,success\n", diagnostics = "steps," + csv_line(columns);
  for (const CurvePoint& p : r.curve) {
    curve += csv_field(p.env_steps) + "," + field(p.success_rate()) + "\n";
    std::vector<std::string> row = diagnostics_row(p);
    row.push_back(p.updates == 0 ? std::string() : field(p.explained_variance));
    diagnostics += csv_field(p.env_steps) + "," + csv_line(row);
  }
  write_text_atomically(dir / "curve.csv", curve);
  write_text_atomically(dir / "diagnostics.csv", diagnostics);
  if (o.steps != 0) fs::remove(checkpoint);  // --steps 0 trained nothing, and leaves any checkpoint be
  if (o.steps == 0)
    std::printf("training: none (the agent of --load-agent, evaluated)");
  else
    std::printf("training: %zu episodes, success rate %.3f over all of them", r.train_episodes, r.train_success);
  if (!r.curve.empty() && !std::isnan(r.curve.back().success_rate()))
    std::printf(", %.3f over the last %.0f%% of the steps", r.curve.back().success_rate(),
                100.0 / static_cast<double>(r.curve.size()));
  std::printf("\n");
  const auto print_evaluation = [&](bool greedy, const Evaluation& e) {
    std::printf("evaluation (%zu episodes, %s policy, %zu steps): success rate %.2f, a goal reached in %.2f\n",
                o.eval_episodes, greedy ? "greedy" : "stochastic", e.steps, e.success, e.goal);
  };
  print_evaluation(o.eval_greedy, {r.eval_success, r.eval_goal, r.eval_steps});
  print_evaluation(!o.eval_greedy, r.other);
  std::printf("%.1f s, %.1f s of CPU (%.0fk steps/s, evaluation included); wrote %s and %s\n", r.seconds, r.cpu_seconds,
              static_cast<double>(o.steps / batch_of(o, o.memory, o.corridor) * batch_of(o, o.memory, o.corridor)) /
                  r.seconds / 1e3,
              (dir / "curve.csv").c_str(), (dir / "diagnostics.csv").c_str());
  if (!o.save_agent.empty()) {
    write_safetensors(o.save_agent, r.weights);
    std::printf("wrote the agent to %s\n", o.save_agent.c_str());
  }
  if (o.plot && o.steps > 0) {  // --steps 0 has no curve
    if (!examples::draw_figure("ppo_tmaze_curve.gp", dir / "ppo_tmaze_curve.png",
                               {{"csv", (dir / "curve.csv").string()},
                                {"memory", name_of(o.memory)},
                                {"title", "PPO, corridor " + std::to_string(o.corridor) + ", " + name_of(o.memory)}}))
      return 2;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Sweeps: --figure, --quick, --paper

/// Steps of a sweep's runs at corridor k: one value for all corridors, or one per corridor.
std::size_t steps_of(const Options& o, std::size_t corridor_index) {
  return o.sweep_steps.size() == 1 ? o.sweep_steps.front() : o.sweep_steps[corridor_index];
}

/// What a GRU's runs depend on, for an experiment with one ("" otherwise, so that the folders of
/// the other memories keep their description).
std::string gru_description(const Options& o) {
  bool gru = o.memory.kind == MemoryKind::gru;
  for (const std::string& name : o.memories) gru = gru || parse_memory(name).kind == MemoryKind::gru;
  if (!gru) return "";
  return "gru=the memoryless view through torch.nn.GRU's cell, its state under the hidden layers; CleanRL's "
         "initialisation (orthogonal, gain 1, biases 0; stream n_envs+3); minibatches of whole environments\n"
         "gru_n_steps=max(n_steps, 2(k+2))\n" +
         (o.gru_update_bias != 0 ? "gru_update_bias=" + csv_field(o.gru_update_bias) + "\n" : std::string());
}

/// What a sweep's runs depend on besides their keys; a results folder holds one experiment.
std::string experiment_description(const Options& o, bool lambdas_given) {
  const PpoOptions& p = o.ppo;
  std::ostringstream s;
  s << "experiment=ppo_tmaze\nenvironment=MinigridTMaze\nseed=" << o.seed << "\neval_episodes=" << o.eval_episodes
    << "\nn_envs=" << p.n_envs << "\nn_steps=" << p.n_steps << "\ngae_lambda=" << csv_field(p.gae_lambda)
    << "\nepochs=" << p.epochs << "\nminibatches=" << p.minibatches << "\nclip=" << csv_field(p.clip_epsilon)
    << "\nvf_coef=" << csv_field(p.vf_coef) << "\nent_coef=" << csv_field(p.ent_coef)
    << "\nmax_grad_norm=" << csv_field(p.max_grad_norm) << "\nlearning_rate=" << csv_field(p.learning_rate)
    << "\nanneal_lr=" << p.anneal_lr << "\nhidden=";
  for (std::size_t h : p.hidden_sizes) s << h << ' ';
  s << "\ntruncation=" << truncation_name(p.truncation) << "\ntrace_lambdas=";
  if (lambdas_given)
    for (double l : o.lambdas) s << csv_field(l) << ' ';
  else
    s << "0 (k-1)/k";
  s << "\nframes=" << (o.frames != 0 ? std::to_string(o.frames) : std::string("k+1"))
    << "\ncurve_points=" << o.curve_points
    << "\nmemory_init=trace zero (non-episodic), frame stack zero-padded, reset at every episode start"
    << "\neval_steps=" << o.eval_steps << (o.eval_greedy ? "\nevaluation=greedy" : "")
    << (o.freeze_normalizer_at < 1.0 ? "\nfreeze_normalizer_at=" + csv_field(o.freeze_normalizer_at) : "")
    << "\nnormalizer=epsilon " << csv_field(p.normalizer.epsilon) << " clip " << csv_field(p.normalizer.clip)
    << " (memories named +norm)\n"
    << gru_description(o)
    << examples::ppo_settings_changed(
           p, Options::recipe(),
           {"n_envs", "n_steps", "gae_lambda", "epochs", "minibatches", "clip", "vf_coef", "ent_coef", "max_grad_norm",
            "learning_rate", "anneal_lr", "hidden", "truncation"})
    << "isa=" << instruction_set() << '\n';  // float sums round differently with AVX2 and FMA
  return s.str();
}

/// The median of xs (the mean of the two middle ones for an even count); NaN for none.
double median(std::vector<double> xs) {
  if (xs.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(xs.begin(), xs.end());
  const std::size_t m = xs.size() / 2;
  return xs.size() % 2 == 1 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

/// time_to_success.csv: per memory, corridor and γ, the runs' mean speed (steps run per CPU second,
/// the evaluation included) and when their training curves first reach a success rate of 0.9: how
/// many runs do, and the median over those of the steps and of the CPU seconds (a run's CPU time
/// spread evenly over its steps, as in learning_curves.csv) at that point.
std::string time_to_success(const Options& o, const std::vector<MemoryChoice>& kinds, const RunsBySetting& runs,
                            const RunsBySetting& points) {
  std::string out =
      "memory,corridor,discount,seeds,steps,steps_per_cpu_second,reached_0.9,median_steps_to_0.9,"
      "median_cpu_seconds_to_0.9\n";
  for (std::size_t c = 0; c < o.corridors.size(); ++c)
    for (const MemoryChoice kind : kinds)
      for (double discount : o.discounts) {
        const std::size_t k = o.corridors[c], batch = batch_of(o, kind, k), steps = steps_of(o, c);
        const auto run = static_cast<double>(steps / batch * batch);
        const std::vector<double> cpu = runs.values(csv_row(name_of(kind), k, steps, discount), 9);
        double rate = 0;
        for (const double x : cpu) rate += run / x / static_cast<double>(cpu.size());
        std::vector<double> first(o.seeds, std::numeric_limits<double>::quiet_NaN());
        for (const std::size_t a : distinct_curve_steps(steps, batch, o.curve_points)) {
          const std::vector<std::size_t> rows = points.rows(csv_row(name_of(kind), k, steps, discount, a));
          for (std::size_t seed = 0; seed < rows.size(); ++seed) {
            const std::string& success = points.table().rows[rows[seed]][6];
            if (std::isnan(first[seed]) && !success.empty() && parse_field<double>(success) >= 0.9)
              first[seed] = static_cast<double>(a);
          }
        }
        std::vector<double> to_steps, to_cpu;
        for (std::size_t seed = 0; seed < first.size(); ++seed)
          if (!std::isnan(first[seed])) {
            to_steps.push_back(first[seed]);
            to_cpu.push_back(cpu[seed] * first[seed] / run);
          }
        out += csv_line(csv_row(name_of(kind), k, discount, o.seeds, steps, rate, to_steps.size(),
                                field(median(to_steps)), field(median(to_cpu))));
      }
  return out;
}

int sweep(const Options& o, bool lambdas_given) {
  const auto start = Clock::now();
  const fs::path dir(o.out);
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw std::runtime_error("--out " + dir.string() + " is a file, not a folder");
  const std::string description = experiment_description(o, lambdas_given);
  const std::vector<std::string> runs_header{"memory",        "corridor",     "seed",      "steps",   "discount",
                                             "train_success", "eval_success", "eval_goal", "seconds", "cpu_seconds"};
  const std::vector<std::string> curves_header{"memory",   "corridor", "seed",   "steps",
                                               "discount", "at_steps", "success"};
  std::vector<std::string> diagnostics_header{"memory", "corridor", "seed", "steps", "discount", "at_steps"};
  diagnostics_header.insert(diagnostics_header.end(), diagnostics_columns.begin(), diagnostics_columns.end());

  std::vector<MemoryChoice> kinds;
  for (const std::string& name : o.memories) kinds.push_back(parse_memory(name));
  // Runs in a fixed order: γ, corridor, memory, seed (run = setting · seeds + seed). Shard I of N
  // runs the runs i with i mod N = I: ⌊S/N⌋ or ⌈S/N⌉ of the S seeds of every setting, so shards of
  // cheap and expensive settings alike take about the same time.
  std::vector<RunSpec> specs;
  for (double discount : o.discounts)
    for (std::size_t c = 0; c < o.corridors.size(); ++c)
      for (const MemoryChoice kind : kinds)
        for (std::size_t seed = 0; seed < o.seeds; ++seed)
          specs.push_back({kind, o.corridors[c], discount, seed, steps_of(o, c)});
  const auto key_of = [](const RunSpec& r) {
    return csv_row(name_of(r.memory), r.corridor, r.seed, r.steps, r.discount);
  };
  // The plan: a run writes its runs.csv row (which marks it finished), and a row of curves.csv and
  // of diagnostics.csv at each point of its learning curve. Longest runs start first, so that no
  // thread is left with a long run after the others have finished.
  SweepPlan plan{
      description,
      {{"runs.csv", runs_header, 5}, {"curves.csv", curves_header, 6}, {"diagnostics.csv", diagnostics_header, 6}},
      {}};
  for (const RunSpec& spec : specs) {
    SweepRun run{{{key_of(spec)}, {}, {}}, run_cost(o, spec, lambdas_given)};
    const std::size_t batch = batch_of(o, spec.memory, spec.corridor);
    for (const std::size_t steps : distinct_curve_steps(spec.steps, batch, o.curve_points)) {
      run.keys[1].push_back(key_of(spec));
      run.keys[1].back().push_back(csv_field(steps));
    }
    run.keys[2] = run.keys[1];
    plan.runs.push_back(std::move(run));
  }
  // Each run checkpoints into checkpoints/ (--checkpoint-every) and resumes from there.
  const SweepOutcome outcome =
      run_sweep(examples::sweep_request(dir, o.shard, o.split, o.provenance), plan,
                [&](const SweepRunContext& c) -> std::optional<SweepRows> {
                  const RunSpec& spec = specs[c.index];
                  const std::optional<RunResult> r = run_one(
                      o, spec, sweep_lambdas(o, spec.memory, spec.corridor, lambdas_given), frames_of(o, spec.corridor),
                      false, c.checkpoint, description + "run=" + sweep_run_name(key_of(spec)) + "\n");
                  if (!r) return std::nullopt;
                  SweepRows rows(3);
                  for (const CurvePoint& p : distinct_points(r->curve)) {
                    auto row = key_of(spec);
                    row.push_back(csv_field(p.env_steps));
                    rows[2].push_back(row);
                    for (std::string& x : diagnostics_row(p)) rows[2].back().push_back(std::move(x));
                    row.push_back(field(p.success_rate()));
                    rows[1].push_back(std::move(row));
                  }
                  rows[0].push_back(key_of(spec));
                  for (double x : {r->train_success, r->eval_success, r->eval_goal, r->seconds, r->cpu_seconds})
                    rows[0][0].push_back(csv_field(x));
                  return rows;
                },
                // checkpoints: a run resumes from its checkpoint even with --checkpoint-every 0
                {.threads = o.threads, .label = "ppo_tmaze runs", .checkpoints = true});
  if (const std::optional<int> status = examples::unfinished(outcome, "ppo_tmaze")) return *status;
  if (!o.shard.whole()) return 0;  // a shard writes its runs only: the summary needs every seed

  // summary.csv: one row per memory, corridor and γ; figure.csv: the best γ of each memory and corridor.
  const RunsBySetting runs(read_csv(dir / "runs.csv", 5), 5, 2, o.seeds);  // key: memory, corridor, seed, ...
  // Seeds are counted by their evaluation: solved (success >= 0.9), half-solved (0.4 <= success <
  // 0.9: right in three of the four layouts, 0.75, or goals reached without the cue, 0.5) and
  // collapsed (no episode reached a goal).
  // The mean CPU time of a run is printed, not written: summary.csv is a function of the flags.
  const std::string header =
      "memory,corridor,discount,seeds,steps,train_mean,train_ci_low,train_ci_high,eval_mean,eval_ci_low,eval_ci_high,"
      "solved,half_solved,collapsed\n";
  std::string summary = header, figure = header;
  std::printf("%-16s %8s %8s %6s %10s  %-24s %-24s %-17s %s\n", "memory", "corridor", "discount", "seeds", "steps",
              "train success [95% CI]", "eval success [95% CI]", "solved/half/coll.", "CPU s a run");
  for (std::size_t c = 0; c < o.corridors.size(); ++c)
    for (const MemoryChoice kind : kinds) {
      std::string best_row;
      double best_mean = -1;
      for (double discount : o.discounts) {
        const auto setting = csv_row(name_of(kind), o.corridors[c], steps_of(o, c), discount);
        const std::vector<double> train = runs.values(setting, 5), eval = runs.values(setting, 6),
                                  goal = runs.values(setting, 7), cpu_seconds = runs.values(setting, 9);
        std::size_t solved = 0, half = 0, collapsed = 0;
        double cpu = 0;
        for (std::size_t seed = 0; seed < o.seeds; ++seed) {
          solved += eval[seed] >= 0.9;
          half += eval[seed] >= 0.4 && eval[seed] < 0.9;
          collapsed += goal[seed] == 0.0;
          cpu += cpu_seconds[seed];
        }
        const Summary t = summarize(train), e = summarize(eval);
        cpu /= static_cast<double>(o.seeds);
        const std::string line =
            csv_line(csv_row(name_of(kind), o.corridors[c], discount, o.seeds, steps_of(o, c), t.mean, t.ci_low,
                             t.ci_high, e.mean, e.ci_low, e.ci_high, solved, half, collapsed));
        summary += line;
        if (t.mean > best_mean) {
          best_mean = t.mean;
          best_row = line;
        }
        char ci_t[64], ci_e[64];
        std::snprintf(ci_t, sizeof ci_t, "%.3f [%.3f, %.3f]", t.mean, t.ci_low, t.ci_high);
        std::snprintf(ci_e, sizeof ci_e, "%.3f [%.3f, %.3f]", e.mean, e.ci_low, e.ci_high);
        char counts[32];
        std::snprintf(counts, sizeof counts, "%zu/%zu/%zu", solved, half, collapsed);
        std::printf("%-16s %8zu %8s %6zu %10zu  %-24s %-24s %-17s %.0f\n", name_of(kind).c_str(), o.corridors[c],
                    csv_field(discount).c_str(), o.seeds, steps_of(o, c), ci_t, ci_e, counts, cpu);
      }
      figure += best_row;
    }
  write_text_atomically(dir / "summary.csv", summary);
  write_text_atomically(dir / "figure.csv", figure);
  // learning_curves.csv: every curve point's success averaged over the seeds whose bin saw
  // episodes, against steps and against CPU seconds: a run's CPU time (evaluation included) spread
  // evenly over its steps, so that memories of different cost per step compare per unit of compute.
  const RunsBySetting points(read_csv(dir / "curves.csv", 6), 6, 2, o.seeds);  // memory, corridor, seed, ...
  std::string curves = "memory,corridor,discount,steps,at_steps,seeds_with_episodes,success_mean,cpu_seconds\n";
  for (std::size_t c = 0; c < o.corridors.size(); ++c)
    for (const MemoryChoice kind : kinds)
      for (double discount : o.discounts) {
        const std::size_t batch = batch_of(o, kind, o.corridors[c]);
        const std::size_t steps = steps_of(o, c), run = steps / batch * batch;
        double cpu = 0;
        for (const double x : runs.values(csv_row(name_of(kind), o.corridors[c], steps, discount), 9)) cpu += x;
        cpu /= static_cast<double>(o.seeds);
        for (const std::size_t a : distinct_curve_steps(steps, batch, o.curve_points)) {
          const auto v = points.present_values(csv_row(name_of(kind), o.corridors[c], steps, discount, a), 6);
          const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
          curves += csv_line(csv_row(name_of(kind), o.corridors[c], discount, steps, a, v.size(),
                                     field(mean),  // 0 / 0: NaN, an empty field
                                     cpu * static_cast<double>(a) / static_cast<double>(run)));
        }
      }
  write_text_atomically(dir / "learning_curves.csv", curves);
  write_text_atomically(dir / "time_to_success.csv", time_to_success(o, kinds, runs, points));
  std::printf("%zu runs in %.1f s; wrote %s\n", specs.size(),
              std::chrono::duration<double>(Clock::now() - start).count(), (dir / "summary.csv").c_str());
  if (!o.plot) return 0;
  std::ostringstream steps;
  for (std::size_t c = 0; c < o.corridors.size(); ++c)
    steps << (c > 0 ? ", " : "") << "k=" << o.corridors[c] << ": " << static_cast<double>(steps_of(o, c)) / 1e6 << "M";
  std::string corridors;
  for (const std::size_t k : o.corridors) corridors += (corridors.empty() ? "" : " ") + std::to_string(k);
  const bool drawn = examples::draw_figure("ppo_tmaze.gp", dir / "ppo_tmaze.png",
                                           {{"csv", (dir / "figure.csv").string()},
                                            {"subtitle", std::to_string(o.seeds) + " seeds, steps per run " +
                                                             steps.str() + "; bars: 95% confidence intervals"}});
  const bool curves_figure = examples::draw_figure("ppo_tmaze_cpu.gp", dir / "ppo_tmaze_curves.png",
                                                   {{"files", (dir / "learning_curves.csv").string()},
                                                    {"corridors", corridors},
                                                    {"subtitle", std::to_string(o.seeds) + " seeds"}});
  return drawn && curves_figure ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "PPO with memory traces or frame stacking in the Minigrid T-maze: the paper's second experiment (Fig. 5),\n"
      "as the official code runs it. Default: the official README run (corridor 64, 20.48 M steps, traces\n"
      "{0, 0.985}), with progress on stderr, a learning curve in --out and the 100-episode evaluation.\n"
      "Sweeps across machines: --shard I/N on each, then --merge with the same flags (docs/experiments.md)."};
  memtrace::examples::cli_conventions(app, "ppo_tmaze");
  app.get_formatter()->column_width(34);
  const CLI::Validator positive_int = number_check("an integer of at least 1", [](double x) { return x >= 1; });
  const CLI::Validator unit = number_check("in [0, 1]", [](double x) { return x >= 0 && x <= 1; });
  const CLI::Validator unit_open = number_check("in [0, 1)", [](double x) { return x >= 0 && x < 1; });
  std::string memory = "trace";
  app.add_option(
         "--memory", memory,
         "trace (the --lambdas), trace-slow ((k-1)/k alone), memoryless, frame-stack, gru32, gru64, gru128 (the "
         "memoryless view through a GRU of that state size, n_steps at least 2(k+2)); a trace with +norm "
         "(trace+norm) normalises its features, as --normalize does")
      ->check(CLI::IsMember(memory_flag_values));
  bool normalize = false;
  app.add_flag("--normalize", normalize,
               "Normalise the features with running statistics (FeatureNormalizer; traces only): --memory trace "
               "--normalize is --memory trace+norm");
  app.add_option("--lambdas", o.lambdas, "λ of the traces (--memory trace); --figure: {0, (k-1)/k} unless given")
      ->check(unit_open)
      ->expected(1, -1);
  app.add_option("--frames", o.frames, "Frames of the frame stack (0: k + 1, the official Window(m = k))")
      ->check(number_check("a non-negative integer", [](double x) { return x >= 0 && x <= 1e6; }));
  app.add_option("--corridor", o.corridor, "Corridor length k (>= 2)")
      ->check(number_check("an integer in [2, 10^6]", [](double x) { return x >= 2 && x <= 1e6; }));
  app.add_option("--steps", o.steps,
                 "Environment steps of the run (a multiple of n-envs x n-steps is used; 0 with --load-agent: only "
                 "evaluate)")
      ->check(number_check("in [0, 10^12]", [](double x) { return x >= 0 && x <= 1e12; }));
  app.add_option("--seed", o.seed, "Base seed")->check(number_check("a non-negative integer", [](double x) {
    return x >= 0;
  }));
  app.add_option("--discount", o.discount, "Discount γ")->check(unit);
  app.add_option("--eval-episodes", o.eval_episodes, "Episodes of the final evaluation")->check(positive_int);
  app.add_option("--eval-steps", o.eval_steps,
                 "Step cap of the evaluation: episodes not finished within it count as failures")
      ->check(number_check("in [1, 10^12]", [](double x) { return x >= 1 && x <= 1e12; }));
  app.add_flag("--eval-greedy", o.eval_greedy,
               "Evaluate the greedy policy (the most probable action); without it the policy is sampled, as the "
               "official code evaluates it");
  app.add_option("--gru-update-bias", o.gru_update_bias,
                 "A GRU's update-gate bias b_iz after initialisation: the state then keeps about sigmoid(b) of itself "
                 "a step at first, as a trace of that λ does (0: CleanRL's initialisation)")
      ->check(examples::number_check("finite", [](double x) { return std::isfinite(x); }));
  app.add_option("--freeze-normalizer-at", o.freeze_normalizer_at,
                 "Memories named +norm: freeze the normaliser's statistics once this fraction of the run's updates "
                 "is done (1: never)")
      ->check(number_check("in (0, 1]", [](double x) { return x > 0 && x <= 1; }));
  app.add_option("--save-agent", o.save_agent,
                 "One run: write the trained agent's weights to this file (safetensors: the networks and the "
                 "normaliser's statistics, which Python reads; docs/control.md)")
      ->type_name("FILE");
  app.add_option("--load-agent", o.load_agent,
                 "One run: start from the weights of --save-agent (with a fresh optimiser); --steps 0 only evaluates")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  examples::add_run_flags(app, o.run);
  examples::add_ppo_flags(app, o.ppo, false);
  app.add_option("--out", o.out, "Output folder (a sweep resumes the runs it holds)");
  app.add_flag("!--no-plot", o.plot, "Write the CSV files only");
  app.add_option("--threads", o.threads, "Worker threads of a sweep (0: all cores)")
      ->check(number_check("in [0, 1024]", [](double x) { return x >= 0 && x <= 1024; }));
  app.add_option("--play", o.play, "Replay a string of actions (0 forward, 1 turn right, 2 turn left), print each step")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return s.find_first_not_of("012") == std::string::npos ? std::string() : "must be a string of 0, 1 and 2";
          },
          "ACTIONS"));
  app.add_option("--cue", o.cue, "--play: the cue's colour")->check(CLI::IsMember({"green", "blue"}));
  app.add_option("--sides", o.sides, "--play: 1 puts green on the upper goal, 0 on the lower")
      ->check(CLI::IsMember({"0", "1"}));
  app.add_flag("--figure", o.figure,
               "Figure 5: success rate against corridor length for the official recipe's four memories and the "
               "normalised traces (trace+norm)");
  app.add_flag("--quick", o.quick,
               "A small sweep in well under a minute on two cores: corridor 8, normalised traces {0, 7/8} "
               "(trace+norm) and the memoryless agent, 3 seeds x 1 M steps");
  app.add_flag("--long", o.long_corridors,
               "Where the paper's claim lives: corridors 64, 128, 256 with 20.48, 50 and 100 M steps, normalised and "
               "official traces, 5 seeds (hours: run in the background, resumable; frame stacks by --memories)");
  app.add_flag("--paper", o.paper,
               "The paper's configuration (50 seeds, 1.024e9 steps, γ in {0.9, 0.99, 0.999}): far beyond one machine");
  app.add_option("--corridors", o.corridors, "Sweeps: corridor lengths")
      ->check(number_check("an integer in [2, 10^6]", [](double x) { return x >= 2 && x <= 1e6; }))
      ->expected(1, -1);
  app.add_option("--memories", o.memories, "Sweeps: memories (as --memory)")
      ->check(CLI::IsMember(memory_flag_values))
      ->expected(1, -1);
  app.add_option("--discounts", o.discounts,
                 "Sweeps: discounts (the figure shows the best of each memory and corridor)")
      ->check(unit)
      ->expected(1, -1);
  app.add_option("--seeds", o.seeds, "Sweeps: runs per setting (seeds 0..N-1)")
      ->check(
          number_check("an integer in [2, 10^6] (a confidence interval needs two runs; every run is kept in memory)",
                       [](double x) { return x >= 2 && x <= 1e6; }));
  app.add_option("--sweep-steps", o.sweep_steps, "Sweeps: steps per run, one value or one per corridor")
      ->check(number_check("in [1, 10^12]", [](double x) { return x >= 1 && x <= 1e12; }))
      ->expected(1, -1);
  app.add_option("--curve-points", o.curve_points, "Points of each run's learning curve")
      ->check(positive_int)
      ->check(number_check("at most 10^6 (every run's curve is kept in memory)", [](double x) { return x <= 1e6; }));
  examples::add_sweep_flags(app, o.split, "the runs i with i mod N = I", "runs.csv, curves.csv and diagnostics.csv",
                            "Sweeps: ");
  CLI11_PARSE(app, argc, argv);
  o.provenance = memtrace::examples::build_provenance(argc, argv);
  const bool lambdas_given = app.count("--lambdas") > 0;
  try {
    o.checkpoint_every = parse_checkpoint_every(o.run.checkpoint_every, "--checkpoint-every");
    o.shard = examples::parse_sweep_flags(app, o.split);
    const bool sweep_preset = o.figure || o.quick || o.paper || o.long_corridors;
    if ((app.count("--shard") != 0 || !o.split.shard_folders.empty()) && !sweep_preset)
      throw std::invalid_argument(std::string(app.count("--shard") != 0 ? "--shard" : "--merge") +
                                  " splits a sweep: give it with --figure, --quick, --long or --paper");
    o.memory = parse_memory(memory);
    if (normalize) {
      if (!is_trace(o.memory.kind))
        throw std::invalid_argument("--normalize normalises traces; --memory " + memory + " is not one");
      if (app.count("--memories") != 0 || sweep_preset)
        throw std::invalid_argument("--normalize is for one run; a sweep takes memories named +norm in --memories");
      o.memory.normalize = true;
    }
    if (!o.play.empty()) return play(o);
    if (sweep_preset) {
      if (int(o.figure) + int(o.quick) + int(o.paper) + int(o.long_corridors) > 1)
        throw std::invalid_argument("--figure, --quick, --long and --paper exclude each other");
      if (app.count("--out") == 0)
        o.out = o.quick            ? "ppo_tmaze_quick"
                : o.paper          ? "ppo_tmaze_paper"
                : o.long_corridors ? "ppo_tmaze_long"
                                   : "ppo_tmaze_figure";
      if (o.quick) {  // docs/experiments.md: normalised traces learn corridor 8 in 1 M steps (calibration)
        if (app.count("--corridors") == 0) o.corridors = {8};
        if (app.count("--memories") == 0) o.memories = {"trace+norm", "memoryless"};
        if (app.count("--seeds") == 0) o.seeds = 3;
        if (o.sweep_steps.empty()) o.sweep_steps = {1'000'000};
      } else if (o.long_corridors) {
        if (app.count("--corridors") == 0) o.corridors = {64, 128, 256};
        if (app.count("--memories") == 0) o.memories = {"trace+norm", "trace"};
        if (o.sweep_steps.empty()) o.sweep_steps = {20'480'000, 50'000'000, 100'000'000};
      } else if (o.paper) {  // the paper's memories and recipe
        if (app.count("--memories") == 0) o.memories = {"trace", "trace-slow", "memoryless", "frame-stack"};
        if (app.count("--seeds") == 0) o.seeds = 50;
        if (app.count("--discounts") == 0) o.discounts = {0.9, 0.99, 0.999};
        if (o.sweep_steps.empty()) o.sweep_steps = {1'024'000'000};
      } else if (o.sweep_steps.empty()) {
        o.sweep_steps = {1'000'000, 2'000'000, 4'000'000, 8'000'000};
      }
      if (o.sweep_steps.size() != 1 && o.sweep_steps.size() != o.corridors.size())
        throw std::invalid_argument("--sweep-steps must give one value or one per corridor (" +
                                    std::to_string(o.corridors.size()) + "), got " +
                                    std::to_string(o.sweep_steps.size()));
      for (const char* flag : {"--save-agent", "--load-agent"})
        if (app.count(flag) != 0)
          throw std::invalid_argument(std::string(flag) + " is for one run: a sweep trains many agents");
      if (app.count("--freeze-normalizer-at") != 0 &&
          std::none_of(o.memories.begin(), o.memories.end(), [](const std::string& m) { return m.ends_with("+norm"); }))
        throw std::invalid_argument(
            "--freeze-normalizer-at freezes the normaliser: --memories has no memory named +norm");
      if (app.count("--gru-update-bias") != 0 && std::none_of(o.memories.begin(), o.memories.end(), [](const auto& m) {
            return parse_memory(m).kind == MemoryKind::gru;
          }))
        throw std::invalid_argument("--gru-update-bias sets a GRU's update gate: --memories has no GRU (gru32, ...)");
      return sweep(o, lambdas_given);
    }
    for (const char* flag : {"--corridors", "--memories", "--discounts", "--seeds", "--sweep-steps", "--threads"})
      if (app.count(flag) != 0)  // a single run would ignore it
        throw std::invalid_argument(std::string(flag) +
                                    " belongs to a sweep: give it with --figure, --quick, --long or --paper (one run "
                                    "takes --corridor, --memory, --discount, --seed, --steps)");
    if (!o.save_agent.empty()) {  // before the run, not after it
      const fs::path parent = fs::path(o.save_agent).parent_path();
      if (!parent.empty() && !fs::is_directory(parent))
        throw std::invalid_argument("--save-agent " + o.save_agent + ": the folder " + parent.string() +
                                    " does not exist");
    }
    if (o.steps == 0 && o.load_agent.empty())
      throw std::invalid_argument("--steps 0 trains nothing: give --load-agent FILE to evaluate a saved agent");
    if (app.count("--freeze-normalizer-at") != 0 && !o.memory.normalize)
      throw std::invalid_argument("--freeze-normalizer-at freezes the normaliser: give --normalize or a +norm memory");
    if (app.count("--gru-update-bias") != 0 && o.memory.kind != MemoryKind::gru)
      throw std::invalid_argument("--gru-update-bias sets a GRU's update gate: give --memory gru32, gru64 or gru128");
    return single(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ppo_tmaze: %s\n", e.what());
    return 1;
  }
}
