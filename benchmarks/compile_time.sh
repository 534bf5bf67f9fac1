#!/usr/bin/env bash
# Compile time of memtrace's headers, measured against <Eigen/Dense> (the goals: the core
# umbrella at most 2x, each analysis header alone at most 3x). Each header is compiled alone in a
# translation unit `#include <header>` + `int main() {}`, the way a user's file pays for it; the
# CPU time (user + sys) of the compiler is the median of --repeats rounds, each of which compiles
# every header once, so that a busy or drifting machine changes it less than wall time would.
# Prints a Markdown table (docs/design.md keeps the last one).
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

# CPU seconds (user + sys) of one compile of a file that includes $1.
compile_once() {
  printf '#include <%s>\nint main() {}\n' "$1" > "$work/tu.cpp"
  local t
  TIMEFORMAT='%U %S'
  # shellcheck disable=SC2086
  t=$( { time "$compiler" $flags -I"$root/include" $eigen -c "$work/tu.cpp" -o "$work/tu.o" 2>"$work/err" ; } 2>&1 ) \
    || { echo "compile_time.sh: $1 does not compile:" >&2; cat "$work/err" >&2; exit 1; }
  echo "$t" | awk '{printf "%.3f", $1 + $2}'
}

# The median of the numbers in $1.
median() {
  printf '%s\n' $1 | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

headers=(Eigen/Dense memtrace/core.hpp memtrace/analysis.hpp memtrace/experiment.hpp memtrace/memtrace.hpp)
if [ "$all" -eq 1 ]; then
  while IFS= read -r h; do headers+=("$h"); done < <(cd "$root/include" && find memtrace -name '*.hpp' | sort)
else
  while IFS= read -r h; do headers+=("$h"); done < <(cd "$root/include" && find memtrace/analysis -name '*.hpp' | sort)
fi
unique=()
declare -A seen times
for h in "${headers[@]}"; do
  [ -n "${seen[$h]:-}" ] && continue
  seen[$h]=1
  unique+=("$h")
done

# Round by round, every header once a round: a machine whose speed drifts (a shared one) moves
# every header's median alike, and the ratios to <Eigen/Dense> keep.
for ((r = 0; r < repeats; ++r)); do
  for h in "${unique[@]}"; do
    t=$(compile_once "$h")
    times[$h]+="$t "
  done
done

base=$(median "${times[Eigen/Dense]}")
echo "compiler: $("$compiler" --version | head -1); flags: $flags; median of $repeats rounds; $(nproc) cores"
echo
echo "| header | CPU s | × Eigen/Dense | goal |"
echo "|---|---:|---:|---|"
missed=0
for h in "${unique[@]}"; do
  t=$(median "${times[$h]}")
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
