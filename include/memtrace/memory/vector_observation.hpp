#pragma once
// What the memories of vector observations share: which types count as a vector observation (a
// dense Eigen column vector, or a MultiHot sum of unit vectors), and the checks that refuse a bad
// one before the memory changes (the strong guarantee). See docs/memory.md.

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <type_traits>

#include "memtrace/features.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace::detail {

/// The scalar types memories over real vectors compute in.
template <class S>
concept TraceScalar = std::same_as<S, float> || std::same_as<S, double>;

/// Anything that is not an index observation (what index-only memories refuse with a message): a
/// vector, and also a real number, which would otherwise convert to an index silently.
template <class Y>
concept NotObservationIndex = !std::integral<std::remove_cvref_t<Y>>;

/// A dense column-vector expression D (the Derived of Eigen::MatrixBase<D>) with entries of type S.
template <class D, class S>
concept DenseObservationOf = D::ColsAtCompileTime == 1 && std::same_as<typename D::Scalar, S>;

/// A dense column-vector expression whose entries are of another floating-point type than S.
template <class D, class S>
concept DenseObservationNotOf =
    D::ColsAtCompileTime == 1 && std::floating_point<typename D::Scalar> && !std::same_as<typename D::Scalar, S>;

/// Whether an Eigen compile-time size N (or Eigen::Dynamic) fits a dimension fixed to `Fixed`
/// (memtrace::dynamic when only known at run time; both sentinels are -1).
template <int N, int Fixed>
inline constexpr bool size_fits = N == Eigen::Dynamic || Fixed == dynamic || N == Fixed;

/// A dense observation for a memory of scalar S and dimension fixed to `Fixed` (or dynamic): a
/// column-vector expression of S whose compile-time size, if it has one, is Fixed.
template <class D, class S, int Fixed>
concept DenseObservationFor = DenseObservationOf<D, S> && size_fits<D::SizeAtCompileTime, Fixed>;

/// The Eigen size of a memtrace size: Eigen::Dynamic for memtrace::dynamic.
constexpr int eigen_size(int size) noexcept { return size == dynamic ? Eigen::Dynamic : size; }

/// Throws unless y has `dim` entries, all finite. `who` names the public function.
template <class D>
void check_dense_observation(const char* who, const Eigen::MatrixBase<D>& y, std::size_t dim) {
  if (static_cast<std::size_t>(y.size()) != dim) [[unlikely]]
    invalid(who, ": observation has size ", y.size(), ", expected ", dim);
  // x - x is 0 for a finite x and NaN otherwise, so the sum is 0 exactly when every entry is finite
  // (a vectorised sum of zeros, unlike allFinite's entry-by-entry loop; no overflow either).
  if (!((y.array() - y.array()).sum() == typename D::Scalar(0))) [[unlikely]] {
    for (Eigen::Index i = 0; i < y.size(); ++i)
      if (!std::isfinite(y.coeff(i)))
        invalid(who, ": observation[", i, "] is ", y.coeff(i), ", expected a finite number");
  }
}

/// Throws unless every active index of y is below `dim` and y has at most `max_active` entries.
template <int C>
void check_multi_hot_observation(const char* who, const MultiHot<C>& y, std::size_t dim,
                                 std::size_t max_active = static_cast<std::size_t>(-1)) {
  if (y.size() > max_active) [[unlikely]]
    invalid(who, ": observation has ", y.size(), " active entries, at most ", max_active, " fit");
  for (const std::size_t i : y)
    if (i >= dim) [[unlikely]]
      invalid(who, ": observation has active index ", i, ", out of range [0, ", dim, ")");
}

}  // namespace memtrace::detail
