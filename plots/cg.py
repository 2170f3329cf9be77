#!/usr/bin/python3
"""CG table CSV (workloads/cg/cg_table.sh, or cg --csv) in, one PNG out.

usage: plots/cg.py OUT.png RESULTS.csv
One panel per matrix: the time per iteration (simulated) at each rank count,
TCA and MPI side by side, each bar split into computation, allgather and
allreduces (the ranks' means; the bar's top mark is the slowest rank's whole
iteration). Run with Debian's /usr/bin/python3, which has matplotlib.
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PARTS = (("compute_us", "compute", "#4c72b0"), ("allgather_us", "allgather", "#dd8452"),
         ("allreduce_us", "allreduce", "#55a868"))


def read(path):
    table = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["matrix"], int(row["ranks"]), row["transport"])
            table[key] = {k: float(row[k]) for k in ("iter_us",) + tuple(p[0] for p in PARTS)}
    return table


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, path = sys.argv[1], sys.argv[2]
    try:
        table = read(path)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"{path}: not a cg CSV ({e})")
    if not table:
        sys.exit(f"{path}: no rows")
    matrices = list(dict.fromkeys(k[0] for k in table))
    cols = min(4, len(matrices))
    rows = math.ceil(len(matrices) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax, m in zip(axes.flat, matrices):
        ranks = sorted({k[1] for k in table if k[0] == m})
        for t, (transport, hatch) in enumerate((("tca", ""), ("mpi", "//"))):
            xs = [i + (t - 0.5) * 0.38 for i in range(len(ranks))]
            bottom = [0.0] * len(ranks)
            for col, label, color in PARTS:
                h = [table.get((m, r, transport), {}).get(col, 0.0) for r in ranks]
                ax.bar(xs, h, 0.36, bottom=bottom, color=color, hatch=hatch, edgecolor="black",
                       linewidth=0.4, label=f"{label}" if t == 0 else None)
                bottom = [b + v for b, v in zip(bottom, h)]
        ax.set_xticks(range(len(ranks)))
        ax.set_xticklabels([str(r) for r in ranks])
        ax.set_title(m, fontsize=10)
        ax.set_xlabel("ranks (left TCA, right MPI //)", fontsize=8)
        ax.set_ylabel("us per iteration (simulated)", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(matrices):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
