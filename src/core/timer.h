/* Monotonic wall-clock seconds. */
#ifndef JL_TIMER_H
#define JL_TIMER_H

double jl_time_now(void);

#endif
