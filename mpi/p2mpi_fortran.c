/*
 * p2mpi_fortran.c - the conversions the generated Fortran bindings
 * (fortran_calls.c; README.md, "Fortran") make between Open MPI's Fortran
 * arguments and the layer's C calls, and the requests' Fortran handles
 * (MPI_Request_c2f, MPI_Request_f2c: Open MPI's would read the layer's
 * requests as its own). Depends on the request unit and the units below
 * it; the groups' handles are p2mpi_comm.c's (MPI_Group_f2c).
 */
#define _GNU_SOURCE
#include "p2mpi_fortran.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Open MPI's Fortran ABI, as this library is built against it (mpif-config.h:
 * MPI_STATUS_SIZE 6; ompi_info: "Fort logical value true: 1"). */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is a C int");
_Static_assert(sizeof(MPI_Status) == 6 * sizeof(MPI_Fint), "a Fortran status is a C MPI_Status");
#define PF_TRUE 1

/* Open MPI's Fortran sentinels (libmpi.so; ompi/mpi/fortran/base/constants.h):
 * only their addresses mean anything. gfortran appends one underscore. */
extern int mpi_fortran_in_place_, mpi_fortran_bottom_;
extern int *mpi_fortran_status_ignore_, *mpi_fortran_statuses_ignore_;

void *pf_buf(void *f)
{
    if (f == (void *)&mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    if (f == (void *)&mpi_fortran_bottom_)
        return MPI_BOTTOM;
    return f;
}

/* ---- Handles ------------------------------------------------------------------ */

MPI_Comm pf_comm(MPI_Fint f, const char *call)
{
    MPI_Comm c = PMPI_Comm_f2c(f);
    if (!c)
        pm_fatal("%s: Fortran communicator handle %d names no communicator (MPI_ERR_COMM)", call,
                 (int)f);
    return c;
}

MPI_Comm pf_comm_any(MPI_Fint f)
{
    MPI_Comm c = E.inited && !E.finalized ? PMPI_Comm_f2c(f) : NULL;
    return c ? c : MPI_COMM_WORLD;
}

MPI_Datatype pf_type(MPI_Fint f, const char *call)
{
    MPI_Datatype t = PMPI_Type_f2c(f);
    if (!t)
        pm_fatal("%s: Fortran datatype handle %d names no datatype (MPI_ERR_TYPE)", call, (int)f);
    return t;
}

MPI_Op pf_op(MPI_Fint f, const char *call)
{
    MPI_Op o = PMPI_Op_f2c(f);
    if (!o)
        pm_fatal("%s: Fortran op handle %d names no op (MPI_ERR_OP)", call, (int)f);
    return o;
}

MPI_Info pf_info(MPI_Fint f, const char *call)
{
    MPI_Info i = PMPI_Info_f2c(f);
    if (!i)
        pm_fatal("%s: Fortran info handle %d names no info (MPI_ERR_INFO)", call, (int)f);
    return i;
}

/* A request's Fortran handle is its id (p2mpi_request.c numbers requests
 * from 1 and finds them by id; Open MPI's Fortran MPI_REQUEST_NULL is 0). */
MPI_Fint MPI_Request_c2f(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return 0;
    uint64_t id = as_req(h)->id;
    if (id > INT_MAX)
        pm_fatal("request %llu has no Fortran handle: Fortran handles end at %d (MPI_ERR_REQUEST)",
                 (unsigned long long)id, INT_MAX);
    return (MPI_Fint)id;
}

MPI_Request MPI_Request_f2c(MPI_Fint f) { return pf_req(f, "MPI_Request_f2c"); }

MPI_Request pf_req(MPI_Fint f, const char *call)
{
    if (f == 0)
        return MPI_REQUEST_NULL;
    pm_req *r = f > 0 ? pm_req_find((uint64_t)f) : NULL;
    if (!r)
        pm_fatal("%s: Fortran request handle %d names no request (MPI_ERR_REQUEST)", call, (int)f);
    return as_handle(r);
}

MPI_Request *pf_reqs_in(const MPI_Fint *f, int n, MPI_Request *stack, const char *call)
{
    if (n < 0)
        pm_fatal("%s: count %d is negative (MPI_ERR_COUNT)", call, n);
    MPI_Request *c = n <= PF_STACK ? stack : malloc(sizeof *c * (size_t)n);
    if (!c)
        pm_fatal("out of memory");
    for (int i = 0; i < n; i++)
        c[i] = pf_req(f[i], call);
    return c;
}

void pf_reqs_out(MPI_Fint *f, int n, MPI_Request *c, MPI_Request *stack)
{
    for (int i = 0; i < n; i++)
        f[i] = MPI_Request_c2f(c[i]);
    if (c != stack)
        free(c);
}

/* ---- Statuses, logicals, indices -------------------------------------------------- */

static int status_ignored(const MPI_Fint *f)
{
    return f == (const MPI_Fint *)&mpi_fortran_status_ignore_ || f == MPI_F_STATUS_IGNORE;
}

static int statuses_ignored(const MPI_Fint *f)
{
    return f == (const MPI_Fint *)&mpi_fortran_statuses_ignore_ || f == MPI_F_STATUSES_IGNORE;
}

MPI_Status *pf_status(MPI_Fint *f, MPI_Status *tmp) { return status_ignored(f) ? MPI_STATUS_IGNORE : tmp; }

void pf_status_out(MPI_Fint *f, const MPI_Status *tmp)
{
    if (!status_ignored(f))
        memcpy(f, tmp, sizeof *tmp);
}

const MPI_Status *pf_status_in(const MPI_Fint *f, MPI_Status *tmp)
{
    memcpy(tmp, f, sizeof *tmp);
    return tmp;
}

MPI_Status *pf_statuses(MPI_Fint *f, int n, MPI_Status *stack)
{
    if (statuses_ignored(f))
        return MPI_STATUSES_IGNORE;
    MPI_Status *c = n <= PF_STACK ? stack : malloc(sizeof *c * (size_t)n);
    if (!c)
        pm_fatal("out of memory");
    if (n > 0)
        memcpy(c, f, sizeof *c * (size_t)n);
    return c;
}

void pf_statuses_out(MPI_Fint *f, int n, MPI_Status *c, MPI_Status *stack)
{
    if (c == MPI_STATUSES_IGNORE)
        return;
    if (n > 0)
        memcpy(f, c, sizeof *c * (size_t)n);
    if (c != stack)
        free(c);
}

void pf_logical(MPI_Fint *f, int v) { *f = v ? PF_TRUE : 0; }

void pf_index(MPI_Fint *f)
{
    if (*f != MPI_UNDEFINED)
        ++*f;
}

void pf_indices(MPI_Fint *f, const MPI_Fint *count)
{
    if (*count != MPI_UNDEFINED)
        for (int i = 0; i < *count; i++)
            ++f[i];
}
