#pragma once
// The policy distributions of PPO: Categorical (index actions from logits) and DiagonalGaussian
// (continuous actions from means and log standard deviations), each sampling with memtrace's own
// random numbers and giving, for a batch of network outputs, the log-probabilities of the actions
// taken, the entropies and their gradients with respect to the outputs. Ppo, PpoActing, PpoPolicy
// and ppo_loss call a network's distribution (policy_distribution_t) and never branch on it: a
// new distribution is a new type with these members (PolicyDistribution), in a header of its own.
// See docs/control.md ("Policy distributions").

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// How a policy picks an action from its network's output: draws from the distribution (sample:
/// the policy PPO learns, with the environment's generator), or takes its mode (greedy: the most
/// probable index, or the mean; drawing nothing).
enum class ActionSelection { sample, greedy };

namespace detail {
/// The first largest logit and its value.
struct LargestLogit {
  Eigen::Index index = 0;  // the first k of largest logit
  double value = 0.0;
};
// The checks both action choices make: at least one logit, every one finite (a diverged network
// throws std::domain_error naming `who`).
template <class Derived>
[[nodiscard]] LargestLogit largest_logit(const char* who, const Eigen::MatrixBase<Derived>& logits) {
  const Eigen::Index n = logits.size();
  if (n == 0) invalid(who, ": logits must hold at least one entry, got none");
  LargestLogit best{0, -std::numeric_limits<double>::infinity()};
  for (Eigen::Index k = 0; k < n; ++k) {
    const auto l = static_cast<double>(logits.coeff(k));
    if (!std::isfinite(l)) throw std::domain_error(message(who, ": logits[", k, "] must be finite, got ", l));
    if (l > best.value) best = {k, l};
  }
  return best;
}
}  // namespace detail

/// An action drawn from a categorical policy and its log-probability.
struct CategoricalSample {
  Action action = 0;
  double log_prob = 0.0;
};

/// Draws an action from Categorical(softmax(logits)) with exactly ONE uniform_real(gen), by the
/// inverse CDF in double: with m = max_k ℓ_k, w_k = exp(ℓ_k − m) and W = Σ_k w_k, u = uniform_real(gen)
/// picks the first k with u·W < w_0 + … + w_k (the last k with w_k > 0 if rounding leaves none).
/// log_prob = (ℓ_a − m) − log W, the log-softmax of the chosen logit, in double. The logits
/// (a column vector of float or double, at least one entry) must be finite: a diverged network
/// throws std::domain_error.
template <class Derived, std::uniform_random_bit_generator G>
[[nodiscard]] CategoricalSample sample_categorical(const Eigen::MatrixBase<Derived>& logits, G& gen) {
  const Eigen::Index n = logits.size();
  const double max = detail::largest_logit("sample_categorical", logits).value;
  // At most a few actions: the weights live on the stack when |U| <= 16.
  constexpr Eigen::Index on_stack = 16;
  double stack_weights[on_stack];
  std::vector<double> heap_weights;
  double* w = stack_weights;
  if (n > on_stack) {
    heap_weights.resize(static_cast<std::size_t>(n));
    w = heap_weights.data();
  }
  double total = 0.0;
  for (Eigen::Index k = 0; k < n; ++k) {
    w[k] = std::exp(static_cast<double>(logits.coeff(k)) - max);
    total += w[k];
  }
  const double target = uniform_real(gen) * total;
  Eigen::Index chosen = -1, last_positive = 0;
  double cumulative = 0.0;
  for (Eigen::Index k = 0; k < n; ++k) {
    cumulative += w[k];
    if (w[k] > 0.0) last_positive = k;
    if (target < cumulative) {
      chosen = k;
      break;
    }
  }
  if (chosen < 0) chosen = last_positive;
  return {static_cast<Action>(chosen), (static_cast<double>(logits.coeff(chosen)) - max) - std::log(total)};
}

/// The greedy action of a categorical policy: the first k of largest logit (argmax of softmax(ℓ)).
/// Draws nothing. The logits (at least one entry) must be finite: a diverged network throws
/// std::domain_error, as in sample_categorical.
template <class Derived>
[[nodiscard]] Action greedy_action(const Eigen::MatrixBase<Derived>& logits) {
  return static_cast<Action>(detail::largest_logit("greedy_action", logits).index);
}

namespace detail {
/// ½ log 2π.
inline constexpr double half_log_two_pi = 0.918938533204672741780329736406;

/// Refuses a Gaussian whose mean and log standard deviation do not have one size, or that are not
/// finite (a diverged network: std::domain_error naming `who`).
template <class M, class S>
void check_gaussian(const char* who, const Eigen::MatrixBase<M>& mean, const Eigen::MatrixBase<S>& log_std) {
  if (mean.size() == 0) invalid(who, ": mean must hold at least one entry, got none");
  if (log_std.size() != mean.size())
    invalid(who, ": log_std has ", log_std.size(), " entries, expected the mean's ", mean.size());
  for (Eigen::Index k = 0; k < mean.size(); ++k) {
    const auto m = static_cast<double>(mean.coeff(k)), s = static_cast<double>(log_std.coeff(k));
    if (!std::isfinite(m)) throw std::domain_error(message(who, ": mean[", k, "] must be finite, got ", m));
    if (!std::isfinite(s)) throw std::domain_error(message(who, ": log_std[", k, "] must be finite, got ", s));
  }
}

/// Refuses a continuous action type A that cannot hold actions of dimension k (a fixed size other
/// than k, or a fixed maximum below it).
template <class A>
void check_action_type(const char* who, std::size_t k) {
  const auto d = static_cast<Eigen::Index>(k);
  if (A::SizeAtCompileTime != Eigen::Dynamic && A::SizeAtCompileTime != d)
    invalid(who, ": actions of dimension ", k, " do not fit the action type, of dimension ", A::SizeAtCompileTime);
  if (A::MaxSizeAtCompileTime != Eigen::Dynamic && A::MaxSizeAtCompileTime < d)
    invalid(who, ": actions of dimension ", k, " do not fit the action type, of at most ", A::MaxSizeAtCompileTime,
            " entries");
}
/// a_k = μ_k + σ_k ε_k in double, ε_k = standard_normal(gen) for k = 0, 1, … in order, rounded to
/// out's scalar (out: a vector or a column of the mean's size; nothing checked).
template <class M, class S, class Out, std::uniform_random_bit_generator G>
void draw_diagonal_gaussian(const Eigen::MatrixBase<M>& mean, const Eigen::MatrixBase<S>& log_std, G& gen, Out&& out) {
  using T = typename std::remove_cvref_t<Out>::Scalar;
  for (Eigen::Index k = 0; k < mean.size(); ++k)
    out.coeffRef(k) = static_cast<T>(static_cast<double>(mean.coeff(k)) +
                                     std::exp(static_cast<double>(log_std.coeff(k))) * standard_normal(gen));
}
}  // namespace detail

/// log N(a; μ, diag(σ²)) with σ = exp(log_std), in double:
/// Σ_k −½ ((a_k − μ_k)/σ_k)² − log σ_k − ½ log 2π. Throws as sample_diagonal_gaussian.
template <class A, class M, class S>
[[nodiscard]] double diagonal_gaussian_log_prob(const Eigen::MatrixBase<A>& action, const Eigen::MatrixBase<M>& mean,
                                                const Eigen::MatrixBase<S>& log_std) {
  detail::check_gaussian("diagonal_gaussian_log_prob", mean, log_std);
  if (action.size() != mean.size())
    detail::invalid("diagonal_gaussian_log_prob: action has ", action.size(), " entries, expected the mean's ",
                    mean.size());
  double sum = 0.0;
  for (Eigen::Index k = 0; k < mean.size(); ++k) {
    const double s = static_cast<double>(log_std.coeff(k));
    const double z = (static_cast<double>(action.coeff(k)) - static_cast<double>(mean.coeff(k))) * std::exp(-s);
    sum += -0.5 * z * z - s - detail::half_log_two_pi;
  }
  return sum;
}

/// The entropy of N(μ, diag(σ²)): Σ_k log σ_k + ½ (1 + log 2π), in double (independent of μ).
template <class S>
[[nodiscard]] double diagonal_gaussian_entropy(const Eigen::MatrixBase<S>& log_std) {
  double sum = 0.0;
  for (Eigen::Index k = 0; k < log_std.size(); ++k)
    sum += static_cast<double>(log_std.coeff(k)) + 0.5 + detail::half_log_two_pi;
  return sum;
}

/// Draws an action from N(μ, diag(σ²)), σ = exp(log_std), into `action` (resized to the mean's
/// size; of any scalar): a_k = μ_k + σ_k ε_k computed in double with ε_k = standard_normal(gen),
/// k = 0, 1, … in order, then rounded to the action's scalar. Returns the log-density of the
/// rounded action (diagonal_gaussian_log_prob), the one a learner recomputes. The mean and the log
/// standard deviation must be finite and of one size: a diverged network throws std::domain_error;
/// an action type that cannot hold the mean's size throws std::invalid_argument (nothing drawn).
template <class M, class S, class Out, std::uniform_random_bit_generator G>
double sample_diagonal_gaussian(const Eigen::MatrixBase<M>& mean, const Eigen::MatrixBase<S>& log_std, G& gen,
                                Eigen::PlainObjectBase<Out>& action) {
  detail::check_gaussian("sample_diagonal_gaussian", mean, log_std);
  detail::check_action_type<Out>("sample_diagonal_gaussian", static_cast<std::size_t>(mean.size()));
  action.resize(mean.size());
  detail::draw_diagonal_gaussian(mean, log_std, gen, action);
  return diagonal_gaussian_log_prob(action, mean, log_std);
}

/// The categorical policy over index actions: the network's policy output is policy_dim() logits
/// ℓ per sample, π = softmax(ℓ). The default distribution of a network (policy_distribution_t).
struct Categorical {
  /// A batch's actions as a buffer or a minibatch keeps them: one index per sample.
  template <class Scalar>
  using actions_type = std::vector<Action>;
  /// The environment actions it hands out.
  template <class A>
  static constexpr bool acts_with = std::same_as<A, Action>;

  /// Its name in files, what the network's policy_dim counts (for messages and files), and that count.
  static constexpr const char* name = "categorical";
  static constexpr const char* size_name = "num_actions";
  static constexpr std::size_t size_of(std::size_t policy_dim) noexcept { return policy_dim; }
  /// The entries of one stored action: 1 (an index).
  static constexpr std::size_t action_dim(std::size_t /*policy_dim*/) noexcept { return 1; }
  /// Nothing to check: acts_with admits Action only.
  template <class A>
  static void check_action_type(const char* /*who*/, std::size_t /*policy_dim*/) noexcept {}
  /// Throws std::invalid_argument naming `who` unless a network of policy_dim outputs fits: one
  /// logit at least.
  static void check_policy_dim(const char* who, std::size_t policy_dim) {
    if (policy_dim == 0) detail::invalid(who, ": a categorical policy needs at least one logit, got policy_dim 0");
  }
  /// Resizes `actions` to n actions (of action_dim entries; the new ones 0).
  static void resize(std::vector<Action>& actions, std::size_t /*action_dim*/, std::size_t n) { actions.resize(n); }
  [[nodiscard]] static std::size_t count(const std::vector<Action>& actions) noexcept { return actions.size(); }
  [[nodiscard]] static std::size_t dim(const std::vector<Action>& /*actions*/) noexcept { return 1; }
  /// to[j] = from[k].
  static void copy(std::vector<Action>& to, std::size_t j, const std::vector<Action>& from, std::size_t k) {
    to[j] = from[k];
  }
  /// Whether `action` is the stored action j.
  [[nodiscard]] static bool holds(const std::vector<Action>& actions, std::size_t j, Action action) noexcept {
    return actions[j] == action;
  }

  /// Picks the action of one sample from its logits: sample_categorical with gen (one
  /// uniform_real), or greedy_action (drawing nothing); stores it as actions[j] and returns its
  /// log-probability (0 for greedy). Non-finite logits throw std::domain_error.
  template <class Scalar, class Column, std::uniform_random_bit_generator G>
  static double act(const char* /*who*/, const Column& logits, ActionSelection selection, G& gen, Action& action,
                    std::vector<Action>& actions, std::size_t j) {
    if (selection == ActionSelection::greedy) {
      action = greedy_action(logits);
      actions[j] = action;
      return 0.0;
    }
    const CategoricalSample s = sample_categorical(logits, gen);
    action = actions[j] = s.action;
    return s.log_prob;
  }

  /// Scratch space of a batch: softmax, log-softmax, their column maxima and log-normalisers.
  template <class Scalar>
  struct workspace_type {
    Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> probs, log_probs;
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> row_max, row_sum;
    void reserve(std::size_t policy_dim, std::size_t b) {
      if (static_cast<std::size_t>(row_max.size()) >= b && static_cast<std::size_t>(probs.rows()) == policy_dim) return;
      probs.resize(static_cast<Eigen::Index>(policy_dim), static_cast<Eigen::Index>(b));
      log_probs.resize(static_cast<Eigen::Index>(policy_dim), static_cast<Eigen::Index>(b));
      row_max.resize(static_cast<Eigen::Index>(b));
      row_sum.resize(static_cast<Eigen::Index>(b));
    }
  };

  /// Throws std::invalid_argument naming `who` unless the first b actions are below policy_dim.
  static void check_actions(const char* who, const std::vector<Action>& actions, std::size_t b,
                            std::size_t policy_dim) {
    if (b > actions.size())
      detail::invalid(who, ": ", b, " samples, but the minibatch holds ", actions.size(), " actions");
    for (std::size_t j = 0; j < b; ++j)
      if (actions[j] >= policy_dim)
        detail::invalid(who, ": minibatch.actions[", j, "] = ", actions[j], ", expected < num_actions = ", policy_dim);
  }

  /// For the first b columns of logits: log π(a_j) into log_prob and the entropy H(π_j) into
  /// entropy (log-softmax and softmax stay in ws for gradient).
  template <class Scalar, class Out>
  static void log_prob_entropy(const Out& logits, const std::vector<Action>& actions, std::size_t b,
                               workspace_type<Scalar>& ws,
                               Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> log_prob,
                               Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> entropy) {
    const auto cols = static_cast<Eigen::Index>(b);
    auto m = ws.row_max.head(cols);
    auto sum = ws.row_sum.head(cols);
    auto p = ws.probs.leftCols(cols);
    auto logp = ws.log_probs.leftCols(cols);
    m = logits.colwise().maxCoeff();
    p = (logits.rowwise() - m).array().exp().matrix();
    sum = p.colwise().sum();
    p.array().rowwise() /= sum.array();
    sum.array() = m.array() + sum.array().log();  // log Z (in place: broadcasting an expression would allocate)
    logp = logits.rowwise() - sum;
    entropy = -(p.array() * logp.array()).colwise().sum().matrix();
    for (std::size_t j = 0; j < b; ++j)
      log_prob[static_cast<Eigen::Index>(j)] =
          logp(static_cast<Eigen::Index>(actions[j]), static_cast<Eigen::Index>(j));
  }

  /// After log_prob_entropy on the same columns: d_out_j = coef_j ∂log π(a_j)/∂ℓ_j − ent ∂H_j/∂ℓ_j
  /// with ∂log π(a)/∂ℓ = e_a − π and ∂H/∂ℓ = −π ⊙ (log π + H). (coef 1, ent 0 gives the first
  /// derivative alone; coef 0, ent −1 the second.)
  template <class Scalar, class Out>
  static void gradient(const Out& /*logits*/, const std::vector<Action>& actions, std::size_t b,
                       const Eigen::Ref<const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>& coef, Scalar ent,
                       workspace_type<Scalar>& ws,
                       const Eigen::Ref<const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>& entropy,
                       Eigen::Ref<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>> d_out) {
    const auto cols = static_cast<Eigen::Index>(b);
    const auto p = ws.probs.leftCols(cols);
    const auto logp = ws.log_probs.leftCols(cols);
    d_out = ((logp.array().rowwise() + entropy.array()) * ent).matrix();
    d_out.array().rowwise() -= coef.array();
    d_out.array() *= p.array();
    for (std::size_t j = 0; j < b; ++j)
      d_out(static_cast<Eigen::Index>(actions[j]), static_cast<Eigen::Index>(j)) += coef[static_cast<Eigen::Index>(j)];
  }
};

/// The diagonal Gaussian policy over k-dimensional continuous actions: the network's policy output
/// is 2k rows per sample, [μ; s], the mean and the log standard deviation (σ = e^s).
struct DiagonalGaussian {
  /// A batch's actions as a buffer or a minibatch keeps them: one column per sample (k x n), in
  /// the agent's Scalar.
  template <class Scalar>
  using actions_type = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  /// The environment actions it hands out: any ContinuousAction of k entries.
  template <class A>
  static constexpr bool acts_with = ContinuousAction<A>;

  /// Its name in files, what its actions' size is called (for messages and files), and that size.
  static constexpr const char* name = "diagonal_gaussian";
  static constexpr const char* size_name = "action_dim";
  static constexpr std::size_t size_of(std::size_t policy_dim) noexcept { return policy_dim / 2; }
  /// k = policy_dim / 2.
  static constexpr std::size_t action_dim(std::size_t policy_dim) noexcept { return policy_dim / 2; }
  /// Throws std::invalid_argument naming `who` if A cannot hold actions of k entries.
  template <class A>
  static void check_action_type(const char* who, std::size_t policy_dim) {
    detail::check_action_type<A>(who, policy_dim / 2);
  }
  /// Throws std::invalid_argument naming `who` unless policy_dim = 2k, k >= 1.
  static void check_policy_dim(const char* who, std::size_t policy_dim) {
    if (policy_dim == 0 || policy_dim % 2 != 0)
      detail::invalid(who, ": a Gaussian policy's output has 2k rows (means, log standard deviations), got ",
                      policy_dim);
  }
  /// Resizes `actions` to n zero actions of action_dim entries.
  template <class Scalar>
  static void resize(actions_type<Scalar>& actions, std::size_t action_dim, std::size_t n) {
    actions.setZero(static_cast<Eigen::Index>(action_dim), static_cast<Eigen::Index>(n));
  }
  template <class Scalar>
  [[nodiscard]] static std::size_t count(const actions_type<Scalar>& actions) noexcept {
    return static_cast<std::size_t>(actions.cols());
  }
  template <class Scalar>
  [[nodiscard]] static std::size_t dim(const actions_type<Scalar>& actions) noexcept {
    return static_cast<std::size_t>(actions.rows());
  }
  template <class Scalar>
  static void copy(actions_type<Scalar>& to, std::size_t j, const actions_type<Scalar>& from, std::size_t k) {
    to.col(static_cast<Eigen::Index>(j)) = from.col(static_cast<Eigen::Index>(k));
  }
  template <class Scalar, class A>
  [[nodiscard]] static bool holds(const actions_type<Scalar>& actions, std::size_t j, const A& action) {
    const auto stored = actions.col(static_cast<Eigen::Index>(j));
    return action.size() == stored.size() && action.template cast<Scalar>() == stored;
  }

  /// Picks the action of one sample from its column [μ; s]: draws a = μ + σ ε as
  /// sample_diagonal_gaussian does (k standard_normal draws), or takes μ (greedy, drawing nothing),
  /// rounded to Scalar and then to A's scalar, so that `action` and the stored column j hold the
  /// same numbers whichever scalar is coarser. Returns the log-density of that action (0 for
  /// greedy). Non-finite outputs throw std::domain_error; an A that cannot hold k entries
  /// std::invalid_argument, both naming `who`.
  template <class Scalar, class Column, class A, std::uniform_random_bit_generator G>
  static double act(const char* who, const Column& column, ActionSelection selection, G& gen, A& action,
                    actions_type<Scalar>& actions, std::size_t j) {
    const auto k = column.size() / 2;
    const auto mean = column.head(k), log_std = column.tail(k);
    detail::check_gaussian(who, mean, log_std);
    detail::check_action_type<A>(who, static_cast<std::size_t>(k));
    auto stored = actions.col(static_cast<Eigen::Index>(j));
    if (selection == ActionSelection::greedy)
      stored = mean;
    else
      detail::draw_diagonal_gaussian(mean, log_std, gen, stored);
    action = stored.template cast<typename A::Scalar>();
    stored = action.template cast<Scalar>();  // exact: the finer scalar holds the coarser's value
    return selection == ActionSelection::greedy ? 0.0 : diagonal_gaussian_log_prob(stored, mean, log_std);
  }

  /// Scratch space of a batch: the standardised actions z = (a − μ) e^{−s}.
  template <class Scalar>
  struct workspace_type {
    Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> standardized;
    void reserve(std::size_t policy_dim, std::size_t b) {
      if (static_cast<std::size_t>(standardized.cols()) >= b &&
          static_cast<std::size_t>(standardized.rows()) == policy_dim / 2)
        return;
      standardized.resize(static_cast<Eigen::Index>(policy_dim / 2), static_cast<Eigen::Index>(b));
    }
  };

  /// Throws std::invalid_argument naming `who` unless actions holds k = policy_dim / 2 rows, at
  /// least b columns, and the first b are finite.
  template <class Scalar>
  static void check_actions(const char* who, const actions_type<Scalar>& actions, std::size_t b,
                            std::size_t policy_dim) {
    if (static_cast<std::size_t>(actions.rows()) != policy_dim / 2 || static_cast<std::size_t>(actions.cols()) < b)
      detail::invalid(who, ": minibatch.actions is ", actions.rows(), " x ", actions.cols(), ", expected ",
                      policy_dim / 2, " rows and at least ", b, " columns");
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(b); ++j)
      for (Eigen::Index r = 0; r < actions.rows(); ++r)
        if (!std::isfinite(actions(r, j)))
          detail::invalid(who, ": minibatch.actions(", r, ", ", j, ") = ", actions(r, j), ", expected a finite action");
  }

  /// For the first b columns: log π(a_j) = Σ_k (−z²/2 − s) − k ½ log 2π into log_prob and
  /// H = Σ_k s + k ½ (1 + log 2π) into entropy (z stays in ws for gradient).
  template <class Scalar, class Out>
  static void log_prob_entropy(const Out& out, const actions_type<Scalar>& actions, std::size_t b,
                               workspace_type<Scalar>& ws,
                               Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> log_prob,
                               Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> entropy) {
    const auto cols = static_cast<Eigen::Index>(b);
    const auto k = out.rows() / 2;
    const auto mu = out.topRows(k);
    const auto log_std = out.bottomRows(k);
    auto z = ws.standardized.leftCols(cols);
    z = ((actions.leftCols(cols) - mu).array() * (-log_std.array()).exp()).matrix();
    const auto constant = static_cast<Scalar>(static_cast<double>(k) * detail::half_log_two_pi);
    log_prob = (Scalar(-0.5) * z.array().square() - log_std.array()).colwise().sum().matrix();
    log_prob.array() -= constant;
    entropy = log_std.colwise().sum();
    entropy.array() += static_cast<Scalar>(static_cast<double>(k) * (0.5 + detail::half_log_two_pi));
  }

  /// After log_prob_entropy on the same columns: d_out_j = coef_j ∂log π(a_j)/∂[μ; s] − ent ∂H/∂[μ; s]
  /// with ∂log π(a)/∂μ = z e^{−s}, ∂log π(a)/∂s = z² − 1, ∂H/∂μ = 0, ∂H/∂s = 1.
  template <class Scalar, class Out>
  static void gradient(const Out& out, const actions_type<Scalar>& /*actions*/, std::size_t b,
                       const Eigen::Ref<const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>& coef, Scalar ent,
                       workspace_type<Scalar>& ws,
                       const Eigen::Ref<const Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>& /*entropy*/,
                       Eigen::Ref<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>> d_out) {
    const auto cols = static_cast<Eigen::Index>(b);
    const auto k = out.rows() / 2;
    const auto log_std = out.bottomRows(k);
    const auto z = ws.standardized.leftCols(cols);
    d_out.topRows(k) = (z.array() * (-log_std.array()).exp()).matrix();
    d_out.topRows(k).array().rowwise() *= coef.array();
    d_out.bottomRows(k) = (z.array().square() - Scalar(1)).matrix();
    d_out.bottomRows(k).array().rowwise() *= coef.array();
    d_out.bottomRows(k).array() -= ent;
  }
};

/// What Ppo, PpoActing, PpoPolicy and ppo_loss need of a network's policy distribution D for
/// Scalar (Categorical and DiagonalGaussian are the two memtrace has): the stored actions
/// (actions_type, resize, count, dim, copy, holds), size_name, action_dim and check_policy_dim,
/// acts_with, check_action_type and act (one sample's action and log-probability), and, for the
/// loss over a batch, workspace_type, check_actions, log_prob_entropy and gradient. The concept
/// checks the members that do not depend on the network's output type; the others are checked
/// where they are called. docs/control.md ("Policy distributions").
template <class D, class Scalar>
concept PolicyDistribution = requires(typename D::template actions_type<Scalar>& actions,
                                      typename D::template workspace_type<Scalar>& ws, std::size_t n) {
  { D::size_name } -> std::convertible_to<const char*>;
  { D::action_dim(n) } -> std::convertible_to<std::size_t>;
  D::check_policy_dim("", n);
  D::resize(actions, n, n);
  { D::count(actions) } -> std::convertible_to<std::size_t>;
  { D::dim(actions) } -> std::convertible_to<std::size_t>;
  D::copy(actions, n, actions, n);
  ws.reserve(n, n);
  D::check_actions("", actions, n, n);
};

}  // namespace memtrace
