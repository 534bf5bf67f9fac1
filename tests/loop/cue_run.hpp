#pragma once
// The cue task (tests/learn/cue_task.hpp) as the loop tests run PPO on it: checkpointable by two
// functions in its namespace, as a user makes an environment of their own checkpointable
// (docs/control.md), and a small recipe.
#include <cstddef>
#include <memtrace/checkpoint.hpp>
#include <memtrace/learn/ppo.hpp>
#include <stdexcept>
#include <string>

#include "../learn/cue_task.hpp"

namespace test_tasks {
inline void save_state(memtrace::TensorFile& file, const std::string& prefix, const Cue& env) {
  file.tensors.push_back({prefix + "t_and_cue", memtrace::TensorDtype::u64, {2}, {}, {env.t, env.cue}});
}
inline void load_state(const memtrace::TensorFile& file, const std::string& prefix, Cue& env) {
  const memtrace::Tensor& t =
      memtrace::detail::expected_tensor("load_state", file, prefix + "t_and_cue", memtrace::TensorDtype::u64, {2});
  if (t.integers[0] > 6 || t.integers[1] > 1) throw std::invalid_argument("load_state: " + prefix + ": out of range");
  env.t = t.integers[0];
  env.cue = t.integers[1];
}
}  // namespace test_tasks

namespace test_tasks {
/// A small PPO recipe: n_envs environments of n_steps steps an update, 4 minibatches, one hidden
/// layer of 16, learning rate 1e-3, normalised features.
inline memtrace::PpoOptions small_ppo_options(std::size_t n_envs, std::size_t n_steps) {
  memtrace::PpoOptions o;
  o.n_envs = n_envs;
  o.n_steps = n_steps;
  o.minibatches = 4;
  o.hidden_sizes = {16};
  o.learning_rate = 1e-3;
  o.normalize_features = true;
  return o;
}
}  // namespace test_tasks
