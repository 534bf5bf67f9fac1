#pragma once
// The loop of online policy evaluation (paper §6): an environment, a memory and a TD learner,
// stepped together with one generator. The protocol: reset the environment and initialise the
// memory with y_0; then each step moves the environment, absorbs the new observation into the
// memory, and lets the learner learn from the transition of feature vectors. See docs/learners.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <type_traits>

#include "memtrace/concepts.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// How long to run and how to discount. A continuing task needs discount < 1; an episodic one
/// (every episode terminates) may use discount = 1.
struct TdRun {
  std::size_t steps = 0;
  double discount = 0.99;
  bool episodic = false;
};

namespace detail {

inline void check_run(const char* who, const TdRun& run, std::span<const std::size_t> record_at) {
  const double top = run.episodic ? 1.0 : 0.0;
  if (!(run.discount >= 0.0 && (run.discount < 1.0 || run.discount <= top)))
    invalid(who, ": discount must be in [0, 1)", run.episodic ? " (or 1 for an episodic task)" : "", ", got ",
            run.discount);
  for (std::size_t i = 0; i < record_at.size(); ++i) {
    if (record_at[i] > run.steps)
      invalid(who, ": record_at[", i, "] = ", record_at[i], " is beyond the run's ", run.steps, " steps");
    if (i > 0 && record_at[i] <= record_at[i - 1])
      invalid(who, ": record_at must be strictly increasing, got ", record_at[i - 1], " then ", record_at[i]);
  }
}

struct NoRecord {
  template <class L>
  void operator()(std::size_t, const L&) const noexcept {}
};

/// Throws unless every learner that reports its dim() has the memory's: a learner sized for
/// another memory would read and write past its weights. One comparison per learner and run.
template <class M, class L, std::size_t Extent>
void check_learner_dims(const char* who, const M& memory, std::span<L, Extent> learners) {
  if constexpr (requires(const L& l) {
                  { l.dim() } -> std::convertible_to<std::size_t>;
                }) {
    for (std::size_t k = 0; k < learners.size(); ++k)
      if (static_cast<std::size_t>(learners[k].dim()) != static_cast<std::size_t>(memory.dim())) {
        if (Extent == 1)
          invalid(who, ": the learner has dim ", learners[k].dim(), " but the memory has dim ", memory.dim());
        invalid(who, ": learners[", k, "] has dim ", learners[k].dim(), " but the memory has dim ", memory.dim());
      }
  }
}

/// MemoryLearners side by side, seen as one: each absorbs the same observations and rewards.
/// Every MemoryLearner learns from (y, r, discount); a finite reward is checked once for all of
/// them (learners that take the RewardFinite tag skip their own check).
template <class L, std::size_t Extent>
struct LearnerSpan {
  const char* who;
  std::span<L, Extent> learners;

  template <class Y>
  void reset(const Y& y0) {
    for (L& learner : learners) learner.reset(y0);
  }
  template <class Y>
  void learn(const Y& y, double reward, double discount) {
    if constexpr (requires(L & l) { l.learn(y, reward, discount, reward_finite); }) {
      if (!std::isfinite(reward)) [[unlikely]]
        invalid(who, ": the environment returned a non-finite reward ", reward, "; no learner was changed");
      for (L& learner : learners) learner.learn(y, reward, discount, reward_finite);
    } else {
      for (L& learner : learners) learner.learn(y, reward, discount);
    }
  }
  void end_episode() {
    for (L& learner : learners) learner.end_episode();
  }
};

/// One memory and FeatureLearners on its features, seen as one MemoryLearner: the memory absorbs
/// each observation once and every learner learns from the same transition φ -> φ'.
template <class M, class L, std::size_t Extent>
struct SharedMemory {
  const char* who;
  M& memory;
  std::span<L, Extent> learners;
  // Empty until the first reset: a memory's features() need not mean anything before it.
  std::optional<features_t<M>> phi;

  template <class Y>
  void reset(const Y& y0) {
    memory.reset(y0);
    if (phi)
      *phi = memory.features();  // assigned in place: no allocation after the first episode
    else
      phi.emplace(memory.features());
  }
  template <class Y>
  void learn(const Y& y, double reward, double discount) {
    memory.update(y);
    if (!std::isfinite(reward)) [[unlikely]]
      invalid(who, ": the environment returned a non-finite reward ", reward, "; no learner was changed");
    const auto& phi_next = memory.features();
    for (L& learner : learners) {
      if constexpr (FeaturesFitDim<M> && requires { learner.update(*phi, reward, discount, phi_next, features_fit); })
        learner.update(*phi, reward, discount, phi_next, features_fit);  // dims checked once per run
      else
        learner.update(*phi, reward, discount, phi_next);
    }
    *phi = memory.features();
  }
  void end_episode() {
    for (L& learner : learners) learner.end_episode();
  }
};

/// The one TD loop body, `count` times: a step of the environment, learned with discount 0 if it
/// terminated; a terminated or truncated step ends the episode and the next starts from env.reset.
/// (The loop is inside: a call per step would not be inlined and costs ~10% of a TD step.)
template <class Env, class G, class Learner>
void td_steps(Env& env, G& gen, double discount, Learner&& learner, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto step = env.step(gen);
    learner.learn(step.observation, static_cast<double>(step.reward), step.terminated ? 0.0 : discount);
    if (step.terminated || step.truncated) [[unlikely]] {
      learner.end_episode();
      learner.reset(env.reset(gen));
    }
  }
}

/// run.steps steps of td_steps, with on_record(step) after each step in record_at (checked).
template <class Env, class G, class Learner, class OnRecord>
void td_loop(const char* who, Env& env, G& gen, const TdRun& run, std::span<const std::size_t> record_at,
             Learner& learner, OnRecord&& on_record) {
  check_run(who, run, record_at);
  learner.reset(env.reset(gen));
  std::size_t t = 0;
  for (const std::size_t step : record_at) {
    td_steps(env, gen, run.discount, learner, step - t);
    t = step;
    on_record(step);
  }
  td_steps(env, gen, run.discount, learner, run.steps - t);
}

template <class Env, class M, class L, class G, std::size_t Extent, class OnRecord>
void run_td_shared(const char* who, Env& env, M& memory, std::span<L, Extent> learners, G& gen, const TdRun& run,
                   std::span<const std::size_t> record_at, OnRecord&& on_record) {
  check_learner_dims(who, memory, learners);
  SharedMemory<M, L, Extent> shared{who, memory, learners, std::nullopt};
  td_loop(who, env, gen, run, record_at, shared,
          [&](std::size_t step) { on_record(step, std::span<const L, Extent>(learners)); });
}

template <class Env, class L, class G, std::size_t Extent, class OnRecord>
void run_td_shared(const char* who, Env& env, std::span<L, Extent> learners, G& gen, const TdRun& run,
                   std::span<const std::size_t> record_at, OnRecord&& on_record) {
  LearnerSpan<L, Extent> all{who, learners};
  td_loop(who, env, gen, run, record_at, all,
          [&](std::size_t step) { on_record(step, std::span<const L, Extent>(learners)); });
}

}  // namespace detail

/// Several learners on one stream of experience: one environment and one memory, and every learner
/// learns from the same transitions of feature vectors (a sweep over step sizes, say). Learners draw
/// no random numbers, so each ends exactly as run_td with the same environment, memory and
/// generator state would leave it, at the cost of one environment step and one memory update per
/// step for all of them. on_record(step, std::span<const L>) is called after the steps in record_at.
/// Pass the learners as a span: run_td_shared(env, memory, std::span(learners), gen, run).
/// A learner whose dim() differs from the memory's is refused before the first step.
template <class Env, class M, class L, std::uniform_random_bit_generator G, std::size_t Extent,
          class OnRecord = detail::NoRecord>
requires RewardProcess<Env, G> && Memory<M, observation_t<Env, G>> && FeatureLearner<L, features_t<M>>
void run_td_shared(Env& env, M& memory, std::span<L, Extent> learners, G& gen, const TdRun& run,
                   std::span<const std::size_t> record_at = {}, OnRecord&& on_record = {}) {
  detail::run_td_shared("run_td_shared", env, memory, learners, gen, run, record_at, on_record);
}

/// The same for learners that hold their own memory (MemoryLearner, e.g. TraceTd with several λ):
/// every learner absorbs the same observations and rewards.
template <class Env, class L, std::uniform_random_bit_generator G, std::size_t Extent,
          class OnRecord = detail::NoRecord>
requires RewardProcess<Env, G> && MemoryLearner<L, observation_t<Env, G>>
void run_td_shared(Env& env, std::span<L, Extent> learners, G& gen, const TdRun& run,
                   std::span<const std::size_t> record_at = {}, OnRecord&& on_record = {}) {
  detail::run_td_shared("run_td_shared", env, learners, gen, run, record_at, on_record);
}

/// Runs `run.steps` steps of online TD learning. After the steps listed in record_at (strictly
/// increasing, each <= run.steps; 0 means before the first step) it calls on_record(step, learner);
/// the loop between two records has no per-step check, so unused hooks cost nothing.
/// A terminated step is learned with discount 0; a terminated or truncated step ends the episode
/// (learner.end_episode()) and the next episode starts from env.reset and memory.reset.
/// (run_td_shared with one learner: a span of static extent 1, so the learner loop disappears.)
template <class Env, class M, class L, std::uniform_random_bit_generator G, class OnRecord = detail::NoRecord>
requires RewardProcess<Env, G> && Memory<M, observation_t<Env, G>> && FeatureLearner<L, features_t<M>>
void run_td(Env& env, M& memory, L& learner, G& gen, const TdRun& run, std::span<const std::size_t> record_at = {},
            OnRecord&& on_record = {}) {
  detail::run_td_shared("run_td", env, memory, std::span<L, 1>(&learner, 1), gen, run, record_at,
                        [&](std::size_t step, std::span<const L, 1> one) { on_record(step, one[0]); });
}

/// The same loop for a memory and learner in one object (MemoryLearner, e.g. TraceTd).
template <class Env, class L, std::uniform_random_bit_generator G, class OnRecord = detail::NoRecord>
requires RewardProcess<Env, G> && MemoryLearner<L, observation_t<Env, G>>
void run_td(Env& env, L& learner, G& gen, const TdRun& run, std::span<const std::size_t> record_at = {},
            OnRecord&& on_record = {}) {
  detail::run_td_shared("run_td", env, std::span<L, 1>(&learner, 1), gen, run, record_at,
                        [&](std::size_t step, std::span<const L, 1> one) { on_record(step, one[0]); });
}

/// K independent runs in lockstep, each with its own environment, learner and generator: step t of
/// every run, then step t + 1 of every run. The results are exactly those of K separate run_td
/// calls; the point is speed: one TD step is a serial chain of dependent floating-point operations,
/// and interleaving independent runs lets one core overlap K such chains (on the noisy random walk
/// with TraceTd, K = 2 is ~1.5x the steps per second of K = 1; see docs/learners.md).
template <class Env, class L, std::uniform_random_bit_generator G, std::size_t K>
requires RewardProcess<Env, G> && MemoryLearner<L, observation_t<Env, G>>
void run_td_lockstep(std::array<Env, K>& envs, std::array<L, K>& learners, std::array<G, K>& gens, const TdRun& run) {
  static_assert(K >= 1, "run_td_lockstep: K must be at least 1");
  detail::check_run("run_td_lockstep", run, {});
  const auto run_k = [&](std::size_t k) {
    return detail::LearnerSpan<L, 1>{"run_td_lockstep", std::span<L, 1>(&learners[k], 1)};
  };
  for (std::size_t k = 0; k < K; ++k) run_k(k).reset(envs[k].reset(gens[k]));
  for (std::size_t t = 0; t < run.steps; ++t)
    for (std::size_t k = 0; k < K; ++k) detail::td_steps(envs[k], gens[k], run.discount, run_k(k), 1);
}

}  // namespace memtrace
