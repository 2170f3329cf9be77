#!/usr/bin/env python3
"""mpi_fortran_symbols.py NM LIBP2MPI MPIFH F08|- MPI_DIR [LIB...] - checks from
the libraries' symbol tables that no Fortran MPI call runs outside the
virtual-time layer (mpi/README.md, "Fortran"):
  1. every call of Open MPI's Fortran library MPIFH (its names: those at one
     address) is exported by LIBP2MPI under every one of its names, or is a
     local call Open MPI answers (gen_unsupported.py's PASS, MPI_Sizeof,
     MPI_F_sync_reg);
  2. what the mpi_f08 library F08 imports (ompi_*_f, pmpi_*_, C calls)
     is exported by LIBP2MPI or local;
  3. every mpi_*_ call each LIB imports (Debian's MUMPS) is modelled (a row
     of MPI_DIR/fortran_calls.tab, exported by LIBP2MPI) or local.
Prints what it checked; exits 1 naming what escapes."""
import re
import subprocess
import sys


def symbols(nm, lib, undefined=False):
    out = subprocess.run([nm, "-D", "--undefined-only" if undefined else "--defined-only", lib],
                         check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def local(cname, passed):
    return cname in ("MPI_Sizeof", "MPI_F_sync_reg") or passed.match(cname)


def main():
    nm, p2mpi, mpifh, f08, mpi_dir = sys.argv[1:6]
    libs = sys.argv[6:]
    sys.path.insert(0, mpi_dir)
    from gen_unsupported import PASS
    rows = {"MPI_" + line.split()[0] for line in open(mpi_dir + "/fortran_calls.tab")
            if line.split() and not line.startswith("#")}
    exported = {f[2] for f in symbols(nm, p2mpi) if len(f) == 3 and f[1] in "TW"}
    bad = []
    # 1. Open MPI's Fortran library, call by call
    by_addr = {}
    for f in symbols(nm, mpifh):
        if len(f) == 3 and f[1] in "TW":
            by_addr.setdefault(f[0], []).append(f[2])
    layer, passed = set(), set()
    cname_of = {}
    for names in by_addr.values():
        if names[0].endswith("_dummy"):
            continue  # Open MPI's placeholder for an empty extension
        m = next((re.match(r"^(MPIX?_[A-Z][a-z0-9_]*?)(_cptr)?_f$", n) for n in sorted(names, key=len)
                  if re.match(r"^(MPIX?_[A-Z][a-z0-9_]*?)(_cptr)?_f$", n)), None)
        if m:
            cname = m.group(1)
        elif re.match(r"^p?mpi_sizeof_", names[0]):
            cname = "MPI_Sizeof"
        elif re.match(r"^ompi(x?)_([a-z0-9_]+?)(_cptr)?_f$", names[0]):
            m = re.match(r"^ompi(x?)_([a-z0-9_]+?)(_cptr)?_f$", names[0])
            cname = "MPI%s_%s" % (m.group(1).upper(), m.group(2).capitalize())
        else:
            cname = names[0]
        for n in names:
            cname_of[n] = cname
        have = [n for n in names if n in exported]
        if len(have) == len(names):
            layer.add(cname)
        elif have:
            bad.append("%s: the layer exports %s but not %s" % (cname, " ".join(sorted(have)),
                                                                " ".join(sorted(set(names) - set(have)))))
        elif local(cname, PASS):
            passed.add(cname)
        else:
            bad.append("%s (%s) runs in Open MPI" % (cname, " ".join(sorted(names))))
    print("%s: %d calls, %d in the layer (bindings or stubs), %d local (Open MPI's)" % (
        mpifh, len(set(cname_of.values())), len(layer), len(passed)))
    # 2. the mpi_f08 library's imports
    if f08 != "-":
        n = 0
        for f in symbols(nm, f08, undefined=True):
            s = f[-1]
            if re.match(r"^(ompix?_\w+_f|pmpi_\w+_)$", s):
                n += 1
                if s not in exported and not local(cname_of.get(s, s), PASS):
                    bad.append("%s, which mpi_f08 calls, runs in Open MPI" % s)
            m = re.match(r"^P?(MPIX?_[A-Z][a-z0-9_]*)$", s)
            if m and not local(m.group(1), PASS) and m.group(1) not in exported:
                n += 1
                low = m.group(1)[4:].lower()
                if "mpi_%s_f08_" % low not in exported:
                    bad.append("mpi_f08's MPI_%s calls %s directly" % (low, s))
        print("%s: %d imports checked" % (f08, n))
    # 3. the Fortran MPI calls of other libraries (MUMPS)
    for lib in libs:
        calls = sorted({f[-1] for f in symbols(nm, lib, undefined=True) if re.match(r"^mpi_\w+_$", f[-1])})
        modelled = [c for c in calls if cname_of.get(c) in rows and c in exported]
        loc = [c for c in calls if c not in modelled and local(cname_of.get(c, c), PASS)]
        for c in calls:
            if c not in modelled and c not in loc:
                bad.append("%s, which %s calls, is neither modelled nor local" % (c, lib))
        print("%s: %d Fortran MPI calls: %d modelled (%s), %d local (%s)" % (
            lib, len(calls), len(modelled), " ".join(c[4:-1] for c in modelled), len(loc),
            " ".join(c[4:-1] for c in loc)))
    for b in bad:
        print("FAIL: " + b)
    sys.exit(1 if bad else 0)


main()
