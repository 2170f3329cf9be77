#!/usr/bin/python3
"""p2map - where should a program's ranks go on a PEACH2 cluster (or an
SR8000's crossbars), and which routing.

  p2map search -n N [--topology FILE] [--routing POLICY|all] [--budget RUNS]
               [-o best.map] [--csv FILE] [--png FILE] [--record FILE]
               [--also MAP]... [--fixed] [--iterations K] [--seed S]
               [--keep DIR] [--timeout SECONDS] -- PROGRAM [ARGS...]
  p2map estimate [--topology FILE] [--routing POLICY] --record FILE
               [--map FILE] [--loads]

search: runs PROGRAM once under p2run (rank r on node r) and records every
message the model carries (p2sim --traffic: its time, source and destination
node and bytes), screens candidate placements (and routing policies) with an
estimator built from that record (the transfers of the topology's PEACH2
network, or of its SR8000 crossbars, whose routing is fixed: dimension
order), runs the best few and rank r on node r
under p2run with --map (--budget runs in all), and prints, for each, the
estimated and the simulated time of the whole job and its gain over rank r on
node r. The fastest simulated placement is written as a mapping file
(-o, default best.map) that p2run --map reads. --record reuses a record
instead of running the program; --budget 0 screens only; --also MAP
simulates a mapping file of one's own beside them (not counted in the
budget); --fixed keeps rank r on node r and compares routings alone (with
--routing all). Progress goes to stderr; --csv and --png write the table and a
drawing of the winner on the cables, each one's load over the run.

estimate: prices one placement (default rank r on node r) of a record, phase
by phase, and with --loads prints the bytes each cable direction carries.

The estimator (a model of the model, for ranking only): the record is cut
into phases, the messages that start together in the recorded run (within
the shortest transfer time among them: a step of an algorithm). A phase
costs the bytes of its most loaded cable direction at the link's payload
rate, or, if longer, what its busiest rank's memory and slot need at their
rates, plus the longest path's hops at one hop's latency, all from the
simulator's parameters (p2sim --routes). A placement's estimate is the
recorded job's simulated time with the phases repriced.

The search: every placement up to the node count's 50,000 arrangements (rank
0 placed on node 0 when the topology's cables form one ring or a 2-row torus,
whose rotations change nothing); beyond, simulated annealing over swaps of
two ranks' nodes (or a rank and a free node), from rank r on node r, from the
snake and every mapping file shipped for this topology, and from random
starts, with a fixed seed (the same run gives the same answer).
"""

import argparse
import csv
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy

PROGRAM = "p2map"
POLICIES = ["ring-split", "ring-first", "s-first", "balanced"]
EXHAUSTIVE_LIMIT = 50000
# Filled in by CMake for the build tree (configure_file); an installed p2map
# finds p2run and p2sim beside itself.
BUILD_P2RUN = "@P2MAP_BUILD_P2RUN@"
BUILD_P2SIM = "@P2MAP_BUILD_P2SIM@"
BUILD_TOPOLOGIES = "@P2MAP_BUILD_TOPOLOGIES@"


class UsageError(Exception):
    """Bad input: a message naming the argument, file or line; exit 2."""


def fail(message):
    raise UsageError(message)


def progress(message):
    print(PROGRAM + ": " + message, file=sys.stderr, flush=True)


# ---- Finding the tools -------------------------------------------------------------


def find_tool(name, built):
    here = os.path.dirname(os.path.realpath(__file__))
    env = os.environ.get("P2MAP_" + name.upper())
    for path in [env, os.path.join(here, name), built]:
        if path and not path.startswith("@") and os.access(path, os.X_OK):
            return path
    fail("cannot find %s (looked beside p2map and in the build tree; set P2MAP_%s)" % (name, name.upper()))


def default_topology():
    """The PEACH2 cables of p2run's default topology (hapacs-tca-2x8.topo; the
    one it picks for MPI programs adds InfiniBand, the same cables)."""
    here = os.path.dirname(os.path.realpath(__file__))
    for d in [os.environ.get("P2_TOPOLOGY_DIR"), os.path.join(here, "..", "share", "peach2sim", "topologies"),
              BUILD_TOPOLOGIES]:
        if d and not d.startswith("@") and os.path.isfile(os.path.join(d, "hapacs-tca-2x8.topo")):
            return os.path.join(d, "hapacs-tca-2x8.topo")
    fail("--topology: no default topology found (give --topology FILE or set P2_TOPOLOGY_DIR)")


# ---- Routes and the record --------------------------------------------------------


class Routes:
    """One routing policy's paths on a topology, as p2sim --routes gives them."""

    def __init__(self, data, policy):
        self.policy = policy
        self.nodes = data["nodes"]
        self.network = data["network"]  # which transfers of a record it prices
        self.shape = data.get("shape")  # the SR8000's crossbar grid
        # PEACH2: (a_node, a_port, b_node, b_port) per cable, used both ways;
        # SR8000: each link's name, used one way.
        self.cables = [tuple(c["a"] + c["b"]) if "a" in c else c["name"] for c in data["cables"]]
        self.rate = [c["Bps"] for c in data["cables"] for _ in range(2)]
        self.link_Bps = data["link_Bps"]
        self.gpu_read_Bps, self.gpu_write_Bps = data["gpu_read_Bps"], data["gpu_write_Bps"]
        self.host_read_Bps = data["host_read_Bps"]
        self.hop_us = data["hop_ns"] / 1000.0
        self.ring_or_torus = data["symmetric"]
        # path[s][d]: directed cable ids (2 * cable + 0 for a to b, 1 for b to a).
        self.path = data["paths"]
        self.directions = 2 * len(self.cables)

    def hops(self, s, d):
        path = self.path[s][d]
        return None if path is None else len(path)


def load_routes(p2sim, topology, policy):
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        run = subprocess.run([p2sim, "--routes", out.name, "--topology", topology, "--routing", policy],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            fail(run.stderr.strip() or "p2sim --routes failed (status %d)" % run.returncode)
        data = json.load(out)
    if not data["cables"]:
        fail("--topology %s: no PEACH2 cables and no SR8000 crossbar: nothing where placement matters"
             % topology)
    return Routes(data, policy)


def load_record(path, network="peach2"):
    """The transfers of `network` (time_us, src, dst, bytes, from, to)
    between different nodes, the job's simulated time, and the count of the
    other networks' transfers (InfiniBand through one switch is the same
    wherever the ranks sit: they stay in the job's time unpriced)."""
    messages, total_us, others = [], None, 0
    try:
        with open(path, newline="") as f:
            for line_no, row in enumerate(csv.reader(f), 1):
                if not row or row[0].startswith("#"):
                    if row and row[0].startswith("# simulated_us"):
                        total_us = float(row[0].split("=")[1])
                    continue
                if row[0] == "time_us":
                    continue
                try:
                    t, s, d, b, net = float(row[0]), int(row[1]), int(row[2]), int(row[3]), row[4]
                    src_mem, dst_mem = row[5], row[6]
                except (ValueError, IndexError):
                    fail("%s:%d: expected time_us,src_node,dst_node,bytes,network,from,to" % (path, line_no))
                if net != network:
                    others += 1
                elif s != d and b > 0:
                    messages.append((t, s, d, b, src_mem, dst_mem))
    except OSError as e:
        fail("--record: cannot read '%s': %s" % (path, e.strerror))
    if total_us is None:
        total_us = max((m[0] for m in messages), default=0.0)
    messages.sort()
    return messages, total_us, others


def load_map(path, nranks, nnodes):
    """A mapping file (`RANK NODE` per line) as a list node[rank]; checked."""
    node = [None] * nranks
    used = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail("--map: cannot read '%s': %s" % (path, e.strerror))
    for no, text in enumerate(lines, 1):
        words = text.split("#")[0].split()
        if not words:
            continue
        if len(words) != 2 or not all(w.isdigit() for w in words):
            fail("%s:%d: expected 'RANK NODE'" % (path, no))
        r, n = int(words[0]), int(words[1])
        if r >= nranks:
            fail("%s:%d: rank %d out of range (ranks 0..%d)" % (path, no, r, nranks - 1))
        if n >= nnodes:
            fail("%s:%d: node %d out of range (nodes 0..%d)" % (path, no, n, nnodes - 1))
        if node[r] is not None:
            fail("%s:%d: rank %d is mapped twice" % (path, no, r))
        if n in used:
            fail("%s:%d: node %d already holds rank %d (line %d): a mapping is a permutation"
                 % (path, no, n, used[n][0], used[n][1]))
        node[r] = n
        used[n] = (r, no)
    missing = [r for r in range(nranks) if node[r] is None]
    if missing:
        fail("%s: rank %d has no node (every rank 0..%d needs one)" % (path, missing[0], nranks - 1))
    return node


# ---- The estimator ------------------------------------------------------------------


class Estimator:
    """Prices placements of one record on one routing's paths."""

    def __init__(self, messages, total_us, routes, nranks, base_us=None):
        self.routes = routes
        self.nranks = nranks
        ident = list(range(nranks))
        # Transfers to or from a node without a rank in the record (the
        # library's start-up reaching every board of the network) follow no
        # rank when the ranks move: left out.
        self.left_out = sum(1 for m in messages if m[1] >= nranks or m[2] >= nranks)
        messages = [m for m in messages if m[1] < nranks and m[2] < nranks]
        # Phases: the messages that start together, before any of them could
        # have ended (a step of an algorithm, its ranks a little apart); each
        # as the bytes every (source rank, destination rank) pair sends. A
        # message joins the phase when it starts within the shortest transfer
        # time of the phase's messages, counting only those of 4 KiB or more
        # where there are any (a flag among a step's data stays in it).
        n, nodes, cables = nranks, routes.nodes, routes.directions
        phases, ends, start, durs = [], [], 0.0, []
        for t, s, d, b, src_mem, dst_mem in messages:
            dur = b / routes.link_Bps * 1e6 + (routes.hops(ident[s], ident[d]) or 0) * routes.hop_us
            window = [x for x, y in durs + [(dur, b)] if y >= 4096] or [x for x, _ in durs + [(dur, b)]]
            if not phases or t > start + min(window):
                phases.append(numpy.zeros((n, n)))
                ends.append(numpy.zeros((5, n)))
                start, durs = t, []
            durs.append((dur, b))
            phases[-1][s, d] += b
            # What each rank's own memory and slot must serve: GPU reads, GPU
            # writes, host reads, everything out, everything in.
            e = ends[-1]
            e[0 if src_mem == "gpu" else 2, s] += b
            if dst_mem == "gpu":
                e[1, d] += b
            e[3, s] += b
            e[4, d] += b
        self.bytes = numpy.array(phases) if phases else numpy.zeros((0, n, n))
        self.sends = self.bytes > 0
        # Phases of small messages only (flags, PIO stores) are priced by
        # their hops alone: their bytes hold a cable for a microsecond or
        # less, and leaving them out of the load sums keeps screening fast.
        self.heavy = numpy.nonzero(self.bytes.reshape(len(self.bytes), -1).max(axis=1) >= 4096)[0] \
            if len(self.bytes) else numpy.zeros(0, dtype=int)
        # Per node pair: the directed cables crossed, the hops, and whether
        # any cable path joins them.
        self.cross = numpy.zeros((nodes, nodes, cables))
        self.hops = numpy.zeros((nodes, nodes))
        self.apart = numpy.zeros((nodes, nodes), dtype=bool)
        for a in range(nodes):
            for b in range(nodes):
                path = routes.path[a][b]
                if path is None:
                    self.apart[a, b] = True
                    continue
                self.hops[a, b] = len(path)
                for c in path:
                    self.cross[a, b, c] = 1
        self.rate = numpy.array(routes.rate)
        # A phase cannot end before its busiest rank's memory and slot have
        # served it, wherever the ranks sit: its GPU reads and writes at
        # their rates, host memory reads at its rate, and the slot carries a
        # node's bytes out and in at a link's. (A lower bound: the model's GPU
        # also makes reads wait behind writes, which this leaves out.)
        self.endpoint_us = numpy.zeros(len(phases))
        for i, e in enumerate(ends):
            gpu = numpy.maximum(e[0] / routes.gpu_read_Bps, e[1] / routes.gpu_write_Bps)
            host = e[2] / min(routes.host_read_Bps, routes.link_Bps)
            slot = numpy.maximum(e[3], e[4]) / routes.link_Bps
            self.endpoint_us[i] = numpy.maximum(numpy.maximum(gpu, host), slot).max() * 1e6
        # The job's time outside the priced phases, from the recorded run
        # (rank r on node r, the first policy: another policy's estimate keeps
        # that run's base).
        self.base_us = total_us - self.comm_us(ident) if base_us is None else base_us

    @property
    def phases(self):
        return self.bytes

    def phase_loads(self, node, phases=None):
        """Bytes per phase (all, or those listed) and cable direction under
        placement node[rank]."""
        idx = numpy.array(node)
        b = self.bytes if phases is None else self.bytes[phases]
        return numpy.einsum("pij,ijc->pc", b, self.cross[numpy.ix_(idx, idx)], optimize=True)

    def comm_us(self, node):
        if not len(self.bytes):
            return 0.0
        idx = numpy.array(node)
        if (self.sends & self.apart[numpy.ix_(idx, idx)]).any():
            return math.inf  # a pair that talks is on two PEACH2 networks
        busiest = self.endpoint_us.copy()
        if len(self.heavy):
            cable = (self.phase_loads(node, self.heavy) / self.rate).max(axis=1) * 1e6
            busiest[self.heavy] = numpy.maximum(cable, busiest[self.heavy])
        hops = numpy.where(self.sends, self.hops[numpy.ix_(idx, idx)], 0).max(axis=(1, 2))
        return float((busiest + hops * self.routes.hop_us).sum())

    def estimate_us(self, node):
        return self.base_us + self.comm_us(node)

    def loads(self, node, phase):
        return list(self.phase_loads(node)[phase])

    def total_loads(self, node):
        return list(self.phase_loads(node).sum(axis=0))


# ---- The search -----------------------------------------------------------------------


def arrangements(nnodes, nranks):
    return math.perm(nnodes, nranks)


def exhaustive(est, nnodes):
    nranks = est.nranks
    fixed = est.routes.ring_or_torus and nranks > 0
    best = []
    rest = range(1, nnodes) if fixed else range(nnodes)
    count = 0
    for tail in itertools.permutations(rest, nranks - 1 if fixed else nranks):
        node = ([0] + list(tail)) if fixed else list(tail)
        best.append((est.estimate_us(node), node))
        count += 1
    best.sort()
    return best, count


def anneal(est, nnodes, seeds, iterations, rng):
    """Simulated annealing from each seed; returns (estimate, placement) seen, best first."""
    nranks = est.nranks
    seen = {}
    for start in seeds:
        node = list(start)
        free = [n for n in range(nnodes) if n not in node]
        cost = est.estimate_us(node)
        seen[tuple(node)] = cost
        temp = max(cost * 0.02, 1e-6)
        for i in range(iterations):
            a = rng.randrange(nranks)
            swap_free = free and rng.random() < len(free) / nnodes
            if swap_free:
                k = rng.randrange(len(free))
                node[a], free[k] = free[k], node[a]
            else:
                b = rng.randrange(nranks)
                if a == b:
                    continue
                node[a], node[b] = node[b], node[a]
            new = est.estimate_us(node)
            if new <= cost or rng.random() < math.exp((cost - new) / temp):
                cost = new
                seen.setdefault(tuple(node), new)
            elif swap_free:
                node[a], free[k] = free[k], node[a]
            else:
                node[a], node[b] = node[b], node[a]
            temp *= 0.999
    return sorted((c, list(n)) for n, c in seen.items()), len(seen)


def snake(routes, nranks):
    """Rank r along row 0 then back along row 1 of a 2-row torus (boustrophedon)."""
    cols = routes.nodes // 2
    order = list(range(cols)) + [cols + c for c in reversed(range(cols))]
    return order[:nranks]


def shipped_maps(topology, nranks, nnodes):
    """Mapping files beside the topology whose name shares its prefix (hapacs-2x8-*.map)."""
    folder = os.path.dirname(os.path.abspath(topology))
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".map"):
            try:
                out.append((name[:-4], load_map(os.path.join(folder, name), nranks, nnodes)))
            except UsageError:
                pass  # made for another rank or node count
    return out


# ---- Running the program ------------------------------------------------------------


def run_job(p2run, args, nranks, topology, routing, node, program, workdir, tag, record=None):
    stats = os.path.join(workdir, tag + ".stats.json")
    log = os.path.join(workdir, tag + ".log")
    # Without --topology, p2run picks its default (with InfiniBand for a
    # program that may use MPI); its PEACH2 cables are default_topology()'s.
    cmd = [p2run, "-n", str(nranks)] + (["--topology", args.topology] if args.topology else []) + \
        ["--routing", routing, "--stats", stats]
    if node is not None:
        path = os.path.join(workdir, tag + ".map")
        write_map(path, node, "p2map candidate " + tag)
        cmd += ["--map", path]
    if record:
        cmd += ["--traffic", record]
    if args.timeout:
        cmd += ["--timeout", str(args.timeout)]
    with open(log, "w") as out:
        rc = subprocess.run(cmd + ["--"] + program, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        tail = open(log).read().splitlines()[-15:]
        fail("the program failed under p2run (status %d, %s):\n  %s\n%s"
             % (rc, tag, " ".join(cmd + ["--"] + program), "\n".join(tail)))
    with open(stats) as f:
        return json.load(f)["summary"]["simulated_us"]


def write_map(path, node, title):
    with open(path, "w") as f:
        f.write("# %s\n# RANK NODE\n" % title)
        for r, n in enumerate(node):
            f.write("%d %d\n" % (r, n))


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r
    if len(xs) < 3:
        return None
    a, b = ranks(xs), ranks(ys)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = math.sqrt(sum((x - ma) ** 2 for x in a))
    vb = math.sqrt(sum((y - mb) ** 2 for y in b))
    return cov / (va * vb) if va and vb else None


def draw(path, routes, node, loads, title):
    """The placement on the cables: a 2-row torus as two rows of columns, any
    other network on a circle; each cable coloured and labelled by the bytes
    its busier direction carried over the run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if routes.shape:
        return draw_crossbar(plt, path, routes, node, loads, title)
    n = routes.nodes
    rows = 2 if any(ap == 3 or bp == 3 for _, ap, _, bp in routes.cables) and n % 2 == 0 else 1
    cols = n // rows
    if rows == 2:
        pos = {v: (float(v % cols), 1.0 - v // cols) for v in range(n)}
    else:
        pos = {v: (math.cos(2 * math.pi * v / n), math.sin(2 * math.pi * v / n)) for v in range(n)}
    rank_at = {v: r for r, v in enumerate(node)}
    peak = max(loads) or 1
    fig, ax = plt.subplots(figsize=(max(6.0, cols * 1.1), 3.4) if rows == 2 else (5.5, 5.5))
    cmap = plt.get_cmap("viridis_r")
    for i, (a, ap, b, bp) in enumerate(routes.cables):
        load = max(loads[2 * i], loads[2 * i + 1])
        (x0, y0), (x1, y1) = pos[a], pos[b]
        segments = [([x0, x1], [y0, y1])]
        if rows == 2 and abs(x1 - x0) > 1:  # the wrap-around cable: a short line out of each end column
            left, right = (a, b) if x0 < x1 else (b, a)
            (lx, ly), (rx, ry) = pos[left], pos[right]
            segments = [([lx, lx - 0.45], [ly, ly]), ([rx, rx + 0.45], [ry, ry])]
        for xs, ys in segments:
            ax.plot(xs, ys, color=cmap(load / peak), linewidth=1.5 + 6 * load / peak, zorder=1)
        xs, ys = segments[-1]
        ax.text((xs[0] + xs[1]) / 2, (ys[0] + ys[1]) / 2 + 0.07, "%.0f KiB" % (load / 1024), fontsize=7,
                ha="center", zorder=3)
    for v, (x, y) in pos.items():
        r = rank_at.get(v)
        ax.scatter([x], [y], s=560, color="white" if r is None else "#dce6f4", edgecolors="black", zorder=2)
        ax.text(x, y, "-" if r is None else str(r), ha="center", va="center", fontsize=10, zorder=3)
        ax.text(x, y - 0.2, "node %d" % v, ha="center", fontsize=6, color="gray", zorder=3)
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal" if rows == 1 else "auto")
    ax.margins(0.12)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_crossbar(plt, path, routes, node, loads, title):
    """The SR8000: its nodes as the crossbar grid (columns across, rows of
    each plane down, planes side by side), each coloured by the bytes of
    its busiest link to or from a crossbar over the run."""
    x, y, z = routes.shape
    n = routes.nodes
    busiest = [0.0] * n
    for i in range(len(routes.cables)):
        v = (i // 2) % n
        busiest[v] = max(busiest[v], loads[2 * i])
    peak = max(busiest) or 1
    rank_at = {v: r for r, v in enumerate(node)}
    fig, ax = plt.subplots(figsize=(max(4.0, 0.55 * x * z + 1), max(2.5, 0.55 * y + 1)))
    cmap = plt.get_cmap("viridis_r")
    for v in range(n):
        c, r, k = v % x, v // x % y, v // (x * y)
        px, py = k * (x + 1) + c, -r
        r_ = rank_at.get(v)
        ax.scatter([px], [py], s=300, color=cmap(busiest[v] / peak) if r_ is not None else "white",
                   edgecolors="black", zorder=2)
        ax.text(px, py, "-" if r_ is None else str(r_), ha="center", va="center", fontsize=7,
                color="white" if r_ is not None and busiest[v] > peak / 2 else "black", zorder=3)
    ax.set_title(title + "\n(SR8000 %dx%dx%d: planes side by side; colour: busiest crossbar link)" % (x, y, z),
                 fontsize=8)
    ax.set_aspect("equal")
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- Commands -------------------------------------------------------------------------


def positive(what):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%s: '%s' is not a whole number" % (what, text))
        if v < 0:
            raise argparse.ArgumentTypeError("%s: '%s' is negative" % (what, text))
        return v
    return parse


def policies(text):
    if text == "all":
        return POLICIES
    if text not in POLICIES:
        fail("--routing: unknown policy '%s' (%s, or all)" % (text, ", ".join(POLICIES)))
    return [text]


def search(args, program):
    p2sim = find_tool("p2sim", BUILD_P2SIM)
    topology = args.topology or default_topology()
    if not os.path.isfile(topology):
        fail("--topology: no file '%s'" % topology)
    chosen = policies(args.routing)
    routes = {p: load_routes(p2sim, topology, p) for p in chosen}
    if routes[chosen[0]].network == "sr8000":
        chosen = chosen[:1]  # one routing: dimension order
    nnodes = routes[chosen[0]].nodes
    if args.n < 1 or args.n > nnodes:
        fail("-n: %d ranks do not fit on the topology's %d nodes" % (args.n, nnodes))
    if not program and not args.record:
        fail("no program: p2map search -n N ... -- PROGRAM [ARGS...] (or --record FILE)")
    if args.budget > 0 and not program:
        fail("--budget %d needs the program to run (or --budget 0 with --record)" % args.budget)
    workdir = args.keep or tempfile.mkdtemp(prefix="p2map-")
    os.makedirs(workdir, exist_ok=True)
    try:
        p2run = find_tool("p2run", BUILD_P2RUN) if program else None
        record = args.record
        if not record:
            record = os.path.join(workdir, "record.csv")
            progress("recording: %d ranks, rank r on node r, %s ..." % (args.n, chosen[0]))
            run_job(p2run, args, args.n, topology, chosen[0], None, program, workdir, "record", record)
        network = routes[chosen[0]].network
        messages, total_us, others = load_record(record, network)
        progress("%d %s transfers%s, %.3f us simulated"
                 % (len(messages), network, " (and %d on other networks, the same for every placement)" % others
                    if others else "", total_us))
        if not messages:
            progress("no %s transfers: every placement prices the same; the table shows what " % network +
                     "simulation says")
        ident = list(range(args.n))
        rng = random.Random(args.seed)
        screened = []  # (estimate, policy, name, node)
        base_us = None
        for p in chosen:
            est = Estimator(messages, total_us, routes[p], args.n, base_us)
            base_us = est.base_us  # the recorded run's policy prices the rest of the job
            progress("%s: %d phases%s; screening ..." % (p, len(est.phases), ", %d transfers with nodes past the ranks left out" % est.left_out if est.left_out else ""))
            if args.fixed:
                found, count = [], 0
                how = "rank r on node r only (--fixed)"
            elif arrangements(nnodes, args.n) <= EXHAUSTIVE_LIMIT:
                found, count = exhaustive(est, nnodes)
                how = "all %d placements%s" % (count, " (rank 0 on node 0: rotations)" if est.routes.ring_or_torus else "")
            else:
                seeds = [("identity", ident)]
                if nnodes % 2 == 0 and args.n <= nnodes:
                    seeds.append(("snake", snake(routes[p], args.n)))
                seeds += shipped_maps(topology, args.n, nnodes)
                for k in range(2):
                    nodes = list(range(nnodes))
                    rng.shuffle(nodes)
                    seeds.append(("random%d" % k, nodes[:args.n]))
                found, count = anneal(est, nnodes, [s for _, s in seeds], args.iterations, rng)
                for name, s in seeds:
                    screened.append((est.estimate_us(s), p, name, s))
                how = "annealing from %d starts, %d placements seen" % (len(seeds), count)
            progress("%s: %s" % (p, how))
            for i, (e, node) in enumerate(found[:max(args.budget, 5)]):
                screened.append((e, p, "search", node))
            screened.append((est.estimate_us(ident), p, "identity", ident))
        # Distinct candidates, best estimate first; rank r on node r with the
        # first policy always runs (the reference).
        unique, seen = [], set()
        # At equal estimates a placement keeps its most telling name.
        order = {"identity": 0, "search": 2}
        for e, p, name, node in sorted(screened, key=lambda c: (c[0], order.get(c[2], 1))):
            key = (p, tuple(node))
            if key not in seen:
                seen.add(key)
                unique.append([e, p, name, node])
        named = {}
        for c in unique:
            if c[2] == "search":
                named[c[1]] = named.get(c[1], 0) + 1
                c[2] = "search-%d" % named[c[1]]
        reference = next(c for c in unique if c[2] == "identity" and c[1] == chosen[0])
        confirm = [reference] + [c for c in unique if c is not reference][:max(args.budget - 1, 0)]
        if args.budget == 0:
            confirm = []
        elif args.also:
            # Mappings the user wants beside the search's (a hand-made one).
            est = Estimator(messages, total_us, routes[chosen[0]], args.n)
            for path in args.also:
                node = load_map(path, args.n, nnodes)
                name = os.path.basename(path)[:-4] if path.endswith(".map") else os.path.basename(path)
                confirm.append([est.estimate_us(node), chosen[0], name, node])
        results = []
        for i, (e, p, name, node) in enumerate(confirm):
            progress("simulating %d/%d: %s, %s (estimated %.3f us) ..." % (i + 1, len(confirm), name, p, e))
            tag = "run%d" % i
            sim = total_us if (name == "identity" and p == chosen[0] and not args.record) else \
                run_job(p2run, args, args.n, topology, p, node, program, workdir, tag)
            results.append((e, sim, p, name, node))
        report(args, topology, program, unique, results, routes, messages, total_us)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def report(args, topology, program, unique, results, routes, messages, total_us):
    print("# p2map: %d ranks on %s, %s" % (args.n, os.path.basename(topology),
                                           " ".join(program) if program else args.record))
    print("# estimated: the record's %.3f us with its phases repriced; simulated: p2run --map" % total_us)
    # The SR8000 routes in dimension order whatever --routing says.
    def label(p):
        return "dim-order" if routes[p].network == "sr8000" else p

    rows = []
    if results:
        ref = results[0][1]
        print("%-12s %-11s %13s %13s %8s  %s" % ("mapping", "routing", "estimated_us", "simulated_us", "gain", "ranks on nodes"))
        for e, sim, p, name, node in results:
            gain = (ref - sim) / ref * 100 if ref else 0.0
            rows.append((name, label(p), e, sim, gain, node))
            print("%-12s %-11s %13.3f %13.3f %+7.1f%%  %s" % (name, label(p), e, sim, gain, " ".join(map(str, node))))
        rho = spearman([r[0] for r in results], [r[1] for r in results])
        print("# estimator against simulation over the %d simulated candidates: Spearman rank correlation %s"
              % (len(results), "%.2f" % rho if rho is not None else "n/a (fewer than 3)"))
        best = min(results, key=lambda r: (r[1], r[0]))
    else:
        print("%-12s %-11s %13s  %s" % ("mapping", "routing", "estimated_us", "ranks on nodes"))
        for e, p, name, node in unique[:10]:
            rows.append((name, label(p), e, None, None, node))
            print("%-12s %-11s %13.3f  %s" % (name, label(p), e, " ".join(map(str, node))))
        best = (unique[0][0], None, unique[0][1], unique[0][2], unique[0][3])
    e, sim, p, name, node = best
    out = args.output or "best.map"
    run_it = "p2run --map %s" % out + ("" if label(p) != p else " --routing %s" % p)
    write_map(out, node, "p2map search: %d ranks on %s, routing %s, %s (%s); %s"
              % (args.n, os.path.basename(topology), label(p), name,
                 "simulated %.3f us" % sim if sim is not None else "estimated %.3f us" % e, run_it))
    print("# best: %s, routing %s, written to %s (%s)" % (name, label(p), out, run_it))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["mapping", "routing", "estimated_us", "simulated_us", "gain_percent", "nodes"])
            for name_, p_, e_, sim_, gain_, node_ in rows:
                w.writerow([name_, p_, "%.3f" % e_, "" if sim_ is None else "%.3f" % sim_,
                            "" if gain_ is None else "%.2f" % gain_, " ".join(map(str, node_))])
    if args.png:
        est = Estimator(messages, total_us, routes[p], args.n)
        draw(args.png, routes[p], node, est.total_loads(node),
             "%s, routing %s on %s\nthe rank in each node; bytes over each cable's busier direction"
             % (name, label(p), os.path.basename(topology)))


def estimate(args):
    p2sim = find_tool("p2sim", BUILD_P2SIM)
    topology = args.topology or default_topology()
    if not os.path.isfile(topology):
        fail("--topology: no file '%s'" % topology)
    p = policies(args.routing)[0]
    routes = load_routes(p2sim, topology, p)
    messages, total_us, _ = load_record(args.record, routes.network)
    nranks = args.n or 1 + max([max(m[1], m[2]) for m in messages], default=0)
    if args.map:
        node = load_map(args.map, nranks, routes.nodes)
    else:
        node = list(range(nranks))
    est = Estimator(messages, total_us, routes, nranks)
    print("estimated_us %.3f phases %d communication_us %.3f" % (est.estimate_us(node), len(est.phases), est.comm_us(node)))
    if args.loads:
        for i in range(len(est.phases)):
            load = est.loads(node, i)
            print("phase %d: %s" % (i, " ".join("%s=%d" % (dir_name(routes, c), load[c])
                                                for c in range(len(load)) if load[c])))


def dir_name(routes, c):
    if isinstance(routes.cables[c // 2], str):
        return routes.cables[c // 2]
    a, ap, b, bp = routes.cables[c // 2]
    port = "NEWS"
    if c % 2:
        a, ap, b, bp = b, bp, a, ap
    return "%d.%s>%d.%s" % (a, port[ap], b, port[bp])


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    command, rest = argv[1], argv[2:]
    program = []
    if "--" in rest:
        i = rest.index("--")
        rest, program = rest[:i], rest[i + 1:]
    parser = argparse.ArgumentParser(prog=PROGRAM + " " + command, add_help=True)
    parser.add_argument("--topology")
    parser.add_argument("--routing", default="ring-split")
    parser.add_argument("--record")
    if command == "search":
        parser.add_argument("-n", type=positive("-n"), required=True)
        parser.add_argument("--budget", type=positive("--budget"), default=4)
        parser.add_argument("-o", "--output")
        parser.add_argument("--csv")
        parser.add_argument("--png")
        parser.add_argument("--iterations", type=positive("--iterations"), default=3000)
        parser.add_argument("--seed", type=positive("--seed"), default=1)
        parser.add_argument("--keep")
        parser.add_argument("--also", action="append", default=[])
        parser.add_argument("--fixed", action="store_true")
        parser.add_argument("--timeout", type=positive("--timeout"))
    elif command == "estimate":
        parser.add_argument("-n", type=positive("-n"))
        parser.add_argument("--map")
        parser.add_argument("--loads", action="store_true")
    else:
        print("%s: unknown command '%s' (search, estimate; %s --help)" % (PROGRAM, command, PROGRAM), file=sys.stderr)
        return 2
    args = parser.parse_args(rest)
    try:
        if command == "search":
            search(args, program)
        else:
            if not args.record:
                fail("estimate needs --record FILE (p2run --traffic FILE records one)")
            estimate(args)
    except UsageError as e:
        print("%s: %s" % (PROGRAM, e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
