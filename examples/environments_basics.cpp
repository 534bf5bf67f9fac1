// The usage example of docs/environments.md (built with the examples and run by ctest).
#include <memtrace/memtrace.hpp>

#include <iostream>

int main() {
  memtrace::Xoshiro256StarStar gen(42);

  // The paper's noisy random walk, simulated, with a memory trace of its observations.
  memtrace::NoisyRandomWalk walk;  // 1001 states, |Y| = 11
  memtrace::MemoryTrace<> trace(0.9, walk.num_observations());
  trace.reset(walk.reset(gen));
  double total = 0.0;
  for (int t = 0; t < 1000; ++t) {
    const memtrace::TimeStep<> tr = walk.step(gen);
    trace.update(tr.observation);
    total += tr.reward;
  }

  // Its exact model: P(x' | x) with the edge mass at the centre, and r̄(x).
  const memtrace::FiniteHmm model = walk.model();
  std::cout << "p(500 | 0) = " << model.transition().coeff(0, 500)  // 100/201
            << ", r(0) = " << model.expected_rewards()[0] << '\n';  // -100/201

  // The T-maze as a POMDP, and as an HMM under "always up".
  memtrace::TMaze maze(8);
  memtrace::Observation y = maze.reset(gen);
  for (memtrace::TimeStep<> tr{}; !tr.terminated; y = tr.observation)
    tr = maze.step(y == memtrace::tmaze::a ? memtrace::tmaze::up : memtrace::tmaze::down, gen);
  const memtrace::FiniteHmm up = memtrace::TMazeAlwaysUp(8).model();

  // A model of your own: row-stochastic matrices, rewards per transition.
  Eigen::Matrix2d p{{0.9, 0.1}, {0.2, 0.8}}, o{{0.7, 0.3}, {0.1, 0.9}}, r{{0, 1}, {-1, 0}};
  memtrace::FiniteHmm hmm(p, o, Eigen::Vector2d(0.5, 0.5), r);
  hmm.reset(gen);
  const memtrace::TimeStep<> tr = hmm.step(gen);
  std::cout << total << ' ' << up.num_states() << ' ' << tr.reward << '\n';
}
