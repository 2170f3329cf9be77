#!/usr/bin/python3
"""The validation suite's results in, a PNG per figure and the results page out.

usage: plots/validation.py OUT_DIR [TABLE] [PAGE]
OUT_DIR is validate's --out (results.csv and every run's CSV); TABLE the
figures table it ran (default workloads/validation/figures.txt beside this
script's folder). Writes OUT_DIR/<id>.png (the model's curve over the sizes
the runs swept, the published figure as a point, or for a crossover both
curves and both crossover sizes). Point cases that share their run and
metric with another case (one sweep, several published sizes: the public
programs' rows) are drawn together instead, one OUT_DIR/<workload>.png per workload
program: the curve of each of its runs, every case's published point, and
the hardware's other measured sizes from
workloads/validation/public_hardware.csv. Also writes the results page PAGE (default
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


def sources_of(table):
    """id -> source, from the table."""
    out = {}
    with open(table) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                f_ = [x.strip() for x in line.split("|")]
                out[f_[0]] = f_[6]
    return out


def sweep(path, select, metric, keep_bytes=False):
    """(bytes, metric) of the rows matching select (bytes itself not required
    unless keep_bytes)."""
    want = {}
    for pair in select.split(","):
        if "=" in pair:
            k, v = pair.split("=", 1)
            if keep_bytes or k.strip() != "bytes":
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
        label = workload(run) + (f" ({select})" if select != "-" else "")
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


def program_words(run):
    """What follows p2run's own options in a run string, from the workload on
    ("--params F -n 2 -- public/pub_pingpong -b 8" -> [public/pub_pingpong, -b, 8])."""
    words = run.split()
    return words[words.index("--") + 1:]


def workload(run):
    """The workload of a run string ("-n 2 -- public/pub_pingpong -b 8" -> public/pub_pingpong)."""
    return program_words(run)[0]


def shared_sweeps(table_cases, results):
    """workload -> [(run, [case ids])] for the point cases whose run and
    metric another case shares (one sweep, several sizes), in table order;
    these are drawn one figure per workload. Cases that share a run but each
    read another column of it keep a figure each."""
    by_run = {}
    for cid, (_, _, _, crossover, runs) in table_cases.items():
        if not crossover:
            by_run.setdefault((" ".join(runs[0][2].split()), runs[0][1]), []).append(cid)
    done = {r["id"] for r in results}
    groups = {}
    for (run, _), ids in by_run.items():
        ran = [i for i in ids if i in done]
        if len(ids) > 1 and ran:
            groups.setdefault(workload(run), []).append((run, ran))
    return groups


def hardware_points(path):
    """(workload name, variant) -> [(bytes, us)] of public_hardware.csv."""
    out = {}
    if os.path.exists(path):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                out.setdefault((row["workload"], row["variant"]), []).append(
                    (int(row["bytes"]), float(row["hardware_us"])))
    return out


def program_name(source):
    """The public program a source names ("owner/repo, prog.c (note), hardware output")."""
    parts = [p.strip() for p in source.split(",")]
    return parts[1] if len(parts) > 2 else source


def plot_sweeps(out_dir, name, sweeps, table_cases, sources, verdicts, hardware):
    """One figure for a workload's shared sweeps: each run's curve, its cases'
    published points at the sizes they select, the hardware's other sizes;
    one colour per variant (--variant), so a sweep split in two runs is one
    colour."""
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    variants, labelled, titles = [], set(), []
    passed = total = 0
    metric = unit = ""
    for run, ids in sweeps:
        _, _, unit, _, runs = table_cases[ids[0]]
        metric = runs[0][1]
        args = program_words(run)[1:]
        variant = args[args.index("--variant") + 1] if "--variant" in args else ""
        if variant not in variants:
            variants.append(variant)
        colour = colours[variants.index(variant) % len(colours)]
        prog = program_name(sources[ids[0]])
        if prog not in titles:
            titles.append(prog)
        pts = sweep(os.path.join(out_dir, f"{ids[0]}.1.csv"), "-", metric)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    color=colour, label=f"model: {' '.join(args) or 'defaults'}")
        published = []
        for cid in ids:
            select, c_metric, _ = table_cases[cid][4][0]
            row = sweep(os.path.join(out_dir, f"{cid}.1.csv"), select, c_metric, True)
            if len(row) == 1:
                published.append((row[0][0], table_cases[cid][1]))
            total += 1
            passed += verdicts.get(cid) == "PASS"
        key = (os.path.basename(name), variant)
        if published:
            ax.plot([p[0] for p in published], [p[1] for p in published], "*", color=colour,
                    markersize=11, markeredgecolor="k", markeredgewidth=0.5,
                    label=None if key in labelled else f"HA-PACS/TCA: {prog} (validated sizes)")
            labelled.add(key)
    # The hardware's curve, once per variant: a dashed line through every
    # size its output gives, an x where no case validates the size.
    for variant in variants:
        key = (os.path.basename(name), variant)
        shown = {b for _, ids in sweeps for cid in ids
                 for b, _ in sweep(os.path.join(out_dir, f"{cid}.1.csv"),
                                   table_cases[cid][4][0][0], table_cases[cid][4][0][1], True)}
        measured = sorted(hardware.get(key, []))
        colour = colours[variants.index(variant) % len(colours)]
        if measured:
            ax.plot([p[0] for p in measured], [p[1] for p in measured], "--", color=colour,
                    linewidth=1, alpha=0.7)
        rest = [p for p in measured if p[0] not in shown]
        if rest:
            ax.plot([p[0] for p in rest], [p[1] for p in rest], "x", color=colour,
                    label="HA-PACS/TCA: other measured sizes" + (f" ({variant})" if variant else ""))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per rank" if "allgather" in name else
                  "face bytes (N x N doubles)" if "block_stride" in name else "message size (bytes)")
    ax.set_ylabel(f"{metric} ({unit})")
    ax.set_title(f"mnakao/PEACH2-Benchmarks {' / '.join(titles)}\n"
                 f"model against HA-PACS/TCA: {passed} of {total} sizes within tolerance",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, f"{os.path.basename(name)}.png"), dpi=100)
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
    groups = shared_sweeps(table_cases, results)
    grouped = {cid for sweeps in groups.values() for _, ids in sweeps for cid in ids}
    for r in results:
        if r["id"] in table_cases and r["id"] not in grouped:
            plot(out_dir, r["id"], table_cases[r["id"]], r)
    hardware = hardware_points(os.path.join(os.path.dirname(table), "public_hardware.csv"))
    verdicts = {r["id"]: r["verdict"] for r in results}
    sources = sources_of(table)
    for name, sweeps in groups.items():
        plot_sweeps(out_dir, name, sweeps, table_cases, sources, verdicts, hardware)
    passed = sum(r["verdict"] == "PASS" for r in results)
    with open(page, "w") as f:
        f.write(tables.page(results, tables.RESULTS))
    print(f"validation.py: {len(results)} cases, {passed} pass; PNGs in {out_dir}, page {page}")


if __name__ == "__main__":
    main()
