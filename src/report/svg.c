/* SVG charts drawn in C: frame, round ticks, legend, and line charts reduced to a few points per pixel column. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "report/report_internal.h"

const char *const rp_palette[RP_MAX_SERIES] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea",
                                               "#dc2626", "#0891b2", "#ca8a04", "#64748b"};

double rp_nice_step(double span, int target) {
  if (!(span > 0) || !isfinite(span)) return 1;
  double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* decimals that show multiples of step exactly */
static int decimals(double step) {
  if (step >= 1) return 0;
  int d = (int)ceil(-log10(step) - 1e-9);
  return d < 0 ? 0 : d;
}

const char *rp_tick(double v, double step, char *buf, size_t n) {
  if (fabs(v) < step * 1e-6) v = 0;
  if (step < 1e-6 || fabs(v) >= 1e15) snprintf(buf, n, "%.1e", v);
  else if (fabs(v) >= 1e6 && step >= 1e5) snprintf(buf, n, "%.*fM", decimals(step / 1e6), v / 1e6);
  else if (fabs(v) >= 1e4 && step >= 1e3) snprintf(buf, n, "%.*fk", decimals(step / 1e3), v / 1e3);
  else snprintf(buf, n, "%.*f", decimals(step), v);
  return buf;
}

void rp_frame_yrange(rp_frame *f, double lo, double hi, int zero) {
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (zero) {
    if (lo > 0) lo = 0;
    if (hi < 0) hi = 0;
  }
  if (!(hi > lo)) {
    double d = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
    lo -= d, hi += d;
  }
  int target = (int)((f->bottom - f->top) / 38); /* about one tick per 38 units of height, 3 to 6 of them */
  f->ystep = rp_nice_step(hi - lo, target < 3 ? 3 : target > 6 ? 6 : target);
  f->y0 = floor(lo / f->ystep + 1e-9) * f->ystep;
  f->y1 = ceil(hi / f->ystep - 1e-9) * f->ystep;
  if (!(f->y1 > f->y0)) f->y1 = f->y0 + f->ystep;
}

static double fy(const rp_frame *f, double v) { return f->bottom - (v - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top); }

/* about how wide text of n characters is at the legend's size */
static double text_w(const char *s) { return 6.3 * (double)strlen(s); }

static void legend(rp_page *p, const rp_frame *f, int n, const char *const *names, const int *colors,
                   const int *dashed) {
  double x = f->left;
  rp_raw(p, "<g class=\"legend\">");
  for (int i = 0; i < n; i++) {
    const char *col = rp_palette[colors[i] % RP_MAX_SERIES];
    rp_rawf(p, "<line x1=\"%.1f\" y1=\"38\" x2=\"%.1f\" y2=\"38\" stroke=\"%s\" stroke-width=\"3\"%s/>", x, x + 16, col,
            dashed && dashed[i] ? " stroke-dasharray=\"4 3\"" : "");
    rp_rawf(p, "<text x=\"%.1f\" y=\"42\">", x + 21);
    rp_text(p, names[i]);
    rp_raw(p, "</text>");
    x += 21 + text_w(names[i]) + 16;
  }
  rp_raw(p, "</g>\n");
}

static void y_axis(rp_page *p, const rp_frame *f, const char *ylabel) {
  int m = (int)lround((f->y1 - f->y0) / f->ystep);
  char b[48];
  rp_raw(p, "<g class=\"yaxis\">");
  for (int k = 0; k <= m; k++) {
    double v = f->y0 + k * f->ystep, y = fy(f, v);
    rp_rawf(p, "<line class=\"gl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->left, y, f->right, y);
    rp_rawf(p, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.32em\" text-anchor=\"end\">%s</text>", f->left - 6, y,
            rp_tick(v, f->ystep, b, sizeof b));
  }
  if (ylabel) {
    rp_rawf(p, "<text class=\"al\" transform=\"translate(13 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            (f->top + f->bottom) / 2);
    rp_text(p, ylabel);
    rp_raw(p, "</text>");
  }
  rp_rawf(p, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n", f->left, f->bottom, f->right,
          f->bottom);
}

void rp_svg_open(rp_page *p, const char *id, const char *title, const rp_frame *f, int n, const char *const *names,
                 const int *colors, const int *dashed, const char *ylabel) {
  rp_rawf(p, "<svg class=\"chart\" data-chart=\"%s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", id, f->w, f->h);
  rp_text(p, title);
  rp_raw(p, "\">\n<text class=\"t\" x=\"12\" y=\"20\">");
  rp_text(p, title);
  rp_raw(p, "</text>\n");
  if (n > 1) legend(p, f, n, names, colors, dashed);
  y_axis(p, f, ylabel);
  p->charts++;
}

void rp_svg_xlabel(rp_page *p, const rp_frame *f, const char *xlabel) {
  if (!xlabel) return;
  rp_rawf(p, "<text class=\"al\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", (f->left + f->right) / 2, f->h - 6);
  rp_text(p, xlabel);
  rp_raw(p, "</text>\n");
}

void rp_svg_close(rp_page *p) { rp_raw(p, "</svg>\n"); }

/* ---- line charts ---- */

typedef struct xmap {
  double x0, x1; /* the x range at left and right */
} xmap;

static double fx(const rp_frame *f, const xmap *m, double x) {
  return f->left + (x - m->x0) / (m->x1 - m->x0) * (f->right - f->left);
}

static double sx(const rp_series *s, int64_t i) { return s->x ? s->x[i] : (double)i; }

/* The finite range of every series: x into m, y into lo/hi; 0 when there is no finite point. */
static int data_range(const rp_chart *c, xmap *m, double *lo, double *hi) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (int k = 0; k < c->n_series; k++)
    for (int64_t i = 0; i < c->s[k].n; i++) {
      double x = sx(&c->s[k], i), y = c->s[k].y[i];
      if (!isfinite(x) || !isfinite(y)) continue;
      x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1, y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
    }
  if (!(x1 >= x0)) return 0;
  if (x1 == x0) x0 = x0 >= 0 && x0 < 0.5 ? 0 : x0 - 0.5, x1 += 0.5; /* one point: in the middle, or seconds from 0 */
  m->x0 = x0, m->x1 = x1, *lo = y0, *hi = y1;
  return 1;
}

static void x_axis_numbers(rp_page *p, const rp_frame *f, const xmap *m, int x_int) {
  double step = rp_nice_step(m->x1 - m->x0, 6);
  if (x_int && step < 1) step = 1;
  char b[48];
  rp_raw(p, "<g class=\"xaxis\">");
  for (double v = ceil(m->x0 / step - 1e-9) * step; v <= m->x1 + step * 1e-9; v += step) {
    double x = fx(f, m, v);
    rp_rawf(p, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f->bottom, x, f->bottom + 4);
    rp_rawf(p, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x, f->bottom + 16,
            rp_tick(v, step, b, sizeof b));
  }
  rp_raw(p, "</g>\n");
}

/* x is a row index: up to 5 ticks labelled with the row's text (the first 16 characters of a timestamp) */
static void x_axis_text(rp_page *p, const rp_frame *f, const xmap *m, const char *const *xtext, int64_t n) {
  int ticks = n < 5 ? (int)n : 5;
  rp_raw(p, "<g class=\"xaxis\">");
  for (int k = 0; k < ticks; k++) {
    int64_t i = ticks > 1 ? (int64_t)llround((double)k * (double)(n - 1) / (ticks - 1)) : 0;
    double x = fx(f, m, (double)i);
    const char *anchor = ticks > 1 && k == 0 ? "start" : ticks > 1 && k == ticks - 1 ? "end" : "middle";
    char label[17];
    snprintf(label, sizeof label, "%s", xtext[i] ? xtext[i] : "");
    rp_rawf(p, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f->bottom, x, f->bottom + 4);
    rp_rawf(p, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, f->bottom + 16, anchor);
    rp_text(p, label);
    rp_raw(p, "</text>");
  }
  rp_raw(p, "</g>\n");
}

typedef struct pt {
  float x, y;
  int move; /* 1: a new run of the line starts here */
} pt;

typedef struct reducer {
  const rp_series *s;
  const rp_frame *f;
  const xmap *m;
  pt *out;
  int64_t n_out;
  int pen_up;
  int64_t idx[4]; /* the bucket's first, lowest, highest, last point (idx[0] < 0: empty) */
} reducer;

static void flush(reducer *r) {
  if (r->idx[0] < 0) return;
  int64_t *b = r->idx, prev = -1;
  int64_t order[4] = {b[0], b[1] < b[2] ? b[1] : b[2], b[1] < b[2] ? b[2] : b[1], b[3]};
  for (int k = 0; k < 4; k++) {
    if (order[k] <= prev) continue;
    prev = order[k];
    r->out[r->n_out++] = (pt){(float)fx(r->f, r->m, sx(r->s, prev)), (float)fy(r->f, r->s->y[prev]), r->pen_up};
    r->pen_up = 0;
  }
  r->idx[0] = -1;
}

/* The series as the points to draw: in each pixel column the first, lowest, highest and last point of a
 * run, so spikes survive; non-finite points break the line. Returns the number of points in out. */
static int64_t reduce(const rp_series *s, const rp_frame *f, const xmap *m, pt *out) {
  reducer r = {s, f, m, out, 0, 1, {-1, -1, -1, -1}};
  int64_t col = 0;
  for (int64_t i = 0; i < s->n; i++) {
    double x = sx(s, i), y = s->y[i];
    if (!isfinite(x) || !isfinite(y)) {
      flush(&r);
      r.pen_up = 1;
      continue;
    }
    int64_t c = (int64_t)floor(fx(f, m, x));
    if (r.idx[0] < 0 || c != col) {
      flush(&r);
      col = c;
      r.idx[0] = r.idx[1] = r.idx[2] = r.idx[3] = i;
    } else {
      if (y < s->y[r.idx[1]]) r.idx[1] = i;
      if (y > s->y[r.idx[2]]) r.idx[2] = i;
      r.idx[3] = i;
    }
  }
  flush(&r);
  return r.n_out;
}

static void draw_area(rp_page *p, const pt *v, int64_t n, double zero_y, const char *col) {
  rp_rawf(p, "<path fill=\"%s\" fill-opacity=\"0.16\" stroke=\"none\" d=\"", col);
  for (int64_t i = 0; i < n; i++) {
    if (v[i].move) {
      if (i > 0) rp_rawf(p, "L%.1f %.1fZ", v[i - 1].x, zero_y);
      rp_rawf(p, "M%.1f %.1f", v[i].x, zero_y);
    }
    rp_rawf(p, "L%.1f %.1f", v[i].x, v[i].y);
  }
  if (n > 0) rp_rawf(p, "L%.1f %.1fZ", v[n - 1].x, zero_y);
  rp_raw(p, "\"/>\n");
}

static void draw_series(rp_page *p, const rp_series *s, const rp_frame *f, const xmap *m, pt *buf) {
  int64_t n = reduce(s, f, m, buf);
  const char *col = rp_palette[s->color % RP_MAX_SERIES];
  if (n == 0) return;
  if (s->area) {
    double z = f->y0 > 0 ? f->y0 : f->y1 < 0 ? f->y1 : 0;
    draw_area(p, buf, n, fy(f, z), col);
  }
  rp_rawf(p, "<path class=\"ln\" stroke=\"%s\"%s d=\"", col, s->dashed ? " stroke-dasharray=\"5 4\"" : "");
  for (int64_t i = 0; i < n; i++) rp_rawf(p, "%c%.1f %.1f", buf[i].move ? 'M' : 'L', buf[i].x, buf[i].y);
  rp_raw(p, "\"/>\n");
  if (n <= 40)
    for (int64_t i = 0; i < n; i++)
      rp_rawf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"%s\"/>", buf[i].x, buf[i].y, col);
}

void rp_svg_lines(rp_page *p, const rp_chart *c) {
  rp_frame f = {c->w > 0 ? c->w : 540, c->h > 0 ? c->h : 280, 0, 0, 0, 0, 0, 0, 0};
  f.left = 64, f.right = f.w - 20, f.top = 54, f.bottom = f.h - 40;
  xmap m = {0, 1};
  double lo = 0, hi = 1;
  int have = data_range(c, &m, &lo, &hi);
  rp_frame_yrange(&f, lo, hi, c->y_zero);
  const char *names[RP_MAX_SERIES];
  int colors[RP_MAX_SERIES], dashed[RP_MAX_SERIES];
  int64_t most = 1;
  for (int k = 0; k < c->n_series; k++) {
    names[k] = c->s[k].name, colors[k] = c->s[k].color, dashed[k] = c->s[k].dashed;
    if (c->s[k].n > most) most = c->s[k].n;
  }
  rp_svg_open(p, c->id, c->title, &f, c->n_series, names, colors, dashed, c->ylabel);
  if (!have) {
    rp_rawf(p, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no finite values</text>\n", (f.left + f.right) / 2,
            (f.top + f.bottom) / 2);
  } else {
    if (c->xtext) x_axis_text(p, &f, &m, c->xtext, c->s[0].n);
    else x_axis_numbers(p, &f, &m, c->x_int);
    pt *buf = tg_malloc((size_t)most * sizeof *buf);
    for (int k = 0; buf && k < c->n_series; k++) draw_series(p, &c->s[k], &f, &m, buf);
    if (!buf) p->b.oom = 1;
    tg_free(buf);
  }
  rp_svg_xlabel(p, &f, c->xlabel);
  rp_svg_close(p);
}

int rp_chart_add(rp_chart *c, const char *name, const double *x, const double *y, int64_t n, int color, int dashed) {
  if (!y || c->n_series == RP_MAX_SERIES || !rp_any_finite(y, n)) return 0;
  c->s[c->n_series++] = (rp_series){name, x, y, n, color, dashed, 0};
  return 1;
}

void rp_svg_lines_or(rp_page *p, const rp_chart *c, const char *why) {
  if (c->n_series > 0) {
    rp_svg_lines(p, c);
    return;
  }
  rp_raw(p, "<div class=\"nochart\"><div class=\"t\">");
  rp_text(p, c->title);
  rp_raw(p, "</div>");
  rp_unavailable(p, "%s", why);
  rp_raw(p, "</div>\n");
}
