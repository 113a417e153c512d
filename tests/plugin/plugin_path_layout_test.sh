#!/usr/bin/env bash
# A carried build folder finds its own plugin: copies of the test executable and the plugin
# are laid out as perf/gpu/pack.sh lays them out (tests/, plugin/) at a path unrelated to the
# build folder, and PluginPath.LoadsTheFileItChose must load the copy (checked with dladdr),
# not the build folder's plugin compiled into the executable. Then the same with the plugin
# beside the executable, and with SQUEEZE_TEST_PLUGIN naming a third copy.
# usage: plugin_path_layout_test.sh <squeeze_plugin_tests> <libnccl-net-squeeze.so>
set -uo pipefail
exe=$1 plugin=$2
[[ -x $exe && -f $plugin ]] || { echo "FAIL: usage: $0 <squeeze_plugin_tests> <plugin.so> (missing file)"; exit 1; }
root=$(mktemp -d /tmp/squeeze-carried.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/carry/tests" "$root/carry/plugin" "$root/other"
cp "$exe" "$root/carry/tests/"
cp "$plugin" "$root/carry/plugin/libnccl-net-squeeze.so"
test_exe=$root/carry/tests/$(basename "$exe")

# expect <plugin the run must load> [VAR=value...]: runs the one test from the carried copy.
expect() {
  local want=$1; shift
  local log
  log=$(env -u SQUEEZE_TEST_PLUGIN "$@" SQUEEZE_TEST_EXPECT_PLUGIN="$want" \
    "$test_exe" --gtest_filter=PluginPath.LoadsTheFileItChose 2>&1)
  local rc=$?
  echo "$log" | grep -E '^plugin: |Failure|Expected|Which is|chosen by' | head -8
  if ((rc != 0)) || ! grep -q '\[  PASSED  \] 1 test' <<<"$log"; then
    echo "FAIL: expected the carried copy to load $want"
    echo "$log" | tail -20
    exit 1
  fi
}

echo "== build layout: <carry>/tests/../plugin/"
expect "$root/carry/plugin/libnccl-net-squeeze.so"
echo "== the test's own folder"
mv "$root/carry/plugin/libnccl-net-squeeze.so" "$root/carry/tests/libnccl-net-squeeze.so"
expect "$root/carry/tests/libnccl-net-squeeze.so"
echo "== SQUEEZE_TEST_PLUGIN"
cp "$plugin" "$root/other/libsqueeze-copy.so"
expect "$root/other/libsqueeze-copy.so" SQUEEZE_TEST_PLUGIN="$root/other/libsqueeze-copy.so"
echo "PASS: the carried tests loaded the plugin beside them, or the one SQUEEZE_TEST_PLUGIN named"
