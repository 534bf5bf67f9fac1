// The whole PPO loss gradient of a network against central finite differences, for the tests of
// ppo_loss through any ActorCriticNetwork (its parameter blocks, one entry at a time).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <memtrace/concepts.hpp>
#include <memtrace/learn/ppo_loss.hpp>
#include <vector>

namespace test_gradients {

struct GradientCheck {
  double worst = 0;         ///< the largest |numeric − analytic| / max(1, |numeric|)
  std::size_t nonzero = 0;  ///< analytic entries that are not 0
  std::size_t count = 0;    ///< parameters checked
};

/// Compares the gradient that loss(true) leaves in nets.gradients() with central differences of
/// loss(false) (a PpoLoss each) of step h, every parameter of every block; REQUIREs that no
/// perturbation moves a sample across a kink of the clipped objective (the clip fraction stays)
/// and that every entry is within `tolerance`.
template <class Network, class Loss>
GradientCheck check_gradient(Network& nets, Loss&& loss, double tolerance, double h = 1e-6) {
  const memtrace::PpoLoss at = loss(true);
  std::vector<double> gradient;
  const auto gradients = nets.gradients();
  for (std::size_t b = 0; b < memtrace::detail::parameter_block_count(gradients); ++b)
    for (const auto g : memtrace::detail::parameter_block(gradients, b)) gradient.push_back(static_cast<double>(g));
  GradientCheck out;
  const auto parameters = nets.parameters();
  for (std::size_t b = 0; b < memtrace::detail::parameter_block_count(parameters); ++b) {
    const auto block = memtrace::detail::parameter_block(parameters, b);
    for (auto& p : block) {
      const auto saved = p;
      p = saved + h;
      const memtrace::PpoLoss up = loss(false);
      p = saved - h;
      const memtrace::PpoLoss down = loss(false);
      p = saved;
      REQUIRE(up.clip_fraction == at.clip_fraction);
      REQUIRE(down.clip_fraction == at.clip_fraction);
      const double numeric = (up.loss - down.loss) / (2 * h);
      const double analytic = gradient.at(out.count);
      const double error = std::abs(numeric - analytic) / std::max(1.0, std::abs(numeric));
      INFO("block " << b << ", parameter " << out.count << ": numeric " << numeric << ", analytic " << analytic);
      REQUIRE(error < tolerance);
      out.worst = std::max(out.worst, error);
      out.nonzero += analytic != 0.0 ? 1 : 0;
      ++out.count;
    }
  }
  REQUIRE(out.count == gradient.size());
  return out;
}

/// check_gradient of ppo_loss on `minibatch` through any ActorCriticNetwork.
template <class Network, class Minibatch>
GradientCheck check_loss_gradient(Network& nets, const Minibatch& minibatch,
                                  const memtrace::PpoLossCoefficients& coefficients, double tolerance,
                                  double h = 1e-6) {
  return check_gradient(
      nets, [&](bool gradients) { return memtrace::ppo_loss(nets, minibatch, coefficients, gradients); }, tolerance, h);
}

}  // namespace test_gradients
