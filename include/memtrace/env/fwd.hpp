#pragma once
// Forward declarations of the finite models and of PomdpFile. Each is an alias of a class template
// whose one parameter exists only so that its members are compiled where they are used
// (docs/design.md, compile time); the default argument lives here, once, so that a user's forward
// declaration is `#include <memtrace/env/fwd.hpp>` and every env header agrees with it.

namespace memtrace {

template <class Lazy = void>
class BasicFiniteHmm;
template <class Lazy = void>
class BasicFinitePomdp;
template <class Lazy = void>
class BasicNoisyRandomWalk;
template <class Lazy = void>
struct BasicPomdpFile;
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
using PomdpFile = BasicPomdpFile<>;
using TMaze = BasicTMaze<>;
using TMazeAlwaysUp = BasicTMazeAlwaysUp<>;
using TMazeNavigation = BasicTMazeNavigation<>;
using TwoStateHmm = BasicTwoStateHmm<>;

namespace detail {

template <class T, class Lazy>
struct lazy_type {
  using type = T;
};

/// T, spelled as a type that depends on Lazy (and that Lazy is not deduced from). GCC analyses an
/// expression of a template that does not depend on its parameters where the template is defined,
/// instantiating the Eigen expression types it names; a `template <class Lazy = void>` function
/// whose parameters and locals have such types is analysed only where it is used (docs/design.md).
template <class T, class Lazy>
using lazy_t = typename lazy_type<T, Lazy>::type;

}  // namespace detail

}  // namespace memtrace
