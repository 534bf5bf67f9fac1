#pragma once
// Walker's alias method (Vose's construction): sampling from a finite distribution in O(1) per
// draw after O(n) set-up. The finite models sample every row of a row-stochastic matrix with it,
// so a step never scans a row. The draws use memtrace's own uniform_index and uniform_real, so
// a seed gives the same numbers under every standard library. See docs/environments.md.

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "memtrace/matrix.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

namespace detail {

/// One alias table per row of a row-stochastic sparse matrix, over the row's stored entries.
/// sample(row, gen) draws a stored entry of the row with probability value / row sum and returns
/// its column and its payload (the same entry of an optional second matrix with the same sparsity
/// pattern: a transition's reward). A row with one entry costs no random numbers; otherwise a draw
/// is uniform_index(gen, n) then uniform_real(gen). Each table slot holds both of its outcomes
/// (column and payload of the entry and of its alias), so a draw reads one slot: with |X| in the
/// millions a step costs a cache miss or two, not one per array.
class AliasRows {
 public:
  struct Draw {
    std::size_t column;
    double payload;
  };

  AliasRows() = default;

  /// `m` must be compressed, with non-negative entries and positive row sums (checked by the
  /// caller); `payload`, if given, compressed with the same sparsity pattern.
  explicit AliasRows(const SparseMatrix& m, const SparseMatrix* payload = nullptr) {
    const auto rows = static_cast<std::size_t>(m.rows());
    if (static_cast<std::uint64_t>(m.cols()) > 0xffffffffULL)
      invalid("AliasRows: at most 2^32 columns are supported, got ", m.cols());
    start_.resize(rows + 1);
    for (std::size_t r = 0; r <= rows; ++r) start_[r] = static_cast<std::size_t>(m.outerIndexPtr()[r]);
    slots_.resize(start_[rows]);
    auto column = [&](std::size_t k) { return static_cast<std::uint32_t>(m.innerIndexPtr()[k]); };
    auto value = [&](std::size_t k) { return payload ? payload->valuePtr()[k] : 0.0; };
    std::vector<double> scaled;
    std::vector<std::size_t> small, large;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t begin = start_[r], n = start_[r + 1] - begin;
      double sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) sum += m.valuePtr()[begin + i];
      // Vose: split the scaled weights n p_i into those below and above 1, then pair them off.
      scaled.assign(n, 0.0);
      small.clear();
      large.clear();
      for (std::size_t i = 0; i < n; ++i) {
        scaled[i] = m.valuePtr()[begin + i] * static_cast<double>(n) / sum;
        (scaled[i] < 1.0 ? small : large).push_back(i);
        slots_[begin + i] = {1.0, value(begin + i), value(begin + i), column(begin + i), column(begin + i)};
      }
      while (!small.empty() && !large.empty()) {
        const std::size_t s = small.back(), l = large.back();
        small.pop_back();
        large.pop_back();
        Slot& slot = slots_[begin + s];
        slot.threshold = scaled[s];
        slot.alias_column = column(begin + l);
        slot.alias_payload = value(begin + l);
        scaled[l] = (scaled[l] + scaled[s]) - 1.0;
        (scaled[l] < 1.0 ? small : large).push_back(l);
      }
      // What is left is 1 up to rounding: it keeps threshold 1 (never takes its alias).
    }
  }

  template <std::uniform_random_bit_generator G>
  [[nodiscard]] Draw sample(std::size_t row, G& gen) const {
    const std::size_t begin = start_[row], n = start_[row + 1] - begin;
    if (n == 1) return {slots_[begin].column, slots_[begin].payload};
    const Slot& slot = slots_[begin + static_cast<std::size_t>(uniform_index(gen, n))];
    if (uniform_real(gen) < slot.threshold) return {slot.column, slot.payload};
    return {slot.alias_column, slot.alias_payload};
  }

  [[nodiscard]] std::size_t rows() const noexcept { return start_.empty() ? 0 : start_.size() - 1; }

 private:
  struct Slot {
    double threshold;  // keep this entry if u < threshold, else take the alias
    double payload, alias_payload;
    std::uint32_t column, alias_column;
  };
  std::vector<std::size_t> start_;  // the slots of row r are [start_[r], start_[r + 1])
  std::vector<Slot> slots_;
};

/// The single-distribution alias table (a one-row AliasRows): a draw returns an index in [0, n).
class AliasTable {
 public:
  AliasTable() = default;
  /// `p` non-negative with a positive sum (checked by the caller); zero entries are never drawn.
  explicit AliasTable(const Eigen::VectorXd& p) {
    SparseMatrix row(1, p.size());
    for (Eigen::Index i = 0; i < p.size(); ++i)
      if (p[i] != 0.0) row.insert(0, i) = p[i];
    row.makeCompressed();
    rows_ = AliasRows(row);
  }
  template <std::uniform_random_bit_generator G>
  [[nodiscard]] std::size_t sample(G& gen) const {
    return rows_.sample(0, gen).column;
  }

 private:
  AliasRows rows_;
};

}  // namespace detail
}  // namespace memtrace
