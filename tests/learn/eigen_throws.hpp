#pragma once
// First in every file of the program learn_allocation_tests (mlp_test, ppo_test, ppo_loss_test,
// gae_test), before anything includes Eigen: Eigen's heap allocations throw while an
// AllocationGuard forbids them (EIGEN_RUNTIME_NO_MALLOC) and its assertions throw instead of
// aborting, in every file alike (one definition of Eigen in the program, unity build or not).
#define EIGEN_RUNTIME_NO_MALLOC
#include <stdexcept>
#define eigen_assert(x)                                                \
  do {                                                                 \
    if (!(x)) throw std::runtime_error("Eigen assertion failed: " #x); \
  } while (false)
