// The deprecated members Ppo::train and Ppo::evaluate forward to memtrace/loop/ppo.hpp; without
// that header they must say where the loop went, not fail with an unknown name. ctest compiles
// this file once with both MEMTRACE_CASE_* defined and each case's test expects its static_assert's
// message in that output (as bad_parameters.cpp).
#include <memtrace/learn/ppo.hpp>

int main() {
  memtrace::Ppo<Eigen::VectorXf> agent(2, 2);
  int rollout = 0;  // any type: the member is a template over it
#if defined(MEMTRACE_CASE_train_without_loop)
  agent.train(rollout, 2048);
#endif
#if defined(MEMTRACE_CASE_evaluate_without_loop)
  (void)agent.evaluate(0, 0, rollout, 10);
#endif
  (void)rollout;
}
