/* Monotonic wall-clock seconds. */
#ifndef JL_TIMER_H
#define JL_TIMER_H

double jl_time_now(void);
/* CPU seconds used by the calling thread (process 0) or by the whole process (1). */
double jl_cpu_now(int process);

#endif
