#pragma once
// A PPO agent's whole state as named tensors, for checkpoints (checkpoint.hpp): every parameter of
// its network (any ActorCriticNetwork: its parameter blocks), Adam's moments and step count, the
// agent's generator, its update count and schedule horizon, and its feature normaliser; restored
// into an agent built with the same options, it continues bit for bit as the agent that was saved.
// Opt-in. See docs/control.md ("Checkpoints").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <locale>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memtrace/checkpoint.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/learn/ppo_weights.hpp"
#include "memtrace/random.hpp"
#include "memtrace/safetensors.hpp"

namespace memtrace {

/// The format of save_ppo_checkpoint's files (TensorFile::metadata["format"]).
inline constexpr std::string_view ppo_checkpoint_format = "memtrace.ppo_checkpoint.1";

namespace detail {

/// Every option of a PpoOptions, one `name=value` a line, numbers as the shortest text that reads
/// back: a checkpoint records them, and an agent of other options refuses it by the first that
/// differs.
[[nodiscard]] inline std::string ppo_options_text(const PpoOptions& o) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // "1024", never "1,024": the text must not depend on the locale
  std::string hidden;
  for (const std::size_t h : o.hidden_sizes) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  out << "n_envs=" << o.n_envs << "\nn_steps=" << o.n_steps << "\ndiscount=" << message(o.discount)
      << "\ngae_lambda=" << message(o.gae_lambda) << "\ntruncation=" << static_cast<int>(o.truncation)
      << "\nepochs=" << o.epochs << "\nminibatches=" << o.minibatches << "\nclip_epsilon=" << message(o.clip_epsilon)
      << "\nvf_coef=" << message(o.vf_coef) << "\nent_coef=" << message(o.ent_coef)
      << "\nmax_grad_norm=" << message(o.max_grad_norm) << "\nlearning_rate=" << message(o.learning_rate)
      << "\nanneal_lr=" << o.anneal_lr << "\ntotal_updates=" << o.total_updates << "\nhidden_sizes=" << hidden
      << "\nadam.beta1=" << message(o.adam.beta1) << "\nadam.beta2=" << message(o.adam.beta2)
      << "\nadam.epsilon=" << message(o.adam.epsilon) << "\nnormalize_features=" << o.normalize_features
      << "\nnormalizer.epsilon=" << message(o.normalizer.epsilon) << "\nnormalizer.clip=" << message(o.normalizer.clip)
      << '\n';
  // Options added after the first checkpoints: written when they are not at their defaults, so that
  // those checkpoints still load (an agent with another value refuses them all the same).
  if (o.reward_scale != 1.0) out << "reward_scale=" << message(o.reward_scale) << '\n';
  if (o.initial_log_std != 0.0) out << "initial_log_std=" << message(o.initial_log_std) << '\n';
  if (o.target_kl != 0.0) out << "target_kl=" << message(o.target_kl) << '\n';
  if (o.clip_value_loss) out << "clip_value_loss=1\n";
  if (o.normalize_rewards)
    out << "normalize_rewards=1\nreward_normalizer.epsilon=" << message(o.reward_normalizer.epsilon)
        << "\nreward_normalizer.clip=" << message(o.reward_normalizer.clip) << '\n';
  return out.str();
}

/// Where two texts of lines (descriptions, option texts) first differ: the line's number (from 1)
/// and that line of each, "(none)" for a text that ends before it.
struct LineDifference {
  std::size_t line = 0;  ///< 0: the texts are equal
  std::string a, b;
};
[[nodiscard]] inline LineDifference first_different_line(std::string_view a, std::string_view b) {
  if (a == b) return {};
  std::size_t line = 1, at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at])
    if (a[at++] == '\n') ++line;
  const std::size_t from = at == 0 ? 0 : a.rfind('\n', at - 1) + 1;  // npos + 1 is 0: the first line
  const auto line_of = [&](std::string_view text) {
    return at == text.size() ? std::string("(none)")
                             : std::string(text.substr(from, std::min(text.find('\n', from), text.size()) - from));
  };
  return {line, line_of(a), line_of(b)};
}

/// The first line in which two option texts differ ("" if none).
[[nodiscard]] inline std::string first_difference(const std::string& a, const std::string& b) {
  const LineDifference d = first_different_line(a, b);
  return d.line == 0 ? "" : "\"" + d.a + "\" against the agent's \"" + d.b + "\"";
}

/// The agent's private state, for the functions below (a friend of Ppo).
struct PpoStateAccess {
  template <class Agent>
  static const DefaultGenerator& generator(const Agent& a) noexcept {
    return a.gen_;
  }
  template <class Agent>
  static std::size_t updates(const Agent& a) noexcept {
    return a.updates_;
  }
  template <class Agent>
  static const auto& adam(const Agent& a) noexcept {
    return a.adam_;
  }
  template <class Agent, class M, class V>
  static void restore(Agent& a, const DefaultGenerator& gen, std::size_t updates, std::size_t horizon,
                      const M& first_moment, const V& second_moment, std::size_t adam_count, std::size_t skipped) {
    a.adam_.set_state(first_moment, second_moment, adam_count);  // checks: the one step that may throw
    a.gen_ = gen;
    a.updates_ = updates;
    a.horizon_ = horizon;
    a.skipped_steps_ = skipped;
  }
  template <class Agent>
  static void set_reward_normalizer(Agent& a, RewardNormalizer r) noexcept {
    a.reward_normalizer_ = std::move(r);
  }
  template <class Agent>
  static void set_states(Agent& a, const std::vector<double>& states) noexcept {
    for (Eigen::Index k = 0; k < a.states_.size(); ++k)
      a.states_.data()[k] = static_cast<typename Agent::scalar_type>(states[static_cast<std::size_t>(k)]);
  }
};

/// A PPO agent's state, for save_state and load_state (checkpoint.hpp): the agent is Checkpointable
/// like every environment and memory.
template <class Phi, class Scalar, class Network>
struct CheckpointState<Ppo<Phi, Scalar, Network>> {
  /// Appends the agent's state to `file`, every tensor named `prefix` + (F32 for a float agent, F64
  /// for double; counters U64):
  ///   network                U64 [2]: the network's input_dim and policy_dim;
  ///   parameters.B           the network's parameter block B (B = 0, 1, ...), flat;
  ///   adam.first_moment, adam.second_moment, adam.count   the optimiser;
  ///   generator              the agent's Xoshiro256StarStar (4 words);
  ///   updates, total_updates the update count and the schedule's horizon;
  ///   skipped_steps          with options().target_kl: the Adam steps it skipped (U64 []);
  ///   reward_normalizer.count, .mean, .squared_deviations, .frozen, .returns (F64 [n_envs])
  ///                          with options().normalize_rewards;
  ///   normalizer.count, normalizer.mean, normalizer.squared_deviations, normalizer.frozen
  ///                          with options().normalize_features;
  ///   states                 a recurrent agent's states, [n_envs, state_dim] (row e: environment e's);
  /// and the metadata entry `prefix` + "options" (every option, detail::ppo_options_text). Not in
  /// it: the statistics of the last update (last_stats(), a report) and any buffer (an update
  /// empties the buffer it learned from: checkpoint between updates).
  static void save(TensorFile& file, const std::string& prefix, const Ppo<Phi, Scalar, Network>& agent) {
    using Access = detail::PpoStateAccess;
    const auto parameters = const_cast<Network&>(agent.networks()).parameters();  // read only
    const auto& adam = Access::adam(agent);
    // A diverged agent is refused here, not when its file is read back: what is saved loads.
    const auto finite = [&](const std::string& name, const auto& values) {
      for (std::size_t i = 0; i < static_cast<std::size_t>(values.size()); ++i)
        if (!std::isfinite(static_cast<double>(values[i])))
          throw std::domain_error(
              detail::message("save_state: ", prefix, name, ": entry ", i, " is ", static_cast<double>(values[i]),
                              ": the agent diverged, and a state that cannot be loaded is not saved"));
    };
    for (std::size_t b = 0; b < detail::parameter_block_count(parameters); ++b)
      finite("parameters." + std::to_string(b), detail::parameter_block(parameters, b));
    finite("adam.first_moment", adam.first_moment());
    finite("adam.second_moment", adam.second_moment());
    if (agent.options().normalize_features) {
      finite("normalizer.mean", agent.normalizer().mean());
      finite("normalizer.squared_deviations", agent.normalizer().squared_deviations());
    }
    if (agent.options().normalize_rewards) finite("reward_normalizer.returns", agent.reward_normalizer().returns());
    if constexpr (Ppo<Phi, Scalar, Network>::recurrent) finite("states", agent.states().reshaped());
    for (std::size_t b = 0; b < detail::parameter_block_count(parameters); ++b) {
      const auto block = detail::parameter_block(parameters, b);
      put_reals<Scalar>(file, prefix + "parameters." + std::to_string(b), {block.size()}, {block.begin(), block.end()});
    }
    put_integers(file, prefix + "network", {2},
                 {agent.input_dim(), static_cast<std::uint64_t>(agent.networks().policy_dim())});
    file.tensors.push_back(to_tensor(prefix + "adam.first_moment", adam.first_moment()));
    file.tensors.push_back(to_tensor(prefix + "adam.second_moment", adam.second_moment()));
    put_integers(file, prefix + "adam.count", {}, {adam.count()});
    save_state(file, prefix, Access::generator(agent));
    put_integers(file, prefix + "updates", {}, {Access::updates(agent)});
    put_integers(file, prefix + "total_updates", {}, {agent.total_updates()});
    if (agent.options().target_kl != 0.0) put_integers(file, prefix + "skipped_steps", {}, {agent.skipped_steps()});
    if (agent.options().normalize_features) {
      const FeatureNormalizer& n = agent.normalizer();
      put_integers(file, prefix + "normalizer.count", {}, {n.count()});
      file.tensors.push_back(to_tensor(prefix + "normalizer.mean", n.mean()));
      file.tensors.push_back(to_tensor(prefix + "normalizer.squared_deviations", n.squared_deviations()));
      put_integers(file, prefix + "normalizer.frozen", {}, {n.frozen() ? 1u : 0u});
    }
    if (agent.options().normalize_rewards) {
      const RewardNormalizer& r = agent.reward_normalizer();
      put_integers(file, prefix + "reward_normalizer.count", {}, {r.statistics().count()});
      put_reals(file, prefix + "reward_normalizer.mean", {1}, {r.statistics().mean()[0]});
      put_reals(file, prefix + "reward_normalizer.squared_deviations", {1}, {r.statistics().squared_deviations()[0]});
      put_integers(file, prefix + "reward_normalizer.frozen", {}, {r.frozen() ? 1u : 0u});
      put_reals(file, prefix + "reward_normalizer.returns", {r.n_envs()},
                {r.returns().data(), r.returns().data() + r.returns().size()});
    }
    if constexpr (Ppo<Phi, Scalar, Network>::recurrent) {
      const auto& states = agent.states();
      put_reals<Scalar>(file, prefix + "states", {agent.options().n_envs, agent.state_dim()},
                        {states.data(), states.data() + states.size()});
    }
    file.metadata[prefix + "options"] = detail::ppo_options_text(agent.options());
  }

  /// Restores a state save wrote into an agent of the same options, network shape and
  /// features: afterwards it acts and learns exactly as the saved agent would have. Throws
  /// std::invalid_argument starting "load_state: " for options that differ (naming the first),
  /// a missing tensor, one of another dtype or shape, non-finite values, a negative second moment, an
  /// all-zero generator, counters that do not fit each other (Adam's steps and those target_kl
  /// skipped are updates x epochs x minibatches; the horizon's steps must not overflow) or normaliser statistics
  /// FeatureNormalizer refuses; every check runs before anything changes, so a refused file changes nothing.
  static void load(const TensorFile& file, const std::string& prefix, Ppo<Phi, Scalar, Network>& agent) {
    const PpoOptions& o = agent.options();
    const auto parameters = agent.networks().parameters();
    const std::size_t blocks = detail::parameter_block_count(parameters);
    std::vector<const std::vector<double>*> saved(blocks);
    DefaultGenerator gen;
    FeatureNormalizer normalizer;
    RewardNormalizer reward_normalizer;
    const std::vector<double>*m = nullptr, *v = nullptr, *states = nullptr;
    std::uint64_t adam_count = 0, updates = 0, horizon = 0, skipped = 0;
    try {
      const auto options = file.metadata.find(prefix + "options");
      if (options == file.metadata.end()) detail::invalid("the file has no metadata \"", prefix, "options\"");
      const std::string mine = detail::ppo_options_text(o);
      if (options->second != mine)
        detail::invalid("the saved agent's options differ: ", detail::first_difference(options->second, mine));
      // The network's sizes before its blocks: another input dimension is named as such, not as
      // a parameter block of another length.
      check_parameters<std::uint64_t>(file, prefix + "network", "a Ppo agent", {"input_dim", "policy_dim"},
                                      {agent.input_dim(), static_cast<std::uint64_t>(agent.networks().policy_dim())});
      std::size_t total = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t size = detail::parameter_block(parameters, b).size();
        saved[b] = &state_reals<Scalar>(file, prefix + "parameters." + std::to_string(b), {size});
        total += size;
      }
      if (file.find(prefix + "parameters." + std::to_string(blocks)) != nullptr)
        detail::invalid("the file has more parameter blocks than the agent's network (", blocks, ")");
      m = &state_reals<Scalar>(file, prefix + "adam.first_moment", {total});
      v = &state_reals<Scalar>(file, prefix + "adam.second_moment", {total});
      adam_count = state_integer(file, prefix + "adam.count");
      load_state(file, prefix, gen);
      updates = state_integer(file, prefix + "updates");
      horizon = state_integer(file, prefix + "total_updates");
      if (o.target_kl != 0.0) skipped = state_integer(file, prefix + "skipped_steps");
      const std::size_t steps = o.epochs * o.minibatches;  // the agent checked that it does not overflow
      if (updates > std::numeric_limits<std::uint64_t>::max() / steps || skipped > updates * steps ||
          adam_count != updates * steps - skipped)
        detail::invalid(prefix, "adam.count: ", adam_count, " Adam steps",
                        o.target_kl != 0.0 ? message(" and ", skipped, " skipped") : std::string(), " do not fit ",
                        updates, " updates of ", steps);
      if (horizon > std::numeric_limits<std::uint64_t>::max() / steps)
        detail::invalid(prefix, "total_updates: ", horizon, " updates of ", steps, " Adam steps overflow");
      if (o.normalize_features) {
        const auto d = agent.input_dim();
        const std::uint64_t count = state_integer(file, prefix + "normalizer.count");
        const auto& mean = state_reals(file, prefix + "normalizer.mean", {d});
        const auto& m2 = state_reals(file, prefix + "normalizer.squared_deviations", {d});
        normalizer = detail::restore_normalizer(count, mean, m2, o.normalizer);
        if (state_flag(file, prefix + "normalizer.frozen")) normalizer.freeze();
      }
      if (o.normalize_rewards) {
        const std::uint64_t count = state_integer(file, prefix + "reward_normalizer.count");
        const auto& mean = state_reals(file, prefix + "reward_normalizer.mean", {1});
        const auto& m2 = state_reals(file, prefix + "reward_normalizer.squared_deviations", {1});
        const auto& returns = state_reals(file, prefix + "reward_normalizer.returns", {o.n_envs});
        FeatureNormalizer statistics = detail::restore_normalizer(count, mean, m2, o.reward_normalizer);
        if (state_flag(file, prefix + "reward_normalizer.frozen")) statistics.freeze();
        reward_normalizer = RewardNormalizer(
            std::move(statistics),
            Eigen::Map<const Eigen::VectorXd>(returns.data(), static_cast<Eigen::Index>(returns.size())), o.discount);
      }
      if constexpr (Ppo<Phi, Scalar, Network>::recurrent)
        states = &state_reals<Scalar>(file, prefix + "states", {o.n_envs, agent.state_dim()});
      // Adam's moments are checked (finite, the second >= 0) by set_state before anything is assigned.
      const auto as_vector = [](const std::vector<double>& x) {
        return Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
      };
      detail::PpoStateAccess::restore(agent, gen, static_cast<std::size_t>(updates), static_cast<std::size_t>(horizon),
                                      as_vector(*m), as_vector(*v), static_cast<std::size_t>(adam_count),
                                      static_cast<std::size_t>(skipped));
      if (o.normalize_rewards) detail::PpoStateAccess::set_reward_normalizer(agent, std::move(reward_normalizer));
      if (states != nullptr) detail::PpoStateAccess::set_states(agent, *states);
    } catch (const std::invalid_argument& e) {
      std::string_view why = e.what();
      if (why.starts_with("load_state: ")) why.remove_prefix(12);  // the shared readers' own prefix
      detail::invalid("load_state: ", why);
    }
    for (std::size_t b = 0; b < blocks; ++b) {
      const auto block = detail::parameter_block(parameters, b);
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<Scalar>((*saved[b])[i]);
    }
    if (o.normalize_features) agent.set_normalizer(normalizer);
  }
};
}  // namespace detail

/// The agent's state (save_state under "agent.") written to `path` as a checkpoint of format
/// ppo_checkpoint_format (write_checkpoint: atomically, with a checksum, the version and the
/// instruction set).
template <class Phi, class Scalar, class Network>
void save_ppo_checkpoint(const std::filesystem::path& path, const Ppo<Phi, Scalar, Network>& agent) {
  TensorFile file;
  save_state(file, "agent.", agent);
  write_checkpoint(path, file, ppo_checkpoint_format);
}

/// Restores the agent from the checkpoint at `path` (read_checkpoint, then load_state under
/// "agent."): a damaged file, or one of another version, instruction set or options, is refused
/// with std::invalid_argument naming the file, and changes nothing.
template <class Phi, class Scalar, class Network>
void load_ppo_checkpoint(const std::filesystem::path& path, Ppo<Phi, Scalar, Network>& agent) {
  const TensorFile file = read_checkpoint(path, ppo_checkpoint_format);
  try {
    load_state(file, "agent.", agent);
  } catch (const std::invalid_argument& e) {
    detail::invalid("load_ppo_checkpoint: ", path.string(), ": ", e.what());
  }
}

}  // namespace memtrace
