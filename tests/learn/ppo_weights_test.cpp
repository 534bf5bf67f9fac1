// Tests of learn/ppo_weights.hpp: an agent's weights and normaliser statistics go into a
// safetensors file under PyTorch's names and come back into another agent bit for bit (the same
// logits and values); an agent without normalisation round-trips too; a file that does not fit the
// agent is refused, naming what differs, and changes nothing. (Python reading the file with NumPy
// alone: tests/learn/ppo_weights_numpy.py, run by ctest with ppo_weights_probe.cpp.)
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_weights.hpp>
#include <memtrace/safetensors.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace ppo_weights_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

using Agent = Ppo<Eigen::VectorXf, float>;

PpoOptions small(bool normalize, std::vector<std::size_t> hidden = {8, 8}) {
  PpoOptions o;
  o.n_envs = 2;
  o.n_steps = 4;
  o.minibatches = 2;
  o.hidden_sizes = std::move(hidden);
  o.normalize_features = normalize;
  return o;
}

// Statistics as if the agent had acted: 37 feature vectors of mean 0.5 + 0.1 i, M2 2 + i.
FeatureNormalizer statistics(std::size_t dim) {
  Eigen::VectorXd mean(static_cast<Eigen::Index>(dim)), m2(static_cast<Eigen::Index>(dim));
  for (Eigen::Index i = 0; i < mean.size(); ++i) {
    mean[i] = 0.5 + 0.1 * static_cast<double>(i);
    m2[i] = 2.0 + static_cast<double>(i);
  }
  return FeatureNormalizer(37, mean, m2);
}

Eigen::MatrixXf inputs(std::size_t dim) {
  return Eigen::MatrixXf::NullaryExpr(static_cast<Eigen::Index>(dim), 5, [](Eigen::Index r, Eigen::Index c) {
    return static_cast<float>(r) * 0.3f - static_cast<float>(c) * 0.7f;
  });
}

// Biases start at zero: give them values, so that a loader that skipped them would be noticed.
void set_biases(Agent& agent) {
  for (std::size_t l = 0; l < agent.actor().num_layers(); ++l) {
    agent.actor().bias(l).setLinSpaced(-0.3f, 0.4f);
    agent.critic().bias(l).setLinSpaced(0.2f, -0.1f);
  }
}

// The actor's logits and the critic's values of the agent on x, normalised as the agent acts.
Eigen::MatrixXf outputs(Agent& agent, const Eigen::MatrixXf& x) {
  Eigen::MatrixXf in = x;
  if (agent.options().normalize_features) agent.normalizer().normalize(x, in);
  Eigen::MatrixXf out(static_cast<Eigen::Index>(agent.num_actions()) + 1, x.cols());
  out.topRows(static_cast<Eigen::Index>(agent.num_actions())) = agent.actor().forward(in);
  out.bottomRows(1) = agent.critic().forward(in);
  return out;
}

}  // namespace

TEST_CASE("ppo_weights names the layers as PyTorch does and stores the normaliser's statistics", "[ppo_weights]") {
  Agent agent(6, 3, small(true), 1);
  agent.set_normalizer(statistics(6));
  const TensorFile file = ppo_weights(agent);
  CHECK(file.at("actor.0.weight").shape == std::vector<std::size_t>{8, 6});
  CHECK(file.at("actor.0.weight").dtype == TensorDtype::f32);
  CHECK(file.at("actor.2.bias").shape == std::vector<std::size_t>{3});
  CHECK(file.at("critic.2.weight").shape == std::vector<std::size_t>{1, 8});
  CHECK(file.at("actor.0.weight").values[1] == agent.actor().weights(0)(0, 1));  // row-major
  CHECK(file.at("normalizer.count").values == std::vector<double>{37.0});
  CHECK(file.at("normalizer.variance").values[2] == (2.0 + 2.0) / 37.0);
  CHECK(file.metadata.at("format") == ppo_weights_format);
  CHECK(file.metadata.at("hidden") == "8,8");
  CHECK(file.metadata.at("normalizer_clip") == "10");
}

TEST_CASE("Weights loaded into another agent give the same parameters, normaliser, logits and values",
          "[ppo_weights]") {
  for (const bool normalize : {true, false}) {
    Agent trained(6, 3, small(normalize), 1);
    set_biases(trained);
    if (normalize) trained.set_normalizer(statistics(6));
    const memtrace::test::TempDir dir("ppo_weights_test");
    save_ppo_weights(dir / "agent.safetensors", trained);
    Agent fresh(6, 3, small(normalize), 2);
    REQUIRE(fresh.actor().parameters() != trained.actor().parameters());
    load_ppo_weights(dir / "agent.safetensors", fresh);
    CHECK(fresh.actor().parameters() == trained.actor().parameters());
    CHECK(fresh.actor().bias(0)[0] == -0.3f);
    CHECK(fresh.critic().parameters() == trained.critic().parameters());
    CHECK(fresh.normalizer() == trained.normalizer());
    CHECK(outputs(fresh, inputs(6)) == outputs(trained, inputs(6)));
    CHECK(fresh.adam_steps() == 0);  // the optimiser is not part of the weights
  }
}

TEST_CASE("A file that does not fit the agent is refused, naming what differs, and changes nothing", "[ppo_weights]") {
  Agent source(6, 3, small(true), 1);
  source.set_normalizer(statistics(6));
  const TensorFile good = ppo_weights(source);
  Agent agent(6, 3, small(true), 2);
  const Eigen::VectorXf before = agent.actor().parameters();
  // The files below are altered on purpose, each to meet one check: without the checksum, which
  // would refuse them all first (a file of 0.3 has none).
  const auto refused = [&](Agent& target, TensorFile file, const std::string& what) {
    file.metadata.erase("checksum");
    CHECK_THROWS_WITH(load_ppo_weights(file, target), Catch::StartsWith("load_ppo_weights: ") && Catch::Contains(what));
  };
  // One bit of one weight flipped: the checksum refuses it.
  TensorFile flipped = good;
  flipped.tensors[0].values[3] = std::nextafter(static_cast<float>(flipped.tensors[0].values[3]), 1.0f);
  CHECK_THROWS_WITH(load_ppo_weights(flipped, agent),
                    "load_ppo_weights: the checksum does not match the contents (the file was altered or damaged)");
  TensorFile other_format = good;
  other_format.metadata["format"] = "something else";
  refused(agent, other_format, "not of format memtrace.ppo_weights.1");
  TensorFile missing = good;
  missing.tensors.pop_back();
  missing.tensors.erase(missing.tensors.begin() + 3);  // actor.1.bias
  refused(agent, missing, "no tensor \"actor.1.bias\"");
  Agent wider(6, 3, small(true, {16, 8}), 2);
  refused(wider, good, "tensor \"actor.0.weight\" is F32 [8, 6], expected F32 [16, 6]");
  Ppo<Eigen::VectorXd, double> in_double(6, 3, small(true), 2);
  CHECK_THROWS_WITH(load_ppo_weights(good, in_double), Catch::Contains("is F32 [8, 6], expected F64 [8, 6]"));
  Agent plain(6, 3, small(false), 2);
  refused(plain, good, "the file's agent normalises its features, this one does not");
  PpoOptions clipped = small(true);
  clipped.normalizer.clip = 5.0;
  Agent other_clip(6, 3, clipped, 2);
  refused(other_clip, good, "clip 10 (NaN: missing or not a number), the agent's options.normalizer 1e-08 and 5");
  TensorFile bad_count = good;
  for (Tensor& t : bad_count.tensors)
    if (t.name == "normalizer.count") t.values[0] = 2.5;
  refused(agent, bad_count, "normalizer.count must be a whole number");
  TensorFile negative = good;
  for (Tensor& t : negative.tensors)
    if (t.name == "normalizer.squared_deviations" || t.name == "normalizer.variance")
      t.values[1] = t.name == "normalizer.variance" ? -1.0 / 37.0 : -1.0;
  refused(agent, negative, "squared_deviations must be non-negative");
  TensorFile altered = good;
  for (Tensor& t : altered.tensors)
    if (t.name == "normalizer.variance") t.values[0] *= 2.0;
  refused(agent, altered, "normalizer.variance[0] is");
  TensorFile infinite = good;
  infinite.tensors[0].values[5] = std::numeric_limits<double>::infinity();
  refused(agent, infinite, "tensor \"actor.0.weight\" holds inf; it must be finite");
  TensorFile short_mean = good;
  for (Tensor& t : short_mean.tensors)
    if (t.name == "normalizer.mean") t.values.pop_back();
  refused(agent, short_mean, "tensor \"normalizer.mean\" holds 5 values, its shape 6");
  // A second tensor of a name already present (a TensorFile made in memory) is never read: the
  // checks and the copy both take the first.
  TensorFile twice = good;
  twice.metadata.erase("checksum");  // which a file of two tensors of one name cannot have
  twice.tensors.push_back({"actor.0.weight", TensorDtype::f32, {1}, {0.0}});
  Agent other(6, 3, small(true), 3);
  load_ppo_weights(twice, other);
  CHECK(other.actor().parameters() == source.actor().parameters());
  CHECK(agent.actor().parameters() == before);
  CHECK(agent.normalizer() == FeatureNormalizer(6));
}

TEST_CASE("A weights file written by memtrace 0.3.0 still loads", "[ppo_weights]") {
  // tests/data/ppo_weights_0.3.0.safetensors: save_ppo_weights of memtrace 0.3.0 (tag v0.3.0) for
  // Ppo<Eigen::VectorXf, float>(3, 2, these options, seed 7) with the statistics below.
  PpoOptions o = small(true, {4});
  Agent written(3, 2, o, 7);  // the same seed: the same initial parameters
  Agent agent(3, 2, o, 8);
  load_ppo_weights(std::filesystem::path(MEMTRACE_TEST_DATA_DIR) / "ppo_weights_0.3.0.safetensors", agent);
  CHECK(agent.actor().parameters() == written.actor().parameters());
  CHECK(agent.critic().parameters() == written.critic().parameters());
  CHECK(agent.normalizer() ==
        FeatureNormalizer(5, Eigen::Vector3d(0.5, -1.0, 2.0), Eigen::Vector3d(1.0, 2.0, 3.0), o.normalizer));
}

TEST_CASE(
    "A Gaussian agent's weights (its log standard deviation included) round-trip, and a file of another "
    "action dimension or distribution is refused",
    "[ppo_weights]") {
  using Gaussian = Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>>;
  Gaussian trained(6, 2, small(true), 1);
  trained.set_normalizer(statistics(6));
  trained.networks().log_std() << -0.5f, 0.25f;
  const memtrace::test::TempDir dir("ppo_weights_gaussian");
  save_ppo_weights(dir / "gaussian.safetensors", trained);
  const TensorFile file = read_safetensors(dir / "gaussian.safetensors");
  CHECK(file.metadata.at("policy_distribution") == "diagonal_gaussian");
  CHECK(file.metadata.at("action_dim") == "2");
  CHECK(file.metadata.at("hidden") == "8,8");
  REQUIRE(file.find("log_std") != nullptr);
  CHECK(file.find("log_std")->shape == std::vector<std::size_t>{2});
  Gaussian fresh(6, 2, small(true), 2);
  load_ppo_weights(dir / "gaussian.safetensors", fresh);
  CHECK(fresh.networks().actor().parameters() == trained.networks().actor().parameters());
  CHECK(fresh.networks().critic().parameters() == trained.networks().critic().parameters());
  CHECK(fresh.networks().log_std() == trained.networks().log_std());
  CHECK(fresh.normalizer() == trained.normalizer());

  Gaussian wider(6, 3, small(true), 2);
  const Eigen::VectorXf before = wider.networks().log_std();
  CHECK_THROWS_WITH(load_ppo_weights(dir / "gaussian.safetensors", wider),
                    "load_ppo_weights: " + (dir / "gaussian.safetensors").string() +
                        ": tensor \"actor.2.weight\" is F32 [2, 8], expected F32 [3, 8]");
  CHECK(wider.networks().log_std() == before);
  Agent categorical(6, 2, small(true), 2);  // same layer shapes but for log_std
  CHECK_THROWS_WITH(load_ppo_weights(file, categorical),
                    "load_ppo_weights: the file's policy is diagonal_gaussian, this agent's categorical");
}

}  // namespace ppo_weights_test
