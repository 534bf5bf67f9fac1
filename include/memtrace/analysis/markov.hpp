#pragma once
// The stationary process of a finite model (paper §3): the stationary distribution μ of a
// row-stochastic transition matrix, the true state values v = (I - γP)^{-1} r̄ (by a sparse LU
// solve, not by iteration), and StationaryProcess, which holds both for the exact value errors of
// trace, window and concat estimators. Episodic models become one chain by restarting from
// `initial` after a terminal state. See docs/analysis.md.

#include <Eigen/Core>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {
namespace detail {

/// The storage SparseLU factorises.
using ColumnSparse = Eigen::SparseMatrix<double>;
using SparseSolver = Eigen::SparseLU<ColumnSparse, Eigen::COLAMDOrdering<int>>;

inline void check_discount(const char* who, double discount) {
  if (!(discount >= 0.0 && discount < 1.0)) invalid(who, ": discount must be in [0, 1), got ", discount);
}

// The solver code below is templated (on the solver and matrix types) so that only a translation
// unit that solves something instantiates Eigen's sparse LU and COLAMD (docs/design.md, compile time).

/// Factorises `a` with `solver`; false if `a` is singular. The one place a factorisation is spelled out.
template <class Solver, class Matrix>
[[nodiscard]] bool try_factorize(Solver& solver, const Matrix& a) {
  solver.analyzePattern(a);
  solver.factorize(a);
  return solver.info() == Eigen::Success;
}

/// Factorises `a`, or throws naming `what` (a singular matrix has no unique solution).
template <class Solver, class Matrix>
void factorize(Solver& solver, const Matrix& a, const char* who, const char* what) {
  if (!try_factorize(solver, a)) invalid(who, ": ", what, " is singular: ", solver.lastErrorMessage());
}

/// I - scale * p, in the storage SparseLU wants (explicit zeros kept: the pattern is that of I + P
/// for every scale).
template <class Sparse>
[[nodiscard]] ColumnSparse identity_minus(const Sparse& p, double scale) {
  ColumnSparse eye(p.rows(), p.cols());
  eye.setIdentity();
  return ColumnSparse(eye - scale * ColumnSparse(p));
}

using Ordering = Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int>;

/// The fill-reducing column ordering (COLAMD) of I - sP, the same for every s: on a model like the
/// random walk it costs four times the factorisation, so it is computed once per model.
template <class Sparse>
[[nodiscard]] Ordering shifted_ordering(const Sparse& p) {
  ColumnSparse a = identity_minus(p, 1.0);
  a.makeCompressed();
  Ordering ordering;
  Eigen::COLAMDOrdering<int>()(a, ordering);
  return ordering;
}

/// Solves (I - sP) x = b and (I - sP)ᵀ x = b with a sparse LU of (I - sP) Q⁻¹, Q the precomputed
/// ordering (column i of I - sP becomes column Q(i)). A template, though only the default is ever
/// used, so that the LU is compiled only where a solver is: as a class, markov.hpp alone took
/// 2.8 times <Eigen/Dense>'s compile time more (docs/design.md).
template <class Lu = Eigen::SparseLU<ColumnSparse, Eigen::NaturalOrdering<int>>>
class ShiftedSolver {
 public:
  ShiftedSolver(const SparseMatrix& p, const Ordering& ordering, double s, const char* who, const char* what)
      : ordering_(&ordering) {
    ColumnSparse a = identity_minus(p, s) * ordering.inverse();
    a.makeCompressed();
    factorize(lu_, a, who, what);
  }
  /// x with (I - sP) x = b: (I - sP) Q⁻¹ (Q x) = b.
  [[nodiscard]] Eigen::MatrixXd solve(const Eigen::MatrixXd& b) const {
    return ordering_->inverse() * Eigen::MatrixXd(lu_.solve(b));
  }
  /// x with (I - sP)ᵀ x = b: ((I - sP) Q⁻¹)ᵀ x = Q b.
  [[nodiscard]] Eigen::MatrixXd solve_transposed(const Eigen::MatrixXd& b) {
    return lu_.transpose().solve(Eigen::MatrixXd(*ordering_ * b));
  }

 private:
  const Ordering* ordering_;
  Lu lu_;
};

/// Checks a solution of the stationary equations: finite, non-negative up to rounding, μᵀP = μᵀ.
/// A chain with several closed classes makes the system singular, and what the LU returns then
/// fails one of these.
template <class Sparse>
[[nodiscard]] Eigen::VectorXd checked_stationary(Eigen::VectorXd mu, const Sparse& p, const char* who) {
  const char* why = ": the chain has no unique stationary distribution (more than one closed class)";
  if (!mu.allFinite()) invalid(who, why);
  const double scale = mu.cwiseAbs().sum();
  if (mu.minCoeff() < -1e-9 * scale) invalid(who, why, "; the solve gave an entry ", mu.minCoeff());
  const Eigen::VectorXd residual = ColumnSparse(p).transpose() * mu - mu;
  if (residual.cwiseAbs().sum() > 1e-8 * scale)
    invalid(who, why, "; the residual |μᵀP - μᵀ|_1 is ", residual.cwiseAbs().sum());
  mu = mu.cwiseMax(0.0);
  return mu / mu.sum();
}

/// The values v = r̄ + γ B v of a chain whose bootstrapped transitions are B (rows of terminal
/// states and columns into them are zero: nothing is bootstrapped past a terminal state): the one
/// value solve of the library.
template <class Sparse>
[[nodiscard]] Eigen::VectorXd bootstrapped_values(const Sparse& bootstrap, const Eigen::VectorXd& rewards,
                                                  double discount, const char* who) {
  SparseSolver solver;
  factorize(solver, identity_minus(bootstrap, discount), who, "I - discount P");
  return solver.solve(rewards);
}

inline void check_square_stochastic(const char* who, const SparseMatrix& p) {
  if (p.rows() == 0) invalid(who, ": transition must have at least one state, got 0 x ", p.cols());
  check_shape(who, "transition (|X| x |X|)", p.rows(), p.cols(), p.rows(), p.rows());
  check_row_stochastic(who, "transition", p, default_row_sum_tolerance);
}

template <class M>
[[nodiscard]] SparseMatrix to_sparse(const M& m) {
  if constexpr (std::is_base_of_v<Eigen::SparseMatrixBase<M>, M>) {
    return SparseMatrix(m);
  } else {
    return SparseMatrix(Eigen::MatrixXd(m).sparseView(1.0, 0.0));
  }
}

template <class M>
[[nodiscard]] Eigen::MatrixXd to_dense(const M& m) {
  if constexpr (std::is_base_of_v<Eigen::SparseMatrixBase<M>, M>) {
    return Eigen::MatrixXd(m.toDense());
  } else {
    return Eigen::MatrixXd(m);
  }
}

/// stationary_distribution of a row-major sparse matrix (Sparse = SparseMatrix; a template so that
/// only a caller instantiates the LU).
template <class Sparse>
[[nodiscard]] Eigen::VectorXd stationary_of(const Sparse& transition) {
  constexpr const char* who = "stationary_distribution";
  check_square_stochastic(who, transition);
  const Eigen::Index n = transition.rows();
  if (n == 1) return Eigen::VectorXd::Ones(1);
  Eigen::VectorXd inflow = Eigen::VectorXd::Zero(n);
  for (Eigen::Index x = 0; x < n; ++x)
    for (typename Sparse::InnerIterator it(transition, x); it; ++it) inflow[it.col()] += it.value();
  Eigen::Index s = 0;
  inflow.maxCoeff(&s);
  {
    // Unknowns: μ(x) for x != s, at index x - (x > s).
    const auto at = [s](Eigen::Index x) { return x - (x > s ? 1 : 0); };
    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(static_cast<std::size_t>(transition.nonZeros() + n));
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n - 1);
    for (Eigen::Index x = 0; x < n; ++x) {
      if (x != s) entries.emplace_back(at(x), at(x), 1.0);
      for (typename Sparse::InnerIterator it(transition, x); it; ++it) {
        if (it.col() == s) continue;
        if (x == s)
          rhs[at(it.col())] += it.value();
        else
          entries.emplace_back(at(it.col()), at(x), -it.value());
      }
    }
    ColumnSparse a(n - 1, n - 1);
    a.setFromTriplets(entries.begin(), entries.end());
    SparseSolver solver;
    if (try_factorize(solver, a)) {
      const Eigen::VectorXd u = solver.solve(rhs);
      Eigen::VectorXd mu(n);
      for (Eigen::Index x = 0; x < n; ++x) mu[x] = x == s ? 1.0 : u[at(x)];
      if (mu.allFinite() && mu.minCoeff() >= -1e-9 * mu.cwiseAbs().sum())
        return checked_stationary(mu / mu.sum(), transition, who);
    }
  }
  // Rows of I - Pᵀ sum to zero over the rows, so dropping the last loses nothing.
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(transition.nonZeros() + 2 * n));
  for (Eigen::Index x = 0; x < n; ++x)
    for (typename Sparse::InnerIterator it(transition, x); it; ++it)
      if (it.col() != n - 1) entries.emplace_back(it.col(), x, -it.value());
  for (Eigen::Index x = 0; x < n; ++x) {
    if (x != n - 1) entries.emplace_back(x, x, 1.0);
    entries.emplace_back(n - 1, x, 1.0);
  }
  ColumnSparse a(n, n);
  a.setFromTriplets(entries.begin(), entries.end());
  SparseSolver solver;
  if (!try_factorize(solver, a))
    invalid(who, ": the chain has no unique stationary distribution (more than one closed class)");
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n);
  rhs[n - 1] = 1.0;
  return checked_stationary(solver.solve(rhs), transition, who);
}

}  // namespace detail

/// The stationary distribution μ of a row-stochastic transition matrix (transition(x, x') =
/// p(x' | x)): μᵀP = μᵀ, Σμ = 1, unique when the chain has one closed class. Computed by one sparse
/// LU solve: with μ(s) = 1 for a recurrent state s, the others solve (I - Qᵀ) u = P(s, ·)ᵀ, Q = P
/// without s (non-singular exactly when every state reaches s); s is the state with the largest
/// inflow, and if that fails, (I - Pᵀ) with one equation replaced by Σμ = 1 is solved instead
/// (non-singular exactly when μ is unique, but its dense row makes the LU slow for large |X|).
/// `transition` is any Eigen matrix, dense or sparse. Throws std::invalid_argument for a matrix that
/// is not square and row-stochastic, or a chain without a unique stationary distribution.
template <class Derived>
[[nodiscard]] Eigen::VectorXd stationary_distribution(const Eigen::EigenBase<Derived>& transition) {
  if constexpr (std::is_same_v<Derived, SparseMatrix>) {
    return detail::stationary_of(transition.derived());
  } else {
    detail::check_shape("stationary_distribution", "transition (|X| x |X|)", transition.rows(), transition.cols(),
                        transition.rows(), transition.rows());
    return detail::stationary_of(detail::to_sparse(transition.derived()));
  }
}

/// The stationary process of a finite model, everything the exact analysis needs, computed once:
/// the chain (episodic models restart from `initial` after a terminal state), its stationary
/// distribution, the true values with discount γ (no bootstrapping past a terminal state) and the
/// weights of the value error (μ on the non-terminal states, renormalised). Histories run across
/// episode boundaries: the memory is not reset (see docs/analysis.md).
class StationaryProcess {
 public:
  /// Throws std::invalid_argument unless 0 <= discount < 1 and the chain has a unique stationary
  /// distribution.
  template <class E>
  requires FiniteModel<E> StationaryProcess(const E& env, double discount) : discount_(discount) {
    constexpr const char* who = "StationaryProcess";
    detail::check_discount(who, discount);
    const auto& model = env.model();
    emission_ = detail::to_dense(model.emission());
    SparseMatrix p = detail::to_sparse(model.transition());
    rewards_ = model.expected_rewards();
    initial_ = model.initial();
    const Eigen::Index n = p.rows();
    terminal_.assign(static_cast<std::size_t>(n), false);
    if constexpr (requires { model.terminal(); }) {
      const auto& flags = model.terminal();
      for (std::size_t x = 0; x < flags.size() && x < terminal_.size(); ++x) terminal_[x] = flags[x];
    }
    p.makeCompressed();
    // The restart chain: a terminal state's row is replaced by `initial`.
    std::vector<Eigen::Triplet<double>> chain, bootstrap;
    chain.reserve(static_cast<std::size_t>(p.nonZeros()));
    for (Eigen::Index x = 0; x < n; ++x) {
      if (terminal_[static_cast<std::size_t>(x)]) {
        episodic_ = true;
        rewards_[x] = 0.0;  // nothing is paid after termination
        for (Eigen::Index y = 0; y < n; ++y)
          if (initial_[y] > 0.0) chain.emplace_back(x, y, initial_[y]);
        continue;
      }
      for (SparseMatrix::InnerIterator it(p, x); it; ++it) {
        chain.emplace_back(x, it.col(), it.value());
        if (!terminal_[static_cast<std::size_t>(it.col())]) bootstrap.emplace_back(x, it.col(), it.value());
      }
    }
    transition_.resize(n, n);
    transition_.setFromTriplets(chain.begin(), chain.end());
    bootstrap_.resize(n, n);
    bootstrap_.setFromTriplets(bootstrap.begin(), bootstrap.end());
    stationary_ = stationary_distribution(transition_);
    continuation_ = static_cast<const SparseMatrix&>(bootstrap_) * Eigen::VectorXd::Ones(n);
    weights_ = stationary_;
    for (Eigen::Index x = 0; x < n; ++x)
      if (terminal_[static_cast<std::size_t>(x)]) weights_[x] = 0.0;
    weights_ /= weights_.sum();
    relative_weights_ = Eigen::VectorXd::Zero(n);
    for (Eigen::Index x = 0; x < n; ++x)
      if (stationary_[x] > 0.0) relative_weights_[x] = weights_[x] / stationary_[x];
    ordering_ = detail::shifted_ordering(transition_);
    values_ = detail::bootstrapped_values(bootstrap_, rewards_, discount, who);
  }

  /// transition(x, x') = p(x' | x) of the chain (row-stochastic; terminal rows restart).
  [[nodiscard]] const SparseMatrix& transition() const noexcept { return transition_; }
  /// The chain without the transitions into terminal states (they are not bootstrapped from).
  [[nodiscard]] const SparseMatrix& bootstrap_transition() const noexcept { return bootstrap_; }
  /// emission(x, y) = p(y | x), row-stochastic.
  [[nodiscard]] const Eigen::MatrixXd& emission() const noexcept { return emission_; }
  /// μ: the stationary distribution of the chain.
  [[nodiscard]] const Eigen::VectorXd& stationary() const noexcept { return stationary_; }
  /// The weights of the value error over x_t: μ on the non-terminal states, renormalised (= μ for
  /// a continuing model).
  [[nodiscard]] const Eigen::VectorXd& weights() const noexcept { return weights_; }
  /// ω = d / μ: the weight of x_t relative to μ (1 for a continuing model, 0 at terminal states and
  /// where μ = 0). The moments of every memory are μ-weighted sums reweighted by it.
  [[nodiscard]] const Eigen::VectorXd& relative_weights() const noexcept { return relative_weights_; }
  /// v(x) = r̄(x) + γ Σ_{x' non-terminal} p(x' | x) v(x').
  [[nodiscard]] const Eigen::VectorXd& values() const noexcept { return values_; }
  /// r̄(x) = E[r_{t+1} | x_t = x] (0 in a terminal state).
  [[nodiscard]] const Eigen::VectorXd& rewards() const noexcept { return rewards_; }
  /// Σ_{x' non-terminal} p(x' | x): the probability of bootstrapping from the next step.
  [[nodiscard]] const Eigen::VectorXd& continuation() const noexcept { return continuation_; }
  [[nodiscard]] const std::vector<bool>& terminal() const noexcept { return terminal_; }
  [[nodiscard]] double discount() const noexcept { return discount_; }
  [[nodiscard]] bool episodic() const noexcept { return episodic_; }
  [[nodiscard]] std::size_t num_states() const noexcept { return static_cast<std::size_t>(transition_.rows()); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return static_cast<std::size_t>(emission_.cols()); }
  /// The fill-reducing ordering of I - sP, shared by the solves of the trace moments.
  [[nodiscard]] const detail::Ordering& ordering() const noexcept { return ordering_; }

 private:
  double discount_;
  bool episodic_ = false;
  SparseMatrix transition_, bootstrap_;
  Eigen::MatrixXd emission_;
  Eigen::VectorXd initial_, rewards_, stationary_, weights_, relative_weights_, values_, continuation_;
  std::vector<bool> terminal_;
  detail::Ordering ordering_;
};

/// The true state values of a finite model with discount γ: the solution of the Bellman equation
/// v = r̄ + γ P v (eq. of §3; no bootstrapping past a terminal state), by a sparse LU solve.
template <class E>
requires FiniteModel<E>
[[nodiscard]] Eigen::VectorXd state_values(const E& env, double discount) {
  detail::check_discount("state_values", discount);
  const auto& model = env.model();
  SparseMatrix p = detail::to_sparse(model.transition());
  Eigen::VectorXd r = model.expected_rewards();
  if constexpr (requires { model.terminal(); }) {
    const auto& terminal = model.terminal();
    for (Eigen::Index x = 0; x < p.rows(); ++x) {
      if (!terminal[static_cast<std::size_t>(x)]) continue;
      r[x] = 0.0;
      for (SparseMatrix::InnerIterator it(p, x); it; ++it) it.valueRef() = 0.0;
    }
    for (Eigen::Index x = 0; x < p.rows(); ++x)
      for (SparseMatrix::InnerIterator it(p, x); it; ++it)
        if (terminal[static_cast<std::size_t>(it.col())]) it.valueRef() = 0.0;
  }
  return detail::bootstrapped_values(p, r, discount, "state_values");
}

}  // namespace memtrace
