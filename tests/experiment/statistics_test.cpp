// Tests of experiment/statistics.hpp: Student t quantiles against tabulated values and closed
// forms, summaries against hand computations, precision of the sums, and bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memtrace/experiment/statistics.hpp>
#include <numbers>
#include <vector>

namespace statistics_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;

namespace {

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

}  // namespace

TEST_CASE("student_t_quantile matches tabulated values", "[statistics]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(close(student_t_quantile(0.975, 1), 12.706204736, 1e-8));
  CHECK(close(student_t_quantile(0.975, 2), 4.302652730, 1e-8));
  CHECK(close(student_t_quantile(0.975, 7), 2.364624252, 1e-8));
  CHECK(close(student_t_quantile(0.975, 9), 2.262157163, 1e-8));
  CHECK(close(student_t_quantile(0.975, 99), 1.984216952, 1e-8));
  CHECK(close(student_t_quantile(0.975, inf), 1.959963985, 1e-8));
  CHECK(close(student_t_quantile(0.995, 4), 4.604094871, 1e-8));
  CHECK(close(student_t_quantile(0.95, 30), 1.697260887, 1e-8));
  // Large dof approach the normal quantile from above, through the Cornish-Fisher branch too.
  CHECK(close(student_t_quantile(0.975, 1e5), 1.9599877075346093, 1e-11));  // mpmath, 40 digits
  CHECK(close(student_t_quantile(0.975, 1e8), 1.9599640082627664, 1e-13));
  CHECK(student_t_quantile(0.975, 1e8) > student_t_quantile(0.975, inf));
}

TEST_CASE("student_t_quantile matches the closed forms for 1 and 2 degrees of freedom", "[statistics]") {
  // dof 1 (Cauchy): tan(π(p - 1/2)) = -1 / tan(πp); dof 2: (2p - 1) / sqrt(2p(1 - p)).
  for (double p : {1e-12, 1e-6, 0.01, 0.1, 0.3, 0.45, 0.4999, 0.5001, 0.7, 0.9, 0.99, 0.999999}) {
    const double cauchy = p < 0.5 ? -1 / std::tan(std::numbers::pi * p) : 1 / std::tan(std::numbers::pi * (1 - p));
    CHECK(close(student_t_quantile(p, 1), cauchy, 1e-12));
    CHECK(close(student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-12));
  }
  CHECK(close(student_t_quantile(1e-300, 1), -1 / (std::numbers::pi * 1e-300), 1e-12));  // far tail
  CHECK(student_t_quantile(0.5, 3) == 0.0);
  CHECK(student_t_quantile(0.25, 5.5) == -student_t_quantile(0.75, 5.5));  // symmetric, any real dof
}

TEST_CASE("student_t_quantile refuses bad arguments", "[statistics]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(student_t_quantile(1.0, 3), "student_t_quantile: p must be in (0, 1), got 1");
  CHECK_THROWS_WITH(student_t_quantile(0.0, 3), "student_t_quantile: p must be in (0, 1), got 0");
  CHECK_THROWS_AS(student_t_quantile(nan, 3), std::invalid_argument);
  CHECK_THROWS_WITH(student_t_quantile(0.9, 0), "student_t_quantile: dof must be positive, got 0");
  CHECK_THROWS_WITH(student_t_quantile(0.9, -2), "student_t_quantile: dof must be positive, got -2");
  CHECK_THROWS_AS(student_t_quantile(0.9, nan), std::invalid_argument);
}

TEST_CASE("summarize gives mean, sd and the t interval", "[statistics]") {
  const std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(x);
  CHECK(s.n == 8);
  CHECK(s.mean == 5.0);
  CHECK(close(s.sd, std::sqrt(32.0 / 7.0), 1e-15));
  const double half = 2.364624252 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);
  CHECK(close(s.ci_low, 5.0 - half, 1e-9));
  CHECK(close(s.ci_high, 5.0 + half, 1e-9));
  const Summary s99 = summarize(x, 0.99);
  CHECK(close(s99.ci_high - s99.mean, 3.499483297 * s.sd / std::sqrt(8.0), 1e-9));

  const std::vector<double> same{3.5, 3.5, 3.5};
  const Summary flat = summarize(same);
  CHECK(flat.sd == 0.0);
  CHECK(flat.ci_low == 3.5);
  CHECK(flat.ci_high == 3.5);
}

TEST_CASE("summarize of one value has no spread", "[statistics]") {
  const std::vector<double> one{1.25};
  const Summary s = summarize(one);
  CHECK(s.n == 1);
  CHECK(s.mean == 1.25);
  CHECK(std::isnan(s.sd));
  CHECK(std::isnan(s.ci_low));
  CHECK(std::isnan(s.ci_high));
}

TEST_CASE("summarize keeps its digits", "[statistics]") {
  // A large common offset: the naive sum of squares loses the variance entirely.
  const std::vector<double> offset{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
  const Summary s = summarize(offset);
  CHECK(s.mean == 1e9 + 10);
  CHECK(s.sd == std::sqrt(30.0));
  // Cancelling magnitudes: a plain sum gives 0, the compensated sum the exact 2.
  const std::vector<double> cancel{1.0, 1e100, 1.0, -1e100};
  CHECK(summarize(cancel).mean == 0.5);
  // A million values of 0.1: the plain running sum drifts by about 1e-6 relative.
  const std::vector<double> many(1000000, 0.1);
  CHECK(summarize(many).mean == 0.1);
}

TEST_CASE("summarize refuses bad arguments and propagates NaN", "[statistics]") {
  CHECK_THROWS_WITH(summarize(std::vector<double>{}), "summarize: values must not be empty, got 0 values");
  const std::vector<double> x{1, 2};
  CHECK_THROWS_WITH(summarize(x, 1.0), "summarize: level must be in (0, 1), got 1");
  CHECK_THROWS_WITH(summarize(x, 0.0), "summarize: level must be in (0, 1), got 0");
  const std::vector<double> diverged{1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  CHECK(std::isnan(summarize(diverged).mean));
}

}  // namespace statistics_test
