# The pkg-config consumer (run with cmake -P by ctest, after the install fixture): compile and run
# main.cpp with nothing but `pkg-config --cflags memtrace` and -std=c++20.
#   -DPREFIX=<install prefix> -DCXX=<compiler> -DSOURCE=<main.cpp> -DOUT=<executable>
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags memtrace OUTPUT_VARIABLE cflags RESULT_VARIABLE failed
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(failed)
  message(FATAL_ERROR "pkg-config --cflags memtrace failed (PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH})")
endif()
execute_process(COMMAND ${PKG_CONFIG} --modversion memtrace OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
message(STATUS "memtrace ${version}: ${cflags}")
separate_arguments(cflags UNIX_COMMAND "${cflags}")
execute_process(COMMAND ${CXX} -std=c++20 ${cflags} ${SOURCE} -o ${OUT} RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "compiling ${SOURCE} with the flags of pkg-config failed")
endif()
execute_process(COMMAND ${OUT} RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${OUT} failed")
endif()
