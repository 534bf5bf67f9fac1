#pragma once
// Pictures of trace space (Figures 2 and 6) and a box-counting estimate of the Minkowski
// dimension of Z_λ (Lemma 4.4). Traces of one-hot observations lie on the affine subspace
// Σ_i z_i = 1 - λ^m (eq. (4)); an orthonormal basis of its directions gives |Y| - 1 coordinates
// in which distances are those of R^|Y|. See docs/theory.md.

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <string>
#include <unordered_set>
#include <vector>

#include "memtrace/analysis/trace_geometry.hpp"
#include "memtrace/env/fwd.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

inline void check_trace_space_observations(const char* who, std::size_t num_observations) {
  check_num_observations(who, num_observations);
  if (num_observations < 2) invalid(who, ": num_observations must be at least 2, got ", num_observations);
}

}  // namespace detail

/// An orthonormal basis of the directions of eq. (4) (the vectors orthogonal to 1), as the
/// columns of a |Y| × (|Y| - 1) matrix: the Helmert basis u_k = (k e_k - Σ_{i<k} e_i) / √(k(k+1)),
/// k = 1, …, |Y| - 1. For |Y| = 3 the vertices e_0, e_1, e_2 land on an upright equilateral triangle
/// (e_0 bottom left, e_1 bottom right, e_2 on top); for |Y| = 4, e_3 sits above that triangle.
/// Refuses |Y| > 2^15 (a dense basis of 8 GB); trace_space_coordinates never forms it.
[[nodiscard]] inline Eigen::MatrixXd trace_space_basis(std::size_t num_observations) {
  detail::check_trace_space_observations("trace_space_basis", num_observations);
  if (num_observations > (std::size_t{1} << 15))
    detail::invalid("trace_space_basis: num_observations must be at most 32768 (a dense |Y| x (|Y| - 1) basis), got ",
                    num_observations);
  const auto n = static_cast<Eigen::Index>(num_observations);
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(n, n - 1);
  for (Eigen::Index k = 1; k < n; ++k) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(k) * static_cast<double>(k + 1));
    u.col(k - 1).head(k).setConstant(-scale);
    u(k, k - 1) = static_cast<double>(k) * scale;
  }
  return u;
}

/// Orthogonal projection of traces (the columns of a |Y| × N matrix, e.g. trace_set) onto
/// eq. (4), in the coordinates of trace_space_basis: the (|Y| - 1) × N matrix uᵀz, computed with
/// running sums in O(|Y| N). The centre of the simplex, 1/|Y|, maps to 0; on each subspace
/// Σ_i z_i = const the map is an isometry.
[[nodiscard]] inline Eigen::MatrixXd trace_space_coordinates(const Eigen::MatrixXd& traces) {
  detail::check_trace_space_observations("trace_space_coordinates", static_cast<std::size_t>(traces.rows()));
  const Eigen::Index n = traces.rows();
  Eigen::MatrixXd c(n - 1, traces.cols());
  for (Eigen::Index j = 0; j < traces.cols(); ++j) {
    double older = 0.0;  // Σ_{i<k} z_i
    for (Eigen::Index k = 1; k < n; ++k) {
      older += traces(k - 1, j);
      const auto kd = static_cast<double>(k);
      c(k - 1, j) = (kd * traces(k, j) - older) / std::sqrt(kd * (kd + 1.0));
    }
  }
  return c;
}

/// The number of boxes [k_i ε - o_i, (k_i + 1) ε - o_i) (integers k_i) of the grid of side ε shifted
/// by -offset that hold at least one of the points (columns). Counted with a hash set of the
/// integer box coordinates. An empty offset means 0.
[[nodiscard]] inline std::size_t count_boxes(const Eigen::MatrixXd& points, double epsilon,
                                             const Eigen::VectorXd& offset = {}) {
  if (!(epsilon > 0.0 && std::isfinite(epsilon)))
    detail::invalid("count_boxes: epsilon must be positive and finite, got ", epsilon);
  const Eigen::Index dims = points.rows(), count = points.cols();
  if (offset.size() != 0 && offset.size() != dims)
    detail::invalid("count_boxes: offset must have one entry per row of points (", dims, "), got ", offset.size());
  for (Eigen::Index i = 0; i < offset.size(); ++i)
    if (!std::isfinite(offset[i])) detail::invalid("count_boxes: offset[", i, "] must be finite, got ", offset[i]);
  if (count == 0) return 0;
  if (dims == 0) return 1;
  const auto d = static_cast<std::size_t>(dims);
  const double* data = points.data();  // column-major: point j is data[j d .. j d + d)
  std::vector<double> shift(d, 0.0);
  for (std::size_t i = 0; i < d && offset.size() != 0; ++i) shift[i] = offset[static_cast<Eigen::Index>(i)];
  // The range of box coordinates in each dimension (floor is monotone, so the extreme points give
  // it), refusing coordinates that are not finite or that an int64 cannot hold.
  constexpr double limit = 4.0e18;
  std::vector<std::int64_t> lo(d), hi(d);
  for (std::size_t i = 0; i < d; ++i) {
    std::size_t low = 0, high = 0;
    for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
      const double x = data[j * d + i];
      if (!std::isfinite(x)) detail::invalid("count_boxes: coordinate ", x, " of point ", j, " is not finite");
      if (x < data[low * d + i]) low = j;
      if (x > data[high * d + i]) high = j;
    }
    for (const std::size_t j : {low, high}) {
      const double k = std::floor((data[j * d + i] + shift[i]) / epsilon);
      if (!(std::abs(k) < limit))
        detail::invalid("count_boxes: coordinate ", data[j * d + i], " of point ", j,
                        " is too large for epsilon = ", epsilon);
    }
    lo[i] = static_cast<std::int64_t>(std::floor((data[low * d + i] + shift[i]) / epsilon));
    hi[i] = static_cast<std::int64_t>(std::floor((data[high * d + i] + shift[i]) / epsilon));
  }
  // A mixed-radix number over the occupied range is one 64-bit key when the range fits (the
  // common case); otherwise the key is the bytes of the coordinates.
  std::vector<std::uint64_t> stride(d);
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < d && total != 0; ++i) {
    stride[i] = total;
    total = detail::checked_mul(total, static_cast<std::uint64_t>(hi[i] - lo[i]) + 1);
  }
  if (total != 0) {
    std::unordered_set<std::uint64_t> occupied;
    occupied.reserve(static_cast<std::size_t>(count));
    for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
      std::uint64_t key = 0;
      for (std::size_t i = 0; i < d; ++i) {
        const auto box = static_cast<std::int64_t>(std::floor((data[j * d + i] + shift[i]) / epsilon));
        key += static_cast<std::uint64_t>(box - lo[i]) * stride[i];
      }
      occupied.insert(key);
    }
    return occupied.size();
  }
  std::unordered_set<std::string> occupied;
  occupied.reserve(static_cast<std::size_t>(count));
  std::vector<std::int64_t> box(d);
  std::string key(d * sizeof(std::int64_t), '\0');
  for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
    for (std::size_t i = 0; i < d; ++i)
      box[i] = static_cast<std::int64_t>(std::floor((data[j * d + i] + shift[i]) / epsilon));
    std::memcpy(key.data(), box.data(), key.size());
    occupied.insert(key);
  }
  return occupied.size();
}

/// Settings of box_counting_dimension. The box sides run geometrically from epsilon_max down to
/// epsilon_min; Z_λ is approximated by Z_λ^m with the smallest m whose Hausdorff distance to Z_λ,
/// at most λ^m √(1 - 1/|Y|) in trace space, is below approximation · epsilon_min. N(ε) is the
/// smallest count over num_offsets shifted grids (see box_counting_dimension).
struct BoxCountingOptions {
  double epsilon_max = 0.1;
  double epsilon_min = 0.002;
  std::size_t num_epsilons = 12;
  std::size_t num_offsets = 8;
  double approximation = 0.25;
  std::size_t max_points = std::size_t{1} << 20;  ///< refuse |Y|^m above this, before allocating
};

/// Box counts of Z_λ and the least-squares fit log N(ε) ≈ intercept + dimension · log(1/ε).
struct BoxCountingEstimate {
  double dimension = 0.0;  ///< the slope: the estimate of dim(Z_λ)
  double intercept = 0.0;
  std::size_t length = 0;  ///< m: the points counted are Z_λ^m
  std::vector<double> epsilons;
  std::vector<std::size_t> counts;
};

/// The smallest m >= 1 with λ^m √(1 - 1/|Y|) <= approximation · epsilon_min: then every point of
/// Z_λ is that close to a point of Z_λ^m (the trace of its length-m window) in trace space, and back.
[[nodiscard]] inline std::size_t box_counting_length(double lambda, std::size_t num_observations, double epsilon_min,
                                                     double approximation = 0.25) {
  detail::check_lambda("box_counting_length", lambda);
  detail::check_trace_space_observations("box_counting_length", num_observations);
  if (!(epsilon_min > 0.0 && std::isfinite(epsilon_min)))
    detail::invalid("box_counting_length: epsilon_min must be positive and finite, got ", epsilon_min);
  if (!(approximation > 0.0 && std::isfinite(approximation)))
    detail::invalid("box_counting_length: approximation must be positive and finite, got ", approximation);
  const double radius = std::sqrt(1.0 - 1.0 / static_cast<double>(num_observations));
  const double target = approximation * epsilon_min / radius;
  if (lambda == 0.0 || target >= lambda) return 1;
  // λ^m <= target for m >= log(target) / log(λ); step to the exact boundary of the rounded guess.
  auto m = static_cast<std::size_t>(std::ceil(std::log(target) / std::log(lambda)));
  while (m > 1 && std::pow(lambda, static_cast<double>(m - 1)) <= target) --m;
  while (std::pow(lambda, static_cast<double>(m)) > target) ++m;
  return m;
}

/// Estimates the Minkowski dimension of Z_λ (one-hot, |Y| observations) by box counting:
/// N(ε) = count_boxes of the points of Z_λ^m in trace-space coordinates (|Y| - 1 of them, where
/// the boxes are cubes of the set's own subspace), for options.num_epsilons sides from
/// epsilon_max down to epsilon_min, and the least-squares slope of log N(ε) against log(1/ε).
/// N(ε) is the minimum over grids shifted by ε frac(s frac((i + 1) φ)) in coordinate i,
/// s = 0, …, num_offsets - 1 (φ the golden ratio): one fixed grid cuts a cluster smaller than ε
/// into 1 to 2^{|Y|-1} boxes depending on where it falls, which biases the slope.
/// Lemma 4.4: the slope tends to d_λ for λ < 1/2, and dim(Z_λ) <= min{|Y| - 1, d_λ}.
[[nodiscard]] inline BoxCountingEstimate box_counting_dimension(double lambda, std::size_t num_observations,
                                                                const BoxCountingOptions& options = {}) {
  constexpr const char* who = "box_counting_dimension";
  detail::check_lambda(who, lambda);
  detail::check_trace_space_observations(who, num_observations);
  if (!(options.epsilon_min > 0.0 && std::isfinite(options.epsilon_min)))
    detail::invalid(who, ": epsilon_min must be positive and finite, got ", options.epsilon_min);
  if (!(options.epsilon_max > options.epsilon_min && std::isfinite(options.epsilon_max)))
    detail::invalid(who, ": epsilon_max must be finite and above epsilon_min = ", options.epsilon_min, ", got ",
                    options.epsilon_max);
  if (options.num_epsilons < 2) detail::invalid(who, ": num_epsilons must be at least 2, got ", options.num_epsilons);
  if (options.num_offsets < 1) detail::invalid(who, ": num_offsets must be at least 1, got ", options.num_offsets);
  if (!(options.approximation > 0.0 && std::isfinite(options.approximation)))
    detail::invalid(who, ": approximation must be positive and finite, got ", options.approximation);

  BoxCountingEstimate result;
  result.length = box_counting_length(lambda, num_observations, options.epsilon_min, options.approximation);
  const std::size_t points = detail::checked_pow(num_observations, result.length);  // 0: overflow
  if (points == 0 || points > options.max_points)
    detail::invalid(who, ": Z_lambda^m with lambda = ", lambda, ", |Y| = ", num_observations,
                    " and m = ", result.length, " (for epsilon_min = ", options.epsilon_min, ") has ", num_observations,
                    "^", result.length, " points, more than max_points = ", options.max_points);
  const Eigen::MatrixXd coordinates = trace_space_coordinates(
      trace_set(lambda, num_observations, result.length, std::numeric_limits<std::size_t>::max()));

  // ε_k = ε_max (ε_min / ε_max)^{k / (K - 1)}, and the regression of y = log N on x = log(1/ε).
  const double ratio = std::log(options.epsilon_min / options.epsilon_max);
  const auto k_last = static_cast<double>(options.num_epsilons - 1);
  double mean_x = 0.0, mean_y = 0.0;
  for (std::size_t k = 0; k < options.num_epsilons; ++k) {
    const double epsilon = k + 1 == options.num_epsilons
                               ? options.epsilon_min
                               : options.epsilon_max * std::exp(ratio * static_cast<double>(k) / k_last);
    std::size_t fewest = count_boxes(coordinates, epsilon);
    for (std::size_t s = 1; s < options.num_offsets; ++s) {
      Eigen::VectorXd offset(coordinates.rows());
      for (Eigen::Index i = 0; i < offset.size(); ++i) {
        const double direction = std::fmod(static_cast<double>(i + 1) * std::numbers::phi, 1.0);
        offset[i] = epsilon * std::fmod(static_cast<double>(s) * direction, 1.0);
      }
      const std::size_t count = count_boxes(coordinates, epsilon, offset);
      if (count < fewest) fewest = count;
    }
    result.epsilons.push_back(epsilon);
    result.counts.push_back(fewest);
    mean_x += -std::log(epsilon);
    mean_y += std::log(static_cast<double>(result.counts.back()));
  }
  const auto size = static_cast<double>(options.num_epsilons);
  mean_x /= size;
  mean_y /= size;
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t k = 0; k < options.num_epsilons; ++k) {
    const double dx = -std::log(result.epsilons[k]) - mean_x;
    sxy += dx * (std::log(static_cast<double>(result.counts[k])) - mean_y);
    sxx += dx * dx;
  }
  result.dimension = sxy / sxx;
  result.intercept = mean_y - result.dimension * mean_x;
  return result;
}

}  // namespace memtrace
