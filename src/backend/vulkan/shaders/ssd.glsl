// The SSD scan's shapes, indexing and workspace layouts (ops/ssd_ref.h's, in 32-bit words) for the ssd_* shaders,
// which declare their push constants p (with the dims B, L, H, P, G, N, Q, K) before including this. Pair = b H + h;
// x [B, L, H, P], dt [B, L, H], A [H], Bm and Cm [B, L, G, N] (head h reads group h / (H / G)).

uint ssd_nc() { return (p.L + p.Q - 1u) / p.Q; }
uint ssd_nk() { return (p.L + p.K - 1u) / p.K; }
uint ssd_np() { return p.N * p.P; }
uint ssd_pairs() { return p.B * p.H; }
uint ssd_h(uint pair) { return pair % p.H; }
uint ssd_b(uint pair) { return pair / p.H; }
// Offset of x_t / y_t [P] of the pair; index of dt_t; offset of B_t / C_t [N] of its group; of its per-head row [N].
uint ssd_xrow(uint pair, uint t) { return ((ssd_b(pair) * p.L + t) * p.H + ssd_h(pair)) * p.P; }
uint ssd_dtix(uint pair, uint t) { return (ssd_b(pair) * p.L + t) * p.H + ssd_h(pair); }
uint ssd_brow(uint pair, uint t) { return ((ssd_b(pair) * p.L + t) * p.G + ssd_h(pair) / (p.H / p.G)) * p.N; }
uint ssd_hrow(uint pair, uint t) { return ((ssd_b(pair) * p.L + t) * p.H + ssd_h(pair)) * p.N; }

// Forward workspace: states [pairs, nc, N, P], din [pairs, L], wout [pairs, L], tot [pairs, nc].
uint ssd_f_din() { return ssd_pairs() * ssd_nc() * ssd_np(); }
uint ssd_f_wout() { return ssd_f_din() + ssd_pairs() * p.L; }
uint ssd_f_tot() { return ssd_f_wout() + ssd_pairs() * p.L; }

// Backward workspace: per pair [pair_len] = bnd [nk, N, P], hs [K, N, P], dh [N, P], u [P]; then dAp, dDp [pairs],
// dBp, dCp [B, L, H, N].
uint ssd_b_hs() { return ssd_nk() * ssd_np(); }
uint ssd_b_dh() { return ssd_b_hs() + p.K * ssd_np(); }
uint ssd_b_u() { return ssd_b_dh() + ssd_np(); }
uint ssd_b_pair_len() { return ssd_b_u() + p.P; }
uint ssd_b_dAp() { return ssd_pairs() * ssd_b_pair_len(); }
uint ssd_b_dDp() { return ssd_b_dAp() + ssd_pairs(); }
uint ssd_b_dBp() { return ssd_b_dDp() + ssd_pairs(); }
uint ssd_b_dCp() { return ssd_b_dBp() + p.B * p.L * p.H * p.N; }

// Buffer writes of the workgroup made visible to all of it, then a barrier.
void ssd_sync() {
  memoryBarrier();
  barrier();
}
