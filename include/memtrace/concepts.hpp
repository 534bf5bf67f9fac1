#pragma once
// memtrace's C++20 concepts, in one place (the types they speak of are in vocabulary.hpp,
// features.hpp and experience.hpp). A user's own environment, memory, learner or policy plugs in
// by having the right members: nothing inherits from anything.
// Concepts are layered like the maths (AI-Toolbox's pattern): the base concepts make no demand on
// what an observation is or whether the hidden state is visible; refinements add index
// observations (FiniteObservations), an exposed hidden state (ExposedState) and the explicit
// matrices (FiniteModel). docs/concepts.md explains each concept with an example.

#include <Eigen/Core>
#include <concepts>
#include <cstddef>
#include <random>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "memtrace/features.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A type usable as an observation index: an unsigned integer type (memtrace uses Observation).
template <class T>
concept ObservationIndex = std::unsigned_integral<T>;

namespace detail {
/// The weights a feature type is used with by default: a dynamic vector of its scalar for Eigen
/// vectors (float features, float weights), double weights for everything else.
template <class F>
struct default_weights {
  using type = Eigen::VectorXd;
};
template <class F>
requires requires { typename F::Scalar; }
struct default_weights<F> {
  using type = Eigen::Matrix<typename F::Scalar, Eigen::Dynamic, 1>;
};
}  // namespace detail

/// A feature vector that linear learners can use with weights of type W: dot(w, phi) gives the
/// linear estimate w·phi and add_scaled(w, alpha, phi) performs w += alpha·phi. Dense Eigen
/// vectors of float or double (with weights of the same scalar), OneHot and MultiHot qualify; a
/// user's own type qualifies by providing both functions in its namespace (found by ADL).
template <class F, class W = typename detail::default_weights<std::remove_cvref_t<F>>::type>
concept FeatureVector = requires(const F& phi, W& w, const W& cw, typename W::Scalar alpha) {
  { dot(cw, phi) } -> std::convertible_to<typename W::Scalar>;
  add_scaled(w, alpha, phi);
};

/// What one environment step returns (the Gymnasium split of episode ends): the next observation
/// y_{t+1} (of any type Y: an index, a vector, a multi-hot grid view), the reward r_{t+1} of the
/// step x_t -> x_{t+1}, whether x_{t+1} is terminal (no bootstrapping past it) and whether the
/// episode was cut by a time limit (bootstrap). Y = Observation is the index fast path.
template <class Y = Observation>
struct TimeStep {
  Y observation{};
  double reward = 0.0;
  bool terminated = false;
  bool truncated = false;
  friend bool operator==(const TimeStep&, const TimeStep&) = default;
};

/// A step result that carries an observation convertible to Y (TimeStep<Y>, or a user's own
/// struct with the same four members).
template <class S, class Y>
concept TimeStepOf = requires(const S& s) {
  { s.observation } -> std::convertible_to<const Y&>;
  { s.reward } -> std::convertible_to<double>;
  { s.terminated } -> std::convertible_to<bool>;
  { s.truncated } -> std::convertible_to<bool>;
};

/// The observation type of an environment: what reset(gen) returns.
template <class E, class G = DefaultGenerator>
using observation_t = std::remove_cvref_t<decltype(std::declval<E&>().reset(std::declval<G&>()))>;

/// A reward process that can be sampled (an HMM with rewards; a POMDP under a fixed policy; any
/// simulator that acts by itself): reset(gen) starts an episode and returns y_0, step(gen) moves
/// on and returns the TimeStep with y_{t+1}. No demand on what observations are or on the hidden
/// state. G is the generator it is sampled with (any std::uniform_random_bit_generator).
template <class E, class G = DefaultGenerator>
concept RewardProcess = std::uniform_random_bit_generator<G> && requires(E& env, G& gen) {
  env.reset(gen);
  { env.step(gen) } -> TimeStepOf<observation_t<E, G>>;
};

namespace detail {
template <class E>
struct action_type_of {
  using type = Action;
};
template <class E>
requires requires { typename E::action_type; }
struct action_type_of<E> {
  using type = typename E::action_type;
};
}  // namespace detail

/// The action type of an environment: its member type action_type if it declares one (a
/// continuous action, say Eigen::Matrix<double, 1, 1>), else Action (an index).
template <class E>
using action_t = typename detail::action_type_of<std::remove_cvref_t<E>>::type;

/// A continuous action: a dense Eigen column vector of float or double (fixed size, or run-time
/// size within a fixed maximum, so that no step allocates; Eigen::VectorXd works but allocates).
template <class A>
concept ContinuousAction = requires {
  typename A::Scalar;
  requires std::same_as<A, typename A::PlainObject>;
  requires std::derived_from<A, Eigen::MatrixBase<A>>;  // a Matrix, not an Array
  requires std::same_as<typename A::Scalar, float> || std::same_as<typename A::Scalar, double>;
}
&&detail::DenseVector<A>;

/// An environment that takes actions (a POMDP, or any simulator the agent acts in): reset(gen)
/// returns y_0, step(u, gen) takes the agent's action u (of type action_t<E>: an index unless the
/// environment declares its action_type) and returns the TimeStep with y_{t+1}. No demand on what
/// observations or actions are or on the hidden state; FiniteActions and ContinuousActions say
/// what the actions are.
template <class E, class G = DefaultGenerator>
concept Pomdp = std::uniform_random_bit_generator<G> && requires(E& env, G& gen, const action_t<E>& u) {
  env.reset(gen);
  { env.step(u, gen) } -> TimeStepOf<observation_t<E, G>>;
};

/// Refinement: actions are indices in [0, num_actions()) (WithActions, AppendAction, categorical
/// policies and every finite model need it).
template <class E, class G = DefaultGenerator>
concept FiniteActions = Pomdp<E, G> && std::unsigned_integral<action_t<E>> && requires(const E& cenv) {
  { cenv.num_actions() } -> std::convertible_to<std::size_t>;
};

/// Refinement: actions are real vectors (ContinuousAction) in the box [action_low(), action_high()]
/// the environment declares, both of type action_t<E> and of the actions' dimension. Rollout clips
/// every action into the box before step (Stable-Baselines3's and CleanRL's rule; a learner keeps
/// the policy's unclipped sample), so an environment stepped by Rollout may assume its actions are
/// inside it, unless the rollout was made with ActionClipping::off.
template <class E, class G = DefaultGenerator>
concept ContinuousActions = Pomdp<E, G> && ContinuousAction<action_t<E>> && requires(const E& cenv) {
  { cenv.action_low() } -> std::convertible_to<action_t<E>>;
  { cenv.action_high() } -> std::convertible_to<action_t<E>>;
};

/// Either kind of environment.
template <class E, class G = DefaultGenerator>
concept Environment = RewardProcess<E, G> || Pomdp<E, G>;

/// Refinement: observations are indices in [0, num_observations()) of a finite space (the one-hot
/// vectors e_y of the paper, never built). Window tables and exact analysis need it.
template <class E, class G = DefaultGenerator>
concept FiniteObservations = Environment<E, G> && ObservationIndex<observation_t<E, G>> && requires(const E& cenv) {
  { cenv.num_observations() } -> std::convertible_to<std::size_t>;
};

/// Refinement: the hidden state x_t in [0, num_states()) is exposed (tests, Monte Carlo against
/// true values and exact value errors need it; the run loops never ask).
template <class E, class G = DefaultGenerator>
concept ExposedState = Environment<E, G> && requires(const E& cenv) {
  { cenv.state() } -> std::convertible_to<State>;
  { cenv.num_states() } -> std::convertible_to<std::size_t>;
};

/// A reward process with index observations and an exposed state that also gives its explicit
/// model, which exact analysis solves: model() returns an object (by value or reference) whose
/// transition() (|X| x |X|, transition(x, x') = p(x' | x), row-stochastic), emission() (|X| x |Y|,
/// emission(x, y) = p(y | x), row-stochastic), initial() (p(x_0)) and expected_rewards()
/// (r̄(x) = E[r_{t+1} | x_t = x]) are Eigen matrices and vectors, dense or sparse, and agree with
/// what the simulator samples. FiniteHmm, NoisyRandomWalk, TwoStateHmm and TMazeAlwaysUp qualify.
template <class E, class G = DefaultGenerator>
concept FiniteModel = RewardProcess<E, G> && FiniteObservations<E, G> && ExposedState<E, G> &&
    requires(const E& cenv, Eigen::Index i) {
  { cenv.model().transition().coeff(i, i) } -> std::convertible_to<double>;
  { cenv.model().emission().coeff(i, i) } -> std::convertible_to<double>;
  { cenv.model().initial().coeff(i) } -> std::convertible_to<double>;
  { cenv.model().expected_rewards().coeff(i) } -> std::convertible_to<double>;
};

/// The feature vector type of a memory.
template <class M>
using features_t = std::remove_cvref_t<decltype(std::declval<const M&>().features())>;

namespace detail {
/// Features the loops can keep a copy of (φ_t while the memory moves on to φ_{t+1}): copyable, and
/// for Eigen types a plain vector, not a view (Block, Map) or an expression that would alias.
template <class F>
concept StorableFeatures = std::copyable<F> &&
    (!requires { typename F::PlainObject; } || std::same_as<F, typename F::PlainObject>);
}  // namespace detail

/// A memory of observations of type Y turns their stream into a feature vector (docs/concepts.md,
/// "Memory"): reset(y0) starts a history with its first observation, update(y) absorbs the next
/// one, features() is the current feature vector (a FeatureVector) and dim() its length (the
/// number of weights a linear learner needs). Bad observations throw std::invalid_argument.
/// Y = Observation (an index) by default; MemoryTrace also remembers vectors (Memory<M, Eigen::VectorXf>).
template <class M, class Y = Observation>
concept Memory = requires(M& m, const M& cm, const Y& y) {
  m.reset(y);
  m.update(y);
  { cm.features() } -> FeatureVector;
  { cm.dim() } -> std::convertible_to<std::size_t>;
}
&&detail::StorableFeatures<features_t<M>>;

/// A memory of actions as well as observations: update(u, y) absorbs the action u (of type A, an
/// index by default) taken after the previous observation together with the observation y that
/// followed it.
template <class M, class Y = Observation, class A = Action>
concept ObservationActionMemory = requires(M& m, const M& cm, const Y& y, const A& u) {
  m.reset(y);
  m.update(u, y);
  { cm.features() } -> FeatureVector;
  { cm.dim() } -> std::convertible_to<std::size_t>;
}
&&detail::StorableFeatures<features_t<M>>;

namespace detail {
/// A learner with a weight vector (weights_type, a column vector) takes features of its scalar only.
template <class L, class Phi>
concept FitsLearnerWeights = !requires {
  typename L::weights_type;
  requires L::weights_type::ColsAtCompileTime == 1;
}
|| FeatureVector<Phi, typename L::weights_type>;
}  // namespace detail

/// What the TD loops need of a learner (learners are small objects the caller steps:
/// docs/learners.md): update(φ, r, discount, φ') learns from one transition of feature vectors
/// (discount 0 after a terminal step) and end_episode() is called when an episode ends. It may hold
/// several learners (LinearTdBank holds K); ValueLearner refines it with one value and one weight
/// vector.
template <class L, class Phi>
concept FeatureLearner = FeatureVector<Phi> && detail::FitsLearnerWeights<L, Phi> &&
    requires(L& learner, const Phi& phi, double r) {
  learner.update(phi, r, r, phi);
  learner.end_episode();
};

/// Opt-in for memory types whose features() always fit their dim() (an index below dim(), a dense
/// vector of length dim()): `static constexpr bool features_fit_dim = true;`. The TD loops then
/// compare the learner's dim() with the memory's once per run and skip the learner's per-step
/// range check; for other memories the learner checks every feature (one branch a step).
template <class M>
concept FeaturesFitDim = requires {
  requires M::features_fit_dim;
};

/// A linear value learner stepped by the caller (docs/concepts.md, "Learners"): update(φ, r,
/// discount, φ') learns from one transition (discount 0 after a terminal step) and returns the TD
/// error, value(φ) is the current estimate, end_episode() is called when an episode ends, weights()
/// are the weights. Phi is the feature vector type it is stepped with. LinearTd and LinearTdLambda
/// qualify.
template <class L, class Phi>
concept ValueLearner = FeatureLearner<L, Phi> && requires(L& learner, const L& clearner, const Phi& phi, double r) {
  { learner.update(phi, r, r, phi) } -> std::convertible_to<double>;
  { clearner.value(phi) } -> std::convertible_to<double>;
  clearner.weights();
};

/// A memory and a linear learner fused into one object (TraceTd): reset(y0) starts a history,
/// learn(y, r, discount) absorbs the next observation and learns from the transition into it,
/// returning the TD error; end_episode() is called when an episode ends.
template <class L, class Y = Observation>
concept MemoryLearner = requires(L& learner, const Y& y, double r) {
  learner.reset(y);
  { learner.learn(y, r, r) } -> std::convertible_to<double>;
  learner.end_episode();
};

namespace detail {
/// An Eigen column vector of A's scalar whose compile-time size does not contradict A's (Eigen's
/// converting constructors accept any matrix, and would fail only when instantiated).
template <class R, class A>
concept VectorLike = requires {
  typename R::Scalar;
  requires std::same_as<typename R::Scalar, typename A::Scalar>;
  requires R::ColsAtCompileTime == 1;
  requires R::RowsAtCompileTime == A::RowsAtCompileTime || R::RowsAtCompileTime == Eigen::Dynamic ||
      A::RowsAtCompileTime == Eigen::Dynamic;
};

/// What a policy's act may return for actions of type A: an integral type for index actions (a
/// probability or a float is refused), an Eigen vector of A's scalar and size for continuous
/// actions, else anything convertible to A.
template <class R, class A>
concept PolicyAction = (std::unsigned_integral<A> && std::integral<R>) ||
                       (ContinuousAction<A> && VectorLike<std::remove_cvref_t<R>, A>) ||
                       (!std::unsigned_integral<A> && !ContinuousAction<A> && std::convertible_to<R, A>);
}  // namespace detail

/// A policy acting on features of type Phi: act(φ, gen) returns an action of type A (an index in
/// [0, |U|) by default, of an integral type: a probability or a float is refused; a continuous
/// action when A is one), drawing any randomness from gen (memtrace's sampling functions keep it
/// the same on every compiler).
template <class P, class Phi, class G = DefaultGenerator, class A = Action>
concept Policy = std::uniform_random_bit_generator<G> && requires(P& policy, const Phi& phi, G& gen) {
  { policy.act(phi, gen) } -> detail::PolicyAction<A>;
};

/// A policy that acts for a whole batch at once (e.g. one forward pass of a network for N
/// environments): act(features, gens, actions) writes actions[i] (of type A) for features[i],
/// drawing the randomness of entry i from gens[i] only, so that each environment's trajectory does
/// not depend on N. The rollout prefers it over Policy's one-at-a-time act.
template <class P, class Phi, class G = DefaultGenerator, class A = Action>
concept BatchPolicy = std::uniform_random_bit_generator<G> &&
    requires(P& policy, std::span<const Phi> phis, std::span<G> gens, std::span<A> actions) {
  policy.act(phis, gens, actions);
};

/// A batch policy with a state of its own per environment (a recurrent network's hidden state):
/// act(features, starts, gens, actions) is BatchPolicy's act told which environments start an
/// episode at this step (starts[i]: features[i] is the first of a new episode, so a state must be
/// reset there). The rollout prefers it over BatchPolicy's act; every BatchPolicy still compiles.
template <class P, class Phi, class G = DefaultGenerator, class A = Action>
concept EpisodeStartPolicy = std::uniform_random_bit_generator<G> &&
    requires(P& policy, std::span<const Phi> phis, std::span<const bool> starts, std::span<G> gens,
             std::span<A> actions) {
  policy.act(phis, starts, gens, actions);
};

namespace detail {
template <class B>
struct parameter_block_scalar {};
template <class T, std::size_t E>
requires std::is_floating_point_v<std::remove_const_t<T>>
struct parameter_block_scalar<std::span<T, E>> {
  using type = T;
};
template <class B>
requires(std::ranges::random_access_range<const B>&& std::ranges::sized_range<const B>) struct parameter_block_scalar<B>
    : parameter_block_scalar<std::remove_cvref_t<std::ranges::range_reference_t<const B>>> {
};

template <class B>
inline constexpr bool single_parameter_block = false;
template <class T, std::size_t E>
requires std::is_floating_point_v<std::remove_const_t<T>>
inline constexpr bool single_parameter_block<std::span<T, E>> = true;

/// The number of blocks of a ParameterBlocks value, and block i as a span.
template <class B>
[[nodiscard]] std::size_t parameter_block_count(const B& blocks) noexcept {
  if constexpr (single_parameter_block<B>)
    return 1;
  else
    return static_cast<std::size_t>(std::ranges::size(blocks));
}
template <class B>
[[nodiscard]] auto parameter_block(const B& blocks, std::size_t i) noexcept {
  if constexpr (single_parameter_block<B>)
    return std::span(blocks.data(), blocks.size());
  else
    return std::span(std::ranges::begin(blocks)[static_cast<std::ranges::range_difference_t<const B>>(i)]);
}

/// What a network's forward returns: values in memory (a Matrix, a Map, a Ref, or a reference to
/// one) of the network's scalar, not an unevaluated expression that would be recomputed at each use.
template <class T, class Scalar>
concept NetworkOutput = requires {
  typename std::remove_cvref_t<T>::Scalar;
  requires std::same_as<typename std::remove_cvref_t<T>::Scalar, Scalar>;
  requires(static_cast<unsigned>(std::remove_cvref_t<T>::Flags) & Eigen::DirectAccessBit) != 0;
};

/// The number of parameters in `parameters`' blocks, after checking that `gradients` has blocks of
/// the same sizes (else std::invalid_argument starting "who: ").
template <class P, class G>
[[nodiscard]] std::size_t matching_blocks_total(const char* who, const P& parameters, const G& gradients) {
  const std::size_t blocks = parameter_block_count(parameters);
  if (parameter_block_count(gradients) != blocks)
    invalid(who, ": gradients has ", parameter_block_count(gradients), " blocks, expected the parameters' ", blocks);
  std::size_t total = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t size = parameter_block(parameters, b).size();
    if (parameter_block(gradients, b).size() != size)
      invalid(who, ": gradients' block ", b, " has ", parameter_block(gradients, b).size(),
              " entries, expected the parameters' ", size);
    total += size;
  }
  return total;
}

/// Refuses a network output that is not rows x cols: a network of one's own that returns another
/// shape gets a message naming it instead of reads past its end.
template <class Out>
void check_network_output(const char* who, const char* what, const Out& out, std::size_t rows, std::size_t cols) {
  if (static_cast<std::size_t>(out.rows()) != rows || static_cast<std::size_t>(out.cols()) != cols) [[unlikely]]
    invalid(who, ": the network's ", what, " is ", out.rows(), " x ", out.cols(), ", expected ", rows, " x ", cols);
}
}  // namespace detail

/// A network's parameters (or gradients) as contiguous blocks of Scalar, optax's leaves: one
/// std::span<Scalar>, or a sized random-access range of them (std::array<std::span<float>, 2> for
/// an actor and a critic held apart). The optimiser steps them as one vector, the global-norm clip
/// sums their squares block by block, and a checkpoint stores them.
template <class B, class Scalar>
concept ParameterBlocks = std::same_as<typename detail::parameter_block_scalar<std::remove_cvref_t<B>>::type, Scalar>;

/// What a network is given as input for features of type Phi in Scalar: a block of contiguous
/// columns of a dense (dim x batch) matrix, one sample per column, or a span of MultiHot columns.
template <class Phi, class Scalar>
using network_input_t = std::conditional_t<
    detail::is_multi_hot<Phi>::value, std::span<const Phi>,
    Eigen::Block<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>, Eigen::Dynamic, Eigen::Dynamic, true>>;

/// How PPO reads a network's policy output, the network's member type policy_distribution
/// (policy_distribution_t): Categorical (the default) reads policy_dim() logits of a categorical
/// policy over index actions; DiagonalGaussian reads 2k rows [μ; log σ], the mean and the log
/// standard deviation of a diagonal Gaussian over k-dimensional continuous actions. Both are
/// defined in learn/distributions.hpp.
struct Categorical;
struct DiagonalGaussian;

namespace detail {
template <class N>
struct policy_distribution_of {
  using type = Categorical;
};
template <class N>
requires requires { typename N::policy_distribution; }
struct policy_distribution_of<N> {
  using type = typename N::policy_distribution;
};
}  // namespace detail

/// A network's policy distribution: its member type policy_distribution, else Categorical.
template <class N>
using policy_distribution_t = typename detail::policy_distribution_of<std::remove_cvref_t<N>>::type;

/// The network of a PPO agent (docs/control.md, "Your own network"): a policy head and a value head
/// on the same input x (network_input_t<Phi, scalar_type>: B samples as columns).
///   forward_policy(x)  the policy's parameters, policy_dim() x B (a categorical policy's logits,
///                      one row per action; or, for a network whose policy_distribution is
///                      DiagonalGaussian, the means over the log standard deviations), kept by the
///                      network until its next forward_policy;
///   forward_value(x)   the values, 1 x B, kept likewise (calling one never spoils the other's);
///   backward(x, d_policy, d_value)  after both forwards on x: overwrites gradients() with
///                      d loss / d θ, given d loss / d (policy output) and d loss / d (value);
///   parameters(), gradients()  all parameters of both heads as ParameterBlocks, gradients in the
///                      same blocks; input_dim(), policy_dim().
/// Optional: reserve(B) makes room for batches of B columns (PPO calls it once). ActorCritic, the
/// paper's two MLPs, is the default.
template <class N, class Phi>
concept ActorCriticNetwork = requires {
  typename N::scalar_type;
}
&&requires(N& net, const N& cnet, const network_input_t<Phi, typename N::scalar_type>& input,
           const Eigen::Ref<const Eigen::Matrix<typename N::scalar_type, Eigen::Dynamic, Eigen::Dynamic>>& d_policy,
           const Eigen::Ref<const Eigen::Matrix<typename N::scalar_type, 1, Eigen::Dynamic>>& d_value) {
  { cnet.input_dim() } -> std::convertible_to<std::size_t>;
  { cnet.policy_dim() } -> std::convertible_to<std::size_t>;
  { net.forward_policy(input) } -> detail::NetworkOutput<typename N::scalar_type>;
  { net.forward_value(input) } -> detail::NetworkOutput<typename N::scalar_type>;
  net.backward(input, d_policy, d_value);
  { net.parameters() } -> ParameterBlocks<typename N::scalar_type>;
  { net.gradients() } -> ParameterBlocks<typename N::scalar_type>;
};

/// What a recurrent network's forward returns: the policy output (policy_dim() x B) and the values
/// (1 x B) of the same columns, in memory (NetworkOutput each), kept until the network's next forward.
template <class Policy, class Value>
struct RecurrentOutput {
  Policy policy;
  Value value;
};

/// The network of a recurrent PPO agent (docs/control.md, "A recurrent agent"): a state of
/// state_dim() entries per environment, carried from step to step and reset to zero where an
/// episode starts, so that what the policy and the value see of the past is learned. On inputs x
/// (network_input_t<Phi, scalar_type>):
///   forward_step(x, states)   one step of B environments: states (state_dim() x B, column b
///                      environment b's, zeroed by the caller where an episode starts) advances in
///                      place; returns the policy output and values of the step (RecurrentOutput);
///   forward_sequence(x, starts, initial)  T steps of B environments, column t·B + b for step t of
///                      environment b (T·B columns): the state starts from initial (state_dim() x
///                      B) and is reset to zero before every column whose starts entry is true;
///                      returns the policy output and values of every column;
///   backward_sequence(x, d_policy, d_value)  after forward_sequence on x: overwrites gradients()
///                      with d loss / d θ through time;
///   parameters(), gradients(), input_dim(), policy_dim() as for ActorCriticNetwork.
/// GruActorCritic (learn/gru_actor_critic.hpp) is one; a user's LSTM plugs in the same way.
template <class N, class Phi>
concept RecurrentActorCriticNetwork = requires {
  typename N::scalar_type;
}
&&requires(N& net, const N& cnet, const network_input_t<Phi, typename N::scalar_type>& input,
           Eigen::Ref<Eigen::Matrix<typename N::scalar_type, Eigen::Dynamic, Eigen::Dynamic>> states,
           std::span<const bool> starts,
           const Eigen::Ref<const Eigen::Matrix<typename N::scalar_type, Eigen::Dynamic, Eigen::Dynamic>>& initial,
           const Eigen::Ref<const Eigen::Matrix<typename N::scalar_type, Eigen::Dynamic, Eigen::Dynamic>>& d_policy,
           const Eigen::Ref<const Eigen::Matrix<typename N::scalar_type, 1, Eigen::Dynamic>>& d_value) {
  { cnet.input_dim() } -> std::convertible_to<std::size_t>;
  { cnet.policy_dim() } -> std::convertible_to<std::size_t>;
  { cnet.state_dim() } -> std::convertible_to<std::size_t>;
  { net.forward_step(input, states).policy } -> detail::NetworkOutput<typename N::scalar_type>;
  { net.forward_step(input, states).value } -> detail::NetworkOutput<typename N::scalar_type>;
  { net.forward_sequence(input, starts, initial).policy } -> detail::NetworkOutput<typename N::scalar_type>;
  { net.forward_sequence(input, starts, initial).value } -> detail::NetworkOutput<typename N::scalar_type>;
  net.backward_sequence(input, d_policy, d_value);
  { net.parameters() } -> ParameterBlocks<typename N::scalar_type>;
  { net.gradients() } -> ParameterBlocks<typename N::scalar_type>;
};

}  // namespace memtrace
