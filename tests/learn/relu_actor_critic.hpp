// A network of one's own for Ppo (docs/control.md, "Your own network"): one hidden ReLU layer that
// the policy and the value head share (the library's ActorCritic has two separate tanh MLPs), its
// parameters in one flat vector. It models memtrace::ActorCriticNetwork for dense features; the
// tests train it and check its whole loss gradient against finite differences.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <memtrace/random.hpp>
#include <random>
#include <span>

template <class Scalar>
class ReluActorCritic {
 public:
  using scalar_type = Scalar;
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using Input = Eigen::Ref<const Matrix>;  // dense features, one sample per column

  ReluActorCritic(Eigen::Index inputs, Eigen::Index hidden, Eigen::Index actions)
      : d_(inputs), h_(hidden), k_(actions), theta_(Vector::Zero(count())), grad_(Vector::Zero(count())) {}

  std::size_t input_dim() const { return std::size_t(d_); }
  std::size_t policy_dim() const { return std::size_t(k_); }

  const Matrix& forward_policy(const Input& x) {
    hide(x);
    logits_ = wp(theta_) * hidden_;
    logits_.colwise() += bp(theta_);
    return logits_;
  }
  const RowVector& forward_value(const Input& x) {
    hide(x);
    values_ = wv(theta_) * hidden_;
    values_.array() += bv(theta_)[0];
    return values_;
  }
  // After both forwards on x: the hidden layer is x's.
  void backward(const Input& x, const Eigen::Ref<const Matrix>& d_policy, const Eigen::Ref<const RowVector>& d_value) {
    wp(grad_).noalias() = d_policy * hidden_.transpose();
    bp(grad_) = d_policy.rowwise().sum();
    wv(grad_).noalias() = d_value * hidden_.transpose();
    bv(grad_)[0] = d_value.sum();
    Matrix d_hidden = wp(theta_).transpose() * d_policy + wv(theta_).transpose() * d_value;
    d_hidden.array() *= (hidden_.array() > 0).template cast<Scalar>();  // ReLU' (0 at the kink)
    w1(grad_).noalias() = d_hidden * x.transpose();
    b1(grad_) = d_hidden.rowwise().sum();
  }

  std::span<Scalar> parameters() { return {theta_.data(), std::size_t(theta_.size())}; }
  std::span<Scalar> gradients() { return {grad_.data(), std::size_t(grad_.size())}; }

  /// Hidden weights N(0, 2/d) (He), heads N(0, 0.01²), biases zero, from memtrace's normal draws.
  template <std::uniform_random_bit_generator G>
  void initialize(G& gen) {
    const auto draw = [&](Eigen::Index first, Eigen::Index n, double scale) {
      for (Eigen::Index i = first; i < first + n; ++i) theta_[i] = Scalar(scale * memtrace::standard_normal(gen));
    };
    theta_.setZero();
    draw(0, h_ * d_, std::sqrt(2.0 / double(d_)));  // W1
    draw(h_ * d_ + h_, k_ * h_, 0.01);              // Wp
    draw(h_ * d_ + h_ + k_ * h_ + k_, h_, 0.01);    // wv
  }

 private:
  // theta = [W1 (h x d), b1 (h), Wp (k x h), bp (k), wv (1 x h), bv (1)], column-major blocks.
  Eigen::Index count() const { return h_ * d_ + h_ + k_ * h_ + k_ + h_ + 1; }
  Eigen::Map<Matrix> w1(Vector& v) const { return {v.data(), h_, d_}; }
  Eigen::Map<Vector> b1(Vector& v) const { return {v.data() + h_ * d_, h_}; }
  Eigen::Map<Matrix> wp(Vector& v) const { return {v.data() + h_ * d_ + h_, k_, h_}; }
  Eigen::Map<Vector> bp(Vector& v) const { return {v.data() + h_ * d_ + h_ + k_ * h_, k_}; }
  Eigen::Map<Matrix> wv(Vector& v) const { return {v.data() + h_ * d_ + h_ + k_ * h_ + k_, 1, h_}; }
  Eigen::Map<Vector> bv(Vector& v) const { return {v.data() + count() - 1, 1}; }

  void hide(const Input& x) {
    hidden_.noalias() = w1(theta_) * x;
    hidden_.colwise() += b1(theta_);
    hidden_ = hidden_.cwiseMax(Scalar(0));
  }

  Eigen::Index d_, h_, k_;
  Vector theta_, grad_;
  Matrix hidden_, logits_;
  RowVector values_;
};
