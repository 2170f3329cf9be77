#!/usr/bin/env python3
"""p2map and the record it screens with (p2run --traffic, p2sim --routes).

Run as: p2map_test.py TestClass.test_name, with P2MAP, P2RUN, P2SIM,
P2_TOPOLOGY_DIR and P2_WORKLOADS set (tests/tools/CMakeLists.txt). Figures
below are worked by hand from the simulator's parameters: a PEACH2 link
moves 25.6e9 / 7 payload bytes per second (x8 Gen2, 256-byte TLPs with 24
bytes of framing and header), a hop costs 122 ns (link 90 + 8 cycles at
250 MHz).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

P2MAP, P2RUN, P2SIM = os.environ["P2MAP"], os.environ["P2RUN"], os.environ["P2SIM"]
TOPO = os.environ["P2_TOPOLOGY_DIR"]
WORKLOADS = os.environ["P2_WORKLOADS"]
RING8 = os.path.join(TOPO, "tcamini-ring8.topo")
LINK_US_PER_BYTE = 7 / 25.6e9 * 1e6
HOP_US = 0.122


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def record(rows, total_us=500.0):
    """A record in p2sim --traffic's format."""
    lines = ["# p2sim --traffic", "time_us,src_node,dst_node,bytes,network,from,to"]
    lines += ["%.6f,%d,%d,%d,peach2,host,host" % r for r in rows]
    lines.append("# simulated_us=%.6f" % total_us)
    return "\n".join(lines) + "\n"


class Record(unittest.TestCase):
    def test_dma_pingpong(self):
        """Every DMA of a ping-pong is one line, each way, and the record
        ends with the job's simulated time, as --stats has it."""
        with tempfile.TemporaryDirectory() as d:
            traffic, stats = os.path.join(d, "t.csv"), os.path.join(d, "s.json")
            r = run([P2RUN, "-n", "2", "--traffic", traffic, "--stats", stats, "--",
                     os.path.join(WORKLOADS, "pingpong"), "-m", "dma", "-b", "1K", "-e", "1K", "-n", "3",
                     "-w", "0", "-c", "0"])
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = open(traffic).read().splitlines()
            self.assertEqual(lines[1], "time_us,src_node,dst_node,bytes,network,from,to")
            data = [l.split(",")[1:] for l in lines[2:-1] if l.split(",")[3] == "1024"]
            self.assertEqual(data, [["0", "1", "1024", "peach2", "host", "host"],
                                    ["1", "0", "1024", "peach2", "host", "host"]] * 3)
            simulated = json.load(open(stats))["summary"]["simulated_us"]
            self.assertTrue(lines[-1].startswith("# simulated_us="))
            self.assertAlmostEqual(float(lines[-1].split("=")[1]), simulated, places=3)

    def test_same_file_refused(self):
        r = run([P2RUN, "-n", "2", "--traffic", "/tmp/p2map-same", "--stats", "/tmp/p2map-same", "--", "/bin/true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--stats and --traffic name the same file", r.stderr)


class Routes(unittest.TestCase):
    def test_ring(self):
        """The cables and the hops the network itself routes, and rotation
        symmetry only where the routes rotate too."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            for policy, symmetric in (("ring-first", True), ("ring-split", False)):
                r = run([P2SIM, "--routes", out, "--topology", RING8, "--routing", policy])
                self.assertEqual(r.returncode, 0, r.stderr)
                data = json.load(open(out))
                self.assertEqual(data["nodes"], 8)
                self.assertEqual(len(data["cables"]), 8)
                self.assertEqual(data["symmetric"], symmetric)
                self.assertAlmostEqual(data["link_Bps"], 25.6e9 / 7, delta=1)
                self.assertAlmostEqual(data["hop_ns"], 122)
                self.assertEqual([len(data["paths"][0][d]) for d in range(8)], [0, 1, 2, 3, 4, 3, 2, 1])

    def test_bad_policy(self):
        r = run([P2SIM, "--routes", "/dev/null", "--topology", RING8, "--routing", "zigzag"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("zigzag", r.stderr)


class Estimator(unittest.TestCase):
    # Ring-first on a ring of 8: 0 -> 2 and 1 -> 2 go east together (one
    # phase: they start within each other's transfer time), 3 -> 6 east later.
    ROWS = [(0.0, 0, 2, 40000), (0.5, 1, 2, 20000), (100.0, 3, 6, 80000)]

    def estimate(self, *extra):
        with tempfile.TemporaryDirectory() as d:
            rec = write(os.path.join(d, "rec.csv"), record(self.ROWS))
            args = [P2MAP, "estimate", "-n", "8", "--topology", RING8, "--routing", "ring-first",
                    "--record", rec, "--loads"]
            for e in extra:
                args += [e if not e.startswith("MAP:") else write(os.path.join(d, "m.map"), e[4:])]
            r = run(args)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout.splitlines()

    def test_loads_by_hand(self):
        out = self.estimate()
        self.assertEqual(out[1], "phase 0: 0.E>1.W=40000 1.E>2.W=60000")
        self.assertEqual(out[2], "phase 1: 3.E>4.W=80000 4.E>5.W=80000 5.E>6.W=80000")
        # Phase 0: 60000 B on cable 1-2 (the slot of node 2 takes as much),
        # 2 hops; phase 1: 80000 B on three cables, 3 hops.
        comm = 60000 * LINK_US_PER_BYTE + 2 * HOP_US + 80000 * LINK_US_PER_BYTE + 3 * HOP_US
        self.assertEqual(out[0], "estimated_us 500.000 phases 2 communication_us %.3f" % comm)

    def test_another_placement(self):
        # Ranks 1 and 2 swap nodes: 0 -> 2 is one hop east, 1 -> 2 one hop
        # west; node 1 (rank 2) still takes 60000 B through its slot.
        out = self.estimate("--map", "MAP:0 0\n1 2\n2 1\n3 3\n4 4\n5 5\n6 6\n7 7\n")
        self.assertEqual(out[1], "phase 0: 0.E>1.W=40000 2.W>1.E=20000")
        comm_id = 60000 * LINK_US_PER_BYTE + 2 * HOP_US + 80000 * LINK_US_PER_BYTE + 3 * HOP_US
        comm = 60000 * LINK_US_PER_BYTE + 1 * HOP_US + 80000 * LINK_US_PER_BYTE + 3 * HOP_US
        self.assertEqual(out[0], "estimated_us %.3f phases 2 communication_us %.3f" % (500 - comm_id + comm, comm))


class Search(unittest.TestCase):
    def test_ring_optimum(self):
        """Rank r and r + 4 exchange 400 kB at once: placed 4 hops apart they
        share cables, placed side by side each pair has a cable to itself,
        and no placement beats that (the slots take 400 kB each way)."""
        rows = [(0.0, r, (r + 4) % 8, 400000) for r in range(8)]
        with tempfile.TemporaryDirectory() as d:
            rec = write(os.path.join(d, "rec.csv"), record(rows))
            best = os.path.join(d, "best.map")
            r = run([P2MAP, "search", "-n", "8", "--topology", RING8, "--routing", "ring-first",
                     "--record", rec, "--budget", "0", "-o", best])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("all 5040 placements (rank 0 on node 0: rotations)", r.stderr)
            node = {}
            for line in open(best):
                if not line.startswith("#"):
                    rank, n = map(int, line.split())
                    node[rank] = n
            self.assertEqual(sorted(node.values()), list(range(8)))
            for rank in range(4):
                apart = abs(node[rank] - node[rank + 4])
                self.assertEqual(min(apart, 8 - apart), 1, "ranks %d and %d on %s" % (rank, rank + 4, node))
            best_row = [l for l in r.stdout.splitlines() if l.startswith("search-1")][0]
            ident_row = [l for l in r.stdout.splitlines() if l.startswith("identity")][0]
            comm_id = float(ident_row.split()[2]) - 500
            # Identity under ring-first: four flows east on every cable.
            self.assertAlmostEqual(float(best_row.split()[2]),
                                   500 - (4 * 400000 * LINK_US_PER_BYTE + 4 * HOP_US)
                                   + 400000 * LINK_US_PER_BYTE + HOP_US, places=3)
            self.assertAlmostEqual(comm_id, 0.0, places=3)

    def test_sr8000(self):
        """The SR8000's crossbars: links used one way, routes x then y. On a
        2x8 machine rank 0 and 1 exchange 1 MB with rank 2 and 3 behind
        them: placed in one row (x-crossbar) each pair has its own links."""
        rows = [(0.0, 0, 2, 1000000), (0.0, 1, 3, 1000000)]
        with tempfile.TemporaryDirectory() as d:
            rec = os.path.join(d, "rec.csv")
            write(rec, record(rows).replace("peach2", "sr8000"))
            r = run([P2MAP, "estimate", "-n", "4", "--topology", os.path.join(TOPO, "sr8000-2x8.topo"),
                     "--record", rec, "--loads"])
            self.assertEqual(r.returncode, 0, r.stderr)
            # Rank 0 -> 2: node 0 to node 2, down its column's y-crossbar (the
            # same for 1 -> 3): 1 MB at 1000 MB/s less the 32-byte header of
            # every 4096-byte packet, and two links at 625 ns each (a link,
            # half a crossbar and half a router).
            self.assertIn("phase 0: node0_to_xbar_y=1000000 node1_to_xbar_y=1000000 "
                          "xbar_y_to_node2=1000000 xbar_y_to_node3=1000000\n", r.stdout)
            comm = 1e6 / (1e9 * 4096 / 4128) * 1e6 + 2 * 0.625
            self.assertIn("communication_us %.3f" % comm, r.stdout)
            r = run([P2MAP, "search", "-n", "4", "--topology", os.path.join(TOPO, "sr8000-2x8.topo"),
                     "--record", rec, "--budget", "0", "-o", os.path.join(d, "b.map")])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, r"\nsearch-1 +dim-order ")

    def test_routing_alone(self):
        """--fixed --routing all: rank r on node r under each policy, priced;
        4 hops to a half-way node split two ways (ring-split) or all east."""
        rows = [(0.0, r, (r + 4) % 8, 400000) for r in range(8)]
        with tempfile.TemporaryDirectory() as d:
            rec = write(os.path.join(d, "rec.csv"), record(rows))
            r = run([P2MAP, "search", "-n", "8", "--topology", RING8, "--routing", "all", "--fixed",
                     "--record", rec, "--budget", "0", "-o", os.path.join(d, "b.map")])
            self.assertEqual(r.returncode, 0, r.stderr)
            got = {l.split()[1]: float(l.split()[2]) for l in r.stdout.splitlines() if l.startswith("identity")}
            self.assertEqual(sorted(got), ["balanced", "ring-first", "ring-split", "s-first"])
            self.assertAlmostEqual(got["ring-split"], 500.0, places=3)  # the record's own policy
            # ring-first: four flows on each eastward cable, none westward.
            east = 500 - (2 * 400000 * LINK_US_PER_BYTE + 4 * HOP_US) + 4 * 400000 * LINK_US_PER_BYTE + 4 * HOP_US
            self.assertAlmostEqual(got["ring-first"], east, places=3)

    def test_program_end_to_end(self):
        """Record, screen, simulate: the table, and a map p2run takes."""
        with tempfile.TemporaryDirectory() as d:
            best, table = os.path.join(d, "best.map"), os.path.join(d, "t.csv")
            prog = [os.path.join(WORKLOADS, "collectives"), "-C", "allgather", "-b", "16K", "-e", "16K",
                    "-n", "1", "-w", "0"]
            r = run([P2MAP, "search", "-n", "4", "--topology", RING8, "--budget", "2", "-o", best,
                     "--csv", table, "--png", os.path.join(d, "best.png"), "--"] + prog)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("recording: 4 ranks", r.stderr)
            self.assertRegex(r.stdout, r"\nidentity +ring-split +[0-9.]+ +[0-9.]+ +\+0.0%  0 1 2 3\n")
            self.assertRegex(r.stdout, r"\nsearch-1 +ring-split +[0-9.]+ +[0-9.]+ +[-+][0-9.]+%")
            self.assertEqual(open(table).readline().strip(),
                             "mapping,routing,estimated_us,simulated_us,gain_percent,nodes")
            self.assertTrue(os.path.getsize(os.path.join(d, "best.png")) > 1000)
            again = run([P2RUN, "-n", "4", "--topology", RING8, "--map", best, "--"] + prog)
            self.assertEqual(again.returncode, 0, again.stderr)


class BadInput(unittest.TestCase):
    def bad(self, args, message, files=None):
        with tempfile.TemporaryDirectory() as d:
            rec = write(os.path.join(d, "rec.csv"), record([(0.0, 0, 1, 5000)]))
            args = [a.replace("REC", rec).replace("DIR", d) for a in args]
            for name, text in (files or {}).items():
                write(os.path.join(d, name), text)
            r = run([P2MAP] + args)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(message, r.stderr)

    def test_map_not_a_permutation(self):
        self.bad(["estimate", "-n", "3", "--topology", RING8, "--record", "REC", "--map", "DIR/m.map"],
                 "m.map:3: node 1 already holds rank 0 (line 2): a mapping is a permutation",
                 {"m.map": "# two ranks on node 1\n0 1\n1 1\n2 2\n"})

    def test_map_missing_rank(self):
        self.bad(["estimate", "-n", "3", "--topology", RING8, "--record", "REC", "--map", "DIR/m.map"],
                 "m.map: rank 2 has no node", {"m.map": "0 0\n1 1\n"})

    def test_unknown_policy(self):
        self.bad(["search", "-n", "2", "--routing", "zigzag", "--topology", RING8, "--record", "REC",
                  "--budget", "0"], "--routing: unknown policy 'zigzag'")

    def test_too_many_ranks(self):
        self.bad(["search", "-n", "9", "--topology", RING8, "--record", "REC", "--budget", "0"],
                 "-n: 9 ranks do not fit on the topology's 8 nodes")

    def test_bad_record_line(self):
        self.bad(["estimate", "--topology", RING8, "--record", "DIR/r.csv"],
                 "r.csv:2: expected time_us,src_node,dst_node,bytes,network,from,to",
                 {"r.csv": "time_us,src_node,dst_node,bytes,network,from,to\n1.0,0,x,8,peach2,host,host\n"})

    def test_nothing_to_place_on(self):
        self.bad(["search", "-n", "2", "--topology", "DIR/ib.topo", "--record", "REC", "--budget", "0"],
                 "no PEACH2 cables and no SR8000 crossbar", {"ib.topo": "nodes 4\ndevice ib\n"})

    def test_no_program(self):
        self.bad(["search", "-n", "2", "--topology", RING8], "no program")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
