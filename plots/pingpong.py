#!/usr/bin/python3
"""Ping-pong CSV (pingpong --csv) in, latency and bandwidth PNG out.

usage: plots/pingpong.py RESULTS.csv [OUT_PREFIX]
Writes OUT_PREFIX-latency.png and OUT_PREFIX-bandwidth.png (default prefix:
the CSV's name without .csv). Run with Debian's /usr/bin/python3, which has
matplotlib.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {"pio": "PIO CPU-CPU", "dma": "DMA CPU-CPU", "dma-gpu": "DMA GPU-GPU"}


def read(path):
    series = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            series[row["mode"]].append(
                (int(row["bytes"]), float(row["latency_us"]), float(row["bandwidth_GBps"])))
    return series


def plot(series, column, ylabel, title, out, logy):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for mode, rows in series.items():
        rows.sort()
        ax.plot([r[0] for r in rows], [r[column] for r in rows], marker="o", markersize=3,
                label=LABELS.get(mode, mode))
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) == 3 else path.removesuffix(".csv")
    try:
        series = read(path)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"{path}: not a pingpong CSV ({e})")
    if not series:
        sys.exit(f"{path}: no rows")
    plot(series, 1, "latency (us, half round trip)", "TCA ping-pong latency (simulated)",
         prefix + "-latency.png", True)
    plot(series, 2, "bandwidth (GB/s)", "TCA ping-pong bandwidth (simulated)",
         prefix + "-bandwidth.png", False)


if __name__ == "__main__":
    main()
