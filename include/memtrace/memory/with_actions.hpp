#pragma once
// WithActions: any memory over joint (action, observation) symbols, so that windows and traces
// remember past actions as well as observations (paper §3: both "can be extended to include past
// actions"). See docs/memory.md.

#include <cstddef>
#include <utility>

#include "memtrace/concepts.hpp"
#include "memtrace/core.hpp"

namespace memtrace {

/// Feeds a memory the joint symbol s = y + |Y|·u of each observation y and the action u that led
/// to it; the first observation of a history, which no action led to, gets u = |U| ("none").
/// The wrapped memory must therefore be built over num_symbols(|Y|, |U|) = |Y|(|U| + 1)
/// observations. A memory trace of joint symbols holds the trace of observations (sum of its |U|+1
/// blocks of |Y| entries) and the trace of actions (the sums within blocks) as linear functions of
/// it, so a linear learner loses nothing against separate traces. Satisfies ObservationActionMemory.
template <Memory M>
class WithActions {
 public:
  /// |Y|(|U| + 1); throws if it overflows std::size_t.
  [[nodiscard]] static std::size_t num_symbols(std::size_t num_observations, std::size_t num_actions) {
    if (num_actions + 1 == 0 || num_observations > static_cast<std::size_t>(-1) / (num_actions + 1))
      detail::invalid("WithActions: |Y|(|U| + 1) with |Y| = ", num_observations, " and |U| = ", num_actions,
                      " overflows std::size_t");
    return num_observations * (num_actions + 1);
  }

  WithActions(M memory, std::size_t num_observations, std::size_t num_actions)
      : memory_(std::move(memory)), num_observations_(num_observations), num_actions_(num_actions) {
    detail::check_num_observations("WithActions", num_observations);
    if (num_actions == 0) detail::invalid("WithActions: num_actions must be at least 1, got 0");
    const std::size_t symbols = num_symbols(num_observations, num_actions);
    if constexpr (requires { memory_.num_observations(); })
      if (memory_.num_observations() != symbols)
        detail::invalid("WithActions: the memory must be built over |Y|(|U| + 1) = ", symbols,
                        " symbols, but it has num_observations = ", memory_.num_observations());
  }

  void reset(Observation y0) {
    detail::check_observation("WithActions", y0, num_observations_);
    memory_.reset(symbol(num_actions_, y0));
  }

  /// Absorbs the action u taken after the previous observation and the observation y it led to.
  void update(Action u, Observation y) {
    if (u >= num_actions_) detail::invalid("WithActions: action must be in [0, ", num_actions_, "), got ", u);
    detail::check_observation("WithActions", y, num_observations_);
    memory_.update(symbol(u, y));
  }

  /// The joint symbol of action u (u = num_actions() for "no action") and observation y.
  [[nodiscard]] std::size_t symbol(Action u, Observation y) const noexcept { return y + num_observations_ * u; }

  [[nodiscard]] decltype(auto) features() const noexcept(noexcept(std::declval<const M&>().features())) {
    return memory_.features();
  }
  [[nodiscard]] std::size_t dim() const { return memory_.dim(); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return num_observations_; }
  [[nodiscard]] std::size_t num_actions() const noexcept { return num_actions_; }
  [[nodiscard]] const M& memory() const noexcept { return memory_; }

 private:
  M memory_;
  std::size_t num_observations_;
  std::size_t num_actions_;
};

}  // namespace memtrace
