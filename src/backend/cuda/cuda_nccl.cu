/* NCCL among data-parallel ranks' GPUs: a communicator per process and the gradient mean on the compute stream. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda/cuda_internal.h"
extern "C" {
#include "dist/nccl_glue.h"
}
#if TG_HAVE_NCCL
#include <nccl.h>

static ncclComm_t g_comm = NULL;

static tg_status nccl_fail(ncclResult_t r, const char *what) {
  return tg_error(TG_ERR_DEVICE, "nccl: %s failed: %s", what, ncclGetErrorString(r));
}

extern "C" int tg_nccl_built(void) { return 1; }

extern "C" tg_status tg_nccl_unique_id(unsigned char id[TG_NCCL_ID_BYTES]) {
  static_assert(sizeof(ncclUniqueId) == TG_NCCL_ID_BYTES, "ncclUniqueId size");
  ncclUniqueId u;
  ncclResult_t r = ncclGetUniqueId(&u);
  if (r != ncclSuccess) return nccl_fail(r, "ncclGetUniqueId");
  memcpy(id, &u, sizeof u);
  return TG_OK;
}

extern "C" tg_status tg_nccl_open(const unsigned char id[TG_NCCL_ID_BYTES], int nranks, int rank, int dev) {
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

extern "C" tg_status tg_nccl_mean(float *data, size_t n, int dev) {
  if (!g_comm) return tg_error(TG_ERR_INVALID, "nccl: no communicator (tg_dist_nccl_open first)");
  ncclResult_t r = ncclAllReduce(data, data, n, ncclFloat, ncclAvg, g_comm, tg_cuda_stream(dev));
  return r == ncclSuccess ? TG_OK : nccl_fail(r, "ncclAllReduce");
}

extern "C" void tg_nccl_close(void) {
  if (g_comm) ncclCommDestroy(g_comm);
  g_comm = NULL;
}
#else
extern "C" int tg_nccl_built(void) { return 0; }
static tg_status no_nccl(void) {
  return tg_error(TG_ERR_DEVICE, "nccl: this build has no NCCL (nccl.h and libnccl were not found with CUDA and MPI)");
}
extern "C" tg_status tg_nccl_unique_id(unsigned char id[TG_NCCL_ID_BYTES]) { (void)id; return no_nccl(); }
extern "C" tg_status tg_nccl_open(const unsigned char id[TG_NCCL_ID_BYTES], int nranks, int rank, int dev) {
  (void)id, (void)nranks, (void)rank, (void)dev;
  return no_nccl();
}
extern "C" tg_status tg_nccl_mean(float *data, size_t n, int dev) {
  (void)data, (void)n, (void)dev;
  return no_nccl();
}
extern "C" void tg_nccl_close(void) {}
#endif
