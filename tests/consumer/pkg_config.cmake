# The pkg-config consumer (run with cmake -P by ctest, after the install fixture): compile and run
# a program with nothing but `pkg-config --cflags memtrace` and -std=c++20 (and FLAGS, e.g. -O1).
#   -DPREFIX=<install prefix> -DCXX=<compiler> -DSOURCE=<main.cpp> -DOUT=<executable>
#   [-DCOPY_TO=<folder>: compile a copy of SOURCE, alone in that emptied folder] [-DFLAGS=...]
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags memtrace OUTPUT_VARIABLE cflags RESULT_VARIABLE failed
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(failed)
  message(FATAL_ERROR "pkg-config --cflags memtrace failed (PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH})")
endif()
execute_process(COMMAND ${PKG_CONFIG} --modversion memtrace OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
message(STATUS "memtrace ${version}: ${cflags}")
separate_arguments(cflags UNIX_COMMAND "${cflags} ${FLAGS}")
if(COPY_TO)  # nothing of the repository next to it: a quoted include of a project file would fail
  file(REMOVE_RECURSE ${COPY_TO})
  file(COPY ${SOURCE} DESTINATION ${COPY_TO})
  get_filename_component(_name ${SOURCE} NAME)
  set(SOURCE ${COPY_TO}/${_name})
endif()
execute_process(COMMAND ${CXX} -std=c++20 ${cflags} ${SOURCE} -o ${OUT} RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "compiling ${SOURCE} with the flags of pkg-config failed")
endif()
execute_process(COMMAND ${OUT} RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${OUT} failed")
endif()
