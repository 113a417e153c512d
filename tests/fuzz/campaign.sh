#!/usr/bin/env bash
# A long fuzzing campaign: builds the libFuzzer targets (clang, ASan+UBSan, its own build
# directory), runs each until it has executed --runs inputs or for --time seconds, whichever
# comes first, --jobs targets at a time, merges what each found into its corpus in
# tests/fuzz/corpus/<target> (-merge=1 keeps only inputs that add coverage, and at most
# --max-new-files / --max-new-kb of them per target), and records target, executions,
# seconds, new corpus files and findings as a markdown table on stdout and in --record.
#
# CI's short run is tests/run.sh (SQUEEZE_FUZZ_SECONDS, 30 s a target); this is the long one.
#
# Usage: tests/fuzz/campaign.sh [options] [target ...]     (targets: e.g. policy_fuzz; default all)
#   --time S          seconds per target at most (default 3600)
#   --runs N          executions per target at most (default 10000000)
#   --jobs N          targets fuzzed at once (default: the number of cores)
#   --build-dir DIR   where the fuzz targets are built (default build-fuzz-campaign)
#   --no-build        use the targets already built in --build-dir
#   --record FILE     markdown file whose campaign section gets the table (default
#                     tests/fuzz/README.md, between its campaign:begin/end markers);
#                     "-" for stdout only
#   --max-new-files N inputs added to each corpus at most (default 64), smallest first
#   --max-new-kb N    kilobytes added to each corpus at most (default 256)
#   --no-merge        leave the corpora as they are
# Exit status: 0 when every target ran without a finding, 1 when one found something (its
# input is kept under <build-dir>/campaign/<target>/findings), 2 on a usage or build error.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

command_line="tests/fuzz/campaign.sh${*:+ $*}"
time_limit=3600 runs=10000000 jobs=$(nproc) build_dir=build-fuzz-campaign build=1
record=tests/fuzz/README.md max_new_files=64 max_new_kb=256 merge=1 targets=()
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "$1"; }
need() { [[ $2 =~ ^[0-9]+$ ]] || { echo "campaign: $1 needs a whole number, not '$2'" >&2; exit 2; }; }
while (($#)); do
  case $1 in
    --time) need "$1" "${2:-}"; time_limit=$2; shift 2 ;;
    --runs) need "$1" "${2:-}"; runs=$2; shift 2 ;;
    --jobs) need "$1" "${2:-}"; jobs=$2; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
    --no-build) build=0; shift ;;
    --record) record=${2:?--record needs a file}; shift 2 ;;
    --max-new-files) need "$1" "${2:-}"; max_new_files=$2; shift 2 ;;
    --max-new-kb) need "$1" "${2:-}"; max_new_kb=$2; shift 2 ;;
    --no-merge) merge=0; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "campaign: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((jobs >= 1 && time_limit >= 1 && runs >= 1)) || { echo "campaign: --jobs, --time and --runs must be >= 1" >&2; exit 2; }

if ((build)); then
  echo "=== building the fuzz targets in $build_dir" >&2
  if ! CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSQUEEZE_FUZZ=ON -DSQUEEZE_BUILD_PERF=OFF >/dev/null || ! cmake --build "$build_dir" -j "$jobs" >&2; then
    echo "campaign: the fuzz build failed" >&2
    exit 2
  fi
fi
if ((${#targets[@]} == 0)); then
  for f in "$build_dir"/tests/fuzz/*_fuzz; do [[ -x $f ]] && targets+=("$(basename "$f")"); done
fi
((${#targets[@]})) || { echo "campaign: no fuzz targets in $build_dir/tests/fuzz" >&2; exit 2; }
for t in "${targets[@]}"; do
  [[ -x $build_dir/tests/fuzz/$t ]] || { echo "campaign: no target $build_dir/tests/fuzz/$t" >&2; exit 2; }
done

out=$build_dir/campaign
rm -rf "$out" && mkdir -p "$out"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# fuzz_one <target>: fuzzes, merges, and writes "executions seconds new findings" to
# $out/<target>/result.
fuzz_one() {
  local t=$1 dir=$out/$1 corpus=tests/fuzz/corpus/${1%_fuzz}
  local bin=$build_dir/tests/fuzz/$t
  mkdir -p "$dir/found" "$dir/findings" "$corpus"
  local start end rc
  start=$(date +%s.%N)
  # New inputs go to found/; the corpus is read only.
  "$bin" -runs="$runs" -max_total_time="$time_limit" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/" "$dir/found" "$corpus" >"$dir/log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  [[ -n $execs ]] || execs=$(grep -Eo '^#[0-9]+' "$dir/log" | tail -1 | tr -d '#')
  local findings
  findings=$(find "$dir/findings" -type f | wc -l)
  ((rc != 0 && findings == 0)) && findings="exit $rc"
  local added=0
  if ((merge)) && [[ -n $(ls -A "$dir/found") ]]; then
    # Merge into a copy of the corpus, then take what merge added, smallest first, within caps.
    mkdir -p "$dir/merged" && cp -r "$corpus"/. "$dir/merged"/
    "$bin" -merge=1 -timeout=30 -rss_limit_mb=2048 "$dir/merged" "$dir/found" >"$dir/merge.log" 2>&1 ||
      echo "campaign: $t: merge failed, corpus unchanged (see $dir/merge.log)" >&2
    local bytes=0 size f
    while read -r size f; do
      [[ -e $corpus/$(basename "$f") ]] && continue
      ((added < max_new_files && bytes + size <= max_new_kb * 1024)) || continue
      cp "$f" "$corpus/" && added=$((added + 1)) bytes=$((bytes + size))
    done < <(find "$dir/merged" -type f -printf '%s %p\n' | sort -n)
  fi
  echo "${execs:-0} $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }') $added $findings" \
    >"$dir/result"
  echo "[campaign] $t: ${execs:-0} executions, $added new corpus files, findings: $findings" >&2
}

echo "=== ${#targets[@]} targets, up to $runs executions or ${time_limit}s each, $jobs at a time" >&2
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then wait -n; running=$((running - 1)); fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

status=0
table=$(
  echo "| Target | Executions | Seconds | Exec/s | New corpus files | Findings |"
  echo "|---|---:|---:|---:|---:|---|"
  for t in "${targets[@]}"; do
    read -r execs secs added findings <"$out/$t/result"
    rate=$((secs > 0 ? execs / secs : execs))
    names=$(find "$out/$t/findings" -type f -printf '%f\n' | sed 's/-\(.\{8\}\).*/-\1…/' | paste -sd' ')
    echo "| ${t%_fuzz} | $execs | $secs | $rate | $added | $findings${names:+ ($names)} |"
  done
)
for t in "${targets[@]}"; do
  read -r _ _ _ findings <"$out/$t/result"
  [[ $findings == 0 ]] || status=1
done
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain -- . ':!tests/fuzz/corpus' 2>/dev/null | grep -q . && echo " (with uncommitted changes)")
section=$(
  echo "Campaign of $(date -u '+%Y-%m-%d %H:%M UTC') at commit $commit$dirty: each target up to"
  echo "$runs executions or $time_limit s, $jobs at a time, on $(nproc) cores of"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "at the end). Command: \`$command_line\`."
  echo
  echo "$table"
)
echo "$section"
if [[ $record != - ]]; then
  if [[ -f $record ]] && grep -q '<!-- campaign:begin' "$record" && grep -q '<!-- campaign:end' "$record"; then
    # Replace what lies between the markers.
    echo "$section" >"$out/section.md"
    awk -v body="$out/section.md" '
      /<!-- campaign:begin/ { print; while ((getline line < body) > 0) print line; skip = 1; next }
      /<!-- campaign:end/ { skip = 0 }
      !skip { print }' "$record" >"$record.tmp" && mv "$record.tmp" "$record"
  else
    { [[ -f $record ]] && echo; echo "$section"; } >>"$record"
  fi
  echo "(recorded in $record)" >&2
fi
exit $status
