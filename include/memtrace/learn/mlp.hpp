#pragma once
// A multilayer perceptron on Eigen for the control learners (the paper's PPO agent, §6): tanh
// hidden layers and a linear output, batched forward and backward as matrix products, a first
// layer that also takes multi-hot inputs at the cost of their active entries, and jax's orthogonal
// initialisation. See docs/learners.md ("Neural networks for control").

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <ranges>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "memtrace/features.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

template <class T>
inline constexpr bool is_multi_hot_column = false;
template <int C>
inline constexpr bool is_multi_hot_column<MultiHot<C>> = true;

/// A batch of multi-hot inputs, one column each: a sized random-access range of MultiHot
/// (std::span<const MultiHot<C>>, std::vector<MultiHot<C>>, std::array, ...).
template <class B>
concept MultiHotBatch = std::ranges::random_access_range<const B> && std::ranges::sized_range<const B> &&
    is_multi_hot_column<std::remove_cv_t<std::ranges::range_value_t<const B>>>;

/// "{90, 64, 64, 3}" for messages.
inline std::string list_sizes(std::span<const std::size_t> sizes) {
  std::ostringstream out;
  out << '{';
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i == 0 ? "" : ", ") << sizes[i];
  out << '}';
  return out.str();
}

/// The layer sizes {input_dim, hidden..., out} of an actor or a critic MLP, checked for the network
/// `who` (its output named `out_name` in the message: num_actions, action_dim).
[[nodiscard]] inline std::vector<std::size_t> head_sizes(const char* who, std::size_t input_dim,
                                                         std::span<const std::size_t> hidden, std::size_t out,
                                                         const char* out_name) {
  if (input_dim == 0) invalid(who, ": input_dim must be at least 1, got 0");
  if (out == 0) invalid(who, ": ", out_name, " must be at least 1, got 0");
  for (std::size_t l = 0; l < hidden.size(); ++l)
    if (hidden[l] == 0) invalid(who, ": hidden_sizes[", l, "] must be at least 1, got 0");
  std::vector<std::size_t> s;
  s.reserve(hidden.size() + 2);
  s.push_back(input_dim);
  s.insert(s.end(), hidden.begin(), hidden.end());
  s.push_back(out);
  return s;
}

/// True for a dynamic-size column-major expression whose columns lie one after another in memory:
/// a Matrix, a Map without strides, a block of whole columns of either. Mlp reads such inputs
/// through one Map type, so that each of its products is instantiated once for every kind of input
/// (about 1 s of a PPO program's compile time, docs/design.md). Only dynamic sizes: Eigen picks a
/// product's kernel by them, so the Map computes the same numbers as the expression it replaces.
template <class T>
inline constexpr bool contiguous_columns = false;
template <class S, int O, int MR, int MC>
inline constexpr bool contiguous_columns<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, O, MR, MC>> =
    (O & Eigen::RowMajor) == 0;
template <class M, int O>
inline constexpr bool contiguous_columns<Eigen::Map<M, O, Eigen::Stride<0, 0>>> =
    contiguous_columns<std::remove_const_t<M>>;
template <class X>
inline constexpr bool contiguous_columns<Eigen::Block<X, Eigen::Dynamic, Eigen::Dynamic, true>> =
    contiguous_columns<std::remove_const_t<X>>;

/// Q of A = QR with R's diagonal made non-negative (column j of Q times sign(R_jj), +1 when
/// R_jj = 0), for A of shape n x k, n >= k: the thin Q (n x k) that LAPACK's geqrf + orgqr give
/// up to rounding. Householder reflections applied one at a time in plain loops, because Eigen's
/// blocked HouseholderQR was about a quarter of a PPO program's compile time (docs/design.md). A is
/// overwritten with the reflectors. The norms are summed unscaled: fine for the standard normal
/// draws it is given, not for entries near overflow or underflow.
[[nodiscard]] inline Eigen::MatrixXd orthonormal_q(Eigen::MatrixXd& a) {
  const Eigen::Index n = a.rows(), k = a.cols();
  eigen_assert(n >= k && "orthonormal_q: A must have at least as many rows as columns");
  std::vector<double> tau(static_cast<std::size_t>(k)), sign(static_cast<std::size_t>(k));
  // Column c of m times H_j = I - t v vᵀ, v = (1, a(j+1:n, j)) below row j (rows < j unchanged).
  const auto reflect = [&](Eigen::MatrixXd& m, Eigen::Index j, double t, Eigen::Index c) {
    double w = m(j, c);
    for (Eigen::Index i = j + 1; i < n; ++i) w += a(i, j) * m(i, c);
    w *= t;
    m(j, c) -= w;
    for (Eigen::Index i = j + 1; i < n; ++i) m(i, c) -= w * a(i, j);
  };
  for (Eigen::Index j = 0; j < k; ++j) {
    // H_j = I - tau_j v vᵀ with v = (1, a(j+1:n, j)) maps a(j:n, j) to beta e_1 (LAPACK's dlarfg).
    double tail2 = 0.0;
    for (Eigen::Index i = j + 1; i < n; ++i) tail2 += a(i, j) * a(i, j);
    const double alpha = a(j, j);
    double t = 0.0, beta = alpha;  // nothing below the diagonal: H_j = I
    if (tail2 > 0.0) {
      const double norm = std::sqrt(alpha * alpha + tail2);
      beta = alpha >= 0.0 ? -norm : norm;
      t = (beta - alpha) / beta;
      const double scale = 1.0 / (alpha - beta);
      for (Eigen::Index i = j + 1; i < n; ++i) a(i, j) *= scale;
    }
    tau[static_cast<std::size_t>(j)] = t;
    sign[static_cast<std::size_t>(j)] = beta < 0.0 ? -1.0 : 1.0;  // R_jj = beta
    for (Eigen::Index c = j + 1; c < k; ++c) reflect(a, j, t, c);
  }
  // Q = H_0 ... H_{k-1} [I; 0], accumulated from the last reflector: H_j acts on rows >= j only,
  // and columns < j are still e_c, which H_j leaves unchanged.
  Eigen::MatrixXd q = Eigen::MatrixXd::Identity(n, k);
  for (Eigen::Index j = k - 1; j >= 0; --j)
    for (Eigen::Index c = j; c < k; ++c) reflect(q, j, tau[static_cast<std::size_t>(j)], c);
  for (Eigen::Index j = 0; j < k; ++j)
    if (sign[static_cast<std::size_t>(j)] < 0.0)
      for (Eigen::Index i = 0; i < n; ++i) q(i, j) = -q(i, j);
  return q;
}

}  // namespace detail

/// A multilayer perceptron x -> W_L tanh(... tanh(W_1 x + b_1) ...) + b_L with layer sizes
/// {d, h_1, ..., h_{L-1}, out} given at run time, in float (the default, as the paper's JAX code) or
/// double (for finite-difference tests).
///
/// Layout: weights W_l are (out x in), column-major; a batch is (features x batch), one sample per
/// COLUMN. All parameters live in one flat vector (per layer: W_l column by column, then b_l), and
/// the gradients in another of the same layout, so an optimiser and global-norm clipping see one
/// contiguous vector; weights(l), bias(l) and their gradients are Eigen::Map views into them.
///
/// forward(x) keeps the activations; backward(x, dL/dy) then overwrites the gradients with those of
/// the loss L whose derivative with respect to the last forward's output is dL/dy. The input x is
/// dense (an Eigen matrix, d rows) or a batch of MultiHot columns (first-layer cost proportional to
/// the active entries). Workspace grows to the largest batch seen and is then reused: forward and
/// backward allocate nothing for a batch no larger than an earlier one (or than reserve()).
/// An Mlp is not safe to use from two threads at once (forward writes its workspace).
template <class Scalar = float>
class Mlp {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Mlp: Scalar must be float or double");

 public:
  using scalar_type = Scalar;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using MatrixMap = Eigen::Map<Matrix>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;
  using VectorMap = Eigen::Map<Vector>;
  using ConstVectorMap = Eigen::Map<const Vector>;

  /// Layer sizes {d, h_1, ..., out}: at least two, each at least 1. Parameters and gradients start at
  /// zero; call initialize_orthogonal (or write parameters()) before use.
  explicit Mlp(std::span<const std::size_t> layer_sizes) : sizes_(checked_sizes(layer_sizes)) {
    offsets_.reserve(sizes_.size());
    Eigen::Index offset = 0;
    for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
      offsets_.push_back(offset);
      offset += static_cast<Eigen::Index>((sizes_[l] + 1) * sizes_[l + 1]);
    }
    offsets_.push_back(offset);
    params_ = Vector::Zero(offset);
    grads_ = Vector::Zero(offset);
    activations_.resize(num_layers());
    deltas_.resize(num_layers());
  }
  Mlp(std::initializer_list<std::size_t> layer_sizes) : Mlp(std::span(layer_sizes.begin(), layer_sizes.size())) {}

  [[nodiscard]] std::span<const std::size_t> sizes() const noexcept { return sizes_; }
  /// The number of weight layers L (one less than the number of sizes).
  [[nodiscard]] std::size_t num_layers() const noexcept { return sizes_.size() - 1; }
  [[nodiscard]] std::size_t input_dim() const noexcept { return sizes_.front(); }
  [[nodiscard]] std::size_t output_dim() const noexcept { return sizes_.back(); }
  /// Σ_l (in_l + 1) out_l: weights and biases.
  [[nodiscard]] std::size_t num_parameters() const noexcept { return static_cast<std::size_t>(params_.size()); }

  /// All parameters, flat (per layer: W_l column-major, then b_l).
  [[nodiscard]] VectorMap parameters() noexcept { return VectorMap(params_.data(), params_.size()); }
  [[nodiscard]] ConstVectorMap parameters() const noexcept { return ConstVectorMap(params_.data(), params_.size()); }
  /// The gradients of the last backward, in the layout of parameters().
  [[nodiscard]] VectorMap gradients() noexcept { return VectorMap(grads_.data(), grads_.size()); }
  [[nodiscard]] ConstVectorMap gradients() const noexcept { return ConstVectorMap(grads_.data(), grads_.size()); }

  /// W_l, (sizes[l+1] x sizes[l]), for layer l in [0, num_layers()).
  [[nodiscard]] MatrixMap weights(std::size_t layer) {
    return weight_view<MatrixMap>(params_.data(), "weights", layer);
  }
  [[nodiscard]] ConstMatrixMap weights(std::size_t layer) const {
    return weight_view<ConstMatrixMap>(params_.data(), "weights", layer);
  }
  [[nodiscard]] VectorMap bias(std::size_t layer) { return bias_view<VectorMap>(params_.data(), "bias", layer); }
  [[nodiscard]] ConstVectorMap bias(std::size_t layer) const {
    return bias_view<ConstVectorMap>(params_.data(), "bias", layer);
  }
  /// Calls visit(prefix + ".l.weight", W_l) and visit(prefix + ".l.bias", b_l) for every layer l,
  /// PyTorch's names for an nn.Linear stack (a weights file's tensors, learn/ppo_weights.hpp).
  template <class Visit>
  void named_blocks(const std::string& prefix, Visit&& visit) {
    for (std::size_t l = 0; l < num_layers(); ++l) {
      visit(prefix + "." + std::to_string(l) + ".weight", weights(l));
      visit(prefix + "." + std::to_string(l) + ".bias", bias(l));
    }
  }
  template <class Visit>
  void named_blocks(const std::string& prefix, Visit&& visit) const {
    for (std::size_t l = 0; l < num_layers(); ++l) {
      visit(prefix + "." + std::to_string(l) + ".weight", weights(l));
      visit(prefix + "." + std::to_string(l) + ".bias", bias(l));
    }
  }
  /// Its hidden sizes, "64,64" ("" for none): a weights file's metadata.
  [[nodiscard]] std::string hidden_text() const {
    std::string out;
    for (std::size_t l = 1; l + 1 < sizes_.size(); ++l) out += (out.empty() ? "" : ",") + std::to_string(sizes_[l]);
    return out;
  }
  /// dL/dW_l and dL/db_l of the last backward.
  [[nodiscard]] MatrixMap weight_gradient(std::size_t layer) {
    return weight_view<MatrixMap>(grads_.data(), "weight_gradient", layer);
  }
  [[nodiscard]] ConstMatrixMap weight_gradient(std::size_t layer) const {
    return weight_view<ConstMatrixMap>(grads_.data(), "weight_gradient", layer);
  }
  [[nodiscard]] VectorMap bias_gradient(std::size_t layer) {
    return bias_view<VectorMap>(grads_.data(), "bias_gradient", layer);
  }
  [[nodiscard]] ConstVectorMap bias_gradient(std::size_t layer) const {
    return bias_view<ConstVectorMap>(grads_.data(), "bias_gradient", layer);
  }

  /// jax.nn.initializers.orthogonal for every kernel (flax's (in x out) kernel K = W_lᵀ), one gain
  /// per layer; biases zero. Layer by layer, A (max(in,out) x min(in,out)) is filled column by column
  /// with standard_normal(gen) in double; A = QR (Householder, thin Q); column j of Q times
  /// sign(R_jj) (+1 when R_jj = 0); K = Q if in >= out, else Qᵀ; W_l = gain_l Kᵀ.
  /// PPO's gains: √2 for hidden layers, 0.01 for the actor head, 1 for the critic head.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen, std::span<const double> gains) {
    if (gains.size() != num_layers())
      detail::invalid("Mlp::initialize_orthogonal: gains must hold one gain per layer (", num_layers(), "), got ",
                      gains.size());
    for (std::size_t l = 0; l < gains.size(); ++l)
      if (!std::isfinite(gains[l]))
        detail::invalid("Mlp::initialize_orthogonal: gains[", l, "] must be finite, got ", gains[l]);
    Vector fresh = Vector::Zero(params_.size());  // assigned at the end: a throw changes nothing
    for (std::size_t l = 0; l < num_layers(); ++l) {
      const auto in = static_cast<Eigen::Index>(sizes_[l]), out = static_cast<Eigen::Index>(sizes_[l + 1]);
      const Eigen::Index n = std::max(in, out), k = std::min(in, out);
      Eigen::MatrixXd a(n, k);
      for (Eigen::Index j = 0; j < k; ++j)
        for (Eigen::Index i = 0; i < n; ++i) a(i, j) = standard_normal(gen);
      const Eigen::MatrixXd q = detail::orthonormal_q(a);
      MatrixMap w(fresh.data() + offsets_[l], out, in);
      if (in >= out)
        w = (gains[l] * q.transpose()).template cast<Scalar>();
      else
        w = (gains[l] * q).template cast<Scalar>();
    }
    params_ = fresh;
  }
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen, std::initializer_list<double> gains) {
    initialize_orthogonal(gen, std::span(gains.begin(), gains.size()));
  }

  /// Makes room for batches of up to `batch` columns now, so that later calls do not allocate.
  void reserve(std::size_t batch) { ensure_capacity("Mlp::reserve", batch); }

  /// The output (output_dim x batch) for a dense input (input_dim x batch): Z_l = W_l A_{l-1} + b_l,
  /// A_l = tanh(Z_l) for hidden layers, A_L = Z_L. Pass a plain matrix, a Map or a block of
  /// contiguous columns: a general expression is first evaluated into a temporary.
  template <class Derived>
  ConstMatrixMap forward(const Eigen::MatrixBase<Derived>& input) {
    static_assert(std::same_as<typename Derived::Scalar, Scalar>,
                  "Mlp::forward: the input's scalar type must be the network's (use .cast<float>())");
    check_dense_input("Mlp::forward", input.rows());
    const Eigen::Index batch = input.cols();
    ensure_capacity("Mlp::forward", static_cast<std::size_t>(batch));
    auto z = activation(0, batch);
    z.noalias() = weights(0) * product_operand(input);
    z.colwise() += bias(0);
    return forward_from(0, batch);
  }

  /// The output for a batch of MultiHot columns, each the sum of the unit vectors at its indices
  /// (all < input_dim): the first layer gathers and adds the active columns of W_1, so it costs
  /// O(active entries x h_1) instead of O(input_dim x h_1). Equal to forward(dense) up to rounding.
  template <detail::MultiHotBatch Batch>
  ConstMatrixMap forward(const Batch& input) {
    check_sparse_input("Mlp::forward", input);
    const auto batch = static_cast<Eigen::Index>(std::ranges::size(input));
    ensure_capacity("Mlp::forward", static_cast<std::size_t>(batch));
    auto z = activation(0, batch);
    const auto w = weights(0);
    const auto b = bias(0);
    const Eigen::Index rows = z.rows(), blocked = rows - rows % block_rows;
    auto column = std::ranges::begin(input);
    for (Eigen::Index j = 0; j < batch; ++j, ++column) {
      // Block by block of rows, so that the partial sum stays in registers while the active
      // columns of W stream past (measured 1.9x faster than adding whole columns into z).
      for (Eigen::Index r = 0; r < blocked; r += block_rows) {
        RowBlock sum = b.template segment<block_rows>(r);
        for (const std::size_t i : *column) sum += w.col(static_cast<Eigen::Index>(i)).template segment<block_rows>(r);
        z.col(j).template segment<block_rows>(r) = sum;
      }
      if (blocked < rows) {
        auto tail = z.col(j).segment(blocked, rows - blocked);
        tail = b.segment(blocked, rows - blocked);
        for (const std::size_t i : *column)
          tail += w.col(static_cast<Eigen::Index>(i)).segment(blocked, rows - blocked);
      }
    }
    return forward_from(0, batch);
  }

  /// The output of the last forward (output_dim x batch).
  [[nodiscard]] ConstMatrixMap output() const {
    return ConstMatrixMap(activations_.back().data(), static_cast<Eigen::Index>(output_dim()), batch_ < 0 ? 0 : batch_);
  }

  /// Overwrites gradients() with dL/dθ, given the input of the last forward and dL/dy for its output
  /// (output_dim x batch). Layer by layer, from the top, with δ_L = dL/dy:
  ///   dW_l = δ_l A_{l-1}ᵀ,  db_l = δ_l 1 (row sums),  δ_{l-1} = (W_lᵀ δ_l) ⊙ (1 - A_{l-1}²),
  /// where A_0 = x; dL/dx = W_1ᵀ δ_1 is not computed (see the overload with d_input).
  template <class X, class DY>
  void backward(const Eigen::MatrixBase<X>& input, const Eigen::MatrixBase<DY>& d_output) {
    static_assert(std::same_as<typename X::Scalar, Scalar> && std::same_as<typename DY::Scalar, Scalar>,
                  "Mlp::backward: input and d_output must have the network's scalar type");
    check_backward("Mlp::backward", d_output.rows(), d_output.cols());
    check_dense_input("Mlp::backward", input.rows());
    check_batch("Mlp::backward", "input", input.cols());
    backward_to_first(d_output);
    const auto d1 = delta(0, batch_);
    weight_gradient(0).noalias() = d1 * product_operand(input).transpose();
    bias_gradient(0) = d1.rowwise().sum();
  }

  /// backward(input, d_output), and also d_input = dL/dx = W_1ᵀ δ_1 (input_dim x batch; resized,
  /// so a caller-owned matrix of the right size is reused without allocating).
  template <class X, class DY>
  void backward(const Eigen::MatrixBase<X>& input, const Eigen::MatrixBase<DY>& d_output, Matrix& d_input) {
    backward(input, d_output);
    d_input.resize(static_cast<Eigen::Index>(input_dim()), batch_);
    d_input.noalias() = weights(0).transpose() * delta(0, batch_);
  }

  /// backward for a MultiHot batch: dW_1 is zeroed and column j of δ_1 is added to the columns of
  /// the active inputs of sample j (a scatter-add: O(active entries x h_1)).
  template <detail::MultiHotBatch Batch, class DY>
  void backward(const Batch& input, const Eigen::MatrixBase<DY>& d_output) {
    static_assert(std::same_as<typename DY::Scalar, Scalar>,
                  "Mlp::backward: d_output must have the network's scalar type");
    check_backward("Mlp::backward", d_output.rows(), d_output.cols());
    check_sparse_input("Mlp::backward", input);
    check_batch("Mlp::backward", "input", static_cast<Eigen::Index>(std::ranges::size(input)));
    backward_to_first(d_output);
    const auto d1 = delta(0, batch_);
    auto dw = weight_gradient(0);
    dw.setZero();
    const Eigen::Index rows = dw.rows(), blocked = rows - rows % block_rows;
    auto column = std::ranges::begin(input);
    for (Eigen::Index j = 0; j < batch_; ++j, ++column) {
      for (Eigen::Index r = 0; r < blocked; r += block_rows) {  // δ's block stays in registers
        const RowBlock d = d1.col(j).template segment<block_rows>(r);
        for (const std::size_t i : *column) dw.col(static_cast<Eigen::Index>(i)).template segment<block_rows>(r) += d;
      }
      if (blocked < rows)
        for (const std::size_t i : *column)
          dw.col(static_cast<Eigen::Index>(i)).segment(blocked, rows - blocked) +=
              d1.col(j).segment(blocked, rows - blocked);
    }
    bias_gradient(0) = d1.rowwise().sum();
  }

 private:
  /// Rows of the sparse first layer handled at once: 128 bytes, a partial sum that fits in registers.
  static constexpr int block_rows = static_cast<int>(128 / sizeof(Scalar));
  using RowBlock = Eigen::Matrix<Scalar, block_rows, 1>;

  static std::vector<std::size_t> checked_sizes(std::span<const std::size_t> sizes) {
    if (sizes.size() < 2)
      detail::invalid("Mlp: sizes must hold at least 2 layer sizes (input and output), got ", sizes.size());
    constexpr std::size_t max_count = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) /
                                      (2 * sizeof(Scalar));  // parameters and gradients, in bytes
    for (std::size_t l = 0; l < sizes.size(); ++l)
      if (sizes[l] == 0)
        detail::invalid("Mlp: sizes[", l, "] must be at least 1, got 0 (sizes ", detail::list_sizes(sizes), ")");
    std::size_t count = 0;
    for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
      const std::size_t layer =
          sizes[l] == std::numeric_limits<std::size_t>::max() ? 0 : detail::checked_mul(sizes[l] + 1, sizes[l + 1]);
      if (layer == 0 || layer > max_count - count)
        detail::invalid("Mlp: sizes ", detail::list_sizes(sizes), " need more than ", max_count,
                        " parameters, which would not fit in memory");
      count += layer;
    }
    if (count > default_max_bytes / (2 * sizeof(Scalar)))
      detail::invalid("Mlp: sizes ", detail::list_sizes(sizes), " need ", count, " parameters (",
                      detail::two_decimals(static_cast<double>(count) * 2.0 * sizeof(Scalar) / (1 << 30)),
                      " GiB with their gradients), more than the ",
                      detail::two_decimals(static_cast<double>(default_max_bytes) / (1 << 30)),
                      " GiB one array may take (memtrace::default_max_bytes); refused before allocating");
    return {sizes.begin(), sizes.end()};
  }

  void check_layer(const char* who, std::size_t layer) const {
    if (layer >= num_layers()) detail::invalid("Mlp::", who, ": layer must be in [0, ", num_layers(), "), got ", layer);
  }
  /// W_l or b_l inside `base` (the parameters or the gradients), as a Map of type M.
  template <class M, class Pointer>
  M weight_view(Pointer base, const char* who, std::size_t layer) const {
    check_layer(who, layer);
    return M(base + offsets_[layer], static_cast<Eigen::Index>(sizes_[layer + 1]),
             static_cast<Eigen::Index>(sizes_[layer]));
  }
  template <class M, class Pointer>
  M bias_view(Pointer base, const char* who, std::size_t layer) const {
    check_layer(who, layer);
    const auto out = static_cast<Eigen::Index>(sizes_[layer + 1]);
    return M(base + offsets_[layer + 1] - out, out);
  }

  void check_dense_input(const char* who, Eigen::Index rows) const {
    if (rows != static_cast<Eigen::Index>(input_dim()))
      detail::invalid(who, ": input has ", rows, " rows, expected input_dim = ", input_dim());
  }
  template <class Batch>
  void check_sparse_input(const char* who, const Batch& input) const {
    std::size_t j = 0;
    for (const auto& column : input) {
      for (const std::size_t i : column)
        if (i >= input_dim())
          detail::invalid(who, ": column ", j, " of the input has index ", i, ", expected < input_dim = ", input_dim());
      ++j;
    }
  }
  void check_batch(const char* who, const char* name, Eigen::Index cols) const {
    if (cols != batch_)
      detail::invalid(who, ": ", name, " has ", cols, " columns, but the last forward had batch ", batch_);
  }
  void check_backward(const char* who, Eigen::Index rows, Eigen::Index cols) const {
    if (batch_ < 0) detail::invalid(who, ": call forward first");
    if (rows != static_cast<Eigen::Index>(output_dim()))
      detail::invalid(who, ": d_output has ", rows, " rows, expected output_dim = ", output_dim());
    check_batch(who, "d_output", cols);
  }

  /// Grows every activation and delta buffer to hold `batch` columns (never shrinks them), keeping
  /// the columns of the last forward (a prefix of each buffer).
  void ensure_capacity(const char* who, std::size_t batch) {
    if (batch <= capacity_) return;
    std::size_t widest = 0;
    for (std::size_t l = 1; l < sizes_.size(); ++l) widest = std::max(widest, sizes_[l]);
    const std::size_t cells = detail::checked_mul(widest, batch);
    if (cells == 0 || cells > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(Scalar))
      detail::invalid(who, ": a batch of ", batch, " columns would need more memory than can be addressed");
    detail::check_storage(who, "the activations of the widest layer", cells, sizeof(Scalar), "batch", batch);
    for (std::size_t l = 0; l < num_layers(); ++l) {
      const auto size = static_cast<Eigen::Index>(sizes_[l + 1] * batch);
      activations_[l].conservativeResize(size);
      deltas_[l].conservativeResize(size);
    }
    capacity_ = batch;
  }
  MatrixMap activation(std::size_t layer, Eigen::Index batch) {
    return MatrixMap(activations_[layer].data(), static_cast<Eigen::Index>(sizes_[layer + 1]), batch);
  }
  /// A dense input as the products read it: a Map where its columns lie one after another (the type
  /// of activation_view, so each product is instantiated once), else the expression itself.
  template <class Derived>
  static decltype(auto) product_operand(const Eigen::MatrixBase<Derived>& input) {
    if constexpr (detail::contiguous_columns<Derived>)
      return ConstMatrixMap(input.derived().data(), input.rows(), input.cols());
    else
      return input.derived();
  }
  /// A layer's activations as the products read them: the same Map type as a dense input's.
  ConstMatrixMap activation_view(std::size_t layer, Eigen::Index batch) const {
    return ConstMatrixMap(activations_[layer].data(), static_cast<Eigen::Index>(sizes_[layer + 1]), batch);
  }
  MatrixMap delta(std::size_t layer, Eigen::Index batch) {
    return MatrixMap(deltas_[layer].data(), static_cast<Eigen::Index>(sizes_[layer + 1]), batch);
  }

  /// Z_first holds W x + b: applies its activation and runs the layers above it.
  ConstMatrixMap forward_from(std::size_t first, Eigen::Index batch) {
    for (std::size_t l = first; l < num_layers(); ++l) {
      auto z = activation(l, batch);
      if (l > first) {
        z.noalias() = weights(l) * activation_view(l - 1, batch);
        z.colwise() += bias(l);
      }
      if (l + 1 < num_layers()) z = z.array().tanh();
    }
    batch_ = batch;
    return output();
  }

  /// δ_L = d_output, then every layer's gradients down to δ_1 (the first layer's own gradients are
  /// the caller's: they depend on the kind of input).
  template <class DY>
  void backward_to_first(const Eigen::MatrixBase<DY>& d_output) {
    delta(num_layers() - 1, batch_) = d_output;
    for (std::size_t l = num_layers() - 1; l >= 1; --l) {
      const auto d = delta(l, batch_);
      const auto below = activation_view(l - 1, batch_);
      weight_gradient(l).noalias() = d * below.transpose();
      bias_gradient(l) = d.rowwise().sum();
      auto d_below = delta(l - 1, batch_);
      d_below.noalias() = weights(l).transpose() * d;
      d_below.array() *= Scalar(1) - below.array().square();  // tanh' = 1 - tanh²
    }
  }

  std::vector<std::size_t> sizes_;
  std::vector<Eigen::Index> offsets_;  // offsets_[l]: W_l in the flat vectors; offsets_[L]: the total
  Vector params_, grads_;
  std::vector<Vector> activations_, deltas_;  // per layer, sizes[l+1] x capacity_, column-major
  std::size_t capacity_ = 0;
  Eigen::Index batch_ = -1;  // columns of the last forward; -1 before the first
};

}  // namespace memtrace
