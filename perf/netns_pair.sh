#!/usr/bin/env bash
# Sourced by perf/link_emu.sh and perf/pacing_check.sh (not run): two network namespaces
# joined by a veth pair, the shaping of both ends with tc tbf, and the clean-up. Needs root,
# ip and tc (iproute2), python3.
#
#   netns_pair_create TAG ADDR_A ADDR_B  namespaces TAG-a-$$ / TAG-b-$$, veth ends TAGa$$ /
#                                        TAGb$$ (under 15 characters for a short TAG), the
#                                        addresses as /30s, every link up; sets ns_a ns_b
#                                        if_a if_b addr_a addr_b
#   netns_pair_shape GBIT [LATENCY]      tbf at GBIT Gbit/s on the egress of both ends, so both
#                                        directions are shaped; burst 1 ms at that rate (at least
#                                        64 KiB, so one TSO segment passes whole), LATENCY (20ms)
#                                        how long a packet may queue before tbf drops it; prints
#                                        the burst in bytes. GBIT "off" removes the shaping.
#   netns_pair_remove                    removes what create made, whatever got made; safe to
#                                        call twice, and from an EXIT trap
# The callers own their traps: call netns_pair_remove from the EXIT trap.

ns_a=; ns_b=; if_a=; if_b=; addr_a=; addr_b=

netns_pair_create() {
  local tag=$1
  addr_a=$2; addr_b=$3
  ns_a=$tag-a-$$; ns_b=$tag-b-$$; if_a=${tag}a$$; if_b=${tag}b$$
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip link add "$if_a" type veth peer name "$if_b"
  ip link set "$if_a" netns "$ns_a"
  ip link set "$if_b" netns "$ns_b"
  ip -n "$ns_a" addr add "$addr_a/30" dev "$if_a"
  ip -n "$ns_b" addr add "$addr_b/30" dev "$if_b"
  local ns
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set "$if_a" up
  ip -n "$ns_b" link set "$if_b" up
}

netns_pair_shape() {
  local gbit=$1 latency=${2:-20ms} burst=0 side
  [[ $gbit == off ]] || burst=$(python3 -c "print(max(65536, int($gbit * 1e9 / 8 * 1e-3)))")
  for side in "$ns_a $if_a" "$ns_b $if_b"; do
    set -- $side
    if [[ $gbit == off ]]; then
      tc -n "$1" qdisc del dev "$2" root 2>/dev/null || true
    else
      tc -n "$1" qdisc replace dev "$2" root tbf rate "${gbit}gbit" burst "$burst" latency "$latency"
    fi
  done
  [[ $gbit == off ]] || echo "$burst"
}

netns_pair_remove() {
  # Deleting a namespace deletes its veth end, and with it the pair.
  [[ -z $ns_a ]] || ip netns del "$ns_a" 2>/dev/null || true
  [[ -z $ns_b ]] || ip netns del "$ns_b" 2>/dev/null || true
  [[ -z $if_a ]] || ip link del "$if_a" 2>/dev/null || true  # in case it never moved
  return 0
}
