/* The CUDA backend's collectives: NCCL among data-parallel ranks' GPUs, a communicator per process and the mean on the compute stream. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda/cuda_internal.h"
#include "graph/backend.h"
#if TG_HAVE_NCCL
#include <nccl.h>

#define NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

static ncclComm_t g_comm = NULL;

static tg_status nccl_fail(ncclResult_t r, const char *what) {
  return tg_error(TG_ERR_DEVICE, "nccl: %s failed: %s", what, ncclGetErrorString(r));
}

static tg_status nccl_unique_id(unsigned char *id) {
  static_assert(sizeof(ncclUniqueId) == NCCL_ID_BYTES, "ncclUniqueId size");
  ncclUniqueId u;
  ncclResult_t r = ncclGetUniqueId(&u);
  if (r != ncclSuccess) return nccl_fail(r, "ncclGetUniqueId");
  memcpy(id, &u, sizeof u);
  return TG_OK;
}

static tg_status nccl_open(const unsigned char *id, int nranks, int rank, int dev) {
  if (g_comm) return TG_OK;
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  tg_cuda_stream(dev); /* makes dev current */
  ncclResult_t r = ncclCommInitRank(&g_comm, nranks, u, rank);
  if (r != ncclSuccess) {
    g_comm = NULL;
    return nccl_fail(r, "ncclCommInitRank");
  }
  return TG_OK;
}

static tg_status nccl_mean(float *data, size_t n, int dev) {
  if (!g_comm) return tg_error(TG_ERR_INVALID, "nccl: no communicator (open the collectives first)");
  ncclResult_t r = ncclAllReduce(data, data, n, ncclFloat, ncclAvg, g_comm, tg_cuda_stream(dev));
  return r == ncclSuccess ? TG_OK : nccl_fail(r, "ncclAllReduce");
}

static void nccl_close(void) {
  if (g_comm) ncclCommDestroy(g_comm);
  g_comm = NULL;
}

static const tg_collectives k_nccl = {NCCL_ID_BYTES, nccl_unique_id, nccl_open, nccl_mean, nccl_close};

const tg_collectives *tg_cuda_collectives(void) { return &k_nccl; }
#else
/* Built without NCCL (nccl.h and libnccl were not found with CUDA and MPI): no collectives. */
const tg_collectives *tg_cuda_collectives(void) { return NULL; }
#endif
