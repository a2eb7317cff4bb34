#include "timer.h"

#include <time.h>

static double jl_clock_s(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double jl_time_now(void) { return jl_clock_s(CLOCK_MONOTONIC); }

double jl_cpu_now(int process) {
  return jl_clock_s(process ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID);
}
