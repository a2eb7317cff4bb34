/* The stop flag of a long run: the public API's volatile sig_atomic_t,
 * set by a signal handler or by another thread (a library caller, the trunk
 * API's watcher). Plain reads and writes of it from two threads are a data
 * race, so the library reads and sets it with atomic builtins; a signal
 * handler on the reading thread may still set it plainly. */
#ifndef JL_STOP_FLAG_H
#define JL_STOP_FLAG_H

#include <signal.h>

/* Whether *stop is set (stop may be NULL: never). */
static inline int jl_stop_requested(const volatile sig_atomic_t *stop) {
  return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/* Sets *stop. */
static inline void jl_stop_request(volatile sig_atomic_t *stop) {
  __atomic_store_n(stop, 1, __ATOMIC_RELAXED);
}

#endif
