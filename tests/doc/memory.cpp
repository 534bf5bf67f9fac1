// The fragments of docs/memory.md, compiled and run by ctest (docs/design.md, "Doc snippets are
// compiled"). Each function holds one ```cpp block of the page, as it is written there, and
// defines around it what the page leaves to the reader.
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/trace_bank.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/memory/with_actions.hpp>

#include <cstdio>

namespace {

bool vector_observations() {
  using namespace memtrace;
  MemoryTrace<dynamic_lambda, dynamic, float> trace(0.985, 45, TraceInit::zero);
  // The active entries (r * 3 + c) * 5 + tile of the 3 x 3 view (distinct, at most 9): all walls.
  const MultiHot<9> view{3, 8, 13, 18, 23, 28, 33, 38, 43};
  trace.reset(view);                            // a scale and 9 added entries
  trace.update(Eigen::VectorXf::Unit(45, 39));  // any dense float expression works too
  const Eigen::VectorXf& z = trace.features();  // 45 floats
  return z.size() == 45 && z[39] > 0.0f;
}

bool trace_bank() {
  const int k = 8;                                                                  // the corridor length
  memtrace::TraceBank<> bank({0.0, (k - 1.0) / k}, 5);                              // index observations
  memtrace::TraceBank<45, float> ppo({0.0, 0.985}, 45, memtrace::TraceInit::zero);  // the grid view
  return bank.dim() == 10 && ppo.dim() == 90;
}

bool frame_stack() {
  using namespace memtrace;
  FrameStack<MultiHot<9>> stack(65, 45, WindowPadding::zero);  // 65 frames of the 45-entry view
  FrameStack<Eigen::VectorXf> dense(4, 8, WindowPadding::repeat_first);
  dense.reset(Eigen::VectorXf::Ones(8));
  dense.update(Eigen::VectorXf::Zero(8));  // features: [0; 1; 1; 1] block by block
  return stack.dim() == 65 * 45 && dense.features().sum() == 24.0f && dense.features().head(8).sum() == 0.0f;
}

bool with_actions() {
  const memtrace::Observation y0 = 1, y = 4;
  const memtrace::Action u = 2;
  using namespace memtrace;
  const auto symbols = WithActions<MemoryTrace<>>::num_symbols(5, 3);
  WithActions<MemoryTrace<>> memory(MemoryTrace<>(0.9, symbols), 5, 3);
  memory.reset(y0);
  memory.update(u, y);  // satisfies ObservationActionMemory
  return memory.dim() == 20;
}

bool append_action() {
  using namespace memtrace;
  AppendAction<TraceBank<dynamic, float>> memory(TraceBank<dynamic, float>({0.0, 0.985}, 45 + 3), 45, 3);
  const MultiHot<9> view{4, 9, 14, 19, 24, 29, 34, 39, 44};  // all floor
  memory.reset(view);                                        // [y_0; 0 0 0]
  memory.update(2, view);                                    // [y_1; e_2]: 96 features, two blocks of 45 + 3
  return memory.dim() == 96;
}

}  // namespace

int main() {
  const bool ok = vector_observations() && trace_bank() && frame_stack() && with_actions() && append_action();
  std::puts(ok ? "docs/memory.md: ok" : "docs/memory.md: a fragment computed something else");
  return ok ? 0 : 1;
}
