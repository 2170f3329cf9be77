/*
 * chol_layout.c - the Cholesky's 2D block-cyclic layout (chol.h): who owns
 * each tile of the lower triangle, which ranks use each final tile (the
 * tasks that read it), and where each receiver takes it: a landing slot per
 * (tile, receiver), numbered in tile order, and per sender a run of inbox
 * entries. Every rank computes the same tables for every rank, so a sender
 * knows the slot and entry at the receiver without asking. Pure data: the
 * C library only.
 */
#include <stdlib.h>
#include <string.h>

#include "chol.h"

size_t chol_tile_bytes(const chol_layout *l)
{
    return (size_t)l->nb * (size_t)l->nb * sizeof(double);
}

static void mark(chol_layout *l, int t, int i, int j)
{
    int r = l->owner[chol_tile(i, j)];
    if (r != l->owner[t])
        l->need[(size_t)t * l->size + r] = 1;
}

int chol_layout_init(chol_layout *l, int nt, int nb, int p, int q, int rank)
{
    memset(l, 0, sizeof *l);
    l->nt = nt, l->nb = nb, l->p = p, l->q = q, l->size = p * q, l->rank = rank;
    l->ntiles = nt * (nt + 1) / 2;
    const size_t nt_ = (size_t)l->ntiles, sz = (size_t)l->size;
    l->ti = calloc(nt_, sizeof *l->ti);
    l->tj = calloc(nt_, sizeof *l->tj);
    l->owner = calloc(nt_, sizeof *l->owner);
    l->need = calloc(nt_ * sz, 1);
    l->land = malloc(nt_ * sz * sizeof *l->land);
    l->nland = calloc(sz, sizeof *l->nland);
    l->inbox = calloc(sz * sz, sizeof *l->inbox);
    l->inbox_total = calloc(sz, sizeof *l->inbox_total);
    l->owned = calloc(sz, sizeof *l->owned);
    l->receivers = calloc(nt_, sizeof *l->receivers);
    if (!l->ti || !l->tj || !l->owner || !l->need || !l->land || !l->nland || !l->inbox ||
        !l->inbox_total || !l->owned || !l->receivers) {
        chol_layout_free(l);
        return -1;
    }
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++) {
            int t = chol_tile(i, j);
            l->ti[t] = i, l->tj[t] = j;
            l->owner[t] = (i % p) * q + (j % q);
            l->owned[l->owner[t]]++;
        }
    /* Who reads final tile (a, k): L(k,k) the TRSMs below it; L(a,k), a > k,
     * the SYRK of (a,a), the GEMMs of row a left of the diagonal (with
     * L(j,k)) and of column a below it (with L(m,k)). */
    for (int t = 0; t < l->ntiles; t++) {
        int a = l->ti[t], k = l->tj[t];
        if (a == k) {
            for (int i = k + 1; i < nt; i++)
                mark(l, t, i, k);
            continue;
        }
        mark(l, t, a, a);
        for (int j = k + 1; j < a; j++)
            mark(l, t, a, j);
        for (int m = a + 1; m < nt; m++)
            mark(l, t, m, a);
    }
    /* Landing slots in tile order; inbox runs per (receiver, sender). */
    int *cap = calloc(sz * sz, sizeof *cap); /* [r * size + s] */
    if (!cap) {
        chol_layout_free(l);
        return -1;
    }
    for (int t = 0; t < l->ntiles; t++)
        for (int r = 0; r < l->size; r++) {
            size_t k = (size_t)t * sz + (size_t)r;
            l->land[k] = -1;
            if (!l->need[k])
                continue;
            l->land[k] = l->nland[r]++;
            l->receivers[t]++;
            cap[(size_t)r * sz + (size_t)l->owner[t]]++;
        }
    for (int r = 0; r < l->size; r++)
        for (int s = 0; s < l->size; s++) {
            l->inbox[(size_t)r * sz + (size_t)s] = l->inbox_total[r];
            l->inbox_total[r] += cap[(size_t)r * sz + (size_t)s];
        }
    free(cap);
    return 0;
}

void chol_layout_free(chol_layout *l)
{
    free(l->ti);
    free(l->tj);
    free(l->owner);
    free(l->need);
    free(l->land);
    free(l->nland);
    free(l->inbox);
    free(l->inbox_total);
    free(l->owned);
    free(l->receivers);
    memset(l, 0, sizeof *l);
}
