/* TEMP stand-in until the bf16 branch merges. */
#ifndef TG_BASE_BF16_H
#define TG_BASE_BF16_H
#include <stddef.h>
#include <stdint.h>
void tg_bf16_pack(uint16_t *dst, const float *src, size_t n);
void tg_f32_round_bf16(float *dst, const float *src, size_t n);
#endif
