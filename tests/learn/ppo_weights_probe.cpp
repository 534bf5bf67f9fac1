// Writes what tests/learn/ppo_weights_numpy.py checks (ctest runs both): into the folder argv[1],
// agent.safetensors (ppo_weights of an agent with normalised features and set statistics) and
// probe.safetensors (inputs [n, d], and the agent's logits [n, |U|] and values [n] on them, as
// memtrace computes them); gaussian.safetensors and gaussian_probe.safetensors the same for a
// Gaussian agent (its means [n, k], log standard deviations [n, k] and values [n]); gru.safetensors
// and gru_probe.safetensors for a recurrent agent (GruActorCritic) over a sequence of 7 steps of 2
// environments with an episode start inside it: inputs [14, d] (time-major), starts [14] and the
// logits [14, 3] and values [14] memtrace computes; gru_gaussian.safetensors and
// gru_gaussian_probe.safetensors the same for a recurrent agent with Gaussian heads (its means
// [14, 2], log standard deviations [14, 2] and values [14]).
#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
#include <memtrace/learn/gru_actor_critic.hpp>
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_weights.hpp>
#include <memtrace/safetensors.hpp>

int main(int argc, char** argv) {
  using namespace memtrace;
  if (argc != 2) {
    std::fprintf(stderr, "usage: ppo_weights_probe FOLDER\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    PpoOptions options;
    options.normalize_features = true;
    options.hidden_sizes = {16, 12};
    constexpr Eigen::Index dim = 7, n = 9;
    Ppo<Eigen::VectorXf, float> agent(dim, 3, options, 5);
    const Eigen::VectorXd mean = Eigen::VectorXd::LinSpaced(dim, -0.5, 1.5);
    const Eigen::VectorXd m2 = Eigen::VectorXd::LinSpaced(dim, 0.5, 40.0);
    agent.set_normalizer(FeatureNormalizer(20, mean, m2));
    for (std::size_t l = 0; l < agent.actor().num_layers(); ++l) {  // biases start at zero: give them values
      agent.actor().bias(l).setLinSpaced(-0.5f, 0.5f);
      agent.critic().bias(l).setLinSpaced(0.3f, -0.2f);
    }
    save_ppo_weights(dir / "agent.safetensors", agent);

    // Inputs that exercise the clip: some features 10 standard deviations or more from the mean.
    const Eigen::MatrixXf x = Eigen::MatrixXf::NullaryExpr(
        dim, n, [](Eigen::Index r, Eigen::Index c) { return static_cast<float>((r + 1) * (c - 4)) * 0.45f; });
    Eigen::MatrixXf normalized(dim, n);
    agent.normalizer().normalize(x, normalized);
    const Eigen::MatrixXf logits = agent.actor().forward(normalized);
    const Eigen::VectorXf values = agent.critic().forward(normalized).row(0).transpose();
    TensorFile probe;
    probe.tensors.push_back(to_tensor("inputs", Eigen::MatrixXf(x.transpose())));
    probe.tensors.push_back(to_tensor("logits", Eigen::MatrixXf(logits.transpose())));
    probe.tensors.push_back(to_tensor("values", values));
    write_safetensors(dir / "probe.safetensors", probe);

    // A Gaussian agent over 2-dimensional actions, with a log standard deviation of its own.
    Ppo<Eigen::VectorXf, float, GaussianActorCritic<float>> gaussian(dim, 2, options, 6);
    gaussian.set_normalizer(FeatureNormalizer(20, mean, m2));
    gaussian.networks().log_std() << -0.4f, 0.3f;
    for (std::size_t l = 0; l < gaussian.networks().actor().num_layers(); ++l)
      gaussian.networks().actor().bias(l).setLinSpaced(0.2f, -0.6f);
    save_ppo_weights(dir / "gaussian.safetensors", gaussian);
    const Eigen::MatrixXf out = gaussian.networks().forward_policy(Eigen::MatrixXf(normalized));
    const Eigen::VectorXf gaussian_values =
        gaussian.networks().forward_value(Eigen::MatrixXf(normalized)).row(0).transpose();
    TensorFile gaussian_probe;
    gaussian_probe.tensors.push_back(to_tensor("inputs", Eigen::MatrixXf(x.transpose())));
    gaussian_probe.tensors.push_back(to_tensor("means", Eigen::MatrixXf(out.topRows(2).transpose())));
    gaussian_probe.tensors.push_back(to_tensor("log_stds", Eigen::MatrixXf(out.bottomRows(2).transpose())));
    gaussian_probe.tensors.push_back(to_tensor("values", gaussian_values));
    write_safetensors(dir / "gaussian_probe.safetensors", gaussian_probe);

    // A recurrent agent (a GRU of 5 under heads of one hidden layer of 6), run over a sequence of 7
    // steps of 2 environments in which environment 1 starts a new episode at step 3.
    GruActorCritic<float> nets(dim, 3, 5, {6});
    DefaultGenerator init(7);
    nets.initialize_orthogonal(init);
    nets.gru().input_layer().bias(0).setLinSpaced(-0.3f, 0.4f);
    nets.gru().bias_hh().setLinSpaced(0.5f, -0.2f);
    PpoOptions recurrent_options = options;
    recurrent_options.minibatches = 4;
    Ppo<Eigen::VectorXf, float, GruActorCritic<float>> gru(std::move(nets), recurrent_options, 8);
    gru.set_normalizer(FeatureNormalizer(20, mean, m2));
    save_ppo_weights(dir / "gru.safetensors", gru);
    constexpr Eigen::Index steps = 7, envs = 2;
    const Eigen::MatrixXf sequence =
        Eigen::MatrixXf::NullaryExpr(dim, steps * envs, [](Eigen::Index r, Eigen::Index c) {
          return std::sin(static_cast<float>(3 * r + 5 * c)) * (1.0f + 0.2f * static_cast<float>(r));
        });
    Eigen::MatrixXf normalized_sequence(dim, steps * envs);
    gru.normalizer().normalize(sequence, normalized_sequence);
    bool starts[steps * envs] = {};
    starts[0] = starts[1] = true;  // both start an episode at step 0 (zero states)
    starts[3 * envs + 1] = true;   // environment 1 again at step 3
    const auto sequence_out =
        gru.networks().forward_sequence(normalized_sequence, starts, Eigen::MatrixXf::Zero(5, envs));
    TensorFile gru_probe;
    gru_probe.tensors.push_back(to_tensor("inputs", Eigen::MatrixXf(sequence.transpose())));  // [T·B, d], time-major
    gru_probe.tensors.push_back(
        {"starts", TensorDtype::u64, {steps * envs}, {}, {1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}});
    gru_probe.tensors.push_back(to_tensor("logits", Eigen::MatrixXf(sequence_out.policy.transpose())));
    gru_probe.tensors.push_back(to_tensor("values", Eigen::VectorXf(sequence_out.value.row(0).transpose())));
    write_safetensors(dir / "gru_probe.safetensors", gru_probe);

    // The same GRU under Gaussian heads over 2-dimensional actions (ppo_pendulum's --memories gru32).
    GruActorCritic<float, GaussianActorCritic<float>> gaussian_nets(dim, GaussianActorCritic<float>(5, 2, {6}));
    DefaultGenerator gaussian_init(9);
    gaussian_nets.initialize_orthogonal(gaussian_init);
    gaussian_nets.gru().input_layer().bias(0).setLinSpaced(0.4f, -0.3f);
    gaussian_nets.gru().bias_hh().setLinSpaced(-0.2f, 0.5f);
    gaussian_nets.heads().log_std() << 0.25f, -0.7f;
    Ppo<Eigen::VectorXf, float, GruActorCritic<float, GaussianActorCritic<float>>> gru_gaussian(
        std::move(gaussian_nets), recurrent_options, 10);
    gru_gaussian.set_normalizer(FeatureNormalizer(20, mean, m2));
    save_ppo_weights(dir / "gru_gaussian.safetensors", gru_gaussian);
    const auto gaussian_sequence_out =
        gru_gaussian.networks().forward_sequence(normalized_sequence, starts, Eigen::MatrixXf::Zero(5, envs));
    TensorFile gru_gaussian_probe;
    gru_gaussian_probe.tensors.push_back(gru_probe.tensors[0]);  // the inputs and the starts
    gru_gaussian_probe.tensors.push_back(gru_probe.tensors[1]);
    gru_gaussian_probe.tensors.push_back(
        to_tensor("means", Eigen::MatrixXf(gaussian_sequence_out.policy.topRows(2).transpose())));
    gru_gaussian_probe.tensors.push_back(
        to_tensor("log_stds", Eigen::MatrixXf(gaussian_sequence_out.policy.bottomRows(2).transpose())));
    gru_gaussian_probe.tensors.push_back(
        to_tensor("values", Eigen::VectorXf(gaussian_sequence_out.value.row(0).transpose())));
    write_safetensors(dir / "gru_gaussian_probe.safetensors", gru_gaussian_probe);
    std::printf("wrote the agents and probes of %s\n", dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ppo_weights_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
