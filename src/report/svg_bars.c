/* SVG stacked bar charts: one bar per x (an epoch), its parts stacked bottom to top. */
#include <math.h>
#include <stdio.h>
#include "report/report_internal.h"

static double part(const rp_stack *c, int k, int64_t i) { return isfinite(c->v[k][i]) && c->v[k][i] > 0 ? c->v[k][i] : 0; }

void rp_svg_stack(rp_page *p, const rp_stack *c) {
  rp_frame f = {540, 280, 64, 520, 54, 240, 0, 0, 0};
  double most = 0;
  for (int64_t i = 0; i < c->n; i++) {
    double total = 0;
    for (int k = 0; k < c->n_parts; k++) total += part(c, k, i);
    most = total > most ? total : most;
  }
  rp_frame_yrange(&f, 0, most > 0 ? most : 1, 1);
  int colors[RP_MAX_SERIES], dashed[RP_MAX_SERIES] = {0};
  for (int k = 0; k < c->n_parts; k++) colors[k] = k;
  rp_svg_open(p, c->id, c->title, &f, c->n_parts, c->names, colors, dashed, c->ylabel);
  double slot = (f.right - f.left) / (double)(c->n > 0 ? c->n : 1), bw = slot * 0.7 < 1 ? 1 : slot * 0.7;
  double scale = (f.bottom - f.top) / (f.y1 - f.y0);
  int64_t every = c->n <= 12 ? 1 : (c->n + 11) / 12; /* at most about 12 labels */
  char b[48];
  for (int64_t i = 0; i < c->n; i++) {
    double x = f.left + slot * ((double)i + 0.5), y = f.bottom;
    for (int k = 0; k < c->n_parts; k++) {
      double h = part(c, k, i) * scale;
      if (h <= 0) continue;
      y -= h;
      rp_rawf(p, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>", x - bw / 2, y, bw, h,
              rp_palette[k]);
    }
    if (i % every == 0)
      rp_rawf(p, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x, f.bottom + 16,
              rp_tick(c->x ? c->x[i] : (double)(i + 1), 1, b, sizeof b));
    rp_raw(p, "\n");
  }
  rp_svg_xlabel(p, &f, c->xlabel);
  rp_svg_close(p);
}
