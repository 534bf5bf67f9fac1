#!/usr/bin/env bash
# Compile time of memtrace's headers, measured against <Eigen/Dense> (the goals: the core
# umbrella at most 2x, each analysis header alone at most 3x). Each header is compiled alone in a
# translation unit `#include <header>` + `int main() {}`, the way a user's file pays for it; the
# CPU time (user + sys) of the compiler is the median of --repeats runs, so a busy machine changes
# it less than wall time. Prints a Markdown table (docs/design.md keeps the last one).
#
#   benchmarks/compile_time.sh [--compiler g++] [--flags "-std=c++20 -O0"] [--repeats 5] [--all] [--check]
#
# --all measures every public header, not only the umbrellas and the analysis headers; --check
# exits 1 if a goal is missed.
set -euo pipefail

compiler=g++
flags="-std=c++20"
repeats=5
all=0
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --compiler) compiler="$2"; shift 2 ;;
    --flags) flags="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --all) all=1; shift ;;
    --check) check=1; shift ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compile_time.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$repeats" in '' | *[!0-9]* | 0) echo "compile_time.sh: --repeats must be a positive integer, got '$repeats'" >&2; exit 2 ;; esac

root="$(cd "$(dirname "$0")/.." && pwd)"
eigen="$(pkg-config --cflags eigen3 2>/dev/null || echo -I/usr/include/eigen3)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Median CPU seconds (user + sys) of compiling a file that includes $1.
measure() {
  printf '#include <%s>\nint main() {}\n' "$1" > "$work/tu.cpp"
  local times=() t
  TIMEFORMAT='%U %S'
  for ((i = 0; i < repeats; ++i)); do
    # shellcheck disable=SC2086
    t=$( { time "$compiler" $flags -I"$root/include" $eigen -c "$work/tu.cpp" -o "$work/tu.o" 2>"$work/err" ; } 2>&1 ) \
      || { echo "compile_time.sh: $1 does not compile:" >&2; cat "$work/err" >&2; exit 1; }
    times+=("$(echo "$t" | awk '{printf "%.3f", $1 + $2}')")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

headers=(memtrace/core.hpp memtrace/analysis.hpp memtrace/experiment.hpp memtrace/memtrace.hpp)
if [ "$all" -eq 1 ]; then
  while IFS= read -r h; do headers+=("$h"); done < <(cd "$root/include" && find memtrace -name '*.hpp' | sort)
else
  while IFS= read -r h; do headers+=("$h"); done < <(cd "$root/include" && find memtrace/analysis -name '*.hpp' | sort)
fi

base=$(measure Eigen/Dense)
echo "compiler: $("$compiler" --version | head -1); flags: $flags; median of $repeats; $(nproc) cores"
echo
echo "| header | CPU s | × Eigen/Dense | goal |"
echo "|---|---:|---:|---|"
echo "| Eigen/Dense | $base | 1.00 | |"
missed=0
declare -A seen
for h in "${headers[@]}"; do
  [ -n "${seen[$h]:-}" ] && continue
  seen[$h]=1
  t=$(measure "$h")
  ratio=$(awk -v t="$t" -v b="$base" 'BEGIN {printf "%.2f", t / b}')
  goal=""
  case "$h" in
    memtrace/core.hpp) goal=2 ;;
    memtrace/analysis/*) goal=3 ;;
  esac
  verdict=""
  if [ -n "$goal" ]; then
    if awk -v r="$ratio" -v g="$goal" 'BEGIN {exit !(r <= g)}'; then verdict="≤ ${goal}× met"; else verdict="≤ ${goal}× **missed**"; missed=1; fi
  fi
  echo "| $h | $t | $ratio | $verdict |"
done
[ "$check" -eq 1 ] && [ "$missed" -eq 1 ] && exit 1
exit 0
