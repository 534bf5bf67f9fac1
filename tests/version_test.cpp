// version.hpp: the macros, the constexpr value and CMake's project version agree.
#include "memtrace/version.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace version_test {  // a namespace of its own: the folder's tests are compiled as one file

TEST_CASE("The version macros, the constexpr version and CMake's project version agree", "[version]") {
  STATIC_REQUIRE(memtrace::version ==
                 memtrace::Version{MEMTRACE_VERSION_MAJOR, MEMTRACE_VERSION_MINOR, MEMTRACE_VERSION_PATCH});
  STATIC_REQUIRE(MEMTRACE_VERSION ==
                 memtrace::version.major * 10000 + memtrace::version.minor * 100 + memtrace::version.patch);
  STATIC_REQUIRE(memtrace::Version{0, 9, 9} < memtrace::Version{1, 0, 0});
  const std::string expected = std::to_string(memtrace::version.major) + "." + std::to_string(memtrace::version.minor) +
                               "." + std::to_string(memtrace::version.patch);
  CHECK(std::string(memtrace::version_string) ==
        expected);  // Catch2 2 prints string_view only if its main was built for it
  CHECK(std::string(MEMTRACE_VERSION_STRING) == MEMTRACE_CMAKE_PROJECT_VERSION);  // CMake read version.hpp
}

}  // namespace version_test
