/* The run report's internal pieces: the page text, numeric CSV tables, SVG charts and the page's sections. */
#ifndef TG_REPORT_INTERNAL_H
#define TG_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "base/files.h"
#include "base/json.h"
#include "tickgrad/status.h"

#define RP_PATH_MAX 4096

/* ---- page.c: the HTML text being built ---- */
typedef struct rp_page {
  tg_text b;    /* the page */
  const char *run;  /* the run folder */
  int charts;       /* <svg class="chart"> elements written */
} rp_page;

#if defined(__GNUC__)
#define RP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RP_PRINTF(a, b)
#endif

void rp_raw(rp_page *p, const char *html);                             /* markup as it is */
void rp_rawf(rp_page *p, const char *fmt, ...) RP_PRINTF(2, 3);        /* markup, formatted */
void rp_text(rp_page *p, const char *s);                               /* text, escaped (& < > " ') */
void rp_textf(rp_page *p, const char *fmt, ...) RP_PRINTF(2, 3);       /* text, formatted then escaped */
/* <p class="na">not available: WHY</p> (escaped) */
void rp_unavailable(rp_page *p, const char *fmt, ...) RP_PRINTF(2, 3);
/* <p class="note">TEXT</p> (escaped) */
void rp_note(rp_page *p, const char *fmt, ...) RP_PRINTF(2, 3);
/* A number for a table cell: whole numbers without decimals, others to 4 significant digits (at least
 * whole units from 1000 up); "–" for NaN or infinity. */
const char *rp_num(double v, char *buf, size_t n);
/* run/file into buf; 0 when it does not fit */
int rp_path(char *buf, size_t n, const char *run, const char *file);
int rp_is_file(const char *path);
/* The file's modification time as "YYYY-MM-DD HH:MM UTC" (empty when it cannot be read). */
void rp_mtime(const char *path, char *buf, size_t n);

/* ---- report.c: the page's head (style, the error catcher) and its footer and load check ---- */
void rp_page_begin(rp_page *p, const char *title);
/* from (may be NULL) names the files the page was drawn from in the footer. */
void rp_page_end(rp_page *p, const char *from);

/* ---- run_folder.c: reading and writing whole files ---- */
/* The parsed JSON object in run/file: TG_OK with *doc set, TG_ERR_IO when it is missing (unreadable), or
 * TG_ERR_FORMAT when it is not a JSON object; tg_last_error() says which. */
tg_status rp_read_json(const char *run, const char *file, tg_json_doc **doc);

/* ---- csv_table.c: CSV files with a header line, cells by column name ---- */
typedef struct rp_table {
  char *text;        /* the file, split in place */
  int ncol;
  char **names;      /* [ncol] the header */
  int64_t nrow;
  char **cells;      /* [nrow * ncol] row-major; a blank cell is "" */
  int64_t skipped;   /* malformed lines left out */
  char first_bad[160]; /* why the first one was ("line 5: 3 fields, want 21") */
} rp_table;

/* Reads path. Every line after the header needs the header's number of fields, and every non-blank cell
 * outside text_cols (a NULL-terminated list of names, or NULL) must be a number; other lines are
 * malformed: skipped and counted. A file with no lines gives ncol 0. TG_ERR_IO naming path when it
 * cannot be read; TG_ERR_NOMEM. */
tg_status rp_table_read(const char *path, const char *const *text_cols, rp_table *t);
void rp_table_free(rp_table *t);
int rp_table_col(const rp_table *t, const char *name); /* -1 when absent */
const char *rp_table_cell(const rp_table *t, int64_t row, int col);
/* The column as numbers [nrow] (tg_malloc'ed; blank or not a number: NaN); NULL when the column is absent
 * or memory runs out. */
double *rp_table_numbers(const rp_table *t, const char *name);
/* 1 when some v[i] is finite. */
int rp_any_finite(const double *v, int64_t n);
/* A note on the page when t skipped lines of file. */
void rp_table_skipped_note(rp_page *p, const rp_table *t, const char *file);

/* ---- svg.c (axes, legend, lines) and svg_bars.c: charts ---- */
#define RP_MAX_SERIES 8

typedef struct rp_series {
  const char *name;
  const double *x;   /* [n]; NULL: the row index */
  const double *y;   /* [n]; a point whose x or y is not finite is skipped (the line breaks there) */
  int64_t n;
  int color;         /* index into the palette */
  int dashed;
  int area;          /* fill between the line and y = 0 */
} rp_series;

typedef struct rp_chart {
  const char *id;              /* data-chart="ID" */
  const char *title, *xlabel, *ylabel;
  int w, h;                    /* the viewBox (0: 540 x 280) */
  int n_series;
  rp_series s[RP_MAX_SERIES];
  const char *const *xtext;    /* x is a row index labelled by xtext[row] (timestamps); NULL: numbers */
  int x_int;                   /* x ticks at whole numbers only (epochs) */
  int y_zero;                  /* the y range includes 0 */
} rp_chart;

/* A line chart; many points are reduced to the first, lowest, highest and last of each pixel column. */
void rp_svg_lines(rp_page *p, const rp_chart *c);
/* Adds a series when y has a finite value (returns 1), else nothing (returns 0). */
int rp_chart_add(rp_chart *c, const char *name, const double *x, const double *y, int64_t n, int color, int dashed);
/* The chart when it has a series, else a box with its title and "not available: why". */
void rp_svg_lines_or(rp_page *p, const rp_chart *c, const char *why);

typedef struct rp_stack {
  const char *id, *title, *xlabel, *ylabel;
  int n_parts;
  const char *names[RP_MAX_SERIES];
  const double *v[RP_MAX_SERIES]; /* [n] each part's height (NaN: 0) */
  const double *x;                /* [n] each bar's label (epochs) */
  int64_t n;
} rp_stack;

/* Stacked bars, one per x, parts bottom to top in order. */
void rp_svg_stack(rp_page *p, const rp_stack *c);

/* shared by svg.c and svg_bars.c */
typedef struct rp_frame {
  int w, h;
  double left, right, top, bottom; /* the plot area in viewBox units */
  double y0, y1;                   /* the y range at bottom and top */
  double ystep;
} rp_frame;

extern const char *const rp_palette[RP_MAX_SERIES];
/* <svg ...>, title, legend (names with their colours and dashes) and the y axis with grid lines. */
void rp_svg_open(rp_page *p, const char *id, const char *title, const rp_frame *f, int n, const char *const *names,
                 const int *colors, const int *dashed, const char *ylabel);
void rp_svg_xlabel(rp_page *p, const rp_frame *f, const char *xlabel);
void rp_svg_close(rp_page *p);
/* The y range [lo, hi] widened to round tick values (with zero when zero is set); f's top and bottom
 * must be set (the tick count follows the plot's height). */
void rp_frame_yrange(rp_frame *f, double lo, double hi, int zero);
/* A round step of about span / target. */
double rp_nice_step(double span, int target);
/* A tick label of v when ticks are step apart. */
const char *rp_tick(double v, double step, char *buf, size_t n);

/* ---- the sections ---- */
void rp_section_header(rp_page *p);    /* section_header.c: config.json, env.json */
void rp_section_metrics(rp_page *p);   /* section_train.c: a forecaster's or (section_rl.c) an agent's metrics.csv */
void rp_section_rl(rp_page *p, rp_table *t); /* section_rl.c: t is an RL metrics.csv */
/* section_classes.c: 1 when a forecaster's metrics.csv t is a classifier's (val_acc has values); its accuracy chart
 * and the confusion matrix of row best (-1: none) */
int rp_is_classifier(const rp_table *t);
void rp_section_classes(rp_page *p, const rp_table *t, const double *epoch, int64_t best);
void rp_section_telemetry(rp_page *p); /* section_telemetry.c */
void rp_section_backtest(rp_page *p);  /* section_backtest.c */
void rp_section_eval(rp_page *p);      /* section_eval.c: a forecaster's evaluation.json */

#endif
