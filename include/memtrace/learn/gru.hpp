#pragma once
// A gated recurrent unit with torch.nn.GRU's equations, for PPO agents whose memory is learned:
// batched over environments (one matrix product per time step for the recurrent part, one for the
// inputs of a whole sequence), run over sequences whose episodes start anew inside them (the state
// is reset to zero there), and backpropagated through time. See docs/learners.md ("A recurrent
// network").

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>

#include "memtrace/learn/mlp.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// A GRU of input dimension d and hidden dimension h, in float or double, with torch.nn.GRU's
/// equations (gates in the order r, z, n; the reset gate applied after the hidden product):
///   r = σ(W_ir x + b_ir + W_hr h + b_hr)
///   z = σ(W_iz x + b_iz + W_hz h + b_hz)
///   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
///   h' = (1 − z) ⊙ n + z ⊙ h.
/// W_ih = [W_ir; W_iz; W_in] (3h x d) with b_ih is a linear Mlp {d, 3h} (so dense and MultiHot
/// inputs are read as Mlp reads them); W_hh (3h x h) and b_hh live in one flat vector (W_hh
/// column-major, then b_hh). A batch holds one column per environment; a sequence of T steps of B
/// environments holds column t·B + b for step t of environment b (time-major).
///
/// forward(x, starts, initial) keeps what backward needs; backward(x, dL/dh) then overwrites the
/// gradients. step(x, states) advances states for acting and keeps nothing for backward (call it
/// between a forward and its backward and the backward is refused). Workspaces grow to the largest
/// sequence and batch seen and are reused: no allocation after that.
template <class Scalar = float>
class Gru {
  static_assert(std::same_as<Scalar, float> || std::same_as<Scalar, double>, "Gru: Scalar must be float or double");

 public:
  using scalar_type = Scalar;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using MatrixMap = Eigen::Map<Matrix>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;
  using VectorMap = Eigen::Map<Vector>;
  using ConstVectorMap = Eigen::Map<const Vector>;

  /// A GRU with inputs of dimension input_dim >= 1 and a state of hidden_dim >= 1 entries,
  /// parameters zero until initialize_orthogonal (or written through parameters()).
  Gru(std::size_t input_dim, std::size_t hidden_dim)
      : input_(input_sizes(input_dim, hidden_dim)), h_(static_cast<Eigen::Index>(hidden_dim)) {
    recurrent_ = Vector::Zero(3 * h_ * h_ + 3 * h_);
    recurrent_gradient_ = Vector::Zero(recurrent_.size());
  }

  [[nodiscard]] std::size_t input_dim() const noexcept { return input_.input_dim(); }
  [[nodiscard]] std::size_t hidden_dim() const noexcept { return static_cast<std::size_t>(h_); }
  /// 3h(d + h + 2).
  [[nodiscard]] std::size_t num_parameters() const noexcept {
    return input_.num_parameters() + static_cast<std::size_t>(recurrent_.size());
  }

  /// W_ih (3h x d) and b_ih, as the linear layer that holds them.
  [[nodiscard]] Mlp<Scalar>& input_layer() noexcept { return input_; }
  [[nodiscard]] const Mlp<Scalar>& input_layer() const noexcept { return input_; }
  [[nodiscard]] MatrixMap weight_hh() noexcept { return MatrixMap(recurrent_.data(), 3 * h_, h_); }
  [[nodiscard]] ConstMatrixMap weight_hh() const noexcept { return ConstMatrixMap(recurrent_.data(), 3 * h_, h_); }
  [[nodiscard]] VectorMap bias_hh() noexcept { return VectorMap(recurrent_.data() + 3 * h_ * h_, 3 * h_); }
  [[nodiscard]] ConstVectorMap bias_hh() const noexcept {
    return ConstVectorMap(recurrent_.data() + 3 * h_ * h_, 3 * h_);
  }
  [[nodiscard]] MatrixMap weight_hh_gradient() noexcept { return MatrixMap(recurrent_gradient_.data(), 3 * h_, h_); }
  [[nodiscard]] VectorMap bias_hh_gradient() noexcept {
    return VectorMap(recurrent_gradient_.data() + 3 * h_ * h_, 3 * h_);
  }

  /// Two blocks: the input layer's parameters (Mlp's layout: W_ih column-major, then b_ih), then
  /// W_hh column-major and b_hh.
  [[nodiscard]] std::array<std::span<Scalar>, 2> parameters() noexcept {
    return {span(input_.parameters()), span(recurrent_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 2> parameters() const noexcept {
    return {span(input_.parameters()), span(recurrent_)};
  }
  /// The gradients of the last backward, in the blocks of parameters().
  [[nodiscard]] std::array<std::span<Scalar>, 2> gradients() noexcept {
    return {span(input_.gradients()), span(recurrent_gradient_)};
  }
  [[nodiscard]] std::array<std::span<const Scalar>, 2> gradients() const noexcept {
    return {span(input_.gradients()), span(recurrent_gradient_)};
  }

  /// torch's names: visit(prefix + ".weight_ih_l0", W_ih), ".weight_hh_l0", ".bias_ih_l0",
  /// ".bias_hh_l0" (a weights file's tensors, learn/ppo_weights.hpp; W as 3h x d matrices).
  template <class Visit>
  void named_blocks(const std::string& prefix, Visit&& visit) {
    visit(prefix + ".weight_ih_l0", input_.weights(0));
    visit(prefix + ".weight_hh_l0", weight_hh());
    visit(prefix + ".bias_ih_l0", input_.bias(0));
    visit(prefix + ".bias_hh_l0", bias_hh());
  }
  template <class Visit>
  void named_blocks(const std::string& prefix, Visit&& visit) const {
    visit(prefix + ".weight_ih_l0", input_.weights(0));
    visit(prefix + ".weight_hh_l0", weight_hh());
    visit(prefix + ".bias_ih_l0", input_.bias(0));
    visit(prefix + ".bias_hh_l0", bias_hh());
  }

  /// CleanRL's initialisation of its recurrent cell: orthogonal W_ih and W_hh with gain 1
  /// (Mlp::initialize_orthogonal's construction; W_ih first, then W_hh, from gen), biases zero.
  template <std::uniform_random_bit_generator G>
  void initialize_orthogonal(G& gen) {
    input_.initialize_orthogonal(gen, {1.0});
    Eigen::MatrixXd a(3 * h_, h_);
    for (Eigen::Index j = 0; j < h_; ++j)
      for (Eigen::Index i = 0; i < 3 * h_; ++i) a(i, j) = standard_normal(gen);
    recurrent_.setZero();
    weight_hh() = detail::orthonormal_q(a).template cast<Scalar>();
  }

  /// Makes room for sequences of `columns` columns (T·B) and steps of `batch` columns.
  void reserve(std::size_t columns, std::size_t batch) {
    input_.reserve(std::max(columns, batch));
    grow(static_cast<Eigen::Index>(columns), static_cast<Eigen::Index>(batch));
  }

  /// One step of B environments, for acting: states (h x B, column b environment b's state, which
  /// the caller zeroes where an episode starts) becomes h' for the inputs x (d x B dense, or B
  /// MultiHot columns). Keeps nothing for backward.
  template <class Input>
  void step(const Input& x, Eigen::Ref<Matrix> states) {
    const Eigen::Index b = columns_of(x);
    if (states.rows() != h_ || states.cols() != b)
      detail::invalid("Gru::step: states is ", states.rows(), " x ", states.cols(), ", expected hidden_dim = ", h_,
                      " rows and one column per input column (", b, ")");
    const auto gi = input_.forward(x);
    grow(0, b);
    batch_ = -1;  // the input layer's cache is this step's now
    auto gh = MatrixMap(step_hidden_.data(), 3 * h_, b);
    gh.noalias() = weight_hh() * states;
    gh.colwise() += bias_hh();
    auto r = MatrixMap(step_gates_.data(), h_, b);
    auto z = MatrixMap(step_gates_.data() + h_ * b, h_, b);
    r = sigmoid(gi.topRows(h_) + gh.topRows(h_));
    z = sigmoid(gi.middleRows(h_, h_) + gh.middleRows(h_, h_));
    // h' = n + z ⊙ (h − n), with n = tanh(...) held in gh's top rows
    gh.topRows(h_) = (gi.bottomRows(h_).array() + r.array() * gh.bottomRows(h_).array()).tanh();
    states.array() = gh.topRows(h_).array() + z.array() * (states.array() - gh.topRows(h_).array());
  }

  /// The outputs h_t (h x T·B) of a sequence of T steps of B environments: x (d x T·B dense, or T·B
  /// MultiHot columns, time-major), starts (T·B entries; starts[t·B + b]: the state of environment
  /// b is reset to zero before step t) and initial (h x B: the states before step 0). Keeps the
  /// gates for backward. The map is valid until the next forward or step.
  template <class Input>
  ConstMatrixMap forward(const Input& x, std::span<const bool> starts, const Eigen::Ref<const Matrix>& initial) {
    const Eigen::Index columns = columns_of(x), b = initial.cols();
    if (initial.rows() != h_ || b == 0)
      detail::invalid("Gru::forward: initial is ", initial.rows(), " x ", b, ", expected hidden_dim = ", h_,
                      " rows and at least one column");
    if (columns == 0 || columns % b != 0)
      detail::invalid("Gru::forward: x has ", columns, " columns, expected a positive multiple of initial's ", b);
    if (static_cast<Eigen::Index>(starts.size()) != columns)
      detail::invalid("Gru::forward: starts has ", starts.size(), " entries, expected one per column of x (", columns,
                      ")");
    const auto gi = input_.forward(x);
    grow(columns, b);
    const Eigen::Index steps = columns / b;
    auto previous = map(previous_, h_, columns);
    auto out = map(outputs_, h_, columns);
    auto r = map(r_, h_, columns), z = map(z_, h_, columns), n = map(n_, h_, columns), ghn = map(ghn_, h_, columns);
    auto gh = MatrixMap(step_hidden_.data(), 3 * h_, b);
    for (Eigen::Index t = 0; t < steps; ++t) {
      const Eigen::Index c = t * b;
      auto hp = previous.middleCols(c, b);
      if (t == 0)
        hp = initial;
      else
        hp = out.middleCols(c - b, b);
      for (Eigen::Index j = 0; j < b; ++j)
        if (starts[static_cast<std::size_t>(c + j)]) hp.col(j).setZero();
      gh.noalias() = weight_hh() * hp;
      gh.colwise() += bias_hh();
      r.middleCols(c, b) = sigmoid(gi.middleCols(c, b).topRows(h_) + gh.topRows(h_));
      z.middleCols(c, b) = sigmoid(gi.middleCols(c, b).middleRows(h_, h_) + gh.middleRows(h_, h_));
      ghn.middleCols(c, b) = gh.bottomRows(h_);
      n.middleCols(c, b) =
          (gi.middleCols(c, b).bottomRows(h_).array() + r.middleCols(c, b).array() * gh.bottomRows(h_).array()).tanh();
      out.middleCols(c, b).array() =
          n.middleCols(c, b).array() + z.middleCols(c, b).array() * (hp.array() - n.middleCols(c, b).array());
    }
    for (Eigen::Index j = 0; j < columns; ++j) starts_[j] = starts[static_cast<std::size_t>(j)];
    batch_ = b;
    columns_ = columns;
    return ConstMatrixMap(outputs_.data(), h_, columns);
  }

  /// The outputs of the last forward (h x T·B), until the next forward or step.
  [[nodiscard]] ConstMatrixMap outputs() const {
    if (batch_ <= 0) detail::invalid("Gru::outputs: call forward first (a step since then spoils its cache)");
    return ConstMatrixMap(outputs_.data(), h_, columns_);
  }

  /// Overwrites gradients() with dL/dθ, given the input of the last forward and d_output = dL/dh_t
  /// (h x T·B) for its outputs, through time: the gradient reaching h_{t−1} through h_t is cut
  /// where step t starts an episode, and none is kept for the initial states.
  template <class Input>
  void backward(const Input& x, const Eigen::Ref<const Matrix>& d_output) {
    backward_through_time("Gru::backward", d_output);
    input_.backward(x, map(d_gi_, 3 * h_, columns_));
  }
  /// backward, and also d_input = dL/dx (d x T·B, resized) for a dense input.
  template <class Input>
  void backward(const Input& x, const Eigen::Ref<const Matrix>& d_output, Matrix& d_input) {
    backward_through_time("Gru::backward", d_output);
    input_.backward(x, map(d_gi_, 3 * h_, columns_), d_input);
  }

 private:
  static std::array<std::size_t, 2> input_sizes(std::size_t input_dim, std::size_t hidden_dim) {
    if (input_dim == 0) detail::invalid("Gru: input_dim must be at least 1, got 0");
    if (hidden_dim == 0) detail::invalid("Gru: hidden_dim must be at least 1, got 0");
    // W_hh and b_hh with their gradients, in bytes: refused before allocating, as Mlp refuses its sizes.
    if (hidden_dim > (1u << 16) || 3 * hidden_dim * (hidden_dim + 1) > default_max_bytes / (2 * sizeof(Scalar)))
      detail::invalid("Gru: hidden_dim = ", hidden_dim, " needs more than memtrace::default_max_bytes for W_hh");
    return {input_dim, 3 * hidden_dim};
  }

  template <class V>
  static auto span(V&& v) noexcept {
    return std::span(v.data(), static_cast<std::size_t>(v.size()));
  }
  static MatrixMap map(Vector& v, Eigen::Index rows, Eigen::Index cols) { return MatrixMap(v.data(), rows, cols); }

  template <class E>
  static auto sigmoid(const E& a) {
    return (Scalar(1) + (-a.array()).exp()).inverse().matrix();
  }

  template <class Input>
  static Eigen::Index columns_of(const Input& x) {
    if constexpr (requires { x.cols(); })
      return x.cols();
    else
      return static_cast<Eigen::Index>(std::ranges::size(x));
  }

  /// Workspaces for sequences of `columns` columns and steps of `b` columns (never shrunk).
  void grow(Eigen::Index columns, Eigen::Index b) {
    if (columns > capacity_) {
      batch_ = -1;  // the last forward's gates are gone
      for (Vector* v : {&previous_, &outputs_, &r_, &z_, &n_, &ghn_}) v->resize(h_ * columns);
      for (Vector* v : {&d_gi_, &d_gh_}) v->resize(3 * h_ * columns);
      starts_.resize(columns);
      capacity_ = columns;
    }
    if (b > batch_capacity_) {
      step_hidden_.resize(3 * h_ * b);
      step_gates_.resize(2 * h_ * b);
      carry_.resize(h_ * b);
      batch_capacity_ = b;
    }
  }

  void backward_through_time(const char* who, const Eigen::Ref<const Matrix>& d_output) {
    if (batch_ <= 0) detail::invalid(who, ": call forward first (a step since then spoils its cache)");
    if (d_output.rows() != h_ || d_output.cols() != columns_)
      detail::invalid(who, ": d_output is ", d_output.rows(), " x ", d_output.cols(), ", expected ", h_, " x ",
                      columns_, " (the last forward's outputs)");
    const Eigen::Index b = batch_, steps = columns_ / b;
    const auto previous = map(previous_, h_, columns_);
    const auto r = map(r_, h_, columns_), z = map(z_, h_, columns_), n = map(n_, h_, columns_),
               ghn = map(ghn_, h_, columns_);
    auto d_gi = map(d_gi_, 3 * h_, columns_), d_gh = map(d_gh_, 3 * h_, columns_);
    auto carry = map(carry_, h_, b);  // dL/dh_t through h_{t+1}
    carry.setZero();
    for (Eigen::Index t = steps; t-- > 0;) {
      const Eigen::Index c = t * b;
      const auto dh = (d_output.middleCols(c, b) + carry).array();
      const auto rt = r.middleCols(c, b).array(), zt = z.middleCols(c, b).array(), nt = n.middleCols(c, b).array();
      auto da_r = d_gi.middleCols(c, b).topRows(h_), da_z = d_gi.middleCols(c, b).middleRows(h_, h_),
           da_n = d_gi.middleCols(c, b).bottomRows(h_);
      da_n.array() = dh * (Scalar(1) - zt) * (Scalar(1) - nt.square());
      da_z.array() = dh * (previous.middleCols(c, b).array() - nt) * zt * (Scalar(1) - zt);
      da_r.array() = da_n.array() * ghn.middleCols(c, b).array() * rt * (Scalar(1) - rt);
      auto gh = d_gh.middleCols(c, b);
      gh.topRows(2 * h_) = d_gi.middleCols(c, b).topRows(2 * h_);
      gh.bottomRows(h_).array() = da_n.array() * rt;
      // dL/dh_{t−1} = z ⊙ dh + W_hhᵀ dGh, cut where step t starts an episode (dh reads carry:
      // coefficient-wise in place first, then the product).
      carry.array() = dh * zt;
      carry.noalias() += weight_hh().transpose() * gh;
      for (Eigen::Index j = 0; j < b; ++j)
        if (starts_[c + j]) carry.col(j).setZero();
    }
    weight_hh_gradient().noalias() = d_gh * previous.transpose();
    bias_hh_gradient() = d_gh.rowwise().sum();
  }

  Mlp<Scalar> input_;  // W_ih, b_ih: the input gates of every column in one product
  Eigen::Index h_;
  Vector recurrent_, recurrent_gradient_;  // W_hh (3h x h, column-major), then b_hh
  // The last forward's sequence: previous states (reset where episodes start), gates, W_hn h + b_hn, outputs.
  Vector previous_, outputs_, r_, z_, n_, ghn_, d_gi_, d_gh_;
  Vector step_hidden_, step_gates_, carry_;  // per step: W_hh h + b_hh; r and z of step(); dL/dh
  Eigen::Index capacity_ = 0, batch_capacity_ = 0;
  Eigen::Index batch_ = -1, columns_ = 0;         // of the last forward (-1: none, or a step since)
  Eigen::Array<bool, Eigen::Dynamic, 1> starts_;  // of the last forward
};

}  // namespace memtrace
