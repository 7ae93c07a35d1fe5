/* Each kind's own settings: its rows, defaults and checks (the model table's entries hold and call these). */
#include <stddef.h>
#include "models/models_internal.h"
#include "tickgrad/status.h"

/* an int row of the model's part of tg_forecast_cfg: key, flag (NULL: --key), member, range, help */
#define INT_ROW(k, f, m, l, h, hl) \
  {.key = k, .flag = f, .type = TG_SET_INT, .off = offsetof(tg_forecast_cfg, m), .lo = l, .hi = h, .help = hl}

const tg_setting tg_tft_settings[TG_TFT_SETTINGS] = {
    INT_ROW("tft.hidden", NULL, tft.hidden, 1, 65536, "tft: d_model (default 64)"),
    INT_ROW("tft.heads", NULL, tft.heads, 1, 1024, "tft: attention heads (default 4)"),
    INT_ROW("tft.enc_len", NULL, tft.enc_len, 1, 1 << 20, "tft: encoder steps (default 64)"),
    INT_ROW("tft.vol_scale", NULL, tft.vol_scale, 0, 1,
            "tft: 1 (default) multiplies each window's quantiles by the recent volatility of its encoder bars (the root "
            "mean square of the normalised logret feature), so the bands widen and narrow with the market; 0: the "
            "network's outputs as they come (runs whose config.json lacks it; a classifier's logits always)"),
};

const tg_setting tg_mamba2_settings[TG_MAMBA2_SETTINGS] = {
    INT_ROW("mamba2.d_model", NULL, mamba.d_model, 1, 65536, "mamba2: width (default 128)"),
    INT_ROW("mamba2.n_layers", "--layers", mamba.n_layers, 1, 1024, "mamba2: blocks (default 2)"),
    INT_ROW("mamba2.d_state", NULL, mamba.d_state, 1, 65536, "mamba2: state size per head (default 64)"),
    INT_ROW("mamba2.headdim", NULL, mamba.headdim, 1, 65536, "mamba2: head width (default 32)"),
    INT_ROW("mamba2.expand", NULL, mamba.expand, 1, 64, "mamba2: inner width as a multiple of --d-model (default 2)"),
    INT_ROW("mamba2.d_conv", NULL, mamba.d_conv, 1, 16, "mamba2: causal convolution taps (default 4)"),
    INT_ROW("mamba2.ngroups", NULL, mamba.ngroups, 1, 1024, "mamba2: groups sharing B and C (default 1)"),
    INT_ROW("mamba2.chunk", NULL, mamba.chunk, 1, 1 << 20, "mamba2: SSD chunk (default 64)"),
    INT_ROW("mamba2.seq_len", NULL, mamba.seq_len, 1, 1 << 20, "mamba2: window length (default 128)"),
};

const tg_setting tg_mlp_settings[TG_MLP_SETTINGS] = {
    INT_ROW("mlp.window", NULL, mlp.window, 1, 1 << 20, "mlp: past bars (default 16)"),
    INT_ROW("mlp.hidden", NULL, mlp.hidden, 1, 65536, "mlp: hidden units (default 64)"),
};

const tg_setting tg_transformer_settings[TG_TRANSFORMER_SETTINGS] = {
    INT_ROW("transformer.d_model", NULL, transformer.d_model, 1, 65536,
            "transformer: width (default 64; a multiple of --heads)"),
    INT_ROW("transformer.n_heads", "--heads", transformer.n_heads, 1, 1024, "transformer: attention heads (default 4)"),
    INT_ROW("transformer.n_layers", "--layers", transformer.n_layers, 1, 1024, "transformer: blocks (default 2)"),
    INT_ROW("transformer.seq_len", NULL, transformer.seq_len, 1, 1 << 20, "transformer: window length (default 64)"),
};

void tg_tft_defaults(tg_forecast_cfg *c) { c->tft = (tg_tft_cfg){.hidden = 64, .heads = 4, .enc_len = 64, .dec_len = 8}; }

void tg_mamba2_defaults(tg_forecast_cfg *c) {
  c->mamba = (tg_mamba2_cfg){.d_model = 128, .n_layers = 2, .d_state = 64, .headdim = 32, .expand = 2,
                             .d_conv = 4, .ngroups = 1, .chunk = 64, .seq_len = 128};
}

void tg_mlp_defaults(tg_forecast_cfg *c) { c->mlp = (tg_mlp_cfg){.window = 16, .hidden = 64}; }

void tg_transformer_defaults(tg_forecast_cfg *c) {
  c->transformer = (tg_transformer_cfg){.d_model = 64, .n_heads = 4, .n_layers = 2, .seq_len = 64};
}

const tg_setting tg_patchtst_settings[TG_PATCHTST_SETTINGS] = {
    INT_ROW("patchtst.d_model", NULL, patchtst.d_model, 1, 65536, "patchtst: width (default 64; a multiple of --heads)"),
    INT_ROW("patchtst.n_heads", "--heads", patchtst.n_heads, 1, 1024, "patchtst: attention heads (default 4)"),
    INT_ROW("patchtst.n_layers", "--layers", patchtst.n_layers, 1, 1024, "patchtst: encoder blocks (default 2)"),
    INT_ROW("patchtst.seq_len", NULL, patchtst.seq_len, 1, 1 << 20, "patchtst: window length (default 64)"),
    INT_ROW("patchtst.patch_len", NULL, patchtst.patch_len, 1, 1 << 20,
            "patchtst: steps per patch (default 16; at most --seq-len)"),
    INT_ROW("patchtst.stride", NULL, patchtst.stride, 1, 1 << 20,
            "patchtst: steps between patch starts (default 8; floor((seq_len - patch_len) / stride) + 1 <= 256 patches)"),
};

void tg_patchtst_defaults(tg_forecast_cfg *c) {
  c->patchtst = (tg_patchtst_cfg){.d_model = 64, .n_heads = 4, .n_layers = 2, .seq_len = 64, .patch_len = 16, .stride = 8};
}

tg_status tg_patchtst_check(const tg_forecast_cfg *c) {
  const tg_patchtst_cfg *p = &c->patchtst;
  TG_NEED(p->d_model >= 1 && p->n_heads >= 1 && p->d_model % p->n_heads == 0,
          "patchtst: d_model %d must be a positive multiple of n_heads %d", p->d_model, p->n_heads);
  TG_NEED(p->n_layers >= 1, "patchtst: n_layers %d must be >= 1", p->n_layers);
  TG_NEED(p->seq_len >= 1 && p->patch_len >= 1 && p->patch_len <= p->seq_len,
          "patchtst: patch_len %d must be in 1..seq_len %d", p->patch_len, p->seq_len);
  TG_NEED(p->stride >= 1, "patchtst: stride %d must be >= 1", p->stride);
  TG_NEED(tg_patchtst_patches(p) <= TG_PATCHTST_MAX_PATCHES,
          "patchtst: seq_len %d, patch_len %d and stride %d make %d patches; at most %d (a longer stride or patch)",
          p->seq_len, p->patch_len, p->stride, tg_patchtst_patches(p), TG_PATCHTST_MAX_PATCHES);
  return TG_OK;
}

tg_status tg_tft_check(const tg_forecast_cfg *c) {
  const tg_tft_cfg *t = &c->tft;
  TG_NEED(t->hidden >= 1 && t->heads >= 1 && t->hidden % t->heads == 0,
          "tft: hidden %d must be a positive multiple of heads %d", t->hidden, t->heads);
  TG_NEED(t->enc_len >= 1 && t->dec_len >= 1, "tft: encoder %d and decoder %d steps must be >= 1", t->enc_len,
          t->dec_len);
  TG_NEED(t->dec_len == c->horizons, "tft: decoder steps %d must equal horizons %d (one forecast per decoder step)",
          t->dec_len, c->horizons);
  TG_NEED(c->n_future >= 1, "tft: n_future %d: the decoder needs at least one known-future feature", c->n_future);
  TG_NEED(!t->vol_scale || (t->vol_scale == 1 && t->vol_col >= 0 && t->vol_col < c->n_past - c->n_cat),
          "tft: vol_scale %d reads past column %d; it must be 0 or 1, and the column one of the %d numeric inputs",
          t->vol_scale, t->vol_col, c->n_past - c->n_cat);
  return TG_OK;
}

tg_status tg_transformer_check(const tg_forecast_cfg *c) {
  const tg_transformer_cfg *t = &c->transformer;
  TG_NEED(t->d_model >= 1 && t->n_heads >= 1 && t->d_model % t->n_heads == 0,
          "transformer: d_model %d must be a positive multiple of n_heads %d", t->d_model, t->n_heads);
  TG_NEED(t->n_layers >= 1, "transformer: n_layers %d must be >= 1", t->n_layers);
  TG_NEED(t->seq_len >= 1, "transformer: seq_len %d must be >= 1", t->seq_len);
  return TG_OK;
}

tg_status tg_mlp_check(const tg_forecast_cfg *c) {
  TG_NEED(c->mlp.window >= 1 && c->mlp.hidden >= 1, "mlp: window %d and hidden %d must be >= 1", c->mlp.window,
          c->mlp.hidden);
  return TG_OK;
}

tg_status tg_mamba2_check(const tg_forecast_cfg *c) {
  const tg_mamba2_cfg *m = &c->mamba;
  TG_NEED(m->d_model >= 1 && m->n_layers >= 1 && m->d_state >= 1 && m->headdim >= 1 && m->expand >= 1,
          "mamba2: d_model %d, layers %d, d_state %d, headdim %d, expand %d must all be >= 1", m->d_model,
          m->n_layers, m->d_state, m->headdim, m->expand);
  TG_NEED((m->expand * m->d_model) % m->headdim == 0,
          "mamba2: d_inner %d (expand x d_model) must be a multiple of headdim %d", m->expand * m->d_model, m->headdim);
  int heads = m->expand * m->d_model / m->headdim;
  TG_NEED(m->ngroups >= 1 && heads % m->ngroups == 0, "mamba2: heads %d must be a multiple of ngroups %d", heads,
          m->ngroups);
  TG_NEED(m->d_conv >= 1 && m->d_conv <= 16, "mamba2: d_conv %d must be in 1..16", m->d_conv);
  TG_NEED(m->chunk >= 1, "mamba2: chunk %d must be >= 1", m->chunk);
  TG_NEED(m->seq_len >= 1, "mamba2: seq_len %d must be >= 1", m->seq_len);
  return TG_OK;
}
