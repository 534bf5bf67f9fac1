// Tests of env/pomdp_file.hpp: every construct of Cassandra's .pomdp format (wildcards,
// overriding, the three forms of T, O and R, identity and uniform, names and numbers, every start
// form, comments, costs, numbers), exact round trips through format_pomdp and write_pomdp, and
// the message (with file:line:column) of each malformed input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memtrace/env/pomdp_file.hpp>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "temp_dir.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace pomdp_file_test {  // a namespace of its own: the folder's tests are compiled as one file

using namespace memtrace;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path data_dir = MEMTRACE_TEST_DATA_DIR;

const char* const data_files[] = {"tiger.pomdp", "grid4x3.pomdp", "constructs.pomdp"};

/// The tiger's preamble (2 named states, 3 named actions, 2 named observations) and the rest.
std::string tiger(const std::string& rest) {
  return "discount: 0.95\nvalues: reward\nstates: tiger-left tiger-right\n"
         "actions: listen open-left open-right\nobservations: tiger-left tiger-right\n" +
         rest;
}

/// The tiger's preamble, valid T and O, then `rest` from line 8 on.
std::string tiger_ok(const std::string& rest) { return tiger("T: * uniform\nO: * uniform\n" + rest); }

Eigen::MatrixXd matrix(Eigen::Index rows, Eigen::Index cols, std::initializer_list<double> values) {
  Eigen::MatrixXd m(rows, cols);
  auto it = values.begin();
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) m(r, c) = *it++;
  return m;
}

bool same(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

/// Every way to read the rewards agrees: reward(), reward_matrix() and for_each_reward_matrix().
void check_reward_views(const PomdpFile& f) {
  std::size_t calls = 0;
  f.for_each_reward_matrix([&](std::size_t u, std::size_t x, const Eigen::MatrixXd& m) {
    CHECK(u == calls / f.num_states());
    CHECK(x == calls % f.num_states());
    ++calls;
    REQUIRE(same(m, f.reward_matrix(u, x)));
    for (std::size_t x2 = 0; x2 < f.num_states(); ++x2)
      for (std::size_t y = 0; y < f.num_observations(); ++y)
        REQUIRE(m(static_cast<Eigen::Index>(x2), static_cast<Eigen::Index>(y)) == f.reward(u, x, x2, y));
  });
  CHECK(calls == f.num_actions() * f.num_states());
}

}  // namespace

TEST_CASE("the tiger problem reads as its paper describes it", "[pomdp_file]") {
  const PomdpFile f = read_pomdp(data_dir / "tiger.pomdp");
  CHECK(f.states == std::vector<std::string>{"tiger-left", "tiger-right"});
  CHECK(f.actions == std::vector<std::string>{"listen", "open-left", "open-right"});
  CHECK(f.observations == std::vector<std::string>{"tiger-left", "tiger-right"});
  CHECK((f.states_named && f.actions_named && f.observations_named));
  CHECK(f.discount == 0.95);
  CHECK_FALSE(f.costs);
  CHECK(same(f.start, Eigen::Vector2d(0.5, 0.5)));
  CHECK(same(f.transition[0], Eigen::Matrix2d::Identity()));
  CHECK(same(f.transition[1], Eigen::Matrix2d::Constant(0.5)));
  CHECK(same(f.transition[2], Eigen::Matrix2d::Constant(0.5)));
  CHECK(same(f.observation[0], matrix(2, 2, {0.85, 0.15, 0.15, 0.85})));
  CHECK(same(f.observation[1], Eigen::Matrix2d::Constant(0.5)));
  CHECK(f.rewards.size() == 5);
  CHECK(f.rewards[0] == PomdpReward{0, pomdp_any, pomdp_any, pomdp_any, -1.0});
  CHECK(f.reward(0, 1, 0, 1) == -1.0);
  CHECK(f.reward(1, 0, 1, 0) == -100.0);  // open-left with the tiger left
  CHECK(f.reward(1, 1, 0, 0) == 10.0);
  CHECK(f.reward(2, 0, 0, 1) == 10.0);
  CHECK(f.reward(2, 1, 1, 1) == -100.0);
  CHECK(same(f.expected_rewards(), matrix(2, 3, {-1, -100, 10, -1, 10, -100})));
  const std::vector<Eigen::MatrixXd> r = f.transition_rewards();
  CHECK(same(r[1], matrix(2, 2, {-100, -100, 10, 10})));
  check_reward_views(f);
  CHECK_THROWS_WITH(f.reward(3, 0, 0, 0), "PomdpFile::reward: action must be in [0, 3), got 3");
  CHECK_THROWS_WITH(f.reward(0, 0, 0, 2), "PomdpFile::reward: observation must be in [0, 2), got 2");
  CHECK_THROWS_WITH(f.reward_matrix(0, 2), "PomdpFile::reward_matrix: state must be in [0, 2), got 2");
}

TEST_CASE("the 4 x 3 grid: named cells, row matrices, start exclude, observations by wildcard", "[pomdp_file]") {
  const PomdpFile f = read_pomdp(data_dir / "grid4x3.pomdp");
  REQUIRE(f.num_states() == 11);
  CHECK(f.states.front() == "c11");
  CHECK(f.states.back() == "c43");
  CHECK(f.actions == std::vector<std::string>{"north", "south", "east", "west"});
  CHECK(f.num_observations() == 6);
  const auto s = [&](const char* name) {
    return static_cast<Eigen::Index>(std::find(f.states.begin(), f.states.end(), name) - f.states.begin());
  };
  // start exclude: c43 c42 is uniform over the other nine cells
  for (Eigen::Index x = 0; x < 11; ++x) CHECK(f.start[x] == (x == s("c43") || x == s("c42") ? 0.0 : 1.0 / 9.0));
  // north from c11: 0.8 up to c12, 0.1 east to c21, 0.1 west into the edge (stays)
  CHECK(f.transition[0](s("c11"), s("c12")) == 0.8);
  CHECK(f.transition[0](s("c11"), s("c21")) == 0.1);
  CHECK(f.transition[0](s("c11"), s("c11")) == 0.1);
  // east from c12 bumps into the wall at (2, 2): 0.8 stays, and 0.1 each to c11 and c13
  CHECK(f.transition[2](s("c12"), s("c12")) == 0.8);
  for (std::size_t u = 0; u < 4; ++u) {
    CHECK(f.observation[u](s("c12"), 2) == 1.0);  // both
    CHECK(f.observation[u](s("c43"), 4) == 1.0);  // good
    CHECK(f.observation[u].row(s("c21")).sum() == 1.0);
  }
  CHECK(f.reward(1, static_cast<std::size_t>(s("c43")), 0, 0) == 1.0);
  CHECK(f.reward(1, static_cast<std::size_t>(s("c42")), 0, 0) == -1.0);
  CHECK(f.reward(3, static_cast<std::size_t>(s("c33")), 0, 0) == -0.04);
  check_reward_views(f);
}

TEST_CASE("every construct of the format: wildcards, overriding, three forms, identity, uniform, costs",
          "[pomdp_file]") {
  const PomdpFile f = read_pomdp(data_dir / "constructs.pomdp");
  CHECK(f.states == std::vector<std::string>{"left", "middle", "right"});
  CHECK(f.states_named);
  CHECK(f.observations == std::vector<std::string>{"0", "1", "2"});  // numbered
  CHECK_FALSE(f.observations_named);
  CHECK(f.actions == std::vector<std::string>{"stay", "move"});
  CHECK(f.discount == 0.9);
  CHECK(f.costs);
  CHECK(same(f.start, Eigen::Vector3d(0.5, 0.0, 0.5)));  // start include: left right
  CHECK(same(f.transition[0], matrix(3, 3, {1, 0, 0, 0.25, 0.5, 0.25, 0, 0, 1})));
  CHECK(same(f.transition[1], matrix(3, 3, {0, 1, 0, 0.25, 0.5, 0.25, 0, 1, 0})));
  CHECK(same(f.observation[0], Eigen::Matrix3d::Identity()));
  CHECK(same(f.observation[1], matrix(3, 3, {1, 0, 0, 0.2, 0.3, 0.5, 0, 0, 1})));
  // R: 2 single entries, a row (3), a matrix (9), 2 single entries, kept in file order
  REQUIRE(f.rewards.size() == 2 + 3 + 9 + 2);
  CHECK(f.rewards[1] == PomdpReward{1, pomdp_any, pomdp_any, pomdp_any, 2.5});
  CHECK(f.rewards[3] == PomdpReward{1, 0, 1, 1, 2.0});
  CHECK(f.rewards[13] == PomdpReward{0, 2, 2, 2, -0.3});
  CHECK(f.rewards[15] == PomdpReward{pomdp_any, 1, pomdp_any, 0, -0.125});
  CHECK(f.reward(0, 0, 0, 0) == 1.0);     // only the first entry applies
  CHECK(f.reward(1, 0, 0, 0) == 2.5);     // moving overrides it
  CHECK(f.reward(1, 0, 1, 2) == 3.0);     // the row overrides that
  CHECK(f.reward(0, 2, 2, 1) == -2.0);    // the matrix
  CHECK(f.reward(0, 2, 2, 2) == 5.0);     // a later single entry overrides one of its cells
  CHECK(f.reward(0, 2, 0, 0) == 0.0);     // the matrix's zeros override the 1
  CHECK(f.reward(1, 1, 2, 0) == -0.125);  // the last entry, wildcards in the middle
  CHECK(f.reward(1, 1, 2, 1) == 2.5);
  CHECK(same(f.expected_rewards(), matrix(3, 2, {1, 2.3, 0.71875, 1.58125, 5, 2.5})));
  check_reward_views(f);
}

TEST_CASE("every form of start gives the distribution the format defines", "[pomdp_file]") {
  const auto start = [](const std::string& line) {
    return parse_pomdp(tiger("start" + line + "\nT: * uniform\nO: * uniform\n")).start;
  };
  const auto three = [](const std::string& line) {
    return parse_pomdp("discount: 1 values: reward states: a b c actions: 1 observations: 1\nstart" + line +
                       "\nT: 0 uniform O: 0 uniform")
        .start;
  };
  CHECK(same(parse_pomdp(tiger_ok("")).start, Eigen::Vector2d(0.5, 0.5)));  // no start line: uniform
  CHECK(same(start(": 0.25 0.75"), Eigen::Vector2d(0.25, 0.75)));
  CHECK(same(start(": 1 0"), Eigen::Vector2d(1, 0)));
  CHECK(same(start(": uniform"), Eigen::Vector2d(0.5, 0.5)));
  CHECK(same(start(": tiger-right"), Eigen::Vector2d(0, 1)));
  CHECK(same(start(": 1"), Eigen::Vector2d(0, 1)));  // a single integer is a state's number
  CHECK(same(start(" include: tiger-left"), Eigen::Vector2d(1, 0)));
  CHECK(same(start(" exclude: 0"), Eigen::Vector2d(0, 1)));
  CHECK(same(three(" include: a c"), Eigen::Vector3d(0.5, 0, 0.5)));
  CHECK(same(three(" include: *"), Eigen::Vector3d::Constant(1.0 / 3.0)));
  CHECK(same(three(" exclude: b"), Eigen::Vector3d(0.5, 0, 0.5)));
  CHECK(same(three(" exclude: a 1 a"), Eigen::Vector3d(0, 0, 1)));
  CHECK(same(three(": 0.2 0.3 0.5"), Eigen::Vector3d(0.2, 0.3, 0.5)));
  // one state: a single number is the distribution, as in pomdp-solve
  CHECK(same(parse_pomdp("discount: 1 values: reward states: 1 actions: 1 observations: 1 start: 1 T: 0 identity "
                         "O: 0 uniform")
                 .start,
             Eigen::VectorXd::Ones(1)));
}

TEST_CASE("numbers: integers, points, exponents, signs, and '.5' is refused as the grammar says", "[pomdp_file]") {
  const auto value = [](const std::string& number) {
    return parse_pomdp(tiger_ok("R: * : * : * : * " + number)).rewards.at(0).value;
  };
  CHECK(value("3") == 3.0);
  CHECK(value("-3") == -3.0);
  CHECK(value("+3") == 3.0);
  CHECK(value("- 3") == -3.0);  // the sign is a token of its own in the grammar
  CHECK(value("2.5") == 2.5);
  CHECK(value("2.") == 2.0);  // pomdp-solve's scanner: digits after the point are optional
  CHECK(value("0.125") == 0.125);
  CHECK(value("1e3") == 1000.0);
  CHECK(value("1E+3") == 1000.0);
  CHECK(value("-2.5e-1") == -0.25);
  CHECK(value("1.e2") == 100.0);
  CHECK(value("007") == 7.0);
  CHECK(value("1.7976931348623157e308") == std::numeric_limits<double>::max());
  CHECK_THROWS_WITH(value(".5"), "<string>:8:18: a number needs a digit before the point, found '.5' (write 0.5)");
  CHECK_THROWS_WITH(value("-.5"), "<string>:8:19: a number needs a digit before the point, found '.5' (write 0.5)");
  CHECK_THROWS_WITH(value("1.5.2"), "<string>:8:18: malformed number '1.5.2'");
  CHECK_THROWS_WITH(value("2x"), "<string>:8:18: malformed number '2x'");
  CHECK_THROWS_WITH(value("1e"), "<string>:8:18: malformed number '1e'");
  CHECK_THROWS_WITH(value("1e+"), "<string>:8:18: malformed number '1e+'");
  CHECK_THROWS_WITH(value("1e999"), "<string>:8:18: the number 1e999 is out of the range of a double");
  CHECK_THROWS_WITH(value("-"),
                    "<string>:8:19: expected a number (the reward) after the sign, found the end of the file");
}

TEST_CASE("comments and white space go anywhere", "[pomdp_file]") {
  const PomdpFile plain = read_pomdp(data_dir / "tiger.pomdp");
  const std::string text =
      "#!\n# leading comment\r\ndiscount:0.95 values:reward#tight\n"
      "states:\ttiger-left # one\n tiger-right\nactions: listen open-left open-right observations: tiger-left\n"
      "tiger-right start: uniform T: listen identity T: open-left uniform T: open-right uniform O: listen\n"
      "0.85 # a comment inside a matrix\n 0.15 0.15\n\n 0.85 O:open-left uniform O:open-right uniform\n"
      "R:listen:*:*:* -1 R: open-left : tiger-left : * : * -100 R: open-left : tiger-right : * : * 10\n"
      "R: open-right : tiger-left : * : * 10 R: open-right : tiger-right : * : * -100 # no newline at the end";
  CHECK(parse_pomdp(text) == plain);
}

TEST_CASE("numbered entities are named 0, 1, ... and may be referred to by number", "[pomdp_file]") {
  const PomdpFile f = parse_pomdp(
      "discount: 0.5 values: reward states: 3 actions: 2 observations: 2\n"
      "T: 0 identity T: 1 : * : 0 1.0 O: * : * : 1 1 R: 1 : 2 : 0 : 1 4");
  CHECK(f.states == std::vector<std::string>{"0", "1", "2"});
  CHECK(f.actions == std::vector<std::string>{"0", "1"});
  CHECK_FALSE((f.states_named || f.actions_named || f.observations_named));
  CHECK(same(f.transition[1], matrix(3, 3, {1, 0, 0, 1, 0, 0, 1, 0, 0})));
  CHECK(same(f.observation[0], matrix(3, 2, {0, 1, 0, 1, 0, 1})));
  CHECK(f.reward(1, 2, 0, 1) == 4.0);
  CHECK(f.reward(1, 2, 0, 0) == 0.0);
  CHECK_THROWS_WITH(parse_pomdp("discount: 0.5 values: reward states: 3 actions: 2 observations: 2\nT: 0 : s0 "),
                    "<string>:2:8: no state named 's0': the states are numbered 0 to 2");
}

TEST_CASE("round trips: parse, format, parse gives the same PomdpFile", "[pomdp_file]") {
  for (const char* name : data_files) {
    INFO(name);
    const PomdpFile f = read_pomdp(data_dir / name);
    const std::string text = format_pomdp(f);
    const PomdpFile back = parse_pomdp(text, "formatted");
    CHECK(back == f);
    CHECK(format_pomdp(back) == text);
  }
  // numbered entities, the row form of R, wildcard rows, awkward doubles
  PomdpFile f = parse_pomdp(
      "discount: 0.99 values: cost states: 3 actions: 2 observations: 2\nstart: 0.1 0.2 0.7\n"
      "T: * uniform O: * : * 0.3 0.7 R: 1 : * : 2 5 6 R: * : 0\n1 2 3 4 5 6\nR: 0 : 1 : * 7 8");
  f.transition[0].row(1) << 0.1, 0.2, 0.7;  // 0.1 + 0.2 + 0.7 != 1 exactly, within tolerance
  f.start << 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0;
  f.rewards.push_back({pomdp_any, 2, pomdp_any, 1, 1e-300});
  f.rewards.push_back({0, pomdp_any, 0, pomdp_any, -123456.789012345678});
  f.rewards.push_back({0, 0, 0, 0, 5e-324});  // the smallest subnormal
  const std::string text = format_pomdp(f);
  CHECK_THAT(text, Contains("R: 1 : * : 2\n5 6\n"));
  CHECK_THAT(text, Contains("R: * : 0\n1 2\n3 4\n5 6\n"));
  CHECK_THAT(text, Contains("R: * : 2 : * : 1 1e-300\n"));
  CHECK_THAT(text, Contains("values: cost\nstates: 3\n"));
  CHECK(parse_pomdp(text) == f);
}

TEST_CASE("write_pomdp writes atomically and read_pomdp reads it back", "[pomdp_file]") {
  const test::TempDir dir("memtrace_pomdp_file_test");
  const PomdpFile f = read_pomdp(data_dir / "constructs.pomdp");
  const auto path = dir / "model.pomdp";
  write_pomdp(f, path);
  CHECK(read_pomdp(path) == f);
  CHECK(test::slurp(path) == format_pomdp(f));
  write_pomdp(read_pomdp(data_dir / "tiger.pomdp"), path);  // replaces the file
  CHECK(read_pomdp(path).actions.size() == 3);
  PomdpFile bad = f;
  bad.discount = 2.0;
  CHECK_THROWS_WITH(write_pomdp(bad, path), "format_pomdp: discount must be in [0, 1], got 2");
  CHECK(read_pomdp(path).actions.size() == 3);  // untouched
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) files += entry.is_regular_file();
  CHECK(files == 1);  // no temporary file left behind
  CHECK_THROWS_AS(write_pomdp(f, dir / "no-such-dir" / "model.pomdp"), std::system_error);
  CHECK_THROWS_AS(read_pomdp(dir / "missing.pomdp"), std::system_error);
}

TEST_CASE("format_pomdp refuses a model it could not write", "[pomdp_file]") {
  const PomdpFile tiger_file = read_pomdp(data_dir / "tiger.pomdp");
  PomdpFile f = tiger_file;
  f.transition[0](0, 0) = 0.9;
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: T: listen: row of state tiger-left sums to 0.9, expected 1");
  f = tiger_file;
  f.observation[2](1, 0) = std::nan("");
  CHECK_THROWS_WITH(format_pomdp(f),
                    "format_pomdp: O: open-right: row of next state tiger-right: the probability of observation "
                    "tiger-left is nan, expected a number in [0, 1]");
  f = tiger_file;
  f.start[0] = -0.5;
  CHECK_THROWS_WITH(format_pomdp(f),
                    "format_pomdp: start: the probability of state tiger-left is -0.5, expected a number in [0, 1]");
  f = tiger_file;
  f.rewards[0].value = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: reward entry 0 has the value inf, expected a finite number");
  f = tiger_file;
  f.rewards[1].observation = 2;
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: reward entry 1: observation must be in [0, 2) or pomdp_any, got 2");
  f = tiger_file;
  f.states[1] = "2nd";
  CHECK_THROWS_WITH(format_pomdp(f),
                    Contains("format_pomdp: state 1 is named \"2nd\": a name must start with a letter"));
  f.states[1] = "start";
  CHECK_THROWS_WITH(format_pomdp(f), Contains("is named \"start\""));
  f.states[1] = "tiger-left";
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: states 0 and 1 are both named \"tiger-left\"");
  f = tiger_file;
  f.actions_named = false;
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: numbered action 0 must be named \"0\", got \"listen\"");
  f = tiger_file;
  f.observation.pop_back();
  CHECK_THROWS_WITH(format_pomdp(f), "format_pomdp: observation must hold one matrix per action (3), got 2");
}

TEST_CASE("malformed input: the message names file:line:column, what was expected and what was found", "[pomdp_file]") {
  const auto error = [](const std::string& text) -> std::string {
    try {
      (void)parse_pomdp(text, "bad.pomdp");
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  // names and numbers that do not exist
  CHECK(error(tiger_ok("T: listen : tiger-middle : tiger-left 1")) == "bad.pomdp:8:13: no state named 'tiger-middle'");
  CHECK(error(tiger_ok("T: listen : 0 : 2 1")) ==
        "bad.pomdp:8:17: state 2 is out of range: there are 2 states (0 to 1)");
  CHECK(error(tiger_ok("O: 3 uniform")) == "bad.pomdp:8:4: action 3 is out of range: there are 3 actions (0 to 2)");
  CHECK(error(tiger_ok("O: listen : 0 : tiger-center 1")) == "bad.pomdp:8:17: no observation named 'tiger-center'");
  CHECK(error(tiger_ok("R: jump : * : * : * 1")) == "bad.pomdp:8:4: no action named 'jump'");
  CHECK(error(tiger_ok("T: listen : 99999999999999999999999 uniform")) ==
        "bad.pomdp:8:13: state 99999999999999999999999 is too large");
  CHECK(error(tiger_ok("T: : 0 uniform")) == "bad.pomdp:8:4: expected an action (a name, a number or '*'), found ':'");
  // rows and matrices of the wrong size
  CHECK(error(tiger_ok("T: listen : 0\n0.5 0.5 0")) ==
        "bad.pomdp:9:9: T: listen : 0: expected 2 probabilities (one per next state), found 3");
  CHECK(error(tiger_ok("T: listen : tiger-left\n0.5\nO: * uniform")) ==
        "bad.pomdp:10:1: T: listen : tiger-left: expected 2 probabilities (one per next state), found 1 before the "
        "keyword 'O'");
  CHECK(error(tiger_ok("T: listen\n1 0\n0")) ==
        "bad.pomdp:10:2: T: listen: expected 4 probabilities (a 2 x 2 matrix), found 3 before the end of the file");
  CHECK(error(tiger_ok("O: * : *\n0.5 0.25 0.25")) ==
        "bad.pomdp:9:10: O: * : *: expected 2 probabilities (one per observation), found 3");
  CHECK(error(tiger_ok("O: listen 1 0 0 1 0")) ==
        "bad.pomdp:8:19: O: listen: expected 4 probabilities (a 2 x 2 matrix), found 5");
  CHECK(error(tiger_ok("R: listen : * : *\n1 2 3")) ==
        "bad.pomdp:9:5: R: listen : * : *: expected 2 numbers (one per observation), found 3");
  CHECK(error(tiger_ok("R: listen : *\n1 2 3")) ==
        "bad.pomdp:9:6: R: listen : *: expected 4 numbers (a 2 x 2 matrix of next states x observations), found 3 "
        "before the end of the file");
  CHECK(error(tiger_ok("R: listen : 0 : 0 : 0 1 2")) ==
        "bad.pomdp:8:25: expected 'T:', 'O:' or 'R:', found the number 2: more numbers than the entry at line 8 "
        "takes");
  CHECK(error(tiger_ok("R: listen\n1 2 3 4")) ==
        "bad.pomdp:9:1: expected ':' and a state after 'R: listen', found the number 1 (the form 'R: <action>' "
        "followed by a matrix is for MDPs, which are not supported)");
  // keywords where the grammar has no place for them
  CHECK(error(tiger_ok("O: listen identity")) ==
        "bad.pomdp:8:11: 'identity' is allowed only for a whole transition matrix ('T: <action> identity'), not for a "
        "matrix of O (in 'O: listen')");
  CHECK(error(tiger_ok("T: listen : 0 identity")) ==
        "bad.pomdp:8:15: 'identity' is allowed only for a whole transition matrix ('T: <action> identity'), not for a "
        "row of T (in 'T: listen : 0')");
  CHECK(error(tiger_ok("T: listen : 0 reset")) ==
        "bad.pomdp:8:15: 'reset' (an extension of pomdp-solve's parser) is not supported");
  CHECK(error(tiger_ok("R: * : * : * : * uniform")) ==
        "bad.pomdp:8:18: expected a number (the reward), found the keyword 'uniform'");
  CHECK(error(tiger_ok("T listen identity")) == "bad.pomdp:8:3: expected ':' after 'T', found the name 'listen'");
  CHECK(error(tiger_ok("X: listen identity")) == "bad.pomdp:8:1: expected 'T:', 'O:' or 'R:', found the name 'X'");
  CHECK(error(tiger_ok("T: listen : 0 : 0 1 ; ")) == "bad.pomdp:8:21: unexpected character ';'");
  CHECK(error(tiger_ok("T: listen\t\x01")) == "bad.pomdp:8:11: unexpected byte 0x01");
  // probabilities
  CHECK(error(tiger_ok("T: listen : 0 : 0 -0.1")) == "bad.pomdp:8:19: a probability must be in [0, 1], found -0.1");
  CHECK(error(tiger_ok("O: listen : 0 : 0 1.5")) == "bad.pomdp:8:19: a probability must be in [0, 1], found 1.5");
  CHECK(error(tiger_ok("T: listen : 0 : 0 1e999")) ==
        "bad.pomdp:8:19: the number 1e999 is out of the range of a double");
  // not stochastic: the row is named, with the entry that last wrote it
  CHECK(error(tiger("T: * identity\nT: listen : tiger-left : tiger-left 0.9\nO: * uniform")) ==
        "bad.pomdp:7:1: T: listen: row of state tiger-left sums to 0.9, expected 1");
  CHECK(error(tiger("T: * identity\nO: * uniform\nO: open-left : 1\n0.5 0.4999")) ==
        "bad.pomdp:8:1: O: open-left: row of next state tiger-right sums to 0.9999, expected 1");
  CHECK(error(tiger("T: * identity\nO: listen uniform")) ==
        "bad.pomdp: O: open-left: row of next state tiger-left sums to 0, expected 1 (no entry sets it)");
  CHECK(error(tiger("T: listen : * : 0 0.3333333 T: listen : * : 1 0.6666666\nT: * uniform\nO: * uniform")) ==
        "no error");  // within pomdp_file_tolerance (1e-5), as in pomdp-solve
  // the preamble
  CHECK(error("discount: 0.9\nvalues: reward\nactions: 2\nobservations: 2\nT: * uniform") ==
        "bad.pomdp:5:1: the preamble has no 'states:' line (discount, values, states, actions and observations must "
        "all come before start and the T, O and R entries)");
  CHECK(error("states: 2 actions: 2 observations: 2 discount: 0.9") ==
        "bad.pomdp:1:51: the preamble has no 'values:' line (discount, values, states, actions and observations must "
        "all come before start and the T, O and R entries)");
  CHECK(error(tiger("states: 3")) == "bad.pomdp:6:1: a second 'states:' line (the first is at line 3)");
  CHECK(error(tiger_ok("states: 3")) ==
        "bad.pomdp:8:1: 'states:' must come in the preamble, before start and the T, O and R entries");
  CHECK(error("discount: 0.9\nstate: 3") ==
        "bad.pomdp:2:1: expected a preamble line (discount:, values:, states:, actions:, observations:), start, T:, "
        "O: or R:, found the name 'state'");
  CHECK(error("discount: 1.5") == "bad.pomdp:1:11: discount must be in [0, 1], found 1.5");
  CHECK(error("values: money") == "bad.pomdp:1:9: expected 'reward' or 'cost' after 'values:', found the name 'money'");
  CHECK(error("states: 0") == "bad.pomdp:1:9: there must be at least one state, found states: 0");
  CHECK(error("states: -2") ==
        "bad.pomdp:1:9: expected the number of states or their names after 'states:', found '-'");
  CHECK(error("states: a start") ==
        "bad.pomdp:1:11: the preamble has no 'discount:' line (discount, values, states, "
        "actions and observations must all come before start and the T, O and R entries)");
  CHECK(error("actions: uniform") ==
        "bad.pomdp:1:10: expected the number of actions or their names after 'actions:', found the keyword 'uniform'");
  CHECK(error("observations: up down up") ==
        "bad.pomdp:1:23: observation 'up' is listed twice (first as observation 0)");
  CHECK(error("states: 99999999999999999999") ==
        "bad.pomdp:1:9: the number of states 99999999999999999999 is too large");
  // start
  CHECK(error(tiger_ok("start: uniform")) ==
        "bad.pomdp:8:1: 'start' must come once, right after the preamble and before the T, O and R entries");
  CHECK(error(tiger("start: 0.5 0.6\nT: * uniform O: * uniform")) == "bad.pomdp:6:1: start: sums to 1.1, expected 1");
  CHECK(error(tiger("start: 0.5 0.25 0.25")) ==
        "bad.pomdp:6:17: start: expected 2 probabilities (one per state), found 3");
  CHECK(error(tiger("start: 2")) == "bad.pomdp:6:8: state 2 is out of range: there are 2 states (0 to 1)");
  CHECK(error(tiger("start: tiger")) == "bad.pomdp:6:8: no state named 'tiger'");
  CHECK(error(tiger("start: *")) ==
        "bad.pomdp:6:8: expected after 'start:' 2 probabilities, 'uniform' or a state, found '*'");
  CHECK(error(tiger("start exclude: * T: * uniform")) == "bad.pomdp:6:1: start exclude: every state is excluded");
  CHECK(error(tiger("start: tiger-left tiger-right\nT: * uniform")) ==
        "bad.pomdp:6:19: 'start:' takes one state (or n probabilities); for a uniform start over several states "
        "write 'start include: tiger-left tiger-right ...'");
  CHECK(error(tiger("start: tiger-left 1\nT: * uniform")) ==
        "bad.pomdp:6:19: 'start:' takes one state (or n probabilities); for a uniform start over several states "
        "write 'start include: tiger-left 1 ...'");
  CHECK(error(tiger("start include: T: * uniform")) ==
        "bad.pomdp:6:16: expected a state after 'start include:', found the keyword 'T'");
  CHECK(error(tiger("start: 0.5 -0.5 1")) == "bad.pomdp:6:12: a probability must be in [0, 1], found -0.5");
}

TEST_CASE("sizes are checked against the budget before anything is allocated", "[pomdp_file]") {
  const auto error = [](const std::string& text) -> std::string {
    try {
      (void)parse_pomdp(text, "big.pomdp");
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error("discount: 1 values: reward states: 100000 actions: 5 observations: 2\n") ==
        "big.pomdp:2:1: the model is too large: |U| |X|^2 = 50000000000 transition probabilities exceed the budget "
        "max_table = 134217728 with |X| = 100000 states, |U| = 5 actions, |Y| = 2 observations");
  CHECK(error("discount: 1 values: reward states: 10 actions: 2 observations: 10000000 T: * uniform") ==
        "big.pomdp:1:73: the model is too large: |U| |X| |Y| = 200000000 observation probabilities exceed the budget "
        "max_table = 134217728 with |X| = 10 states, |U| = 2 actions, |Y| = 10000000 observations");
  CHECK(error("discount: 1 values: reward states: 4294967296 actions: 2 observations: 1\n") ==
        "big.pomdp:2:1: the model is too large: |U| |X|^2 = more than 2^64 transition probabilities exceed the budget "
        "max_table = 134217728 with |X| = 4294967296 states, |U| = 2 actions, |Y| = 1 observations");
  // a Tag-sized model given with wildcards keeps a handful of reward entries, not |U||X|^2|Y| numbers
  const PomdpFile tag = parse_pomdp(
      "discount: 0.95 values: reward states: 870 actions: 5 observations: 30\n"
      "T: * identity O: * : * : 0 1.0 R: * : * : * : * -1 R: 4 : * : * : * 10");
  CHECK(tag.rewards.size() == 2);
  CHECK(tag.reward(4, 869, 0, 29) == 10.0);
  CHECK(tag.reward(0, 3, 0, 0) == -1.0);
}

TEST_CASE("the budget is a parameter: max_table", "[pomdp_file]") {
  const std::string text =
      "discount: 0.9 values: reward states: 100 actions: 2 observations: 3\nT: * uniform O: * uniform";
  CHECK(parse_pomdp(text, "m.pomdp", 20000).num_states() == 100);  // |U| |X|^2 = 20000 fits exactly
  CHECK_THROWS_WITH(parse_pomdp(text, "m.pomdp", 19999),
                    "m.pomdp:2:1: the model is too large: |U| |X|^2 = 20000 transition probabilities exceed the "
                    "budget max_table = 19999 with |X| = 100 states, |U| = 2 actions, |Y| = 3 observations");
  CHECK_THROWS_WITH(parse_pomdp(text, "m.pomdp", 0), "parse_pomdp: max_table must be at least 1, got 0");
  // What is not a table counts too: 2^27 actions of one state fit the table budget, not the bookkeeping.
  CHECK_THROWS_WITH(parse_pomdp("discount: 0.9 values: reward states: 1 actions: 134217728 observations: 1\n"),
                    "<string>:2:1: the model is too large: |U| = 134217728 actions and |X| + |Y| = 2 names need "
                    "2147483656 doubles of bookkeeping (16 an action, 4 a name), beyond the budget max_table = "
                    "134217728");
  CHECK(parse_pomdp(text, "m.pomdp", 20000).num_actions() == 2);  // 16 * 2 + 4 * 103 is well within
  CHECK_THROWS_WITH(read_pomdp(data_dir / "tiger.pomdp", 0), "read_pomdp: max_table must be at least 1, got 0");
}

#if defined(__linux__)
namespace {
/// The resident memory (KiB) that parsing `text` with `max_table` adds at its peak, measured in a
/// forked child (a fresh high-water mark: ru_maxrss minus the resident size at the start).
long parse_peak_kib(const std::string& text, std::size_t max_table) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    long pages = 0, resident = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
      std::fclose(statm);
    }
    long peak = -1;
    try {
      const PomdpFile file = parse_pomdp(text, "big.pomdp", max_table);
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      if (file.num_states() > 0) peak = usage.ru_maxrss - resident * (sysconf(_SC_PAGESIZE) / 1024);
    } catch (...) {
    }
    (void)!write(fds[1], &peak, sizeof peak);
    _exit(0);
  }
  close(fds[1]);
  long peak = -1;
  const ssize_t got = read(fds[0], &peak, sizeof peak);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(got == static_cast<ssize_t>(sizeof peak));
  return peak;
}
}  // namespace

TEST_CASE("the reader's peak memory stays within its budget: no table is copied", "[pomdp_file]") {
  // A 100-byte file asks for a full budget: |X| = 2048, one action, |X|^2 = 2^22 doubles (32 MiB)
  // of transitions and 2^11 of observations. Built in place, the peak is the one table (plus what
  // the sanitizers add: an eighth for ASan's shadow); a copied table would double it.
  const std::string text =
      "discount: 0.9 values: reward states: 2048 actions: 1 observations: 1\nT: * uniform O: * uniform";
  const long table_kib = (8L << 22) / 1024;
  const long peak = parse_peak_kib(text, std::size_t{1} << 22);
  INFO("peak " << peak << " KiB, table " << table_kib << " KiB");
  CHECK(peak >= table_kib * 9 / 10);  // the measurement sees the table (it is written: T: * uniform)
  CHECK(peak < table_kib * 3 / 2);
}
#endif

}  // namespace pomdp_file_test
