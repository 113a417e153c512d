#!/usr/bin/env python3
"""A small data-parallel model trained with plain DistributedDataParallel: every step
all-reduces every gradient (DDP's float32 buckets), the traffic config/dp-allreduce.json is for.

An MLP (--features inputs, --depth hidden layers of --width, one output) learns a fixed
random teacher network from seeded synthetic data, identical on every rank and in every run
(each rank takes its slice of the global batch), so two runs differ only in what the network
did to the gradients. SGD with momentum.

Rank 0 logs the global mean loss per step to --log (CSV: step,loss) and ends with a JSON
line {"model": "ddp", "final_loss", "mean_last10", "mean_step_ms", "comm_share", ...} and
"FINAL_LOSS <mean of the last 10 steps>". Step times are wall times of whole steps (each ends
with the loss all-reduce, which waits for the device), the first --warmup-steps left out.
--compute-steps K then runs K more steps under DDP's no_sync() (no gradient all-reduce, no
loss all-reduce): their mean time is the step's compute, and 1 - compute / step is the share
of the step spent in exposed communication (comm_share). sent_bytes_per_step is what each
rank hands the network per step, raw (a ring all-reduce sends 2 (n-1)/n of the gradients).
Without torch or a CUDA device (backend nccl) it prints "SKIP: <reason>" and exits 77.
Start it through launch.sh (or torchrun): it reads RANK, WORLD_SIZE, MASTER_ADDR/PORT.
"""
import argparse
import sys

import common


def model(torch, features, width, depth):
    layers, n = [], features
    for _ in range(depth):
        layers += [torch.nn.Linear(n, width), torch.nn.ReLU()]
        n = width
    layers.append(torch.nn.Linear(n, 1))
    return torch.nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"],
                    help="nccl (default); gloo only to dry-run the logic on a CPU")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=1024, help="global batch (split over ranks)")
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=4, help="hidden layers")
    ap.add_argument("--lr", type=float, default=0.01, help="SGD learning rate (momentum 0.9)")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket_cap_mb")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="", help="CSV file for step,loss (rank 0)")
    ap.add_argument("--label", default="", help="added to the final JSON line")
    ap.add_argument("--warmup-steps", type=int, default=5, help="steps left out of the step time")
    ap.add_argument("--compute-steps", type=int, default=0,
                    help="steps without communication afterwards, to measure the compute share")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup_steps < 0 or args.compute_steps < 0:
        ap.error("--steps must be >= 1, --warmup-steps and --compute-steps >= 0")
    if min(args.batch, args.features, args.width, args.depth) < 1:
        ap.error("--batch, --features, --width and --depth must be >= 1")

    torch, dist = common.import_torch(args.backend)
    rank, world, device = common.init(torch, dist, args.backend)
    if args.batch % world:
        print(f"error: --batch ({args.batch}) must be a multiple of the {world} ranks", file=sys.stderr)
        return 2
    local_b = args.batch // world

    torch.manual_seed(common.seed_for(args.seed, 5, 0))  # the replicas start equal everywhere
    net = model(torch, args.features, args.width, args.depth).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(
        net, device_ids=[device.index] if device.type == "cuda" else None, bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.MSELoss()
    g = torch.Generator().manual_seed(common.seed_for(args.seed, 6, 0))
    teacher_in = torch.randn(args.features, 64, generator=g) / args.features ** 0.5
    teacher_out = torch.randn(64, generator=g) / 8.0

    def batch(step):
        gs = torch.Generator().manual_seed(common.seed_for(args.seed, 200, step))
        x = torch.randn(args.batch, args.features, generator=gs)
        y = torch.tanh(x @ teacher_in) @ teacher_out + 0.05 * torch.randn(args.batch, generator=gs)
        lo, hi = rank * local_b, (rank + 1) * local_b
        return x[lo:hi].to(device), y[lo:hi].to(device)

    # Every step's batch is made (and moved to the device) before the clock starts.
    data = [batch(s) for s in range(args.steps + args.compute_steps + 1)]

    def train_step(step, communicate):
        x, y = data[step]
        opt.zero_grad(set_to_none=False)
        if communicate:
            loss = loss_fn(ddp(x).squeeze(1), y)
            loss.backward()  # DDP all-reduces the gradient buckets here
        else:
            with ddp.no_sync():
                loss = loss_fn(ddp(x).squeeze(1), y)
                loss.backward()
        opt.step()
        value = loss.detach().clone()
        if not communicate:
            return float(value)
        dist.all_reduce(value)
        return float(value) / world  # float() waits for the device: the step is done

    timing = common.run_steps(torch, dist, device, rank, args, train_step, print_every=10)
    if rank == 0:
        params = sum(p.numel() for p in net.parameters())
        summary = {"model": "ddp", "world": world, "parameters": params}
        common.report(summary, timing, args, 2 * (world - 1) * (4 * params + 4) // world)
    return 0


if __name__ == "__main__":
    sys.exit(main())
