#!/usr/bin/env python3
"""A tiny DLRM trained with plain torch.distributed: the traffic Squeeze is for.

Model parallel embeddings: --tables EmbeddingBag tables (sum of --bag ids each) are sharded by
table across ranks; each rank pools its tables for the whole global batch and an
all_to_all_single (forward, and its mirror in backward) hands every rank the pooled
embeddings of its own samples. Data parallel MLPs: the bottom MLP (dense features) and the
top MLP (over the pairwise dot products, as in DLRM) are replicated and their gradients
all-reduced by hand (one flat buffer per step). Synthetic click data is generated in the
script from seeded generators (a hidden teacher with Zipf-popular items), identical on every
rank and in every run, so two runs differ only in what the network did to the traffic.

Rank 0 logs the global mean loss per step to --log (CSV: step,loss) and ends with a JSON
line {"final_loss", "mean_last10", "mean_step_ms", "comm_share", ...} and
"FINAL_LOSS <mean of the last 10 steps>". Step times are wall times of whole steps (each ends
with the loss all-reduce, which waits for the device), the first --warmup-steps left out.
--compute-steps K then runs K more steps with every collective replaced by a local stand-in
(the all-to-all by its input, the all-reduces skipped): their mean time is the step's
compute, and 1 - compute / step is the share of the step spent in communication
(comm_share). sent_bytes_per_step is what each rank hands the network per step, raw.
Without torch or a CUDA device (backend nccl) it prints "SKIP: <reason>" and exits 77.
Start it through launch.sh (or torchrun): it reads RANK, WORLD_SIZE, MASTER_ADDR/PORT.
"""
import argparse
import sys

import common


def make_all_to_all(torch, dist):
    class AllToAll(torch.autograd.Function):
        """Equal-split all_to_all_single whose backward sends the gradients back."""

        @staticmethod
        def forward(ctx, x):
            out = torch.empty_like(x)
            dist.all_to_all_single(out, x.contiguous())
            return out

        @staticmethod
        def backward(ctx, grad):
            out = torch.empty_like(grad)
            dist.all_to_all_single(out, grad.contiguous())
            return out

    return AllToAll


def mlp(torch, sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class Batches:
    """Step s's global batch, the same on every rank: dense features, bag ids per table, and
    click labels drawn from a hidden teacher (linear in the dense features plus a weight per
    item)."""

    def __init__(self, torch, args):
        self.torch, self.args = torch, args
        g = torch.Generator().manual_seed(common.seed_for(args.seed, 7, 7))
        self.w_dense = 0.3 * torch.randn(args.dense, generator=g)
        self.teacher = 0.25 * torch.randn(args.tables, args.rows, generator=g)
        self.popularity = 1.0 / torch.arange(1, args.rows + 1, dtype=torch.float64).pow(1.05)
        # Popular ranks land on scattered rows, as real item ids do.
        self.scatter = torch.randperm(args.rows, generator=g)

    def get(self, step):
        torch, a = self.torch, self.args
        g = torch.Generator().manual_seed(common.seed_for(a.seed, 100, step))
        dense = torch.randn(a.batch, a.dense, generator=g)
        draws = torch.multinomial(self.popularity, a.tables * a.batch * a.bag, replacement=True, generator=g)
        ids = self.scatter[draws].reshape(a.tables, a.batch, a.bag)
        logit = dense @ self.w_dense
        for t in range(a.tables):
            logit = logit + self.teacher[t][ids[t]].sum(1)
        labels = torch.bernoulli(torch.sigmoid(logit), generator=g)
        return dense, ids, labels


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"],
                    help="nccl (default); gloo only to dry-run the logic on a CPU")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=2048, help="global batch (split over ranks)")
    ap.add_argument("--tables", type=int, default=8, help="embedding tables (a multiple of the ranks)")
    ap.add_argument("--rows", type=int, default=20000, help="rows per table")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--bag", type=int, default=4, help="ids pooled per table and sample")
    ap.add_argument("--dense", type=int, default=13, help="dense features")
    ap.add_argument("--lr", type=float, default=2e-3, help="Adam learning rate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="", help="CSV file for step,loss (rank 0)")
    ap.add_argument("--label", default="", help="added to the final JSON line")
    ap.add_argument("--warmup-steps", type=int, default=5, help="steps left out of the step time")
    ap.add_argument("--compute-steps", type=int, default=0,
                    help="steps without communication afterwards, to measure the compute share")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup_steps < 0 or args.compute_steps < 0:
        ap.error("--steps must be >= 1, --warmup-steps and --compute-steps >= 0")

    torch, dist = common.import_torch(args.backend)
    rank, world, device = common.init(torch, dist, args.backend)
    if args.tables % world or args.batch % world:
        print(f"error: --tables ({args.tables}) and --batch ({args.batch}) must be multiples of the "
              f"{world} ranks", file=sys.stderr)
        return 2
    local_b, local_t, d = args.batch // world, args.tables // world, args.dim
    mine = [t for t in range(args.tables) if t % world == rank]  # rank q holds tables q, q+world, ...

    tables = torch.nn.ModuleList()
    for t in mine:
        torch.manual_seed(common.seed_for(args.seed, 3, t))
        emb = torch.nn.EmbeddingBag(args.rows, d, mode="sum")
        torch.nn.init.uniform_(emb.weight, -0.05, 0.05)
        tables.append(emb)
    torch.manual_seed(common.seed_for(args.seed, 4, 0))  # the replicated MLPs start equal everywhere
    bottom = mlp(torch, [args.dense, 128, d])
    pairs = (args.tables + 1) * args.tables // 2
    top = mlp(torch, [d + pairs, 256, 64, 1])
    tables, bottom, top = tables.to(device), bottom.to(device), top.to(device)
    dense_params = list(bottom.parameters()) + list(top.parameters())
    opt = torch.optim.Adam([{"params": dense_params}, {"params": tables.parameters()}], lr=args.lr)
    all_to_all = make_all_to_all(torch, dist)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    li, lj = torch.triu_indices(args.tables + 1, args.tables + 1, offset=1, device=device)
    batches = Batches(torch, args)
    # Every step's batch is made (and moved to the device) before the clock starts, so the
    # step time is the model's compute and communication, not the data generator's.
    data = [tuple(t.to(device) for t in batches.get(s)) for s in range(args.steps + args.compute_steps + 1)]

    def train_step(step, communicate):
        """One step; communicate=False replaces every collective by a local stand-in (same
        shapes, same compute) and returns the local loss."""
        dense, ids, labels = data[step]
        lo, hi = rank * local_b, (rank + 1) * local_b
        # Model parallel: my tables for the whole batch -> every rank's samples from every table.
        pooled = torch.stack([tables[k](ids[t].to(device)) for k, t in enumerate(mine)], dim=1)  # (B, Tl, D)
        flat_pooled = pooled.reshape(-1)
        exchanged = all_to_all.apply(flat_pooled) if communicate else flat_pooled * 1.0
        recv = exchanged.reshape(world, local_b, local_t, d)
        emb = recv.permute(1, 0, 2, 3).reshape(local_b, args.tables, d)
        # Data parallel: bottom MLP, pairwise interactions, top MLP on my samples.
        x = bottom(dense[lo:hi].to(device))
        feats = torch.cat([x.unsqueeze(1), emb], dim=1)
        inter = torch.bmm(feats, feats.transpose(1, 2))[:, li, lj]
        logit = top(torch.cat([x, inter], dim=1)).squeeze(1)
        loss = loss_fn(logit, labels[lo:hi].to(device))
        opt.zero_grad(set_to_none=False)
        loss.backward()
        # The objective is the mean over ranks of the local means: average the replicated
        # gradients, and scale the tables' (summed over every rank's samples by the backward
        # all-to-all) to match.
        flat = torch.cat([p.grad.reshape(-1) for p in dense_params])
        if communicate:
            dist.all_reduce(flat)
        flat /= world
        offset = 0
        for p in dense_params:
            n = p.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p))
            offset += n
        for p in tables.parameters():
            p.grad /= world
        opt.step()
        global_loss = loss.detach().clone()
        if not communicate:
            return float(global_loss)
        dist.all_reduce(global_loss)
        return float(global_loss) / world  # float() waits for the device: the step is done

    timing = common.run_steps(torch, dist, device, rank, args, train_step, print_every=20)
    if rank == 0:
        # Forward and backward all-to-all (the share for other ranks), the ring all-reduce of
        # the dense gradients and of the loss: bytes each rank sends per step, raw.
        a2a = 2 * args.batch * local_t * d * 4 * (world - 1) // world
        dense_bytes = 4 * sum(p.numel() for p in dense_params)
        sent = a2a + 2 * (world - 1) * (dense_bytes + 4) // world
        common.report({"model": "dlrm", "world": world}, timing, args, sent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
