#!/usr/bin/python3
"""Collectives benchmark CSVs (workloads/collectives --csv) in, one PNG out.

usage: plots/collectives.py OUT.png LABEL=RESULTS.csv [LABEL=RESULTS.csv ...]
Plots each CSV's time_us (left) and busbw_GBps (right) against bytes per
rank, one line per CSV, named by its LABEL. A CSV that stops early (a job
that ended in a credit deadlock, say) is drawn as far as it goes. Run with
Debian's /usr/bin/python3, which has matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows.append((int(row["bytes"]), float(row["time_us"]), float(row["busbw_GBps"])))
    return sorted(rows)


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    out = sys.argv[1]
    series = []
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        try:
            rows = read(path)
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"{path}: not a collectives CSV ({e})")
        if not rows:
            sys.exit(f"{path}: no rows")
        series.append((label, rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for label, rows in series:
        x = [r[0] for r in rows]
        left.plot(x, [r[1] for r in rows], marker="o", markersize=3, label=label)
        right.plot(x, [r[2] for r in rows], marker="o", markersize=3, label=label)
    for ax, ylabel in ((left, "time per call (us, simulated)"), (right, "bus bandwidth (GB/s)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    left.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
