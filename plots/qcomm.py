#!/usr/bin/python3
"""qcomm_bench ping-pong CSVs (qcomm_bench --csv) in, one PNG out: latency and
bandwidth of the three transports (tca, mpi, mpi-rma), one line style per
CSV (a cluster or host parameter set), one colour per transport.

usage: plots/qcomm.py OUT.png LABEL=RESULTS.csv [LABEL=RESULTS.csv ...]
Run with Debian's /usr/bin/python3, which has matplotlib.
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"tca": "tab:red", "mpi": "tab:blue", "mpi-rma": "tab:green"}
STYLES = ["-", "--", ":", "-."]


def read(path):
    series = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            series[row["transport"]].append(
                (int(row["bytes"]), float(row["latency_us"]), float(row["bandwidth_GBps"])))
    return series


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    fig, (lat, bw) = plt.subplots(1, 2, figsize=(12, 4.8))
    for k, arg in enumerate(argv[2:]):
        label, path = arg.split("=", 1)
        for transport, rows in sorted(read(path).items()):
            rows.sort()
            style = dict(color=COLOURS.get(transport), linestyle=STYLES[k % len(STYLES)],
                         marker="o", markersize=2, label=f"{transport}, {label}")
            lat.plot([r[0] for r in rows], [r[1] for r in rows], **style)
            bw.plot([r[0] for r in rows], [r[2] for r in rows], **style)
    for ax, ylabel in ((lat, "latency (us, half the round trip)"), (bw, "bandwidth (GB/s)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    lat.set_yscale("log")
    bw.legend(fontsize=7)
    fig.suptitle("QUDA comm interface: GPU-to-GPU ping-pong over TCA, MPI and MPI one-sided")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
