/* Telemetry: NVML (dlopen) and the process's CPU time and RSS, sampled by a pthread into a flushed CSV. */
#include "base/clock.h"
#include "tickgrad/telemetry.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/alloc.h"

#define TELEMETRY_MAX_HZ 100.0
#define TELEMETRY_HEADER "time_s,gpu,util_pct,mem_used_mib,mem_total_mib,temp_c,power_w,proc_cpu_pct,proc_rss_mib\n"

/* ---- the part of nvml.h used here (no header on build machines; the ABI is stable) ---- */

typedef int nvml_return;                 /* nvmlReturn_t; NVML_SUCCESS == 0 */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t, opaque */
typedef struct {
  unsigned int gpu, memory;
} nvml_utilization; /* nvmlUtilization_t */
typedef struct {
  unsigned long long total, free, used;
} nvml_memory; /* nvmlMemory_t (version 1) */
#define NVML_SUCCESS 0
#define NVML_TEMPERATURE_GPU 0

typedef struct nvml_api {
  nvml_return (*init)(void);
  nvml_return (*shutdown)(void);
  nvml_return (*handle_by_index)(unsigned int index, nvml_device *device);
  nvml_return (*utilization)(nvml_device device, nvml_utilization *u);
  nvml_return (*memory)(nvml_device device, nvml_memory *m);
  nvml_return (*temperature)(nvml_device device, int sensor, unsigned int *temp);
  nvml_return (*power)(nvml_device device, unsigned int *milliwatts);
  const char *(*error_string)(nvml_return r);
} nvml_api;

/* One sample; a field whose *_rc is not NVML_SUCCESS is written blank, as is a host field that is NaN. */
typedef struct sample {
  double time_s;
  nvml_return util_rc, mem_rc, temp_rc, power_rc;
  nvml_utilization util;
  nvml_memory mem;
  unsigned int temp_c, power_mw;
  double cpu_pct, rss_mib; /* the process: CPU time / wall time over the sample period (NaN: no period yet), RSS */
} sample;

struct tg_telemetry {
  char *path;
  FILE *f;
  int gpu;
  double period_s;
  double t0; /* tg_clock_seconds() at start */
  /* NVML: lib == NULL when absent; status fixed by start */
  void *lib;
  nvml_api nvml;
  nvml_device dev;
  char status[320];
  /* sampler thread; mu guards stopping and the utilisation mean */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stopping;
  double util_sum;
  long util_n;
  int write_errno; /* first write failure (written by one thread at a time), 0 if none */
  /* the previous sample's process CPU time and wall time (one thread at a time: the sampler, then stop) */
  double prev_cpu_s, prev_wall_s;
  int have_prev;
};

/* ---- time ---- */

static double seconds_since(double t0) { return tg_clock_seconds() - t0; }

/* The CLOCK_MONOTONIC instant tg_clock_seconds() == s, for timed waits. */
static struct timespec monotonic_at(double s) {
  struct timespec t;
  t.tv_sec = (time_t)floor(s);
  t.tv_nsec = (long)((s - floor(s)) * 1e9);
  if (t.tv_nsec > 999999999L) t.tv_nsec = 999999999L;
  return t;
}

/* ---- NVML ---- */

static void status_set(tg_telemetry *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void status_set(tg_telemetry *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->status, sizeof t->status, fmt, ap);
  va_end(ap);
}

static void status_append(tg_telemetry *t, const char *what, nvml_return rc) {
  size_t n = strlen(t->status);
  if (n + 1 < sizeof t->status)
    snprintf(t->status + n, sizeof t->status - n, "; %s: %s", what, t->nvml.error_string(rc));
}

/* dlsym into a function pointer without an object-to-function pointer cast. */
static int nvml_sym(void *lib, const char *name, void *fn, size_t fn_size) {
  void *p = dlsym(lib, name);
  if (!p) return 0;
  memcpy(fn, &p, fn_size);
  return 1;
}
#define NVML_SYM(lib, name, field) nvml_sym(lib, name, &(field), sizeof(field))

/* Loads NVML and finds the device, or leaves t->lib NULL; either way sets t->status. */
static void nvml_open(tg_telemetry *t) {
  const char *name = "libnvidia-ml.so.1";
  void *lib = dlopen(name, RTLD_NOW);
  if (!lib) {
    const char *e = dlerror();
    status_set(t, "NVML not found: %s", e ? e : name);
    name = "libnvidia-ml.so";
    lib = dlopen(name, RTLD_NOW);
    if (!lib) return;
  }
  nvml_api *a = &t->nvml;
  if (!NVML_SYM(lib, "nvmlInit_v2", a->init) || !NVML_SYM(lib, "nvmlShutdown", a->shutdown) ||
      !NVML_SYM(lib, "nvmlDeviceGetHandleByIndex_v2", a->handle_by_index) ||
      !NVML_SYM(lib, "nvmlDeviceGetUtilizationRates", a->utilization) ||
      !NVML_SYM(lib, "nvmlDeviceGetMemoryInfo", a->memory) ||
      !NVML_SYM(lib, "nvmlDeviceGetTemperature", a->temperature) ||
      !NVML_SYM(lib, "nvmlDeviceGetPowerUsage", a->power) ||
      !NVML_SYM(lib, "nvmlErrorString", a->error_string)) {
    const char *e = dlerror();
    status_set(t, "NVML unusable: %s", e ? e : name);
    dlclose(lib);
    return;
  }
  nvml_return rc = a->init();
  if (rc != NVML_SUCCESS) {
    status_set(t, "NVML init failed: %s", a->error_string(rc));
    dlclose(lib);
    return;
  }
  rc = a->handle_by_index((unsigned int)t->gpu, &t->dev);
  if (rc != NVML_SUCCESS) {
    status_set(t, "NVML has no device %d: %s", t->gpu, a->error_string(rc));
    a->shutdown();
    dlclose(lib);
    return;
  }
  status_set(t, "NVML ok: device %d via %s", t->gpu, name);
  t->lib = lib;
}

static void nvml_close(tg_telemetry *t) {
  if (!t->lib) return;
  t->nvml.shutdown();
  dlclose(t->lib);
  t->lib = NULL;
}

/* ---- the process: CPU time and resident memory ---- */

/* CPU seconds of every thread of this process (NaN when the clock is not available). */
static double process_cpu_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return NAN;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Resident set size in MiB from /proc/self/statm (its second field, in pages); NaN without /proc.
 * read(2) into a stack buffer: sampling allocates nothing. */
static double process_rss_mib(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0) return NAN;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return NAN;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  long page = sysconf(_SC_PAGESIZE);
  if (sscanf(buf, "%llu %llu", &size, &resident) != 2 || page <= 0) return NAN;
  return (double)resident * (double)page / 1048576.0;
}

/* The process's CPU use over the time since the previous sample (percent of one core: above 100 with
 * threads), and its RSS. */
static void host_take(tg_telemetry *t, sample *s) {
  double cpu = process_cpu_s(), wall = s->time_s;
  s->cpu_pct = NAN;
  if (t->have_prev && isfinite(cpu) && wall > t->prev_wall_s)
    s->cpu_pct = 100.0 * (cpu - t->prev_cpu_s) / (wall - t->prev_wall_s);
  t->prev_cpu_s = cpu;
  t->prev_wall_s = wall;
  t->have_prev = isfinite(cpu);
  s->rss_mib = process_rss_mib();
}

/* ---- samples ---- */

static void sample_take(tg_telemetry *t, sample *s) {
  memset(s, 0, sizeof *s);
  s->time_s = seconds_since(t->t0);
  s->util_rc = s->mem_rc = s->temp_rc = s->power_rc = -1;
  host_take(t, s);
  if (!t->lib) return;
  s->util_rc = t->nvml.utilization(t->dev, &s->util);
  s->mem_rc = t->nvml.memory(t->dev, &s->mem);
  s->temp_rc = t->nvml.temperature(t->dev, NVML_TEMPERATURE_GPU, &s->temp_c);
  s->power_rc = t->nvml.power(t->dev, &s->power_mw);
}

/* Writes the row and flushes; records the first write failure. */
static void sample_write(tg_telemetry *t, const sample *s) {
  char util[16] = "", used[32] = "", total[32] = "", temp[16] = "", power[32] = "", cpu[32] = "", rss[32] = "";
  if (s->util_rc == NVML_SUCCESS) snprintf(util, sizeof util, "%u", s->util.gpu);
  if (s->mem_rc == NVML_SUCCESS) {
    snprintf(used, sizeof used, "%llu", s->mem.used >> 20);
    snprintf(total, sizeof total, "%llu", s->mem.total >> 20);
  }
  if (s->temp_rc == NVML_SUCCESS) snprintf(temp, sizeof temp, "%u", s->temp_c);
  if (s->power_rc == NVML_SUCCESS) snprintf(power, sizeof power, "%.3f", s->power_mw / 1000.0);
  if (isfinite(s->cpu_pct)) snprintf(cpu, sizeof cpu, "%.1f", s->cpu_pct);
  if (isfinite(s->rss_mib)) snprintf(rss, sizeof rss, "%.1f", s->rss_mib);
  errno = 0;
  int bad = fprintf(t->f, "%.3f,%d,%s,%s,%s,%s,%s,%s,%s\n", s->time_s, t->gpu, util, used, total, temp,
                    power, cpu, rss) < 0;
  bad |= fflush(t->f) != 0;
  if (bad && !t->write_errno) t->write_errno = errno ? errno : EIO;
}

/* Takes, writes and counts one sample. */
static void sample_once(tg_telemetry *t) {
  sample s;
  sample_take(t, &s);
  sample_write(t, &s);
  if (s.util_rc == NVML_SUCCESS) {
    pthread_mutex_lock(&t->mu);
    t->util_sum += s.util.gpu;
    t->util_n++;
    pthread_mutex_unlock(&t->mu);
  }
}

/* Samples at t0 + k*period (k = 1, 2, ...), skipping ticks missed while sampling, until stop. */
static void *sampler_main(void *arg) {
  tg_telemetry *t = arg;
  double k = 1;
  pthread_mutex_lock(&t->mu);
  while (!t->stopping) {
    double due_s = k * t->period_s;
    struct timespec due = monotonic_at(t->t0 + due_s);
    while (!t->stopping && seconds_since(t->t0) < due_s)
      pthread_cond_timedwait(&t->cv, &t->mu, &due);
    if (t->stopping) break;
    pthread_mutex_unlock(&t->mu);
    sample_once(t);
    double next = floor(seconds_since(t->t0) / t->period_s) + 1;
    k = next > k + 1 ? next : k + 1;
    pthread_mutex_lock(&t->mu);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

/* ---- lifetime ---- */

/* Frees t after the thread has ended (or never started); mu/cv only when initialised. */
static void telemetry_free(tg_telemetry *t, int sync_ready) {
  nvml_close(t);
  if (sync_ready) {
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
  }
  tg_free(t->path);
  tg_free(t);
}

static int sync_init(tg_telemetry *t) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) return 0;
  int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
           pthread_cond_init(&t->cv, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!ok) return 0;
  if (pthread_mutex_init(&t->mu, NULL) != 0) {
    pthread_cond_destroy(&t->cv);
    return 0;
  }
  return 1;
}

tg_status tg_telemetry_start(const char *csv_path, int cuda_index, double hz,
                             tg_telemetry **out) {
  if (out) *out = NULL;
  if (!csv_path || !out) return tg_error(TG_ERR_INVALID, "telemetry: NULL csv_path or out");
  if (cuda_index < 0) return tg_error(TG_ERR_INVALID, "telemetry: bad GPU index %d", cuda_index);
  if (!(hz > 0)) hz = 1.0; /* NaN too */
  if (hz > TELEMETRY_MAX_HZ) hz = TELEMETRY_MAX_HZ;

  tg_telemetry *t = tg_calloc(1, sizeof *t);
  size_t plen = strlen(csv_path);
  if (t) t->path = tg_malloc(plen + 1);
  if (!t || !t->path) {
    if (t) tg_free(t);
    return tg_error(TG_ERR_NOMEM, "telemetry: out of memory");
  }
  memcpy(t->path, csv_path, plen + 1);
  t->gpu = cuda_index;
  t->period_s = 1.0 / hz;
  if (!sync_init(t)) {
    telemetry_free(t, 0);
    return tg_error(TG_ERR_NOMEM, "telemetry: cannot create a mutex or condition variable");
  }

  t->f = fopen(csv_path, "w");
  if (!t->f) {
    int e = errno;
    telemetry_free(t, 1);
    return tg_error(TG_ERR_IO, "%s: cannot open for writing: %s", csv_path, strerror(e));
  }
  if (fputs(TELEMETRY_HEADER, t->f) < 0 || fflush(t->f) != 0) {
    int e = errno;
    fclose(t->f);
    telemetry_free(t, 1);
    return tg_error(TG_ERR_IO, "%s: cannot write: %s", csv_path, strerror(e));
  }

  nvml_open(t);
  t->t0 = tg_clock_seconds();
  /* The first sample, taken here so the status can name the columns NVML cannot fill. */
  sample s;
  sample_take(t, &s);
  sample_write(t, &s);
  if (t->lib) {
    if (s.util_rc != NVML_SUCCESS) status_append(t, "util", s.util_rc);
    if (s.mem_rc != NVML_SUCCESS) status_append(t, "memory", s.mem_rc);
    if (s.temp_rc != NVML_SUCCESS) status_append(t, "temperature", s.temp_rc);
    if (s.power_rc != NVML_SUCCESS) status_append(t, "power", s.power_rc);
  }
  if (s.util_rc == NVML_SUCCESS) {
    t->util_sum = s.util.gpu;
    t->util_n = 1;
  }

  int rc = pthread_create(&t->thread, NULL, sampler_main, t);
  if (rc != 0) {
    fclose(t->f);
    telemetry_free(t, 1);
    return tg_error(TG_ERR_NOMEM, "telemetry: cannot start the sampler thread: %s", strerror(rc));
  }
  *out = t;
  return TG_OK;
}

tg_status tg_telemetry_stop(tg_telemetry *t) {
  if (!t) return TG_OK;
  pthread_mutex_lock(&t->mu);
  t->stopping = 1;
  pthread_cond_signal(&t->cv);
  pthread_mutex_unlock(&t->mu);
  pthread_join(t->thread, NULL);

  sample_once(t);
  errno = 0;
  int close_errno = fclose(t->f) != 0 ? (errno ? errno : EIO) : 0;
  int e = t->write_errno ? t->write_errno : close_errno;
  tg_status st = TG_OK;
  if (e) st = tg_error(TG_ERR_IO, "%s: telemetry rows lost: %s", t->path, strerror(e));
  telemetry_free(t, 1);
  return st;
}

int tg_telemetry_mark(tg_telemetry *t, double *mean_util_pct) {
  if (!t) return 0;
  pthread_mutex_lock(&t->mu);
  int have = t->util_n > 0;
  if (have && mean_util_pct) *mean_util_pct = t->util_sum / (double)t->util_n;
  t->util_sum = 0;
  t->util_n = 0;
  pthread_mutex_unlock(&t->mu);
  return have;
}

const char *tg_telemetry_nvml_status(const tg_telemetry *t) { return t ? t->status : ""; }

int tg_telemetry_gpu_for(tg_device d) { return d.kind == TG_CUDA ? d.index : 0; }
