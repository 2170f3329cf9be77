/*
 * rk_dma_sizes: DMA data correctness over sizes, offsets and memory kinds.
 *
 *   p2run -n N -- rk_dma_sizes -p A,B [-k KINDS] [-r]
 *
 * Rank A sends to rank B (and with -r then B to A) one DMA per case: sizes
 * 1 B .. 16 MiB, from odd source offsets to odd destination offsets (small
 * sizes: every combination of +0, +1, +3, +13 on both sides), for each
 * source->destination memory kind pair in KINDS ("cc,gg,cg,gc": c = tcaMemoryCPU,
 * g = tcaMemoryGPU; default "cc"). Before each case the receiver covers its
 * destination buffer with guard bytes; after the notification it checks the
 * transferred range byte by byte and the guard bytes around it (to the end of
 * a margin after the range). Other ranks only take part in the exchange.
 */
#include <getopt.h>

#include "rk_common.h"

#define SLOT 3
#define CHANNEL 0
#define MARGIN 4096 /* guard bytes checked after the destination range */
#define MAX_OFFSET 13

static const size_t sizes[] = {1,    2,    3,    7,     8,     63,          64,
                               65,   255,  4095, 4097,  65537, (1u << 20) + 13,
                               16u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAX_SIZE (16u << 20)
#define SMALL_LIMIT 4097 /* sizes up to this run every offset combination */
static const size_t offsets[] = {0, 1, 3, 13};
#define NOFFSETS (sizeof offsets / sizeof offsets[0])
#define BUF_BYTES (MAX_SIZE + MAX_OFFSET + MARGIN)

typedef struct published {
    tcaHandle dst[2]; /* by tcaMemoryKind */
    tcaHandle signal;
} published;

typedef struct kind_pair {
    tcaMemoryKind src, dst;
} kind_pair;

static int parse_kinds(const char *text, kind_pair *pairs, int max)
{
    int n = 0;
    for (const char *p = text; *p;) {
        if (n == max || (p[0] != 'c' && p[0] != 'g') || (p[1] != 'c' && p[1] != 'g') ||
            (p[2] != ',' && p[2] != '\0'))
            rk_fail("-k: '%s' is not a list like cc,gg,cg,gc", text);
        pairs[n].src = p[0] == 'g' ? tcaMemoryGPU : tcaMemoryCPU;
        pairs[n].dst = p[1] == 'g' ? tcaMemoryGPU : tcaMemoryCPU;
        n++;
        p += p[2] ? 3 : 2;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *pair_text = "0,1", *kinds_text = "cc";
    int reverse = 0, opt;
    while ((opt = getopt(argc, argv, "p:k:r")) != -1) {
        switch (opt) {
        case 'p': pair_text = optarg; break;
        case 'k': kinds_text = optarg; break;
        case 'r': reverse = 1; break;
        default: rk_fail("usage: rk_dma_sizes -p A,B [-k cc,gg,cg,gc] [-r]");
        }
    }
    rk_init(2);
    int a, b;
    rk_parse_pair(pair_text, &a, &b);
    kind_pair kinds[8];
    int nkinds = parse_kinds(kinds_text, kinds, 8);
    const int rank = p2_rank(), size = p2_size();
    const int active = rank == a || rank == b;

    /* Which kinds this job needs, as source and as destination. */
    int need[2] = {0, 0};
    for (int k = 0; k < nkinds; k++)
        need[kinds[k].src] = need[kinds[k].dst] = 1;
    rk_buf src[2] = {{0}}, dst[2] = {{0}};
    rk_link link = {0};
    published mine = {0};
    if (active) {
        for (int k = 0; k < 2; k++) {
            if (!need[k])
                continue;
            rk_alloc(&src[k], BUF_BYTES, (tcaMemoryKind)k);
            rk_alloc(&dst[k], BUF_BYTES, (tcaMemoryKind)k);
            mine.dst[k] = dst[k].handle;
        }
        rk_link_alloc(&link);
        mine.signal = link.mine.handle;
    }
    published *all = calloc((size_t)size, sizeof *all);
    if (!all)
        rk_fail("out of memory");
    RK_TCA(p2_exchange(&mine, all, sizeof mine));
    if (!active) {
        free(all);
        return 0;
    }
    const int peer = rank == a ? b : a;
    rk_link_connect(&link, &all[peer].signal);

    uint32_t seq = 0;
    unsigned cases = 0;
    double sim_start = p2_wtime();
    for (int dir = 0; dir < (reverse ? 2 : 1); dir++) {
        const int sender = dir ? b : a;
        const int sending = rank == sender;
        for (int k = 0; k < nkinds; k++) {
            tcaMemoryKind sk = kinds[k].src, dk = kinds[k].dst;
            for (size_t s = 0; s < NSIZES; s++) {
                const size_t n = sizes[s];
                /* Small sizes: every pair of offsets; large: one odd pair each. */
                size_t combos = n <= SMALL_LIMIT ? NOFFSETS * NOFFSETS : 1;
                for (size_t c = 0; c < combos; c++) {
                    size_t soff = n <= SMALL_LIMIT ? offsets[c / NOFFSETS] : offsets[1 + s % 3];
                    size_t doff = n <= SMALL_LIMIT ? offsets[c % NOFFSETS] : offsets[1 + (s + 1) % 3];
                    seq++;
                    cases++;
                    const int tag = (int)(seq & TCA_WAIT_TAG_MAX);
                    const size_t end = doff + n + MARGIN;
                    char what[160];
                    snprintf(what, sizeof what,
                             "%d->%d %s->%s %zu bytes, src +%zu, dst +%zu (case %u)", sender,
                             sender == a ? b : a, rk_kind_name(sk), rk_kind_name(dk), n, soff,
                             doff, seq);
                    if (!sending) {
                        rk_guard(dst[dk].bytes, 0, end);
                        rk_signal(&link); /* ready */
                        RK_TCA(tcaWaitDMARecvDesc(&all[peer].dst[dk], SLOT, tag));
                        rk_check_guard(dst[dk].bytes, 0, doff, what);
                        rk_check(dst[dk].bytes + doff, n, seq, soff, doff, what);
                        rk_check_guard(dst[dk].bytes, doff + n, end, what);
                    } else {
                        /* The whole source buffer carries the pattern, so a
                         * read from the wrong offset brings wrong bytes. */
                        rk_fill(src[sk].bytes, soff + n + MAX_OFFSET, seq, 0);
                        rk_signal_wait();
                        rk_dma_once(CHANNEL, &all[peer].dst[dk], doff, &src[sk].handle, soff, n,
                                    tcaDMANotify, SLOT, tag);
                    }
                }
            }
        }
    }
    /* The last receiver tells the last sender that all was checked. */
    if (rank == (reverse ? b : a))
        rk_signal_wait();
    else
        rk_signal(&link);
    printf("rank %d: %u cases with peer %d, all bytes right (%.3f us simulated)\n", rank, cases,
           peer, (p2_wtime() - sim_start) * 1e6);
    rk_link_close(&link);
    for (int k = 0; k < 2; k++) {
        rk_release(&src[k]);
        rk_release(&dst[k]);
    }
    free(all);
    return 0;
}
