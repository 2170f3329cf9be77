/*
 * qcomm.h - QUDA's communication interface (lib/comm_quda.h of the QUDA
 * lattice QCD library, names and semantics kept) over three transports,
 * chosen at run time:
 *
 *   tca      one-sided PEACH2 writes, as the QUDA port to HA-PACS/TCA did: the
 *            receiver writes its buffer's tcaHandle + offset into a "remote
 *            address" slot at the sender (PIO, CPU memory); the sender, once
 *            it holds both that address and a send request, DMA-writes the
 *            data (GPU memory) and then a completion flag at the receiver; a
 *            progress thread on each rank polls (qcomm_tca.c).
 *   mpi      persistent point-to-point, what QUDA's comm_mpi.cpp uses:
 *            MPI_Send_init / MPI_Recv_init, MPI_Start, MPI_Wait, MPI_Test.
 *   mpi-rma  MPI one-sided: a dynamic window (MPI_Win_create_dynamic,
 *            MPI_Win_attach), the same address slots and completion flags
 *            as tca, MPI_Put under MPI_Win_lock/unlock (qcomm_mpi.c).
 *
 * Messages are persistent handles: declared once (a buffer, a peer, a size),
 * then comm_start / comm_wait (or comm_query) any number of times; a handle
 * is started again only after its wait (or a query that said done), as in
 * QUDA. A send and the receive it matches are named by the same tag: for the
 * displaced forms QUDA's tag of the displacement (the receive's tag is that
 * of the negated displacement, so a send to +1 in dim 0 matches the peer's
 * receive from -1), for the rank forms the caller's tag (0 .. QCOMM_TAGS-1).
 * Two live handles of one direction between the same ranks may not share a
 * tag. Buffers for tca must be registered memory (tcaMalloc, host or GPU);
 * MPI takes any, and tcaMalloc(tcaMemoryGPU) memory is a GPU buffer to it.
 *
 * Errors end the program as QUDA's errorQuda does: a line on stderr naming
 * the call and the reason, exit status 1 (never a hang, never wrong data).
 *
 * Depends on qcomm_internal.h's backends, p2.h / tca-api.h and MPI.
 */
#ifndef QCOMM_H
#define QCOMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QCOMM_MAX_DIM 4 /* QUDA_MAX_DIM */
#define QCOMM_TAGS 256  /* tags of the rank forms; the displaced forms' fit */

typedef enum qcomm_transport {
    QCOMM_TCA = 0,
    QCOMM_MPI = 1,
    QCOMM_MPI_RMA = 2,
    QCOMM_TRANSPORTS
} qcomm_transport;

/* "tca", "mpi", "mpi-rma". */
const char *qcomm_transport_name(qcomm_transport t);
/* The transport named `name`; -1 if none. */
int qcomm_transport_parse(const char *name);

typedef struct MsgHandle_s MsgHandle;

/* Collective over every rank: the process grid (ndim dims, their product the
 * job's size; rank = x0 + d0 * (x1 + d1 * (x2 + d2 * x3)), QUDA's default
 * lexicographic map with dim 0 fastest) and the transport. Calls MPI_Init
 * itself if no one has (the MPI transports). */
void comm_init(int ndim, const int *dims, qcomm_transport transport);
/* Waits for every live handle's transfers, frees the transport's resources
 * (collective). The program calls MPI_Finalize itself. */
void comm_finalize(void);

int comm_rank(void);
int comm_size(void);
int comm_ndim(void);
int comm_dim(int dim);
int comm_coord(int dim);
/* The rank at this rank's coordinates + displacement (periodic). */
int comm_rank_displaced(const int displacement[]);
/* QUDA: comm_neighbor_rank(dir, dim), dir 0 backwards, 1 forwards. */
int comm_neighbor_rank(int dir, int dim);
/* A barrier over every rank, on the transport's own network. */
void comm_barrier(void);
qcomm_transport comm_transport(void);

MsgHandle *comm_declare_send_displaced(void *buffer, const int displacement[], size_t nbytes);
MsgHandle *comm_declare_receive_displaced(void *buffer, const int displacement[], size_t nbytes);
MsgHandle *comm_declare_send_rank(void *buffer, int rank, int tag, size_t nbytes);
MsgHandle *comm_declare_recv_rank(void *buffer, int rank, int tag, size_t nbytes);
/* QUDA's macros: one step in `dim`, dir -1 or +1. */
MsgHandle *comm_declare_send_relative(void *buffer, int dim, int dir, size_t nbytes);
MsgHandle *comm_declare_receive_relative(void *buffer, int dim, int dir, size_t nbytes);

void comm_start(MsgHandle *mh);
/* Returns when the handle's transfer is complete: a send's buffer may be
 * reused, a receive's data is in its buffer. */
void comm_wait(MsgHandle *mh);
/* 1 if complete (as comm_wait would return at once), else 0; advances the
 * transport's progress. */
int comm_query(MsgHandle *mh);
/* Frees the handle (it must not be in flight) and sets *mh to NULL. */
void comm_free(MsgHandle **mh);

#ifdef __cplusplus
}
#endif

#endif /* QCOMM_H */
