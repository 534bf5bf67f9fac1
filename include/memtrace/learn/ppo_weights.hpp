#pragma once
// A PPO agent's weights as named tensors (safetensors.hpp): the actor's and the critic's layers
// under PyTorch's names (actor.0.weight of shape [out, in], actor.0.bias, ...) and, for an agent
// that normalises its features, the normaliser's statistics; so that Python (NumPy alone, PyTorch,
// JAX) can run the trained policy, and memtrace can load it back to evaluate it or train on from
// it. Not the optimiser's state: that is a checkpoint's. Opt-in. See docs/control.md ("Weights
// Python reads").

#include <Eigen/Core>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/version.hpp"

namespace memtrace {

/// The value of TensorFile::metadata["format"] in a file of ppo_weights.
inline constexpr const char* ppo_weights_format = "memtrace.ppo_weights.1";

namespace detail {

template <class Scalar>
void append_mlp_tensors(TensorFile& file, const std::string& prefix, const Mlp<Scalar>& net) {
  for (std::size_t l = 0; l < net.num_layers(); ++l) {
    file.tensors.push_back(to_tensor(prefix + "." + std::to_string(l) + ".weight", net.weights(l)));
    file.tensors.push_back(to_tensor(prefix + "." + std::to_string(l) + ".bias", net.bias(l)));
  }
}

template <class Scalar>
void check_mlp_tensors(const TensorFile& file, const std::string& prefix, const Mlp<Scalar>& net) {
  const TensorDtype dtype = std::same_as<Scalar, float> ? TensorDtype::f32 : TensorDtype::f64;
  for (std::size_t l = 0; l < net.num_layers(); ++l) {
    const std::size_t in = net.sizes()[l], out = net.sizes()[l + 1];
    (void)expected_tensor("load_ppo_weights", file, prefix + "." + std::to_string(l) + ".weight", dtype, {out, in});
    (void)expected_tensor("load_ppo_weights", file, prefix + "." + std::to_string(l) + ".bias", dtype, {out});
  }
}

// The number a metadata entry of `file` holds, or NaN if it has none or it is not a number.
[[nodiscard]] inline double metadata_number(const TensorFile& file, const std::string& key) {
  const auto it = file.metadata.find(key);
  double x = std::numeric_limits<double>::quiet_NaN();
  if (it == file.metadata.end()) return x;
  const char* end = it->second.data() + it->second.size();
  const auto parsed = std::from_chars(it->second.data(), end, x);
  return parsed.ec == std::errc() && parsed.ptr == end ? x : std::numeric_limits<double>::quiet_NaN();
}

template <class Scalar>
void copy_mlp_tensors(const TensorFile& file, const std::string& prefix, Mlp<Scalar>& net) {
  for (std::size_t l = 0; l < net.num_layers(); ++l) {
    copy_tensor(file.at(prefix + "." + std::to_string(l) + ".weight"), net.weights(l));
    copy_tensor(file.at(prefix + "." + std::to_string(l) + ".bias"), net.bias(l));
  }
}

/// A normaliser from saved statistics (FeatureNormalizer's constructor from them), for the
/// loaders of weights and checkpoints; its refusals keep their text.
[[nodiscard]] inline FeatureNormalizer restore_normalizer(std::uint64_t count, const std::vector<double>& mean,
                                                          const std::vector<double>& squared_deviations,
                                                          const NormalizerOptions& options) {
  const auto d = static_cast<Eigen::Index>(mean.size());
  return FeatureNormalizer(static_cast<std::size_t>(count), Eigen::Map<const Eigen::VectorXd>(mean.data(), d),
                           Eigen::Map<const Eigen::VectorXd>(squared_deviations.data(), d), options);
}

}  // namespace detail

/// The agent's weights: tensors actor.L.weight ([out, in]) and actor.L.bias ([out]) for each layer
/// L, the same for critic (in the agent's Scalar: F32 for float), and with
/// options().normalize_features the normaliser's statistics in F64: normalizer.count (a scalar),
/// normalizer.mean, normalizer.squared_deviations and normalizer.variance (their quotient, 1 before
/// the first update: what a Python forward pass needs). Metadata: format (ppo_weights_format),
/// memtrace_version, activation ("tanh"), input_dim, num_actions, hidden (e.g. "64,64"), and with
/// normalisation normalizer_epsilon and normalizer_clip (the digits that read back to the same double).
template <class Phi, class Scalar>
[[nodiscard]] TensorFile ppo_weights(const Ppo<Phi, Scalar>& agent) {
  TensorFile file;
  detail::append_mlp_tensors(file, "actor", agent.actor());
  detail::append_mlp_tensors(file, "critic", agent.critic());
  std::string hidden;
  for (const std::size_t h : agent.options().hidden_sizes) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  file.metadata = {{"format", ppo_weights_format},
                   {"memtrace_version", std::string(version_string)},
                   {"activation", "tanh"},
                   {"input_dim", std::to_string(agent.input_dim())},
                   {"num_actions", std::to_string(agent.num_actions())},
                   {"hidden", hidden}};
  if (agent.options().normalize_features) {
    const FeatureNormalizer& n = agent.normalizer();
    if (n.count() > (std::size_t{1} << 53))
      detail::invalid("ppo_weights: the normaliser's count ", n.count(), " exceeds 2^53, which F64 holds exactly");
    file.tensors.push_back({"normalizer.count", TensorDtype::f64, {}, {static_cast<double>(n.count())}});
    file.tensors.push_back(to_tensor("normalizer.mean", n.mean()));
    file.tensors.push_back(to_tensor("normalizer.squared_deviations", n.squared_deviations()));
    file.tensors.push_back(to_tensor("normalizer.variance", n.variance()));
    file.metadata["normalizer_epsilon"] = detail::message(n.options().epsilon);
    file.metadata["normalizer_clip"] = detail::message(n.options().clip);
  }
  return file;
}

/// Loads weights written by ppo_weights into an agent of the same shape (input_dim, num_actions,
/// hidden sizes, Scalar) and normalisation: the networks, and the normaliser's statistics (not
/// frozen; normalizer.variance is not read). The optimiser is left as it is: on a fresh agent,
/// training goes on with a fresh optimiser. Throws std::invalid_argument starting
/// "load_ppo_weights: " for another format, a missing tensor, one of another dtype or shape, or a
/// normalisation that differs (its presence or its options); every check runs before anything is
/// changed, so a refused file changes nothing.
template <class Phi, class Scalar>
void load_ppo_weights(Ppo<Phi, Scalar>& agent, const TensorFile& file) {
  const auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != ppo_weights_format)
    detail::invalid("load_ppo_weights: the file is not of format ", ppo_weights_format, " (its metadata says \"",
                    format == file.metadata.end() ? std::string("no format") : format->second, "\")");
  detail::check_mlp_tensors(file, "actor", agent.actor());
  detail::check_mlp_tensors(file, "critic", agent.critic());
  const bool normalized = file.metadata.contains("normalizer_epsilon");
  if (normalized != agent.options().normalize_features)
    detail::invalid("load_ppo_weights: the file's agent ", normalized ? "normalises" : "does not normalise",
                    " its features, this one ", agent.options().normalize_features ? "does" : "does not");
  FeatureNormalizer normalizer;
  if (normalized) {
    const auto d = agent.input_dim();
    const double count =
        detail::expected_tensor("load_ppo_weights", file, "normalizer.count", TensorDtype::f64, {}).values[0];
    const Tensor& mean = detail::expected_tensor("load_ppo_weights", file, "normalizer.mean", TensorDtype::f64, {d});
    const Tensor& m2 =
        detail::expected_tensor("load_ppo_weights", file, "normalizer.squared_deviations", TensorDtype::f64, {d});
    const Tensor& variance =
        detail::expected_tensor("load_ppo_weights", file, "normalizer.variance", TensorDtype::f64, {d});
    if (!(count >= 0.0 && count <= 9007199254740992.0 && count == std::floor(count)))
      detail::invalid("load_ppo_weights: normalizer.count must be a whole number in [0, 2^53], got ", count);
    // Python normalises with the variance, memtrace with M2 / count: they must agree.
    for (std::size_t i = 0; i < d; ++i)
      if (variance.values[i] != (count > 0.0 ? m2.values[i] / count : 1.0))
        detail::invalid("load_ppo_weights: normalizer.variance[", i, "] is ", variance.values[i],
                        ", not normalizer.squared_deviations / normalizer.count: the file was altered");
    const auto& options = agent.options().normalizer;
    const double epsilon = detail::metadata_number(file, "normalizer_epsilon"),
                 clip = detail::metadata_number(file, "normalizer_clip");
    if (!(epsilon == options.epsilon && clip == options.clip))
      detail::invalid("load_ppo_weights: the file's normaliser has epsilon ", epsilon, " and clip ", clip,
                      " (NaN: missing or not a number), the agent's options.normalizer ", options.epsilon, " and ",
                      options.clip);
    try {
      normalizer = detail::restore_normalizer(static_cast<std::uint64_t>(count), mean.values, m2.values, options);
    } catch (const std::invalid_argument& e) {
      detail::invalid("load_ppo_weights: ", e.what());
    }
  }
  detail::copy_mlp_tensors(file, "actor", agent.actor());
  detail::copy_mlp_tensors(file, "critic", agent.critic());
  if (normalized) agent.set_normalizer(normalizer);
}

/// ppo_weights written to `path` (write_safetensors: atomically).
template <class Phi, class Scalar>
void save_ppo_weights(const std::filesystem::path& path, const Ppo<Phi, Scalar>& agent) {
  write_safetensors(path, ppo_weights(agent));
}

/// load_ppo_weights from the file at `path` (read_safetensors).
template <class Phi, class Scalar>
void load_ppo_weights(Ppo<Phi, Scalar>& agent, const std::filesystem::path& path) {
  load_ppo_weights(agent, read_safetensors(path));
}

}  // namespace memtrace
