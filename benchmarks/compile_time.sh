#!/usr/bin/env bash
# Compile time of memtrace's headers, measured against <Eigen/Dense> (the goals: the core
# umbrella at most 2x, each analysis header alone at most 3x). Each header is compiled alone in a
# translation unit `#include <header>` + `int main() {}`, the way a user's file pays for it; the
# CPU time (user + sys) of the compiler is the median of --repeats rounds, each of which compiles
# every header once, so that a busy or drifting machine changes it less than wall time would.
# Prints a Markdown table (docs/design.md keeps the last one).
#
#   benchmarks/compile_time.sh [--compiler g++] [--flags "-std=c++20 -O0"] [--repeats 5] [--all] [--check]
#   benchmarks/compile_time.sh --programs [--compiler g++] [--flags "-std=c++20 -O2"] [--repeats 5]
#
# --all measures every public header, not only the umbrellas and the analysis headers; --check
# exits 1 if a goal is missed. --programs measures what users pay instead: whole programs compiled
# as a user compiles them (default flags -std=c++20 -O2, the headers installed by `cmake --install`
# into a scratch prefix and found with pkg-config), in the same rounds as <Eigen/Dense>: a copy of
# examples/ppo_basics.cpp (PPO on one's own environment), examples/own_environment.cpp, and the
# README's first example; it also gives each one's peak memory (GNU time's maximum resident set).
set -euo pipefail

compiler=g++
flags=""
repeats=5
all=0
check=0
programs=0
while [ $# -gt 0 ]; do
  case "$1" in
    --compiler) compiler="$2"; shift 2 ;;
    --flags) flags="$2"; shift 2 ;;
    --programs) programs=1; shift ;;
    --repeats) repeats="$2"; shift 2 ;;
    --all) all=1; shift ;;
    --check) check=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compile_time.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$programs" -eq 1 ] && { [ "$all" -eq 1 ] || [ "$check" -eq 1 ]; }; then
  echo "compile_time.sh: --all and --check measure headers; --programs measures programs (see --help)" >&2
  exit 2
fi
case "$repeats" in '' | *[!0-9]* | 0) echo "compile_time.sh: --repeats must be a positive integer, got '$repeats'" >&2; exit 2 ;; esac

[ -n "$flags" ] || { [ "$programs" -eq 1 ] && flags="-std=c++20 -O2" || flags="-std=c++20"; }

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
include_flags="-I$root/include $(pkg-config --cflags eigen3 2>/dev/null || echo -I/usr/include/eigen3)"
if [ "$programs" -eq 1 ]; then  # the installed headers, as a user's build finds them
  cmake -G Ninja -S "$root" -B "$work/build" -DMEMTRACE_BUILD_TESTS=OFF -DMEMTRACE_BUILD_EXAMPLES=OFF >/dev/null
  cmake --install "$work/build" --prefix "$work/prefix" >/dev/null
  include_flags="$(PKG_CONFIG_PATH="$work/prefix/share/pkgconfig" pkg-config --cflags memtrace)"
fi
# The peak memory of a compile comes from GNU time, run around the compiler when it is there.
memory_probe=()
if [ -x /usr/bin/time ] && /usr/bin/time -f '%M' true >/dev/null 2>&1; then
  memory_probe=(/usr/bin/time -f '%M' -o "$work/memory")
elif [ "$programs" -eq 1 ]; then
  echo "compile_time.sh: no GNU time (/usr/bin/time): peak memory is n/a (apt-get install time)" >&2
fi

# CPU seconds (user + sys) of one compile of the file $1, then its peak memory in MB (n/a without
# GNU time).
compile_once() {
  local t m=n/a
  TIMEFORMAT='%U %S'
  # shellcheck disable=SC2086
  t=$( { time "${memory_probe[@]}" "$compiler" $flags $include_flags -c "$1" -o "$work/tu.o" 2>"$work/err" ; } 2>&1 ) \
    || { echo "compile_time.sh: $1 does not compile:" >&2; cat "$work/err" >&2; exit 1; }
  [ ${#memory_probe[@]} -eq 0 ] || m=$(awk '{printf "%.0f", $1 / 1024}' "$work/memory")
  echo "$t" | awk -v m="$m" '{printf "%.3f %s", $1 + $2, m}'
}

# The median of the numbers in $1.
median() {
  printf '%s\n' $1 | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# A translation unit that includes the header $1 and does nothing else.
header_file() {
  local f="$work/$(echo "$1" | tr '/.' '__').cpp"
  printf '#include <%s>\nint main() {}\n' "$1" > "$f"
  echo "$f"
}

if [ "$programs" -eq 1 ]; then
  cp "$root/examples/ppo_basics.cpp" "$root/examples/own_environment.cpp" "$work/"
  # The README's first C++ block (a memory trace and TD(0) on the noisy random walk).
  awk '/^```cpp$/ {inside = 1; next} inside && /^```$/ {exit} inside' "$root/README.md" > "$work/readme_first.cpp"
  names=("Eigen/Dense" "ppo_basics.cpp (a copy)" "own_environment.cpp (a copy)" "README's first example")
  files=("$(header_file Eigen/Dense)" "$work/ppo_basics.cpp" "$work/own_environment.cpp" "$work/readme_first.cpp")
  declare -A cpu memory
  for ((r = 0; r < repeats; ++r)); do
    for i in "${!files[@]}"; do
      result=$(compile_once "${files[$i]}")  # an assignment, so that set -e stops on a failed compile
      read -r t m <<<"$result"
      cpu[$i]+="$t "
      memory[$i]="$m"  # the same in every round, up to a few MB
    done
  done
  base=$(median "${cpu[0]}")
  echo "compiler: $("$compiler" --version | head -1); flags: $flags; median of $repeats rounds; $(nproc) cores"
  echo
  echo "| program | CPU s | × Eigen/Dense | peak MB | goal |"
  echo "|---|---:|---:|---:|---|"
  for i in "${!files[@]}"; do
    t=$(median "${cpu[$i]}")
    ratio=$(awk -v t="$t" -v b="$base" 'BEGIN {printf "%.2f", t / b}')
    goal=""
    [ "$i" -eq 1 ] && goal="≤ 6 s and ≤ 1,000 MB (header-only ≤ 12 s at the least)"
    echo "| ${names[$i]} | $t | $ratio | ${memory[$i]} | $goal |"
  done
  exit 0
fi

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
    file=$(header_file "$h")
    result=$(compile_once "$file")  # an assignment, so that set -e stops on a failed compile
    read -r t _ <<<"$result"
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
