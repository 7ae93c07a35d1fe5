/* The MPI world of a data-parallel run (or a world of one without MPI): init, sums over ranks, checks, abort. */
#include <stdio.h>
#include <stdlib.h>
#include "graph/backend.h"
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

/* ---- devices of a data-parallel run (one per rank) ---- */

int tg_dist_local_rank(void) {
  const char *v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!v) v = getenv("MPI_LOCALRANKID");
  return g_size > 1 && v ? atoi(v) : 0;
}

int tg_dist_on_device(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  return be && !be->host_memory;
}

tg_status tg_dist_device_for_rank(tg_device *d) {
  const tg_backend *be = tg_backend_for(d->kind);
  if (g_size == 1 || !be || be->host_memory) return TG_OK;
  if (!TG_HAVE_MPI || !be->collectives)
    return tg_error(TG_ERR_INVALID, "rank %d of %d: data-parallel training on %s devices averages gradients with the "
                    "backend's collectives (NCCL for CUDA), which this build does not have: give --device cpu, or build "
                    "with MPI and the collectives library", g_rank, g_size, be->name);
  int want = tg_dist_local_rank(), have = be->device_count();
  if (want >= have)
    return tg_error(TG_ERR_DEVICE, "rank %d of %d needs %s:%d (its local rank); this machine has %d such device%s",
                    g_rank, g_size, be->name, want, have, have == 1 ? "" : "s");
  d->index = want;
  return TG_OK;
}

tg_status tg_dist_device_open(tg_device d) {
  if (g_size == 1) return TG_OK;
#if TG_HAVE_MPI
  const tg_backend *be = tg_backend_for(d.kind);
  const tg_collectives *co = be ? be->collectives : NULL;
  if (!co) return tg_error(TG_ERR_DEVICE, "dist: rank %d of %d: the device's backend has no collectives", g_rank, g_size);
  unsigned char id[512] = {0};
  if (co->id_bytes > sizeof id) return tg_error(TG_ERR_DEVICE, "dist: a collectives id of %zu bytes is too long", co->id_bytes);
  int ok = g_rank != 0 || co->unique_id(id) == TG_OK, all = 0;
  tg_status st = mpi_check(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (st == TG_OK && !all) st = tg_error(TG_ERR_DEVICE, "dist: rank %d of %d: rank 0 could not make a %s collectives id%s%s",
                                         g_rank, g_size, be->name, g_rank == 0 ? ": " : "", g_rank == 0 ? tg_last_error() : "");
  if (st == TG_OK) st = mpi_check(MPI_Bcast(id, (int)co->id_bytes, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (st == TG_OK) st = co->open(id, g_size, g_rank, d.index);
  return st;
#else
  (void)d;
  return TG_OK;
#endif
}

tg_status tg_dist_device_mean(tg_device d, float *data, size_t n) {
  if (g_size == 1) return TG_OK;
  const tg_backend *be = tg_backend_for(d.kind);
  if (!be || !be->collectives) return tg_error(TG_ERR_DEVICE, "dist: the device's backend has no collectives");
  return be->collectives->mean(data, n, d.index);
}

tg_status tg_dist_step_mean(void *ctx, float *grads, size_t n, float *loss) {
  const tg_device *d = ctx;
  const tg_backend *be = tg_backend_for(d->kind);
  if (g_size == 1) return TG_OK;
  if (be && !be->host_memory) {
    tg_status st = tg_dist_device_mean(*d, grads, n);
    return st == TG_OK && loss ? tg_dist_device_mean(*d, loss, 1) : st;
  }
  double v = loss ? *loss : 0.0;
  tg_status st = loss ? tg_dist_sum_f64(&v, 1) : TG_OK;
  if (st == TG_OK && loss) *loss = (float)(v / g_size);
  if (st == TG_OK) st = tg_dist_sum_f32(grads, n);
  for (size_t i = 0; st == TG_OK && i < n; i++) grads[i] /= (float)g_size;
  return st;
}

void tg_dist_device_close(tg_device d) {
  const tg_backend *be = tg_backend_for(d.kind);
  if (be && be->collectives) be->collectives->close();
}
