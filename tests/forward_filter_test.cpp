// Tests of forward_filter.hpp: the one step of the forward filter against a brute-force sum over
// hidden state paths on a model with a terminal state (the restart chain, and the episode's
// conditioning on non-terminal states), observations of probability 0, and the value over the
// non-terminal states.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cstddef>
#include <memtrace/forward_filter.hpp>
#include <string>
#include <vector>

namespace forward_filter_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

/// Four states, three observations; state 3 is terminal and its row restarts from `initial`
/// (StationaryProcess's chain). It shares observations 1 and 2 with the others, so beliefs mix
/// terminal and non-terminal states.
struct Model {
  Eigen::MatrixXd p{{0.2, 0.3, 0.3, 0.2}, {0.1, 0.4, 0.2, 0.3}, {0.3, 0.2, 0.1, 0.4}, {0.6, 0.4, 0.0, 0.0}};
  Eigen::MatrixXd o{{0.7, 0.2, 0.1}, {0.1, 0.6, 0.3}, {0.2, 0.2, 0.6}, {0.0, 0.5, 0.5}};
  Eigen::VectorXd initial = Eigen::Vector4d(0.6, 0.4, 0.0, 0.0);
  std::vector<bool> terminal{false, false, false, true};
};

/// p(x_t = x, h) for every x, summed over the |X|^{|h|} hidden paths; with `episode`, only the paths
/// whose states are all non-terminal.
Eigen::VectorXd path_sum(const Model& m, const std::vector<std::size_t>& h, bool episode) {
  const auto nx = static_cast<std::size_t>(m.p.rows());
  std::size_t paths = 1;
  for (std::size_t j = 0; j < h.size(); ++j) paths *= nx;
  Eigen::VectorXd joint = Eigen::VectorXd::Zero(m.p.rows());
  for (std::size_t path = 0; path < paths; ++path) {
    std::size_t rest = path;
    Eigen::Index previous = 0;
    double weight = 1.0;
    for (std::size_t j = 0; j < h.size(); ++j) {
      const auto x = static_cast<Eigen::Index>(rest % nx);
      rest /= nx;
      if (episode && m.terminal[static_cast<std::size_t>(x)]) weight = 0.0;
      weight *= (j == 0 ? m.initial[x] : m.p(previous, x)) * m.o(x, static_cast<Eigen::Index>(h[j]));
      previous = x;
    }
    joint[previous] += weight;
  }
  return joint;
}

std::string text(const std::vector<std::size_t>& h) {
  std::string out;
  for (const std::size_t y : h) out += std::to_string(y);
  return out;
}

/// Every history of length n over 3 observations.
std::vector<std::vector<std::size_t>> histories(std::size_t n) {
  std::vector<std::vector<std::size_t>> out{{}};
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<std::vector<std::size_t>> next;
    for (const auto& h : out)
      for (std::size_t y = 0; y < 3; ++y) {
        next.push_back(h);
        next.back().push_back(y);
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace

TEST_CASE("the forward filter's belief and its product of step probabilities are a path sum through terminal states",
          "[forward_filter]") {
  const Model m;
  for (std::size_t n = 1; n <= 5; ++n) {
    for (const auto& h : histories(n)) {
      INFO("history " << text(h));
      const Eigen::VectorXd joint = path_sum(m, h, false);
      Eigen::VectorXd b = m.initial;
      double probability = condition_belief(b, m.o.col(static_cast<Eigen::Index>(h[0])));
      for (std::size_t j = 1; j < h.size() && probability > 0.0; ++j)
        probability *= forward_step(b, m.p.transpose(), m.o.col(static_cast<Eigen::Index>(h[j])));
      CHECK(probability == Approx(joint.sum()).margin(1e-15));
      if (joint.sum() > 0.0)
        for (Eigen::Index x = 0; x < 4; ++x) CHECK(b[x] == Approx(joint[x] / joint.sum()).margin(1e-14));
    }
  }
}

TEST_CASE("conditioning on the event {y_t, x_t non-terminal} at every step is the episode's path sum",
          "[forward_filter]") {
  const Model m;
  Eigen::VectorXd live = Eigen::Vector4d(1.0, 1.0, 1.0, 0.0);
  std::size_t differ = 0;  // histories whose probability in one episode is below that in the chain
  for (std::size_t n = 1; n <= 5; ++n) {
    for (const auto& h : histories(n)) {
      INFO("history " << text(h));
      const Eigen::VectorXd joint = path_sum(m, h, true);
      Eigen::VectorXd b = m.initial;
      double probability = condition_belief(b, m.o.col(static_cast<Eigen::Index>(h[0])).cwiseProduct(live));
      for (std::size_t j = 1; j < h.size() && probability > 0.0; ++j)
        probability *= forward_step(b, m.p.transpose(), m.o.col(static_cast<Eigen::Index>(h[j])).cwiseProduct(live));
      CHECK(probability == Approx(joint.sum()).margin(1e-15));
      if (joint.sum() > 0.0) {
        CHECK(b[3] == 0.0);
        for (Eigen::Index x = 0; x < 4; ++x) CHECK(b[x] == Approx(joint[x] / joint.sum()).margin(1e-14));
      }
      if (joint.sum() < 0.999 * path_sum(m, h, false).sum()) ++differ;
    }
  }
  CHECK(differ > 0);  // the terminal state matters on this model
}

TEST_CASE("an observation of probability 0 returns 0 and leaves no distribution", "[forward_filter]") {
  const Model m;
  Eigen::VectorXd b = m.initial;  // states 0 and 1 emit observation 0 ...
  CHECK(condition_belief(b, m.o.col(0)) == Approx(0.6 * 0.7 + 0.4 * 0.1));
  b = Eigen::Vector4d(0.0, 0.0, 0.0, 1.0);  // ... the terminal state never does
  CHECK(condition_belief(b, m.o.col(0)) == 0.0);
  CHECK(b.sum() == 0.0);
  b = Eigen::Vector4d(0.0, 0.0, 0.0, 1.0);  // restarts in 0 or 1, where this likelihood is 0
  CHECK(forward_step(b, m.p.transpose(), Eigen::Vector4d(0.0, 0.0, 1.0, 1.0)) == 0.0);
}

TEST_CASE("non_terminal_value weighs the non-terminal states only", "[forward_filter]") {
  const Model m;
  const Eigen::Vector4d values(1.0, 2.0, 4.0, 100.0);
  const NonTerminalValue mixed = non_terminal_value(Eigen::Vector4d(0.1, 0.2, 0.2, 0.5), values, m.terminal);
  CHECK(mixed.probability == Approx(0.5));
  CHECK(mixed.value == Approx((0.1 + 0.4 + 0.8) / 0.5));
  const NonTerminalValue ended = non_terminal_value(Eigen::Vector4d(0.0, 0.0, 0.0, 1.0), values, m.terminal);
  CHECK(ended.probability == 0.0);
  CHECK(ended.value == 0.0);
  // No flags: a continuing model, every state counts.
  const NonTerminalValue all = non_terminal_value(Eigen::Vector4d(0.25, 0.25, 0.25, 0.25), values, {});
  CHECK(all.probability == Approx(1.0));
  CHECK(all.value == Approx(26.75));
}

}  // namespace forward_filter_test
