/*
 * coll_rules.c - the selection rules file (P2_COLL_RULES): its reader and
 * the first rule that names an eligible algorithm for a plan. Lines:
 *
 *     # comment
 *     <collective> <ranks LO-HI|N|*> <bytes LO-HI|N|*> <algorithm>
 *
 * sizes take K, M, G (powers of 1024). The file is read once, at the first
 * collective that asks; a bad line: "FILE:LINE: why" on stderr (once) and
 * TCA_ERROR_INVALID_ARGUMENT from every collective.
 *
 * Depends on the algorithm table (coll_algorithms.c) alone; the choice
 * (coll_select.c) uses it.
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
#include "coll_rules.h"

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

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end || v > (~0ull >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

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
        return parse_size(buf, lo) || (*hi = *lo, 0);
    *dash = '\0';
    if (parse_size(buf, lo) || parse_size(dash + 1, hi) || *lo > *hi)
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
            else if (!(r.algo = coll_algorithm_find((coll_kind)k, w[3])))
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

tcaresult coll_rules_find(const coll_plan *p, const coll_algorithm **algo)
{
    if (!rules_state.loaded) {
        rules_state.loaded = 1;
        const char *path = getenv("P2_COLL_RULES");
        rules_state.status = path && *path ? load_rules(path) : TCA_SUCCESS;
    }
    if (rules_state.status != TCA_SUCCESS)
        return rules_state.status;
    *algo = NULL;
    for (size_t i = 0; i < rules_state.count; i++) {
        const rule *r = &rules_state.rules[i];
        if (r->kind == p->kind && (uint64_t)p->size >= r->ranks_lo &&
            (uint64_t)p->size <= r->ranks_hi && p->bytes >= r->bytes_lo &&
            p->bytes <= r->bytes_hi && r->algo->eligible(p)) {
            *algo = r->algo;
            break;
        }
    }
    return TCA_SUCCESS;
}
