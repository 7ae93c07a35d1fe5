// ppo_loss (ops/ppo_row.h's formulas, in float so that GPUs without fp64 run it): pol [b, a] (categorical logits, or
// Gaussian means with log_std [a]: flag 4), value [b], actions (categorical: [b] i32 or i64 (flag 8: wide); Gaussian:
// [b, a] f32), and the rollout copied into work: old_logp, adv, ret, old_value [b] each, then the advantages' mean and
// sd [2], then per-sample rows [b, m]. Flags: 1 clip the value loss, 2 normalise the advantages, 16 dp, 32 dv, 64 dls.
// mode 0 (one workgroup): the advantages' mean and unbiased sd + 1e-8 (0 and 1 without normalising); 1: per sample,
// its terms (pg, v, ent, kl, clip) into the rows (m = 5); 2 (one workgroup): their sums into out [6] as the CPU writes
// them; 3: per sample, dv and dp (and, Gaussian, its share of each log_std gradient into the rows, m = a); 4: a
// workgroup per action dim d, dls[d] += the sum of the shares. A categorical action outside [0, a) is a fault.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Args {
  F32 pol; F32 value; U32 actions; F32 log_std; F32 og; F32 dp; F32 dv; F32 dls; F32 work; U32 fault;
  uint b; uint a; uint mode; uint flags; uint op; float clip; float vf; float ent;
} p;

const float HALF_LOG_2PI = 0.91893853320467274178;

bool has(uint bit) { return (p.flags & bit) != 0u; }
float old_logp(uint i) { return p.work.v[i]; }
float ret(uint i) { return p.work.v[2u * p.b + i]; }
float old_value(uint i) { return p.work.v[3u * p.b + i]; }
float adv(uint i) { return (p.work.v[p.b + i] - p.work.v[4u * p.b]) / p.work.v[4u * p.b + 1u]; }
uint rows_at() { return 4u * p.b + 2u; } // the per-sample rows in work

float nanmax(float x, float y) { return isnan(x) ? x : (x > y ? x : y); } // NaN in either gives NaN, as torch.max

// The categorical sample's action (false: outside [0, a), recorded as a fault).
bool action(uint i, out uint act) {
  uint hi;
  bool ok = tg_index(p.actions, i, has(8u), p.a, act, hi);
  if (!ok) tg_fault(p.fault, p.op, i, act, hi);
  return ok;
}

float lse(uint base) {
  float m = p.pol.v[base];
  for (uint j = 1u; j < p.a; j++) m = max(m, p.pol.v[base + j]);
  float s = 0.0;
  for (uint j = 0u; j < p.a; j++) s += exp(p.pol.v[base + j] - m);
  return m + log(s);
}

float entropy(uint base, float l) {
  float h = 0.0;
  for (uint j = 0u; j < p.a; j++) {
    float lp = p.pol.v[base + j] - l;
    h -= exp(lp) * lp;
  }
  return h;
}

// Sample i's log pi(action) and entropy; ok false for a bad categorical action.
vec2 policy(uint i, out bool ok) {
  uint base = i * p.a;
  ok = true;
  if (has(4u)) {
    vec2 r = vec2(0.0);
    for (uint d = 0u; d < p.a; d++) {
      float ls = p.log_std.v[d], z = (uintBitsToFloat(p.actions.v[base + d]) - p.pol.v[base + d]) / exp(ls);
      r.x += -0.5 * z * z - ls - HALF_LOG_2PI;
      r.y += 0.5 + HALF_LOG_2PI + ls;
    }
    return r;
  }
  uint act;
  ok = action(i, act);
  float l = lse(base);
  return vec2(ok ? p.pol.v[base + act] - l : 0.0 / 0.0, entropy(base, l));
}

float value_term(uint i) {
  float e = p.value.v[i] - ret(i), vu = e * e;
  if (!has(1u)) return vu;
  float ec = old_value(i) + clamp(p.value.v[i] - old_value(i), -p.clip, p.clip) - ret(i);
  return nanmax(vu, ec * ec);
}

float value_grad(uint i) {
  float e = p.value.v[i] - ret(i), du = 2.0 * e;
  if (!has(1u)) return du;
  float d = p.value.v[i] - old_value(i);
  float ec = old_value(i) + clamp(d, -p.clip, p.clip) - ret(i);
  float dc = (d >= -p.clip && d <= p.clip) ? 2.0 * ec : 0.0;
  float vu = e * e, vc = ec * ec;
  return vu > vc ? du : (vu < vc ? dc : 0.5 * (du + dc));
}

void main() {
  uint lane = gl_LocalInvocationID.x;
  if (p.mode == 0u) {
    if (gl_WorkGroupID.x != 0u) return;
    float s = 0.0;
    for (uint i = lane; i < p.b; i += 256u) s += p.work.v[p.b + i];
    float mean = has(2u) ? tg_group_sum(s) / float(p.b) : 0.0;
    float q = 0.0;
    for (uint i = lane; i < p.b; i += 256u) q += (p.work.v[p.b + i] - mean) * (p.work.v[p.b + i] - mean);
    float sd = has(2u) ? sqrt(tg_group_sum(q) / float(p.b - 1u)) + 1e-8 : 1.0;
    if (lane == 0u) p.work.v[4u * p.b] = mean, p.work.v[4u * p.b + 1u] = sd;
    return;
  }
  if (p.mode == 2u) {
    if (gl_WorkGroupID.x != 0u) return;
    float t[5];
    for (uint k = 0u; k < 5u; k++) {
      float s = 0.0;
      for (uint i = lane; i < p.b; i += 256u) s += p.work.v[rows_at() + 5u * i + k];
      t[k] = tg_group_sum(s) / float(p.b);
    }
    if (lane == 0u) {
      float v = 0.5 * t[1];
      p.og.v[0] = t[0] - p.ent * t[2] + p.vf * v; // og is out here
      p.og.v[1] = t[0];
      p.og.v[2] = v;
      p.og.v[3] = t[2];
      p.og.v[4] = t[3];
      p.og.v[5] = t[4];
    }
    return;
  }
  if (p.mode == 4u) {
    for (uint d = gl_WorkGroupID.x; d < p.a; d += gl_NumWorkGroups.x) { // uniform in the workgroup
      float s = 0.0;
      for (uint i = lane; i < p.b; i += 256u) s += p.work.v[rows_at() + i * p.a + d];
      s = tg_group_sum(s);
      if (lane == 0u) p.dls.v[d] += s;
    }
    return;
  }
  for (uint i = gl_GlobalInvocationID.x; i < p.b; i += TG_STRIDE) {
    bool ok;
    vec2 pol = policy(i, ok);
    float logratio = pol.x - old_logp(i), r = exp(logratio), rc = clamp(r, 1.0 - p.clip, 1.0 + p.clip);
    float pg1 = -adv(i) * r, pg2 = -adv(i) * rc;
    if (p.mode == 1u) {
      uint o = rows_at() + 5u * i;
      p.work.v[o] = nanmax(pg1, pg2);
      p.work.v[o + 1u] = value_term(i);
      p.work.v[o + 2u] = pol.y;
      p.work.v[o + 3u] = (r - 1.0) - logratio;
      p.work.v[o + 4u] = abs(r - 1.0) > p.clip ? 1.0 : 0.0;
      continue;
    }
    float inv = 1.0 / float(p.b); // the seeds of each term's sum (ppo_row.h's tg_ppo_seed_of)
    float gpg = (p.og.v[0] + p.og.v[1]) * inv, gv = (p.vf * p.og.v[0] + p.og.v[2]) * 0.5 * inv;
    float gent = (p.og.v[3] - p.ent * p.og.v[0]) * inv, gkl = p.og.v[4] * inv;
    if (has(32u)) p.dv.v[i] += gv * value_grad(i);
    if (!ok) continue;
    float dlogp = gpg * (pg1 >= pg2 ? pg1 : 0.0) + gkl * (r - 1.0);
    uint base = i * p.a;
    if (has(4u)) {
      for (uint d = 0u; d < p.a; d++) {
        float sg = exp(p.log_std.v[d]), z = (uintBitsToFloat(p.actions.v[base + d]) - p.pol.v[base + d]) / sg;
        if (has(16u)) p.dp.v[base + d] += dlogp * z / sg;
        if (has(64u)) p.work.v[rows_at() + base + d] = dlogp * (z * z - 1.0) + gent;
      }
      continue;
    }
    if (!has(16u)) continue;
    uint act;
    action(i, act);
    float l = lse(base), h = entropy(base, l);
    for (uint k = 0u; k < p.a; k++) {
      float lp = p.pol.v[base + k] - l, pk = exp(lp);
      p.dp.v[base + k] += dlogp * ((k == act ? 1.0 : 0.0) - pk) - gent * pk * (lp + h);
    }
  }
}
