// The fragments of docs/control.md, compiled and run by ctest (docs/design.md, "Doc snippets are
// compiled"). The PPO run of the page takes 20.48 M steps: it is compiled, and run only with
// --ppo.
#include <memtrace/checkpoint.hpp>
#include <memtrace/env/checkpoint.hpp>
#include <memtrace/env/minigrid_tmaze.hpp>
#include <memtrace/env/pendulum.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/td.hpp>
#include <memtrace/loop/checkpoint.hpp>
#include <memtrace/loop/learning_curve.hpp>
#include <memtrace/loop/ppo.hpp>
#include <memtrace/loop/ppo_run.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <memtrace/memory/trace_bank.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace memtrace;

struct Greedy {  // a Policy: one environment at a time
  template <class G>
  memtrace::Action act(const Eigen::VectorXf& phi, G& gen);
};
struct Network {  // a BatchPolicy: all environments at once
  template <class G>
  void act(std::span<const Eigen::VectorXf> phi, std::span<G> gens, std::span<memtrace::Action> actions);
};
struct Recurrent {  // an EpisodeStartPolicy: all at once, told where episodes start
  template <class G>
  void act(std::span<const Eigen::VectorXf> phi, std::span<const bool> starts, std::span<G> gens,
           std::span<memtrace::Action> actions);
};
static_assert(Policy<Greedy, Eigen::VectorXf> && !BatchPolicy<Greedy, Eigen::VectorXf>);
static_assert(BatchPolicy<Network, Eigen::VectorXf>);
static_assert(EpisodeStartPolicy<Recurrent, Eigen::VectorXf> && !EpisodeStartPolicy<Network, Eigen::VectorXf>);

namespace car {
// A MountainCar-like task of your own with its velocity hidden: the car sees its position only.
struct MountainCar {
  using action_type = Eigen::Matrix<double, 1, 1>;  // the force, in [-1, 1]
  using observation_type = Eigen::Matrix<float, 1, 1>;
  double power = 0.0015;                   // a parameter: a state of another power is refused
  double position = -0.5, velocity = 0.0;  // the state
  std::size_t steps = 0;

  template <class G>
  observation_type reset(G& gen) {
    position = -0.6 + 0.2 * memtrace::uniform_real(gen);
    velocity = 0.0;
    steps = 0;
    return observation_type(static_cast<float>(position));
  }
  template <class G>
  memtrace::TimeStep<observation_type> step(const action_type& force, G&) {
    velocity = std::clamp(velocity + force[0] * power - 0.0025 * std::cos(3 * position), -0.07, 0.07);
    position = std::clamp(position + velocity, -1.2, 0.6);
    const bool goal = position >= 0.45;
    return {observation_type(static_cast<float>(position)), (goal ? 100.0 : 0.0) - 0.1 * force[0] * force[0], goal,
            ++steps == 999 && !goal};
  }
  action_type action_low() const { return action_type(-1.0); }
  action_type action_high() const { return action_type(1.0); }
};

// Its state, with the functions memtrace's own environments use: found by argument-dependent
// lookup, they make MountainCar Checkpointable, and a run of it resumable (save_ppo_run).
void save_state(memtrace::TensorFile& file, const std::string& prefix, const MountainCar& car) {
  memtrace::put_reals(file, prefix + "power", {1}, {car.power});
  memtrace::put_reals(file, prefix + "state", {2}, {car.position, car.velocity});
  memtrace::put_integers(file, prefix + "steps", {}, {car.steps});
}
void load_state(const memtrace::TensorFile& file, const std::string& prefix, MountainCar& car) {
  // Every check before any change: a refused state leaves the car as it was.
  memtrace::check_parameters<double>(file, prefix + "power", "a MountainCar", {"power"}, {car.power});
  const std::vector<double>& state = memtrace::state_reals(file, prefix + "state", {2});
  const std::uint64_t steps = memtrace::state_integer_below(file, prefix + "steps", 999, "below the time limit");
  if (!(std::abs(state[1]) <= 0.07))
    throw std::invalid_argument("load_state: " + prefix + "state: the velocity must be in [-0.07, 0.07]");
  car.position = state[0];
  car.velocity = state[1];
  car.steps = static_cast<std::size_t>(steps);
}
}  // namespace car
static_assert(Checkpointable<car::MountainCar> && ContinuousActions<car::MountainCar, DefaultGenerator>);

namespace {

struct UniformPolicy {  // acts at random, whatever the features
  template <class G>
  memtrace::Action act(const Eigen::VectorXf&, G& gen) {
    return memtrace::uniform_index(gen, minigrid::num_actions);
  }
};

bool rollout_and_td() {
  const std::uint64_t seed = 7;
  UniformPolicy policy;
  std::vector<MinigridTMaze> envs(16, MinigridTMaze(8));
  std::vector<TraceBank<dynamic, float>> memories(16, TraceBank<dynamic, float>({0.0, 0.875}, 45, TraceInit::zero));
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(seed, i));  // one stream per environment
  Rollout rollout(std::move(envs), std::move(memories), std::move(gens));
  rollout.collect(policy, 128, [&](const RolloutBatch<Eigen::VectorXf>& /*batch*/) { /* store, learn, log */ });

  const std::size_t steps = 64;
  const double discount = 0.99;
  LinearTd<float> td(90, 0.01);
  rollout.collect(policy, steps, [&](const RolloutBatch<Eigen::VectorXf>& batch) {
    for (std::size_t i = 0; i < batch.steps.size(); ++i) {
      const ActedStep& s = batch.steps[i];
      td.update(batch.features[i], s.reward, s.terminated ? 0.0 : discount, batch.next_features[i]);
    }
  });
  return td.weights().allFinite();
}

void ppo_tmaze_64() {
  const TraceBank<dynamic, float> traces({0.0, 63.0 / 64.0}, 45, TraceInit::zero);  // d = 90 features
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(42, i));
  Rollout rollout(std::vector<MinigridTMaze>(16, MinigridTMaze(64)), std::vector<TraceBank<dynamic, float>>(16, traces),
                  std::move(gens));

  Ppo<Eigen::VectorXf> ppo(traces.dim(), 3, PpoOptions{}, 42);  // the official hyperparameters, seed 42
  train(ppo, rollout, 20'480'000, [](const PpoStats& s) {       // 10,000 updates of 2,048 steps
    if (s.update % 100 == 0)
      std::printf("%zu steps: success %.2f of %zu episodes, entropy %.3f\n", s.env_steps, s.mean_episode_return(),
                  s.episodes.size(), s.entropy);
  });
  DefaultGenerator eval = make_stream(42, 1000);
  const std::vector<EpisodeEnd> episodes = evaluate(ppo, MinigridTMaze(64), traces, eval, 100);  // official evaluation
  std::printf("evaluation: %zu episodes\n", episodes.size());
}

/// PPO from a loop of one's own (no Rollout): four T-mazes stepped by hand, three updates, and
/// the loss of four samples of the last rollout's buffer.
bool ppo_own_loop() {
  const std::size_t n = 4;
  PpoOptions options;
  options.n_envs = n;
  options.n_steps = 32;
  options.minibatches = 4;
  options.total_updates = 3;  // the learning rate's schedule
  const TraceBank<dynamic, float> trace({0.0, 0.875}, 45, TraceInit::zero);
  std::vector<MinigridTMaze> envs(n, MinigridTMaze(8));
  std::vector<TraceBank<dynamic, float>> memories(n, trace);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) {
    gens.push_back(make_stream(3, i));
    memories[i].reset(envs[i].reset(gens[i]));
  }

  Ppo<Eigen::VectorXf> agent(trace.dim(), 3, options, 3);
  PpoBuffer<Eigen::VectorXf, float> buffer = agent.make_buffer();
  PpoActing<Eigen::VectorXf, float> acting = agent.acting(buffer);  // the agent's acting side, bound to it
  std::vector<Eigen::VectorXf> features(n), next_features(n);
  std::vector<Action> actions(n);
  std::vector<ActedStep> steps(n);
  std::size_t env_steps = 0;
  for (std::size_t update = 0; update < 3; ++update) {
    for (std::size_t t = 0; t < options.n_steps; ++t) {
      for (std::size_t i = 0; i < n; ++i) features[i] = memories[i].features();
      acting.act(std::span<const Eigen::VectorXf>(features), std::span(gens), std::span(actions));
      for (std::size_t i = 0; i < n; ++i) {
        const auto result = envs[i].step(actions[i], gens[i]);
        ActedStep& s = steps[i];
        const bool continuing = !(s.terminated || s.truncated);
        s.action = actions[i];
        s.reward = result.reward;
        s.terminated = result.terminated;
        s.truncated = result.truncated;
        s.episode_return = (continuing ? s.episode_return : 0.0) + s.reward;
        s.episode_length = (continuing ? s.episode_length : 0) + 1;
        memories[i].update(result.observation);
        next_features[i] = memories[i].features();  // at a time limit, what V(final observation) reads
        if (s.terminated || s.truncated) memories[i].reset(envs[i].reset(gens[i]));  // the next episode starts
      }
      acting.record(RolloutBatch<Eigen::VectorXf>{t, features, steps, next_features});
    }
    for (std::size_t i = 0; i < n; ++i) features[i] = memories[i].features();
    acting.bootstrap(std::span<const Eigen::VectorXf>(features));  // what the environments continue from
    const PpoStats& stats = agent.update(buffer);                  // learns; empties the buffer
    env_steps = stats.env_steps;
  }

  return agent.updates() == 3 && env_steps == 3 * 128 && buffer.recorded() == 0;
}

/// One rollout of the official agent at corridor 8 through Rollout, its advantages, the loss of
/// four samples, and the update.
bool ppo_rollout_and_loss() {
  const TraceBank<dynamic, float> traces({0.0, 7.0 / 8.0}, 45, TraceInit::zero);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(7, i));
  Rollout rollout(std::vector<MinigridTMaze>(16, MinigridTMaze(8)), std::vector<TraceBank<dynamic, float>>(16, traces),
                  std::move(gens));
  Ppo<Eigen::VectorXf> agent(traces.dim(), 3, PpoOptions{.total_updates = 1}, 7);

  PpoBuffer<Eigen::VectorXf, float> buffer = agent.make_buffer();
  PpoActing<Eigen::VectorXf, float> acting = agent.acting(buffer);
  rollout.collect(acting, agent.options().n_steps, acting);  // the policy and the sink
  acting.bootstrap(rollout.features());
  agent.compute_advantages(buffer);  // what update does first: now the loss can be read
  PpoMinibatch<Eigen::VectorXf, float> minibatch;
  const std::vector<std::size_t> samples = {0, 5, 17, 2047};
  minibatch.gather(buffer, samples);
  const PpoLoss loss = ppo_loss(agent.networks(), minibatch, agent.loss_coefficients(), /*gradients=*/false);
  const PpoStats& stats = agent.update(buffer);

  return std::isfinite(loss.loss) && loss.entropy > 1.0 && stats.update == 1 && buffer.recorded() == 0;
}

/// A learning curve of 8 updates at corridor 8: 4 points, the success rate of each bin.
bool learning_curve() {
  const TraceBank<dynamic, float> traces({0.0, 7.0 / 8.0}, 45, TraceInit::zero);
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 16; ++i) gens.push_back(make_stream(5, i));
  Rollout rollout(std::vector<MinigridTMaze>(16, MinigridTMaze(8)), std::vector<TraceBank<dynamic, float>>(16, traces),
                  std::move(gens));
  Ppo<Eigen::VectorXf> agent(traces.dim(), 3, PpoOptions{}, 5);
  const std::size_t steps = 8 * 2048;

  LearningCurve curve(steps, 16 * 128, {.points = 4, .success_return = 0.5});  // the T-maze pays 1 on success
  train(agent, rollout, steps, [&](const PpoStats& s) { curve.record(s); });
  for (const CurvePoint& p : curve.points())
    std::printf("%zu steps: %zu episodes, success %.2f, entropy %.3f, approx KL %.4f\n", p.env_steps, p.episodes_ended,
                p.success_rate(), p.entropy, p.approx_kl);

  return curve.points().size() == 4 && curve.points().back().env_steps == steps && curve.episodes_ended() > 0;
}

/// A Gaussian policy on the pendulum without its velocity, a few updates: it acts and learns.
bool ppo_pendulum() {
  PendulumOptions hidden;
  hidden.observe_velocity = false;  // (cos θ, sin θ): the velocity must be remembered
  using Trace = TraceBank<dynamic, float>;
  const Trace bank({0.0, 0.5, 0.8}, 2);  // 6 features
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < 8; ++i) gens.push_back(make_stream(1, i));
  Rollout rollout(std::vector<Pendulum>(8, Pendulum(hidden)), std::vector<Trace>(8, bank), std::move(gens));

  PpoOptions options;
  options.n_envs = 8;
  options.normalize_features = true;
  Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> agent(bank.dim(), 1, options, 1);  // 1-dimensional torques
  train(agent, rollout, 8 * 128 * 10);                                                       // 10 updates

  const PpoStats& s = agent.last_stats();
  std::printf("pendulum: %zu updates, mean return %.1f of %zu episodes\n", s.update, s.mean_episode_return(),
              s.episodes.size());
  return s.update == 10 && std::isfinite(s.loss) && agent.action_dim() == 1;
}

/// The T-maze at corridor 4 with traces {0, 3/4}: 16 updates of 4 x 32 steps, a checkpoint every
/// 2 updates; `stop_after` updates (0: all) as if killed there.
std::optional<std::vector<CurvePoint>> tmaze_run(const std::filesystem::path& path, std::size_t stop_after) {
  const std::size_t total = 16 * 4 * 32;
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 32;
  o.hidden_sizes = {16};
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < o.n_envs; ++i) gens.push_back(make_stream(42, i));
  const TraceBank<dynamic, float> traces({0.0, 0.75}, MinigridTMaze::observation_dim, TraceInit::zero);
  Rollout rollout(std::vector(o.n_envs, MinigridTMaze(4)), std::vector(o.n_envs, traces), std::move(gens));
  Ppo<Eigen::VectorXf> agent(traces.dim(), minigrid::num_actions, o, make_stream(42, o.n_envs)());
  LearningCurve curve(total, o.n_envs * o.n_steps, {.points = 8, .success_return = 0.5});

  PpoRunCheckpoint checkpoint(path, "tmaze k=4, traces 0 0.75, seed 42\n", agent, rollout, &curve, {.updates = 2});
  if (checkpoint.resume_or_start() == RunStart::resumed) std::printf("resumed after %zu updates\n", agent.updates());
  StopAfter stop{stop_after};
  if (!train_to(agent, rollout, total, on_updates(curve, checkpoint, stop))) return std::nullopt;
  checkpoint.finish();  // a kill from here on does not train again
  // ... evaluate the agent and write the results, then:
  checkpoint.remove();
  return curve.points();
}

bool training_run() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("control_doc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto whole = tmaze_run(dir / "whole.safetensors", 0);
  const bool stopped = !tmaze_run(dir / "killed.safetensors", 5) && std::filesystem::exists(dir / "killed.safetensors");
  const auto resumed = tmaze_run(dir / "killed.safetensors", 0);
  const bool removed = !std::filesystem::exists(dir / "killed.safetensors");
  std::filesystem::remove_all(dir);
  std::printf("a training run: whole %zu points, stopped %d, resumed %zu points, the same %d\n",
              whole ? whole->size() : 0, stopped, resumed ? resumed->size() : 0,
              whole && resumed && *whole == *resumed);
  return whole && whole->size() == 8 && stopped && resumed && *resumed == *whole && removed;
}
/// A run on your own environment is resumable: its checkpoint holds the cars' states.
bool own_checkpoint() {
  using Trace = TraceBank<dynamic, float>;
  const auto make = [](double power) {
    std::vector<DefaultGenerator> gens;
    for (std::size_t i = 0; i < 4; ++i) gens.push_back(make_stream(2, i));
    return Rollout(std::vector<car::MountainCar>(4, car::MountainCar{.power = power}),
                   std::vector<Trace>(4, Trace({0.0, 0.9}, 1)), std::move(gens));
  };
  PpoOptions options;
  options.n_envs = 4;
  options.n_steps = 32;
  options.minibatches = 4;
  using Agent = Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>>;
  Agent agent(2, 1, options, 2);
  auto rollout = make(0.0015);
  train(agent, rollout, 4 * 32 * 2);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("control_car_" + std::to_string(::getpid()) + ".safetensors");
  save_ppo_run(path, agent, rollout);
  Agent resumed(2, 1, options, 9);
  auto resumed_rollout = make(0.0015);
  (void)load_ppo_run(path, resumed, resumed_rollout);
  train(agent, rollout, 4 * 32);  // both go on: the same cars, the same numbers
  train(resumed, resumed_rollout, 4 * 32);
  const bool same = resumed_rollout.env(3).position == rollout.env(3).position &&
                    resumed.networks().log_std() == agent.networks().log_std();
  auto heavier = make(0.001);
  bool refused = false;
  try {
    (void)load_ppo_run(path, resumed, heavier);
  } catch (const std::invalid_argument& e) {
    refused = std::string_view(e.what()).find("saved from a MountainCar with power = 0.0015") != std::string_view::npos;
  }
  std::filesystem::remove(path);
  std::printf("your own environment's run resumes: %d, another power refused: %d\n", same, refused);
  return same && refused;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--ppo") ppo_tmaze_64();
  const bool ok = rollout_and_td() && ppo_own_loop() && ppo_rollout_and_loss() && learning_curve() && ppo_pendulum() &&
                  training_run() && own_checkpoint();
  std::puts(ok ? "docs/control.md: ok" : "docs/control.md: a fragment computed something else");
  return ok ? 0 : 1;
}
