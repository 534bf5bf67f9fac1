// Tests of checkpoint.hpp and learn/ppo_checkpoint.hpp: an agent restored from a checkpoint (into
// an agent of another seed) continues bit for bit as the agent that was saved, for the default
// network with normalised features and for a network of one's own; damaged files, files of another
// format, version or instruction set, and agents of other options are refused, changing nothing.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memtrace/checkpoint.hpp>
#include <memtrace/core.hpp>
#include <memtrace/learn/ppo_checkpoint.hpp>
#include <memtrace/learn/ppo_weights.hpp>
#include <span>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "cue_task.hpp"
#include "relu_actor_critic.hpp"

namespace ppo_checkpoint_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

using test_tasks::Cue;

auto make_rollout(std::size_t n, const TraceBank<dynamic, float>& traces, std::uint64_t seed) {
  std::vector<DefaultGenerator> gens;
  for (std::size_t i = 0; i < n; ++i) gens.push_back(make_stream(seed, i));
  return Rollout(std::vector<Cue>(n), std::vector(n, traces), std::move(gens));
}

PpoOptions options() {
  PpoOptions o;
  o.n_envs = 4;
  o.n_steps = 16;
  o.minibatches = 4;
  o.hidden_sizes = {8};
  o.total_updates = 6;
  o.normalize_features = true;
  return o;
}

/// Every parameter, both of Adam's moments and its count, the generator and the counters equal.
template <class Agent>
bool same_state(Agent& a, Agent& b) {
  TensorFile x, y;
  save_state(x, "agent.", a);
  save_state(y, "agent.", b);
  return x == y;
}

std::vector<EpisodeEnd> evaluation(auto& agent, const TraceBank<dynamic, float>& traces) {
  DefaultGenerator gen = make_stream(5, 1000);
  return evaluate(agent, Cue{}, traces, gen, 50);
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("an agent restored from a checkpoint continues bit for bit as the agent that was saved",
          "[ppo][checkpoint]") {
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);
  const test::TempDir dir("ppo_checkpoint_test");
  const std::size_t samples = 4 * 16;

  SECTION("the default network, with normalised features") {
    Ppo<Eigen::VectorXf> saved(traces.dim(), 2, options(), 1);
    auto rollout = make_rollout(4, traces, 1);
    train(saved, rollout, 3 * samples);
    save_ppo_checkpoint(dir / "agent.ckpt", saved);
    auto rollout_copy = rollout;  // the environments' side is not in this checkpoint: it goes on from a copy

    Ppo<Eigen::VectorXf> restored(traces.dim(), 2, options(), 99);  // another seed: other parameters, generator
    REQUIRE_FALSE(same_state(saved, restored));
    load_ppo_checkpoint(dir / "agent.ckpt", restored);
    CHECK(same_state(saved, restored));
    CHECK(restored.normalizer() == saved.normalizer());
    CHECK(restored.updates() == 3);
    CHECK(restored.learning_rate() == saved.learning_rate());

    train(saved, rollout, 3 * samples);
    train(restored, rollout_copy, 3 * samples);
    CHECK(restored.updates() == 6);
    CHECK(same_state(saved, restored));
    CHECK(restored.last_stats().loss == saved.last_stats().loss);
    CHECK(evaluation(restored, traces) == evaluation(saved, traces));
  }

  SECTION(
      "target_kl and normalize_rewards: the Adam steps skipped and the reward statistics travel in the state, and "
      "counters that do not add up are refused") {
    PpoOptions o = options();
    o.learning_rate = 0.05;  // large steps: target_kl stops updates
    o.target_kl = 1e-4;
    o.normalize_rewards = true;  // its returns and statistics travel too
    Ppo<Eigen::VectorXf> saved(traces.dim(), 2, o, 1);
    auto rollout = make_rollout(4, traces, 1);
    train(saved, rollout, 3 * samples);
    REQUIRE(saved.skipped_steps() > 0);
    CHECK(saved.adam_steps() + saved.skipped_steps() == 3 * o.epochs * o.minibatches);
    TensorFile file;
    save_state(file, "agent.", saved);
    auto rollout_copy = rollout;
    Ppo<Eigen::VectorXf> restored(traces.dim(), 2, o, 99);
    load_state(file, "agent.", restored);
    CHECK(restored.skipped_steps() == saved.skipped_steps());
    CHECK(restored.reward_normalizer() == saved.reward_normalizer());
    CHECK(restored.reward_normalizer().statistics().count() > 0);
    CHECK(restored.learning_rate() == saved.learning_rate());
    train(saved, rollout, 3 * samples);
    train(restored, rollout_copy, 3 * samples);
    CHECK(same_state(saved, restored));
    for (Tensor& t : file.tensors)
      if (t.name == "agent.skipped_steps") t.integers[0] += 1;
    Ppo<Eigen::VectorXf> refused(traces.dim(), 2, o, 99);
    CHECK_THROWS_WITH(load_state(file, "agent.", refused), Catch::Contains("skipped do not fit 3 updates of 8"));
    CHECK(refused.skipped_steps() == 0);
  }

  SECTION("a network of one's own, through its parameter blocks") {
    PpoOptions o = options();
    o.normalize_features = false;
    const auto make = [&](std::uint64_t seed) {
      ReluActorCritic<float> net(static_cast<Eigen::Index>(traces.dim()), 6, 2);
      DefaultGenerator init(seed);
      net.initialize(init);
      return Ppo<Eigen::VectorXf, float, ReluActorCritic<float>>(std::move(net), o, seed);
    };
    auto saved = make(1);
    auto rollout = make_rollout(4, traces, 2);
    train(saved, rollout, 2 * samples);
    save_ppo_checkpoint(dir / "relu.ckpt", saved);
    auto rollout_copy = rollout;
    auto restored = make(7);
    load_ppo_checkpoint(dir / "relu.ckpt", restored);
    train(saved, rollout, 4 * samples);
    train(restored, rollout_copy, 4 * samples);
    CHECK(same_state(saved, restored));
    CHECK(evaluation(restored, traces) == evaluation(saved, traces));
  }
}

TEST_CASE("a damaged checkpoint, or one of another format, version, instruction set or agent, is refused unchanged",
          "[ppo][checkpoint]") {
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);
  const test::TempDir dir("ppo_checkpoint_refusals");
  Ppo<Eigen::VectorXf> saved(traces.dim(), 2, options(), 1);
  auto rollout = make_rollout(4, traces, 1);
  train(saved, rollout, 64);
  const auto path = dir / "agent.ckpt";
  save_ppo_checkpoint(path, saved);
  const std::string bytes = read_bytes(path);

  Ppo<Eigen::VectorXf> agent(traces.dim(), 2, options(), 3);
  TensorFile before;
  save_state(before, "agent.", agent);
  const auto refused = [&](const std::string& what) {
    CHECK_THROWS_WITH(load_ppo_checkpoint(path, agent), Catch::Contains(what));
    TensorFile after;
    save_state(after, "agent.", agent);
    CHECK(after == before);
  };

  write_bytes(path, bytes.substr(0, bytes.size() - 5));  // killed while writing it (without the atomic rename)
  refused("read_checkpoint: " + path.string() + ": not a readable checkpoint");
  std::string altered = bytes;
  altered[altered.size() - 3] ^= 0x10;  // one bit of Adam's second moment or of the generator
  write_bytes(path, altered);
  refused("the checksum does not match the contents (the file was altered or damaged)");

  TensorFile state;
  save_state(state, "agent.", saved);
  write_checkpoint(path, state, "memtrace.other.1");
  refused("a checkpoint of format \"memtrace.other.1\", expected \"memtrace.ppo_checkpoint.1\"");
  const auto forged = [&](const std::string& written_version, const std::string& isa) {
    TensorFile f = state;
    f.metadata["format"] = std::string(ppo_checkpoint_format);
    f.metadata["memtrace_version"] = written_version;
    f.metadata["isa"] = isa;
    f.metadata["checksum"] = detail::fnv1a_hex(safetensors_bytes(f));
    write_safetensors(path, f);
  };
  forged("0.2.0", instruction_set());
  refused("written by memtrace 0.2.0, this is memtrace " + std::string(version_string));
  forged(std::string(version_string), "avx512 (Eigen: AVX512)");
  refused("written by a build for avx512 (Eigen: AVX512), this one is for " + instruction_set());
  forged(std::string(version_string), instruction_set());
  CHECK_NOTHROW(read_checkpoint(path, ppo_checkpoint_format));  // the forgery is a valid checkpoint
  // Another version is named as such before the checksum is read: a later format's file (whose
  // bytes this version would count differently) is never called damaged.
  forged("0.2.0", instruction_set());
  std::string later = read_bytes(path);
  later[later.size() - 3] ^= 0x10;
  write_bytes(path, later);
  refused("written by memtrace 0.2.0, this is memtrace " + std::string(version_string));
  forged(std::string(version_string), instruction_set());

  PpoOptions other = options();
  other.ent_coef = 0.02;
  Ppo<Eigen::VectorXf> different(traces.dim(), 2, other, 3);
  CHECK_THROWS_WITH(load_ppo_checkpoint(path, different),
                    "load_ppo_checkpoint: " + path.string() +
                        ": load_state: the saved agent's options differ: \"ent_coef=0.01\" against the agent's "
                        "\"ent_coef=0.02\"");

  // Another memory (another input dimension) is named as such, before any parameter block.
  Ppo<Eigen::VectorXf> wider(traces.dim() + 1, 2, options(), 3);
  CHECK_THROWS_WITH(
      load_ppo_checkpoint(path, wider),
      Catch::Contains("load_state: agent.network: the state was saved from a Ppo agent with input_dim = " +
                      std::to_string(traces.dim()) + ", policy_dim = 2; this one has input_dim = " +
                      std::to_string(traces.dim() + 1) + ", policy_dim = 2"));

  TensorFile negative = state;
  for (Tensor& t : negative.tensors)
    if (t.name == "agent.adam.second_moment") t.values.back() = -1.0;
  write_checkpoint(path, negative, ppo_checkpoint_format);
  refused("Adam::set_state: second_moment[");
  TensorFile missing = state;
  std::erase_if(missing.tensors, [](const Tensor& t) { return t.name == "agent.generator"; });
  write_checkpoint(path, missing, ppo_checkpoint_format);
  refused("load_ppo_checkpoint: " + path.string() + ": load_state: the file has no tensor \"agent.generator\"");
  CHECK_THROWS_WITH(write_checkpoint(
                        path,
                        [&] {
                          TensorFile f = state;
                          f.metadata["checksum"] = "0";
                          return f;
                        }(),
                        ppo_checkpoint_format),
                    "checkpoint_bytes: the metadata key \"checksum\" is the checkpoint's own");
}

TEST_CASE("A diverged agent is refused at save, not when its file is read back, and no file is written",
          "[ppo][checkpoint]") {
  const TraceBank<dynamic, float> traces({0.0, 0.8}, 4);
  Ppo<Eigen::VectorXf> agent(traces.dim(), 2, options(), 1);
  agent.actor().parameters()[3] = std::numeric_limits<float>::quiet_NaN();
  const test::TempDir dir("ppo_checkpoint_diverged");
  CHECK_THROWS_WITH(save_ppo_checkpoint(dir / "agent.ckpt", agent),
                    "save_state: agent.parameters.0: entry 3 is nan: the agent diverged, and a state that cannot be "
                    "loaded is not saved");
  CHECK_FALSE(std::filesystem::exists(dir / "agent.ckpt"));
  CHECK_THROWS_WITH(ppo_weights(agent), Catch::Contains("tensor \"actor.0.weight\" holds a value that is not finite"));
}

TEST_CASE("An agent's checkpoint of memtrace 0.3.0 is refused as written by 0.3.0, never as damaged",
          "[ppo][checkpoint]") {
  // tests/data/ppo_checkpoint_0.3.0.safetensors: save_ppo_checkpoint of memtrace 0.3.0 (tag v0.3.0),
  // whose tensors are in another order than this version writes: its checksum would not match.
  PpoOptions o = options();
  o.hidden_sizes = {4};
  Ppo<Eigen::VectorXf> agent(3, 2, o, 7);
  const auto path = std::filesystem::path(MEMTRACE_TEST_DATA_DIR) / "ppo_checkpoint_0.3.0.safetensors";
  CHECK_THROWS_WITH(load_ppo_checkpoint(path, agent),
                    Catch::Contains("written by memtrace 0.3.0, this is memtrace " + std::string(version_string)));
}

}  // namespace ppo_checkpoint_test
