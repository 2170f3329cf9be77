/*
 * wl_report.c - table, CSV and JSON output of a workload (wl_report.h).
 *
 * The table and the CSV file are written row by row; the JSON document is
 * assembled in memory (a benchmark has tens of rows) and written at close.
 */
#include "wl_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Significant digits of reals in CSV and JSON: enough for picoseconds of a
 * second-long simulated time, short of a double's binary-to-decimal noise. */
#define WL_REAL_DIGITS 12
/* Longest header or note line. */
#define WL_LINE_MAX 1024

/* A growing string; on allocation failure it marks itself failed and stops. */
typedef struct wl_text {
    char *data;
    size_t length, capacity;
    int failed;
} wl_text;

static void text_append(wl_text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->length + n + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 256;
        while (t->length + n + 1 > capacity)
            capacity *= 2;
        char *data = realloc(t->data, capacity);
        if (!data) {
            t->failed = 1;
            return;
        }
        t->data = data;
        t->capacity = capacity;
    }
    memcpy(t->data + t->length, s, n);
    t->length += n;
    t->data[t->length] = '\0';
}

static void text_puts(wl_text *t, const char *s)
{
    text_append(t, s, strlen(s));
}

/* `s` as a JSON string literal. */
static void text_json_string(wl_text *t, const char *s)
{
    text_puts(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char escaped[8];
        if (*p == '"' || *p == '\\') {
            snprintf(escaped, sizeof escaped, "\\%c", *p);
        } else if (*p < 0x20) {
            snprintf(escaped, sizeof escaped, "\\u%04x", *p);
        } else {
            text_append(t, (const char *)p, 1);
            continue;
        }
        text_puts(t, escaped);
    }
    text_puts(t, "\"");
}

struct wl_report {
    const wl_column *columns;
    size_t column_count;
    FILE *csv, *json;
    const char *csv_path, *json_path;
    char *title;
    int rows_printed;
    int write_failed;
    wl_text meta, notes, rows; /* JSON fragments */
};

wl_report *wl_report_open(const char *title, const wl_column *columns, size_t column_count,
                          const char *csv_path, const char *json_path, char *error,
                          size_t error_size)
{
    wl_report *r = calloc(1, sizeof *r);
    if (!r || !(r->title = strdup(title))) {
        free(r);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    r->columns = columns;
    r->column_count = column_count;
    r->csv_path = csv_path;
    r->json_path = json_path;
    const struct {
        const char *flag, *path;
        FILE **file;
    } outputs[] = {{"--csv", csv_path, &r->csv}, {"--json", json_path, &r->json}};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        if (!outputs[i].path)
            continue;
        *outputs[i].file = fopen(outputs[i].path, "w");
        if (!*outputs[i].file) {
            snprintf(error, error_size, "%s: cannot write '%s': %s", outputs[i].flag,
                     outputs[i].path, strerror(errno));
            if (r->csv)
                fclose(r->csv);
            free(r->title);
            free(r);
            return NULL;
        }
    }
    printf("# %s\n", title);
    return r;
}

void wl_report_meta(wl_report *report, const char *key, const char *format, ...)
{
    char value[WL_LINE_MAX];
    va_list ap;
    va_start(ap, format);
    vsnprintf(value, sizeof value, format, ap);
    va_end(ap);
    printf("# %s: %s\n", key, value);
    wl_text *m = &report->meta;
    text_puts(m, m->length ? ", " : "");
    text_json_string(m, key);
    text_puts(m, ": ");
    text_json_string(m, value);
}

void wl_report_note(wl_report *report, const char *format, ...)
{
    char line[WL_LINE_MAX];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    printf("# %s\n", line);
    wl_text *n = &report->notes;
    text_puts(n, n->length ? ", " : "");
    text_json_string(n, line);
}

static int column_width(const wl_column *c)
{
    int name = (int)strlen(c->name);
    return c->width > name ? c->width : name;
}

static void print_header(const wl_report *r)
{
    for (size_t i = 0; i < r->column_count; i++) {
        const wl_column *c = &r->columns[i];
        int w = column_width(c);
        printf(i ? "  %*s" : "%*s", c->kind == WL_COLUMN_TEXT ? -w : w, c->name);
    }
    printf("\n");
    if (r->csv) {
        for (size_t i = 0; i < r->column_count; i++)
            fprintf(r->csv, "%s%s", i ? "," : "", r->columns[i].name);
        fprintf(r->csv, "\n");
    }
}

/* A cell for CSV and JSON: full precision, no padding. `json` quotes text and
 * writes non-finite reals as null (CSV leaves them empty). */
static void format_exact(const wl_column *c, const wl_cell *cell, int json, char *out,
                         size_t size)
{
    switch (c->kind) {
    case WL_COLUMN_TEXT: snprintf(out, size, "%s", cell->text ? cell->text : ""); return;
    case WL_COLUMN_INTEGER: snprintf(out, size, "%" PRId64, cell->integer); return;
    case WL_COLUMN_REAL:
        if (isfinite(cell->real))
            snprintf(out, size, "%.*g", WL_REAL_DIGITS, cell->real);
        else
            snprintf(out, size, "%s", json ? "null" : "");
        return;
    }
}

/* One CSV field: quoted, with quotes doubled, if it holds a comma, a quote or
 * a line break (RFC 4180), else as it is. */
static void csv_field(FILE *f, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

size_t wl_report_columns(const wl_report *report)
{
    return report->column_count;
}

void wl_report_row(wl_report *report, const wl_cell *cells)
{
    wl_report *r = report;
    if (!r->rows_printed++)
        print_header(r);
    char exact[WL_LINE_MAX];
    wl_text *rows = &r->rows;
    text_puts(rows, rows->length ? ",\n    {" : "\n    {");
    for (size_t i = 0; i < r->column_count; i++) {
        const wl_column *c = &r->columns[i];
        const wl_cell *cell = &cells[i];
        int w = column_width(c);
        const char *sep = i ? "  " : "";
        switch (c->kind) {
        case WL_COLUMN_TEXT: printf("%s%-*s", sep, w, cell->text ? cell->text : ""); break;
        case WL_COLUMN_INTEGER: printf("%s%*" PRId64, sep, w, cell->integer); break;
        case WL_COLUMN_REAL: printf("%s%*.*f", sep, w, c->precision, cell->real); break;
        }
        if (r->csv) {
            format_exact(c, cell, 0, exact, sizeof exact);
            fputs(i ? "," : "", r->csv);
            csv_field(r->csv, exact);
        }
        text_puts(rows, i ? ", " : "");
        text_json_string(rows, c->name);
        text_puts(rows, ": ");
        if (c->kind == WL_COLUMN_TEXT) {
            text_json_string(rows, cell->text ? cell->text : "");
        } else {
            format_exact(c, cell, 1, exact, sizeof exact);
            text_puts(rows, exact);
        }
    }
    text_puts(rows, "}");
    printf("\n");
    fflush(stdout); /* rows of a long run appear as they are measured */
    if (r->csv) {
        fprintf(r->csv, "\n");
        fflush(r->csv);
    }
}

static int finish_file(FILE *f, const char *flag, const char *path)
{
    if (!f)
        return 0;
    int failed = ferror(f);
    if (fclose(f) != 0)
        failed = 1;
    if (failed)
        fprintf(stderr, "%s: writing '%s' failed\n", flag, path);
    return failed ? -1 : 0;
}

static void report_free(wl_report *r)
{
    free(r->meta.data);
    free(r->notes.data);
    free(r->rows.data);
    free(r->title);
    free(r);
}

int wl_report_close(wl_report *report)
{
    if (!report)
        return 0;
    wl_report *r = report;
    int status = 0;
    if (r->json) {
        wl_text doc = {0};
        text_puts(&doc, "{\n  \"title\": ");
        text_json_string(&doc, r->title);
        text_puts(&doc, ",\n  \"meta\": {");
        text_puts(&doc, r->meta.data ? r->meta.data : "");
        text_puts(&doc, "},\n  \"notes\": [");
        text_puts(&doc, r->notes.data ? r->notes.data : "");
        text_puts(&doc, "],\n  \"columns\": [");
        for (size_t i = 0; i < r->column_count; i++) {
            text_puts(&doc, i ? ", " : "");
            text_json_string(&doc, r->columns[i].name);
        }
        text_puts(&doc, "],\n  \"rows\": [");
        text_puts(&doc, r->rows.data ? r->rows.data : "");
        text_puts(&doc, r->rows.length ? "\n  ]\n}\n" : "]\n}\n");
        if (doc.failed || r->meta.failed || r->notes.failed || r->rows.failed) {
            fprintf(stderr, "--json: out of memory building '%s'\n", r->json_path);
            status = -1;
        } else {
            fputs(doc.data, r->json);
        }
        free(doc.data);
    }
    int csv_status = finish_file(r->csv, "--csv", r->csv_path);
    int json_status = finish_file(r->json, "--json", r->json_path);
    if (csv_status != 0 || json_status != 0)
        status = -1;
    report_free(r);
    return status;
}

void wl_report_discard(wl_report *report)
{
    if (!report)
        return;
    if (report->csv)
        fclose(report->csv);
    if (report->json)
        fclose(report->json);
    report_free(report);
}
