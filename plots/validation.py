#!/usr/bin/python3
"""The validation suite's results in, a PNG per figure and the results page out.

usage: plots/validation.py OUT_DIR [TABLE] [PAGE]
OUT_DIR is validate's --out (results.csv and every run's CSV); TABLE the
figures table it ran (default workloads/validation/figures.txt beside this
script's folder). Writes OUT_DIR/<id>.png (the model's curve over the sizes
the runs swept, the published figure as a point, or for a crossover both
curves and both crossover sizes) and the results page PAGE (default
OUT_DIR/results.md): plots/tables.py's page, the table of results.csv and
the measurement tables of workloads/validation/results/*.csv. Run with
Debian's /usr/bin/python3, which has matplotlib.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tables  # noqa: E402  (beside this script)


def cases(table):
    """id -> (figure, published, unit, crossover, [(select, metric)])"""
    out = {}
    with open(table) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            f_ = [x.strip() for x in line.split("|")]
            runs = [x.strip() for x in f_[7].split(";;")]
            sels = [x.strip() for x in f_[8].split(";;")]
            mets = [x.strip() for x in f_[9].split(";;")]
            if len(mets) == 1:
                mets = mets * len(runs)
            crossover = "step" in f_[5]
            out[f_[0]] = (f_[2], float(f_[3]), f_[4], crossover, list(zip(sels, mets, runs)))
    return out


def sweep(path, select, metric):
    """(bytes, metric) of the rows matching select (bytes itself not required)."""
    want = {}
    for pair in select.split(","):
        if "=" in pair:
            k, v = pair.split("=", 1)
            if k.strip() != "bytes":
                want[k.strip()] = v.strip()
    points = []
    if not os.path.exists(path):
        return points
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if all(row.get(k) == v for k, v in want.items()) and metric in row:
                points.append((int(float(row["bytes"])), float(row[metric])))
    return sorted(points)


def plot(out_dir, cid, case, result):
    figure, published, unit, crossover, runs = case
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, (select, metric, run) in enumerate(runs):
        pts = sweep(os.path.join(out_dir, f"{cid}.{k + 1}.csv"), select, metric)
        if not pts:
            continue
        label = run.split("--", 1)[1].split()[0] + (f" ({select})" if select != "-" else "")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                label=f"model: {label}")
        if not crossover:
            ax.plot([p[0] for p in pts if p[0] == pts[-1][0]], [published], "r*", markersize=12,
                    label=f"published {published:g} {unit}")
    if crossover:
        ax.axvline(published, color="r", linestyle="--", label=f"published crossover {published:g} B")
        try:
            model = float(result["model"])
            ax.axvline(model, color="k", linestyle=":", label=f"model crossover {model:g} B")
        except (ValueError, KeyError):
            pass
        ax.set_yscale("log")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(runs[0][1])
    ax.set_title(f"{figure}: {result.get('verdict', '?')}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, f"{cid}.png"), dpi=100)
    plt.close(fig)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    table = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "workloads",
                                                               "validation", "figures.txt")
    page = sys.argv[3] if len(sys.argv) > 3 else os.path.join(out_dir, "results.md")
    table_cases = cases(table)
    with open(os.path.join(out_dir, "results.csv"), newline="") as f:
        results = list(csv.DictReader(f))
    for r in results:
        if r["id"] in table_cases:
            plot(out_dir, r["id"], table_cases[r["id"]], r)
    passed = sum(r["verdict"] == "PASS" for r in results)
    with open(page, "w") as f:
        f.write(tables.page(results, tables.RESULTS))
    print(f"validation.py: {len(results)} cases, {passed} pass; PNGs in {out_dir}, page {page}")


if __name__ == "__main__":
    main()
