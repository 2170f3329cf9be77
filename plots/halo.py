#!/usr/bin/python3
"""Halo programs' CSVs (workloads/halo/tables.sh) in, one PNG out.

usage: plots/halo.py OUT.png LOOP18.csv IMAGE.csv
Left: halo_loop18, right: halo_image; the exchange time per step (us,
simulated) against the process count, one line per problem size and
transport (TCA solid, MPI dashed; the image's TCA with packed columns
dotted), the compute time per step as grey lines for scale. Run with
Debian's /usr/bin/python3, which has matplotlib.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def series(rows):
    """{(n, transport, columns): [(ranks, exch_us, comp_us)]}"""
    out = {}
    for r in rows:
        key = (int(r["n"]), r["transport"], r.get("columns", "rows"))
        out.setdefault(key, []).append((int(r["ranks"]), float(r["exch_us"]),
                                        float(r["comp_us"])))
    return {k: sorted(v) for k, v in out.items()}


def draw(ax, title, rows):
    styles = {"tca": "-", "mpi": "--"}
    colours = {}
    comp_done = set()
    for (n, transport, columns), pts in sorted(series(rows).items()):
        colour = colours.setdefault(n, f"C{len(colours)}")
        style = ":" if columns == "packed" else styles.get(transport, "-.")
        label = f"N {n} {transport}" + (" packed" if columns == "packed" else "")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colour, marker="o",
                markersize=3, label=label)
        if n not in comp_done:
            comp_done.add(n)
            ax.plot([p[0] for p in pts], [p[2] for p in pts], "-", color="0.75", linewidth=1)
    ax.set_title(title + " (grey: compute per step)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("processes")
    ax.set_ylabel("exchange per step (us, simulated)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, l18, img = sys.argv[1:]
    try:
        rows = (read(l18), read(img))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"not a halo CSV ({e})")
    if not rows[0] or not rows[1]:
        sys.exit("a CSV has no rows")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    draw(left, "Livermore loop 18, rows", rows[0])
    draw(right, "image, 2-D mesh, 8 neighbours", rows[1])
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
