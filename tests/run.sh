#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every suite (CTest),
# then an ASan+UBSan build of the suites and each libFuzzer target for a bounded time.
#   SQUEEZE_TEST_SANITIZE=0   skip the sanitizer build
#   SQUEEZE_FUZZ_SECONDS=N    seconds per fuzz target (default 30; 0 skips fuzzing)
set -uo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh || { echo "install-deps failed"; exit 1; }
JOBS=$(nproc)
passed=0; failed=0; status=0

# run_ctest <build dir> <label>: runs ctest and adds its counts to the totals.
run_ctest() {
  local dir=$1 label=$2 log
  log=$(mktemp)
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" --timeout 900 2>&1 | tee "$log"
  local line; line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -1)
  if [[ -z $line ]]; then echo "[$label] ctest gave no summary"; status=1; rm -f "$log"; return; fi
  local total nfail
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  nfail=$(sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/' <<<"$line")
  passed=$((passed + total - nfail)); failed=$((failed + nfail))
  ((nfail)) && status=1
  rm -f "$log"
}

# build/ is shared with the README's other commands: reuse it as it was made (the README's
# Release build uses cmake's default generator), or make it with Ninja in RelWithDebInfo.
if [[ -f build/CMakeCache.txt ]]; then
  echo "=== build (reusing build/: $(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' build/CMakeCache.txt))"
  cmake -S . -B build >/dev/null
else
  echo "=== build (RelWithDebInfo)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build -j "$JOBS" >/dev/null || { cmake --build build -j 1 2>&1 | tail -40; echo "build failed"; exit 1; }
echo "=== tests"
run_ctest build main

if [[ ${SQUEEZE_TEST_SANITIZE:-1} != 0 ]]; then
  echo "=== ASan+UBSan build"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSQUEEZE_SANITIZE=ON -DSQUEEZE_BUILD_PERF=OFF >/dev/null \
    && cmake --build build-asan -j "$JOBS" || { echo "sanitizer build failed"; exit 1; }
  echo "=== tests under ASan+UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp SQUEEZE_UNDER_SANITIZER=1 run_ctest build-asan asan
fi

FUZZ_SECONDS=${SQUEEZE_FUZZ_SECONDS:-30}
if [[ $FUZZ_SECONDS != 0 ]]; then
  echo "=== libFuzzer targets (${FUZZ_SECONDS}s each, ASan+UBSan)"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSQUEEZE_FUZZ=ON \
    -DSQUEEZE_BUILD_PERF=OFF >/dev/null && cmake --build build-fuzz -j "$JOBS" || { echo "fuzz build failed"; exit 1; }
  for f in build-fuzz/tests/fuzz/*_fuzz; do
    [[ -x $f ]] || continue
    name=$(basename "$f"); corpus=tests/fuzz/corpus/${name%_fuzz}
    work=$(mktemp -d); [[ -d $corpus ]] && cp -r "$corpus"/. "$work"/
    if "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 -print_final_stats=0 "$work" >"$work.log" 2>&1; then
      echo "[fuzz] $name: ok ($(grep -Eo '#[0-9]+' "$work.log" | tail -1 | tr -d '#') runs)"; passed=$((passed + 1))
    else
      echo "[fuzz] $name: FAILED"; tail -40 "$work.log"; failed=$((failed + 1)); status=1
    fi
    rm -rf "$work" "$work.log"
  done
fi

echo
echo "${passed} passed, ${failed} failed"
exit $status
