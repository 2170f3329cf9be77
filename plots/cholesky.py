#!/usr/bin/python3
"""Tiled Cholesky CSVs (workloads/cholesky --csv) in, one PNG out.

usage: plots/cholesky.py OUT.png RESULTS.csv [RESULTS.csv ...]
Each CSV holds one or more runs (one row each). Plots GFlop/s (left) and the
simulated time (right) against the number of ranks, one line per transport
and matrix order (and GPU tile bound, where one was set). Run with Debian's
/usr/bin/python3, which has matplotlib.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows.append(row)
    return rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    series = defaultdict(list)
    for path in sys.argv[2:]:
        try:
            rows = read(path)
            for r in rows:
                key = (r["transport"], int(r["n"]), int(r["nb"]), int(r["gpu_tiles"]))
                series[key].append((int(r["ranks"]), float(r["gflops"]),
                                    float(r["time_us"]) / 1e3))
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"{path}: not a cholesky CSV ({e})")
    if not series:
        sys.exit("no rows")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for (transport, n, nb, gpu), pts in sorted(series.items()):
        pts.sort()
        label = f"{transport.upper()} n={n} nb={nb}" + (f" gpu-tiles={gpu}" if gpu else "")
        style = "-" if transport == "tca" else "--"
        x = [p[0] for p in pts]
        left.plot(x, [p[1] for p in pts], style, marker="o", markersize=4, label=label)
        right.plot(x, [p[2] for p in pts], style, marker="o", markersize=4, label=label)
    for ax, ylabel in ((left, "GFlop/s (n^3/3 over simulated time)"),
                       (right, "time (ms, simulated)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks (nodes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    right.set_yscale("log")
    left.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
