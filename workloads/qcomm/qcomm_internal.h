/*
 * qcomm_internal.h - what qcomm.c shares with its transports (qcomm_tca.c,
 * qcomm_mpi.c): the table of operations each transport fills (as UCX's
 * iface ops), the handle, the rank's state and the error exit.
 *
 * Depends on qcomm.h only.
 */
#ifndef QCOMM_INTERNAL_H
#define QCOMM_INTERNAL_H

#include <stdint.h>

#include "qcomm.h"

/* One transport's operations. declare fills mh->impl; release frees it. */
typedef struct qc_ops {
    void (*init)(void);
    void (*finalize)(void);
    void (*barrier)(void);
    void (*declare)(MsgHandle *mh);
    void (*start)(MsgHandle *mh);
    void (*wait)(MsgHandle *mh);
    int (*query)(MsgHandle *mh);
    void (*release)(MsgHandle *mh);
} qc_ops;

extern const qc_ops qc_tca_ops, qc_mpi_ops, qc_mpi_rma_ops;

struct MsgHandle_s {
    int send;       /* 1: a send, 0: a receive */
    int peer;       /* the other rank */
    int tag;        /* 0 .. QCOMM_TAGS-1: the slot it uses at the sender */
    void *buffer;
    size_t nbytes;
    uint64_t seq;   /* this start's number on (direction, peer, tag): 1, 2, ... */
    int active;     /* started and not yet seen complete */
    int done;       /* the transport saw it complete (mpi-rma's sends, tca's waits) */
    int index;      /* its number among the rank's handles, in declaration order */
    void *impl;     /* the transport's */
};

/* The rank's state (qcomm.c). */
typedef struct qc_state {
    int initialised;
    qcomm_transport transport;
    const qc_ops *ops;
    int rank, size, ndim;
    int dims[QCOMM_MAX_DIM], coords[QCOMM_MAX_DIM];
    int handles;       /* declared so far (numbering) */
    int live;          /* not yet freed */
    /* [peer * QCOMM_TAGS + tag]: a live handle holds it (sends, receives),
     * and the starts so far, which carry on across re-declarations so that
     * a flag word never sees a number twice. */
    uint8_t *send_used, *recv_used;
    uint64_t *send_count, *recv_count;
} qc_state;

extern qc_state qc;

/* Ends the program (status 1) with "qcomm: rank R: CALL: reason". */
void qc_fail(const char *call, const char *format, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Index of (peer, tag) in the per-pair tables. */
static inline size_t qc_pair(int peer, int tag)
{
    return (size_t)peer * QCOMM_TAGS + (size_t)tag;
}

#endif /* QCOMM_INTERNAL_H */
