#pragma once
// The version of memtrace: macros for the preprocessor and a constexpr value for C++. This file is
// the one place the version is written; CMake reads it (project(VERSION)), and the installed
// memtraceConfigVersion.cmake and memtrace.pc carry it. See docs/design.md#versions.

#include <compare>
#include <string_view>

#define MEMTRACE_VERSION_MAJOR 0
#define MEMTRACE_VERSION_MINOR 4
#define MEMTRACE_VERSION_PATCH 0
/// MAJOR * 10000 + MINOR * 100 + PATCH, for `#if MEMTRACE_VERSION >= 400` (0.4.0).
#define MEMTRACE_VERSION (MEMTRACE_VERSION_MAJOR * 10000 + MEMTRACE_VERSION_MINOR * 100 + MEMTRACE_VERSION_PATCH)
#define MEMTRACE_VERSION_STRING "0.4.0"

namespace memtrace {

/// The library's version. Releases with the same major and minor version are compatible (the
/// installed CMake package accepts SameMinorVersion); before 1.0 a minor release may break the API.
struct Version {
  int major, minor, patch;
  friend constexpr bool operator==(const Version&, const Version&) = default;
  friend constexpr auto operator<=>(const Version&, const Version&) = default;
};

inline constexpr Version version{MEMTRACE_VERSION_MAJOR, MEMTRACE_VERSION_MINOR, MEMTRACE_VERSION_PATCH};
inline constexpr std::string_view version_string = MEMTRACE_VERSION_STRING;

}  // namespace memtrace
