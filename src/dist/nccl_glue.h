/* NCCL among the ranks' GPUs (src/backend/cuda/cuda_nccl.cu): the pieces dist.c puts together with MPI. */
#ifndef TG_DIST_NCCL_GLUE_H
#define TG_DIST_NCCL_GLUE_H

#include <stddef.h>
#include "tickgrad/status.h"

#define TG_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

/* 1 when this build has NCCL. */
int tg_nccl_built(void);
/* A new unique id (rank 0), to be sent to every rank. */
tg_status tg_nccl_unique_id(unsigned char id[TG_NCCL_ID_BYTES]);
/* This rank's communicator on cuda:dev. */
tg_status tg_nccl_open(const unsigned char id[TG_NCCL_ID_BYTES], int nranks, int rank, int dev);
/* data[n] (on cuda:dev) becomes its mean over the ranks, enqueued on dev's compute stream (capturable). */
tg_status tg_nccl_mean(float *data, size_t n, int dev);
void tg_nccl_close(void);

#endif
