#!/usr/bin/python3
"""The results page of the validation suite, rendered from CSV.

usage: plots/tables.py [RESULTS_DIR] [PAGE]
RESULTS_DIR (default workloads/validation/results beside this script's
folder) holds results.csv (written by build/workloads/validate) and one
NAME.csv per measurement table (written by workloads/validation/tables.sh
NAME). The page's text is the template workloads/validation/results.md.in:
a line `{{validation}}` becomes the table of results.csv, a line
`{{table NAME}}` the table rendered from NAME.csv. Writes PAGE (default
RESULTS_DIR/results.md). plots/validation.py writes the same page after it
drew its plots. Standard library only.
"""
import csv
import os
import sys
from decimal import ROUND_HALF_UP, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATION = os.path.normpath(os.path.join(HERE, "..", "workloads", "validation"))
RESULTS = os.path.join(VALIDATION, "results")
TEMPLATE = os.path.join(VALIDATION, "results.md.in")


def read(path):
    """The rows of a CSV as dicts; lines starting with '#' are comments."""
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def comments(path):
    """A CSV's comment lines (how it was made, when that matters), '#' taken off."""
    with open(path) as f:
        return [line[1:].strip() for line in f if line.startswith("#")]


def fix(value, places):
    """value (a CSV string) to `places` decimals, as the workloads' own tables
    print it (printf's %.*f of the double)."""
    return f"{float(value):.{places}f}"


def size(n):
    """8 B, 1 KB, 64 KB, 1 MB (binary multiples, as the workloads' -b/-e take them)."""
    n = int(float(n))
    for unit, step in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= step and n % step == 0:
            return f"{n // step} {unit}"
    return f"{n} B"


def table(header, rows, right=()):
    """Markdown table; columns whose index is in `right` are right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def pick(rows, **want):
    """The one row matching every column=value in want."""
    got = [r for r in rows if all(r[k] == str(v) for k, v in want.items())]
    if len(got) != 1:
        raise SystemExit(f"tables.py: {len(got)} rows match {want}")
    return got[0]


def error(model, published):
    """Relative error of the figure as shown, one decimal, 0.0% unsigned."""
    e = Decimal(100) * (Decimal(model) - Decimal(published)) / Decimal(published)
    e = e.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return "0.0%" if e == 0 else f"{e:+}%"


# ---- One renderer per table: rows of NAME.csv in, Markdown lines out ---------------

def pingpong(rows):
    """The calibration: the TCA ping-pong of ranks 0 and 1 against the published figures."""
    def lat(mode, n):
        return fix(pick(rows, mode=mode, bytes=n)["latency_us"], 3)

    def bw(mode, n):
        return fix(pick(rows, mode=mode, bytes=n)["bandwidth_GBps"], 3)

    out = []
    for what, pub, unit, value in (
            ("PIO, CPU to CPU, 8 B", "1.0", "us", lat("pio", 8)),
            ("DMA, CPU to CPU, 8 B", "1.9", "us", lat("dma", 8)),
            ("DMA, GPU to GPU, 8 B", "1.9", "us", lat("dma-gpu", 8))):
        out.append((what, f"{pub} {unit}", f"{value} {unit}", error(value, pub)))
    sizes = sorted({int(r["bytes"]) for r in rows if r["mode"] == "pio"})
    faster = 0
    for n in sizes:
        if float(pick(rows, mode="pio", bytes=n)["latency_us"]) >= \
                float(pick(rows, mode="dma", bytes=n)["latency_us"]):
            break
        faster = n
    after = sizes[sizes.index(faster) + 1]
    out.append(("PIO faster than DMA", "up to about 128 B",
                f"up to {size(faster)} ({lat('pio', faster)} vs {lat('dma', faster)} us); slower "
                f"at {size(after)} ({lat('pio', after)} vs {lat('dma', after)} us)", ""))
    for what, mode, pub in (("DMA bandwidth, CPU, 16 MB", "dma", "3.5"),
                            ("DMA bandwidth, GPU, 16 MB", "dma-gpu", "2.8")):
        value = bw(mode, 16 << 20)
        out.append((what, f"{pub} GB/s", f"{value} GB/s", error(value, pub)))
    return table(("what", "published", "model", "error"), out)


FMPL_PAIRS = {"sr8000-8": "`sr8000-8.topo`, ranks 0-1 (one crossbar)",
              "sr8000-2x8": "`sr8000-2x8.topo`, ranks 0-15 (x then y)",
              "sr8000-8x8": "`sr8000-8x8.topo`, ranks 0-1"}


def fmpl_pingpong(rows):
    out = []
    for topo in dict.fromkeys(r["topology"] for r in rows):
        out.append((FMPL_PAIRS.get(topo, topo),
                    fix(pick(rows, topology=topo, bytes=8)["latency_us"], 3) + " us",
                    fix(pick(rows, topology=topo, bytes=16 << 20)["bandwidth_MBps"], 1) + " MB/s"))
    return table(("topology, pair", "8 B latency", "16 MB throughput"), out)


COLLECTIVES = ("barrier", "bcast", "scatter", "gather", "reduce", "allgather", "allreduce")


def collectives_2x8(rows):
    sizes = (8, 1024, 65536, 1048576)
    out = []
    for c in COLLECTIVES:
        for n in sorted({int(r["ranks"]) for r in rows if r["collective"] == c}):
            if c == "barrier":
                r = pick(rows, collective=c, ranks=n)
                out.append((c, n, fix(r["time_us"], 2), "", "", ""))
                continue
            cells = []
            for b in sizes:
                r = pick(rows, collective=c, ranks=n, bytes=b)
                cells.append(f"{fix(r['time_us'], 2)} {r['algorithm']}")
            out.append((c, n, *cells))
    wrong = sum(int(r["wrong"]) for r in rows)
    return table(("collective", "ranks") + tuple(size(b) for b in sizes), out,
                 right=range(1, 6)) + ["", f"Wrong elements over every row: {wrong}."]


def tca_vs_mpi_16(rows):
    out = []
    for c in dict.fromkeys(r["collective"] for r in rows):
        for b in (8, 1024, 8192, 65536, 262144, 1048576):
            t = pick(rows, transport="tca", collective=c, bytes=b)
            m = pick(rows, transport="mpi", collective=c, bytes=b)
            faster = "TCA" if float(t["avg_us"]) < float(m["avg_us"]) else "MPI/IB"
            out.append((c, size(b), fix(t["avg_us"], 2), fix(t["max_us"], 2),
                        fix(m["avg_us"], 2), faster))
    return table(("collective", "bytes per rank", "TCA (us, ranks' mean)",
                  "TCA (us, slowest rank)", "MPI/IB (us, ranks' mean)", "faster"), out,
                 right=range(1, 5))


def recdoubling_16(rows):
    out = []
    for b in sorted({int(r["bytes"]) for r in rows}):
        ident = pick(rows, mapping="identity", bytes=b)
        gray = pick(rows, mapping="gray", bytes=b)
        out.append((size(b), fix(ident["time_us"], 2), fix(gray["time_us"], 2)))
    return table(("bytes per rank", "identity mapping (us)",
                  "`hapacs-2x8-recdoubling.map` (us)"), out, right=range(3))


def cuda_copy(rows):
    out = [(r["bytes"], fix(r["peach2_dma_us"], 3), fix(r["cudamemcpy_d2d_reg_us"], 3))
           for r in rows]
    return table(("bytes", "PEACH2 DMA (us)", "cudaMemcpy D2D registered (us)"), out,
                 right=range(3))


SPEED_CASES = {"a-pingpong": "(a) 10,000 x 8 B DMA ping-pong",
               "b-stream": "(b) 16 ranks x 16 MB stream",
               "c-allreduce": "(c) 16 ranks, 1,000 x 8 B allreduce",
               "d-allgather": "(d) 16 ranks, 1 MB allgather",
               "e-peach2-torus": "(e) 64 ranks x 1 MB stream, PEACH2 2x32",
               "f-sr8000": "(f) 64 ranks, 100 x 8 B FMPL allreduce, SR8000 8x8",
               "g-mpi": "(g) 16 ranks, MPI: 1,000 x 8 B allreduce, 20 x 1 MB allgather"}


def speed(rows):
    def count(v):
        return f"{int(Decimal(v).quantize(Decimal(1), rounding=ROUND_HALF_UP)):,}"

    out = []
    for r in rows:
        hops = int(r["tlp_hops"])
        per_s = int(Decimal(r["hops_per_wall_s"]).scaleb(-3).quantize(
            Decimal(1), rounding=ROUND_HALF_UP)) * 1000
        out.append((SPEED_CASES.get(r["case"], r["case"]), fix(r["simulated_ms"], 3) + " ms",
                    fix(r["wall_s"], 2) + " s", fix(r["cpu_s"], 2) + " s", count(r["slowdown"]),
                    count(r["tlps"]), f"{hops:,}" if hops else "-",
                    f"{per_s:,}" if hops else "-", count(r["peak_rss_MB"]) + " MB"))
    return table(("case", "simulated", "wall", "CPU", "slowdown", "TLPs", "TLP hops",
                  "hops per wall s", "peak RSS"), out)


RENDER = {f.__name__: f for f in (pingpong, fmpl_pingpong, collectives_2x8, tca_vs_mpi_16,
                                  recdoubling_16, cuda_copy, speed)}


def validation_table(results):
    """The validation suite's table (results.csv rows) and its pass count."""
    lines = ["| id | figure | published | model | unit | error | tolerance | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append("| {id} | {figure} | {published:g} | {model} | {unit} | {error} | {tolerance} "
                     "| {verdict} |".format(**{**r, "published": float(r["published"])}))
    passed = sum(r["verdict"] == "PASS" for r in results)
    return lines + ["", f"{passed} of {len(results)} cases pass."]


def page(results, csv_dir, template=TEMPLATE):
    """The results page: the template with its tables filled in."""
    out = []
    with open(template) as f:
        for line in f.read().splitlines():
            key = line.strip()
            if key == "{{validation}}":
                out += validation_table(results)
            elif key.startswith("{{table ") and key.endswith("}}"):
                name = key[len("{{table "):-2].strip()
                if name not in RENDER:
                    raise SystemExit(f"{template}: no table '{name}' (tables: {', '.join(RENDER)})")
                path = os.path.join(csv_dir, f"{name}.csv")
                if os.path.exists(path):
                    out += RENDER[name](read(path))
                    notes = comments(path)
                    if notes:
                        out += ["", f"`{name}.csv`: " + "; ".join(notes) + "."]
                else:
                    out.append(f"(no `{name}.csv`: run `workloads/validation/tables.sh {name}`)")
            else:
                out.append(line)
    return "\n".join(out) + "\n"


def main():
    results_dir = sys.argv[1] if len(sys.argv) > 1 else RESULTS
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(results_dir, "results.md")
    text = page(read(os.path.join(results_dir, "results.csv")), results_dir)
    with open(path, "w") as f:
        f.write(text)
    print(f"tables.py: page {path}")


if __name__ == "__main__":
    main()
