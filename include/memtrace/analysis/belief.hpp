#pragma once
// The belief filter of a finite model: p(x_t | y_t, ..., y_{t-m+1}) by the forward algorithm from a
// prior over the state of the oldest observation (the stationary distribution by default), and the
// value estimate it implies, E[v(x_t) | window]. Over the stationary process this is the optimal
// window estimator (optimal_window_table). BeliefFilter runs it online as a Memory whose features
// are the belief over the whole history. See docs/analysis.md.

#include <Eigen/Core>
#include <cstddef>
#include <span>

#include "memtrace/analysis/markov.hpp"
#include "memtrace/forward_filter.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

/// The forward filter's conditioning step on observation y (forward_filter.hpp), refusing what it
/// cannot do: y out of range, or of probability 0 given the observations before it.
inline void condition_on(const char* who, Eigen::VectorXd& b, const Eigen::MatrixXd& o, Observation y) {
  check_observation(who, y, static_cast<std::size_t>(o.cols()));
  if (!(condition_belief(b, o.col(static_cast<Eigen::Index>(y))) > 0.0))
    invalid(who, ": observation ", y, " has probability 0 given the observations before it");
}

/// E[v(x_t) | h, x_t non-terminal]: the value error weighs non-terminal states only.
inline double belief_value_of(const StationaryProcess& process, const Eigen::VectorXd& b) {
  return non_terminal_value(b, process.values(), process.terminal()).value;
}

}  // namespace detail

/// p(x_t = x | window), for a window given chronologically (oldest first, window.back() = y_t) and
/// a prior over the state that emitted the oldest observation (row-stochastic model: b' = Pᵀ b, then
/// b' ∘ O(·, y), normalised). Throws std::invalid_argument for an empty window, a bad observation,
/// a prior of the wrong length, or a window of probability 0.
[[nodiscard]] inline Eigen::VectorXd belief(const StationaryProcess& process, std::span<const Observation> window,
                                            const Eigen::VectorXd& prior) {
  constexpr const char* who = "belief";
  if (window.empty()) detail::invalid(who, ": window must hold at least one observation");
  if (prior.size() != process.stationary().size())
    detail::invalid(who, ": prior must have |X| = ", process.stationary().size(), " entries, got ", prior.size());
  Eigen::VectorXd b = prior;
  for (std::size_t j = 0; j < window.size(); ++j) {
    if (j > 0) b = predict_belief(process.transition().transpose(), b);
    detail::condition_on(who, b, process.emission(), window[j]);
  }
  return b;
}

/// The belief from the stationary prior.
[[nodiscard]] inline Eigen::VectorXd belief(const StationaryProcess& process, std::span<const Observation> window) {
  return belief(process, window, process.stationary());
}

/// E[v(x_t) | window] over the non-terminal states: the optimal window estimator's value.
[[nodiscard]] inline double belief_value(const StationaryProcess& process, std::span<const Observation> window) {
  return detail::belief_value_of(process, belief(process, window));
}

/// The belief over the whole history, updated online (the forward filter): reset(y0) conditions
/// the stationary prior on y_0, update(y) predicts with Pᵀ and conditions on y. features() is the
/// belief (|X| entries), so a linear learner on it can represent every function of the belief.
/// Satisfies Memory. Costs one sparse product per step. A refused observation (out of range, or of
/// probability 0 given the history) throws std::invalid_argument naming reset or update and changes
/// nothing: each step is computed into a temporary, checked, then committed.
class BeliefFilter {
 public:
  explicit BeliefFilter(const StationaryProcess& process) : process_(&process), belief_(process.stationary()) {}

  void reset(Observation y0) {
    Eigen::VectorXd next = process_->stationary();
    detail::condition_on("BeliefFilter::reset", next, process_->emission(), y0);
    belief_.swap(next);
  }
  void update(Observation y) {
    detail::check_observation("BeliefFilter::update", y, process_->num_observations());
    Eigen::VectorXd next = predict_belief(process_->transition().transpose(), belief_);
    detail::condition_on("BeliefFilter::update", next, process_->emission(), y);
    belief_.swap(next);
  }
  [[nodiscard]] const Eigen::VectorXd& features() const noexcept { return belief_; }
  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(belief_.size()); }
  /// E[v(x_t) | history] over the non-terminal states.
  [[nodiscard]] double value() const { return detail::belief_value_of(*process_, belief_); }

 private:
  template <class>
  friend struct detail::CheckpointState;  // analysis/belief_checkpoint.hpp
  const StationaryProcess* process_;
  Eigen::VectorXd belief_;
};

}  // namespace memtrace
