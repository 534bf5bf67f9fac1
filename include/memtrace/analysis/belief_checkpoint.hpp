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

/// A fingerprint of what a belief filter reads of its process (|X|, |Y|, μ, the transitions, the
/// emissions, the values and the terminal states): Fnv1a over their 64-bit words, so that a belief
/// of another process is refused. Against mix-ups, not an adversary.
[[nodiscard]] inline std::uint64_t belief_process_fingerprint(const StationaryProcess& process) {
  Fnv1a h;
  const auto reals = [&h](const auto& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) h.real(static_cast<double>(v.data()[i]));
  };
  h.word(process.num_states());
  h.word(process.num_observations());
  reals(process.stationary());
  const SparseMatrix& p = process.transition();
  for (Eigen::Index x = 0; x < p.outerSize(); ++x)
    for (SparseMatrix::InnerIterator it(p, x); it; ++it) {
      h.word(static_cast<std::uint64_t>(it.row()));
      h.word(static_cast<std::uint64_t>(it.col()));
      h.real(it.value());
    }
  reals(process.emission());
  reals(process.values());
  for (const bool t : process.terminal()) h.word(t ? 1 : 0);
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
