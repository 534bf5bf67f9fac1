// Compile-time tests of concepts.hpp: this program builds only if every static_assert holds. Every
// public concept of concepts.hpp is checked both ways, with memtrace's own types and a user's: types
// that must satisfy it and types that must not. The run-time tests keep only the static_asserts
// that set up one of their cases (that a test's helper policy is a Policy, say).
#include <array>
#include <concepts>
#include <cstdint>
#include <memtrace/memtrace.hpp>
#include <random>
#include <ratio>
#include <type_traits>
#include <vector>

#include "../learn/relu_actor_critic.hpp"

namespace user {
// A user's own memory and feature type, plugged in without inheriting from anything.
struct Sparse {
  std::size_t i;
};
inline double dot(const Eigen::VectorXd& w, const Sparse& phi) { return w[static_cast<Eigen::Index>(phi.i)]; }
inline void add_scaled(Eigen::VectorXd& w, double a, const Sparse& phi) { w[static_cast<Eigen::Index>(phi.i)] += a; }
struct LastObservation {
  Sparse phi{0};
  void reset(memtrace::Observation y) { phi.i = y; }
  void update(memtrace::Observation y) { phi.i = y; }
  [[nodiscard]] const Sparse& features() const { return phi; }
  [[nodiscard]] std::size_t dim() const { return 3; }
};
// A user's environment: a coin that is observed.
struct Coin {
  memtrace::State x = 0;
  template <class G>
  memtrace::Observation reset(G& g) {
    return x = memtrace::uniform_index(g, 2);
  }
  template <class G>
  memtrace::TimeStep<> step(G& g) {
    x = memtrace::uniform_index(g, 2);
    return {x, 0.0, false, false};
  }
  [[nodiscard]] memtrace::State state() const { return x; }
  [[nodiscard]] std::size_t num_states() const { return 2; }
  [[nodiscard]] std::size_t num_observations() const { return 2; }
};
struct ActingCoin : Coin {
  using Coin::step;
  template <class G>
  memtrace::TimeStep<> step(memtrace::Action, G& g) {
    return step(g);
  }
  [[nodiscard]] std::size_t num_actions() const { return 2; }
};
struct NoFeatures {};
// A simulator with vector observations and no visible state (the acting kind and the autonomous kind).
struct Pendulum {
  template <class G>
  Eigen::Vector4f reset(G&) {
    return Eigen::Vector4f::Zero();
  }
  template <class G>
  memtrace::TimeStep<Eigen::Vector4f> step(memtrace::Action, G&) {
    return {};
  }
  [[nodiscard]] std::size_t num_actions() const { return 3; }
};
// Index actions without saying how many: a Pomdp, but not FiniteActions (Rollout refuses it).
struct Uncounted {
  template <class G>
  memtrace::Observation reset(G&) {
    return 0;
  }
  template <class G>
  memtrace::TimeStep<> step(memtrace::Action, G&) {
    return {};
  }
};
// Continuous actions: a 2-vector of float, with and without a box.
struct Thruster {
  using action_type = Eigen::Vector2f;
  template <class G>
  Eigen::Vector3d reset(G&) {
    return Eigen::Vector3d::Zero();
  }
  template <class G>
  memtrace::TimeStep<Eigen::Vector3d> step(const action_type&, G&) {
    return {};
  }
  [[nodiscard]] action_type action_low() const { return action_type::Constant(-1.0f); }
  [[nodiscard]] action_type action_high() const { return action_type::Constant(1.0f); }
};
struct Unboxed {
  using action_type = Eigen::Vector2f;
  template <class G>
  Eigen::Vector3d reset(G&) {
    return Eigen::Vector3d::Zero();
  }
  template <class G>
  memtrace::TimeStep<Eigen::Vector3d> step(const action_type&, G&) {
    return {};
  }
};
// A policy of continuous actions.
struct Steer {
  template <class G>
  Eigen::Vector2f act(const Eigen::VectorXf&, G&) {
    return Eigen::Vector2f::Zero();
  }
};
struct Drift {
  template <class G>
  Eigen::VectorXd reset(G&) {
    return Eigen::VectorXd::Zero(2);
  }
  // A user's own step result with the four members works as well as TimeStep.
  struct Result {
    Eigen::VectorXd observation;
    float reward;
    bool terminated, truncated;
  };
  template <class G>
  Result step(G&) {
    return {};
  }
};
// A policy on any features.
struct AlwaysZero {
  template <class Phi, class G>
  memtrace::Action act(const Phi&, G&) const {
    return 0;
  }
};
}  // namespace user

using namespace memtrace;

// Feature vectors: dense, one-hot, multi-hot, a user's type; not plain numbers.
static_assert(FeatureVector<Eigen::VectorXd>);
static_assert(FeatureVector<Eigen::Matrix<double, 11, 1>>);
static_assert(FeatureVector<OneHot>);
static_assert(FeatureVector<MultiHot<3>>);
static_assert(FeatureVector<MultiHot<>>);
static_assert(FeatureVector<user::Sparse>);
static_assert(!FeatureVector<int>);
static_assert(!FeatureVector<Eigen::MatrixXd>);  // a matrix is no feature vector
static_assert(!FeatureVector<Eigen::VectorXi>);  // nor are integer entries
static_assert(FeatureVector<Eigen::VectorXf>);   // float features, with float weights
static_assert(FeatureVector<Eigen::Vector4f>);
static_assert(FeatureVector<OneHot, Eigen::VectorXf>);
static_assert(FeatureVector<MultiHot<>, Eigen::VectorXf>);
static_assert(!FeatureVector<Eigen::VectorXf, Eigen::VectorXd>);  // no mixing of float and double
static_assert(!FeatureVector<user::NoFeatures>);

// Memories.
static_assert(Memory<MemoryTrace<>>);
static_assert(Memory<MemoryTrace<std::ratio<1, 2>>>);
static_assert(Memory<MemoryTrace<std::ratio<9, 10>, 11>>);
static_assert(Memory<MemoryTrace<dynamic_lambda, 11>>);
static_assert(Memory<TraceBank<>>);
static_assert(Memory<TraceBank<11>>);
static_assert(Memory<Window<>>);
static_assert(Memory<Window<3, 11>>);
static_assert(Memory<ConcatWindow<>>);
static_assert(Memory<ConcatWindow<3, 11>>);
static_assert(Memory<user::LastObservation>);
static_assert(!Memory<int>);
static_assert(!Memory<user::Sparse>);
static_assert(!Memory<WithActions<MemoryTrace<>>>);  // it needs the action too
static_assert(ObservationActionMemory<WithActions<MemoryTrace<>>>);
static_assert(ObservationActionMemory<WithActions<Window<>>>);
static_assert(!ObservationActionMemory<MemoryTrace<>>);

// Memory traces with a compile-time |Y| have fixed-size features.
static_assert(std::is_same_v<MemoryTrace<std::ratio<1, 2>, 11>::features_type, Eigen::Matrix<double, 11, 1>>);
static_assert(std::is_same_v<MemoryTrace<>::features_type, Eigen::VectorXd>);
static_assert(std::is_same_v<Window<>::features_type, OneHot>);
static_assert(std::is_same_v<ConcatWindow<4>::features_type, MultiHot<4>>);

// Generators: memtrace's own and the standard library's.
static_assert(std::uniform_random_bit_generator<Xoshiro256StarStar>);
static_assert(std::uniform_random_bit_generator<SplitMix64>);
static_assert(std::is_same_v<DefaultGenerator, Xoshiro256StarStar>);

// Environments, with any generator.
static_assert(RewardProcess<user::Coin>);
static_assert(RewardProcess<user::Coin, std::mt19937>);
static_assert(!Pomdp<user::Coin>);
static_assert(Pomdp<user::ActingCoin, std::minstd_rand>);
static_assert(!RewardProcess<int>);
static_assert(!RewardProcess<user::Coin, int>);  // int is no generator

// The layering: base concepts make no demand on observations or state, refinements do.
static_assert(std::is_same_v<observation_t<user::Coin>, Observation>);
static_assert(FiniteObservations<user::Coin> && ExposedState<user::Coin>);
static_assert(!FiniteModel<user::Coin>);  // no model()
static_assert(FiniteObservations<user::ActingCoin> && ExposedState<user::ActingCoin>);
static_assert(Pomdp<user::Pendulum> && !RewardProcess<user::Pendulum>);
static_assert(Pomdp<user::Pendulum, std::mt19937>);
static_assert(std::is_same_v<observation_t<user::Pendulum>, Eigen::Vector4f>);
static_assert(!FiniteObservations<user::Pendulum> && !ExposedState<user::Pendulum>);
static_assert(RewardProcess<user::Drift> && !Pomdp<user::Drift>);
static_assert(Environment<user::Drift> && Environment<user::Pendulum> && !Environment<int>);

// Actions of any type: index actions are FiniteActions when counted; continuous ones are Eigen vectors in a box.
static_assert(std::is_same_v<action_t<user::Pendulum>, Action> && FiniteActions<user::Pendulum>);
static_assert(Pomdp<user::Uncounted> && !FiniteActions<user::Uncounted>);
static_assert(std::is_same_v<action_t<user::Thruster>, Eigen::Vector2f>);
static_assert(Pomdp<user::Thruster> && ContinuousActions<user::Thruster> && !FiniteActions<user::Thruster>);
static_assert(Pomdp<user::Unboxed> && !ContinuousActions<user::Unboxed>);
static_assert(!ContinuousActions<user::ActingCoin> && FiniteActions<user::ActingCoin>);
static_assert(ContinuousAction<Eigen::Vector2d> && ContinuousAction<Eigen::VectorXf>);
static_assert(ContinuousAction<Eigen::Matrix<float, Eigen::Dynamic, 1, Eigen::ColMajor, 4, 1>>);
static_assert(!ContinuousAction<Eigen::Matrix2d> && !ContinuousAction<Eigen::RowVector2d> && !ContinuousAction<Action>);
static_assert(!ContinuousAction<Eigen::Vector2i>);
static_assert(Policy<user::Steer, Eigen::VectorXf, DefaultGenerator, Eigen::Vector2f>);
static_assert(!Policy<user::Steer, Eigen::VectorXf>);  // not an index
static_assert(!Policy<user::Steer, Eigen::VectorXf, DefaultGenerator, Eigen::Vector3f>);
static_assert(!Policy<user::AlwaysZero, Eigen::VectorXf, DefaultGenerator, Eigen::Vector2f>);
static_assert(!FiniteObservations<user::Drift> && !ExposedState<user::Drift> && !FiniteModel<user::Drift>);
static_assert(TimeStepOf<TimeStep<Eigen::Vector4f>, Eigen::Vector4f>);
static_assert(!TimeStepOf<TimeStep<Eigen::Vector4f>, Observation>);  // a vector is no index
static_assert(!TimeStepOf<int, Observation>);

// A real number is no index: no memory takes it as one (it would be truncated silently).
static_assert(!Memory<MemoryTrace<>, double>);
static_assert(!Memory<MemoryTrace<>, float>);
static_assert(!Memory<TraceBank<>, double>);
static_assert(!Memory<Window<>, double>);
static_assert(!Memory<ConcatWindow<>, float>);
static_assert(!ObservationActionMemory<WithActions<Window<>>, double>);
static_assert(Memory<MemoryTrace<>, unsigned>);  // any unsigned index type works
static_assert(Memory<MemoryTrace<>, Eigen::Matrix<double, 1, 1>>);

// Memories of index observations are not memories of vectors.
static_assert(!Memory<Window<>, Eigen::VectorXd>);
static_assert(!Memory<ConcatWindow<>, Eigen::VectorXd>);
static_assert(!Memory<user::LastObservation, Eigen::Vector4f>);

// Learners take features of their own scalar only; memories must give copyable features.
static_assert(FeatureLearner<LinearTd<float>, Eigen::VectorXf>);
static_assert(!FeatureLearner<LinearTd<float>, Eigen::VectorXd>);
static_assert(!FeatureLearner<LinearTd<>, Eigen::VectorXf>);
static_assert(FeatureLearner<LinearTdBank, OneHot>);
namespace user {
struct BlockView {  // features() is a view into another vector: the loops could not keep a copy of it
  Eigen::VectorXd z = Eigen::VectorXd::Zero(4);
  void reset(memtrace::Observation) {}
  void update(memtrace::Observation) {}
  [[nodiscard]] auto features() const { return z.head(2); }
  [[nodiscard]] std::size_t dim() const { return 2; }
};
struct Probabilistic {  // returns a probability, not an action
  template <class Phi, class G>
  double act(const Phi&, G&) const {
    return 0.5;
  }
};
}  // namespace user
static_assert(!Memory<user::BlockView>);
static_assert(FeaturesFitDim<MemoryTrace<>> && FeaturesFitDim<Window<>> && FeaturesFitDim<WithActions<Window<>>>);
static_assert(!FeaturesFitDim<user::LastObservation>);  // a user's memory is checked every step

// Policies.
static_assert(!Policy<user::Probabilistic, OneHot>);
static_assert(Policy<user::AlwaysZero, Eigen::VectorXf>);
static_assert(Policy<user::AlwaysZero, OneHot, std::mt19937>);
static_assert(!Policy<user::Coin, OneHot>);
static_assert(!Policy<user::AlwaysZero, OneHot, int>);

// Observation indices: unsigned integers only.
static_assert(ObservationIndex<Observation> && ObservationIndex<unsigned> && ObservationIndex<std::uint8_t>);
static_assert(!ObservationIndex<int> && !ObservationIndex<double> && !ObservationIndex<Eigen::VectorXd>);

// memtrace's environments: which kind each is, and which refinements it has.
static_assert(RewardProcess<FiniteHmm>);
static_assert(RewardProcess<FiniteHmm, std::mt19937>);
static_assert(RewardProcess<FiniteHmm, SplitMix64>);
static_assert(FiniteModel<FiniteHmm>);
static_assert(FiniteModel<FiniteHmm, std::minstd_rand>);
static_assert(!Pomdp<FiniteHmm>);
static_assert(Pomdp<FinitePomdp>);
static_assert(Pomdp<FinitePomdp, std::mt19937_64>);
static_assert(FiniteObservations<FinitePomdp> && ExposedState<FinitePomdp>);
static_assert(!RewardProcess<FinitePomdp> && !FiniteModel<FinitePomdp>);  // a model needs a policy first
static_assert(RewardProcess<NoisyRandomWalk>);
static_assert(RewardProcess<NoisyRandomWalk, std::mt19937>);
static_assert(FiniteModel<NoisyRandomWalk>);
static_assert(FiniteModel<NoisyRandomWalk, SplitMix64>);
static_assert(!Pomdp<NoisyRandomWalk>);
static_assert(RewardProcess<TwoStateHmm>);
static_assert(RewardProcess<TwoStateHmm, std::mt19937>);
static_assert(FiniteModel<TwoStateHmm>);
static_assert(FiniteModel<TwoStateHmm, SplitMix64>);
static_assert(Pomdp<TMaze>);
static_assert(Pomdp<TMaze, std::mt19937>);
static_assert(!RewardProcess<TMaze> && !FiniteModel<TMaze>);
static_assert(FiniteObservations<TMaze> && ExposedState<TMaze>);
static_assert(RewardProcess<TMazeAlwaysUp>);
static_assert(FiniteModel<TMazeAlwaysUp>);
static_assert(FiniteModel<TMazeAlwaysUp, std::minstd_rand>);
static_assert(Pomdp<TMazeNavigation>);
static_assert(Pomdp<TMazeNavigation, std::mt19937>);
static_assert(FiniteObservations<TMazeNavigation> && ExposedState<TMazeNavigation>);
static_assert(Pomdp<MinigridTMaze>);
static_assert(Pomdp<MinigridTMaze, std::mt19937>);
static_assert(Environment<MinigridTMaze> && Environment<FiniteHmm> && Environment<TMaze>);
static_assert(std::same_as<observation_t<MinigridTMaze>, MultiHot<9>>);
static_assert(!FiniteObservations<MinigridTMaze> && !ExposedState<MinigridTMaze>);
static_assert(!RewardProcess<MinigridTMaze>);
static_assert(FeatureVector<MultiHot<9>>);

// memtrace's index memories.
static_assert(Memory<MemoryTrace<std::ratio<3, 5>, 4>>);
static_assert(Memory<Window<4, 11>>);
static_assert(Memory<ConcatWindow<4, 11>>);
static_assert(Memory<Window<>, unsigned>);  // any unsigned index converts
static_assert(Memory<BeliefFilter>);        // the belief as a memory (features: the belief vector)
static_assert(!Memory<BeliefFilter, Eigen::VectorXd>);
static_assert(std::is_same_v<MemoryTrace<std::ratio<1, 2>, 11, float>::features_type, Eigen::Matrix<float, 11, 1>>);

// Memories of vectors. Traces and banks take indices, dense vectors of their scalar and MultiHot;
// joint symbols (WithActions) need indices, AppendAction takes vectors.
using Grid = MultiHot<9>;  // the T-maze's 3 x 3 view: 9 active entries of 45
using Vector45f = Eigen::Matrix<float, 45, 1>;
static_assert(Memory<MemoryTrace<>, Eigen::VectorXd>);
static_assert(Memory<MemoryTrace<std::ratio<3, 5>, 4>, Eigen::Vector4d>);
static_assert(Memory<MemoryTrace<>, Observation>);
static_assert(Memory<MemoryTrace<>, Grid>);
static_assert(Memory<MemoryTrace<>, MultiHot<>>);
static_assert(Memory<MemoryTrace<dynamic_lambda, dynamic, float>, Eigen::VectorXf>);
static_assert(Memory<MemoryTrace<std::ratio<7, 8>, 45, float>, Vector45f>);
static_assert(Memory<MemoryTrace<std::ratio<7, 8>, 45, float>, Eigen::VectorXf>);  // size checked at run time
static_assert(Memory<MemoryTrace<std::ratio<7, 8>, 45, float>, Grid>);
static_assert(!Memory<MemoryTrace<std::ratio<7, 8>, 45, float>, Eigen::Matrix<float, 44, 1>>);  // sizes differ
static_assert(!Memory<MemoryTrace<dynamic_lambda, dynamic, float>, Eigen::VectorXd>);           // no silent conversion
static_assert(!Memory<MemoryTrace<>, Eigen::VectorXf>);
static_assert(!Memory<MemoryTrace<>, Eigen::RowVectorXd>);
static_assert(!Memory<MemoryTrace<>, Eigen::MatrixXd>);
static_assert(Memory<TraceBank<>, Eigen::VectorXd>);
static_assert(Memory<TraceBank<>, MultiHot<>>);
static_assert(Memory<TraceBank<45, float>, Vector45f>);
static_assert(Memory<TraceBank<dynamic, float>, Grid>);
static_assert(!Memory<TraceBank<dynamic, float>, Eigen::VectorXd>);
static_assert(std::is_same_v<MemoryTrace<dynamic_lambda, 45, float>::features_type, Vector45f>);
static_assert(std::is_same_v<MemoryTrace<std::ratio<1, 2>, dynamic, float>::features_type, Eigen::VectorXf>);
static_assert(std::is_same_v<TraceBank<45, float>::features_type, Eigen::VectorXf>);
static_assert(FeatureVector<features_t<MemoryTrace<dynamic_lambda, 45, float>>>);

// Frame stacks take the frames they are made for (the vector analogue of ConcatWindow).
static_assert(Memory<FrameStack<Eigen::VectorXf>, Eigen::VectorXf>);
static_assert(Memory<FrameStack<Eigen::VectorXd>, Eigen::VectorXd>);
static_assert(Memory<FrameStack<Vector45f>, Vector45f>);
static_assert(Memory<FrameStack<Grid>, Grid>);
static_assert(Memory<FrameStack<MultiHot<>>, Grid>);
static_assert(!Memory<FrameStack<Eigen::VectorXf>, Eigen::VectorXd>);
static_assert(!Memory<FrameStack<Eigen::VectorXf>, Grid>);
static_assert(!Memory<FrameStack<Grid>, Eigen::VectorXf>);
static_assert(!Memory<FrameStack<Grid>, Observation>);   // indices: ConcatWindow
static_assert(!Memory<FrameStack<Grid>, MultiHot<10>>);  // more active entries than a frame holds
static_assert(std::is_same_v<features_t<FrameStack<Grid>>, MultiHot<>>);
static_assert(std::is_same_v<features_t<FrameStack<Vector45f>>, Eigen::VectorXf>);
static_assert(FeatureVector<features_t<FrameStack<Grid>>>);

// Windows take index observations only: a vector is refused at compile time, with a deleted
// overload whose line says to use FrameStack (or MemoryTrace) for vectors.
static_assert(!Memory<Window<3, 11>, Eigen::Matrix<double, 11, 1>>);
static_assert(!Memory<Window<>, Grid>);
static_assert(!Memory<Window<2, 45>, Grid>);
static_assert(!Memory<ConcatWindow<>, Eigen::VectorXf>);
static_assert(!Memory<ConcatWindow<>, Grid>);
static_assert(!Memory<ConcatWindow<>, MultiHot<>>);
static_assert(!ObservationActionMemory<WithActions<MemoryTrace<>>, Eigen::VectorXd>);
static_assert(!ObservationActionMemory<WithActions<MemoryTrace<>>, Grid>);

// AppendAction: an ObservationActionMemory for every observation kind its memory takes.
static_assert(ObservationActionMemory<AppendAction<MemoryTrace<>>, Eigen::VectorXd>);
static_assert(ObservationActionMemory<AppendAction<MemoryTrace<>>, Observation>);
static_assert(ObservationActionMemory<AppendAction<MemoryTrace<dynamic_lambda, dynamic, float>>, Grid>);
static_assert(ObservationActionMemory<AppendAction<TraceBank<dynamic, float>>, Grid>);
static_assert(ObservationActionMemory<AppendAction<TraceBank<dynamic, float>>, MultiHot<>>);
static_assert(ObservationActionMemory<AppendAction<FrameStack<MultiHot<10>>>, Grid>);
static_assert(ObservationActionMemory<AppendAction<FrameStack<Eigen::VectorXf>>, Eigen::VectorXf>);
static_assert(!ObservationActionMemory<AppendAction<MemoryTrace<dynamic_lambda, dynamic, float>>, Eigen::VectorXd>);
static_assert(!ObservationActionMemory<AppendAction<FrameStack<MultiHot<10>>>, Eigen::VectorXd>);
static_assert(!ObservationActionMemory<AppendAction<FrameStack<Grid>>, Grid>);  // [y; e_u] has 10 active entries
static_assert(!Memory<AppendAction<MemoryTrace<>>, Eigen::VectorXd>);           // every step follows an action

// memtrace's learners: FeatureLearner (what the loops step), ValueLearner (one estimate),
// MemoryLearner (a memory and a learner fused).
static_assert(ValueLearner<LinearTd<>, OneHot>);
static_assert(ValueLearner<LinearTd<>, Eigen::VectorXd>);
static_assert(ValueLearner<LinearTd<float>, Eigen::VectorXf>);
static_assert(ValueLearner<LinearTdLambda<>, MultiHot<>>);
static_assert(ValueLearner<LinearTdLambda<float>, Eigen::VectorXf>);
static_assert(!ValueLearner<int, OneHot>);
static_assert(!ValueLearner<LinearTdBank, OneHot>);  // K values, not one
static_assert(!ValueLearner<LinearTd<float>, Eigen::VectorXd>);
static_assert(FeatureLearner<LinearTd<>, OneHot>);
static_assert(FeatureLearner<LinearTdLambda<>, Eigen::VectorXd>);
static_assert(FeatureLearner<LinearTdBank, MultiHot<>>);
static_assert(FeatureLearner<LinearTdBank, Eigen::VectorXd>);
static_assert(!FeatureLearner<int, OneHot>);
static_assert(!FeatureLearner<TraceTd<>, Eigen::VectorXd>);  // it learns from observations, not features
static_assert(!FeatureLearner<LinearTd<>, Observation>);     // an index is no feature vector
static_assert(MemoryLearner<TraceTd<>>);
static_assert(MemoryLearner<TraceTd<std::ratio<1, 2>, 4>>);
static_assert(!MemoryLearner<LinearTd<>>);
static_assert(!MemoryLearner<MemoryTrace<>>);  // a memory alone does not learn
static_assert(!FeaturesFitDim<int>);
static_assert(FeaturesFitDim<TraceBank<>> && FeaturesFitDim<ConcatWindow<>> && FeaturesFitDim<FrameStack<Grid>>);
static_assert(FeaturesFitDim<AppendAction<MemoryTrace<>>> && !FeaturesFitDim<AppendAction<user::LastObservation>>);
static_assert(!FeaturesFitDim<BeliefFilter>);  // not declared: its learner checks every step

// memtrace's policies: PPO's agent acts for a batch into a buffer (PpoActing), its policy view one
// at a time or for a batch.
static_assert(BatchPolicy<PpoActing<Eigen::VectorXd, double>, Eigen::VectorXd>);
static_assert(Policy<PpoPolicy<Eigen::VectorXd, double>, Eigen::VectorXd>);
static_assert(BatchPolicy<PpoPolicy<Eigen::VectorXd, double>, Eigen::VectorXd>);
static_assert(!BatchPolicy<user::AlwaysZero, OneHot>);                                  // one action at a time only
static_assert(!BatchPolicy<PpoPolicy<Eigen::VectorXd, double>, Eigen::VectorXd, int>);  // int is no generator

// PPO's network: the default two MLPs take dense and MultiHot features; a user's network
// (tests/learn/relu_actor_critic.hpp, dense input only) plugs in; a lone MLP has no value head.
static_assert(ActorCriticNetwork<ActorCritic<float>, Eigen::VectorXf>);
static_assert(ActorCriticNetwork<ActorCritic<double>, MultiHot<4>>);
static_assert(ActorCriticNetwork<ActorCritic<float>, MultiHot<dynamic>>);
static_assert(ActorCriticNetwork<ReluActorCritic<float>, Eigen::VectorXf>);
static_assert(ActorCriticNetwork<ReluActorCritic<double>, Eigen::Vector3d>);
static_assert(!ActorCriticNetwork<ReluActorCritic<float>, MultiHot<4>>);  // it takes dense input only
static_assert(!ActorCriticNetwork<Mlp<float>, Eigen::VectorXf>);
static_assert(!ActorCriticNetwork<int, Eigen::VectorXf>);
static_assert(ParameterBlocks<std::span<float>, float> && ParameterBlocks<std::span<const double>, const double>);
static_assert(ParameterBlocks<std::array<std::span<float>, 2>, float>);
static_assert(ParameterBlocks<std::vector<std::span<double>>, double>);
static_assert(!ParameterBlocks<std::span<float>, double> && !ParameterBlocks<Eigen::VectorXf, float>);
static_assert(!ParameterBlocks<std::vector<float>, float>);  // a vector of numbers, not of blocks
static_assert(BatchPolicy<PpoPolicy<Eigen::VectorXf, float, ReluActorCritic<float>>, Eigen::VectorXf>);
static_assert(std::same_as<Ppo<Eigen::VectorXf, float, ReluActorCritic<float>>::policy_type,
                           PpoPolicy<Eigen::VectorXf, float, ReluActorCritic<float>>>);

// The generator's constexpr parts run at compile time, so these are pinned at compile time too.
static_assert(Xoshiro256StarStar::from_state({1, 2, 3, 4})() == 11520);
static_assert(SplitMix64(1234567)() == 6457827717110365317ULL);
static_assert(make_stream(42, 0) != make_stream(42, 1));

// memtrace::detail stays out of argument-dependent lookup for the library's types: the CRTP bases
// of LinearTd, LinearTdLambda, MemoryTrace and TraceBank live in detail::crtp, which holds nothing
// else, so an unqualified call with one of them as argument does not find detail's helpers.
template <class T>
concept FindsDetailByAdl = requires(const T& t) {
  invalid(t);
};
static_assert(FindsDetailByAdl<detail::TraceNames>);  // the probe finds detail::invalid through a detail type
static_assert(!FindsDetailByAdl<LinearTd<>>);
static_assert(!FindsDetailByAdl<LinearTdLambda<float>>);
static_assert(!FindsDetailByAdl<MemoryTrace<>>);
static_assert(!FindsDetailByAdl<TraceBank<>>);

// Memories with compile-time parameters are default-constructible members of a user's aggregate,
// value-initialised with {} (an explicit default constructor would break this on Clang 14).
struct Agent {
  MemoryTrace<std::ratio<1, 2>, 3> trace;
  Window<2, 3> window;
  ConcatWindow<2, 3> concat;
};

int main() {
  Agent agent{};
  std::array<Window<2, 3>, 2> windows{};
  return static_cast<int>(agent.trace.dim() + windows[1].dim() + agent.concat.dim()) == 3 + 9 + 6 ? 0 : 1;
}
