#!/usr/bin/env bash
# Checks that keep the architecture honest (issue 25). Each mode fails with the offending
# files named:
#   env        only plugin/params/params.cc reads the environment in product code, and no
#              file names a SQUEEZE_ variable in a getenv call
#   singleton  only the ABI adapters (plugin/exports/) call Net::instance()
#   format     clang-format --dry-run -Werror passes on every C++/CUDA source
# Usage: architecture_test.sh <mode> [source dir]
set -uo pipefail
mode=${1:?mode}
cd "${2:-$(dirname "$0")/..}"
product=(plugin compress transport perf)

fail() { echo "FAIL: $*"; exit 1; }

case $mode in
  env)
    bad=$(grep -rlE '\bgetenv *\(' --include='*.cc' --include='*.h' --include='*.cu' --include='*.cuh' \
            plugin compress transport | grep -v '^plugin/params/params\.cc$')
    [[ -z $bad ]] || fail "these files read the environment; read it through plugin/params instead:"$'\n'"$bad"
    named=$(grep -rlE 'getenv *\( *"SQUEEZE_' --include='*.cc' --include='*.h' "${product[@]}")
    [[ -z $named ]] || fail "getenv(\"SQUEEZE_...\") outside the parameter table:"$'\n'"$named"
    echo "ok: the environment is read in plugin/params/params.cc only"
    ;;
  singleton)
    bad=$(grep -rlE 'Net::instance\(\)' --include='*.cc' --include='*.h' "${product[@]}" tests \
            | grep -vE '^plugin/exports/|^plugin/engine/net\.(h|cc)$')
    [[ -z $bad ]] || fail "Net::instance() outside the ABI adapters (plugin/exports/):"$'\n'"$bad"
    # net.cc only defines it.
    uses=$(grep -cE 'Net::instance\(\)' plugin/engine/net.cc)
    [[ $uses -le 1 ]] || fail "plugin/engine/net.cc calls Net::instance() besides defining it"
    echo "ok: Net::instance() is called from plugin/exports/ only"
    ;;
  format)
    command -v clang-format >/dev/null || fail "clang-format is not installed (tests/install-deps.sh installs it)"
    mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh' 2>/dev/null ||
                          find "${product[@]}" tests -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh')
    out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1) || {
      echo "$out" | grep -E '^[^ ].*: (error|warning):' | sed -E 's/:[0-9]+:[0-9]+:.*//' | sort -u | head -50
      fail "clang-format would change the files above (run clang-format -i on them)"
    }
    echo "ok: ${#files[@]} files formatted"
    ;;
  *) fail "unknown mode $mode (env, singleton, format)" ;;
esac
