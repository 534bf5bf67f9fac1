// Compile-time parameters and arguments memtrace must refuse with a message. ctest compiles this
// file once per MEMTRACE_CASE_* and expects the message (a static_assert's, or the comment on the
// line of a deleted overload, which the compiler prints); without a case it must compile.
// The memory headers alone, not the umbrella: the file is compiled 12 times a build (PPO's case
// includes learn/ppo.hpp).
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#if defined(MEMTRACE_CASE_ppo_not_a_network)
#include <memtrace/learn/ppo.hpp>
#endif

int main() {
#if defined(MEMTRACE_CASE_lambda_ratio_one)
  memtrace::MemoryTrace<std::ratio<1, 1>, 3> trace;  // λ = 1 never forgets the past
  (void)trace;
#elif defined(MEMTRACE_CASE_lambda_not_ratio)
  memtrace::MemoryTrace<double, 3> trace;
  (void)trace;
#elif defined(MEMTRACE_CASE_window_length_zero)
  memtrace::Window<0, 3> window;
  (void)window;
#elif defined(MEMTRACE_CASE_concat_length_zero)
  memtrace::ConcatWindow<0, 3> window;
  (void)window;
#elif defined(MEMTRACE_CASE_trace_zero_observations)
  memtrace::MemoryTrace<std::ratio<1, 2>, 0> trace;
  (void)trace;
#elif defined(MEMTRACE_CASE_trace_integer_scalar)
  memtrace::MemoryTrace<std::ratio<1, 2>, 3, int> trace;
  (void)trace;
#elif defined(MEMTRACE_CASE_trace_other_scalar)
  memtrace::MemoryTrace<memtrace::dynamic_lambda, memtrace::dynamic, float> trace(0.5, 3);
  trace.update(Eigen::VectorXd::Zero(3));  // a double vector into a float trace
#elif defined(MEMTRACE_CASE_window_vector_observation)
  memtrace::Window<2, 3> window;
  window.update(Eigen::VectorXd::Unit(3, 1));
#elif defined(MEMTRACE_CASE_concat_multi_hot_observation)
  memtrace::ConcatWindow<2, 3> window;
  window.reset(memtrace::MultiHot<1>());
#elif defined(MEMTRACE_CASE_frame_stack_index_frames)
  memtrace::FrameStack<memtrace::Observation> stack(2, 3, memtrace::WindowPadding::zero);
  (void)stack;
#elif defined(MEMTRACE_CASE_ppo_not_a_network)
  memtrace::Ppo<Eigen::VectorXf, float, memtrace::Mlp<float> > agent(memtrace::Mlp<float>({2, 2}));
  (void)agent;
#else
  memtrace::MemoryTrace<std::ratio<1, 2>, 3> trace;
  memtrace::MemoryTrace<std::ratio<1, 2>, 3, float> float_trace;
  memtrace::Window<2, 3> window;
  memtrace::ConcatWindow<2, 3> concat;
  memtrace::FrameStack<Eigen::Vector3f> stack(2, memtrace::WindowPadding::zero);
  trace.update(Eigen::Vector3d::Unit(1));
  float_trace.update(Eigen::Vector3f::Unit(1));
  window.update(1u);
  stack.update(Eigen::Vector3f::Unit(1));
  (void)concat;
#endif
  return 0;
}
