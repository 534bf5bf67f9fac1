#pragma once
// A diagonal Gaussian policy for continuous actions (the standard continuous PPO recipe, CleanRL's
// ppo_continuous_action): its log-density, entropy and sampling with memtrace's own random numbers,
// and GaussianActorCritic, PPO's network for it: an actor MLP for the mean, a state-independent log
// standard deviation, and a critic MLP. See docs/control.md ("Continuous actions").

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "memtrace/concepts.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

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
  using T = typename Out::Scalar;
  for (Eigen::Index k = 0; k < mean.size(); ++k)
    action.coeffRef(k) = static_cast<T>(static_cast<double>(mean.coeff(k)) +
                                        std::exp(static_cast<double>(log_std.coeff(k))) * standard_normal(gen));
  return diagonal_gaussian_log_prob(action, mean, log_std);
}

namespace detail {
/// What a Gaussian policy of Scalar hands an environment whose actions are of type A: the sample of
/// sample_diagonal_gaussian (or the mean, greedy) rounded to Scalar and then to A's scalar, so that
/// `action` (A) and `stored` (Scalar, what a learner keeps) hold the same numbers whichever scalar is
/// coarser; returns the log-density of that action (0 for the mean: not needed). `column` is the
/// network's output for one sample, [μ; s].
template <class Scalar, class Column, class A, std::uniform_random_bit_generator G>
double gaussian_action(const char* who, const Column& column, bool greedy, G& gen, A& action,
                       Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& stored) {
  const auto k = column.size() / 2;
  const auto mean = column.head(k), log_std = column.tail(k);
  check_gaussian(who, mean, log_std);
  check_action_type<A>(who, static_cast<std::size_t>(k));
  if (greedy)
    stored = mean;
  else
    (void)sample_diagonal_gaussian(mean, log_std, gen, stored);
  action = stored.template cast<typename A::Scalar>();
  stored = action.template cast<Scalar>();  // exact: the finer scalar holds the coarser's value
  return greedy ? 0.0 : diagonal_gaussian_log_prob(stored, mean, log_std);
}
}  // namespace detail

/// The actor-critic of continuous PPO (CleanRL's ppo_continuous_action): an actor Mlp
/// {d, h_1, ..., h_n, k} whose output is the mean μ of a diagonal Gaussian over k-dimensional
/// actions, a log standard deviation s ∈ R^k that does not depend on the input (a parameter of its
/// own, initially initial_log_std), and a critic Mlp {d, h_1, ..., h_n, 1}. Its policy output is
/// the 2k x B matrix [μ; s] (s repeated in every column); policy_distribution = DiagonalGaussian
/// tells Ppo to read it so. Parameter blocks: the actor's, the critic's, then s.
template <class Scalar = float>
class GaussianActorCritic {
 public:
  using scalar_type = Scalar;
  using policy_distribution = DiagonalGaussian;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;

  /// Networks for input dimension input_dim >= 1 and actions of dimension action_dim >= 1, weights
  /// zero until initialize_orthogonal; the log standard deviation initial_log_std (finite).
  GaussianActorCritic(std::size_t input_dim, std::size_t action_dim, std::span<const std::size_t> hidden_sizes,
                      double initial_log_std = 0.0)
      : actor_(detail::head_sizes("GaussianActorCritic", input_dim, hidden_sizes, action_dim, "action_dim")),
        critic_(detail::head_sizes("GaussianActorCritic", input_dim, hidden_sizes, 1, "action_dim")),
        initial_log_std_(checked_log_std(initial_log_std)),
        log_std_(Vector::Constant(static_cast<Eigen::Index>(action_dim), static_cast<Scalar>(initial_log_std))),
        log_std_gradient_(Vector::Zero(static_cast<Eigen::Index>(action_dim))) {}
  GaussianActorCritic(std::size_t input_dim, std::size_t action_dim,
                      std::initializer_list<std::size_t> hidden_sizes = {64, 64}, double initial_log_std = 0.0)
      : GaussianActorCritic(input_dim, action_dim, std::span(hidden_sizes.begin(), hidden_sizes.size()),
                            initial_log_std) {}

  /// CleanRL's initialisation: orthogonal kernels with gain √2 for every hidden layer, 0.01 for the
  /// actor's head and 1 for the critic's, biases zero (the actor's layers drawn first, then the
  /// critic's, from gen), and the log standard deviation back to initial_log_std.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    std::vector<double> gains(actor_.num_layers(), std::sqrt(2.0));
    gains.back() = 0.01;
    actor_.initialize_orthogonal(gen, gains);
    gains.back() = 1.0;
    critic_.initialize_orthogonal(gen, gains);
    log_std_.setConstant(static_cast<Scalar>(initial_log_std_));
  }

  [[nodiscard]] Mlp<Scalar>& actor() noexcept { return actor_; }
  [[nodiscard]] const Mlp<Scalar>& actor() const noexcept { return actor_; }
  [[nodiscard]] Mlp<Scalar>& critic() noexcept { return critic_; }
  [[nodiscard]] const Mlp<Scalar>& critic() const noexcept { return critic_; }
  /// The log standard deviation s (one entry per action dimension).
  [[nodiscard]] Vector& log_std() noexcept { return log_std_; }
  [[nodiscard]] const Vector& log_std() const noexcept { return log_std_; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return actor_.input_dim(); }
  [[nodiscard]] std::size_t action_dim() const noexcept { return actor_.output_dim(); }
  [[nodiscard]] std::size_t num_parameters() const noexcept {
    return actor_.num_parameters() + critic_.num_parameters() + action_dim();
  }
  /// Makes room for batches of up to `batch` columns (no forward allocates after it).
  void reserve(std::size_t batch) {
    actor_.reserve(batch);
    critic_.reserve(batch);
    grow(batch);
  }

  // ---- the ActorCriticNetwork interface (docs/control.md, "Your own network") ----

  /// 2 action_dim(): the mean, then the log standard deviation.
  [[nodiscard]] std::size_t policy_dim() const noexcept { return 2 * action_dim(); }
  /// [μ; s] (2k x batch) for a dense or MultiHot batch.
  template <class Input>
  ConstMatrixMap forward_policy(const Input& input) {
    const auto mean = actor_.forward(input);
    const Eigen::Index k = mean.rows(), b = mean.cols();
    grow(static_cast<std::size_t>(b));
    Eigen::Map<Matrix> out(policy_.data(), 2 * k, b);
    out.topRows(k) = mean;
    out.bottomRows(k) = log_std_.replicate(1, b);
    return ConstMatrixMap(policy_.data(), 2 * k, b);
  }
  /// The critic's values (1 x batch).
  template <class Input>
  ConstMatrixMap forward_value(const Input& input) {
    return critic_.forward(input);
  }
  /// The gradients after forward_policy and forward_value on input: the mean's rows of d_policy go
  /// back through the actor, the log standard deviation's are summed over the batch.
  template <class Input>
  void backward(const Input& input, const Eigen::Ref<const Matrix>& d_policy,
                const Eigen::Ref<const RowVector>& d_value) {
    const Eigen::Index k = static_cast<Eigen::Index>(action_dim());
    actor_.backward(input, d_policy.topRows(k));
    log_std_gradient_ = d_policy.bottomRows(k).rowwise().sum();
    critic_.backward(input, d_value);
  }
  /// The actor's parameters, the critic's, then s: three blocks.
  [[nodiscard]] std::array<std::span<Scalar>, 3> parameters() noexcept {
    return {block(actor_.parameters()), block(critic_.parameters()), block(log_std_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 3> parameters() const noexcept {
    return {block(actor_.parameters()), block(critic_.parameters()), block(log_std_)};
  }
  /// The gradients of the last backward, in the blocks of parameters().
  [[nodiscard]] std::array<std::span<Scalar>, 3> gradients() noexcept {
    return {block(actor_.gradients()), block(critic_.gradients()), block(log_std_gradient_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 3> gradients() const noexcept {
    return {block(actor_.gradients()), block(critic_.gradients()), block(log_std_gradient_)};
  }

 private:
  static double checked_log_std(double s) {
    if (!std::isfinite(s) || !std::isfinite(static_cast<Scalar>(s)))
      detail::invalid("GaussianActorCritic: initial_log_std must be finite in the network's scalar, got ", s);
    return s;
  }
  void grow(std::size_t batch) {
    const auto rows = static_cast<Eigen::Index>(policy_dim());
    if (policy_.rows() != rows || policy_.cols() < static_cast<Eigen::Index>(batch))
      policy_.resize(rows, static_cast<Eigen::Index>(batch));
  }
  template <class V>
  static auto block(V& v) noexcept {
    return std::span(v.data(), static_cast<std::size_t>(v.size()));
  }
  template <class V>
  static auto block(V&& v) noexcept {
    return std::span(v.data(), static_cast<std::size_t>(v.size()));
  }

  Mlp<Scalar> actor_, critic_;
  double initial_log_std_;
  Vector log_std_, log_std_gradient_;
  Matrix policy_;  // [μ; s] of the last forward_policy, in its first columns
};

}  // namespace memtrace
