/*
 * wl_report.h - a workload's results: an aligned table on stdout (one row per
 * measurement, printed as it is measured), and optional CSV and JSON copies
 * for plots.
 *
 *   # TITLE
 *   # key: value            <- wl_report_meta, before the first row
 *   # note                  <- wl_report_note
 *   column  column  ...     <- printed with the first row
 *   row ...
 *
 * CSV: a header line of column names, then one line per row, written as the
 * rows come (so a run that fails half-way keeps what it measured). JSON,
 * written by wl_report_close: {"title", "meta": {key: value}, "notes": [],
 * "columns": [], "rows": [{column: value}]}. Numbers go to CSV and JSON with
 * full precision; the table rounds them to each column's precision.
 */
#ifndef WL_REPORT_H
#define WL_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define WL_US_PER_S 1e6    /* simulated seconds to the microseconds reports show */
#define WL_BYTES_PER_GB 1e9 /* GB/s as in the published figures: 10^9 bytes */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wl_column_kind {
    WL_COLUMN_TEXT,    /* wl_cell.text, left-aligned */
    WL_COLUMN_INTEGER, /* wl_cell.integer, right-aligned */
    WL_COLUMN_REAL     /* wl_cell.real, right-aligned, `precision` decimals */
} wl_column_kind;

typedef struct wl_column {
    const char *name;  /* header and CSV/JSON key: no blanks, commas or quotes */
    wl_column_kind kind;
    int width;         /* at least this many characters in the table */
    int precision;     /* WL_COLUMN_REAL: decimals shown in the table */
} wl_column;

/* One value; the column's kind says which member holds it. */
typedef struct wl_cell {
    const char *text;
    int64_t integer;
    double real;
} wl_cell;

typedef struct wl_report wl_report;

/* A report with these columns (the array must outlive the report). Opens the
 * CSV and JSON files now (NULL paths: none), so a bad path is found before
 * any measurement. NULL on failure, with one line in `error`. */
wl_report *wl_report_open(const char *title, const wl_column *columns, size_t column_count,
                          const char *csv_path, const char *json_path, char *error,
                          size_t error_size);

/* A "# key: value" line of the header; also a JSON "meta" entry. */
void wl_report_meta(wl_report *report, const char *key, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* A "# text" line; also a JSON "notes" entry. */
void wl_report_note(wl_report *report, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The report's number of columns. */
size_t wl_report_columns(const wl_report *report);

/* One row: cells[i] for column i. */
void wl_report_row(wl_report *report, const wl_cell *cells);

/* Writes the JSON file, closes the files and frees the report. Returns 0, or
 * -1 (with a message on stderr) if writing a file failed. NULL is a no-op. */
int wl_report_close(wl_report *report);
/* Closes the files without writing the JSON and frees the report (a run that
 * ends in an error). NULL is a no-op. */
void wl_report_discard(wl_report *report);

#ifdef __cplusplus
}
#endif

#endif /* WL_REPORT_H */
