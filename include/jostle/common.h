/* jostle: packing by contact simulation. What every part of the public API
 * shares: status codes with messages, the version, devices, progress and
 * stopping. Functions return JL_OK (0) or a status code and fill the
 * jl_error they are given (may be NULL); they never exit or abort. */
#ifndef JOSTLE_COMMON_H
#define JOSTLE_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JL_API __attribute__((visibility("default")))
#else
#define JL_API
#endif

#define JOSTLE_VERSION_MAJOR 0
#define JOSTLE_VERSION_MINOR 1
#define JOSTLE_VERSION_PATCH 0

/* The status codes; the CLI exits with the same numbers. */
enum jl_status {
  JL_OK = 0,
  JL_ERR_INPUT = 2,        /* bad file, field or value */
  JL_ERR_IO = 3,           /* cannot read or write a file */
  JL_ERR_DEVICE = 4,       /* CUDA missing or failed */
  JL_ERR_NOMEM = 5,
  JL_ERR_INTERNAL = 6,
  JL_ERR_NOT_LEGAL = 7     /* a packing failed the exact check */
};

#define JL_ERROR_MSG_MAX 1024

/* A status code and its message, naming the file, field and reason. */
typedef struct jl_error {
  int code;
  char msg[JL_ERROR_MSG_MAX];
} jl_error;

/* "0.1.0" */
JL_API const char *jl_version(void);

/* The CUDA devices this build can use (0 without CUDA or without a device). */
JL_API int jl_device_cuda_count(void);

/* The ranks an MPI launcher (mpirun, srun) started this process among: 0
 * when none did. The circle and trunk searches join such a job as islands
 * when asked to (their options' islands); other work should refuse it. */
JL_API int jl_launcher_ranks(void);

/* The "kind" of a jostle result file ("circles", "trunk", "scene"); "" when
 * the file is not a JSON object with a string kind. */
JL_API void jl_result_kind(const char *path, char *kind, size_t cap);

/* Lines for people: notices, the run's first line, progress lines. A line
 * has no "jostle: " prefix and no newline; JL_LOG_PROGRESS lines are the
 * progress line redrawn (on a terminal in place). */
typedef enum jl_log_level {
  JL_LOG_ERROR = 0,
  JL_LOG_NOTICE = 1,
  JL_LOG_INFO = 2,
  JL_LOG_PROGRESS = 3
} jl_log_level;
typedef void (*jl_log_fn)(void *ctx, int level, const char *line);

/* One MPI rank's facts in a run over islands (rank 0 gathers every rank's). */
typedef struct jl_rank_info {
  int cuda_device;         /* -1: CPU */
  int failed;
  uint64_t seed;
  int host_threads;        /* the rank's host threads (polish, CPU search) */
  int bound_cpus;          /* the CPUs its affinity mask allows */
  uint64_t trials;         /* circles: trials; trunks: annealing moves */
  uint64_t relax_steps;
  double best;             /* circles: R (0: none); trunks: blocks */
  char device_name[128];
  char msg[256];           /* the failure's message */
} jl_rank_info;

/* What a long run reports about once a second, on the thread that called it. */
typedef struct jl_progress_info {
  double time_s;           /* since the start */
  double best;             /* circles: best R so far; trunks: blocks */
  uint64_t work;           /* circles: trials; trunks: annealing moves */
} jl_progress_info;

/* Return non-zero to stop the run: it ends within about a second with the
 * best so far, as SIGINT does. */
typedef int (*jl_progress_fn)(void *ctx, const jl_progress_info *p);

/* How a run ended. */
typedef enum jl_stop_reason {
  JL_STOPPED_BY_TIME = 0,
  JL_STOPPED_BY_TARGET = 1,
  JL_STOPPED_BY_SIGNAL = 2,  /* the stop flag, a signal, or the progress callback */
  JL_STOPPED_BY_ROUNDS = 3
} jl_stop_reason;

#ifdef __cplusplus
}
#endif

#endif
