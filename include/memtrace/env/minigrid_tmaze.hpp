#pragma once
// The Minigrid T-maze of the paper's PPO experiment (§6, Figure 5), exactly as the official code
// runs it (traces/tmaze.py on xland-minigrid): a 5 x (k + 2) grid whose corridor of length k starts
// on a green or blue cue and ends at a junction between a green and a blue goal; the agent turns
// and walks (3 actions), sees an egocentric, transparent 3 x 3 view of 5 tile kinds, and is paid 1
// for entering the goal of the cue's colour. Observations are the 9 active entries of the view's
// 45-dimensional one-hot encoding (MultiHot<9>). See docs/environments.md.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "memtrace/concepts.hpp"
#include "memtrace/features.hpp"
#include "memtrace/random.hpp"
#include "memtrace/vocabulary.hpp"

namespace memtrace {

/// Tiles, actions and directions of the Minigrid T-maze, as indices.
namespace minigrid {
// Tiles, in the order of the official 5-tile encoding (MinigridEncoding).
inline constexpr std::size_t empty = 0;  // outside the grid: (EMPTY, EMPTY), what the view pads with
inline constexpr std::size_t green = 1;  // green floor: a cue or a goal
inline constexpr std::size_t blue = 2;   // blue floor: a cue or a goal
inline constexpr std::size_t wall = 3;   // grey wall
inline constexpr std::size_t floor = 4;  // plain (black) floor
inline constexpr std::size_t num_tiles = 5;
// Actions (xminigrid's first three).
inline constexpr Action forward = 0;
inline constexpr Action turn_right = 1;  // clockwise
inline constexpr Action turn_left = 2;   // counter-clockwise
inline constexpr std::size_t num_actions = 3;
// Directions the agent faces (xminigrid's DIRECTIONS order).
inline constexpr std::size_t up = 0;
inline constexpr std::size_t right = 1;
inline constexpr std::size_t down = 2;
inline constexpr std::size_t left = 3;

/// A cell of the grid: row 0 at the top, column 0 on the left.
struct Cell {
  std::size_t row = 0;
  std::size_t col = 0;
  friend bool operator==(const Cell&, const Cell&) = default;
};

/// The character of a tile in render() and render_view(): . G B # _ (and ? for anything else).
[[nodiscard]] constexpr char tile_char(std::size_t tile) noexcept {
  constexpr char chars[num_tiles] = {'.', 'G', 'B', '#', '_'};
  return tile < num_tiles ? chars[tile] : '?';
}
}  // namespace minigrid

namespace detail::minigrid_tmaze {
// The grid is stored padded by 2 cells on every side (what a 3 x 3 view can reach beyond the
// agent), and compressed: in a corridor longer than 8 the view cannot tell the columns 4 .. k - 3
// apart, so the grid of k = 8 serves every k >= 8 through compressed_col. 9 rows x 14 columns.
inline constexpr std::size_t max_stored_length = 8;
inline constexpr std::size_t pad = 2;
inline constexpr std::size_t rows = 5 + 2 * pad;
inline constexpr std::size_t stride = max_stored_length + 2 + 2 * pad;

inline constexpr std::ptrdiff_t direction_row[4] = {-1, 0, 1, 0};  // up, right, down, left
inline constexpr std::ptrdiff_t direction_col[4] = {0, 1, 0, -1};

/// offsets[d][r * 3 + c]: where view cell (r, c) lies relative to the agent in the stored grid when
/// it faces d. The closed form of xminigrid's crop + rot90 (docs/minigrid-tmaze.md, "Observation"):
/// cell = pos + (2 - r) F + (1 - c) L with F the direction faced and L the one to its left.
constexpr std::array<std::array<std::ptrdiff_t, 9>, 4> make_view_offsets() {
  std::array<std::array<std::ptrdiff_t, 9>, 4> offsets{};
  for (std::size_t d = 0; d < 4; ++d) {
    const std::size_t l = (d + 3) % 4;
    for (std::ptrdiff_t r = 0; r < 3; ++r) {
      for (std::ptrdiff_t c = 0; c < 3; ++c) {
        const std::ptrdiff_t dr = (2 - r) * direction_row[d] + (1 - c) * direction_row[l];
        const std::ptrdiff_t dc = (2 - r) * direction_col[d] + (1 - c) * direction_col[l];
        offsets[d][static_cast<std::size_t>(r * 3 + c)] = dr * static_cast<std::ptrdiff_t>(stride) + dc;
      }
    }
  }
  return offsets;
}
inline constexpr std::array<std::array<std::ptrdiff_t, 9>, 4> view_offsets = make_view_offsets();
inline constexpr std::size_t turn[3] = {0, 1, 3};  // forward, turn_right, turn_left: added to the direction
inline constexpr std::array<std::ptrdiff_t, 4> forward_offsets = {-static_cast<std::ptrdiff_t>(stride), 1,
                                                                  static_cast<std::ptrdiff_t>(stride), -1};
}  // namespace detail::minigrid_tmaze

/// The Minigrid T-maze with corridor length k >= 2 (the official TMaze{k}; docs/minigrid-tmaze.md),
/// a Pomdp whose observations are MultiHot<9>.
///
/// Grid: 5 rows x (k + 2) columns, walls everywhere except the corridor, row 2, columns 1 .. k
/// (plain floor) and the two goals at (1, k) and (3, k). The cue at (2, 1) is green or blue floor;
/// sides = 1 puts green on the upper goal (1, k) and blue on the lower (3, k), sides = 0 the
/// reverse. The goal of the cue's colour is the success cell, the other the failure cell.
///
/// Dynamics: the agent starts at (2, 1) facing right. forward (0) moves one cell in the direction
/// faced unless that cell is a wall (a bump: nothing changes but the step count); turn_right (1)
/// and turn_left (2) turn by 90 degrees. Entering either goal terminates the episode, with reward 1
/// on the success cell and 0 everywhere else. The episode is truncated (reward 0 unless the last
/// step reached the success cell, terminated only if it reached a goal) when the step count
/// reaches 5(k + 2)^2. The dynamics are deterministic: only reset(gen) draws.
///
/// Observation: the egocentric, transparent 3 x 3 view (row 0 two cells ahead, row 2 the agent's
/// own row, column 0 on its left; the agent at [2][1]), cells outside the grid reading `empty`,
/// encoded one-hot over the 5 tiles: the 9 active indices (r * 3 + c) * 5 + tile of a 45-long
/// vector, in increasing order.
class MinigridTMaze {
 public:
  using observation_type = MultiHot<9>;
  static constexpr std::size_t view_size = 3;
  static constexpr std::size_t view_cells = 9;
  static constexpr std::size_t observation_dim = view_cells * minigrid::num_tiles;  // 45

  /// A maze of corridor length k = corridor_length >= 2; 5(k + 2)^2 must fit a std::size_t. No
  /// episode runs until reset; the layout shown until then is cue green, sides 1.
  explicit MinigridTMaze(std::size_t corridor_length) : k_(corridor_length) {
    if (corridor_length < 2)
      detail::invalid("MinigridTMaze: corridor_length must be at least 2, got ", corridor_length);
    const std::size_t width = corridor_length + 2;
    const std::size_t limit = width < corridor_length ? 0 : detail::checked_mul(5, detail::checked_mul(width, width));
    if (limit == 0)
      detail::invalid("MinigridTMaze: corridor_length k = ", corridor_length,
                      " is too large: the episode limit 5(k + 2)^2 overflows std::size_t");
    max_steps_ = limit;
    shift_ = k_ > detail::minigrid_tmaze::max_stored_length ? k_ - detail::minigrid_tmaze::max_stored_length : 0;
    const std::size_t stored = k_ - shift_;
    constexpr auto pad = static_cast<std::ptrdiff_t>(detail::minigrid_tmaze::pad);
    for (std::size_t r = 0; r < detail::minigrid_tmaze::rows; ++r)
      for (std::size_t c = 0; c < detail::minigrid_tmaze::stride; ++c)
        grid_[r * detail::minigrid_tmaze::stride + c] = static_cast<std::uint8_t>(layout_tile(
            stored, cue_, sides_, static_cast<std::ptrdiff_t>(r) - pad, static_cast<std::ptrdiff_t>(c) - pad));
    obs_.set_size_unchecked(view_cells);
    place_at_start();
  }

  /// Starts an episode in a layout drawn uniformly from the four: the cue by uniform_index(gen, 2)
  /// (0 green, 1 blue), then sides by uniform_index(gen, 2). Returns y_0, the view from the start.
  template <std::uniform_random_bit_generator G>
  MultiHot<9> reset(G& gen) {
    const std::size_t cue = uniform_index(gen, 2) == 0 ? minigrid::green : minigrid::blue;
    const auto sides = static_cast<std::size_t>(uniform_index(gen, 2));
    return reset(cue, sides);
  }

  /// Starts an episode in the given layout (for replays): cue minigrid::green or minigrid::blue,
  /// sides 1 (green goal up) or 0 (green goal down). Returns y_0.
  MultiHot<9> reset(std::size_t cue, std::size_t sides) {
    if (cue != minigrid::green && cue != minigrid::blue)
      detail::invalid("MinigridTMaze::reset: cue must be green (1) or blue (2), got ", cue);
    if (sides > 1) detail::invalid("MinigridTMaze::reset: sides must be 0 or 1, got ", sides);
    cue_ = cue;
    sides_ = sides;
    const std::size_t stored = k_ - shift_;
    grid_[stored_index(2, 1)] = static_cast<std::uint8_t>(cue_);
    grid_[stored_index(1, stored)] = static_cast<std::uint8_t>(upper_goal());
    grid_[stored_index(3, stored)] = static_cast<std::uint8_t>(lower_goal());
    place_at_start();
    done_ = false;
    return obs_;
  }

  /// One step (the generator is not used: the dynamics are deterministic). Throws
  /// std::invalid_argument for an action outside [0, 3) and std::logic_error when no episode runs
  /// (it terminated or was truncated, or reset was never called), changing nothing.
  template <std::uniform_random_bit_generator G>
  TimeStep<MultiHot<9>> step(Action u, [[maybe_unused]] G& gen) {
    return step(u);
  }

  /// The same step without a generator.
  TimeStep<MultiHot<9>> step(Action u) {
    if (u >= minigrid::num_actions) [[unlikely]]
      detail::invalid("MinigridTMaze::step: action must be in [0, 3) (forward, turn right, turn left), got ", u);
    if (done_) [[unlikely]]
      throw std::logic_error("MinigridTMaze::step: no episode is running (it ended, or reset was never called)");
    ++steps_;
    // Without branches on the action (a random policy's actions are unpredictable): forward moves
    // unless the cell ahead is a wall (every cell next to the agent is a wall or a floor), a turn
    // adds 1 (clockwise) or 3 (counter-clockwise) to the direction.
    const std::uint8_t ahead = grid_[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(agent_index()) +
                                                              detail::minigrid_tmaze::forward_offsets[dir_])];
    const bool moves = u == minigrid::forward && ahead != minigrid::wall;
    row_ += moves ? static_cast<std::size_t>(detail::minigrid_tmaze::direction_row[dir_]) : 0;  // wraps: exact
    col_ += moves ? static_cast<std::size_t>(detail::minigrid_tmaze::direction_col[dir_]) : 0;
    dir_ = (dir_ + detail::minigrid_tmaze::turn[u]) & 3;
    observe();
    TimeStep<MultiHot<9>> result;
    result.observation = obs_;
    result.terminated = row_ != 2;  // off the corridor row only into a goal
    result.reward = result.terminated && row_ == success_row() ? 1.0 : 0.0;
    result.truncated = steps_ == max_steps_;
    done_ = result.terminated || result.truncated;
    return result;
  }

  [[nodiscard]] std::size_t num_actions() const noexcept { return minigrid::num_actions; }
  [[nodiscard]] std::size_t corridor_length() const noexcept { return k_; }
  [[nodiscard]] std::size_t height() const noexcept { return 5; }
  [[nodiscard]] std::size_t width() const noexcept { return k_ + 2; }
  /// The episode limit 5(k + 2)^2.
  [[nodiscard]] std::size_t max_steps() const noexcept { return max_steps_; }
  /// Steps taken in this episode.
  [[nodiscard]] std::size_t steps() const noexcept { return steps_; }
  /// Whether step would throw: the episode terminated or was truncated, or none was started.
  [[nodiscard]] bool ended() const noexcept { return done_; }

  /// The agent's cell and the direction it faces (minigrid::up, right, down, left = 0 .. 3).
  [[nodiscard]] std::size_t row() const noexcept { return row_; }
  [[nodiscard]] std::size_t col() const noexcept { return col_; }
  [[nodiscard]] std::size_t direction() const noexcept { return dir_; }

  /// The layout: the cue's tile (minigrid::green or blue), sides (1: green goal up), the goals.
  [[nodiscard]] std::size_t cue() const noexcept { return cue_; }
  [[nodiscard]] std::size_t sides() const noexcept { return sides_; }
  [[nodiscard]] minigrid::Cell success_cell() const noexcept { return {success_row(), k_}; }
  [[nodiscard]] minigrid::Cell failure_cell() const noexcept { return {4 - success_row(), k_}; }

  /// The tile at (row, col) of the grid; minigrid::empty outside it (row >= 5 or col >= k + 2).
  [[nodiscard]] std::size_t tile(std::size_t row, std::size_t col) const noexcept {
    if (row >= 5 || col >= k_ + 2) return minigrid::empty;
    return layout_tile(k_, cue_, sides_, static_cast<std::ptrdiff_t>(row), static_cast<std::ptrdiff_t>(col));
  }

  /// The current observation (y_0 after reset, then the last step's).
  [[nodiscard]] const MultiHot<9>& observation() const noexcept { return obs_; }
  /// The current view as tiles, row-major from the farthest row (view()[7] is under the agent).
  [[nodiscard]] std::array<std::size_t, 9> view() const noexcept {
    std::array<std::size_t, 9> tiles{};
    for (std::size_t i = 0; i < view_cells; ++i) tiles[i] = obs_[i] - i * minigrid::num_tiles;
    return tiles;
  }

  /// The grid, one line per row: # wall, _ floor, G and B coloured floors, the agent as ^ > v <.
  [[nodiscard]] std::string render() const {
    std::string out;
    out.reserve(5 * (k_ + 3));
    for (std::size_t r = 0; r < 5; ++r) {
      for (std::size_t c = 0; c < k_ + 2; ++c)
        out += r == row_ && c == col_ ? "^>v<"[dir_] : minigrid::tile_char(tile(r, c));
      out += '\n';
    }
    return out;
  }

  /// The view, three lines from the farthest row: . outside the grid, else as render().
  [[nodiscard]] std::string render_view() const {
    std::string out;
    const std::array<std::size_t, 9> tiles = view();
    for (std::size_t i = 0; i < view_cells; ++i) {
      out += minigrid::tile_char(tiles[i]);
      if (i % 3 == 2) out += '\n';
    }
    return out;
  }

 private:
  template <class>
  friend struct detail::CheckpointState;  // env/checkpoint.hpp
  /// The layout of a maze of corridor length k in real coordinates (outside: empty).
  [[nodiscard]] static std::size_t layout_tile(std::size_t k, std::size_t cue, std::size_t sides, std::ptrdiff_t row,
                                               std::ptrdiff_t col) noexcept {
    const auto width = static_cast<std::ptrdiff_t>(k + 2), corridor_end = static_cast<std::ptrdiff_t>(k);
    if (row < 0 || row >= 5 || col < 0 || col >= width) return minigrid::empty;
    if (row == 0 || row == 4 || col == 0 || col == width - 1) return minigrid::wall;
    if (row == 2) return col == 1 ? cue : minigrid::floor;
    if (col == corridor_end) return (row == 1) == (sides == 1) ? minigrid::green : minigrid::blue;
    return minigrid::wall;
  }

  [[nodiscard]] std::size_t upper_goal() const noexcept { return sides_ == 1 ? minigrid::green : minigrid::blue; }
  [[nodiscard]] std::size_t lower_goal() const noexcept { return sides_ == 1 ? minigrid::blue : minigrid::green; }
  [[nodiscard]] std::size_t success_row() const noexcept { return upper_goal() == cue_ ? 1 : 3; }

  /// The column of the stored grid whose surroundings (±2 columns) look like those of column col.
  [[nodiscard]] std::size_t compressed_col(std::size_t col) const noexcept {
    if (col <= 3) return col;
    return col + 2 >= k_ ? col - shift_ : 4;
  }
  [[nodiscard]] static std::size_t stored_index(std::size_t row, std::size_t stored_col) noexcept {
    return (row + detail::minigrid_tmaze::pad) * detail::minigrid_tmaze::stride + stored_col +
           detail::minigrid_tmaze::pad;
  }
  [[nodiscard]] std::size_t agent_index() const noexcept { return stored_index(row_, compressed_col(col_)); }

  void observe() noexcept {
    const std::uint8_t* at = grid_.data() + agent_index();
    const std::array<std::ptrdiff_t, 9>& offsets = detail::minigrid_tmaze::view_offsets[dir_];
    for (std::size_t i = 0; i < view_cells; ++i) obs_[i] = i * minigrid::num_tiles + at[offsets[i]];
  }

  void place_at_start() noexcept {
    row_ = 2;
    col_ = 1;
    dir_ = minigrid::right;
    steps_ = 0;
    observe();
  }

  std::size_t k_;
  std::size_t max_steps_ = 0;
  std::size_t shift_ = 0;  // k - 8 for k > 8: stored column = real column - shift near the junction
  std::size_t cue_ = minigrid::green;
  std::size_t sides_ = 1;
  std::size_t row_ = 2, col_ = 1, dir_ = minigrid::right;
  std::size_t steps_ = 0;
  bool done_ = true;
  std::array<std::uint8_t, detail::minigrid_tmaze::rows * detail::minigrid_tmaze::stride> grid_{};
  MultiHot<9> obs_;
};

}  // namespace memtrace
