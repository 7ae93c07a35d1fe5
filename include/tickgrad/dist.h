/* Data-parallel processes: the MPI world a run belongs to (one process without MPI), and the collectives training needs. */
#ifndef TICKGRAD_DIST_H
#define TICKGRAD_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "tickgrad/status.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launched by mpirun (Open MPI's OMPI_COMM_WORLD_SIZE or PMI_SIZE in the environment) in a build with MPI, the
 * process joins MPI_COMM_WORLD; otherwise it is rank 0 of 1. A launch under mpirun of a build without MPI is
 * TG_ERR_INVALID (every rank would train alone and write the same files). Idempotent; tg_dist_finish ends it. */
tg_status tg_dist_init(int *argc, char ***argv);
void tg_dist_finish(void);
int tg_dist_rank(void);   /* 0 before init */
int tg_dist_size(void);   /* 1 before init */
int tg_dist_have_mpi(void); /* 1 when this build can use MPI */
/* Every rank's data[n] summed in place (then the same on every rank); nothing with one process. */
tg_status tg_dist_sum_f32(float *data, size_t n);
tg_status tg_dist_sum_f64(double *data, size_t n);
/* Returns on every rank once every rank has called it (nothing with one process). */
tg_status tg_dist_barrier(void);
/* TG_ERR_INVALID on every rank, naming what and which rank, unless every rank passed the same value. */
tg_status tg_dist_check_same(uint64_t value, const char *what);
/* Ends every process of the job after a failure on this rank (the message already printed): MPI_Abort with one
 * process or more under MPI, so no rank waits forever in a collective; returns only without MPI. */
void tg_dist_abort(int code);

/* ---- devices: one per rank ----
 * A run on host memory (the CPU) sums gradients over MPI; on any other device the backend's collectives (CUDA: NCCL)
 * average them on the device, inside the captured step. */
/* The rank's device on its machine: its local rank (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK), 0 for one process. */
int tg_dist_local_rank(void);
/* Makes *d this rank's device for a data-parallel run over tg_dist_size() > 1 ranks: a host-memory device stays as it
 * is; any other becomes the local rank's device of its kind, which must exist and whose backend must have collectives.
 * Errors name the rank and what is missing. */
tg_status tg_dist_device_for_rank(tg_device *d);
/* 1 when a data-parallel run on d averages on the device (d is not host memory). */
int tg_dist_on_device(tg_device d);
/* Rank 0 makes the collectives' id, MPI broadcasts it, every rank joins on d. Collective; nothing with one process. */
tg_status tg_dist_device_open(tg_device d);
/* data[n] in d's memory becomes its mean over the ranks, enqueued on d's compute stream. Nothing with one process. */
tg_status tg_dist_device_mean(tg_device d, float *data, size_t n);
/* A training step's reduce (a tg_step_reduce_fn, ctx a tg_device *): grads[n] and loss[1] (NULL: none) on that device
 * become their mean over the ranks, each rank's being the mean over its shard of the global batch, so the result is the
 * global batch's. Host memory sums over MPI; a device's memory through its backend's collectives (tg_dist_device_open
 * first). Nothing with one process. */
tg_status tg_dist_step_mean(void *ctx, float *grads, size_t n, float *loss);
void tg_dist_device_close(tg_device d);

#ifdef __cplusplus
}
#endif
#endif
