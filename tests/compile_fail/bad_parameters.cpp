// Compile-time parameters memtrace must refuse with a static_assert. ctest compiles this file once
// per MEMTRACE_CASE_* and expects the static_assert's message; without a case it must compile.
#include <memtrace/memtrace.hpp>

int main() {
#if defined(MEMTRACE_CASE_lambda_ratio_one)
  memtrace::MemoryTrace<std::ratio<1, 1>, 3> trace;  // λ = 1 never forgets the past
#elif defined(MEMTRACE_CASE_lambda_not_ratio)
  memtrace::MemoryTrace<double, 3> trace;
#elif defined(MEMTRACE_CASE_window_length_zero)
  memtrace::Window<0, 3> window;
#elif defined(MEMTRACE_CASE_concat_length_zero)
  memtrace::ConcatWindow<0, 3> window;
#elif defined(MEMTRACE_CASE_trace_zero_observations)
  memtrace::MemoryTrace<std::ratio<1, 2>, 0> trace;
#else
  memtrace::MemoryTrace<std::ratio<1, 2>, 3> trace;
  memtrace::Window<2, 3> window;
  memtrace::ConcatWindow<2, 3> concat;
  (void)window;
  (void)concat;
#endif
#if !defined(MEMTRACE_CASE_window_length_zero) && !defined(MEMTRACE_CASE_concat_length_zero)
  (void)trace;
#else
  (void)window;
#endif
  return 0;
}
