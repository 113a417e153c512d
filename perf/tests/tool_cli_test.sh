#!/usr/bin/env bash
# The perf tools' command lines as a user meets them: sizes with K/M/G work, and a bad option,
# value, codec or data set name exits 2 with one line naming it and what is accepted.
#
#   tool_cli_test.sh <squeeze-codec-bench> <squeeze-transport-bench> <squeeze-perf> <squeeze-policy> <config dir>
#                    <squeeze-train-check>
set -uo pipefail
codec=$1 transport=$2 perf=$3 policy=$4 config=$5 train=$6
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_usage_error <text the one line must hold> <command...>
expect_usage_error() {
  local want=$1; shift
  local out err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  out=$("$@" 2>/dev/null)
  [[ $rc -eq 2 ]] || fail "$* exited $rc, expected 2"
  [[ $(wc -l <<<"$err") -eq 1 ]] || fail "$*: the error is not one line: $err"
  [[ $err == *"$want"* ]] || fail "$*: '$err' does not say '$want'"
  [[ -z $out ]] || fail "$*: printed on stdout: $out"
}

expect_usage_error "--size 'abc': expected a size in bytes" "$codec" --size abc
expect_usage_error "--codec 'bogus': expected a name or the start of one of: stored, cast:bf16" "$codec" --codec bogus
expect_usage_error "--data 'bogus': expected a name or the start of one of: embeddings" "$codec" --data bogus
expect_usage_error "unknown option '--sise'; did you mean --size?" "$codec" --sise 1M
expect_usage_error "--min 'abc': expected a size in bytes" "$transport" --min abc
expect_usage_error "--reps '0': expected an integer from 1 to 1000" "$transport" --reps 0
expect_usage_error "--sockets '65': expected an integer from 0 to 64" "$transport" --sockets 65
expect_usage_error "--sockets 'two': expected an integer from 0 to 64" "$transport" --sockets two
expect_usage_error "-n '0': expected an integer from 1 to 100000" "$perf" -n 0
expect_usage_error "-o 'xor': expected one of sum, prod, min, max or avg" "$perf" -o xor
expect_usage_error "--route 'tree': expected one of ring or collnet" "$perf" --route tree
expect_usage_error "--baseline-route needs --baseline FILE" "$perf" --baseline-route ring
expect_usage_error "the collective network does not reduce products" "$perf" --route collnet -o prod
expect_usage_error "--rank-policy 2=$config/off.json: there are only 2 ranks" "$train" -N 2 \
  --rank-policy "2=$config/off.json"
expect_usage_error "--rank-policy 'x=y': expected RANK=FILE with RANK a rank number" "$train" \
  --rank-policy x=y
expect_usage_error "--bytes '1X': expected a size in bytes" "$policy" explain "$config/dlrm-alltoall.json" \
  --collective alltoall --bytes 1X

# --size 1M runs 1 MiB.
out=$("$codec" --size 1M --iters 1 --codec stored --data gradients --json) || fail "codec-bench --size 1M failed"
grep -q '"codec":"stored".*"bytes_in":1048576' <<<"$out" || fail "codec-bench --size 1M did not run 1 MiB: $out"
[[ $(grep -c . <<<"$out") -eq 2 ]] || fail "codec-bench --json printed more than its JSON lines: $out"
# --help lists the codecs and data sets.
help=$("$codec" --help) || fail "codec-bench --help exited non-zero"
for name in quantize:rel=1e-2 threshold:keep=0.01 lossless embeddings sparse_grads "default 16M"; do
  grep -q -- "$name" <<<"$help" || fail "codec-bench --help does not list $name"
done
# squeeze-policy explain takes --bytes 1M.
out=$("$policy" explain "$config/dlrm-alltoall.json" --collective alltoall --bytes 1M --dtype float32) ||
  fail "squeeze-policy explain --bytes 1M exited non-zero"
grep -q "1 MiB" <<<"$out" || fail "squeeze-policy explain --bytes 1M: $out"

((failures == 0)) && echo PASS
exit $((failures != 0))
