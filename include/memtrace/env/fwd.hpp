#pragma once
// Forward declarations of the finite models. Each is an alias of a class template whose one
// parameter exists only so that its members are compiled where they are used (docs/design.md,
// compile time); the default argument lives here, once, so that a user's forward declaration is
// `#include <memtrace/env/fwd.hpp>` and every env header agrees with it.

namespace memtrace {

template <class Lazy = void>
class BasicFiniteHmm;
template <class Lazy = void>
class BasicFinitePomdp;
template <class Lazy = void>
class BasicNoisyRandomWalk;
template <class Lazy = void>
class BasicTMaze;
template <class Lazy = void>
class BasicTMazeAlwaysUp;
template <class Lazy = void>
class BasicTMazeNavigation;
template <class Lazy = void>
class BasicTwoStateHmm;

using FiniteHmm = BasicFiniteHmm<>;
using FinitePomdp = BasicFinitePomdp<>;
using NoisyRandomWalk = BasicNoisyRandomWalk<>;
using TMaze = BasicTMaze<>;
using TMazeAlwaysUp = BasicTMazeAlwaysUp<>;
using TMazeNavigation = BasicTMazeNavigation<>;
using TwoStateHmm = BasicTwoStateHmm<>;

}  // namespace memtrace
