#pragma once
// A running normaliser of feature vectors: the mean and variance of every feature over all the
// vectors seen so far, and x -> clip((x - μ) / sqrt(σ² + ε), -c, c) per feature, as Stable-Baselines3's
// VecNormalize and Gymnasium's NormalizeObservation do. A memory trace carries an old cue in a
// small entry beside large ones (in the T-maze of corridor 64 the slow trace's cue entry at the
// junction is (1 - λ)λ^63 = 0.0058 beside floor entries of 0.61); normalising every feature to unit
// scale makes it readable to a network that starts with weights of order 1. Statistics in double
// with Chan's parallel update. See docs/learners.md.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include "memtrace/features.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The constants of a FeatureNormalizer.
struct NormalizerOptions {
  double epsilon = 1e-8;  ///< ε added to the variance under the square root, > 0 and finite
  double clip = 10.0;     ///< c: normalised features are clipped to [-c, c]; > 0 (+infinity: no clip)
  friend bool operator==(const NormalizerOptions&, const NormalizerOptions&) = default;
};

/// Running mean and variance of each of dim features, and the normalisation with them. A value
/// type: copyable and comparable, owned by whoever normalises (an agent, a TD loop).
///
/// update(batch) folds a batch of feature vectors (the columns of a matrix, one vector, or a span
/// of dense vectors) into the statistics with Chan, Golub and LeVeque's parallel update in double:
/// the batch's own mean and sum of squared deviations (two passes over the batch), then
///   δ = m_B − m,  n' = n + n_B,  m' = m + δ n_B / n',  M2' = M2 + M2_B + δ² n n_B / n',
/// so the result equals a two-pass computation over the whole stream to rounding, whatever the
/// split into batches, and millions of updates do not drift. variance() is the population variance
/// M2 / n. The count starts at 0; before the first update the statistics are mean 0 and variance 1
/// (normalize clips the identity), and the first update replaces them entirely.
///
/// freeze() stops updates (update then changes nothing: evaluation code may call it freely);
/// unfreeze() resumes them. Non-finite features are refused by update and normalize, frozen or not
/// (std::invalid_argument naming the function, the sample, the feature and its value): normalize
/// would otherwise clip an infinity to ±c and hide it. A refused call changes nothing.
class FeatureNormalizer {
 public:
  /// A normaliser of no features (assign a real one before use).
  FeatureNormalizer() = default;

  /// A normaliser of dim features with count 0. Throws std::invalid_argument for dim 0, for ε not
  /// positive and finite, or for c not positive (NaN included).
  explicit FeatureNormalizer(std::size_t dim, NormalizerOptions options = {}) : options_(options) {
    if (dim == 0) detail::invalid("FeatureNormalizer: dim must be at least 1, got 0");
    check_options("FeatureNormalizer", "", options_);
    detail::check_storage("FeatureNormalizer", "statistics", detail::checked_mul(dim, 5), sizeof(double), "dim", dim);
    const auto d = static_cast<Eigen::Index>(dim);
    mean_ = Eigen::VectorXd::Zero(d);
    m2_ = Eigen::VectorXd::Zero(d);
    inverse_std_ = Eigen::VectorXd::Constant(d, 1.0 / std::sqrt(1.0 + options_.epsilon));  // variance 1
    batch_mean_ = Eigen::VectorXd::Zero(d);
    batch_m2_ = Eigen::VectorXd::Zero(d);
  }

  /// A normaliser restored from its statistics (as count(), mean() and squared_deviations() give
  /// them: a saved agent, a checkpoint), not frozen. Throws std::invalid_argument naming the
  /// argument for mean and squared_deviations of different sizes or of size 0, a non-finite entry,
  /// a negative squared deviation, count 0 with statistics that are not all zero, or bad options.
  /// (A template, so that only a file that restores a normaliser compiles it: docs/design.md.)
  template <class Mean, class SquaredDeviations>
  FeatureNormalizer(std::size_t count, const Eigen::MatrixBase<Mean>& mean,
                    const Eigen::MatrixBase<SquaredDeviations>& squared_deviations, NormalizerOptions options = {}) {
    static_assert(Mean::ColsAtCompileTime == 1 && SquaredDeviations::ColsAtCompileTime == 1,
                  "FeatureNormalizer: mean and squared_deviations must be column vectors");
    constexpr const char* who = "FeatureNormalizer (from statistics)";
    if (mean.size() == 0 || squared_deviations.size() != mean.size())
      detail::invalid(who, ": mean and squared_deviations must have one size of at least 1, got ", mean.size(), " and ",
                      squared_deviations.size());
    if (!mean.allFinite() || !squared_deviations.allFinite())
      detail::invalid(who, ": mean and squared_deviations must be finite");
    if (squared_deviations.minCoeff() < 0.0)
      detail::invalid(who, ": squared_deviations must be non-negative, got ",
                      static_cast<double>(squared_deviations.minCoeff()));
    if (count == 0 && (!mean.isZero(0.0) || !squared_deviations.isZero(0.0)))
      detail::invalid(who, ": count 0 needs zero statistics, got a non-zero mean or squared deviation");
    FeatureNormalizer restored(static_cast<std::size_t>(mean.size()), options);
    if (count > 0) {
      restored.mean_ = mean.template cast<double>();
      restored.m2_ = squared_deviations.template cast<double>();
      restored.count_ = count;
      restored.refresh_inverse_std();
    }
    *this = std::move(restored);
  }

  /// Throws std::invalid_argument unless ε is positive and finite and c is positive; the message
  /// names `who` and the option as `prefix` + "epsilon" (e.g. prefix "options.normalizer.").
  static void check_options(const char* who, const char* prefix, const NormalizerOptions& o) {
    if (!(o.epsilon > 0.0 && std::isfinite(o.epsilon)))
      detail::invalid(who, ": ", prefix, "epsilon must be positive and finite, got ", o.epsilon);
    if (!(o.clip > 0.0)) detail::invalid(who, ": ", prefix, "clip must be positive (or +infinity), got ", o.clip);
  }

  // ---- statistics ----

  /// Folds the columns of x (dim rows; float or double), each one feature vector, into the
  /// statistics. Nothing happens when frozen or when x has no columns.
  template <class Derived>
  void update(const Eigen::MatrixBase<Derived>& x) {
    static_assert(std::is_floating_point_v<typename Derived::Scalar>,
                  "FeatureNormalizer::update: features must hold float or double");
    check_dim("FeatureNormalizer::update", x.rows());
    for (Eigen::Index j = 0; j < x.cols(); ++j) check_finite("FeatureNormalizer::update", x.col(j), j);
    if (frozen_ || x.cols() == 0) return;
    batch_mean_.setZero();
    for (Eigen::Index j = 0; j < x.cols(); ++j) batch_mean_ += x.col(j).template cast<double>();
    batch_mean_ /= static_cast<double>(x.cols());
    batch_m2_.setZero();
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      batch_m2_.array() += (x.col(j).template cast<double>() - batch_mean_).array().square();
    combine(static_cast<std::size_t>(x.cols()));
  }

  /// Folds a batch of dense feature vectors (one per entry of the span) into the statistics.
  template <detail::DenseVector V>
  void update(std::span<const V> batch) {
    check_dim("FeatureNormalizer::update", static_cast<Eigen::Index>(dim()));
    for (std::size_t j = 0; j < batch.size(); ++j)
      if (batch[j].size() != static_cast<Eigen::Index>(dim()))
        detail::invalid("FeatureNormalizer::update: batch[", j, "] has size ", batch[j].size(),
                        ", expected dim = ", dim());
    for (std::size_t j = 0; j < batch.size(); ++j)
      check_finite("FeatureNormalizer::update", batch[j], static_cast<Eigen::Index>(j));
    if (frozen_ || batch.empty()) return;
    batch_mean_.setZero();
    for (const V& x : batch) batch_mean_ += x.template cast<double>();
    batch_mean_ /= static_cast<double>(batch.size());
    batch_m2_.setZero();
    for (const V& x : batch) batch_m2_.array() += (x.template cast<double>() - batch_mean_).array().square();
    combine(batch.size());
  }

  /// Chan's combination with the statistics of another normaliser of the same dim (for statistics
  /// gathered in parallel): the result is that of one normaliser that saw both streams. Nothing
  /// happens when this one is frozen. The options stay this normaliser's.
  void merge(const FeatureNormalizer& other) {
    if (other.dim() != dim())
      detail::invalid("FeatureNormalizer::merge: other has dim ", other.dim(), ", expected dim = ", dim());
    if (frozen_ || other.count_ == 0) return;
    batch_mean_ = other.mean_;
    batch_m2_ = other.m2_;
    combine(other.count_);
  }

  void freeze() noexcept { frozen_ = true; }
  void unfreeze() noexcept { frozen_ = false; }
  [[nodiscard]] bool frozen() const noexcept { return frozen_; }

  // ---- normalisation ----

  /// out = clip((x − mean) / sqrt(variance + ε), −c, c), column by column (x and out: dim rows, one
  /// size; float or double; out may be x itself). Does not update the statistics.
  template <class In, class Out>
  void normalize(const Eigen::MatrixBase<In>& x, Eigen::MatrixBase<Out>& out) const {
    if (x.rows() != static_cast<Eigen::Index>(dim()))
      detail::invalid("FeatureNormalizer::normalize: x has ", x.rows(), " rows, expected dim = ", dim());
    if (out.rows() != x.rows() || out.cols() != x.cols())
      detail::invalid("FeatureNormalizer::normalize: out is ", out.rows(), " x ", out.cols(), ", expected ", x.rows(),
                      " x ", x.cols());
    for (Eigen::Index j = 0; j < x.cols(); ++j) check_finite("FeatureNormalizer::normalize", x.col(j), j);
    using Scalar = typename Out::Scalar;
    const double c = options_.clip;
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      out.col(j) = ((x.col(j).template cast<double>() - mean_).cwiseProduct(inverse_std_))
                       .cwiseMax(-c)
                       .cwiseMin(c)
                       .template cast<Scalar>();
  }
  template <class In, class Out>
  void normalize(const Eigen::MatrixBase<In>& x, Eigen::MatrixBase<Out>&& out) const {
    normalize(x, out);
  }

  /// The normalised copy of x (allocates: for tests and one-off use; hot loops use normalize).
  template <class In>
  [[nodiscard]] typename In::PlainObject normalized(const Eigen::MatrixBase<In>& x) const {
    typename In::PlainObject out(x.rows(), x.cols());
    normalize(x, out);
    return out;
  }

  // ---- inspection ----

  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(mean_.size()); }
  /// Feature vectors folded in so far.
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  [[nodiscard]] const NormalizerOptions& options() const noexcept { return options_; }
  /// The running mean (0 before the first update).
  [[nodiscard]] const Eigen::VectorXd& mean() const noexcept { return mean_; }
  /// The running population variance M2 / count (1 before the first update).
  [[nodiscard]] Eigen::VectorXd variance() const {
    if (count_ == 0) return Eigen::VectorXd::Ones(mean_.size());
    return m2_ / static_cast<double>(count_);
  }
  /// The sum of squared deviations from the mean, M2.
  [[nodiscard]] const Eigen::VectorXd& squared_deviations() const noexcept { return m2_; }

  /// Same dim, options, frozen flag, count, and statistics bit for bit.
  friend bool operator==(const FeatureNormalizer& a, const FeatureNormalizer& b) {
    return a.dim() == b.dim() && a.options_ == b.options_ && a.frozen_ == b.frozen_ && a.count_ == b.count_ &&
           a.mean_ == b.mean_ && a.m2_ == b.m2_;
  }

 private:
  void check_dim(const char* who, Eigen::Index rows) const {
    if (dim() == 0) detail::invalid(who, ": the normaliser has no features (default-constructed)");
    if (rows != static_cast<Eigen::Index>(dim()))
      detail::invalid(who, ": x has ", rows, " rows, expected dim = ", dim());
  }

  template <class V>
  static void check_finite(const char* who, const V& x, Eigen::Index sample) {
    if (x.allFinite()) [[likely]]
      return;
    for (Eigen::Index k = 0; k < x.size(); ++k)
      if (!std::isfinite(static_cast<double>(x[k])))
        detail::invalid(who, ": feature ", k, " of sample ", sample, " is ", static_cast<double>(x[k]),
                        "; features must be finite");
  }

  /// Folds n_b vectors with mean batch_mean_ and squared deviations batch_m2_ into the statistics.
  void combine(std::size_t n_b) {
    const double na = static_cast<double>(count_), nb = static_cast<double>(n_b), n = na + nb;
    batch_mean_ -= mean_;  // δ
    mean_ += batch_mean_ * (nb / n);
    m2_ += batch_m2_ + batch_mean_.cwiseAbs2() * (na * nb / n);
    count_ += n_b;
    refresh_inverse_std();
  }

  /// 1 / sqrt(variance + ε) of the statistics (count_ > 0).
  void refresh_inverse_std() {
    inverse_std_ = ((m2_ / static_cast<double>(count_)).array() + options_.epsilon).rsqrt().matrix();
  }

  NormalizerOptions options_;
  Eigen::VectorXd mean_, m2_, inverse_std_;
  Eigen::VectorXd batch_mean_, batch_m2_;  // workspace: update allocates nothing
  std::size_t count_ = 0;
  bool frozen_ = false;
};

}  // namespace memtrace
