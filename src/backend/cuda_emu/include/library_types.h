/* Emulated CUDA: stands in for the toolkit's library_types.h: the element types the library calls name (same values). */
#ifndef TG_EMU_LIBRARY_TYPES_H
#define TG_EMU_LIBRARY_TYPES_H

typedef enum cudaDataType_t {
  CUDA_R_32F = 0,  /* float */
  CUDA_R_64F = 1,  /* double */
  CUDA_R_16F = 2,  /* half */
  CUDA_R_8I = 3,   /* signed 8-bit int */
  CUDA_R_32I = 10, /* signed 32-bit int */
  CUDA_R_16BF = 14 /* __nv_bfloat16 */
} cudaDataType;

#endif
