#pragma once
// Feature vectors and the two operations linear learners need from them.
//
// A feature vector is either dense (an Eigen vector: memory traces) or sparse with unit entries
// (OneHot: one table entry of a full window; MultiHot: one entry per block of a concatenated
// window). Learners never look inside: they call dot(w, phi) and add_scaled(w, alpha, phi), found
// by overload resolution (or by argument-dependent lookup for a user's own feature type), so a
// one-hot TD step costs O(1) whatever the table size. See docs/concepts.md.

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <vector>

#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The unit vector e_index: one active entry of value 1 (the window's table entry).
struct OneHot {
  std::size_t index = 0;
  friend bool operator==(const OneHot&, const OneHot&) = default;
};

/// A sum of unit vectors at distinct indices: e_{indices[0]} + ... + e_{indices[size-1]}.
/// Capacity is the largest number of active entries (compile-time, or `dynamic`).
template <int Capacity = dynamic>
class MultiHot {
  static_assert(Capacity == dynamic || Capacity >= 1, "MultiHot: Capacity must be positive or memtrace::dynamic");

 public:
  using storage_type =
      std::conditional_t<Capacity == dynamic, std::vector<std::size_t>,
                         std::array<std::size_t, static_cast<std::size_t>(Capacity == dynamic ? 1 : Capacity)>>;

  MultiHot() = default;
  /// Room for `capacity` entries (must equal Capacity when that is fixed); none active.
  explicit MultiHot(std::size_t capacity) {
    detail::check_fixed_size("MultiHot", "capacity", Capacity, capacity);
    if constexpr (Capacity == dynamic) indices_.assign(capacity, 0);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return indices_.size(); }
  [[nodiscard]] std::size_t operator[](std::size_t i) const noexcept { return indices_[i]; }
  [[nodiscard]] const std::size_t* begin() const noexcept { return indices_.data(); }
  [[nodiscard]] const std::size_t* end() const noexcept { return indices_.data() + size_; }

  /// The sum of the unit vectors at `indices`, which must be distinct and at most Capacity (when
  /// fixed) many: MultiHot<9>({3, 9, 13}). A dynamic capacity is the number of indices.
  MultiHot(std::initializer_list<std::size_t> indices)
      : MultiHot(std::span<const std::size_t>(indices.begin(), indices.size())) {}
  explicit MultiHot(std::span<const std::size_t> indices) {
    if constexpr (Capacity == dynamic) {
      indices_.assign(indices.begin(), indices.end());
    } else {
      if (indices.size() > static_cast<std::size_t>(Capacity))
        detail::invalid("MultiHot: at most ", Capacity, " indices fit, got ", indices.size());
      std::copy(indices.begin(), indices.end(), indices_.begin());
    }
    for (std::size_t i = 1; i < indices.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (indices[i] == indices[j]) detail::invalid("MultiHot: indices must be distinct, got ", indices[i], " twice");
    size_ = indices.size();
  }

  // Writers for the memory that owns the features; indices must stay distinct (a memory writes them).
  void set_size(std::size_t size) {
    if (size > capacity()) [[unlikely]]
      detail::invalid("MultiHot::set_size: size must be at most the capacity ", capacity(), ", got ", size);
    size_ = size;
  }
  std::size_t& operator[](std::size_t i) noexcept { return indices_[i]; }
  /// set_size without the check, for the memory that owns the features (size <= capacity()).
  void set_size_unchecked(std::size_t size) noexcept { size_ = size; }

 private:
  storage_type indices_{};
  std::size_t size_ = 0;
};

namespace detail {
/// A dense feature vector (or weight vector): an Eigen column vector of float or double.
template <class F>
concept DenseVector = F::ColsAtCompileTime == 1 && std::floating_point<typename F::Scalar>;
/// Dense weights and dense features of one scalar type: float weights take float features; mixing
/// them is refused (cast one side with .cast<float>() or .cast<double>()).
template <class W, class F>
concept SameScalar = std::same_as<typename W::Scalar, typename F::Scalar>;
}  // namespace detail

/// w · phi for dense features (of the weights' scalar type).
template <detail::DenseVector W, detail::DenseVector F>
requires detail::SameScalar<W, F>
[[nodiscard]] typename W::Scalar dot(const Eigen::MatrixBase<W>& w, const Eigen::MatrixBase<F>& phi) {
  return w.dot(phi);
}

/// w · e_index = w[index]: O(1).
template <detail::DenseVector W>
[[nodiscard]] typename W::Scalar dot(const Eigen::MatrixBase<W>& w, const OneHot& phi) {
  return w.coeff(static_cast<Eigen::Index>(phi.index));
}

/// w · (sum of unit vectors): O(number of active entries).
template <detail::DenseVector W, int C>
[[nodiscard]] typename W::Scalar dot(const Eigen::MatrixBase<W>& w, const MultiHot<C>& phi) {
  typename W::Scalar sum = 0;
  for (const std::size_t i : phi) sum += w.coeff(static_cast<Eigen::Index>(i));
  return sum;
}

/// w += alpha * phi for dense features.
template <detail::DenseVector W, detail::DenseVector F>
requires detail::SameScalar<W, F>
void add_scaled(Eigen::MatrixBase<W>& w, std::type_identity_t<typename W::Scalar> alpha,
                const Eigen::MatrixBase<F>& phi) {
  w.noalias() += alpha * phi;
}

/// w += alpha * e_index: touches exactly one weight.
template <detail::DenseVector W>
void add_scaled(Eigen::MatrixBase<W>& w, std::type_identity_t<typename W::Scalar> alpha, const OneHot& phi) {
  w.coeffRef(static_cast<Eigen::Index>(phi.index)) += alpha;
}

/// w += alpha * (sum of unit vectors): touches exactly the active weights.
template <detail::DenseVector W, int C>
void add_scaled(Eigen::MatrixBase<W>& w, std::type_identity_t<typename W::Scalar> alpha, const MultiHot<C>& phi) {
  for (const std::size_t i : phi) w.coeffRef(static_cast<Eigen::Index>(i)) += alpha;
}

namespace detail {
template <class>
inline constexpr bool always_false = false;

/// Explains at compile time why a feature type does not work with weights W (the concept
/// FeatureVector only says that it does not): one message, the first reason that applies.
/// Learners call it instead of their body when the features do not qualify.
template <class F, class W>
constexpr void diagnose_feature_type() {
  if constexpr (requires {
                  typename F::Scalar;
                  F::ColsAtCompileTime;
                }) {
    if constexpr (F::ColsAtCompileTime != 1)
      static_assert(always_false<F>,
                    "memtrace: a feature vector must be a column vector (Eigen::Matrix<Scalar, N, 1>), not a matrix");
    else if constexpr (!std::floating_point<typename F::Scalar>)
      static_assert(always_false<F>,
                    "memtrace: dense features must hold float or double; integer entries are not features "
                    "(convert with .template cast<float>() or .template cast<double>())");
    else if constexpr (!std::same_as<typename F::Scalar, typename W::Scalar>)
      static_assert(always_false<F>,
                    "memtrace: the features' scalar type differs from the learner's weights (float vs double): "
                    "use a learner of the features' scalar (e.g. LinearTd<float>) or cast the features");
  } else if constexpr (!requires(const F& phi, W& w, const W& cw, typename W::Scalar a) {
                         dot(cw, phi);
                         add_scaled(w, a, phi);
                       }) {
    static_assert(always_false<F>,
                  "memtrace: not a feature vector: provide dot(w, phi) and add_scaled(w, alpha, phi) for it (found "
                  "by argument-dependent lookup), or use a dense Eigen vector, OneHot or MultiHot");
  }
}
}  // namespace detail

/// The dense vector of length `dim` that a sparse feature vector stands for (for tests, analysis
/// and plotting; never on a hot path).
[[nodiscard]] inline Eigen::VectorXd to_dense(const OneHot& phi, std::size_t dim) {
  if (phi.index >= dim) detail::invalid("to_dense: index ", phi.index, " is out of range for dim ", dim);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dim));
  v[static_cast<Eigen::Index>(phi.index)] = 1.0;
  return v;
}

template <int C>
[[nodiscard]] Eigen::VectorXd to_dense(const MultiHot<C>& phi, std::size_t dim) {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dim));
  for (const std::size_t i : phi) {
    if (i >= dim) detail::invalid("to_dense: index ", i, " is out of range for dim ", dim);
    v[static_cast<Eigen::Index>(i)] += 1.0;
  }
  return v;
}

template <detail::DenseVector F>
[[nodiscard]] Eigen::VectorXd to_dense(const Eigen::MatrixBase<F>& phi, std::size_t dim) {
  if (static_cast<std::size_t>(phi.size()) != dim)
    detail::invalid("to_dense: feature vector has size ", phi.size(), ", expected dim ", dim);
  return phi.template cast<double>();
}

namespace detail {

/// Tells a learner that the caller has checked, once, that the features it passes fit the learner's
/// weights (the run loops compare the memory's dim() with the learner's before the first step).
struct FeaturesFit {};
inline constexpr FeaturesFit features_fit{};

/// Tells a learner that the caller has checked that the reward it passes is finite (a loop checks
/// it once per step for all the learners it feeds).
struct RewardFinite {};
inline constexpr RewardFinite reward_finite{};

template <class F>
struct is_multi_hot : std::false_type {};
template <int C>
struct is_multi_hot<MultiHot<C>> : std::true_type {};

/// Throws unless phi fits `dim` weights: an index below dim, a dense vector of length dim. `who`
/// names the public function and `name` the argument. One branch per call for OneHot and dense
/// features, one per active entry for MultiHot; a user's own feature type is not inspected.
template <class F>
void check_fits(const char* who, const char* name, const F& phi, std::size_t dim) {
  if constexpr (std::same_as<F, OneHot>) {
    if (phi.index >= dim) [[unlikely]]
      invalid(who, ": ", name, " has active index ", phi.index, ", out of range for dim ", dim);
  } else if constexpr (is_multi_hot<F>::value) {
    for (const std::size_t i : phi)
      if (i >= dim) [[unlikely]]
        invalid(who, ": ", name, " has active index ", i, ", out of range for dim ", dim);
  } else if constexpr (requires {
                         typename F::Scalar;
                         phi.size();
                       }) {
    if (static_cast<std::size_t>(phi.size()) != dim) [[unlikely]]
      invalid(who, ": ", name, " has size ", phi.size(), ", expected dim ", dim);
  }
}

}  // namespace detail
}  // namespace memtrace
