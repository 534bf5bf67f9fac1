// Compile-time parameters and arguments memtrace must refuse with a message. ctest compiles this
// file once with every MEMTRACE_CASE_* defined (each case is a block of its own, so the compiler
// reports them all), and each case's test expects its message in that output (a static_assert's,
// or the comment on the line of a deleted overload, which the compiler prints); no case prints
// another's message (Window's is told from ConcatWindow's by what precedes it), so each can only
// come from its case. Without a case the file must compile. The memory headers alone, not the
// umbrella (PPO's cases include what they need).
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#if defined(MEMTRACE_CASE_ppo_not_a_network) || defined(MEMTRACE_CASE_ppo_unknown_distribution)
#include <memtrace/learn/ppo.hpp>
struct Beta {};                                      // not a PolicyDistribution
struct BetaNetwork : memtrace::ActorCritic<float> {  // a network whose distribution PPO cannot read
  using policy_distribution = Beta;
  using ActorCritic::ActorCritic;
};
#endif
#if defined(MEMTRACE_CASE_weights_unnamed_network)
#include <memtrace/learn/ppo.hpp>
#include <memtrace/learn/ppo_weights.hpp>
struct Unnamed : memtrace::ActorCritic<float> {  // a network that does not name its weights
  using ActorCritic::ActorCritic;
  void named_blocks() = delete;
};
#endif
#if defined(MEMTRACE_CASE_run_not_checkpointable)
#include <memtrace/loop/checkpoint.hpp>
#include <memtrace/memory/checkpoint.hpp>
#include <memtrace/memory/trace_bank.hpp>
struct Coin {  // an environment without save_state and load_state: it trains, it cannot be saved
  std::size_t num_actions() const { return 2; }
  template <class G>
  memtrace::Observation reset(G&) {
    return 0;
  }
  template <class G>
  memtrace::TimeStep<> step(memtrace::Action, G&) {
    return {0, 0.0, true};
  }
};
#endif

int main() {
#if defined(MEMTRACE_CASE_lambda_ratio_one)
  {
    memtrace::MemoryTrace<std::ratio<1, 1>, 3> trace;  // λ = 1 never forgets the past
    (void)trace;
  }
#endif
#if defined(MEMTRACE_CASE_lambda_not_ratio)
  {
    memtrace::MemoryTrace<double, 3> trace;
    (void)trace;
  }
#endif
#if defined(MEMTRACE_CASE_window_length_zero)
  {
    memtrace::Window<0, 3> window;
    (void)window;
  }
#endif
#if defined(MEMTRACE_CASE_concat_length_zero)
  {
    memtrace::ConcatWindow<0, 3> window;
    (void)window;
  }
#endif
#if defined(MEMTRACE_CASE_trace_zero_observations)
  {
    memtrace::MemoryTrace<std::ratio<1, 2>, 0> trace;
    (void)trace;
  }
#endif
#if defined(MEMTRACE_CASE_trace_integer_scalar)
  {
    memtrace::MemoryTrace<std::ratio<1, 2>, 3, int> trace;
    (void)trace;
  }
#endif
#if defined(MEMTRACE_CASE_trace_other_scalar)
  {
    memtrace::MemoryTrace<memtrace::dynamic_lambda, memtrace::dynamic, float> trace(0.5, 3);
    trace.update(Eigen::VectorXd::Zero(3));  // a double vector into a float trace
  }
#endif
#if defined(MEMTRACE_CASE_window_vector_observation)
  {
    memtrace::Window<2, 3> window;
    window.update(Eigen::VectorXd::Unit(3, 1));
  }
#endif
#if defined(MEMTRACE_CASE_concat_multi_hot_observation)
  {
    memtrace::ConcatWindow<2, 3> window;
    window.reset(memtrace::MultiHot<1>());
  }
#endif
#if defined(MEMTRACE_CASE_frame_stack_index_frames)
  {
    memtrace::FrameStack<memtrace::Observation> stack(2, 3, memtrace::WindowPadding::zero);
    (void)stack;
  }
#endif
#if defined(MEMTRACE_CASE_ppo_not_a_network)
  {
    memtrace::Ppo<Eigen::VectorXf, float, memtrace::Mlp<float> > agent(memtrace::Mlp<float>({2, 2}));
    (void)agent;
  }
#endif
#if defined(MEMTRACE_CASE_ppo_unknown_distribution)
  {
    memtrace::Ppo<Eigen::VectorXf, float, BetaNetwork> agent(BetaNetwork(2, 2));
    (void)agent;
  }
#endif
#if defined(MEMTRACE_CASE_weights_unnamed_network)
  {
    memtrace::Ppo<Eigen::VectorXf, float, Unnamed> agent(Unnamed(2, 2));
    (void)memtrace::ppo_weights(agent);
  }
#endif
#if defined(MEMTRACE_CASE_run_not_checkpointable)
  {
    const memtrace::TraceBank<memtrace::dynamic, float> traces({0.5}, 1);
    memtrace::Rollout<Coin, memtrace::TraceBank<memtrace::dynamic, float> > rollout(
        std::vector<Coin>(1), std::vector(1, traces), std::vector{memtrace::make_stream(1, 0)});
    memtrace::Ppo<Eigen::VectorXf> agent(traces.dim(), 2);
    memtrace::save_ppo_run("run.safetensors", agent, rollout);
  }
#endif
  {  // the same types with good parameters: compiles whatever the cases
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
  }
  return 0;
}
