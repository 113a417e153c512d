#!/usr/bin/env bash
# Installs, with apt-get, whatever the build, the tests and the benchmarks need and this
# machine lacks. Safe to run again: it does nothing when everything is present.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang clang-format libclang-rt-dev libgtest-dev libgmock-dev libbenchmark-dev
      nlohmann-json3-dev libucx-dev ucx-utils libibverbs-dev iproute2 python3 procps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
