#pragma once
// The tests' cue task (tests/learn/cue_task.hpp), made checkpointable by two functions in its
// namespace, as a user makes an environment of their own checkpointable (docs/control.md).
#include <memtrace/checkpoint.hpp>
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
