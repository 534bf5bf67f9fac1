// A user's program: include the core umbrella, update a trace once, check eq. (1).
#include <cmath>
#include <cstdio>
#include <memtrace/core.hpp>

int main() {
  memtrace::MemoryTrace<std::ratio<1, 2>, 3> trace(memtrace::TraceInit::zero);
  trace.reset(0);   // z = (1/2, 0, 0)
  trace.update(2);  // z = (1/4, 0, 1/2)
  const auto& z = trace.features();
  const bool ok = z[0] == 0.25 && z[1] == 0.0 && z[2] == 0.5;
  std::printf("consumer: trace %s (%g %g %g)\n", ok ? "ok" : "WRONG", z[0], z[1], z[2]);
  return ok ? 0 : 1;
}
