# The C++ snippets of the Markdown documentation (docs/design.md, "Doc snippets are compiled").
# Included by tests/doc/CMakeLists.txt at configure time (to extract the programs) and by
# check_snippets.cmake in script mode (the ctest test that checks every other block).
#
# A ```python block must be a fragment of a .py file that a CMakeLists.txt runs. A ```cpp block is
# one of:
#   a program      - it contains `int main(`; extracted, compiled with the strict warnings and run;
#   a fragment     - the line before the fence is <!-- fragment of PATH -->: the block appears in
#                    PATH (relative to the repository, a file that is compiled) with every run of
#                    whitespace, line ends included, read as one space;
#   a declaration  - the line before the fence is <!-- declarations from PATH[, PATH...] -->: a
#                    listing of an API, not compiled; every name it declares or calls (an identifier
#                    before `(`, or after struct/class) must be a word of one of the PATHs.
# Anything else is an error, so that no new block goes unchecked.

# memtrace_doc_blocks(<markdown file> <prefix>) sets, in the caller's scope, <prefix>_count and for
# each block i = 1..count: <prefix>_<i>_line (the line of the fence), <prefix>_<i>_marker (the line
# before the fence, stripped), <prefix>_<i>_language (cpp or python) and <prefix>_<i>_text (the
# block, lines joined by "\n").
function(memtrace_doc_blocks md prefix)
  file(READ "${md}" content)
  # One list element per line: protect what a CMake list would read as syntax.
  string(REPLACE "\\" "@MT_BS@" content "${content}")
  string(REPLACE ";" "@MT_SC@" content "${content}")
  string(REPLACE "[" "@MT_LB@" content "${content}")
  string(REPLACE "]" "@MT_RB@" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(count 0)
  set(number 0)
  set(in_cpp FALSE)
  set(in_other FALSE)
  set(previous "")
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(in_cpp)
      if(line MATCHES "^```")
        set(in_cpp FALSE)
        string(REPLACE "@MT_BS@" "\\" text "${text}")
        string(REPLACE "@MT_SC@" ";" text "${text}")
        string(REPLACE "@MT_LB@" "[" text "${text}")
        string(REPLACE "@MT_RB@" "]" text "${text}")
        set(${prefix}_${count}_text "${text}" PARENT_SCOPE)
      elseif(first)
        set(text "${line}")
        set(first FALSE)
      else()
        string(APPEND text "\n${line}")
      endif()
    elseif(in_other)
      if(line MATCHES "^```")
        set(in_other FALSE)
      endif()
    elseif(line MATCHES "^[ \t]*```[ \t]*(cpp|c\\+\\+|cc|cxx|C\\+\\+|python|py)[ \t]*$")
      if(NOT line MATCHES "^```(cpp|python)$")
        message(FATAL_ERROR "${md}:${number}: write C++ and Python blocks as ```cpp and ```python at the start of a "
                            "line, so that they are checked")
      endif()
      math(EXPR count "${count} + 1")
      set(in_cpp TRUE)
      set(first TRUE)
      set(text "")
      string(STRIP "${previous}" marker)
      set(${prefix}_${count}_line ${number} PARENT_SCOPE)
      set(${prefix}_${count}_marker "${marker}" PARENT_SCOPE)
      string(REGEX REPLACE "^```" "" language "${line}")
      set(${prefix}_${count}_language "${language}" PARENT_SCOPE)
    elseif(line MATCHES "^[ \t]*```")
      set(in_other TRUE)
    endif()
    set(previous "${line}")
  endforeach()
  if(in_cpp OR in_other)
    message(FATAL_ERROR "${md}: a code block is not closed")
  endif()
  set(${prefix}_count ${count} PARENT_SCOPE)
endfunction()

# memtrace_doc_kind(<marker> <text> <kind var> <paths var>): program, fragment, declarations or
# unchecked; for a fragment or declarations, the list of paths the marker names.
function(memtrace_doc_kind marker text kind_var paths_var)
  set(paths "")
  if(marker MATCHES "^<!-- fragment of ([^ ]+) -->$")
    set(kind fragment)
    set(paths "${CMAKE_MATCH_1}")
  elseif(marker MATCHES "^<!-- declarations from (.+) -->$")
    set(kind declarations)
    string(REPLACE ", " ";" paths "${CMAKE_MATCH_1}")
  elseif(marker MATCHES "^<!--")
    set(kind unchecked)  # a comment that is not a marker, most likely a misspelt one
  elseif(text MATCHES "(^|\n)int main\\(")
    set(kind program)
  else()
    set(kind unchecked)
  endif()
  set(${kind_var} ${kind} PARENT_SCOPE)
  set(${paths_var} "${paths}" PARENT_SCOPE)
endfunction()

# memtrace_doc_normalise(<text> <var>): every run of whitespace (line ends included) one space,
# with a space at either end, so that " fragment " found in " file " starts and ends at a word.
function(memtrace_doc_normalise text var)
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${text}")
  string(STRIP "${text}" text)
  set(${var} " ${text} " PARENT_SCOPE)
endfunction()
