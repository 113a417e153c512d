#!/usr/bin/env python3
"""An ordinary multi-process JAX program: psum and all_to_all across processes, checked
against the exact results computed on the host.

Nothing here knows about Squeeze: perf/jax/launch.sh only sets the environment (where the
coordinator is, this process's id, and NCCL's NCCL_NET_PLUGIN / NCCL_NET=Squeeze) that sends
XLA's NCCL traffic through the plugin.

Each device g (its index on the collective axis) makes its own inputs from g alone, so every
process knows every device's data and the exact answers:
  psum: x_g[k] = ((7 k + 13 g) mod 2001) - 1000, float32 whole numbers, so the sum over any
        number of devices, in any order, is exact: every element must equal the host's sum;
  all_to_all: device g's row j (the part it sends to device j) is
        (((131 g + 17 j + 3 k) mod 4093) - 2046) / 128, float32 (exact), and device g must
        receive row g of every device j, bit for bit.
--api pmap uses jax.pmap (one device per process); --api shard_map uses shard_map over a
mesh of all devices; auto tries pmap, then shard_map where this JAX has no pmap.
Prints one JSON line per check and "RESULT: PASS" (exit 0) or "RESULT: FAIL ..." (exit 1);
"SKIP: <reason>" and exit 77 without jax, or without a GPU when --platform gpu (default).
Reads the coordinator address, the number of processes and this process's id from
--coordinator / --num-processes / --process-id, else JAX_COORDINATOR_ADDRESS,
JAX_NUM_PROCESSES and JAX_PROCESS_ID.
"""
import argparse
import json
import os
import sys
import time

SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def psum_input(np, g, n):
    k = np.arange(n, dtype=np.int64)
    return (((7 * k + 13 * g) % 2001) - 1000).astype(np.float32)


def a2a_rows(np, g, devices, n):
    j = np.arange(devices, dtype=np.int64)[:, None]
    k = np.arange(n, dtype=np.int64)[None, :]
    return ((((131 * g + 17 * j + 3 * k) % 4093) - 2046) / 128.0).astype(np.float32)


def device_body(jax, jnp, devices, n, axis):
    """The per-device computation: the same arithmetic as the host's psum_input/a2a_rows."""

    def body(dummy):
        g = jax.lax.axis_index(axis)
        k = jnp.arange(n, dtype=jnp.int32)
        x = (((7 * k + 13 * g) % 2001) - 1000).astype(jnp.float32)
        j = jnp.arange(devices, dtype=jnp.int32)[:, None]
        rows = ((((131 * g + 17 * j + 3 * k[None, :]) % 4093) - 2046).astype(jnp.float32) / 128.0)
        s = jax.lax.psum(x, axis)
        z = jax.lax.all_to_all(rows, axis, split_axis=0, concat_axis=0, tiled=True)
        return (g + 0 * dummy[0]).reshape(1), s.reshape(1, n), z.reshape(1, devices, n)

    return body


def run_pmap(jax, jnp, np, devices, n):
    body = device_body(jax, jnp, devices, n, "i")

    def per_device(dummy):
        g, s, z = body(dummy)
        return g[0], s[0], z[0]

    f = jax.pmap(per_device, axis_name="i")
    dummy = np.zeros((jax.local_device_count(), 1), np.int32)
    return lambda: f(dummy)


def run_shard_map(jax, jnp, np, devices, n):
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    try:
        shard_map = jax.shard_map
    except AttributeError:
        from jax.experimental.shard_map import shard_map
    mesh = Mesh(np.array(jax.devices()), ("i",))
    body = device_body(jax, jnp, devices, n, "i")
    f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=(P("i"), P("i"), P("i"))))
    dummy = jax.make_array_from_callback((devices, 1), NamedSharding(mesh, P("i")),
                                         lambda idx: np.zeros((1, 1), np.int32))
    return lambda: f(dummy)


def by_device(out):
    """{device: its row} of the rows of a per-device result this process holds."""
    return {shard.device: shard.data.reshape(shard.data.shape[1:] if shard.data.ndim > 1 and
                                             shard.data.shape[0] == 1 else shard.data.shape)
            for shard in out.addressable_shards}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coordinator", default=os.environ.get("JAX_COORDINATOR_ADDRESS", ""))
    ap.add_argument("--num-processes", type=int, default=int(os.environ.get("JAX_NUM_PROCESSES", "0") or 0))
    ap.add_argument("--process-id", type=int, default=int(os.environ.get("JAX_PROCESS_ID", "-1") or -1))
    ap.add_argument("--elements", type=int, default=1 << 21,
                    help="float32 elements of each device's psum array, and of each all_to_all row")
    ap.add_argument("--iters", type=int, default=3, help="times each check runs (the first compiles)")
    ap.add_argument("--api", default="auto", choices=["auto", "pmap", "shard_map"])
    ap.add_argument("--platform", default="gpu", choices=["gpu", "cpu"],
                    help="gpu (default); cpu only to dry-run the logic (gloo collectives)")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    if not args.coordinator or args.num_processes < 1 or not 0 <= args.process_id < args.num_processes:
        ap.error("give the coordinator (host:port), the number of processes and this process's id "
                 "(flags or JAX_COORDINATOR_ADDRESS / JAX_NUM_PROCESSES / JAX_PROCESS_ID)")
    if args.elements < 1 or args.iters < 1:
        ap.error("--elements and --iters must be >= 1")

    try:
        import numpy as np
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        skip(f"jax not importable ({e})")
    if args.platform == "cpu":
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=args.num_processes,
                               process_id=args.process_id)
    platform = jax.devices()[0].platform
    if args.platform == "gpu" and platform != "gpu":
        skip(f"no GPU for JAX (its devices are {platform}; jax {jax.__version__})")
    devices, pid = jax.device_count(), jax.process_index()
    api = args.api
    if api == "auto":
        api = "pmap" if hasattr(jax, "pmap") else "shard_map"
    size = args.elements
    run = (run_pmap if api == "pmap" else run_shard_map)(jax, jnp, np, devices, size)

    expected_sum = sum(psum_input(np, g, size) for g in range(devices))
    failures, times = [], []
    for it in range(args.iters):
        t0 = time.perf_counter()
        g_out, s_out, z_out = run()
        jax.block_until_ready((g_out, s_out, z_out))
        times.append(time.perf_counter() - t0)
        sums, received = by_device(s_out), by_device(z_out)
        for dev, g in by_device(g_out).items():
            g = int(np.asarray(g).reshape(-1)[0])
            s = np.asarray(sums[dev]).reshape(-1)
            bad = int(np.count_nonzero(s != expected_sum))
            if bad:
                failures.append(f"psum iteration {it}: device {g}: {bad} of {size} elements differ from the exact sum")
            z = np.asarray(received[dev]).reshape(devices, size)
            want = np.stack([a2a_rows(np, j, devices, size)[g] for j in range(devices)])
            bad = int(np.count_nonzero(z.view(np.uint32) != want.view(np.uint32)))
            if bad:
                failures.append(f"all_to_all iteration {it}: device {g}: {bad} of {z.size} elements differ")
    steady = times[1:] or times
    secs = sum(steady) / len(steady)
    # Bytes each device sends per iteration: a ring psum sends 2 (d-1)/d of its array, the
    # all_to_all (d-1) of its d rows.
    sent = int(4 * size * (2 * (devices - 1) / devices + (devices - 1)))
    result = {"check": "jax", "api": api, "platform": platform, "process": pid, "processes": args.num_processes,
              "devices": devices, "elements": size, "iters": args.iters, "seconds_per_iter": secs,
              "sent_bytes_per_iter": sent, "jax": jax.__version__, "ok": not failures}
    if args.label:
        result["label"] = args.label
    print(json.dumps(result), flush=True)
    for f in failures[:10]:
        print(f"mismatch: {f}", flush=True)
    jax.distributed.shutdown()
    if failures:
        print(f"RESULT: FAIL ({len(failures)} checks failed)", flush=True)
        return 1
    print(f"RESULT: PASS (psum and all_to_all exact on {devices} devices in {args.num_processes} processes, "
          f"{api}, {args.iters} iterations)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
