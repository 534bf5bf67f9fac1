// Tests of analysis/value_error.hpp: the entry points overloaded on the memory route each memory to
// its own analysis (the same numbers as the per-memory functions), one generic function serves a
// std::variant of memories, a memory of another |Y| than the process is refused, and the three
// memories' estimators agree where they must (m = 1: the window, the concat window and the λ = 0
// trace are the same estimator).
#include <catch2/catch.hpp>
#include <cmath>
#include <memtrace/analysis/value_error.hpp>
#include <memtrace/env/noisy_random_walk.hpp>
#include <stdexcept>
#include <variant>
#include <vector>

namespace value_error_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

StationaryProcess small_walk() {
  return StationaryProcess(NoisyRandomWalk({.num_states = 15, .max_step = 2, .num_observations = 4}), 0.9);
}

}  // namespace

TEST_CASE("exact_moments, value_error, optimal_value_error and td_fixed_point give each memory's own analysis",
          "[value_error]") {
  const StationaryProcess process = small_walk();
  const std::size_t ny = process.num_observations();
  const double discount = process.discount();

  const MemoryTrace<> trace(0.6, ny);
  const TraceMoments t = exact_moments(process, trace);
  const Eigen::VectorXd tw = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(ny), -1.0, 2.0);
  CHECK(value_error(t, tw) == trace_value_error(process, 0.6, tw));
  CHECK(optimal_value_error(t) == optimal_trace_value_error(process, 0.6));
  CHECK(optimal_weights(t) == optimal_trace_weights(process, 0.6));
  CHECK(td_fixed_point(process, trace) == trace_td_fixed_point(process, 0.6));
  CHECK(num_weights(t) == ny);

  const Window<> window(3, ny);
  const WindowMoments w = exact_moments(process, window);
  const Eigen::VectorXd table = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(ny * ny * ny), 0.0, 1.0);
  CHECK(value_error(w, table) == window_value_error(window_moments(process, 3), table));
  CHECK(optimal_value_error(w) == optimal_window_value_error(window_moments(process, 3)));
  CHECK(td_fixed_point(process, window) == window_td_fixed_point(process, 3));
  CHECK(num_weights(w) == ny * ny * ny);

  const ConcatWindow<> concat(2, ny);
  const LinearMoments c = exact_moments(process, concat);
  const Eigen::VectorXd cw = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(2 * ny), 1.0, -1.0);
  CHECK(value_error(c, cw) == concat_value_error(process, 2, cw));
  CHECK(optimal_value_error(c) == optimal_concat_value_error(process, 2));
  CHECK(td_fixed_point(process, concat) == concat_td_fixed_point(process, 2));
  CHECK(num_weights(c) == 2 * ny);

  // value_errors of several columns equals value_error of each.
  Eigen::MatrixXd columns(static_cast<Eigen::Index>(ny), 2);
  columns << tw, optimal_weights(t);
  const Eigen::VectorXd both = value_errors(t, columns);
  CHECK(both[0] == value_error(t, tw));
  CHECK(both[1] == Approx(optimal_value_error(t)).margin(1e-15));
  CHECK(linear_td_fixed_point(t, discount) == td_fixed_point(process, trace));
}

TEST_CASE("One generic function analyses a variant of memories, and with m = 1 all three are the memoryless estimator",
          "[value_error]") {
  const StationaryProcess process = small_walk();
  const std::size_t ny = process.num_observations();
  using AnyMemory = std::variant<MemoryTrace<>, Window<>, ConcatWindow<>>;
  const std::vector<AnyMemory> memories{MemoryTrace<>(0.0, ny), Window<>(1, ny), ConcatWindow<>(1, ny)};
  std::vector<double> optimum, fixed_point;
  for (const AnyMemory& memory : memories) {
    std::visit(
        [&](const auto& m) {
          const auto moments = exact_moments(process, m);
          optimum.push_back(optimal_value_error(moments));
          fixed_point.push_back(value_error(moments, td_fixed_point(process, m)));
        },
        memory);
  }
  // λ = 0: z_t = e_{y_t}, the one-hot current observation, as the windows of one observation.
  for (std::size_t i = 1; i < memories.size(); ++i) {
    CHECK(optimum[i] == Approx(optimum[0]).epsilon(1e-10));
    CHECK(fixed_point[i] == Approx(fixed_point[0]).epsilon(1e-8));
  }
  // A memory still helps on this walk: the optimum with more memory is strictly smaller.
  CHECK(optimal_value_error(exact_moments(process, Window<>(3, ny))) < optimum[0] - 1e-6);
  CHECK(optimal_value_error(exact_moments(process, MemoryTrace<>(0.7, ny))) < optimum[0] - 1e-6);
}

TEST_CASE("A memory over another number of observations than the process is refused, naming both", "[value_error]") {
  const StationaryProcess process = small_walk();
  CHECK_THROWS_WITH(exact_moments(process, MemoryTrace<>(0.5, 5)), Catch::Contains("exact_moments") &&
                                                                       Catch::Contains("5 observations") &&
                                                                       Catch::Contains("process 4"));
  CHECK_THROWS_AS(exact_moments(process, Window<>(2, 3)), std::invalid_argument);
  CHECK_THROWS_WITH(td_fixed_point(process, ConcatWindow<>(2, 7)), Catch::Contains("td_fixed_point"));
}

TEST_CASE("Refusals name the entry point the caller called, not the function behind it", "[value_error]") {
  const StationaryProcess process = small_walk();
  const std::size_t ny = process.num_observations();
  const WindowMoments w = exact_moments(process, Window<>(2, ny));
  CHECK_THROWS_WITH(value_error(w, Eigen::VectorXd::Zero(3)), Catch::StartsWith("value_error: the window table"));
  CHECK_THROWS_WITH(value_errors(w, Eigen::MatrixXd::Zero(3, 2)), Catch::StartsWith("value_errors:"));
  const TraceMoments t = exact_moments(process, MemoryTrace<>(0.5, ny));
  CHECK_THROWS_WITH(value_error(t, Eigen::VectorXd::Zero(2)), Catch::StartsWith("value_error:"));
  CHECK_THROWS_WITH(exact_moments(process, Window<>(3, ny), 10), Catch::StartsWith("exact_moments:"));
  CHECK_THROWS_WITH(td_fixed_point(process, Window<>(3, ny), 10), Catch::StartsWith("td_fixed_point:"));
  // A zero-padded window's table holds the full windows first: their part is what the analysis reads.
  const Window<> padded(2, ny, WindowPadding::zero);
  REQUIRE(padded.dim() > num_weights(w));
  const Eigen::VectorXd table = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(padded.dim()));
  CHECK(value_error(w, table.head(static_cast<Eigen::Index>(num_weights(w)))) ==
        window_value_error(w, Eigen::VectorXd::Ones(static_cast<Eigen::Index>(num_weights(w)))));
}

}  // namespace value_error_test
