// The usage example of docs/memory.md: a trace, a window and a concatenated window on one stream
// of observations, and one linear TD(0) step on each feature vector through dot and add_scaled.
#include <cstdio>
#include <memtrace/memtrace.hpp>
#include <vector>

int main() {
  using namespace memtrace;
  const std::size_t num_observations = 3;
  const std::vector<Observation> stream{0, 2, 2, 1, 0};

  MemoryTrace<std::ratio<1, 2>> trace(num_observations, TraceInit::zero);  // λ = 1/2, eq. (1)
  Window<> window(2, num_observations);                                    // |Y|^2 = 9 table entries
  ConcatWindow<> concat(2, num_observations);                              // 2·|Y| = 6 features

  trace.reset(stream.front());
  window.reset(stream.front());
  concat.reset(stream.front());
  for (std::size_t t = 1; t < stream.size(); ++t) {
    trace.update(stream[t]);
    window.update(stream[t]);
    concat.update(stream[t]);
  }
  const auto& z = trace.features();
  std::printf("trace  z = (%.5f, %.5f, %.5f), sum %.5f = 1 - 0.5^5\n", z[0], z[1], z[2], z.sum());
  const auto last_two = window.window_at(window.index());
  std::printf("window index %zu of %zu = (y_-1, y_0) = (%zu, %zu)\n", window.index(), window.dim(), last_two[0],
              last_two[1]);
  std::printf("concat active entries %zu and %zu of %zu\n", concat.features()[0], concat.features()[1], concat.dim());

  // A linear estimate and a TD-style update touch only what the features touch.
  Eigen::VectorXd w_trace = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(trace.dim()));
  Eigen::VectorXd w_window = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(window.dim()));
  add_scaled(w_trace, 0.1, trace.features());    // O(|Y|)
  add_scaled(w_window, 0.1, window.features());  // O(1): one weight
  std::printf("estimates %.5f (trace) %.5f (window)\n", dot(w_trace, trace.features()),
              dot(w_window, window.features()));
  return dot(w_window, window.features()) == 0.1 ? 0 : 1;
}
