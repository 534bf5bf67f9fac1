// Writes what tests/learn/ppo_weights_numpy.py checks (ctest runs both): into the folder argv[1],
// agent.safetensors (ppo_weights of an agent with normalised features and set statistics) and
// probe.safetensors (inputs [n, d], and the agent's logits [n, |U|] and values [n] on them, as
// memtrace computes them); gaussian.safetensors and gaussian_probe.safetensors the same for a
// Gaussian agent (its means [n, k], log standard deviations [n, k] and values [n]).
#include <Eigen/Core>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memtrace/learn/feature_normalizer.hpp>
#include <memtrace/learn/gaussian_actor_critic.hpp>
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
    std::printf("wrote %s, %s, %s and %s\n", (dir / "agent.safetensors").c_str(), (dir / "probe.safetensors").c_str(),
                (dir / "gaussian.safetensors").c_str(), (dir / "gaussian_probe.safetensors").c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ppo_weights_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
