/* The stream's columns as the model reads them: the features in the run's order, and a TFT's known-future leads. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "predict/predict_internal.h"

int pr_cols_count_known(const char *spec) {
  int n = 0;
  for (const char *s = spec; s && (s = strstr(s, "known:")) != NULL; s += 6)
    n += s == spec || s[-1] == ',';
  return n;
}

/* The stream column named name, or -1. */
static int column_of(const tg_feature_stream *fs, int width, const char *name) {
  for (int j = 0; j < width; j++)
    if (strcmp(tg_feature_stream_name(fs, j), name) == 0) return j;
  return -1;
}

static tg_status map_leads(pr_cols *c, const tg_feature_stream *fs, const pr_meta *m) {
  int k = 0;
  for (int j = 0; j < c->width && k <= c->n_known; j++) { /* each known: input's first lead names it */
    const char *name = tg_feature_stream_name(fs, j), *at = strstr(name, "@+1");
    if (!at || at[3] || k == c->n_known) continue;
    char base[TG_NAME_MAX];
    snprintf(base, sizeof base, "%.*s", (int)(at - name), name);
    c->known_feat[k] = -1;
    for (int f = 0; f < m->f; f++)
      if (strcmp(m->names[f], base) == 0) c->known_feat[k] = f;
    for (int h = 1; h <= c->H && c->known_feat[k] >= 0; h++) {
      char lead[TG_NAME_MAX + 16];
      snprintf(lead, sizeof lead, "%s@+%d", base, h);
      c->lead_col[k * c->H + h - 1] = column_of(fs, c->width, lead);
      if (c->lead_col[k * c->H + h - 1] < 0) c->known_feat[k] = -1;
    }
    if (c->known_feat[k] < 0)
      return tg_error(TG_ERR_FORMAT, "predict: the known: input '%s' has no feature column or lead columns", base);
    k++;
  }
  return k == c->n_known ? TG_OK : tg_error(TG_ERR_FORMAT, "predict: %d known: inputs, %d with lead columns",
                                             c->n_known, k);
}

tg_status pr_cols_open(pr_cols *c, const tg_feature_stream *fs, const pr_meta *m, int H, const char *run) {
  memset(c, 0, sizeof *c);
  c->width = tg_feature_stream_width(fs);
  c->H = H;
  c->n_known = H ? c->width - m->f : 0; /* a TFT's extra stream columns are its known: inputs' leads */
  if (c->n_known < 0 || (H && c->n_known % H))
    return tg_error(TG_ERR_FORMAT, "predict: the feature spec gives %d columns, %s/inference.json names %d", c->width,
                    run, m->f);
  c->n_known = H ? c->n_known / H : 0;
  c->past_col = tg_calloc((size_t)m->f, sizeof *c->past_col);
  c->known_feat = tg_calloc((size_t)(c->n_known + 1), sizeof *c->known_feat);
  c->lead_col = tg_calloc((size_t)(c->n_known * H + 1), sizeof *c->lead_col);
  c->fut = tg_calloc((size_t)(c->n_known * H + 1), sizeof *c->fut);
  if (!c->past_col || !c->known_feat || !c->lead_col || !c->fut) return tg_error(TG_ERR_NOMEM, "predict: out of memory");
  if (!c->n_known && c->width != m->f)
    return tg_error(TG_ERR_FORMAT, "predict: the feature spec gives %d columns, %s/inference.json names %d", c->width,
                    run, m->f);
  int j = 0;
  for (int f = 0; f < m->f; f++, j++) { /* the run's features in order; the leads a TFT does not read skipped */
    while (c->n_known && j < c->width && strcmp(tg_feature_stream_name(fs, j), m->names[f]) != 0 &&
           strstr(tg_feature_stream_name(fs, j), "@+"))
      j++;
    if (j == c->width || strcmp(tg_feature_stream_name(fs, j), m->names[f]) != 0)
      return tg_error(TG_ERR_FORMAT, "predict: feature %d is '%s', %s/inference.json says '%s'", f,
                      j < c->width ? tg_feature_stream_name(fs, j) : "(none)", run, m->names[f]);
    c->past_col[f] = j;
  }
  return c->n_known ? map_leads(c, fs, m) : TG_OK;
}

void pr_cols_take(pr_cols *c, const pr_meta *m, const float *raw, float *x) {
  for (int f = 0; f < m->f; f++) x[f] = (float)((raw[c->past_col[f]] - m->mean[f]) / m->std[f]);
  for (int k = 0; k < c->n_known; k++) {
    int f = c->known_feat[k];
    float last = x[f]; /* the value at t: a missing lead carries it (or the lead before) forward */
    for (int h = 0; h < c->H; h++) {
      float v = raw[c->lead_col[k * c->H + h]];
      if (!isnan(v)) last = (float)((v - m->mean[f]) / m->std[f]);
      c->fut[h * c->n_known + k] = last;
    }
  }
}

void pr_cols_close(pr_cols *c) {
  tg_free(c->past_col);
  tg_free(c->known_feat);
  tg_free(c->lead_col);
  tg_free(c->fut);
  memset(c, 0, sizeof *c);
}
