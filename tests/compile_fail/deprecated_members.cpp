// The deprecated members Ppo::train and Ppo::evaluate forward to memtrace/loop/ppo.hpp; without
// that header they must say where the loop went, not fail with an unknown name. ctest compiles
// this file once per MEMTRACE_CASE_* and expects the static_assert's message.
#include <memtrace/learn/ppo.hpp>

int main() {
  memtrace::Ppo<Eigen::VectorXf> agent(2, 2);
  int rollout = 0;  // any type: the member is a template over it
#if defined(MEMTRACE_CASE_train_without_loop)
  agent.train(rollout, 2048);
#elif defined(MEMTRACE_CASE_evaluate_without_loop)
  (void)agent.evaluate(0, 0, rollout, 10);
#endif
  (void)rollout;
}
