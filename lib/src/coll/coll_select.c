/*
 * coll_select.c - which algorithm a collective runs: the cost model's
 * parameters (one table), the algorithms of each collective, and the choice:
 *
 *   1. P2_COLL_<COLLECTIVE>=<algorithm> (e.g. P2_COLL_ALLREDUCE=rsag) forces
 *      one; not eligible for the call (or unknown): TCA_ERROR_NOT_SUPPORTED.
 *   2. P2_COLL_RULES=<file>: the first rule matching the collective, the
 *      communicator size and the bytes per rank names the algorithm (an
 *      ineligible one is skipped). Lines:
 *          # comment
 *          <collective> <ranks LO-HI|N|*> <bytes LO-HI|N|*> <algorithm>
 *      sizes take K, M, G (powers of 1024). A bad line: "FILE:LINE: why" on
 *      stderr (once) and TCA_ERROR_INVALID_ARGUMENT from every collective.
 *   3. Otherwise the eligible algorithm with the lowest predicted time
 *      (the first listed on a tie).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll.h"
#include "rt/rt.h"
#include "wl_options.h" /* the one size parser (emu/) */

/*
 * The cost model's figures. Rates come from the model's parameters as the
 * simulator hands them to the ranks (rt.h; params.def): a DMA streams at the
 * lower of a link's payload rate (lanes, GT/s, encoding, MPS and TLP
 * overhead) and the source memory's read rate (host_read_gbps,
 * gpu_read_gbps); a PIO store costs pio_store_ns per pio_store_bytes; host
 * copies and reductions and the GPU kernel cost host_memcpy_gbps,
 * host_reduce_gbps, gpu_kernel_ns and gpu_reduce_gbps, the same figures
 * coll_transport.c charges to the rank's clock for that work. The two
 * latencies are end-to-end figures of the model with the default parameters
 * (the golden tests pin them: DMA 8 B 1.896 us, PIO 8 B 1.000 us); a
 * parameter file that changes them leaves the cost model's choice slightly
 * off, never the simulated times. The initial values are params.def's
 * defaults, used until coll_cost_load runs.
 */
coll_cost_params coll_cost = {
    .dma_latency_s = 1.896e-6, /* DMA 8 B CPU-CPU one way, model (published 1.9 us) */
    .pio_latency_s = 1.000e-6, /* PIO 8 B CPU-CPU one way, model (published 1.0 us) */
    .pio_store_s = 62e-9,      /* pio_store_ns per 8-byte store */
    .pio_step_s = 230e-9,      /* coll_pio_step_ns */
    .dma_cpu_Bps = 3.657e9,    /* min(link payload 4 GB/s x 256/280, host_read_gbps 12) */
    .dma_gpu_Bps = 2.85e9,     /* gpu_read_gbps */
    .memcpy_Bps = 10e9,        /* host_memcpy_gbps */
    .reduce_cpu_Bps = 4e9,     /* host_reduce_gbps */
    .gpu_kernel_s = 5e-6,      /* gpu_kernel_ns */
    .reduce_gpu_Bps = 80e9,    /* gpu_reduce_gbps */
};

void coll_cost_load(void)
{
    const p2_rt *rt = p2_rt_get();
    if (!rt || rt->link_payload_Bps <= 0)
        return;
    double link = rt->link_payload_Bps;
    coll_cost.dma_cpu_Bps = rt->host_read_Bps < link ? rt->host_read_Bps : link;
    coll_cost.dma_gpu_Bps = rt->gpu_read_Bps < link ? rt->gpu_read_Bps : link;
    coll_cost.pio_store_s = (double)p2_ns_ps(rt->prm.pio_store_ns) * 1e-12 * 8.0 / rt->prm.pio_store_bytes;
    coll_cost.pio_step_s = (double)p2_ns_ps(rt->prm.coll_pio_step_ns) * 1e-12;
    coll_cost.memcpy_Bps = p2_gbps_Bps(rt->prm.host_memcpy_gbps);
    coll_cost.reduce_cpu_Bps = p2_gbps_Bps(rt->prm.host_reduce_gbps);
    coll_cost.gpu_kernel_s = (double)p2_ns_ps(rt->prm.gpu_kernel_ns) * 1e-12;
    coll_cost.reduce_gpu_Bps = p2_gbps_Bps(rt->prm.gpu_reduce_gbps);
}

/* The comm whose ranks coll_share measures: the one being planned. */
static p2_comm_t share_comm;

/* Walks the route from node a to node b: calls visit(cable) for every cable
 * (node * 4 + port) on the way; returns the cables, or -1 without a route. */
static int route_cables(const p2_rt *rt, unsigned a, unsigned b, int *cables, int max)
{
    int k = 0;
    while (a != b) {
        if (a >= P2_JOB_MAX_RANKS || b >= P2_JOB_MAX_RANKS || k >= max)
            return -1;
        unsigned port = rt->route_port[a][b];
        if (port >= 4 || rt->port_peer[a][port] == 0xff)
            return -1;
        cables[k++] = (int)(a * 4u + port);
        a = rt->port_peer[a][port];
    }
    return k;
}

#define NCABLES (P2_JOB_MAX_RANKS * 4)

/* Without routes: ranks in order along one ring. */
static double ring_share(int d, int n)
{
    int dd = d % n, h = dd < n - dd ? dd : n - dd;
    return h > 1 ? (double)h : 1.0;
}

double coll_share(int d, int n, coll_pattern pat)
{
    const p2_rt *rt = p2_rt_get();
    if (!rt || !rt->route_port || !share_comm || share_comm->size != n)
        return ring_share(d, n);
    static uint16_t load[NCABLES];
    memset(load, 0, sizeof load);
    int cables[P2_JOB_MAX_RANKS];
    for (int r = 0; r < n; r++) {
        int q = pat == COLL_XOR ? r ^ d : (r + d) % n;
        if (q >= n || q == r)
            continue;
        int k = route_cables(rt, rt->rank_node[share_comm->world_rank[r]],
                             rt->rank_node[share_comm->world_rank[q]], cables, P2_JOB_MAX_RANKS);
        if (k < 0) /* no PEACH2 route between them */
            return ring_share(d, n);
        for (int i = 0; i < k; i++)
            load[cables[i]]++;
    }
    int h = 0;
    for (int c = 0; c < NCABLES; c++)
        if (load[c] > h)
            h = load[c];
    return h > 1 ? (double)h : 1.0;
}

const char *const coll_kind_names[COLL_KINDS] = {
    "barrier", "bcast", "scatter", "gather", "reduce", "allgather", "allreduce"};

static const coll_algorithm *const algorithms[] = {
    &coll_barrier_dissemination,       &coll_bcast_binomial,
    &coll_scatter_linear,              &coll_gather_linear,
    &coll_reduce_gather,               &coll_reduce_gather_gpu,
    &coll_allgather_recursive_doubling,
    &coll_allgather_bruck,             &coll_allgather_ring,
    &coll_allreduce_dissemination_pio, &coll_allreduce_dissemination,
    &coll_allreduce_rsag,
};
#define NALGORITHMS (sizeof algorithms / sizeof algorithms[0])

static const coll_algorithm *find(coll_kind kind, const char *name)
{
    for (size_t i = 0; i < NALGORITHMS; i++)
        if (algorithms[i]->kind == kind && strcmp(algorithms[i]->name, name) == 0)
            return algorithms[i];
    return NULL;
}

/* ---- Rules file ----------------------------------------------------------- */
typedef struct rule {
    coll_kind kind;
    uint64_t ranks_lo, ranks_hi, bytes_lo, bytes_hi;
    const coll_algorithm *algo;
} rule;

static struct {
    int loaded;
    tcaresult status;
    rule *rules;
    size_t count;
} rules_state;

static int parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
    if (strcmp(s, "*") == 0) {
        *lo = 0;
        *hi = ~0ull;
        return 0;
    }
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *dash = strchr(buf, '-');
    if (!dash)
        return wl_parse_size(buf, lo) || (*hi = *lo, 0);
    *dash = '\0';
    if (wl_parse_size(buf, lo) || wl_parse_size(dash + 1, hi) || *lo > *hi)
        return -1;
    return 0;
}

static tcaresult load_rules(const char *path)
{
    /* O_NONBLOCK: opening a FIFO would wait for a writer; a device or FIFO
     * would never end (or never start) the file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "p2coll: P2_COLL_RULES: %s: cannot open: %s\n", path, strerror(errno));
        return TCA_ERROR_INVALID_ARGUMENT;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "p2coll: P2_COLL_RULES: %s: not a regular file\n", path);
        close(fd);
        return TCA_ERROR_INVALID_ARGUMENT;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        fprintf(stderr, "p2coll: P2_COLL_RULES: %s: cannot open: %s\n", path, strerror(errno));
        close(fd);
        return TCA_ERROR_INVALID_ARGUMENT;
    }
    char line[512];
    int lineno = 0;
    tcaresult status = TCA_SUCCESS;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char w[5][128];
        int nw = sscanf(line, "%127s %127s %127s %127s %127s", w[0], w[1], w[2], w[3], w[4]);
        if (nw <= 0)
            continue;
        rule r = {0};
        const char *why = NULL;
        if (nw != 4)
            why = "expected: COLLECTIVE RANKS BYTES ALGORITHM";
        else {
            int k;
            for (k = 0; k < COLL_KINDS; k++)
                if (strcmp(w[0], coll_kind_names[k]) == 0)
                    break;
            if (k == COLL_KINDS)
                why = "unknown collective";
            else if (parse_range(w[1], &r.ranks_lo, &r.ranks_hi))
                why = "bad rank range (N, LO-HI or *)";
            else if (parse_range(w[2], &r.bytes_lo, &r.bytes_hi))
                why = "bad byte range (N, LO-HI or *, with K/M/G)";
            else if (!(r.algo = find((coll_kind)k, w[3])))
                why = "no such algorithm for this collective";
            r.kind = (coll_kind)k;
        }
        if (why) {
            fprintf(stderr, "p2coll: %s:%d: %s\n", path, lineno, why);
            status = TCA_ERROR_INVALID_ARGUMENT;
            break;
        }
        rule *grown = realloc(rules_state.rules, (rules_state.count + 1) * sizeof *grown);
        if (!grown) {
            status = TCA_ERROR_OUT_OF_MEMORY;
            break;
        }
        rules_state.rules = grown;
        rules_state.rules[rules_state.count++] = r;
    }
    fclose(f);
    return status;
}

static void forced_var(coll_kind kind, char *var, size_t size)
{
    snprintf(var, size, "P2_COLL_%s", coll_kind_names[kind]);
    for (char *c = var; *c; c++)
        *c = (char)toupper((unsigned char)*c);
}

static const char *forced_env(coll_kind kind)
{
    char var[64];
    forced_var(kind, var, sizeof var);
    return getenv(var);
}

/* A forced algorithm that cannot be used: NOT_SUPPORTED alone would not
 * say which variable, nor what it may name. */
static void report_forced(const coll_plan *p, const char *name, int known)
{
    char var[64], list[256] = "";
    forced_var(p->kind, var, sizeof var);
    for (size_t i = 0; i < NALGORITHMS; i++)
        if (algorithms[i]->kind == p->kind)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                     algorithms[i]->name);
    if (known)
        fprintf(stderr, "p2coll: %s=%s cannot run this call (count %zu, %d ranks, %s buffers); "
                        "%s algorithms: %s\n",
                var, name, p->count, p->size, p->send.gpu || p->recv.gpu ? "GPU" : "host",
                coll_kind_names[p->kind], list);
    else
        fprintf(stderr, "p2coll: %s=%s: no such %s algorithm (%s)\n", var, name,
                coll_kind_names[p->kind], list);
}

void coll_forced_name(coll_kind kind, char *out, size_t size)
{
    const char *f = forced_env(kind);
    snprintf(out, size, "%s", f ? f : "");
}

tcaresult coll_select(coll_plan *p)
{
    /* 1. The environment variable. */
    const char *forced = forced_env(p->kind);
    if (forced && *forced) {
        const coll_algorithm *a = find(p->kind, forced);
        if (!a || !a->eligible(p)) {
            report_forced(p, forced, a != NULL);
            return TCA_ERROR_NOT_SUPPORTED;
        }
        p->algo = a;
        p->forced = 1;
        return TCA_SUCCESS;
    }
    /* 2. The rules file. */
    if (!rules_state.loaded) {
        rules_state.loaded = 1;
        const char *path = getenv("P2_COLL_RULES");
        rules_state.status = path && *path ? load_rules(path) : TCA_SUCCESS;
    }
    if (rules_state.status != TCA_SUCCESS)
        return rules_state.status;
    for (size_t i = 0; i < rules_state.count; i++) {
        const rule *r = &rules_state.rules[i];
        if (r->kind == p->kind && (uint64_t)p->size >= r->ranks_lo &&
            (uint64_t)p->size <= r->ranks_hi && p->bytes >= r->bytes_lo &&
            p->bytes <= r->bytes_hi && r->algo->eligible(p)) {
            p->algo = r->algo;
            p->forced = 1;
            return TCA_SUCCESS;
        }
    }
    /* 3. The cost model. */
    p->algo = coll_cheapest(p, coll_eligible_mask(p), p->send.gpu || p->recv.gpu);
    return p->algo ? TCA_SUCCESS : TCA_ERROR_NOT_SUPPORTED;
}

uint32_t coll_eligible_mask(const coll_plan *p)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < NALGORITHMS; i++)
        if (algorithms[i]->kind == p->kind && algorithms[i]->eligible(p))
            mask |= 1u << i;
    return mask;
}

const coll_algorithm *coll_cheapest(const coll_plan *p, uint32_t mask, int gpu)
{
    const coll_algorithm *best = NULL;
    double best_s = 0;
    share_comm = p->comm;
    for (size_t i = 0; i < NALGORITHMS; i++) {
        if (!(mask >> i & 1) || algorithms[i]->kind != p->kind)
            continue;
        double t = algorithms[i]->cost(p->size, p->bytes, gpu);
        if (!best || t < best_s) {
            best_s = t;
            best = algorithms[i];
        }
    }
    return best;
}
