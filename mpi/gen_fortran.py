#!/usr/bin/env python3
"""Writes fortran_calls.c: the Fortran MPI bindings of the virtual-time layer
(README.md, "Fortran"). Open MPI's Fortran library (libmpi_mpifh.so; `use
mpi` resolves to its names, `use mpi_f08` calls its ompi_*_f functions)
forwards every call to Open MPI's own C calls, which would run outside the
layer. For each call that library exports (all the names of one call share
an address: mpi_send, mpi_send_, mpi_send__, MPI_SEND, pmpi_*, MPI_Send_f,
ompi_send_f, ...) this script writes, under every one of those names:
  - the call's binding, when fortran_calls.tab has a row for it (the layer
    models the C call): Fortran arguments converted (p2mpi_fortran.h), the
    layer's C call made;
  - nothing, when the call is local and Open MPI answers it correctly
    (gen_unsupported.py's PASS, and the Fortran-only MPI_Sizeof and
    MPI_F_sync_reg): Open MPI's own binding runs;
  - otherwise a stub that ends the job naming "MPI_X (Fortran binding)".
The mpi_f08 library calls a few C functions directly; those not modelled
and not PASS get their f08 entry points stubbed too.
Usage: gen_fortran.py TABLE MPI_H NM MPIFH_SO F08_SO|- OUT SOURCES..."""
import re
import subprocess
import sys

from gen_unsupported import PASS

FORTRAN_PASS = {"MPI_Sizeof", "MPI_F_sync_reg"}  # no C call: compile-time sizes, a no-op
HANDLE_IN = {"comm": "pf_comm(*{a}, call)", "type": "pf_type(*{a}, call)", "op": "pf_op(*{a}, call)",
             "info": "pf_info(*{a}, call)", "group": "MPI_Group_f2c(*{a})", "req": "pf_req(*{a}, call)",
             "win": "MPI_Win_f2c(*{a})"}
HANDLE_CTYPE = {"comm": "MPI_Comm", "group": "MPI_Group", "req": "MPI_Request", "win": "MPI_Win"}
HANDLE_C2F = {"comm": "PMPI_Comm_c2f", "group": "MPI_Group_c2f", "req": "MPI_Request_c2f",
              "win": "MPI_Win_c2f"}


def die(msg):
    sys.exit("gen_fortran.py: " + msg)


def c_arities(mpi_h):
    """Number of parameters of each MPI_ function mpi.h declares."""
    arity = {}
    text = open(mpi_h).read()
    for m in re.finditer(r"OMPI_DECLSPEC\s+[\w\s\*]*?\b(MPI_[A-Za-z0-9_]+)\s*\(", text):
        depth, i, params, cur = 1, m.end(), 0, ""
        while depth:
            ch = text[i]
            depth += ch == "("
            depth -= ch == ")"
            if depth == 1 and ch == ",":
                params += 1
            elif depth >= 1:
                cur += ch
            i += 1
        if m.group(1) not in arity:
            arity[m.group(1)] = 0 if cur.strip() in ("", "void") else params + 1
    return arity


def defined_calls(sources):
    defined = set()
    for src in sources:
        for m in re.finditer(r"^(?:int|double|_Noreturn void)\s+(P?MPI_\w+)\(", open(src).read(), re.M):
            defined.add(m.group(1))
    return defined


def read_table(path):
    rows = {}
    for n, line in enumerate(open(path), 1):
        line = line.split("#")[0].split()
        if not line:
            continue
        name, kinds = "MPI_" + line[0], line[1:]
        ret = "int"
        if kinds[-2:] == ["->", "double"]:
            ret, kinds = "double", kinds[:-2]
        for k in kinds:
            base = k.split(":")[0]
            if base not in ("buf", "int", "aint", "int*", "ranges*", "comm?", "status", "status*", "statuses*", "flag*",
                            "index*", "indices*", "null", "reqs&") and base.rstrip("*&") not in HANDLE_IN:
                die("%s:%d: unknown kind %s" % (path, n, k))
        rows[name] = (ret, kinds)
    return rows


def nm(nm_tool, lib, undefined=False):
    flag = "--undefined-only" if undefined else "--defined-only"
    out = subprocess.run([nm_tool, "-D", flag, lib], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def fortran_calls(nm_tool, mpifh):
    """The calls of Open MPI's Fortran library: {C name: [symbol names]}."""
    by_addr = {}
    for f in nm(nm_tool, mpifh):
        if len(f) == 3 and f[1] in "TW":
            by_addr.setdefault(f[0], []).append(f[2])
    calls = {}
    for names in by_addr.values():
        cname = None
        for s in sorted(names, key=len):
            m = re.match(r"^(MPIX?)_([A-Z][a-z0-9_]*?)(_cptr)?_f$", s)
            if m:
                cname = m.group(1) + "_" + m.group(2)
                break
        if not cname:
            m = re.match(r"^ompi(x?)_([a-z0-9_]+?)(_cptr)?_f$", names[0])
            if m:
                cname = "MPI%s_%s" % (m.group(1).upper(), m.group(2).capitalize())
            elif re.match(r"^p?mpi_sizeof_", names[0]):
                cname = "MPI_Sizeof"
            elif names[0].endswith("_dummy"):
                continue  # Open MPI's placeholder for an empty extension
            else:
                cname = "MPI_" + re.sub(r"^p?mpix?_", "", names[0]).rstrip("_").capitalize()
        calls.setdefault(cname, []).extend(names)
    return calls


def binding(cname, ret, kinds, names):
    """The C binding of one modelled call under all of its Fortran names."""
    main = main_name(names)
    params, pre, cargs, post = [], [], [], []
    for i, k in enumerate(kinds):
        base, _, ref = k.partition(":")
        a, c, s = "a%d" % i, "c%d" % i, "s%d" % i
        n = "*a%s" % ref if ref else ""
        if base != "null":
            params.append(("void *" if base == "buf" else "MPI_Fint *") + a)
        if base == "buf":
            cargs.append("pf_buf(%s)" % a)
        elif base == "int":
            cargs.append("*" + a)
        elif base in ("int*", "index*", "indices*"):
            cargs.append(a)
            if base == "index*":
                post.append("pf_index(%s);" % a)
            elif base == "indices*":
                post.append("pf_indices(%s, a%s);" % (a, ref))
        elif base == "aint":
            cargs.append("*(MPI_Aint *)" + a)  # INTEGER(KIND=MPI_ADDRESS_KIND): 8 bytes
        elif base == "ranges*":
            cargs.append("(int (*)[3])" + a)  # INTEGER RANGES(3, N): C's int ranges[][3]
        elif base == "null":
            cargs.append("NULL")
        elif base == "comm?":
            cargs.append("pf_comm_any(*%s)" % a)
        elif base in HANDLE_IN:
            cargs.append(HANDLE_IN[base].format(a=a))
        elif base[:-1] in HANDLE_CTYPE and base[-1] in "*&":
            h = base[:-1]
            init = " = " + HANDLE_IN[h].format(a=a) if base[-1] == "&" else ""
            pre.append("%s %s%s;" % (HANDLE_CTYPE[h], c, init))
            cargs.append("&" + c)
            post.append("*%s = %s(%s);" % (a, HANDLE_C2F[h], c))
        elif base == "reqs&":
            pre.append("MPI_Request %s[PF_STACK], *%s = pf_reqs_in(%s, %s, %s, call);" % (s, c, a, n, s))
            cargs.append(c)
            post.append("pf_reqs_out(%s, %s, %s, %s);" % (a, n, c, s))
        elif base == "status*":
            pre.append("MPI_Status %s;" % c)
            cargs.append("pf_status(%s, &%s)" % (a, c))
            post.append("pf_status_out(%s, &%s);" % (a, c))
        elif base == "status":
            pre.append("MPI_Status %s;" % c)
            cargs.append("pf_status_in(%s, &%s)" % (a, c))
        elif base == "statuses*":
            pre.append("MPI_Status %s[PF_STACK], *%s = pf_statuses(%s, %s, %s);" % (s, c, a, n, s))
            cargs.append(c)
            post.append("pf_statuses_out(%s, %s, %s, %s);" % (a, n, c, s))
        elif base == "flag*":
            pre.append("int %s;" % c)
            cargs.append("&" + c)
            post.append("pf_logical(%s, %s);" % (a, c))
    out = []
    if ret == "double":
        out.append("double %s(void) { return %s(); }" % (main, cname))
    else:
        params.append("MPI_Fint *ierr")
        out.append("void %s(%s)\n{" % (main, ", ".join(params)))
        # a call that converts a handle first checks MPI is initialised (and
        # names itself in the conversions' messages)
        if any(k.split(":")[0].rstrip("*&") in HANDLE_IN or k.startswith("reqs") for k in kinds):
            out.append('    static const char call[] = "%s";\n    pm_need_init(call);' % cname)
        out += ["    " + p for p in pre]
        out.append("    int rc = %s(%s);" % (cname, ", ".join(cargs)))
        out += ["    " + p for p in post]
        out.append("    if (ierr)\n        *ierr = rc;\n}")
    out += aliases(main, names)
    return "\n".join(out) + "\n"


def main_name(names):
    """Open MPI's own function (ompi_send_f, or the f08 library's entry point)."""
    return next((n for n in names if n.startswith("ompi_")), sorted(names)[0])


def aliases(main, names):
    return ['extern __typeof__(%s) %s __attribute__((alias("%s")));' % (main, n, main)
            for n in sorted(names) if n != main]


def stub(cname, names):
    main = main_name(names)
    return ('void %s(void) { p2mpi_unsupported("%s (Fortran binding)"); }\n' % (main, cname)
            + "\n".join(aliases(main, names)) + "\n")


def main():
    table, mpi_h, nm_tool, mpifh, f08, out = sys.argv[1:7]
    sources = sys.argv[7:]
    rows, arity, defined = read_table(table), c_arities(mpi_h), defined_calls(sources)
    for cname, (ret, kinds) in rows.items():
        if cname not in defined:
            die("%s has a row in %s but the layer does not define it" % (cname, table))
        if arity.get(cname) != len(kinds):
            die("%s: %d kinds in %s, %s parameters in mpi.h" % (cname, len(kinds), table, arity.get(cname)))
    calls = fortran_calls(nm_tool, mpifh)
    parts, stubs, passed, modelled, unbound = [], [], [], [], []
    for cname in sorted(calls):
        names = sorted(set(calls[cname]))
        if cname in rows:
            parts.append(binding(cname, rows[cname][0], rows[cname][1], names))
            modelled.append(cname)
        elif cname in FORTRAN_PASS or PASS.match(cname):
            passed.append(cname)
        else:
            parts.append(stub(cname, names))
            stubs.append(cname)
            if cname in defined:
                unbound.append(cname)
    missing = sorted(set(rows) - set(modelled))
    # The mpi_f08 library's direct calls of C functions (not through libmpi_mpifh.so).
    f08_stubs = []
    if f08 != "-":
        f08_defined = {f[2] for f in nm(nm_tool, f08) if len(f) == 3}
        for f in nm(nm_tool, f08, undefined=True):
            m = re.match(r"^P?(MPIX?_[A-Z][a-z0-9_]*)$", f[-1])
            if not m or PASS.match(m.group(1)):
                continue
            cname = m.group(1)
            if f[-1] in defined:
                continue  # the layer defines the C function mpi_f08 calls (PMPI_Buffer_detach)
            if cname in defined:
                die("the mpi_f08 library calls %s directly: its f08 binding needs a row of its own" % f[-1])
            low = cname[4:].lower()
            names = [n for n in ("mpi_%s_f08_" % low, "pmpi_%s_f08_" % low, "ompi_%s_f08" % low,
                                 "pompi_%s_f08" % low) if n in f08_defined]
            if names:
                parts.append(stub(cname, names))
                f08_stubs.append(cname)
    with open(out, "w") as f:
        f.write("/* Generated by gen_fortran.py from fortran_calls.tab and Open MPI's Fortran\n"
                " * library: the layer's Fortran MPI bindings. Do not edit. */\n"
                "#include \"p2mpi_fortran.h\"\n\n"
                "_Noreturn void p2mpi_unsupported(const char *name);\n\n")
        f.write("\n".join(parts))
    print("%d Fortran MPI calls in %s: %d modelled, %d passed to Open MPI (local), %d stubs"
          " (+%d mpi_f08 entry points)" % (len(calls), mpifh.split("/")[-1], len(modelled), len(passed),
                                           len(stubs), len(f08_stubs)))
    if unbound:
        print("modelled in C, stopped in Fortran (no row in %s): %s" % (table, " ".join(unbound)))
    if missing:
        print("rows with no call in Open MPI's Fortran library: %s" % " ".join(missing))


main()
