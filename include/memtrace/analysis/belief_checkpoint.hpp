#pragma once
// BeliefFilter's state in checkpoints (checkpoint.hpp): detail::CheckpointState<BeliefFilter>, so
// that save_state and load_state hold the belief under a prefix, refused by a filter of another
// process. Apart from memory/checkpoint.hpp so that memory/ does not pull in analysis/. Opt-in.
// See docs/memory.md ("Checkpoints").

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memtrace/analysis/belief.hpp"
#include "memtrace/analysis/markov.hpp"
#include "memtrace/checkpoint.hpp"
#include "memtrace/safetensors.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace::detail {

/// A fingerprint of what a belief filter reads of its process (μ, the transitions, the emissions,
/// the values and the terminal states; add_matrix), so that a belief of another process is refused.
/// Against mix-ups, not an adversary.
[[nodiscard]] inline std::uint64_t belief_process_fingerprint(const StationaryProcess& process) {
  Fnv1a h;
  add_matrix(h, process.stationary());
  add_matrix(h, process.transition());
  add_matrix(h, process.emission());
  add_matrix(h, process.values());
  add_flags(h, process.terminal());
  return h.value();
}

/// BeliefFilter, over a process of |X| states and |Y| observations:
///   parameters  U64 [2]    |X|, |Y|;
///   fingerprint U64 []     belief_process_fingerprint of the filter's process (another is refused);
///   belief      F64 [|X|]  the belief p(x_t | history), features().
/// Refused besides: a belief with a negative entry or whose entries do not sum to 1 (within 1e-6).
template <>
struct CheckpointState<BeliefFilter> {
  static void save(TensorFile& file, const std::string& prefix, const BeliefFilter& f) {
    const StationaryProcess& process = *f.process_;
    const Eigen::VectorXd& belief = f.belief_;
    put_integers(file, prefix + "parameters", {2}, {process.num_states(), process.num_observations()});
    put_integers(file, prefix + "fingerprint", {}, {belief_process_fingerprint(process)});
    put_reals(file, prefix + "belief", {static_cast<std::size_t>(belief.size())},
              {belief.data(), belief.data() + belief.size()});
  }
  static void load(const TensorFile& file, const std::string& prefix, BeliefFilter& f) {
    const StationaryProcess& process = *f.process_;
    const std::size_t n = process.num_states();
    check_parameters<std::uint64_t>(file, prefix + "parameters", "a BeliefFilter", {"|X|", "|Y|"},
                                    {n, process.num_observations()});
    check_fingerprint(file, prefix + "fingerprint", "a BeliefFilter", "another process",
                      belief_process_fingerprint(process));
    const std::vector<double>& belief = state_reals(file, prefix + "belief", {n});  // finite
    double sum = 0.0;
    for (std::size_t x = 0; x < n; ++x) {
      if (belief[x] < 0.0)
        invalid("load_state: ", prefix, "belief: entry ", x, " is ", belief[x], ", a probability must be >= 0");
      sum += belief[x];
    }
    if (!(std::abs(sum - 1.0) <= 1e-6))
      invalid("load_state: ", prefix, "belief: its entries sum to ", sum, ", a distribution's to 1");
    for (std::size_t x = 0; x < n; ++x)  // |X| entries: no allocation
      f.belief_[static_cast<Eigen::Index>(x)] = belief[x];
  }
};

}  // namespace memtrace::detail
