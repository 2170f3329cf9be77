/*
 * validate - the validation suite: every published figure the model must
 * reproduce (figures.txt beside this source: the figure, its source, the
 * command, a tolerance), run under p2run, with model, published, error and a
 * verdict per figure.
 *
 *   validate [--quick] [--only ID[,ID...]] [--table FILE] [--out DIR]
 *            [--p2run PATH] [--workloads DIR] [--timeout SECONDS]
 *            [--csv FILE] [--json FILE]
 *
 * A case is one run and one CSV row (a point: the model's figure against the
 * published one, within a relative tolerance), or two runs swept over sizes
 * (a crossover: the largest size up to which the first is better, within a
 * number of power-of-two steps of the published one). Every run's CSV and
 * log stay in --out (default validation-out), for plots/validation.py, which
 * draws a PNG per figure and writes the results page from results.csv.
 * --quick runs the cases marked quick (ctest -L validation); --only takes ids
 * or shell patterns of ids (pub_*). A run that several cases share (the same
 * run string, say one sweep whose sizes are several published points) runs
 * once per invocation: the later cases reuse its CSV, copied to their own
 * names, and their log names the case that ran it.
 *
 * Exit status: 0 when every case passes, 1 when one fails or its run fails,
 * 2 for a bad flag or table line (named as FILE:LINE).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wl_job.h"
#include "wl_options.h"
#include "wl_report.h"

#define PROGRAM "validate"
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

#define MAX_RUNS 2     /* a point: one run; a crossover: two */
#define MAX_ARGS 48
#define MAX_ROWS 512
#define MAX_COLS 16

typedef struct vcase {
    char id[48], figure[160], unit[16], source[200], line_ref[PATH_MAX + 16];
    int quick, crossover, nruns;
    double published, tolerance; /* relative (point) or steps (crossover) */
    char run[MAX_RUNS][400], select[MAX_RUNS][120], metric[MAX_RUNS][40];
} vcase;

typedef struct options {
    int quick;
    const char *only, *table, *out, *p2run, *workloads, *csv, *json;
    double timeout_s;
} options;

/* ---- Text helpers ----------------------------------------------------------- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* Splits s at every `sep` (a string) into at most max trimmed parts. */
static int split(char *s, const char *sep, char **parts, int max)
{
    int n = 0;
    size_t seplen = strlen(sep);
    for (;;) {
        char *at = strstr(s, sep);
        if (n == max)
            return -1;
        if (at)
            *at = '\0';
        parts[n++] = trim(s);
        if (!at)
            return n;
        s = at + seplen;
    }
}

static int copy(char *dst, size_t size, const char *src)
{
    return snprintf(dst, size, "%s", src) < (int)size ? 0 : -1;
}

/* ---- The table ---------------------------------------------------------------- */

/* Fields: id | quick | figure | published | unit | tolerance | source | run | select | metric */
static int parse_line(char *line, vcase *c, const char *where)
{
    char *f[10];
    int n = split(line, "|", f, 10);
    if (n != 10) {
        fprintf(stderr, "%s: %d fields, expected 10 (id | quick | figure | published | unit | "
                        "tolerance | source | run | select | metric)\n", where, n < 0 ? 11 : n);
        return -1;
    }
    memset(c, 0, sizeof *c);
    copy(c->line_ref, sizeof c->line_ref, where);
    char *end;
    if (copy(c->id, sizeof c->id, f[0]) || !*c->id || copy(c->figure, sizeof c->figure, f[2]) ||
        copy(c->unit, sizeof c->unit, f[4]) || copy(c->source, sizeof c->source, f[6])) {
        fprintf(stderr, "%s: an empty or too long id, figure, unit or source\n", where);
        return -1;
    }
    if (strcmp(f[1], "yes") && strcmp(f[1], "no")) {
        fprintf(stderr, "%s: quick is '%s', expected yes or no\n", where, f[1]);
        return -1;
    }
    c->quick = !strcmp(f[1], "yes");
    errno = 0;
    c->published = strtod(f[3], &end);
    if (errno || end == f[3] || *end || !(c->published > 0)) {
        fprintf(stderr, "%s: published '%s' is not a positive number\n", where, f[3]);
        return -1;
    }
    c->tolerance = strtod(f[5], &end);
    if (end == f[5] || !(c->tolerance >= 0) ||
        (strcmp(trim(end), "%") && strcmp(trim(end), "step") && strcmp(trim(end), "steps"))) {
        fprintf(stderr, "%s: tolerance '%s' is not N%% or N steps\n", where, f[5]);
        return -1;
    }
    c->crossover = trim(end)[0] == 's';
    if (!c->crossover)
        c->tolerance /= 100.0;
    char *runs[MAX_RUNS + 1], *sels[MAX_RUNS + 1], *mets[MAX_RUNS + 1];
    int nr = split(f[7], ";;", runs, MAX_RUNS), ns = split(f[8], ";;", sels, MAX_RUNS),
        nm = split(f[9], ";;", mets, MAX_RUNS);
    if (nr != (c->crossover ? 2 : 1) || ns != nr || (nm != nr && nm != 1)) {
        fprintf(stderr, "%s: a %s takes %d run(s), with a select each and one metric (or one "
                        "each), separated by ';;'\n", where, c->crossover ? "crossover" : "point",
                c->crossover ? 2 : 1);
        return -1;
    }
    c->nruns = nr;
    for (int k = 0; k < nr; k++)
        if (copy(c->run[k], sizeof c->run[k], runs[k]) ||
            copy(c->select[k], sizeof c->select[k], sels[k]) ||
            copy(c->metric[k], sizeof c->metric[k], mets[nm == 1 ? 0 : k]) ||
            !strstr(c->run[k], "--")) {
            fprintf(stderr, "%s: run %d must read 'P2RUN ARGS -- WORKLOAD ARGS' (fields within "
                            "their sizes)\n", where, k + 1);
            return -1;
        }
    return 0;
}

/* Whether --quick and --only (ids or shell patterns, comma-separated) take c. */
static int wanted(const vcase *c, const options *o)
{
    if (o->quick && !c->quick)
        return 0;
    if (!o->only)
        return 1;
    for (const char *item = o->only; *item;) {
        size_t len = strcspn(item, ",");
        char pattern[sizeof c->id + 16];
        if (len < sizeof pattern) {
            memcpy(pattern, item, len);
            pattern[len] = '\0';
            if (fnmatch(pattern, c->id, 0) == 0)
                return 1;
        }
        item += len + (item[len] == ',');
    }
    return 0;
}

static int load_table(const char *path, const options *o, vcase **out, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, PROGRAM ": cannot read the table '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char line[2048];
    int lineno = 0, n = 0, bad = 0;
    vcase *cases = NULL;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *t = trim(line);
        if (!*t || *t == '#')
            continue;
        char where[PATH_MAX + 16];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        vcase c;
        if (parse_line(t, &c, where) != 0) {
            bad = 1;
            continue;
        }
        for (int i = 0; i < n; i++)
            if (!strcmp(cases[i].id, c.id)) {
                fprintf(stderr, "%s: id '%s' again (first at %s)\n", where, c.id, cases[i].line_ref);
                bad = 1;
            }
        if (!wanted(&c, o))
            continue;
        vcase *grown = realloc(cases, (size_t)(n + 1) * sizeof *cases);
        if (!grown) {
            bad = 1;
            break;
        }
        cases = grown;
        cases[n++] = c;
    }
    fclose(f);
    if (bad) {
        free(cases);
        return -1;
    }
    *out = cases;
    *count = n;
    return 0;
}

/* ---- A workload's CSV ------------------------------------------------------------ */

typedef struct csv {
    int ncols, nrows;
    char names[MAX_COLS][40];
    char cell[MAX_ROWS][MAX_COLS][40];
} csv;

static int read_csv(const char *path, csv *t)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[1024];
    t->ncols = t->nrows = 0;
    int header = 1;
    while (fgets(line, sizeof line, f) && t->nrows < MAX_ROWS) {
        char *parts[MAX_COLS];
        int n = split(line, ",", parts, MAX_COLS);
        if (n <= 0)
            continue;
        for (int i = 0; i < n; i++)
            snprintf(header ? t->names[i] : t->cell[t->nrows][i], 40, "%s", parts[i]);
        if (header)
            t->ncols = n;
        else
            t->nrows++;
        header = 0;
    }
    fclose(f);
    return t->ncols > 0 ? 0 : -1;
}

static int column(const csv *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->names[i], name))
            return i;
    return -1;
}

/* Whether row r has every k=v of `select` (except `skip`, a column name). */
static int row_matches(const csv *t, int r, const char *select, const char *skip)
{
    char buf[120];
    snprintf(buf, sizeof buf, "%s", select);
    char *pairs[8];
    int n = split(buf, ",", pairs, 8);
    for (int i = 0; i < n; i++) {
        if (!*pairs[i] || !strcmp(pairs[i], "-"))
            continue;
        char *eq = strchr(pairs[i], '=');
        if (!eq)
            return 0;
        *eq = '\0';
        if (skip && !strcmp(trim(pairs[i]), skip))
            continue;
        int c = column(t, trim(pairs[i]));
        if (c < 0 || strcmp(t->cell[r][c], trim(eq + 1)))
            return 0;
    }
    return 1;
}

/* ---- Running ---------------------------------------------------------------------- */

/* Runs run k of c; its CSV is `csv_path`. 0, or -1 with the log shown. */
static int run_one(const vcase *c, int k, const char *p2run, const char *workloads,
                   const options *o, const char *csv_path, const char *log)
{
    char buf[400], *tok[MAX_ARGS], *argv[MAX_ARGS + 8], paths[2][PATH_MAX + 64], timeout[32];
    snprintf(buf, sizeof buf, "%s", c->run[k]);
    int n = 0;
    for (char *save, *t = strtok_r(buf, " ", &save); t && n < MAX_ARGS; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    int a = 0, dashes = -1;
    argv[a++] = (char *)p2run;
    if (o->timeout_s > 0) {
        snprintf(timeout, sizeof timeout, "%g", o->timeout_s);
        argv[a++] = "--timeout";
        argv[a++] = timeout;
    }
    for (int i = 0; i < n; i++) {
        if (dashes < 0 && !strcmp(tok[i], "--")) {
            dashes = i;
            argv[a++] = tok[i];
            if (i + 1 >= n)
                break;
            snprintf(paths[0], sizeof paths[0], "%s/%s", workloads, tok[++i]);
            if (!wl_executable(paths[0])) {
                fprintf(stderr, "%s: workload '%s' is not an executable file (--workloads DIR)\n",
                        c->line_ref, paths[0]);
                return -1;
            }
            argv[a++] = paths[0];
            continue;
        }
        argv[a++] = tok[i];
    }
    argv[a++] = "--csv";
    snprintf(paths[1], sizeof paths[1], "%s", csv_path);
    argv[a++] = paths[1];
    argv[a] = NULL;
    double wall;
    long rss;
    remove(csv_path);
    int status = wl_run_job(PROGRAM, argv, log, &wall, &rss, NULL);
    if (status != 0) {
        fprintf(stderr, PROGRAM ": %s: run %d ended with status %d (log %s)\n", c->id, k + 1,
                status, log);
        wl_show_tail(log, 8);
        return -1;
    }
    fprintf(stderr, PROGRAM ": %s: run %d done in %.1f s wall\n", c->id, k + 1, wall);
    return 0;
}

/* ---- Runs that several cases share ------------------------------------------------ */

/* A run this invocation made: its run string (blanks collapsed), the case
 * that made it, its CSV and log, and whether it succeeded (0) or failed (-1). */
typedef struct made_run {
    char run[400], id[48], csv[PATH_MAX], log[PATH_MAX];
    int status;
} made_run;

static made_run *made;
static int made_count;

/* `run` with every run of blanks one space, none at either end. */
static void collapse(const char *run, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = run; *p && n + 1 < size; p++) {
        if (*p == ' ' || *p == '\t') {
            if (n && out[n - 1] != ' ')
                out[n++] = ' ';
        } else {
            out[n++] = *p;
        }
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

static const made_run *made_before(const char *run)
{
    char key[400];
    collapse(run, key, sizeof key);
    for (int i = 0; i < made_count; i++)
        if (!strcmp(made[i].run, key))
            return &made[i];
    return NULL;
}

static void remember(const char *run, const char *id, const char *csv, const char *log, int status)
{
    made_run *grown = realloc(made, (size_t)(made_count + 1) * sizeof *made);
    if (!grown)
        return; /* a later case runs it again */
    made = grown;
    made_run *m = &made[made_count++];
    collapse(run, m->run, sizeof m->run);
    copy(m->id, sizeof m->id, id);
    copy(m->csv, sizeof m->csv, csv);
    copy(m->log, sizeof m->log, log);
    m->status = status;
}

/* Copies file `from` to `to` (a CSV that is missing stays missing). */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[8192];
    size_t n;
    while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

/* Run k of c is run m, made by an earlier case: its CSV becomes c's, c's log
 * names it. Returns m's status. */
static int reuse(const vcase *c, int k, const made_run *m, const char *csv_path, const char *log)
{
    remove(csv_path);
    copy_file(m->csv, csv_path);
    FILE *f = fopen(log, "w");
    if (f) {
        fprintf(f, "%s: reused the run of %s (its log: %s)\n", PROGRAM, m->id, m->log);
        fclose(f);
    }
    if (m->status != 0)
        fprintf(stderr, PROGRAM ": %s: run %d reused: the run of %s, which failed (log %s)\n",
                c->id, k + 1, m->id, m->log);
    else
        fprintf(stderr, PROGRAM ": %s: run %d reused (the run of %s)\n", c->id, k + 1, m->id);
    return m->status;
}

typedef struct outcome {
    double model;    /* the figure, or the crossover size */
    char shown[48];  /* as the table shows it */
    char verdict[8]; /* PASS, FAIL, ERROR */
    double error;    /* relative (point) or steps (crossover); NAN if none */
} outcome;

static void point(const vcase *c, const csv *t, outcome *r)
{
    int m = column(t, c->metric[0]), found = -1, matches = 0;
    for (int i = 0; i < t->nrows; i++)
        if (row_matches(t, i, c->select[0], NULL)) {
            found = i;
            matches++;
        }
    if (m < 0) {
        snprintf(r->shown, sizeof r->shown, "no column %.30s", c->metric[0]);
        return;
    }
    if (matches != 1) {
        snprintf(r->shown, sizeof r->shown, "%d rows match", matches);
        return;
    }
    r->model = strtod(t->cell[found][m], NULL);
    r->error = (r->model - c->published) / c->published;
    snprintf(r->shown, sizeof r->shown, "%.4g", r->model);
    snprintf(r->verdict, sizeof r->verdict, "%s", fabs(r->error) <= c->tolerance + 1e-12 ? "PASS" : "FAIL");
}

/* The largest size up to which run A's metric is below run B's, at every
 * size both swept. */
static void crossover(const vcase *c, const csv *a, const csv *b, outcome *r)
{
    int ma = column(a, c->metric[0]), mb = column(b, c->metric[1]);
    int ba = column(a, "bytes"), bb = column(b, "bytes");
    if (ma < 0 || mb < 0 || ba < 0 || bb < 0) {
        snprintf(r->shown, sizeof r->shown, "no bytes or metric column");
        return;
    }
    double last_better = 0, first = 0, last = 0;
    int compared = 0, crossed = 0;
    for (int i = 0; i < a->nrows && !crossed; i++) {
        if (!row_matches(a, i, c->select[0], "bytes"))
            continue;
        for (int j = 0; j < b->nrows; j++) {
            if (!row_matches(b, j, c->select[1], "bytes") || strcmp(a->cell[i][ba], b->cell[j][bb]))
                continue;
            double size = strtod(a->cell[i][ba], NULL);
            if (!compared)
                first = size;
            last = size;
            compared++;
            if (strtod(a->cell[i][ma], NULL) < strtod(b->cell[j][mb], NULL))
                last_better = size;
            else
                crossed = 1;
            break;
        }
    }
    if (!compared) {
        snprintf(r->shown, sizeof r->shown, "no common sizes");
        return;
    }
    if (!crossed) {
        snprintf(r->shown, sizeof r->shown, "beyond %.0f", last);
        snprintf(r->verdict, sizeof r->verdict, "FAIL");
        return;
    }
    if (last_better == 0) {
        snprintf(r->shown, sizeof r->shown, "below %.0f", first);
        snprintf(r->verdict, sizeof r->verdict, "FAIL");
        return;
    }
    r->model = last_better;
    r->error = log2(r->model / c->published);
    snprintf(r->shown, sizeof r->shown, "%.0f", r->model);
    snprintf(r->verdict, sizeof r->verdict, "%s", fabs(r->error) <= c->tolerance + 1e-9 ? "PASS" : "FAIL");
}

static void run_case(const vcase *c, const char *p2run, const char *workloads, const options *o,
                     outcome *r)
{
    *r = (outcome){.error = NAN};
    snprintf(r->verdict, sizeof r->verdict, "ERROR");
    snprintf(r->shown, sizeof r->shown, "run failed");
    static csv tables[MAX_RUNS];
    for (int k = 0; k < c->nruns; k++) {
        char csv_path[PATH_MAX], log[PATH_MAX];
        snprintf(csv_path, sizeof csv_path, "%s/%s.%d.csv", o->out, c->id, k + 1);
        snprintf(log, sizeof log, "%s/%s.%d.log", o->out, c->id, k + 1);
        const made_run *m = made_before(c->run[k]);
        int status;
        if (m) {
            status = reuse(c, k, m, csv_path, log);
        } else {
            status = run_one(c, k, p2run, workloads, o, csv_path, log);
            remember(c->run[k], c->id, csv_path, log, status);
        }
        if (status != 0) {
            /* Rows come as they are measured: say how far a sweep got
             * (a deadlock at some size ends the job there). */
            int b = read_csv(csv_path, &tables[k]) == 0 ? column(&tables[k], "bytes") : -1;
            if (b >= 0 && tables[k].nrows > 0)
                snprintf(r->shown, sizeof r->shown, "run %d ended after %s", k + 1,
                         tables[k].cell[tables[k].nrows - 1][b]);
            return;
        }
        if (read_csv(csv_path, &tables[k]) != 0) {
            snprintf(r->shown, sizeof r->shown, "no CSV");
            return;
        }
    }
    if (c->crossover)
        crossover(c, &tables[0], &tables[1], r);
    else
        point(c, &tables[0], r);
}

/* ---- Options and main ----------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROGRAM " [--quick] [--only ID[,ID...]] [--table FILE] [--out DIR]\n"
                 "                [--p2run PATH] [--workloads DIR] [--timeout SECONDS]\n"
                 "                [--csv FILE] [--json FILE]\n"
                 "  runs the published figures of the table (default: figures.txt of the\n"
                 "  source tree) under p2run; results.csv and every run's CSV and log go to\n"
                 "  --out (default validation-out); plots/validation.py draws them. --only\n"
                 "  takes ids or shell patterns ('pub_*'); cases that share a run string\n"
                 "  share one run\n");
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.out = "validation-out", .table = P2_VALIDATION_TABLE, .timeout_s = 600};
    const wl_option table[] = {
        {"--quick", WL_OPTION_FLAG, &o->quick, NULL, NULL},
        {"--only", WL_OPTION_STRING, &o->only, "ID[,ID...]", NULL},
        {"--table", WL_OPTION_STRING, &o->table, "FILE", NULL},
        {"--out", WL_OPTION_STRING, &o->out, "DIR", NULL},
        {"--p2run", WL_OPTION_STRING, &o->p2run, "PATH", NULL},
        {"--workloads", WL_OPTION_STRING, &o->workloads, "DIR", NULL},
        {"--timeout", WL_OPTION_SECONDS, &o->timeout_s, "SECONDS", NULL},
        {"--csv", WL_OPTION_STRING, &o->csv, "FILE", NULL},
        {"--json", WL_OPTION_STRING, &o->json, "FILE", NULL},
    };
    const wl_args args = {.syntax = WL_SYNTAX_HELP | WL_SYNTAX_NO_EMPTY,
                          .options = table,
                          .option_count = sizeof table / sizeof table[0]};
    wl_args_result r;
    switch (wl_parse_args(&args, argc, argv, &r)) {
    case WL_PARSE_OK: return 0;
    case WL_PARSE_HELP:
        usage(stdout);
        exit(EXIT_OK);
    case WL_PARSE_ERROR: break;
    }
    if (r.error == WL_ARGS_INVALID) { /* --timeout */
        fprintf(stderr, PROGRAM ": %s '%s' is not a positive number\n", r.arg, r.value);
        return -1;
    }
    const char *what =
        r.error == WL_ARGS_UNKNOWN ? "unknown option" : "missing or empty value after";
    fprintf(stderr, PROGRAM ": %s '%s'\n", what, r.arg);
    usage(stderr);
    return -1;
}

enum { C_ID, C_FIGURE, C_PUBLISHED, C_MODEL, C_UNIT, C_ERROR, C_TOL, C_VERDICT, C_COUNT };
static const wl_column columns[C_COUNT] = {
    [C_ID] = {"id", WL_COLUMN_TEXT, 18, 0},
    [C_FIGURE] = {"figure", WL_COLUMN_TEXT, 48, 0},
    [C_PUBLISHED] = {"published", WL_COLUMN_REAL, 10, 3},
    [C_MODEL] = {"model", WL_COLUMN_TEXT, 12, 0}, /* or why there is none */
    [C_UNIT] = {"unit", WL_COLUMN_TEXT, 5, 0},
    [C_ERROR] = {"error", WL_COLUMN_TEXT, 9, 0},
    [C_TOL] = {"tolerance", WL_COLUMN_TEXT, 9, 0},
    [C_VERDICT] = {"verdict", WL_COLUMN_TEXT, 7, 0},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return EXIT_USAGE;
    char dir[PATH_MAX], p2run[PATH_MAX + 32], workloads[PATH_MAX];
    if ((!o.p2run || !o.workloads) && wl_self_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, PROGRAM ": cannot find my own folder: give --p2run and --workloads\n");
        return EXIT_USAGE;
    }
    /* The build tree: build/workloads/validate, build/emu/p2run. */
    snprintf(p2run, sizeof p2run, "%s%s", o.p2run ? o.p2run : dir, o.p2run ? "" : "/../emu/p2run");
    snprintf(workloads, sizeof workloads, "%s", o.workloads ? o.workloads : dir);
    if (!wl_executable(p2run)) {
        fprintf(stderr, PROGRAM ": p2run '%s' is not an executable file (--p2run PATH)\n", p2run);
        return EXIT_USAGE;
    }
    vcase *cases;
    int n;
    if (load_table(o.table, &o, &cases, &n) != 0)
        return EXIT_USAGE;
    if (n == 0) {
        fprintf(stderr, PROGRAM ": no case of '%s' is selected\n", o.table);
        return EXIT_USAGE;
    }
    if (mkdir(o.out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, PROGRAM ": cannot make '%s': %s\n", o.out, strerror(errno));
        return EXIT_USAGE;
    }
    char results[PATH_MAX + 16], err[256];
    snprintf(results, sizeof results, "%s/results.csv", o.out);
    wl_report *report =
        wl_report_open("validation: the model against published figures", columns, C_COUNT,
                       o.csv ? o.csv : results, o.json, err, sizeof err);
    if (!report) {
        fprintf(stderr, PROGRAM ": %s\n", err);
        return EXIT_USAGE;
    }
    wl_report_meta(report, "table", "%s (%d cases)", o.table, n);
    wl_report_meta(report, "runs", "%s (CSV and log per run)", o.out);
    wl_report_note(report, "error: relative for a figure, in power-of-two steps for a crossover "
                           "(the largest size up to which the first run is better)");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        const vcase *c = &cases[i];
        fprintf(stderr, PROGRAM ": [%d/%d] %s: %s\n", i + 1, n, c->id, c->figure);
        outcome r;
        run_case(c, p2run, workloads, &o, &r);
        char error[24] = "", tol[24];
        if (!isnan(r.error))
            snprintf(error, sizeof error, c->crossover ? "%+.1f st" : "%+.1f%%",
                     c->crossover ? r.error : 100 * r.error);
        snprintf(tol, sizeof tol, c->crossover ? "%g st" : "%g%%",
                 c->crossover ? c->tolerance : 100 * c->tolerance);
        wl_cell cells[C_COUNT] = {
            [C_ID] = {.text = c->id},         [C_FIGURE] = {.text = c->figure},
            [C_PUBLISHED] = {.real = c->published}, [C_MODEL] = {.text = r.shown},
            [C_UNIT] = {.text = c->unit},     [C_ERROR] = {.text = error},
            [C_TOL] = {.text = tol},          [C_VERDICT] = {.text = r.verdict},
        };
        wl_report_row(report, cells);
        failed += strcmp(r.verdict, "PASS") != 0;
    }
    printf("%d passed, %d failed\n", n - failed, failed);
    free(cases);
    free(made);
    if (wl_report_close(report) != 0)
        return EXIT_FAILED;
    return failed ? EXIT_FAILED : EXIT_OK;
}
