#pragma once
// Cassandra's .pomdp text format (the input of pomdp-solve), read and written: PomdpFile is the
// plain data a file maps to, parse_pomdp / read_pomdp read it, format_pomdp / write_pomdp write
// it so that it reads back to the same PomdpFile. See docs/classic-pomdps.md for the grammar
// supported, how names and numbers map, and the errors.

#include <Eigen/Core>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memtrace/env/fwd.hpp"
#include "memtrace/files.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// The wildcard `*` of a reward entry: the entry applies to every action, state or observation.
inline constexpr std::size_t pomdp_any = std::numeric_limits<std::size_t>::max();

/// Rows of T and O and the start distribution may differ from 1 by this much, as in pomdp-solve
/// (files in the wild write 1/3 as 0.333333).
inline constexpr double pomdp_file_tolerance = 1e-5;

/// The default budget (`max_table` of parse_pomdp and read_pomdp): |U| |X|^2 transition
/// probabilities and |U| |X| |Y| observation probabilities are each at most this many doubles
/// (2^27, 1 GiB), and so is the bookkeeping (16 doubles an action, 4 a numbered name). A larger
/// model is refused before anything is allocated, with the sizes in the message.
inline constexpr std::size_t pomdp_file_max_table = std::size_t{1} << 27;

/// One reward entry as the file gives it: each field is an index or pomdp_any (`*`). The row and
/// matrix forms of `R:` are expanded into one entry per number, in the order of the file.
struct PomdpReward {
  Action action = pomdp_any;
  State state = pomdp_any;
  State next_state = pomdp_any;
  Observation observation = pomdp_any;
  double value = 0.0;

  [[nodiscard]] bool matches(Action u, State x, State x2, Observation y) const noexcept {
    return (action == pomdp_any || action == u) && (state == pomdp_any || state == x) &&
           (next_state == pomdp_any || next_state == x2) && (observation == pomdp_any || observation == y);
  }
  friend bool operator==(const PomdpReward&, const PomdpReward&) = default;
};

/// A .pomdp file as data. Matrices are row-stochastic:
///   transition[u](x, x')  = T(x' | x, u)    (|X| x |X| per action),
///   observation[u](x', y) = O(y | x', u)    (|X| x |Y| per action: y is emitted after entering x'),
///   start[x]              = p(x_0 = x),
///   reward(u, x, x', y)   = R(u, x, x', y)  (0 where no entry applies; a cost if `costs`).
/// Numbered entities ("states: 3") get the names "0", "1", ... and `*_named = false`.
/// (`PomdpFile` is `BasicPomdpFile<>`, a class template only for compile time: env/fwd.hpp.)
template <class Lazy>
struct BasicPomdpFile {
  std::vector<std::string> states, actions, observations;
  bool states_named = false, actions_named = false, observations_named = false;
  double discount = 1.0;
  bool costs = false;  // `values: cost`: the reward entries are costs (kept as written, not negated)
  Eigen::VectorXd start;
  std::vector<Eigen::MatrixXd> transition;
  std::vector<Eigen::MatrixXd> observation;
  std::vector<PomdpReward> rewards;  // in file order: a later entry overrides an earlier one

  [[nodiscard]] std::size_t num_states() const noexcept { return states.size(); }
  [[nodiscard]] std::size_t num_actions() const noexcept { return actions.size(); }
  [[nodiscard]] std::size_t num_observations() const noexcept { return observations.size(); }

  /// R(u, x, x', y): the value of the last entry that matches, or 0. O(number of entries).
  [[nodiscard]] double reward(Action u, State x, State x2, Observation y) const {
    check_indices("PomdpFile::reward", u, x);
    if (x2 >= num_states())
      detail::invalid("PomdpFile::reward: next state must be in [0, ", num_states(), "), got ", x2);
    if (y >= num_observations())
      detail::invalid("PomdpFile::reward: observation must be in [0, ", num_observations(), "), got ", y);
    for (auto it = rewards.rbegin(); it != rewards.rend(); ++it)
      if (it->matches(u, x, x2, y)) return it->value;
    return 0.0;
  }

  /// The |X| x |Y| matrix (x', y) -> R(u, x, x', y). O(entries + cells the matching entries cover).
  [[nodiscard]] Eigen::MatrixXd reward_matrix(Action u, State x) const {
    check_indices("PomdpFile::reward_matrix", u, x);
    Matrix m = Matrix::Zero(rows(), cols());
    for (const PomdpReward& e : rewards)
      if ((e.action == pomdp_any || e.action == u) && (e.state == pomdp_any || e.state == x)) paint(m, e);
    return m;
  }

  /// Calls f(u, x, R) for every action u and state x (u outer, x inner) with R(x', y) =
  /// R(u, x, x', y), an |X| x |Y| matrix reused between calls. The entries are sorted into
  /// buckets once, so the whole sweep costs O(entries + |U| |X| |X| |Y|): the fast way to convert.
  template <class F>
  void for_each_reward_matrix(F&& f) const {
    const std::size_t n = num_states(), na = num_actions();
    // Entries sorted by what they name: (u, x), x alone (u = *), u alone (x = *), neither. Each
    // list is in file order, so merging the four lists that apply to (u, x) gives the file order.
    std::vector<std::vector<std::size_t>> both(na * n), by_state(n), by_action(na);
    std::vector<std::size_t> neither;
    for (std::size_t i = 0; i < rewards.size(); ++i) {
      const PomdpReward& e = rewards[i];
      const bool any_u = e.action == pomdp_any, any_x = e.state == pomdp_any;
      if ((!any_u && e.action >= na) || (!any_x && e.state >= n)) continue;  // applies to nothing
      if (any_u && any_x)
        neither.push_back(i);
      else if (any_u)
        by_state[e.state].push_back(i);
      else if (any_x)
        by_action[e.action].push_back(i);
      else
        both[e.action * n + e.state].push_back(i);
    }
    Matrix m(rows(), cols());
    for (std::size_t u = 0; u < na; ++u)
      for (std::size_t x = 0; x < n; ++x) {
        m.setZero();
        const std::vector<std::size_t>* lists[4] = {&both[u * n + x], &by_state[x], &by_action[u], &neither};
        std::size_t at[4] = {0, 0, 0, 0};
        for (;;) {
          int first = -1;
          for (int l = 0; l < 4; ++l)
            if (at[l] < lists[l]->size() && (first < 0 || (*lists[l])[at[l]] < (*lists[first])[at[first]])) first = l;
          if (first < 0) break;
          paint(m, rewards[(*lists[first])[at[first]++]]);
        }
        f(u, x, static_cast<const Matrix&>(m));
      }
  }

  /// [u](x, x') = sum_y O(y | x', u) R(u, x, x', y): the reward of the transition x -> x' under u
  /// with the observation averaged out (|X| x |X| per action; a cost if `costs`).
  [[nodiscard]] std::vector<Eigen::MatrixXd> transition_rewards() const {
    std::vector<Matrix> r(num_actions(), Matrix::Zero(rows(), rows()));
    for_each_reward_matrix([&](std::size_t u, std::size_t x, const auto& m) {
      r[u].row(static_cast<Eigen::Index>(x)) = observation[u].cwiseProduct(m).rowwise().sum().transpose();
    });
    return r;
  }

  /// (x, u) -> sum_{x', y} T(x' | x, u) O(y | x', u) R(u, x, x', y): the expected immediate reward.
  [[nodiscard]] Eigen::MatrixXd expected_rewards() const {
    Matrix r(rows(), static_cast<Eigen::Index>(num_actions()));
    const std::vector<Matrix> by_transition = transition_rewards();
    for (std::size_t u = 0; u < num_actions(); ++u)
      r.col(static_cast<Eigen::Index>(u)) = transition[u].cwiseProduct(by_transition[u]).rowwise().sum();
    return r;
  }

  /// Exact equality of every member (matrices compared entry by entry).
  friend bool operator==(const BasicPomdpFile& a, const BasicPomdpFile& b) {
    const auto same = [](const auto& p, const auto& q) {
      return p.rows() == q.rows() && p.cols() == q.cols() && (p.array() == q.array()).all();
    };
    const auto same_all = [&](const auto& p, const auto& q) {
      if (p.size() != q.size()) return false;
      for (std::size_t i = 0; i < p.size(); ++i)
        if (!same(p[i], q[i])) return false;
      return true;
    };
    return a.states == b.states && a.actions == b.actions && a.observations == b.observations &&
           a.states_named == b.states_named && a.actions_named == b.actions_named &&
           a.observations_named == b.observations_named && a.discount == b.discount && a.costs == b.costs &&
           same(a.start, b.start) && same_all(a.transition, b.transition) && same_all(a.observation, b.observation) &&
           a.rewards == b.rewards;
  }

 private:
  using Matrix = detail::lazy_t<Eigen::MatrixXd, Lazy>;  // Eigen::MatrixXd (env/fwd.hpp)

  [[nodiscard]] Eigen::Index rows() const noexcept { return static_cast<Eigen::Index>(num_states()); }
  [[nodiscard]] Eigen::Index cols() const noexcept { return static_cast<Eigen::Index>(num_observations()); }

  void check_indices(const char* who, Action u, State x) const {
    if (u >= num_actions()) detail::invalid(who, ": action must be in [0, ", num_actions(), "), got ", u);
    if (x >= num_states()) detail::invalid(who, ": state must be in [0, ", num_states(), "), got ", x);
  }

  /// Writes the entry's value into the cells (x', y) it covers (indices out of range cover nothing).
  static void paint(Matrix& m, const PomdpReward& e) {
    const Eigen::Index n = m.rows(), k = m.cols();
    if (e.next_state != pomdp_any && e.next_state >= static_cast<std::size_t>(n)) return;
    if (e.observation != pomdp_any && e.observation >= static_cast<std::size_t>(k)) return;
    const Eigen::Index r0 = e.next_state == pomdp_any ? 0 : static_cast<Eigen::Index>(e.next_state);
    const Eigen::Index c0 = e.observation == pomdp_any ? 0 : static_cast<Eigen::Index>(e.observation);
    m.block(r0, c0, e.next_state == pomdp_any ? n : 1, e.observation == pomdp_any ? k : 1).setConstant(e.value);
  }
};

namespace detail {

/// The reserved words of the format; none of them can name a state, action or observation.
inline constexpr std::string_view pomdp_keywords[] = {
    "discount", "values",   "states", "actions", "observations", "T",       "O",       "R",
    "uniform",  "identity", "reward", "cost",    "start",        "include", "exclude", "reset"};

[[nodiscard]] inline bool pomdp_letter(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
[[nodiscard]] inline bool pomdp_digit(char c) noexcept { return c >= '0' && c <= '9'; }
[[nodiscard]] inline bool pomdp_name_char(char c) noexcept {
  return pomdp_letter(c) || pomdp_digit(c) || c == '-' || c == '_';
}
[[nodiscard]] inline bool pomdp_keyword(std::string_view word) noexcept {
  return std::find(std::begin(pomdp_keywords), std::end(pomdp_keywords), word) != std::end(pomdp_keywords);
}

/// A name the format can spell: a letter, then letters, digits, '-' or '_'; not a reserved word.
[[nodiscard]] inline bool pomdp_valid_name(std::string_view name) noexcept {
  if (name.empty() || !pomdp_letter(name[0]) || pomdp_keyword(name)) return false;
  return std::all_of(name.begin(), name.end(), pomdp_name_char);
}

/// The shortest text that reads back to the same double (0 for -0, which a probability cannot spell).
[[nodiscard]] inline std::string pomdp_number(double value) {
  if (value == 0.0) return "0";
  char buffer[64];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
}

enum class PomdpEntity { state, action, observation };

[[nodiscard]] inline const char* pomdp_entity_word(PomdpEntity kind) noexcept {
  return kind == PomdpEntity::state ? "state" : kind == PomdpEntity::action ? "action" : "observation";
}

/// The first row of one of the matrices that is not a distribution: a negative, non-finite or
/// greater-than-1 entry (column >= 0), or a sum away from 1 (column = -1).
struct PomdpRowFault {
  std::size_t matrix, row;
  Eigen::Index column;
  double value;
};

template <class Lazy = void>
[[nodiscard]] std::optional<PomdpRowFault> pomdp_row_fault(const lazy_t<Eigen::MatrixXd, Lazy>& m, std::size_t index) {
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    double sum = 0.0;
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const double p = m(r, c);
      if (!(p >= 0.0 && p <= 1.0)) return PomdpRowFault{index, static_cast<std::size_t>(r), c, p};
      sum += p;
    }
    if (!(std::abs(sum - 1.0) <= pomdp_file_tolerance))
      return PomdpRowFault{index, static_cast<std::size_t>(r), -1, sum};
  }
  return std::nullopt;
}

/// "T: listen: row of state tiger-left sums to 0.9, expected 1" and the like.
template <class Lazy = void>
[[nodiscard]] std::string pomdp_fault_text(const lazy_t<PomdpFile, Lazy>& file, char table, const PomdpRowFault& f) {
  const bool is_t = table == 'T';
  std::string text =
      message(table, ": ", file.actions[f.matrix], ": row of ", is_t ? "state " : "next state ", file.states[f.row]);
  if (f.column >= 0) {
    const auto c = static_cast<std::size_t>(f.column);
    return text + message(": the probability of ", is_t ? "next state " : "observation ",
                          is_t ? file.states[c] : file.observations[c], " is ", pomdp_number(f.value),
                          ", expected a number in [0, 1]");
  }
  return text + message(" sums to ", pomdp_number(f.value), ", expected 1");
}

/// Throws std::invalid_argument, starting with `who`, unless `file` is a model the format can
/// write and read back: consistent sizes, valid unique names (or "0", "1", ... when numbered),
/// a discount in [0, 1], distributions in start and every row of T and O, finite rewards whose
/// indices are in range.
template <class Lazy = void>
void check_pomdp_file(const lazy_t<PomdpFile, Lazy>& file, const char* who) {
  const auto names = [&](const std::vector<std::string>& list, bool named, PomdpEntity kind) {
    const char* word = pomdp_entity_word(kind);
    if (list.empty()) invalid(who, ": there must be at least one ", word, ", got none");
    std::unordered_map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!named) {
        if (list[i] != std::to_string(i))
          invalid(who, ": numbered ", word, " ", i, " must be named \"", i, "\", got \"", list[i], "\"");
        continue;
      }
      if (!pomdp_valid_name(list[i]))
        invalid(who, ": ", word, " ", i, " is named \"", list[i],
                "\": a name must start with a letter, hold only letters, digits, '-' and '_', and not be a "
                "reserved word");
      if (const auto [it, fresh] = seen.emplace(list[i], i); !fresh)
        invalid(who, ": ", word, "s ", it->second, " and ", i, " are both named \"", list[i], "\"");
    }
  };
  names(file.states, file.states_named, PomdpEntity::state);
  names(file.actions, file.actions_named, PomdpEntity::action);
  names(file.observations, file.observations_named, PomdpEntity::observation);
  const auto n = static_cast<Eigen::Index>(file.num_states());
  const auto k = static_cast<Eigen::Index>(file.num_observations());
  if (!(file.discount >= 0.0 && file.discount <= 1.0))
    invalid(who, ": discount must be in [0, 1], got ", pomdp_number(file.discount));
  if (file.start.size() != n) invalid(who, ": start must have one entry per state (", n, "), got ", file.start.size());
  if (const auto f = pomdp_row_fault(file.start.transpose(), 0)) {
    if (f->column >= 0)
      invalid(who, ": start: the probability of state ", file.states[static_cast<std::size_t>(f->column)], " is ",
              pomdp_number(f->value), ", expected a number in [0, 1]");
    invalid(who, ": start sums to ", pomdp_number(f->value), ", expected 1");
  }
  const auto tables = [&](const auto& list, char table, Eigen::Index cols) {
    if (list.size() != file.num_actions())
      invalid(who, ": ", table == 'T' ? "transition" : "observation", " must hold one matrix per action (",
              file.num_actions(), "), got ", list.size());
    for (std::size_t u = 0; u < list.size(); ++u) {
      if (list[u].rows() != n || list[u].cols() != cols)
        invalid(who, ": ", table, ": ", file.actions[u], ": the matrix must be ", n, " x ", cols, ", got ",
                list[u].rows(), " x ", list[u].cols());
      if (const auto f = pomdp_row_fault(list[u], u)) invalid(who, ": ", pomdp_fault_text(file, table, *f));
    }
  };
  tables(file.transition, 'T', n);
  tables(file.observation, 'O', k);
  for (std::size_t i = 0; i < file.rewards.size(); ++i) {
    const PomdpReward& e = file.rewards[i];
    const auto index = [&](std::size_t value, std::size_t count, const char* field) {
      if (value != pomdp_any && value >= count)
        invalid(who, ": reward entry ", i, ": ", field, " must be in [0, ", count, ") or pomdp_any, got ", value);
    };
    index(e.action, file.num_actions(), "action");
    index(e.state, file.num_states(), "state");
    index(e.next_state, file.num_states(), "next_state");
    index(e.observation, file.num_observations(), "observation");
    if (!std::isfinite(e.value))
      invalid(who, ": reward entry ", i, " has the value ", e.value, ", expected a finite number");
  }
}

/// A recursive-descent parser of the grammar of pomdp-solve's docs/pomdp-file-grammar.html and
/// its scanner (see docs/classic-pomdps.md); every error names file:line:column. (A class template
/// only for compile time, docs/design.md.)
template <class Lazy = void>
class PomdpParser {
 public:
  PomdpParser(std::string_view text, std::string_view name, std::size_t max_table = pomdp_file_max_table)
      : text_(text), name_(name), max_table_(max_table) {}

  [[nodiscard]] BasicPomdpFile<Lazy> parse() {
    tokenize();
    parse_preamble();
    allocate();
    parse_start();
    while (peek().kind != Kind::end) parse_entry();
    check_rows('T', file_.transition, t_set_);
    check_rows('O', file_.observation, o_set_);
    return std::move(file_);
  }

 private:
  enum class Kind { end, integer, real, name, keyword, star, colon, plus, minus };
  struct Token {
    Kind kind;
    std::string_view text;
    std::size_t line, column;
  };
  static constexpr std::size_t unset = std::numeric_limits<std::size_t>::max();

  std::string_view text_, name_;
  std::size_t max_table_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  using Matrix = lazy_t<Eigen::MatrixXd, Lazy>;  // Eigen::MatrixXd (env/fwd.hpp)
  using Vector = lazy_t<Eigen::VectorXd, Lazy>;

  BasicPomdpFile<Lazy> file_;
  std::unordered_map<std::string_view, std::size_t> lookup_[3];
  std::size_t last_entry_ = unset;          // the token of the last T, O or R entry's head
  std::vector<std::size_t> t_set_, o_set_;  // per (u, x): the token of the last entry that wrote the row

  // ---------------------------------------------------------------- errors
  template <class... Parts>
  [[noreturn]] void fail_at(std::size_t line, std::size_t column, const Parts&... parts) const {
    invalid(name_, ":", line, ":", column, ": ", parts...);
  }
  template <class... Parts>
  [[noreturn]] void fail(const Token& at, const Parts&... parts) const {
    fail_at(at.line, at.column, parts...);
  }

  [[nodiscard]] static std::string describe(const Token& t) {
    switch (t.kind) {
      case Kind::end:
        return "the end of the file";
      case Kind::integer:
      case Kind::real:
        return message("the number ", t.text);
      case Kind::name:
        return message("the name '", t.text, "'");
      case Kind::keyword:
        return message("the keyword '", t.text, "'");
      default:
        return message("'", t.text, "'");
    }
  }

  // ---------------------------------------------------------------- scanner
  void tokenize() {
    std::size_t line = 1, line_start = 0, i = 0;
    const auto column = [&](std::size_t at) { return at - line_start + 1; };
    while (i < text_.size()) {
      const char c = text_[i];
      const std::size_t begin = i;
      if (c == '\n') {
        ++line;
        line_start = ++i;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
      } else if (c == '#') {
        while (i < text_.size() && text_[i] != '\n') ++i;
      } else if (pomdp_letter(c)) {
        while (i < text_.size() && pomdp_name_char(text_[i])) ++i;
        const std::string_view word = text_.substr(begin, i - begin);
        tokens_.push_back({pomdp_keyword(word) ? Kind::keyword : Kind::name, word, line, column(begin)});
      } else if (pomdp_digit(c) || (c == '.' && i + 1 < text_.size() && pomdp_digit(text_[i + 1]))) {
        i = scan_number(begin, line, column(begin));
      } else if (c == '*' || c == ':' || c == '+' || c == '-') {
        const Kind kind = c == '*' ? Kind::star : c == ':' ? Kind::colon : c == '+' ? Kind::plus : Kind::minus;
        tokens_.push_back({kind, text_.substr(i++, 1), line, column(begin)});
      } else {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) fail_at(line, column(begin), "unexpected character '", c, "'");
        fail_at(line, column(begin), "unexpected byte 0x", "0123456789abcdef"[byte >> 4],
                "0123456789abcdef"[byte & 15]);
      }
    }
    tokens_.push_back({Kind::end, {}, line, column(i)});
  }

  // INTEGER: digits. FLOAT: digits, then '.' digits* [exponent] or an exponent alone, as in
  // pomdp-solve's scanner: a digit before the point is required (".5" is refused), one after is not.
  std::size_t scan_number(std::size_t begin, std::size_t line, std::size_t column) {
    std::size_t i = begin;
    const auto digits = [&] {
      const std::size_t from = i;
      while (i < text_.size() && pomdp_digit(text_[i])) ++i;
      return i > from;
    };
    const auto word_end = [&](std::size_t from) {
      while (from < text_.size() && (pomdp_name_char(text_[from]) || text_[from] == '.')) ++from;
      return from;
    };
    if (text_[i] == '.')
      fail_at(line, column, "a number needs a digit before the point, found '",
              text_.substr(begin, word_end(begin + 1) - begin), "' (write 0",
              text_.substr(begin, word_end(begin + 1) - begin), ")");
    (void)digits();
    bool real = false;
    if (i < text_.size() && text_[i] == '.') {
      ++i;
      (void)digits();
      real = true;
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      ++i;
      if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
      if (!digits()) fail_at(line, column, "malformed number '", text_.substr(begin, word_end(i) - begin), "'");
      real = true;
    }
    if (i < text_.size() && (pomdp_name_char(text_[i]) || text_[i] == '.') && text_[i] != '-')
      fail_at(line, column, "malformed number '", text_.substr(begin, word_end(i) - begin), "'");
    tokens_.push_back({real ? Kind::real : Kind::integer, text_.substr(begin, i - begin), line, column});
    return i;
  }

  // ---------------------------------------------------------------- token helpers
  [[nodiscard]] const Token& peek() const noexcept { return tokens_[pos_]; }
  const Token& next() noexcept { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  [[nodiscard]] bool peek_keyword(std::string_view word) const noexcept {
    return peek().kind == Kind::keyword && peek().text == word;
  }
  [[nodiscard]] bool peek_number() const noexcept {
    const Kind k = peek().kind;
    return k == Kind::integer || k == Kind::real || k == Kind::plus || k == Kind::minus;
  }
  void expect_colon(std::string_view after) {
    if (peek().kind != Kind::colon) fail(peek(), "expected ':' after '", after, "', found ", describe(peek()));
    (void)next();
  }

  struct Number {
    double value;
    std::size_t token;  // where it starts (its sign, if any)
    bool plain_integer;
  };

  /// <number> ::= [+|-] (INTEGER | FLOAT). A probability must lie in [0, 1]; every number must be
  /// finite as a double.
  Number number(bool probability, std::string_view what) {
    const std::size_t at = pos_;
    bool negative = false, signed_ = false;
    if (peek().kind == Kind::plus || peek().kind == Kind::minus) {
      negative = next().kind == Kind::minus;
      signed_ = true;
    }
    const Token& t = peek();
    if (t.kind != Kind::integer && t.kind != Kind::real)
      fail(t, "expected ", what, signed_ ? " after the sign" : "", ", found ", describe(t));
    (void)next();
    double value = 0.0;
    const auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
    if (error != std::errc() || end != t.text.data() + t.text.size() || !std::isfinite(value))
      fail(tokens_[at], "the number ", t.text, " is out of the range of a double");
    if (negative) value = -value;
    if (probability && !(value >= 0.0 && value <= 1.0))
      fail(tokens_[at], "a probability must be in [0, 1], found ", negative ? "-" : "", t.text);
    return {value, at, t.kind == Kind::integer && !signed_};
  }

  /// A count or an index: an INTEGER that fits std::size_t.
  [[nodiscard]] std::size_t integer(const Token& t, std::string_view what) const {
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
    if (error != std::errc() || end != t.text.data() + t.text.size()) fail(t, what, " ", t.text, " is too large");
    return value;
  }

  [[nodiscard]] std::vector<std::string>& names(PomdpEntity kind) noexcept {
    return kind == PomdpEntity::state ? file_.states : kind == PomdpEntity::action ? file_.actions : file_.observations;
  }

  // ---------------------------------------------------------------- preamble
  void parse_preamble() {
    std::size_t seen[5] = {unset, unset, unset, unset, unset};  // the line of each preamble entry
    static constexpr std::string_view heads[5] = {"discount", "values", "states", "actions", "observations"};
    for (;;) {
      const Token& head = peek();
      if (head.kind != Kind::keyword) break;
      const auto slot = static_cast<std::size_t>(std::find(heads, heads + 5, head.text) - heads);
      if (slot == 5) break;
      if (seen[slot] != unset) fail(head, "a second '", head.text, ":' line (the first is at line ", seen[slot], ")");
      seen[slot] = head.line;
      (void)next();
      expect_colon(head.text);
      if (slot == 0) {
        const Number d = number(false, "the discount (a number)");
        if (!(d.value >= 0.0 && d.value <= 1.0))
          fail(tokens_[d.token], "discount must be in [0, 1], found ", pomdp_number(d.value));
        file_.discount = d.value;
      } else if (slot == 1) {
        if (!peek_keyword("reward") && !peek_keyword("cost"))
          fail(peek(), "expected 'reward' or 'cost' after 'values:', found ", describe(peek()));
        file_.costs = next().text == "cost";
      } else {
        entity_list(static_cast<PomdpEntity>(slot - 2), head.text);
      }
    }
    const Token& after = peek();
    if (after.kind != Kind::end && !peek_keyword("start") && !peek_keyword("T") && !peek_keyword("O") &&
        !peek_keyword("R"))
      fail(after,
           "expected a preamble line (discount:, values:, states:, actions:, observations:), start, T:, O: or R:, "
           "found ",
           describe(after));
    for (std::size_t slot = 0; slot < 5; ++slot)
      if (seen[slot] == unset)
        fail(after, "the preamble has no '", heads[slot], ":' line (", heads[0], ", ", heads[1], ", ", heads[2], ", ",
             heads[3], " and ", heads[4], " must all come before start and the T, O and R entries)");
  }

  /// <tail> ::= INTEGER | STRING+ (distinct names).
  void entity_list(PomdpEntity kind, std::string_view head) {
    std::vector<std::string>& list = names(kind);
    const char* word = pomdp_entity_word(kind);
    const Token& first = peek();
    if (first.kind == Kind::integer) {
      (void)next();
      const std::size_t count = integer(first, std::string("the number of ") + word + "s");
      if (count == 0) fail(first, "there must be at least one ", word, ", found ", head, ": 0");
      list.assign(1, std::to_string(count));  // a placeholder holding the count, expanded in allocate()
      return;
    }
    if (first.kind != Kind::name)
      fail(first, "expected the number of ", word, "s or their names after '", head, ":', found ", describe(first));
    std::unordered_map<std::string_view, std::size_t>& map = lookup_[static_cast<int>(kind)];
    while (peek().kind == Kind::name) {
      const Token& t = next();
      if (const auto [it, fresh] = map.emplace(t.text, list.size()); !fresh)
        fail(t, word, " '", t.text, "' is listed twice (first as ", word, " ", it->second, ")");
      list.emplace_back(t.text);
    }
    (kind == PomdpEntity::state    ? file_.states_named
     : kind == PomdpEntity::action ? file_.actions_named
                                   : file_.observations_named) = true;
  }

  /// Checks the table sizes against the budget, then allocates the matrices and names.
  void allocate() {
    const auto count = [&](PomdpEntity kind, bool named) {
      return named ? names(kind).size() : integer_of(names(kind).front());
    };
    const std::size_t n = count(PomdpEntity::state, file_.states_named);
    const std::size_t na = count(PomdpEntity::action, file_.actions_named);
    const std::size_t k = count(PomdpEntity::observation, file_.observations_named);
    const std::size_t t_size = checked_mul(na, checked_mul(n, n)), o_size = checked_mul(na, checked_mul(n, k));
    const auto size_text = [](std::size_t s) { return s == 0 ? std::string("more than 2^64") : std::to_string(s); };
    if (t_size == 0 || t_size > max_table_ || o_size == 0 || o_size > max_table_) {
      const bool t_big = t_size == 0 || t_size > max_table_;
      fail(peek(),
           "the model is too large: ", t_big ? "|U| |X|^2 = " : "|U| |X| |Y| = ", size_text(t_big ? t_size : o_size),
           t_big ? " transition" : " observation", " probabilities exceed the budget max_table = ", max_table_,
           " with |X| = ", n, " states, |U| = ", na, " actions, |Y| = ", k, " observations");
    }
    // What is not a table: per action two matrix headers and their heap blocks, a row of t_set_ and
    // o_set_ and a name (counted as 16 doubles, 128 bytes), a name for each state and observation
    // (4 doubles). Without this, "actions: 134217728" with one state would pass as a 1 GiB model.
    const std::size_t bookkeeping = checked_add(checked_mul(16, na), checked_mul(4, checked_add(n, k)));
    if (bookkeeping == 0 || bookkeeping > max_table_)
      fail(peek(), "the model is too large: |U| = ", na, " actions and |X| + |Y| = ", size_text(checked_add(n, k)),
           " names need ", size_text(bookkeeping),
           " doubles of bookkeeping (16 an action, 4 a name), beyond the budget max_table = ", max_table_);
    const auto number_names = [&](PomdpEntity kind, bool named, std::size_t c) {
      if (named) return;
      std::vector<std::string>& list = names(kind);
      list.clear();
      list.reserve(c);
      for (std::size_t i = 0; i < c; ++i) list.push_back(std::to_string(i));
    };
    number_names(PomdpEntity::state, file_.states_named, n);
    number_names(PomdpEntity::action, file_.actions_named, na);
    number_names(PomdpEntity::observation, file_.observations_named, k);
    const auto rows = static_cast<Eigen::Index>(n), cols = static_cast<Eigen::Index>(k);
    file_.start = Vector::Constant(rows, 1.0 / static_cast<double>(n));  // no start line: uniform
    // Each table built in place: a table assigned from a prototype would be a copy, twice the budget.
    file_.transition.clear();
    file_.observation.clear();
    file_.transition.reserve(na);
    file_.observation.reserve(na);
    for (std::size_t u = 0; u < na; ++u) {
      file_.transition.emplace_back(Matrix::Zero(rows, rows));
      file_.observation.emplace_back(Matrix::Zero(rows, cols));
    }
    t_set_.assign(na * n, unset);
    o_set_.assign(na * n, unset);
  }

  [[nodiscard]] static std::size_t integer_of(const std::string& text) {
    std::size_t value = 0;
    (void)std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
  }

  // ---------------------------------------------------------------- start
  /// start: (uniform | STRING | INTEGER | <prob>^|X|) | start include: <state>+ | start exclude: <state>+
  void parse_start() {
    if (!peek_keyword("start")) return;
    const Token& head = next();
    const std::size_t n = file_.num_states();
    Vector& p = file_.start;
    if (peek_keyword("include") || peek_keyword("exclude")) {
      const bool include = next().text == "include";
      expect_colon(include ? "start include" : "start exclude");
      p.setConstant(include ? 0.0 : 1.0);
      if (peek().kind != Kind::integer && peek().kind != Kind::name && peek().kind != Kind::star)
        fail(peek(), "expected a state after '", include ? "start include:" : "start exclude:", "', found ",
             describe(peek()));
      while (peek().kind == Kind::integer || peek().kind == Kind::name || peek().kind == Kind::star) {
        const std::size_t x = entity(PomdpEntity::state);
        if (x == pomdp_any)
          p.setConstant(include ? 1.0 : 0.0);
        else
          p[static_cast<Eigen::Index>(x)] = include ? 1.0 : 0.0;
      }
      const double count = p.sum();
      if (count == 0.0) fail(head, "start exclude: every state is excluded");
      p /= count;
      return;
    }
    expect_colon("start");
    if (peek_keyword("uniform")) {
      (void)next();
      return;  // already uniform
    }
    if (peek().kind == Kind::name) {
      const Token& first = peek();
      const std::size_t x = entity(PomdpEntity::state);
      // "start: a b" is not in the grammar; say what is, rather than fail at the next entry.
      if (peek().kind == Kind::name || peek().kind == Kind::integer)
        fail(peek(),
             "'start:' takes one state (or n probabilities); for a uniform start over several states write "
             "'start include: ",
             first.text, " ", peek().text, " ...'");
      p.setZero();
      p[static_cast<Eigen::Index>(x)] = 1.0;
      return;
    }
    if (!peek_number())
      fail(peek(), "expected after 'start:' ", n, " probabilities, 'uniform' or a state, found ", describe(peek()));
    const std::vector<Number> values = numbers(false);
    if (values.size() == 1 && values[0].plain_integer && n != 1) {  // start: 3 names state 3
      const Token& t = tokens_[values[0].token];
      const std::size_t x = integer(t, "state");
      if (x >= n) fail(t, "state ", t.text, " is out of range: there are ", n, " states (0 to ", n - 1, ")");
      p.setZero();
      p[static_cast<Eigen::Index>(x)] = 1.0;
      return;
    }
    for (const Number& v : values)
      if (!(v.value >= 0.0 && v.value <= 1.0))
        fail(tokens_[v.token], "a probability must be in [0, 1], found ", pomdp_number(v.value));
    check_count(values, n, "start: ", message("probabilities (one per state)"));
    for (std::size_t x = 0; x < n; ++x) p[static_cast<Eigen::Index>(x)] = values[x].value;
    if (const double sum = p.sum(); !(std::abs(sum - 1.0) <= pomdp_file_tolerance))
      fail(head, "start: sums to ", pomdp_number(sum), ", expected 1");
  }

  // ---------------------------------------------------------------- T, O, R
  /// <state> | <action> | <obs> ::= INTEGER | STRING | '*'; returns pomdp_any for '*'.
  std::size_t entity(PomdpEntity kind) {
    const Token& t = peek();
    const char* word = pomdp_entity_word(kind);
    const std::size_t count = names(kind).size();
    if (t.kind == Kind::star) {
      (void)next();
      return pomdp_any;
    }
    if (t.kind == Kind::integer) {
      (void)next();
      const std::size_t i = integer(t, word);
      if (i >= count)
        fail(t, word, " ", t.text, " is out of range: there are ", count, " ", word, "s (0 to ", count - 1, ")");
      return i;
    }
    if (t.kind == Kind::name) {
      (void)next();
      const auto& map = lookup_[static_cast<int>(kind)];
      const auto it = map.find(t.text);
      if (it == map.end()) {
        if (map.empty()) fail(t, "no ", word, " named '", t.text, "': the ", word, "s are numbered 0 to ", count - 1);
        fail(t, "no ", word, " named '", t.text, "'");
      }
      return it->second;
    }
    fail(t, "expected ", (kind == PomdpEntity::action ? "an " : "a "), word, " (a name, a number or '*'), found ",
         describe(t));
  }

  /// Throws unless `values` holds exactly `expected` numbers: too few at the token that ended the
  /// list, too many at the first number too many.
  void check_count(const std::vector<Number>& values, std::size_t expected, const std::string& entry,
                   const std::string& what) {
    if (values.size() < expected)
      fail(peek(), entry, "expected ", expected, " ", what, ", found ", values.size(), " before ", describe(peek()));
    if (values.size() > expected)
      fail(tokens_[values[expected].token], entry, "expected ", expected, " ", what, ", found ", values.size());
  }

  std::vector<Number> numbers(bool probability) {
    std::vector<Number> values;
    while (peek_number()) values.push_back(number(probability, probability ? "a probability" : "a number"));
    return values;
  }

  [[nodiscard]] static std::pair<std::size_t, std::size_t> range(std::size_t i, std::size_t count) noexcept {
    return i == pomdp_any ? std::pair<std::size_t, std::size_t>{0, count}
                          : std::pair<std::size_t, std::size_t>{i, i + 1};
  }

  /// Sets m_u(x, c) = value(x, c) for u in us and x in xs, remembering the entry in `set`.
  template <class Value>
  void assign(std::vector<Matrix>& tables, std::vector<std::size_t>& set, std::size_t head, std::size_t u,
              std::size_t x, std::size_t c, Value value) {
    const std::size_t n = file_.num_states();
    const auto [u0, u1] = range(u, file_.num_actions());
    const auto [x0, x1] = range(x, n);
    const auto [c0, c1] = range(c, static_cast<std::size_t>(tables.front().cols()));
    for (std::size_t a = u0; a < u1; ++a)
      for (std::size_t r = x0; r < x1; ++r) {
        for (std::size_t col = c0; col < c1; ++col)
          tables[a](static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(col)) = value(r, col);
        set[a * n + r] = head;
      }
  }

  void parse_entry() {
    const Token& head = peek();
    if (head.kind == Kind::keyword && (head.text == "T" || head.text == "O" || head.text == "R")) {
      const std::size_t at = last_entry_ = pos_;
      (void)next();
      expect_colon(head.text);
      if (head.text == "T")
        transition_entry(at);
      else if (head.text == "O")
        observation_entry(at);
      else
        reward_entry(at);
      return;
    }
    if (head.kind == Kind::keyword && head.text == "start")
      fail(head, "'start' must come once, right after the preamble and before the T, O and R entries");
    if (head.kind == Kind::keyword && (head.text == "discount" || head.text == "values" || head.text == "states" ||
                                       head.text == "actions" || head.text == "observations"))
      fail(head, "'", head.text, ":' must come in the preamble, before start and the T, O and R entries");
    // A number here is left over after an entry that takes one number (or 'uniform', 'identity').
    if (last_entry_ != unset &&
        (head.kind == Kind::integer || head.kind == Kind::real || head.kind == Kind::plus || head.kind == Kind::minus))
      fail(head, "expected 'T:', 'O:' or 'R:', found ", describe(head), ": more numbers than the entry at line ",
           tokens_[last_entry_].line, " takes");
    fail(head, "expected 'T:', 'O:' or 'R:', found ", describe(head));
  }

  /// The entry's head as written so far, e.g. "T: listen : tiger-left".
  [[nodiscard]] std::string entry_text(std::size_t from) const {
    std::string text;
    for (std::size_t i = from; i < pos_; ++i) {
      if (i > from && tokens_[i].kind != Kind::colon && tokens_[i - 1].kind != Kind::colon) text += ' ';
      if (tokens_[i].kind == Kind::colon && i > from + 1) text += ' ';
      text += tokens_[i].text;
      if (tokens_[i].kind == Kind::colon) text += ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  }

  // T: <action> : <state> : <state> <prob> | T: <action> : <state> <u_matrix> | T: <action> <ui_matrix>
  // O: <action> : <state> : <obs> <prob>   | O: <action> : <state> <u_matrix> | O: <action> <u_matrix>
  // One grammar: a row of T is over next states, a row of O over observations; only T has 'identity'.
  void transition_entry(std::size_t head) { stochastic_entry(head, false); }
  void observation_entry(std::size_t head) { stochastic_entry(head, true); }

  void stochastic_entry(std::size_t head, bool observation) {
    const std::size_t n = file_.num_states(), k = observation ? file_.num_observations() : n;
    auto& tables = observation ? file_.observation : file_.transition;
    auto& set = observation ? o_set_ : t_set_;
    const std::size_t u = entity(PomdpEntity::action);
    const bool row = peek().kind == Kind::colon;  // one row (of state x, or of all for x = '*'), else the matrix
    std::size_t x = pomdp_any;
    if (row) {
      (void)next();
      x = entity(PomdpEntity::state);
      if (peek().kind == Kind::colon) {
        (void)next();
        const std::size_t c = entity(observation ? PomdpEntity::observation : PomdpEntity::state);
        const double p = number(true, "a probability").value;
        assign(tables, set, head, u, x, c, [p](std::size_t, std::size_t) { return p; });
        return;
      }
    } else if (!observation && peek_keyword("identity")) {
      (void)next();
      assign(tables, set, head, u, x, pomdp_any, [](std::size_t r, std::size_t c) { return r == c ? 1.0 : 0.0; });
      return;
    }
    if (keyword_matrix(head, row ? "a row" : "a matrix", observation)) {
      assign(tables, set, head, u, x, pomdp_any,
             [k](std::size_t, std::size_t) { return 1.0 / static_cast<double>(k); });
      return;
    }
    const std::vector<Number> v = entry_numbers(head, true, row ? k : n * k,
                                                !row          ? message("probabilities (a ", n, " x ", k, " matrix)")
                                                : observation ? "probabilities (one per observation)"
                                                              : "probabilities (one per next state)");
    assign(tables, set, head, u, x, pomdp_any,
           [&v, k, row](std::size_t r, std::size_t c) { return v[(row ? 0 : r) * k + c].value; });
  }

  /// The numbers that end an entry: exactly `expected` of them (`what` they are, in the message).
  std::vector<Number> entry_numbers(std::size_t head, bool probability, std::size_t expected, const std::string& what) {
    const std::string entry = entry_text(head) + ": ";  // before the numbers move past it
    std::vector<Number> values = numbers(probability);
    check_count(values, expected, entry, what);
    return values;
  }

  /// Consumes 'uniform' and returns true; refuses 'identity' and 'reset' where the grammar has no
  /// place for them (identity: only a whole T matrix; reset: pomdp-solve's extension, unsupported).
  bool keyword_matrix(std::size_t head, const char* shape, bool observation) {
    if (peek_keyword("uniform")) {
      (void)next();
      return true;
    }
    if (peek_keyword("identity"))
      fail(peek(), "'identity' is allowed only for a whole transition matrix ('T: <action> identity'), not for ", shape,
           observation ? " of O" : " of T", " (in '", entry_text(head), "')");
    if (peek_keyword("reset")) fail(peek(), "'reset' (an extension of pomdp-solve's parser) is not supported");
    return false;
  }

  // R: <action> : <state> : <state> : <obs> <number> | R: <action> : <state> : <state> <number>^|Y|
  //  | R: <action> : <state> <number>^(|X| |Y|)
  void reward_entry(std::size_t head) {
    const std::size_t n = file_.num_states(), k = file_.num_observations();
    const std::size_t u = entity(PomdpEntity::action);
    if (peek().kind != Kind::colon)
      fail(peek(), "expected ':' and a state after '", entry_text(head), "', found ", describe(peek()),
           " (the form 'R: <action>' followed by a matrix is for MDPs, which are not supported)");
    (void)next();
    const std::size_t x = entity(PomdpEntity::state);
    if (peek().kind == Kind::colon) {
      (void)next();
      const std::size_t x2 = entity(PomdpEntity::state);
      if (peek().kind == Kind::colon) {
        (void)next();
        const std::size_t y = entity(PomdpEntity::observation);
        file_.rewards.push_back({u, x, x2, y, number(false, "a number (the reward)").value});
        return;
      }
      const std::vector<Number> v = entry_numbers(head, false, k, "numbers (one per observation)");
      for (std::size_t y = 0; y < k; ++y) file_.rewards.push_back({u, x, x2, y, v[y].value});
      return;
    }
    const std::vector<Number> v = entry_numbers(
        head, false, n * k, message("numbers (a ", n, " x ", k, " matrix of next states x observations)"));
    file_.rewards.reserve(file_.rewards.size() + v.size());
    for (std::size_t x2 = 0; x2 < n; ++x2)
      for (std::size_t y = 0; y < k; ++y) file_.rewards.push_back({u, x, x2, y, v[x2 * k + y].value});
  }

  // ---------------------------------------------------------------- semantics
  /// Every row of T and O must be a distribution; the message points at the last entry that wrote
  /// the row (its first token), or at the file when none did.
  void check_rows(char table, const std::vector<Matrix>& tables, const std::vector<std::size_t>& set) const {
    for (std::size_t u = 0; u < tables.size(); ++u)
      if (const auto f = pomdp_row_fault(tables[u], u)) {
        const std::string text = pomdp_fault_text(file_, table, *f);
        const std::size_t last = set[u * file_.num_states() + f->row];
        if (last == unset) invalid(name_, ": ", text, " (no entry sets it)");
        fail(tokens_[last], text);
      }
  }
};

/// The whole content of the file at `path`; std::system_error if it cannot be opened or read.
template <class Lazy = void>
[[nodiscard]] std::string read_pomdp_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(errno, std::generic_category(), "read_pomdp: cannot open " + path.string());
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw std::system_error(errno, std::generic_category(), "read_pomdp: cannot read " + path.string());
  return text;
}

/// How the writer gives back the reward entries from `i` on: as a matrix ('R: u : x' and the
/// |X| |Y| numbers of (x', y)), a row ('R: u : x : x'' and the |Y| numbers of y) or one entry.
struct PomdpRewardRun {
  enum Form { single, row, matrix } form;
  std::size_t length;
};

template <class Lazy = void>
[[nodiscard]] PomdpRewardRun pomdp_reward_run(const lazy_t<PomdpFile, Lazy>& file, std::size_t i) {
  const std::vector<PomdpReward>& r = file.rewards;
  const std::size_t n = file.num_states(), k = file.num_observations();
  const auto run = [&](std::size_t length, bool matrix) {
    if (length < 2 || r.size() - i < length) return false;
    for (std::size_t j = 0; j < length; ++j) {
      const PomdpReward& e = r[i + j];
      if (e.action != r[i].action || e.state != r[i].state || e.observation != j % k) return false;
      if (matrix ? e.next_state != j / k : e.next_state != r[i].next_state) return false;
    }
    return true;
  };
  if (run(n * k, true)) return {PomdpRewardRun::matrix, n * k};
  if (run(k, false)) return {PomdpRewardRun::row, k};
  return {PomdpRewardRun::single, 1};
}

}  // namespace detail

/// Parses the text of a .pomdp file. `name` (a file name) starts every error message, which is a
/// std::invalid_argument of the form "name:line:column: what was expected, found what". A model
/// that parses but is not stochastic is refused naming the row (and the entry that last set it).
/// A model whose |U| |X|^2 transition or |U| |X| |Y| observation probabilities exceed `max_table`
/// doubles, or whose bookkeeping does (16 doubles an action, 4 a numbered name), is refused before
/// anything is allocated; the reader's peak memory is then at most the two tables (8 max_table
/// bytes each), the bookkeeping (as much again) and the text's tokens.
template <class Lazy = void>
[[nodiscard]] PomdpFile parse_pomdp(std::string_view text, std::string_view name = "<string>",
                                    std::size_t max_table = pomdp_file_max_table) {
  if (max_table == 0) detail::invalid("parse_pomdp: max_table must be at least 1, got 0");
  return detail::PomdpParser<>(text, name, max_table).parse();
}

/// Reads a .pomdp file (std::system_error if it cannot be read; std::invalid_argument naming
/// path:line:column if it is malformed); `max_table` as for parse_pomdp.
template <class Lazy = void>
[[nodiscard]] PomdpFile read_pomdp(const std::filesystem::path& path, std::size_t max_table = pomdp_file_max_table) {
  if (max_table == 0) detail::invalid("read_pomdp: max_table must be at least 1, got 0");
  return parse_pomdp(detail::read_pomdp_text(path), path.string(), max_table);
}

/// The text of a .pomdp file that parse_pomdp reads back to `file` exactly: names where the file
/// has them, numbers in their shortest round-trip form, the start distribution in full, each T
/// and O as one matrix per action, the reward entries in order (rows and matrices of the file as
/// such, other entries one a line). Throws std::invalid_argument if `file` is not a valid model
/// (see detail::check_pomdp_file).
template <class Lazy = void>
[[nodiscard]] std::string format_pomdp(const detail::lazy_t<PomdpFile, Lazy>& file) {
  detail::check_pomdp_file(file, "format_pomdp");
  std::string out = "# written by memtrace::format_pomdp\n";
  const auto list = [&](const char* head, const std::vector<std::string>& names, bool named) {
    out += head;
    out += ':';
    if (!named) {
      out += ' ' + std::to_string(names.size());
    } else {
      for (const std::string& name : names) out += ' ' + name;
    }
    out += '\n';
  };
  out += "discount: " + detail::pomdp_number(file.discount) + '\n';
  out += file.costs ? "values: cost\n" : "values: reward\n";
  list("states", file.states, file.states_named);
  list("actions", file.actions, file.actions_named);
  list("observations", file.observations, file.observations_named);
  out += "start:";
  for (Eigen::Index x = 0; x < file.start.size(); ++x) out += ' ' + detail::pomdp_number(file.start[x]);
  out += '\n';
  const auto matrices = [&](char table, const auto& tables) {
    for (std::size_t u = 0; u < tables.size(); ++u) {
      out += '\n';
      out += table;
      out += ": " + file.actions[u] + '\n';
      for (Eigen::Index r = 0; r < tables[u].rows(); ++r) {
        for (Eigen::Index c = 0; c < tables[u].cols(); ++c) {
          if (c > 0) out += ' ';
          out += detail::pomdp_number(tables[u](r, c));
        }
        out += '\n';
      }
    }
  };
  matrices('T', file.transition);
  matrices('O', file.observation);
  if (!file.rewards.empty()) out += '\n';
  const auto field = [](std::size_t i, const std::vector<std::string>& names) {
    return i == pomdp_any ? std::string("*") : names[i];
  };
  for (std::size_t i = 0; i < file.rewards.size();) {
    const PomdpReward& e = file.rewards[i];
    const detail::PomdpRewardRun run = detail::pomdp_reward_run(file, i);
    out += "R: " + field(e.action, file.actions) + " : " + field(e.state, file.states);
    if (run.form == detail::PomdpRewardRun::matrix) {
      out += '\n';
      for (std::size_t j = 0; j < run.length; ++j)
        out += detail::pomdp_number(file.rewards[i + j].value) + ((j + 1) % file.num_observations() == 0 ? "\n" : " ");
    } else if (run.form == detail::PomdpRewardRun::row) {
      out += " : " + field(e.next_state, file.states) + '\n';
      for (std::size_t j = 0; j < run.length; ++j)
        out += detail::pomdp_number(file.rewards[i + j].value) + (j + 1 == run.length ? "\n" : " ");
    } else {
      out += " : " + field(e.next_state, file.states) + " : " + field(e.observation, file.observations) + ' ' +
             detail::pomdp_number(e.value) + '\n';
    }
    i += run.length;
  }
  return out;
}

/// Writes format_pomdp(file) to `path` atomically: into a temporary file beside it, then renamed
/// over it, so that a reader never sees half a model and a failed write leaves `path` as it was.
/// Throws std::invalid_argument (invalid model: nothing is written) or std::system_error.
template <class Lazy = void>
void write_pomdp(const detail::lazy_t<PomdpFile, Lazy>& file, const std::filesystem::path& path) {
  write_text_atomically(path, format_pomdp(file));
}

}  // namespace memtrace
