"""Shared by the unmodified PyTorch scripts in perf/torch: the skip convention, the
process-group set-up from the launcher's environment, and seeded data generators.

Nothing here knows about Squeeze: the scripts are ordinary torch.distributed programs, and
launch.sh alone sets the environment (NCCL_NET_PLUGIN, NCCL_NET, NCCL_HOSTID, ...) that
routes their NCCL traffic through the plugin.
"""
import json
import os
import sys
import time

SKIP = 77  # exit code that CTest and launch.sh read as "skipped"


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def import_torch(backend):
    """Returns (torch, torch.distributed) or exits 77 with the reason."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:  # torch absent or broken
        skip(f"torch not importable ({e})")
    if not dist.is_available():
        skip("this torch was built without torch.distributed")
    if backend == "nccl":
        if not torch.cuda.is_available():
            skip("no CUDA device (torch.cuda.is_available() is False)")
        if not dist.is_nccl_available():
            skip("this torch has no NCCL backend")
    return torch, dist


def init(torch, dist, backend):
    """init_process_group from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (env://); the
    device is cuda:LOCAL_RANK for nccl (launch.sh sets CUDA_VISIBLE_DEVICES and LOCAL_RANK=0,
    since every rank is a host of its own), the CPU for gloo. Returns (rank, world, device)."""
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing:
        print(f"error: {', '.join(missing)} not set: start this script through perf/torch/launch.sh "
              "or torchrun", file=sys.stderr)
        sys.exit(2)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
        try:  # device_id (torch >= 2.3) binds the communicator to the device and creates it now
            dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
        except TypeError:
            dist.init_process_group("nccl", rank=rank, world_size=world)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=world)
    return rank, world, device


def seed_for(base, a, b):
    """A seed per (base, a, b), the same on every rank."""
    return (base * 1000003 + a * 7919 + b * 104729) % (2**62)


def gradients(torch, count, seed):
    """Data-parallel gradients: Student-t(3) noise with a per-layer scale in [1e-4, 1e-2],
    layers of 4096..65535 elements. float32."""
    g = torch.Generator().manual_seed(seed)
    out = torch.empty(count, dtype=torch.float64)
    i = 0
    while i < count:
        n = min(count - i, int(torch.randint(4096, 65536, (1,), generator=g)))
        scale = 10.0 ** (-4.0 + 2.0 * float(torch.rand(1, generator=g, dtype=torch.float64)))
        normal = torch.randn(n, generator=g, dtype=torch.float64)
        chi = torch.randn(n, 3, generator=g, dtype=torch.float64).pow(2).mean(1).sqrt()
        out[i:i + n] = scale * normal / chi
        i += n
    return out.to(torch.float32)


_TABLES = {}


def embeddings(torch, count, seed, dim=64, table_rows=100000):
    """DLRM all-to-all traffic: rows of `dim` looked up from one fixed table (std 0.05) with
    Zipf(1.05) popularity, so popular rows repeat bit for bit. float32, `count` elements."""
    if (dim, table_rows) not in _TABLES:
        gt = torch.Generator().manual_seed(12345)
        _TABLES[(dim, table_rows)] = (
            0.05 * torch.randn(table_rows, dim, generator=gt),
            1.0 / torch.arange(1, table_rows + 1, dtype=torch.float64).pow(1.05),
        )
    table, popularity = _TABLES[(dim, table_rows)]
    g = torch.Generator().manual_seed(seed)
    rows = (count + dim - 1) // dim
    ids = torch.multinomial(popularity, rows, replacement=True, generator=g)
    return table[ids].reshape(-1)[:count].clone()


def unit_roundoff(torch, dtype):
    return {torch.float32: 2.0**-24, torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}[dtype]


def step_stats(seconds, warmup):
    """Mean and median step time in ms over `seconds` (one wall time per step), leaving out
    the first `warmup` steps (NCCL connects and the codecs' schedules start there)."""
    timed = seconds[warmup:] if len(seconds) > warmup else seconds
    if not timed:
        return {"mean_step_ms": None, "median_step_ms": None, "timed_steps": 0}
    ordered = sorted(timed)
    mid = len(ordered) // 2
    median = ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
    return {"mean_step_ms": 1e3 * sum(timed) / len(timed), "median_step_ms": 1e3 * median,
            "timed_steps": len(timed)}


def comm_share(step_ms, compute_ms):
    """The share of a step that is exposed communication: 1 - (the same step with every
    collective replaced by a local stand-in) / (the real step). None when either is missing."""
    if not step_ms or compute_ms is None:
        return None
    return max(0.0, 1.0 - compute_ms / step_ms)


def sync(torch, device):
    """Waits for the device's queued work, so a wall clock brackets what the step did."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Timing:
    """What run_steps measured: per-step losses and wall times, the whole loop's seconds, and
    the per-step times of the compute-only steps (empty without --compute-steps)."""

    def __init__(self):
        self.losses, self.step_seconds, self.compute_seconds, self.seconds = [], [], [], 0.0


def run_steps(torch, dist, device, rank, args, train_step, print_every):
    """Times args.steps calls of train_step(step, True) (logging step,loss to args.log on rank
    0), then args.compute_steps + 1 calls of train_step(step, False) after a barrier, the first
    of which warms the stand-ins up and is left out; ends the process group."""
    t = Timing()
    log = open(args.log, "w") if args.log and rank == 0 else None
    if log:
        log.write("step,loss\n")
    t_start = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        value = train_step(step, True)
        t.step_seconds.append(time.perf_counter() - t0)
        t.losses.append(value)
        if log:
            log.write(f"{step},{value:.6f}\n")
        if rank == 0 and (step % print_every == 0 or step == args.steps - 1):
            print(f"step {step:4d} loss {value:.5f}", flush=True)
    t.seconds = time.perf_counter() - t_start
    if log:
        log.close()
    if args.compute_steps:
        dist.barrier()
        for step in range(args.steps, args.steps + args.compute_steps + 1):
            t0 = time.perf_counter()
            train_step(step, False)
            sync(torch, device)
            t.compute_seconds.append(time.perf_counter() - t0)
        t.compute_seconds = t.compute_seconds[1:]
    dist.barrier()
    dist.destroy_process_group()
    return t


def report(summary, timing, args, sent_bytes_per_step):
    """Rank 0's ending: the summary (model, world, ...) completed with the losses, step times,
    compute share and bytes sent per step, as one JSON line, then FINAL_LOSS for launch.sh."""
    tail = timing.losses[-10:]
    summary.update({"final_loss": timing.losses[-1], "mean_last10": sum(tail) / len(tail),
                    "first_loss": timing.losses[0], "steps": args.steps,
                    "backend": args.backend, "seconds": timing.seconds})
    summary.update(step_stats(timing.step_seconds, args.warmup_steps))
    c = timing.compute_seconds
    compute_ms = 1e3 * sum(c) / len(c) if c else None
    summary["compute_step_ms"] = compute_ms
    summary["comm_share"] = comm_share(summary["mean_step_ms"], compute_ms)
    summary["sent_bytes_per_step"] = sent_bytes_per_step
    if args.label:
        summary["label"] = args.label
    print(json.dumps(summary), flush=True)
    print(f"FINAL_LOSS {summary['mean_last10']:.6f}", flush=True)
