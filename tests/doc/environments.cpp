// The fragments of docs/environments.md, compiled and run by ctest (docs/design.md, "Doc snippets
// are compiled"). Its programs are extracted from the page; its example is
// examples/environments_basics.cpp.
#include <memtrace/env/noisy_random_walk.hpp>

#include <cstdio>

int main() {
  memtrace::NoisyRandomWalk paper;  // the defaults
  memtrace::NoisyRandomWalk small({.num_states = 21, .max_step = 3, .num_observations = 3});
  const bool ok = paper.num_observations() == 11 && small.num_observations() == 3;
  std::puts(ok ? "docs/environments.md: ok" : "docs/environments.md: a fragment computed something else");
  return ok ? 0 : 1;
}
