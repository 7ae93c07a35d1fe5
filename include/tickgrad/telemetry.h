/* Telemetry: a thread sampling the GPU (NVML) and this process's CPU use and memory into a CSV. */
#ifndef TICKGRAD_TELEMETRY_H
#define TICKGRAD_TELEMETRY_H

#include "tickgrad/status.h"
#include "tickgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_telemetry tg_telemetry;

/* The cuda_index tg_telemetry_start should sample for a run on d: d's ordinal when d is a GPU, else 0 (the
 * first GPU, if any, is still charted beside a CPU run). */
int tg_telemetry_gpu_for(tg_device d);

/* Creates (truncates) csv_path, writes the header
 *   time_s,gpu,util_pct,mem_used_mib,mem_total_mib,temp_c,power_w,proc_cpu_pct,proc_rss_mib
 * and a first sample at time 0, then starts a thread that appends one row every 1/hz seconds
 * (hz <= 0 means 1 Hz; at most 100 Hz). time_s is seconds since start (monotonic clock, 3
 * decimals, non-decreasing); gpu is cuda_index; util_pct is NVML's GPU utilisation (percent of
 * the last sample period a kernel ran); memory is in MiB (2^20 bytes), power in watts. Every row
 * is flushed when written, so a crash loses at most the row being written.
 *
 * The last two columns describe this process and need no GPU: proc_cpu_pct is the CPU time of all
 * its threads (CLOCK_PROCESS_CPUTIME_ID) over the wall time since the previous row, in percent of
 * one core (above 100 with several busy threads; 1 decimal; blank in the first row, which has no
 * period); proc_rss_mib is its resident set size from /proc/self/statm (1 decimal; blank without
 * /proc). A row therefore looks like "1.000,0,,,,,,98.7,412.3" on a machine without NVML.
 *
 * NVML is loaded at run time (dlopen of libnvidia-ml.so.1, else libnvidia-ml.so); tickgrad does
 * not link it. When the library is missing, nvmlInit fails, the device is not found or a query
 * fails, that is not an error: the rows are still written with the missing columns blank
 * ("1.000,0,,,,,,12.0,40.5") and tg_telemetry_nvml_status says why.
 *
 * Device numbering: cuda_index is passed to NVML as an NVML device index. NVML numbers GPUs in
 * PCI bus order and ignores CUDA_VISIBLE_DEVICES, while CUDA numbers the visible GPUs fastest
 * first unless CUDA_DEVICE_ORDER=PCI_BUS_ID. The two agree on a single-GPU machine, or with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES unset; otherwise the row may describe
 * another GPU than cuda:cuda_index.
 *
 * Errors: TG_ERR_INVALID (NULL csv_path or out, cuda_index < 0), TG_ERR_IO naming the path when
 * csv_path cannot be opened or the header cannot be written, TG_ERR_NOMEM (also when the thread
 * cannot be started). *out is NULL on error. */
tg_status tg_telemetry_start(const char *csv_path, int cuda_index, double hz,
                             tg_telemetry **out);

/* Stops the thread (promptly: it waits on a condition variable, not a sleep), writes a final
 * sample, closes the file and frees everything, NVML included. NULL does nothing and returns
 * TG_OK. Returns TG_ERR_IO naming the path when any row could not be written or the close failed
 * (everything is freed all the same). */
tg_status tg_telemetry_stop(tg_telemetry *t);

/* Mean GPU utilisation (percent) of the samples taken since the previous mark (or since start),
 * for a per-epoch log line; resets the mean. Returns 1 and sets *mean_util_pct (when not NULL),
 * or returns 0 and leaves *mean_util_pct untouched when no utilisation was sampled in that time
 * (NVML absent, the query failing, or no sample yet). Safe to call while the sampler runs. */
int tg_telemetry_mark(tg_telemetry *t, double *mean_util_pct);

/* One line about NVML, fixed when tg_telemetry_start returns and valid until stop:
 * "NVML ok: device 0 via libnvidia-ml.so.1", possibly followed by the columns that failed
 * ("; power: Not Supported"), or why there is no NVML data, e.g.
 * "NVML not found: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
 * or "NVML init failed: Driver Not Loaded". Starts with "NVML ok" exactly when NVML is in use.
 * "" for NULL. */
const char *tg_telemetry_nvml_status(const tg_telemetry *t);

#ifdef __cplusplus
}
#endif
#endif
