# The installed README's relative links lead to installed files (cmake --install carries the docs
# and the examples a user copies to share/doc/memtrace). Run with cmake -P by ctest, after the
# install fixture:  -DDOCDIR=<prefix>/share/doc/memtrace
file(READ ${DOCDIR}/README.md readme)
# Each "](" becomes a control character first: a list of matches that began with "]" would be read
# by CMake as one bracketed item.
string(ASCII 1 mark)
string(REPLACE "](" "${mark}" readme "${readme}")
string(REGEX MATCHALL "${mark}[^)]*" links "${readme}")
set(missing)
list(LENGTH links checked)
foreach(link IN LISTS links)
  string(REGEX REPLACE "^${mark}([^#]*).*$" "\\1" path "${link}")
  if(path AND NOT path MATCHES "^[a-z]+:" AND NOT EXISTS ${DOCDIR}/${path})  # not https:, mailto:
    list(APPEND missing ${path})
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no links found in ${DOCDIR}/README.md")
endif()
if(missing)
  message(FATAL_ERROR "the installed README links to files that were not installed: ${missing}")
endif()
message(STATUS "the installed README's ${checked} links lead to installed files")
