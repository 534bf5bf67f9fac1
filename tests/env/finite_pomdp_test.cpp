// Tests of the general model of env/finite_pomdp.hpp (the classic POMDPs' form): emissions that
// depend on the action, rewards that depend on the observation, the first observation's emission;
// the positional constructor unchanged (pinned); validation; the simulator against the matrices;
// the HMM of a policy against the Bellman equation solved directly and against Monte Carlo; the
// belief update on the Tiger problem.
#include <Eigen/Dense>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memtrace/analysis/markov.hpp>
#include <memtrace/analysis/monte_carlo.hpp>
#include <memtrace/analysis/trace_value_error.hpp>
#include <memtrace/analysis/window_value_error.hpp>
#include <memtrace/concepts.hpp>
#include <memtrace/env/finite_pomdp.hpp>
#include <memtrace/memory/memory_trace.hpp>
#include <memtrace/memory/window.hpp>
#include <memtrace/random.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "env_test_support.hpp"

namespace finite_pomdp_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

using test::random_stochastic;

/// Integer rewards in [-3, 3], so a mean over y is spread over an interval of width 6.
Eigen::MatrixXd random_rewards(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  Xoshiro256StarStar g(seed);
  Eigen::MatrixXd r(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) r(i, j) = static_cast<double>(uniform_int(g, -3, 3));
  return r;
}

std::string error_of(auto&& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

/// The matrices of a model, dense, kept by the test to compute what the model should do without
/// asking the model.
struct Raw {
  std::vector<Eigen::MatrixXd> t, o, r;  // T_u, O_u (one: action-free), r_u (|X| x |X| or |X| x |X||Y|)
  Eigen::MatrixXd o0;                    // initial emission (empty: the emission)
  Eigen::VectorXd initial;
  std::vector<bool> terminal;

  [[nodiscard]] Eigen::Index n() const { return t[0].rows(); }
  [[nodiscard]] Eigen::Index ny() const { return o[0].cols(); }
  [[nodiscard]] const Eigen::MatrixXd& emission(std::size_t u) const { return o[o.size() == 1 ? 0 : u]; }
  [[nodiscard]] double reward(Eigen::Index x, std::size_t u, Eigen::Index next, Eigen::Index y) const {
    return r[u].cols() == n() ? r[u](x, next) : r[u](x, next * ny() + y);
  }
  [[nodiscard]] FinitePomdp pomdp() const {
    FinitePomdp::Matrices m{.emissions = o, .initial = initial, .initial_emission = o0, .terminal = terminal};
    for (std::size_t u = 0; u < t.size(); ++u) {
      m.transitions.emplace_back(t[u].sparseView());
      m.rewards.emplace_back(r[u].sparseView());
    }
    return FinitePomdp(std::move(m));
  }
};

/// n states, k actions, |Y| = ny; emissions per action or not, rewards R(x, u, x', y) or r(x, u, x'),
/// a separate initial emission or not, the last state terminal (its row restarts from `initial`) or not.
Raw random_model(Eigen::Index n, std::size_t k, Eigen::Index ny, bool per_action, bool observation_rewards,
                 bool initial_emission, bool episodic, std::uint64_t seed) {
  Raw m;
  m.initial = random_stochastic(1, n, seed).transpose();
  if (episodic) {
    m.initial[n - 1] = 0.0;
    m.initial /= m.initial.sum();
    m.terminal.assign(static_cast<std::size_t>(n), false);
    m.terminal.back() = true;
  }
  for (std::size_t u = 0; u < k; ++u) {
    m.t.push_back(random_stochastic(n, n, seed + 10 + u));
    if (episodic) m.t.back().row(n - 1) = m.initial.transpose();
    m.r.push_back(random_rewards(n, observation_rewards ? n * ny : n, seed + 20 + u));
    if (per_action || u == 0) m.o.push_back(random_stochastic(n, ny, seed + 30 + u));
  }
  if (initial_emission) m.o0 = random_stochastic(n, ny, seed + 40);
  return m;
}

/// The values of the state-based policy π computed from the Bellman equation of the POMDP itself:
/// v(x) = Σ_u π(u|x) Σ_x' T(x'|x,u) [Σ_y O(y|x',u) R(x,u,x',y) + γ v(x') (x' not terminal)], 0 in a
/// terminal state, by a dense LU solve.
Eigen::VectorXd bellman_values(const Raw& m, const Eigen::MatrixXd& policy, double discount) {
  const Eigen::Index n = m.n();
  Eigen::MatrixXd p = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(n);
  for (Eigen::Index x = 0; x < n; ++x) {
    if (!m.terminal.empty() && m.terminal[static_cast<std::size_t>(x)]) continue;
    for (std::size_t u = 0; u < m.t.size(); ++u) {
      const double pi = policy(x, static_cast<Eigen::Index>(u));
      for (Eigen::Index next = 0; next < n; ++next) {
        const double t = m.t[u](x, next);
        if (t == 0.0) continue;
        for (Eigen::Index y = 0; y < m.ny(); ++y) r[x] += pi * t * m.emission(u)(next, y) * m.reward(x, u, next, y);
        if (m.terminal.empty() || !m.terminal[static_cast<std::size_t>(next)]) p(x, next) += pi * t;
      }
    }
  }
  return (Eigen::MatrixXd::Identity(n, n) - discount * p).partialPivLu().solve(r);
}

/// A FinitePomdp played by a state-based policy, as a RewardProcess whose exposed state is the
/// state of the HMM of that policy (hmm_state(x, u) after u, hmm_start_state(x_0) after a reset):
/// what Monte Carlo against the HMM's exact quantities needs.
class UnderPolicy {
 public:
  UnderPolicy(FinitePomdp pomdp, const Eigen::MatrixXd& policy) : pomdp_(std::move(pomdp)) {
    for (Eigen::Index x = 0; x < policy.rows(); ++x) choose_.emplace_back(policy.row(x).transpose());
  }
  template <class G>
  Observation reset(G& gen) {
    const Observation y = pomdp_.reset(gen);
    hmm_state_ = pomdp_.hmm_start_state(pomdp_.state());
    return y;
  }
  template <class G>
  TimeStep<> step(G& gen) {
    const Action u = choose_[pomdp_.state()].sample(gen);
    const TimeStep<> tr = pomdp_.step(u, gen);
    hmm_state_ = pomdp_.hmm_state(pomdp_.state(), u);
    return tr;
  }
  [[nodiscard]] State state() const { return hmm_state_; }
  [[nodiscard]] std::size_t num_states() const { return pomdp_.num_hmm_states(); }
  [[nodiscard]] std::size_t num_observations() const { return pomdp_.num_observations(); }

 private:
  FinitePomdp pomdp_;
  std::vector<detail::AliasTable> choose_;
  State hmm_state_ = 0;
};
static_assert(RewardProcess<UnderPolicy> && ExposedState<UnderPolicy> && FiniteObservations<UnderPolicy>);

/// The Tiger problem (Kaelbling, Littman & Cassandra 1998), from its description. States
/// tiger-left, tiger-right; actions listen, open-left, open-right; observations hear-left,
/// hear-right, and `start`, the observation before any action (the one-hot initial emission).
/// Listening leaves the state and hears the correct side with probability 0.85; opening a door
/// resets the state uniformly and hears either side with probability 1/2. Rewards: listen -1,
/// opening the tiger's door -100, the other +10.
namespace tiger {
constexpr Action listen = 0, open_left = 1, open_right = 2;
constexpr Observation hear_left = 0, hear_right = 1, start = 2;

Raw model() {
  Raw m;
  const Eigen::Matrix2d stay = Eigen::Matrix2d::Identity(), reset = Eigen::Matrix2d::Constant(0.5);
  m.t = {stay, reset, reset};
  Eigen::MatrixXd hear(2, 3), either(2, 3), first(2, 3);
  hear << 0.85, 0.15, 0.0, 0.15, 0.85, 0.0;
  either << 0.5, 0.5, 0.0, 0.5, 0.5, 0.0;
  first << 0.0, 0.0, 1.0, 0.0, 0.0, 1.0;
  m.o = {hear, either, either};
  m.o0 = first;
  m.initial = Eigen::Vector2d(0.5, 0.5);
  // r(x, u, x'): the reward depends on the state the door was opened in, not on the next one.
  m.r = {Eigen::MatrixXd::Constant(2, 2, -1.0), Eigen::MatrixXd(2, 2), Eigen::MatrixXd(2, 2)};
  m.r[open_left] << -100.0, -100.0, 10.0, 10.0;
  m.r[open_right] << 10.0, 10.0, -100.0, -100.0;
  return m;
}
}  // namespace tiger

}  // namespace

TEST_CASE("the general FinitePomdp stores the model it was given", "[env][finite_pomdp]") {
  const Raw raw = random_model(4, 3, 3, true, true, true, false, 1);
  const FinitePomdp pomdp = raw.pomdp();
  CHECK(pomdp.num_states() == 4);
  CHECK(pomdp.num_actions() == 3);
  CHECK(pomdp.num_observations() == 3);
  CHECK(pomdp.emissions_depend_on_action());
  CHECK(pomdp.rewards_depend_on_observation());
  for (Action u = 0; u < 3; ++u) {
    CHECK(pomdp.emission(u) == raw.o[u]);
    CHECK(Eigen::MatrixXd(pomdp.transition(u)) == raw.t[u]);
    for (Eigen::Index x = 0; x < 4; ++x)
      for (Eigen::Index next = 0; next < 4; ++next) {
        double mean = 0.0;
        for (Eigen::Index y = 0; y < 3; ++y) {
          const bool paid = raw.t[u](x, next) > 0.0 && raw.o[u](next, y) > 0.0;
          const double r =
              pomdp.reward(static_cast<State>(x), u, static_cast<State>(next), static_cast<Observation>(y));
          CHECK(r == (paid ? raw.reward(x, u, next, y) : 0.0));
          mean += raw.o[u](next, y) * raw.reward(x, u, next, y);
        }
        // rewards(u) holds the mean over y, where the transition is possible.
        CHECK(pomdp.rewards(u).coeff(x, next) == Approx(raw.t[u](x, next) > 0.0 ? mean : 0.0).margin(1e-12));
      }
  }
  CHECK(pomdp.initial_emission() == raw.o0);
  CHECK(pomdp.initial() == raw.initial);
  CHECK_THROWS_WITH(pomdp.emission(), Contains("FinitePomdp::emission: the emissions depend on the action"));
  CHECK_THROWS_AS(pomdp.emission(), std::logic_error);
  CHECK_THROWS_AS(pomdp.emission(3), std::out_of_range);
  CHECK_THAT(error_of([&] { (void)pomdp.reward(0, 3, 0, 0); }),
             Contains("FinitePomdp::reward: action must be in [0, 3), got 3"));
  CHECK_THAT(error_of([&] { (void)pomdp.reward(0, 0, 4, 0); }),
             Contains("FinitePomdp::reward: next must be a state in [0, 4), got 4"));
  CHECK_THAT(error_of([&] { (void)pomdp.reward(0, 0, 0, 3); }),
             Contains("FinitePomdp::reward: observation must be in [0, 3), got 3"));

  // The HMM layout: blocks of |X| states, one per action, then the start states.
  CHECK(pomdp.hmm_has_start_states());
  CHECK(pomdp.num_hmm_states() == 16);
  CHECK(pomdp.hmm_state(1, 2) == 9);
  CHECK(pomdp.hmm_start_state(3) == 15);
  for (State s = 0; s < 16; ++s) CHECK(pomdp.pomdp_state(s) == s % 4);
  CHECK_THAT(error_of([&] { (void)pomdp.pomdp_state(16); }), Contains("pomdp_state: s must be in [0, 16), got 16"));
  CHECK_THAT(error_of([&] { (void)pomdp.hmm_state(4, 0); }), Contains("hmm_state: x must be a state in [0, 4)"));

  // Action-free emissions and rewards without y: the paper's case, no start states.
  const FinitePomdp plain = random_model(4, 3, 3, false, false, false, false, 2).pomdp();
  CHECK_FALSE(plain.emissions_depend_on_action());
  CHECK_FALSE(plain.rewards_depend_on_observation());
  CHECK(&plain.emission() == &plain.emission(2));
  CHECK(&plain.initial_emission() == &plain.emission());
  CHECK_FALSE(plain.hmm_has_start_states());
  CHECK(plain.num_hmm_states() == 4);
  CHECK(plain.hmm_state(1, 2) == 1);
  CHECK(plain.hmm_start_state(1) == 1);
  // An initial emission of its own, without the action: one block for every action, then the starts.
  const FinitePomdp first = random_model(4, 3, 3, false, false, true, false, 3).pomdp();
  CHECK(first.hmm_has_start_states());
  CHECK(first.num_hmm_states() == 8);
  CHECK(first.hmm_state(1, 2) == 1);
  CHECK(first.hmm_start_state(1) == 5);
}

TEST_CASE("the positional constructor is the paper's model, unchanged", "[env][finite_pomdp]") {
  // Pinned with the FinitePomdp before the general model existed: the same draws, the same HMM
  // numbers to the last bit.
  std::vector<SparseMatrix> p, r;
  for (std::uint64_t u = 0; u < 3; ++u) {
    p.emplace_back(random_stochastic(4, 4, 10 + u).sparseView());
    Xoshiro256StarStar g(20 + u);
    Eigen::MatrixXd reward(4, 4);
    for (Eigen::Index i = 0; i < 4; ++i)
      for (Eigen::Index j = 0; j < 4; ++j) reward(i, j) = uniform_real(g) * 4.0 - 2.0;
    r.emplace_back(reward.sparseView());
  }
  const Eigen::MatrixXd o = random_stochastic(4, 3, 1);
  const Eigen::VectorXd initial = random_stochastic(1, 4, 2).transpose();
  const FinitePomdp positional(p, o, initial, r);
  const FinitePomdp named({.transitions = p, .emissions = {o}, .initial = initial, .rewards = r});
  const FinitePomdp same_first(
      {.transitions = p, .emissions = {o}, .initial = initial, .rewards = r, .initial_emission = o});
  CHECK_FALSE(same_first.hmm_has_start_states());  // an initial emission equal to the emission adds nothing

  const std::vector<std::size_t> pinned_states{1, 2, 0, 3, 0, 2, 2, 3, 0, 0, 2, 1, 0,
                                               2, 0, 0, 2, 1, 1, 0, 1, 3, 1, 2, 2, 3};
  const std::vector<double> pinned_rewards{0x1.77eda4415504p-1,   -0x1.3c845261b255ap+0, 0x1.41380cc932c88p-2,
                                           0x1.fb3be3845346p+0,   0x1.3a15865d6341ep+0,  -0x1.89c22f1074d64p+0,
                                           -0x1.d4a89c38298ecp+0, 0x1.3a15865d6341ep+0,  -0x1.fe42c707467cp+0,
                                           -0x1.271cb2870d624p-1, -0x1.3c845261b255ap+0, 0x1.41380cc932c88p-2};
  for (FinitePomdp pomdp : {positional, named, same_first}) {
    Xoshiro256StarStar g(7);
    std::vector<std::size_t> trajectory{pomdp.reset(g), pomdp.state()};
    std::vector<double> rewards;
    for (std::size_t t = 0; t < 12; ++t) {
      const TimeStep<> tr = pomdp.step(t % 3, g);
      trajectory.push_back(tr.observation);
      trajectory.push_back(pomdp.state());
      rewards.push_back(tr.reward);
    }
    CHECK(trajectory == pinned_states);
    CHECK(rewards == pinned_rewards);
    const FiniteHmm hmm = pomdp.with_policy(random_stochastic(4, 3, 5));
    CHECK(hmm.num_states() == 4);
    CHECK(hmm.expected_rewards() ==
          Eigen::Vector4d(0x1.ab3ae335152a5p-3, -0x1.080c3bb1f36e6p+0, 0x1.8ff80f48f7456p-2, 0x1.38285ff21e464p-3));
    CHECK(hmm.transition().coeff(1, 3) == 0x1.c2bd38bf08dd6p-6);
    CHECK(hmm.rewards().coeff(3, 1) == 0x1.d382326e7fc4ap+0);
  }
}

TEST_CASE("the general FinitePomdp refuses malformed models and names what is wrong", "[env][finite_pomdp]") {
  const Raw good = random_model(2, 2, 3, true, true, true, false, 4);
  auto error = [&](auto&& change) {
    Raw m = good;
    change(m);
    return error_of([&] { (void)m.pomdp(); });
  };
  CHECK(error([](Raw&) {}) == "(no exception)");
  CHECK_THAT(error([](Raw& m) { m.o.push_back(m.o[0]); }),
             Contains("FinitePomdp: emissions must hold one matrix (the same for every action) or one per action (2), "
                      "got 3"));
  CHECK_THAT(error([](Raw& m) { m.o[1] = Eigen::MatrixXd::Constant(2, 2, 0.5); }),
             Contains("emission(1) (|X| x |Y|) must be 2 x 3, got 2 x 2"));
  CHECK_THAT(error([](Raw& m) { m.o[1](1, 0) += 0.5; }), Contains("emission(1) row 1 sums to 1.5"));
  CHECK_THAT(error([](Raw& m) { m.o[0](0, 2) = std::nan(""); }),
             Contains("emission(0)(0, 2) must be a finite probability, got nan"));
  CHECK_THAT(error([](Raw& m) { m.o0 = Eigen::MatrixXd(); }),
             Contains("initial_emission (p(y_0 | x_0), |X| x |Y|) is required when the emissions depend on the "
                      "action"));
  CHECK_THAT(error([](Raw& m) { m.o0 = Eigen::MatrixXd::Constant(3, 3, 1.0 / 3.0); }),
             Contains("initial_emission (|X| x |Y|) must be 2 x 3, got 3 x 3"));
  CHECK_THAT(error([](Raw& m) { m.o0(0, 0) = -0.5; }),
             Contains("initial_emission(0, 0) must not be negative, got -0.5"));
  CHECK_THAT(
      error([](Raw& m) { m.r[0] = Eigen::MatrixXd::Zero(2, 5); }),
      Contains("rewards(0) must be 2 x 2 (r(x, u, x')) or 2 x 6 (R(x, u, x', y) at column x'|Y| + y), got 2 x 5"));
  CHECK_THAT(error([](Raw& m) { m.r[1] = Eigen::MatrixXd::Zero(2, 2); }),
             Contains("rewards(1) (|X| x |X||Y|, as rewards(0)) must be 2 x 6, got 2 x 2"));
  CHECK_THAT(error([](Raw& m) { m.r[1](1, 5) = std::numeric_limits<double>::infinity(); }),
             Contains("rewards(1)(x = 1, x' = 1, y = 2) must be a finite reward, got inf"));
  CHECK_THAT(error([](Raw& m) { m.t[1](0, 0) += 0.25; }), Contains("transition(1) row 0 sums to 1.25"));
  // Action-free emissions: the positional constructor's messages.
  const Raw plain = random_model(2, 2, 3, false, false, false, false, 5);
  Raw bad = plain;
  bad.o[0](1, 1) += 0.5;
  CHECK_THAT(error_of([&] { (void)bad.pomdp(); }), Contains("FinitePomdp: emission row 1 sums to 1.5"));
  bad = plain;
  bad.r[0](0, 1) = std::nan("");
  CHECK_THAT(error_of([&] { (void)bad.pomdp(); }), Contains("rewards(0)(0, 1) must be a finite reward, got nan"));
  // Shapes are all checked before any content.
  bad = good;
  bad.t[0](0, 0) = std::nan("");
  bad.o[1] = Eigen::MatrixXd::Constant(2, 2, 0.5);
  CHECK_THAT(error_of([&] { (void)bad.pomdp(); }), Contains("emission(1) (|X| x |Y|) must be 2 x 3"));
}

TEST_CASE("the simulator draws (x, u, x', y) and pays R(x, u, x', y) as the matrices say", "[env][finite_pomdp]") {
  // Under a state-based policy, every cell p(x', y | x, u) = T(x'|x, u) O(y|x', u) against its
  // frequency among the steps leaving (x, u), and every cell p(x_0, y_0) = initial(x_0)
  // initial_emission(x_0, y_0) among the starts, within Bernstein bounds with a union bound (a
  // correct simulator fails with probability below 1e-6); each step's reward must be exactly
  // R(x, u, x', y); the mean reward of (x, u, x') against rewards(u) within a Hoeffding bound.
  constexpr std::size_t steps = 600'000;
  const auto check = [&](const Raw& raw, std::uint64_t seed) {
    FinitePomdp pomdp = raw.pomdp();
    const auto n = static_cast<std::size_t>(raw.n()), ny = static_cast<std::size_t>(raw.ny()), k = raw.t.size();
    const Eigen::MatrixXd policy = random_stochastic(raw.n(), static_cast<Eigen::Index>(k), seed + 1);
    std::vector<detail::AliasTable> choose;
    for (Eigen::Index x = 0; x < raw.n(); ++x) choose.emplace_back(policy.row(x).transpose());
    std::vector<double> cells(n * k * n * ny, 0.0), leaving(n * k, 0.0), paid(n * k * n, 0.0), moves(n * k * n, 0.0);
    std::vector<double> starts(n * ny, 0.0);
    double episodes = 0.0;
    std::size_t wrong_rewards = 0;
    Xoshiro256StarStar g(seed);
    auto start = [&] {
      const Observation y = pomdp.reset(g);
      ++starts[pomdp.state() * ny + y];
      ++episodes;
    };
    start();
    for (std::size_t t = 0; t < steps; ++t) {
      const State x = pomdp.state();
      const Action u = choose[x].sample(g);
      const TimeStep<> tr = pomdp.step(u, g);
      const State next = pomdp.state();
      const auto xi = static_cast<Eigen::Index>(x), ni = static_cast<Eigen::Index>(next);
      ++cells[((x * k + u) * n + next) * ny + tr.observation];
      ++leaving[x * k + u];
      ++moves[(x * k + u) * n + next];
      paid[(x * k + u) * n + next] += tr.reward;
      if (tr.reward != raw.reward(xi, u, ni, static_cast<Eigen::Index>(tr.observation))) ++wrong_rewards;
      if (tr.terminated) start();
    }
    CHECK(wrong_rewards == 0);
    const double delta = 1e-6 / static_cast<double>(cells.size() + starts.size() + moves.size());
    double worst = 0.0;
    std::size_t impossible = 0;
    auto compare = [&](double expected, double count, double total) {
      if (expected == 0.0) {
        impossible += count > 0.0 ? 1 : 0;
        return;
      }
      if (total > 0.0)
        worst = std::max(worst, std::abs(count / total - expected) / test::bernstein_halfwidth(expected, total, delta));
    };
    const Eigen::MatrixXd& o0 = raw.o0.size() ? raw.o0 : raw.o[0];
    for (std::size_t x = 0; x < n; ++x) {
      const auto xi = static_cast<Eigen::Index>(x);
      for (std::size_t y = 0; y < ny; ++y)
        compare(raw.initial[xi] * o0(xi, static_cast<Eigen::Index>(y)), starts[x * ny + y], episodes);
      for (std::size_t u = 0; u < k; ++u)
        for (std::size_t next = 0; next < n; ++next) {
          const auto ni = static_cast<Eigen::Index>(next);
          for (std::size_t y = 0; y < ny; ++y)
            compare(raw.t[u](xi, ni) * raw.emission(u)(ni, static_cast<Eigen::Index>(y)),
                    cells[((x * k + u) * n + next) * ny + y], leaving[x * k + u]);
          const double count = moves[(x * k + u) * n + next];
          if (count == 0.0) continue;
          const double bound = raw.r[u].cols() == raw.n() ? 1e-12 : test::hoeffding_halfwidth(6.0, count, delta);
          worst =
              std::max(worst, std::abs(paid[(x * k + u) * n + next] / count - pomdp.rewards(u).coeff(xi, ni)) / bound);
        }
    }
    INFO("worst cell at " << worst << " of its bound, " << episodes << " episodes");
    CHECK(worst <= 1.0);
    CHECK(impossible == 0);
    return episodes;
  };
  SECTION("emissions per action, rewards R(x, u, x', y)") {
    check(random_model(4, 3, 3, true, true, true, false, 6), 60);
  }
  SECTION("emissions per action, rewards r(x, u, x')") {
    check(random_model(4, 3, 3, true, false, true, false, 7), 70);
  }
  SECTION("action-free emissions, rewards R(x, u, x', y), episodic") {
    CHECK(check(random_model(4, 2, 3, false, true, true, true, 8), 80) > 10'000);
  }
  SECTION("the Tiger problem") { check(tiger::model(), 90); }
}

TEST_CASE("the HMM of a state-based policy has the POMDP's values, stationary law and observations",
          "[env][finite_pomdp][analysis]") {
  // Against the POMDP's own Bellman equation, solved directly from the matrices: every HMM state
  // (x, u) and every start state (x) has the value v(x); summed over its blocks the HMM's stationary
  // distribution is that of the POMDP's chain p(x'|x) = Σ_u π(u|x) T(x'|x, u) (terminal rows
  // restart from `initial`); and the stationary law of the next observation is the POMDP's,
  // Σ_x μ(x) Σ_u π(u|x) Σ_x' T(x'|x, u) O(y|x', u) (initial_emission after a terminal state).
  constexpr double discount = 0.9;
  const auto check = [&](const Raw& raw, std::uint64_t seed) {
    const FinitePomdp pomdp = raw.pomdp();
    const auto n = raw.n(), k = static_cast<Eigen::Index>(raw.t.size());
    const Eigen::MatrixXd policy = random_stochastic(n, k, seed);
    const FiniteHmm hmm = pomdp.with_policy(policy);
    REQUIRE(hmm.num_states() == pomdp.num_hmm_states());
    const Eigen::VectorXd direct = bellman_values(raw, policy, discount), values = state_values(hmm, discount);
    const StationaryProcess process(hmm, discount);
    double worst = 0.0;
    for (Eigen::Index x = 0; x < n; ++x) {
      std::vector<State> states{pomdp.hmm_start_state(static_cast<State>(x))};
      for (Action u = 0; u < raw.t.size(); ++u) states.push_back(pomdp.hmm_state(static_cast<State>(x), u));
      for (const State s : states) {
        CHECK(pomdp.pomdp_state(s) == static_cast<State>(x));
        const auto si = static_cast<Eigen::Index>(s);
        worst = std::max({worst, std::abs(values[si] - direct[x]), std::abs(process.values()[si] - direct[x])});
      }
    }
    INFO("largest |v_hmm - v_direct| " << worst << ", |v| up to " << direct.cwiseAbs().maxCoeff());
    CHECK(worst <= 1e-12 * (1.0 + direct.cwiseAbs().maxCoeff()));

    Eigen::MatrixXd chain = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index u = 0; u < k; ++u) chain += policy.col(u).asDiagonal() * raw.t[static_cast<std::size_t>(u)];
    const Eigen::VectorXd mu = stationary_distribution(chain);
    Eigen::VectorXd summed = Eigen::VectorXd::Zero(n);
    for (Eigen::Index s = 0; s < process.stationary().size(); ++s) summed[s % n] += process.stationary()[s];
    CHECK((summed - mu).cwiseAbs().maxCoeff() < 1e-12);

    Eigen::VectorXd observed = Eigen::VectorXd::Zero(raw.ny());
    const Eigen::MatrixXd& o0 = raw.o0.size() ? raw.o0 : raw.o[0];
    for (Eigen::Index x = 0; x < n; ++x) {
      if (!raw.terminal.empty() && raw.terminal[static_cast<std::size_t>(x)]) {
        observed += mu[x] * (raw.initial.transpose() * o0).transpose();
        continue;
      }
      for (std::size_t u = 0; u < raw.t.size(); ++u)
        observed += mu[x] * policy(x, static_cast<Eigen::Index>(u)) * (raw.t[u].row(x) * raw.emission(u)).transpose();
    }
    // One step of the HMM's chain from its stationary law, then its emission.
    const Eigen::VectorXd hmm_observed =
        (Eigen::RowVectorXd(process.stationary().transpose() * Eigen::MatrixXd(process.transition())) *
         process.emission())
            .transpose();
    CHECK((hmm_observed - observed).cwiseAbs().maxCoeff() < 1e-12);
  };
  SECTION("emissions per action") { check(random_model(5, 3, 3, true, false, true, false, 11), 111); }
  SECTION("emissions per action, rewards R(x, u, x', y), episodic") {
    check(random_model(5, 3, 3, true, true, true, true, 12), 112);
  }
  SECTION("action-free emissions, an initial emission of its own, rewards R(x, u, x', y)") {
    check(random_model(5, 2, 3, false, true, true, false, 13), 113);
  }
  SECTION("action-free emissions, rewards R(x, u, x', y), episodic: |X| states") {
    const Raw raw = random_model(5, 2, 3, false, true, false, true, 14);
    CHECK(raw.pomdp().with_action_probabilities(Eigen::Vector2d(0.3, 0.7)).num_states() == 5);
    check(raw, 114);
  }
  SECTION("the Tiger problem") { check(tiger::model(), 115); }
}

TEST_CASE("the Tiger problem's values under an open-loop policy, by hand", "[env][finite_pomdp][tiger]") {
  // Listen with probability 0.9, open either door with probability 0.05: by symmetry both states
  // have the same value, and a step pays 0.9 (-1) + 0.05 (-100) + 0.05 (+10) = -5.4 in either, so
  // v = -5.4 / (1 - γ) = -108 for γ = 0.95, in every state of the HMM.
  const FinitePomdp pomdp = tiger::model().pomdp();
  const FiniteHmm hmm = pomdp.with_action_probabilities(Eigen::Vector3d(0.9, 0.05, 0.05));
  CHECK(hmm.num_states() == 8);  // (x, u) for 3 actions, then 2 start states
  const Eigen::VectorXd v = state_values(hmm, 0.95);
  for (Eigen::Index s = 0; s < 8; ++s) CHECK(v[s] == Approx(-108.0).epsilon(1e-12));
  // The start states emit `start`, and nothing else does.
  CHECK(hmm.emission().col(static_cast<Eigen::Index>(tiger::start)).sum() == 2.0);
  CHECK(hmm.emission()(static_cast<Eigen::Index>(pomdp.hmm_start_state(1)), static_cast<Eigen::Index>(tiger::start)) ==
        1.0);
  CHECK(hmm.emission()(static_cast<Eigen::Index>(pomdp.hmm_state(0, tiger::listen)),
                       static_cast<Eigen::Index>(tiger::hear_left)) == 0.85);
}

TEST_CASE("under a policy the simulator walks the chain of the policy's HMM", "[env][finite_pomdp]") {
  // test::agreement: every cell of the HMM's P, O, initial distribution and rewards against the
  // frequencies of the POMDP played by the policy (state = the HMM state it is in), within
  // Bernstein / Hoeffding bounds with a union bound (failure probability below 1e-6).
  const auto check = [](const Raw& raw, double reward_range, std::uint64_t seed) {
    const FinitePomdp pomdp = raw.pomdp();
    const Eigen::MatrixXd policy = random_stochastic(raw.n(), static_cast<Eigen::Index>(raw.t.size()), seed);
    const auto result =
        test::agreement(UnderPolicy(pomdp, policy), pomdp.with_policy(policy), seed, 600'000, reward_range);
    INFO("worst cell " << result.worst_cell << " at " << result.worst << " of its bound, " << result.episodes
                       << " episodes");
    CHECK(result.ok());
  };
  SECTION("emissions per action, episodic") { check(random_model(4, 3, 3, true, false, true, true, 21), 0.0, 121); }
  SECTION("emissions per action, rewards R(x, u, x', y)") {
    check(random_model(4, 2, 3, true, true, true, false, 22), 6.0, 122);
  }
  SECTION("action-free emissions, an initial emission of its own, episodic") {
    // The HMM's reward of (x, x') is the mean over the actions that lead there: random, in [-3, 3].
    check(random_model(4, 2, 3, false, false, true, true, 23), 6.0, 123);
  }
}

TEST_CASE("the exact value error of a memory on action-dependent emissions equals Monte Carlo",
          "[env][finite_pomdp][monte_carlo]") {
  // The exact VE of the HMM (analysis/) against one simulated trajectory of the POMDP under the
  // policy, within 4 batch-means standard errors (50 batches of 4000 steps, far beyond the
  // correlation time of these chains and memories); the standard error must be below 5% of the
  // value error, so the check has teeth.
  const MonteCarloRun run{.steps = 200'000, .burn_in = 5000, .batches = 50};
  SECTION("Tiger, a trace of the observations") {
    // A policy of the state (the sides are treated differently, so the values differ).
    const Eigen::MatrixXd policy{{0.7, 0.1, 0.2}, {0.9, 0.05, 0.05}};
    const FinitePomdp pomdp = tiger::model().pomdp();
    const FiniteHmm hmm = pomdp.with_policy(policy);
    const StationaryProcess process(hmm, 0.9);
    for (const double lambda : {0.0, 0.5, 0.9}) {
      const TraceMoments moments = trace_moments(process, lambda);
      const Eigen::VectorXd w = optimal_linear_weights(moments);
      const double exact = linear_value_error(moments, w);
      UnderPolicy env(pomdp, policy);
      MemoryTrace<> trace(lambda, env.num_observations());
      Xoshiro256StarStar gen(200 + static_cast<std::uint64_t>(lambda * 10));
      const MonteCarloEstimate mc = monte_carlo_value_error(
          env, trace, [&](const Eigen::VectorXd& z) { return w.dot(z); }, process, gen, run);
      INFO("lambda = " << lambda << ": exact " << exact << ", MC " << mc.mean << " +- " << mc.standard_error);
      CHECK(mc.covers(exact, 4.0));
      CHECK(mc.standard_error < 0.05 * exact);
    }
  }
  SECTION("an episodic model with emissions per action and rewards R(x, u, x', y), a window") {
    const Raw raw = random_model(5, 3, 3, true, true, true, true, 31);
    const FinitePomdp pomdp = raw.pomdp();
    const Eigen::MatrixXd policy = random_stochastic(5, 3, 131);
    const StationaryProcess process(pomdp.with_policy(policy), 0.9);
    for (std::size_t m = 1; m <= 2; ++m) {
      const WindowMoments moments = window_moments(process, m);
      const Eigen::VectorXd table = optimal_window_table(moments);
      const double exact = window_value_error(moments, table);
      UnderPolicy env(pomdp, policy);
      Window<> window(m, env.num_observations());
      Xoshiro256StarStar gen(300 + m);
      const MonteCarloEstimate mc = monte_carlo_value_error(
          env, window, [&](const OneHot& phi) { return table[static_cast<Eigen::Index>(phi.index)]; }, process, gen,
          run);
      INFO("m = " << m << ": exact " << exact << ", MC " << mc.mean << " +- " << mc.standard_error);
      CHECK(mc.covers(exact, 4.0));
      CHECK(mc.standard_error < 0.05 * exact);
    }
  }
}

TEST_CASE("the belief update conditions on the action: the Tiger problem by hand", "[env][finite_pomdp][belief]") {
  const FinitePomdp pomdp = tiger::model().pomdp();
  Eigen::VectorXd b = pomdp.initial_belief(tiger::start);
  CHECK(b == Eigen::Vector2d(0.5, 0.5));
  b = pomdp.update_belief(b, tiger::listen, tiger::hear_left);
  CHECK(b[0] == Approx(0.85).epsilon(1e-15));
  CHECK(b[1] == Approx(0.15).epsilon(1e-15));
  b = pomdp.update_belief(b, tiger::listen, tiger::hear_left);
  const double both = 0.85 * 0.85 / (0.85 * 0.85 + 0.15 * 0.15);  // 0.96979...
  CHECK(b[0] == Approx(both).epsilon(1e-15));
  CHECK(b[1] == Approx(1.0 - both).epsilon(1e-14));
  CHECK(b[0] == Approx(0.9697986577).epsilon(1e-10));
  b = pomdp.update_belief(b, tiger::listen, tiger::hear_right);  // the two cancel
  CHECK(b[0] == Approx(0.85).epsilon(1e-14));
  const Eigen::VectorXd sure = pomdp.update_belief(Eigen::Vector2d(1.0, 0.0), tiger::listen, tiger::hear_right);
  CHECK(sure == Eigen::Vector2d(1.0, 0.0));  // listening does not move the tiger
  // Opening a door resets the tiger, and what is heard then says nothing.
  CHECK(pomdp.update_belief(b, tiger::open_left, tiger::hear_right) == Eigen::Vector2d(0.5, 0.5));
  CHECK(pomdp.update_belief(b, tiger::open_right, tiger::hear_left) == Eigen::Vector2d(0.5, 0.5));

  const Eigen::VectorXd before = b;
  auto error = [&](const Eigen::VectorXd& belief, Action u, Observation y) {
    return error_of([&] { (void)pomdp.update_belief(belief, u, y); });
  };
  CHECK_THAT(error(b, tiger::listen, tiger::start),
             Contains("FinitePomdp::update_belief: observation 2 has probability 0 after action 0 from this belief"));
  CHECK_THAT(error(Eigen::Vector3d(0.2, 0.3, 0.5), 0, 0),
             Contains("FinitePomdp::update_belief: belief (|X| x 1) must be 2 x 1, got 3 x 1"));
  CHECK_THAT(error(Eigen::Vector2d(0.6, 0.6), 0, 0), Contains("FinitePomdp::update_belief: belief sums to 1.2"));
  CHECK_THAT(error(Eigen::Vector2d(1.5, -0.5), 0, 0), Contains("belief[1] must not be negative, got -0.5"));
  CHECK_THAT(error(Eigen::Vector2d(std::nan(""), 0.5), 0, 0),
             Contains("belief[0] must be a finite probability, got nan"));
  CHECK_THAT(error(b, 3, 0), Contains("FinitePomdp::update_belief: action must be in [0, 3), got 3"));
  CHECK_THAT(error(b, 0, 3), Contains("FinitePomdp::update_belief: observation must be in [0, 3), got 3"));
  CHECK(b == before);  // a refused update changes nothing
  CHECK_THAT(error_of([&] { (void)pomdp.initial_belief(tiger::hear_left); }),
             Contains("FinitePomdp::initial_belief: observation 0 has probability 0 at the start"));
  CHECK_THAT(error_of([&] { (void)pomdp.initial_belief(3); }),
             Contains("FinitePomdp::initial_belief: observation must be in [0, 3), got 3"));
}

TEST_CASE("the belief update uses the emission of the action taken", "[env][finite_pomdp][belief]") {
  // b'(x') ∝ O(y|x', u) Σ_x T(x'|x, u) b(x), from the test's own copy of the matrices.
  const Raw raw = random_model(5, 3, 4, true, false, true, false, 41);
  const FinitePomdp pomdp = raw.pomdp();
  Eigen::VectorXd b = pomdp.initial_belief(1);
  Eigen::VectorXd expected = raw.initial.cwiseProduct(raw.o0.col(1));
  CHECK((b - expected / expected.sum()).cwiseAbs().maxCoeff() < 1e-15);
  Xoshiro256StarStar g(5);
  for (int t = 0; t < 20; ++t) {
    const auto u = static_cast<Action>(uniform_index(g, 3));
    expected = (raw.t[u].transpose() * b).cwiseProduct(raw.o[u].col(t % 4));
    if (expected.sum() == 0.0) continue;
    b = pomdp.update_belief(b, u, static_cast<Observation>(t % 4));
    CHECK((b - expected / expected.sum()).cwiseAbs().maxCoeff() < 1e-14);
  }
}

}  // namespace finite_pomdp_test
