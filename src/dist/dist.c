/* The MPI world of a data-parallel run (or a world of one without MPI): init, sums over ranks, checks, abort. */
#include <stdio.h>
#include <stdlib.h>
#include "dist/nccl_glue.h"
#include "tickgrad/dist.h"
#if TG_HAVE_MPI
#include <mpi.h>
#endif

static int g_rank = 0, g_size = 1, g_started = 0;

/* 1 when a launcher started this process as one rank of several. */
static int launched(void) {
  const char *v = getenv("OMPI_COMM_WORLD_SIZE");
  if (!v) v = getenv("PMI_SIZE");
  return v && atoi(v) > 1;
}

int tg_dist_have_mpi(void) { return TG_HAVE_MPI; }
int tg_dist_rank(void) { return g_rank; }
int tg_dist_size(void) { return g_size; }

tg_status tg_dist_init(int *argc, char ***argv) {
  if (g_started || !launched()) return TG_OK;
#if TG_HAVE_MPI
  int ok = 0;
  MPI_Initialized(&ok);
  if (!ok && MPI_Init(argc, argv) != MPI_SUCCESS) return tg_error(TG_ERR_IO, "dist: MPI_Init failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_started = 1;
  return TG_OK;
#else
  (void)argc, (void)argv;
  return tg_error(TG_ERR_INVALID, "dist: started as one of several processes (mpirun), but this build has no MPI; "
                  "install libopenmpi-dev and build again, or run one process");
#endif
}

void tg_dist_finish(void) {
#if TG_HAVE_MPI
  if (g_started) MPI_Finalize();
#endif
  g_started = 0, g_rank = 0, g_size = 1;
}

#if TG_HAVE_MPI
static tg_status mpi_check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return TG_OK;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return tg_error(TG_ERR_IO, "dist: rank %d of %d: %s failed: %s", g_rank, g_size, what, msg);
}
#endif

#if TG_HAVE_MPI
static tg_status sum(void *data, size_t n, MPI_Datatype type) {
  if (g_size == 1 || n == 0) return TG_OK;
  return mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, (int)n, type, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}
tg_status tg_dist_sum_f32(float *data, size_t n) { return sum(data, n, MPI_FLOAT); }
tg_status tg_dist_sum_f64(double *data, size_t n) { return sum(data, n, MPI_DOUBLE); }
#else /* one process: the sum is the data */
tg_status tg_dist_sum_f32(float *data, size_t n) { return (void)data, (void)n, TG_OK; }
tg_status tg_dist_sum_f64(double *data, size_t n) { return (void)data, (void)n, TG_OK; }
#endif

tg_status tg_dist_barrier(void) {
  if (g_size == 1) return TG_OK;
#if TG_HAVE_MPI
  return mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
#else
  return TG_OK;
#endif
}

tg_status tg_dist_check_same(uint64_t value, const char *what) {
  if (g_size == 1) return TG_OK;
#if TG_HAVE_MPI
  unsigned long long v = value, lo = 0, hi = 0, root = value;
  tg_status st = mpi_check(MPI_Allreduce(&v, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (st == TG_OK) st = mpi_check(MPI_Allreduce(&v, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  if (st == TG_OK) st = mpi_check(MPI_Bcast(&root, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (st != TG_OK) return st;
  if (lo != hi)
    return tg_error(TG_ERR_INVALID, "dist: rank %d of %d: %s differs between ranks (this rank's is %s rank 0's); "
                    "every rank must be started with the same flags and data", g_rank, g_size, what,
                    v == root ? "the same as" : "not");
  return TG_OK;
#else
  (void)value, (void)what;
  return TG_OK;
#endif
}

void tg_dist_abort(int code) {
#if TG_HAVE_MPI
  if (g_started && g_size > 1) {
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
#endif
  (void)code;
}

/* ---- NCCL: the GPUs of a data-parallel run (one per rank) ---- */

#if !TG_HAVE_CUDA /* the CUDA sources (cuda_nccl.cu) are not in this build */
int tg_nccl_built(void) { return 0; }
tg_status tg_nccl_unique_id(unsigned char id[TG_NCCL_ID_BYTES]) {
  (void)id;
  return tg_error(TG_ERR_DEVICE, "nccl: this build has no CUDA");
}
tg_status tg_nccl_open(const unsigned char id[TG_NCCL_ID_BYTES], int nranks, int rank, int dev) {
  (void)id, (void)nranks, (void)rank, (void)dev;
  return tg_error(TG_ERR_DEVICE, "nccl: this build has no CUDA");
}
tg_status tg_nccl_mean(float *data, size_t n, int dev) {
  (void)data, (void)n, (void)dev;
  return tg_error(TG_ERR_DEVICE, "nccl: this build has no CUDA");
}
void tg_nccl_close(void) {}
#endif

int tg_dist_have_nccl(void) { return TG_HAVE_MPI && tg_nccl_built(); }

int tg_dist_local_rank(void) {
  const char *v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!v) v = getenv("MPI_LOCALRANKID");
  return g_size > 1 && v ? atoi(v) : 0;
}

tg_status tg_dist_nccl_open(int cuda_index) {
  if (g_size == 1) return TG_OK;
#if TG_HAVE_MPI
  unsigned char id[TG_NCCL_ID_BYTES] = {0};
  int ok = g_rank != 0 || tg_nccl_unique_id(id) == TG_OK, all = 0;
  tg_status st = mpi_check(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (st == TG_OK && !all) st = tg_error(TG_ERR_DEVICE, "dist: rank %d of %d: rank 0 could not make an NCCL id%s%s",
                                         g_rank, g_size, g_rank == 0 ? ": " : "", g_rank == 0 ? tg_last_error() : "");
  if (st == TG_OK) st = mpi_check(MPI_Bcast(id, TG_NCCL_ID_BYTES, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (st == TG_OK) st = tg_nccl_open(id, g_size, g_rank, cuda_index);
  return st;
#else
  (void)cuda_index;
  return TG_OK;
#endif
}

tg_status tg_dist_nccl_mean(float *data, size_t n, int cuda_index) {
  return g_size == 1 ? TG_OK : tg_nccl_mean(data, n, cuda_index);
}

void tg_dist_nccl_close(void) { tg_nccl_close(); }

