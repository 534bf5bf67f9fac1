#pragma once
// A PPO agent's weights as named tensors (safetensors.hpp): the network's named blocks (the default
// networks: the actor's and the critic's layers under PyTorch's names, actor.0.weight of shape
// [out, in], actor.0.bias, ..., and a Gaussian's log_std) and, for an agent that normalises its
// features, the normaliser's statistics; so that Python (NumPy alone, PyTorch,
// JAX) can run the trained policy, and memtrace can load it back to evaluate it or train on from
// it. Not the optimiser's state: that is a checkpoint's. Opt-in. See docs/control.md ("Weights
// Python reads").

#include <Eigen/Core>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/version.hpp"

namespace memtrace {

/// The value of TensorFile::metadata["format"] in a file of ppo_weights.
inline constexpr const char* ppo_weights_format = "memtrace.ppo_weights.1";

namespace detail {

/// Calls nothing: what a network's named_blocks must accept (NamedWeights).
struct NamedBlockProbe {
  template <class M>
  void operator()(const std::string& /*name*/, M&& /*block*/) const noexcept {}
};

/// The tensor shape of an Eigen block: {rows} for a vector known as one at compile time (a bias),
/// {rows, cols} otherwise (to_tensor's).
template <class M>
[[nodiscard]] std::vector<std::size_t> block_shape(const M& m) {
  if constexpr (std::remove_cvref_t<M>::ColsAtCompileTime == 1)
    return {static_cast<std::size_t>(m.rows())};
  else
    return {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())};
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

/// A network whose weights a weights file can hold: named_blocks(visit) calls visit(name, block)
/// for every block of weights (an Eigen matrix or vector, mutable in the non-const overload), under
/// the names the file gives them; the default networks do (ActorCritic, GaussianActorCritic).
/// Optional: weights_metadata(), entries for the file's metadata (activation, hidden sizes).
template <class N>
concept NamedWeights = requires(N& net, const N& cnet) {
  net.named_blocks(detail::NamedBlockProbe{});
  cnet.named_blocks(detail::NamedBlockProbe{});
};

/// The agent's weights: the network's named blocks (NamedWeights: for the default networks
/// actor.L.weight [out, in] and actor.L.bias [out] for each layer L, the same for critic, and for
/// GaussianActorCritic log_std [k]), in the agent's Scalar (F32 for float), and with
/// options().normalize_features the normaliser's statistics in F64: normalizer.count (a scalar),
/// normalizer.mean, normalizer.squared_deviations and normalizer.variance (their quotient, 1 before
/// the first update: what a Python forward pass needs). Metadata: format (ppo_weights_format),
/// memtrace_version, input_dim, policy_distribution (categorical or diagonal_gaussian), num_actions
/// or action_dim, the network's weights_metadata() (the default networks: activation "tanh" and
/// hidden, e.g. "64,64"), and with normalisation normalizer_epsilon and normalizer_clip (the
/// digits that read back to the same double), and checksum: the FNV-1a hash of the file's bytes
/// without it (as a checkpoint's), so that an altered weight is refused.
template <class Phi, class Scalar, class Network>
[[nodiscard]] TensorFile ppo_weights(const Ppo<Phi, Scalar, Network>& agent) {
  static_assert(NamedWeights<Network>,
                "ppo_weights: the network must name its weights: a member named_blocks(visit) that calls visit(name, "
                "block) for every Eigen block of weights, const and not (docs/control.md, \"Weights Python reads\")");
  using D = typename Ppo<Phi, Scalar, Network>::distribution_type;
  TensorFile file;
  agent.networks().named_blocks([&](const std::string& name, const auto& block) {
    if (!block.allFinite())  // what is saved loads: a diverged agent is refused here
      throw std::domain_error(
          detail::message("ppo_weights: tensor \"", name, "\" holds a value that is not finite: the agent diverged"));
    file.tensors.push_back(to_tensor(name, block));
  });
  const auto policy_dim = static_cast<std::size_t>(agent.networks().policy_dim());
  file.metadata = {{"format", ppo_weights_format},
                   {"memtrace_version", std::string(version_string)},
                   {"input_dim", std::to_string(agent.input_dim())},
                   {"policy_distribution", D::name},
                   {D::size_name, std::to_string(D::size_of(policy_dim))}};
  if constexpr (requires { agent.networks().weights_metadata(); })
    for (const auto& [key, value] : agent.networks().weights_metadata()) file.metadata.emplace(key, value);
  if (agent.options().normalize_features) {
    const FeatureNormalizer& n = agent.normalizer();
    if (n.count() > (std::size_t{1} << 53))
      detail::invalid("ppo_weights: the normaliser's count ", n.count(), " exceeds 2^53, which F64 holds exactly");
    file.tensors.push_back({"normalizer.count", TensorDtype::f64, {}, {static_cast<double>(n.count())}});
    if (!n.mean().allFinite() || !n.squared_deviations().allFinite())
      throw std::domain_error("ppo_weights: the normaliser's statistics are not finite (features that overflowed)");
    file.tensors.push_back(to_tensor("normalizer.mean", n.mean()));
    file.tensors.push_back(to_tensor("normalizer.squared_deviations", n.squared_deviations()));
    file.tensors.push_back(to_tensor("normalizer.variance", n.variance()));
    file.metadata["normalizer_epsilon"] = detail::message(n.options().epsilon);
    file.metadata["normalizer_clip"] = detail::message(n.options().clip);
  }
  file.metadata["checksum"] = detail::fnv1a_hex(safetensors_bytes(file));  // of the bytes without it
  return file;
}

/// Loads weights written by ppo_weights into an agent of the same shape (input_dim, num_actions,
/// hidden sizes, Scalar) and normalisation: the networks, and the normaliser's statistics (not
/// frozen; normalizer.variance is not read). The optimiser is left as it is: on a fresh agent,
/// training goes on with a fresh optimiser. Throws std::invalid_argument starting
/// "load_ppo_weights: " for another format or policy distribution, a checksum that does not match
/// (a file without one, as 0.3 wrote them, is read), a missing tensor, one of another dtype or shape, or
/// a normalisation that differs (its presence or its options); every check runs before anything is changed, so a
/// refused file changes nothing.
template <class Phi, class Scalar, class Network>
void load_ppo_weights(const TensorFile& file, Ppo<Phi, Scalar, Network>& agent) {
  static_assert(NamedWeights<Network>, "load_ppo_weights: the network must name its weights (named_blocks)");
  const auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != ppo_weights_format)
    detail::invalid("load_ppo_weights: the file is not of format ", ppo_weights_format, " (its metadata says \"",
                    format == file.metadata.end() ? std::string("no format") : format->second, "\")");
  using D = typename Ppo<Phi, Scalar, Network>::distribution_type;
  // 0.3's files say nothing of their distribution: they were categorical.
  const auto distribution = file.metadata.find("policy_distribution");
  const std::string theirs = distribution == file.metadata.end() ? "categorical" : distribution->second;
  if (theirs != D::name) detail::invalid("load_ppo_weights: the file's policy is ", theirs, ", this agent's ", D::name);
  if (const auto checksum = file.metadata.find("checksum"); checksum != file.metadata.end()) {  // 0.3's have none
    TensorFile unsigned_file = file;
    unsigned_file.metadata.erase("checksum");
    if (detail::fnv1a_hex(safetensors_bytes(unsigned_file)) != checksum->second)
      detail::invalid("load_ppo_weights: the checksum does not match the contents (the file was altered or damaged)");
  }
  if (const auto input = file.metadata.find("input_dim");
      input != file.metadata.end() && input->second != std::to_string(agent.input_dim()))
    detail::invalid("load_ppo_weights: the file's agent has input_dim ", input->second, ", this one ",
                    agent.input_dim(), " (another memory, or another environment's observations)");
  const TensorDtype dtype = std::same_as<Scalar, float> ? TensorDtype::f32 : TensorDtype::f64;
  std::as_const(agent.networks()).named_blocks([&](const std::string& name, const auto& block) {
    (void)detail::expected_tensor("load_ppo_weights", file, name, dtype, detail::block_shape(block));
  });
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
  agent.networks().named_blocks([&](const std::string& name, auto&& block) { copy_tensor(file.at(name), block); });
  if (normalized) agent.set_normalizer(normalizer);
}

/// ppo_weights written to `path` (write_safetensors: atomically).
template <class Phi, class Scalar, class Network>
void save_ppo_weights(const std::filesystem::path& path, const Ppo<Phi, Scalar, Network>& agent) {
  write_safetensors(path, ppo_weights(agent));
}

/// load_ppo_weights from the file at `path` (read_safetensors, whose refusals of a file that is
/// not a whole safetensors file start "parse_safetensors: PATH: " and of one it cannot read are
/// std::system_error); the refusals of its contents start "load_ppo_weights: PATH: ".
template <class Phi, class Scalar, class Network>
void load_ppo_weights(const std::filesystem::path& path, Ppo<Phi, Scalar, Network>& agent) {
  const TensorFile file = read_safetensors(path);
  try {
    load_ppo_weights(file, agent);
  } catch (const std::invalid_argument& e) {
    std::string_view why = e.what();
    if (why.starts_with("load_ppo_weights: ")) why.remove_prefix(18);
    detail::invalid("load_ppo_weights: ", path.string(), ": ", why);
  }
}

}  // namespace memtrace
