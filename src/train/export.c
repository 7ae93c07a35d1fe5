/* Writes the prepared training and validation windows to a safetensors file, for peers to train on exactly the same data. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "tickgrad/checkpoint.h"
#include "train/train_internal.h"

/* Every valid window start of split s in position order (its runs; holes left out): [count] i64, malloc'ed. */
static int64_t *split_starts(const tg_split *s, int k) {
  int64_t *out = tg_malloc((size_t)(s->count > 0 ? s->count : 1) * sizeof *out), n = 0;
  if (!out) return NULL;
  for (int64_t q = 0; q < tg_split_n_runs(s, k); q++) {
    int64_t b, e;
    tg_split_run(s, q, &b, &e);
    for (int64_t p = b; p < e && n < s->count; p++) out[n++] = p;
  }
  return out;
}

static void join_names(const tg_features *fx, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int j = 0; j < fx->f && at < cap; j++) at += (size_t)snprintf(buf + at, cap - at, "%s%s", j ? "," : "", fx->names[j]);
}

tg_status tg_train_export_windows(const tg_train_config *cin, const tg_bars *bars, const char *path) {
  tg_train_config c = *cin;
  tg_status st = tg_train_config_check(&c);
  if (st != TG_OK) return st;
  tr_settle_tz(&c); /* as a new run would */
  if (!(tg_model_caps(c.model.kind) & TG_CAP_EXPORT_WINDOWS))
    return tg_error(TG_ERR_INVALID, "export: windows are exported for --model tft (encoder, decoder and known-future "
                    "columns), not %s", tg_train_model_name(c.model.kind));
  tr_data d;
  tg_forecast_cfg model = c.model;
  if ((st = tr_data_open(&d, &c, bars, tg_cpu(0), &model, c.log)) != TG_OK) {
    tr_data_close(&d);
    return st;
  }
  const tg_dataset *ds = &d.ds;
  int64_t n = ds->layout.n, H = d.H, F = d.F;
  float *y = tg_malloc((size_t)(n * H) * sizeof *y), *scale = tg_malloc((size_t)H * sizeof *scale);
  int64_t *tr = split_starts(&ds->splits.s[TG_TRAIN], ds->splits.k), *va = split_starts(&ds->splits.s[TG_VAL], ds->splits.k);
  int64_t *te = split_starts(&ds->splits.s[TG_TEST], ds->splits.k);
  if (!y || !scale || !tr || !va || !te) st = tg_error(TG_ERR_NOMEM, "export: out of memory");
  if (st == TG_OK) {
    const float *ys = ds->y_ret.data; /* [n, H] scaled by 1 / scale[h]: back to log returns */
    for (int64_t i = 0; i < n * H; i++) y[i] = (float)((double)ys[i] * d.scale[i % H]);
    for (int64_t h = 0; h < H; h++) scale[h] = (float)d.scale[h];
    int64_t sx[2] = {n, F}, sy[2] = {n, H}, sn[1] = {n}, sh[1] = {H};
    int64_t st_[1] = {ds->splits.s[TG_TRAIN].count}, sv[1] = {ds->splits.s[TG_VAL].count};
    int64_t ste[1] = {ds->splits.s[TG_TEST].count};
    tg_tensor t[8];
    tg_tensor_view(&t[0], "x", tg_cpu(0), TG_F32, 2, sx, ds->x.data);
    tg_tensor_view(&t[1], "y", tg_cpu(0), TG_F32, 2, sy, y);
    tg_tensor_view(&t[2], "rows", tg_cpu(0), TG_I64, 1, sn, ds->layout.rows);
    tg_tensor_view(&t[3], "inst", tg_cpu(0), TG_I32, 1, sn, ds->layout.inst);
    tg_tensor_view(&t[4], "train_starts", tg_cpu(0), TG_I64, 1, st_, tr);
    tg_tensor_view(&t[5], "val_starts", tg_cpu(0), TG_I64, 1, sv, va);
    tg_tensor_view(&t[6], "y_scale", tg_cpu(0), TG_F32, 1, sh, scale);
    tg_tensor_view(&t[7], "test_starts", tg_cpu(0), TG_I64, 1, ste, te);
    char enc[16], dec[16], fut[64] = "", hid[16], heads[16], drop[32], qs[256] = "", names[4096], rule[256];
    snprintf(enc, sizeof enc, "%d", d.enc ? d.enc : d.Lp);
    snprintf(dec, sizeof dec, "%d", d.dec);
    for (int j = 0, at = 0; j < d.nfut; j++) at += snprintf(fut + at, sizeof fut - (size_t)at, "%s%d", j ? "," : "", d.fut_col[j]);
    snprintf(hid, sizeof hid, "%d", model.tft.hidden);
    snprintf(heads, sizeof heads, "%d", model.tft.heads);
    snprintf(drop, sizeof drop, "%g", (double)model.dropout);
    for (int j = 0, at = 0; j < model.nq; j++) at += snprintf(qs + at, sizeof qs - (size_t)at, "%s%g", j ? "," : "", (double)model.q[j]);
    join_names(&ds->fx, names, sizeof names);
    snprintf(rule, sizeof rule, "by bars: train the first %g, val the next %g, test the rest; a window belongs to a split "
             "when its rows and its targets' bars all lie inside it", c.train_frac, c.val_frac);
    tg_kv meta[] = {{"model", tg_train_model_name(model.kind)}, {"enc_len", enc}, {"dec_len", dec}, {"future_cols", fut},
                    {"hidden", hid}, {"heads", heads}, {"dropout", drop}, {"quantiles", qs}, {"features", names},
                    {"split_rule", rule}};
    st = tg_safetensors_save(path, 8, t, (int)(sizeof meta / sizeof meta[0]), meta);
    if (st == TG_OK && c.log)
      fprintf(c.log, "wrote %s: %lld rows x %lld features, %lld train, %lld validation and %lld test windows\n", path,
              (long long)n, (long long)F, (long long)st_[0], (long long)sv[0], (long long)ste[0]);
  }
  tg_free(y);
  tg_free(scale);
  tg_free(tr);
  tg_free(va);
  tg_free(te);
  tr_data_close(&d);
  return st;
}
