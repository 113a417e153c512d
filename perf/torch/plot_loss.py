#!/usr/bin/env python3
"""Plots loss curves (CSV files of step,loss, as dlrm_tiny.py --log writes them) into one PNG.

  plot_loss.py [--title TEXT] OUT.png raw=raw.csv quantize=quantize.csv

Without matplotlib it prints "plot_loss: SKIP: ..." and exits 77 (the CSV files stay the
result); a missing or malformed CSV is an error naming the file and line (exit 2).
"""
import csv
import sys


def read_curve(path):
    steps, losses = [], []
    with open(path, newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=2):
            try:
                steps.append(int(row["step"]))
                losses.append(float(row["loss"]))
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{path}:{n}: expected 'step,loss' numbers ({e})") from None
    if not steps:
        raise ValueError(f"{path}: no rows")
    return steps, losses


def main(argv):
    title = "tiny DLRM through NCCL and the Squeeze plugin"
    if len(argv) > 2 and argv[1] == "--title":
        title, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    try:
        curves = [(a.split("=", 1)[0], read_curve(a.split("=", 1)[1])) for a in argv[2:]]
    except (OSError, ValueError) as e:
        print(f"plot_loss: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"plot_loss: SKIP: matplotlib not importable ({e}); the CSV files hold the curves", flush=True)
        return 77
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, (steps, losses) in curves:
        ax.plot(steps, losses, label=f"{name} (last {losses[-1]:.4f})", linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (mean over ranks)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"plot_loss: wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
