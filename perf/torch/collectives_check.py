#!/usr/bin/env python3
"""all_reduce and all_to_all_single with plain torch.distributed, checked against the exact
result computed on the host.

Every rank regenerates every rank's seeded input, so each knows the exact answer:
  all_reduce (sum) of heavy-tailed gradients: the exact sum in float64. With --ar-rel-bound 0
    and 2 ranks the result must equal a+b rounded to the dtype bit for bit (more ranks: within
    the summation's rounding); otherwise within bound * (sum of the inputs' value ranges).
  all_to_all_single of DLRM-like embedding rows: each block bit-identical to what its sender
    sent (--a2a-rel-bound 0), or within bound * (the block's value range).
All ranks' all_reduce outputs must be bit-identical. Rank 0 prints one JSON line per check
and a final "RESULT: PASS" or "RESULT: FAIL ..."; the exit code is 0 or 1 on every rank.
Without torch or a CUDA device (backend nccl) it prints "SKIP: <reason>" and exits 77.

Start it through launch.sh (or torchrun): it reads RANK, WORLD_SIZE, MASTER_ADDR/PORT.
"""
import argparse
import json
import math
import sys
import time

import common


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip()
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def digest(torch, t):
    """Bits of t, summarised (order-sensitive); equal digests for equal bits."""
    b = t.contiguous().view(torch.uint8).to(torch.int64)
    w = torch.arange(b.numel(), dtype=torch.int64) % 1000003 + 1
    return [int((b * w).sum()), int(b.sum()), b.numel()]


def value_range(torch, t):
    t = t.double()
    t = t[torch.isfinite(t)]
    return float(t.max() - t.min()) if t.numel() else 0.0


def check_all_reduce(torch, dist, args, rank, world, device, dtype, size):
    es = torch.empty(0, dtype=dtype).element_size()
    count = size // es
    inputs = [common.gradients(torch, count, common.seed_for(args.seed, 1, q)).to(dtype) for q in range(world)]
    x = inputs[rank].to(device)
    y = torch.empty_like(x)
    for _ in range(args.warmup):
        y.copy_(x)
        dist.all_reduce(y)
    sync(torch, device)
    t0 = time.perf_counter()
    for _ in range(args.iters):
        y.copy_(x)
        dist.all_reduce(y)
    sync(torch, device)
    elapsed_us = (time.perf_counter() - t0) * 1e6 / args.iters
    got = y.cpu()
    exact = sum(t.double() for t in inputs)
    abs_sum = sum(t.double().abs() for t in inputs)
    u = common.unit_roundoff(torch, dtype)
    err = (got.double() - exact).abs()
    finite = torch.isfinite(got)
    if args.ar_rel_bound == 0 and world == 2:
        # NCCL adds two values exactly once: the correctly rounded a+b.
        ref = (inputs[0].double() + inputs[1].double()).to(dtype)
        int_type = torch.int32 if es == 4 else torch.int16
        wrong = int((got.view(int_type) != ref.view(int_type)).sum())
        bound = "exact"
    else:
        tol = (world + 1) * u * abs_sum
        if args.ar_rel_bound > 0:
            tol = tol + args.ar_rel_bound * sum(value_range(torch, t) for t in inputs)
        wrong = int(((err > tol) | ~finite).sum())
        bound = "exact (summation rounding)" if args.ar_rel_bound == 0 else f"rel {args.ar_rel_bound:g}"
    max_err = float(err.max()) if bool(finite.all()) else math.nan
    return {"check": "all_reduce", "size": count * es, "count": count, "time_us": elapsed_us, "max_abs_err": max_err,
            "wrong": wrong, "bound": bound, "digest": digest(torch, got)}


def check_all_to_all(torch, dist, args, rank, world, device, dtype, size):
    es = torch.empty(0, dtype=dtype).element_size()
    per_peer = size // es // world
    blocks = [common.embeddings(torch, per_peer, common.seed_for(args.seed, 2 + rank, q)) for q in range(world)]
    x = torch.cat(blocks).to(dtype).to(device)
    y = torch.empty_like(x)
    for _ in range(args.warmup):
        dist.all_to_all_single(y, x)
    sync(torch, device)
    t0 = time.perf_counter()
    for _ in range(args.iters):
        dist.all_to_all_single(y, x)
    sync(torch, device)
    elapsed_us = (time.perf_counter() - t0) * 1e6 / args.iters
    got = y.cpu()
    u = common.unit_roundoff(torch, dtype)
    int_type = torch.int32 if es == 4 else torch.int16
    wrong, max_err = 0, 0.0
    for q in range(world):
        want = common.embeddings(torch, per_peer, common.seed_for(args.seed, 2 + q, rank)).to(dtype)
        g = got[q * per_peer:(q + 1) * per_peer]
        err = (g.double() - want.double()).abs()
        if not bool(torch.isfinite(g).all()):
            max_err = math.nan
        elif not math.isnan(max_err) and err.numel():
            max_err = max(max_err, float(err.max()))
        if args.a2a_rel_bound == 0:
            wrong += int((g.view(int_type) != want.view(int_type)).sum())
        else:
            tol = args.a2a_rel_bound * value_range(torch, want) + u * want.double().abs()
            wrong += int(((err > tol) | ~torch.isfinite(g)).sum())
    bound = "exact" if args.a2a_rel_bound == 0 else f"rel {args.a2a_rel_bound:g}"
    return {"check": "all_to_all", "size": per_peer * world * es, "count": per_peer * world, "time_us": elapsed_us,
            "max_abs_err": max_err, "wrong": wrong, "bound": bound}


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"],
                    help="nccl (default); gloo only to dry-run the logic on a CPU")
    ap.add_argument("--sizes", default="1M,8M", help="bytes per rank, comma list (K/M/G suffixes)")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--ar-rel-bound", type=float, default=0.0,
                    help="all_reduce: allowed error relative to the sum of the inputs' value ranges (0: exact)")
    ap.add_argument("--a2a-rel-bound", type=float, default=0.0,
                    help="all_to_all: allowed error relative to each block's value range (0: bit-exact)")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--label", default="", help="added to every JSON line")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]

    torch, dist = common.import_torch(args.backend)
    rank, world, device = common.init(torch, dist, args.backend)
    dtype = getattr(torch, args.dtype)
    failures = []
    for size in sizes:
        for fn in (check_all_reduce, check_all_to_all):
            mine = fn(torch, dist, args, rank, world, device, dtype, size)
            everyone = [None] * world
            dist.all_gather_object(everyone, mine)
            row = dict(mine)
            row.pop("digest", None)
            row.update({"dtype": args.dtype, "world": world, "backend": args.backend,
                        "wrong": sum(r["wrong"] for r in everyone),
                        "max_abs_err": max((r["max_abs_err"] for r in everyone),
                                           key=lambda v: math.inf if math.isnan(v) else v),
                        "time_us": max(r["time_us"] for r in everyone)})
            if "digest" in mine:
                row["ranks_agree"] = all(r["digest"] == everyone[0]["digest"] for r in everyone)
            row["ok"] = row["wrong"] == 0 and row.get("ranks_agree", True)
            if args.label:
                row["label"] = args.label
            if not row["ok"]:
                failures.append(f"{row['check']} {row['size']} B: {row['wrong']} wrong"
                                + ("" if row.get("ranks_agree", True) else ", ranks differ"))
            if rank == 0:
                print(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}),
                      flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print("RESULT: PASS" if not failures else "RESULT: FAIL " + "; ".join(failures), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
