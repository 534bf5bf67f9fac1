// The cue task of examples/ppo_basics.cpp, for the tests of PPO with memory: a cue (observation 0
// or 1), four corridor steps (2), a junction (3) where the action must match the cue (reward 1).
// Without memory the success rate is 0.5.
#pragma once

#include <cstddef>
#include <memtrace/concepts.hpp>
#include <memtrace/random.hpp>
#include <memtrace/vocabulary.hpp>

namespace test_tasks {

struct Cue {
  std::size_t t = 0, cue = 0;
  std::size_t num_actions() const { return 2; }
  template <class G>
  memtrace::Observation reset(G& gen) {
    t = 0;
    return cue = static_cast<memtrace::Observation>(memtrace::uniform_index(gen, 2));
  }
  template <class G>
  memtrace::TimeStep<> step(memtrace::Action u, G& /*gen*/) {
    if (++t < 6) return {t < 5 ? 2u : 3u};
    return {3, u == cue ? 1.0 : 0.0, /*terminated=*/true};
  }
};

}  // namespace test_tasks
