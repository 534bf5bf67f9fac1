#pragma once
// The vocabulary of memtrace as C++20 concepts, in one place. A user's own environment, memory or
// feature type plugs in by having the right members: nothing inherits from anything.
// docs/concepts.md explains each concept with an example.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <random>
#include <type_traits>

#include "memtrace/core.hpp"
#include "memtrace/features.hpp"
#include "memtrace/random.hpp"

namespace memtrace {

/// A type usable as an observation index: an unsigned integer type (memtrace uses Observation).
template <class T>
concept ObservationIndex = std::unsigned_integral<T>;

/// A feature vector that linear learners can use with weights of type W: dot(w, phi) gives the
/// linear estimate w·phi and add_scaled(w, alpha, phi) performs w += alpha·phi. Dense Eigen
/// vectors, OneHot and MultiHot qualify; a user's own type qualifies by providing both functions
/// in its namespace (found by argument-dependent lookup).
template <class F, class W = Eigen::VectorXd>
concept FeatureVector = requires(const F& phi, W& w, const W& cw, double alpha) {
  { dot(cw, phi) } -> std::convertible_to<double>;
  add_scaled(w, alpha, phi);
};

/// A memory turns a stream of observations into a feature vector (DESIGN.md "memory"):
/// reset(y0) starts a history with its first observation, update(y) absorbs the next one,
/// features() is the current feature vector (a FeatureVector) and dim() its length (the number of
/// weights a linear learner needs). Bad observations throw std::invalid_argument.
template <class M>
concept Memory = requires(M& m, const M& cm, Observation y) {
  m.reset(y);
  m.update(y);
  { cm.features() } -> FeatureVector;
  { cm.dim() } -> std::convertible_to<std::size_t>;
};

/// A memory of actions as well as observations: update(u, y) absorbs the action u taken after the
/// previous observation together with the observation y that followed it.
template <class M>
concept ObservationActionMemory = requires(M& m, const M& cm, Observation y, Action u) {
  m.reset(y);
  m.update(u, y);
  { cm.features() } -> FeatureVector;
  { cm.dim() } -> std::convertible_to<std::size_t>;
};

/// What one environment step returns (the Gymnasium split of episode ends): the next observation
/// y_{t+1}, the reward r_{t+1} of the transition x_t -> x_{t+1}, whether x_{t+1} is terminal (no
/// bootstrapping past it) and whether the episode was cut by a time limit (bootstrap).
struct Transition {
  Observation observation = 0;
  double reward = 0.0;
  bool terminated = false;
  bool truncated = false;
  friend bool operator==(const Transition&, const Transition&) = default;
};

/// A reward process that can be sampled (an HMM with rewards; a POMDP under a fixed policy):
/// reset(gen) draws x_0 and returns y_0 ~ O(.|x_0); step(gen) moves to x_{t+1} ~ P(.|x_t), then
/// emits y_{t+1} ~ O(.|x_{t+1}). The hidden state is exposed for tests and exact value errors.
/// G is the generator it is sampled with (any std::uniform_random_bit_generator).
template <class E, class G = DefaultGenerator>
concept RewardProcess = std::uniform_random_bit_generator<G> && requires(E& env, const E& cenv, G& gen) {
  { env.reset(gen) } -> std::convertible_to<Observation>;
  { env.step(gen) } -> std::convertible_to<Transition>;
  { cenv.state() } -> std::convertible_to<State>;
  { cenv.num_states() } -> std::convertible_to<std::size_t>;
  { cenv.num_observations() } -> std::convertible_to<std::size_t>;
};

/// A POMDP that can be sampled: like RewardProcess, but step(u, gen) takes the agent's action.
template <class E, class G = DefaultGenerator>
concept Pomdp = std::uniform_random_bit_generator<G> && requires(E& env, const E& cenv, G& gen, Action u) {
  { env.reset(gen) } -> std::convertible_to<Observation>;
  { env.step(u, gen) } -> std::convertible_to<Transition>;
  { cenv.state() } -> std::convertible_to<State>;
  { cenv.num_states() } -> std::convertible_to<std::size_t>;
  { cenv.num_observations() } -> std::convertible_to<std::size_t>;
  { cenv.num_actions() } -> std::convertible_to<std::size_t>;
};

/// A reward process that also exposes its explicit model, which exact analysis solves: model()
/// returns an object (by value or reference) whose transition() (|X| x |X|, transition(x, x') =
/// p(x' | x), row-stochastic), emission() (|X| x |Y|, emission(x, y) = p(y | x), row-stochastic),
/// initial() (p(x_0)) and expected_rewards() (r̄(x) = E[r_{t+1} | x_t = x]) are Eigen matrices
/// and vectors, dense or sparse, and that agree with what the simulator samples. memtrace's
/// FiniteHmm, NoisyRandomWalk, TwoStateHmm and TMazeAlwaysUp qualify.
template <class E, class G = DefaultGenerator>
concept FiniteModel = RewardProcess<E, G> && requires(const E& cenv, Eigen::Index i) {
  { cenv.model().transition().coeff(i, i) } -> std::convertible_to<double>;
  { cenv.model().emission().coeff(i, i) } -> std::convertible_to<double>;
  { cenv.model().initial().coeff(i) } -> std::convertible_to<double>;
  { cenv.model().expected_rewards().coeff(i) } -> std::convertible_to<double>;
};

/// What the run loops need of a learner (DESIGN.md: learners are small objects the caller steps):
/// update(φ, r, discount, φ') learns from one transition (discount 0 after a terminal step) and
/// end_episode() is called when an episode ends. LinearTdBank is one; ValueLearner asks for more.
template <class L, class Phi>
concept TdLearner = FeatureVector<Phi> && requires(L& learner, const Phi& phi, double r) {
  learner.update(phi, r, r, phi);
  learner.end_episode();
};

/// A linear value learner stepped by the caller (DESIGN.md): update(φ, r, discount, φ') learns
/// from one transition (discount 0 after a terminal step) and returns the TD error, value(φ) is the
/// current estimate, end_episode() is called when an episode ends, weights() are the weights.
/// Phi is the feature vector type it is stepped with.
template <class L, class Phi>
concept ValueLearner = TdLearner<L, Phi> && requires(L& learner, const L& clearner, const Phi& phi, double r) {
  { learner.update(phi, r, r, phi) } -> std::convertible_to<double>;
  { clearner.value(phi) } -> std::convertible_to<double>;
  learner.end_episode();
  clearner.weights();
};

/// A memory and a linear learner fused into one object (TraceTd): reset(y0) starts a history,
/// learn(y, r, discount) absorbs the next observation and learns from the transition into it,
/// returning the TD error; end_episode() is called when an episode ends.
template <class L>
concept MemoryLearner = requires(L& learner, Observation y, double r) {
  learner.reset(y);
  { learner.learn(y, r, r) } -> std::convertible_to<double>;
  learner.end_episode();
};

}  // namespace memtrace
