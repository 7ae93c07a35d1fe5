/* A run's checkpoint sets: each written whole under a new name, then made current by one link switch; resume finds one. */
#ifndef TG_IO_CKPT_SET_H
#define TG_IO_CKPT_SET_H

#include <stdio.h>
#include "tickgrad/status.h"

/* RUN/checkpoints/NNNNNN is one set (its files and checkpoint.json, which names each file by hash beside
 * config.json's hash and run id); RUN/checkpoint is a relative symbolic link to the current set, and RUN/FILE
 * links to checkpoint/FILE for each of its files, so readers of RUN/weights.safetensors see the current set. */
typedef struct tg_ckpt_set {
  char run[TG_PATH_MAX];
  char dir[TG_PATH_MAX + 64]; /* the set's folder: being written (begin) or found (find); the run itself for a run
                                 from before sets (files at its top) */
  long gen;                   /* the set's number; 0 for a run from before sets, -1 for a copy's checkpoint folder */
} tg_ckpt_set;

/* A new run id: 16 random hex digits (config.json's "run_id"). */
void tg_ckpt_run_id_new(char hex[17]);

/* Starts set N+1 (N the highest in RUN/checkpoints) as an empty folder RUN/checkpoints/N+1.tmp.PID. */
tg_status tg_ckpt_begin(const char *run, tg_ckpt_set *s);
/* s->dir/file into buf. */
void tg_ckpt_path(const tg_ckpt_set *s, const char *file, char *buf, size_t n);
/* Completes the set begun: checkpoint.json (every file of the folder by hash; config.json's hash and run id),
 * the folder renamed to RUN/checkpoints/N and flushed, RUN/checkpoint switched to it (the one step that makes it
 * current) and flushed, RUN/FILE links made where missing; then every set but this one and the one it replaced is
 * removed. On error the folder begun is removed and the current set stays current. */
tg_status tg_ckpt_commit(tg_ckpt_set *s);
void tg_ckpt_abort(tg_ckpt_set *s);
/* The end of a set's writing: commits it when st (the writes' status) is TG_OK, else aborts it and returns st. */
tg_status tg_ckpt_end(tg_ckpt_set *s, tg_status st);

/* 1 when RUN holds a checkpoint (a set, or a run's files from before sets). */
int tg_ckpt_exists(const char *run);
/* The set a resume reads, into s: the current one, or when it is damaged (a file missing or not the one written)
 * the newest complete one before it, saying so on log. Removes the temporaries a killed process left and sets
 * written after the current one (never made current), so only the holder of the run's lock (tg_run_lock) calls it.
 * *found is 0 when RUN holds no checkpoint. A set written with another config.json (edited since, or the set copied
 * from another run) is an error (TG_ERR_INVALID) naming both. */
tg_status tg_ckpt_find(const char *run, FILE *log, tg_ckpt_set *s, int *found);
/* The set that the lock's holder found (gen: its s->gen from tg_ckpt_find), into s, for a process that only reads
 * it (the other ranks of a data-parallel run): it lists, verifies and removes nothing. */
void tg_ckpt_at(const char *run, long gen, tg_ckpt_set *s);

/* For an opener of a finished or running run (predict, backtest, a policy), reading nothing but checking: config.json,
 * inference.json and env.json are the files the current set's manifest names by hash (TG_ERR_INVALID naming the one
 * edited since). TG_OK for a run without sets. */
tg_status tg_ckpt_check_run_files(const char *run);

#endif
