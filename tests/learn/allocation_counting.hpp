// Heap allocations counted in a test program: a replaced global operator new that counts while an
// AllocationGuard lives (which also makes Eigen's allocations throw: eigen_throws.hpp must come
// first in every file of the program). It defines the replaceable operators, so exactly one file of
// a program includes it (ppo_test.cpp in learn_allocation_tests, recurrent_ppo_test.cpp in
// learn_recurrent_tests).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdlib>
#include <new>

// ---- heap allocations, counted while `counting` is set ----
// GCC 12 at -O3 inlines the replaced operator new into its callers and then warns that the
// replaced operator delete frees what "operator new" returned: a false positive, since both sides
// are these malloc/free pairs.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace allocation_counting {
inline std::size_t allocations = 0;
inline bool counting = false;
}  // namespace allocation_counting
// Every replaceable form but the over-aligned ones, so that each new meets its own delete.
void* operator new(std::size_t size) {
  if (allocation_counting::counting) ++allocation_counting::allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (allocation_counting::counting) ++allocation_counting::allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace allocation_counting {
/// While alive: any heap allocation by Eigen throws, and operator new is counted.
struct AllocationGuard {
  AllocationGuard() {
    Eigen::internal::set_is_malloc_allowed(false);
    allocation_counting::allocations = 0;
    counting = true;
  }
  ~AllocationGuard() {
    counting = false;
    Eigen::internal::set_is_malloc_allowed(true);
  }
  AllocationGuard(const AllocationGuard&) = delete;
  AllocationGuard& operator=(const AllocationGuard&) = delete;
};
}  // namespace allocation_counting
