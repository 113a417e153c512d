#!/usr/bin/env bash
# The plugin must load and carry a collective on a machine without UCX and libibverbs. This
# hides them for real: in a private mount namespace, every libucp/libucs/libuct/libucm and
# libibverbs file is covered by an empty file, so dlopen fails as it does where they are not
# installed. Then squeeze-perf runs a small all-reduce and all-to-all through the plugin with
# SQUEEZE_TRANSPORT=auto and --check, and the plugin's INFO log must say why it fell back.
# Exit 77 (skipped) where this machine cannot make a mount namespace.
# usage: optional_libs_test.sh <plugin.so> <squeeze-perf>
set -uo pipefail
plugin=$1 perf=$2

if readelf -d "$plugin" | grep -E 'NEEDED.*(libuc[pstm]|libibverbs|librdmacm|libcuda)'; then
  echo "FAIL: the plugin links an optional library at load time (above)"
  exit 1
fi
if ! unshare --mount true 2>/dev/null; then
  echo "SKIP: cannot create a mount namespace here (unshare --mount failed; needs root)"
  exit 77
fi

inner=$(cat <<'INNER'
set -uo pipefail
mount --make-rprivate / || exit 77
empty=$(mktemp)
hidden=0
for f in /usr/lib/*/libuc[pstm].so* /usr/lib/*/libibverbs.so* /usr/lib/*/ucx/*.so* \
         /lib/*/libuc[pstm].so* /lib/*/libibverbs.so*; do
  [[ -e $f && ! -L $f ]] || continue
  mount --bind "$empty" "$f" && hidden=$((hidden + 1))
done
echo "hid $hidden library files"
out=$(SQUEEZE_TRANSPORT=auto NCCL_DEBUG=INFO SQUEEZE_PERF_VERBOSE=1 "$PERF" -N 2 -b 256K -e 1M -f 4 \
      --iters 2 --plugin "$PLUGIN" --policy "$POLICY" --check 2>&1)
rc=$?
echo "$out" | grep -E "Using transport|SKIP|check failed|error|FAIL" | sort -u | head -20
[[ $rc -eq 0 ]] || { echo "FAIL: squeeze-perf exited $rc without UCX and libibverbs"; exit 1; }
# A here-string, not echo | grep -q: grep -q stops at the first match, and under pipefail the
# echo's SIGPIPE would fail the check once the log outgrows the pipe's buffer.
grep -q "Using transport tcp (auto: verbs not available" <<<"$out" ||
  { echo "FAIL: no INFO line saying why auto chose tcp"; exit 1; }
echo "PASS"
INNER
)
PLUGIN=$plugin PERF=$perf POLICY=${SQUEEZE_SOURCE_DIR:-$(dirname "$0")/../..}/config/lossless.json \
  unshare --mount bash -c "$inner"
