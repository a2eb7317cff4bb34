/* One call of an islands hook (src/islands/islands.h), the same for every job: the
 * search says whether an exchange is due or it would stop, the hook says
 * what it started and completed and whether every search stops. */
#ifndef JL_MIGRATION_H
#define JL_MIGRATION_H

typedef struct jl_migration_step {
  int due;                 /* in: the interval has passed: start an exchange */
  int want_stop;           /* in: this search would stop now (its JL_*STOP_* + 1), 0: no */
  int blocking;            /* in: wait for the exchange (runs by --rounds: the same bits per seed) */
  int started, completed;  /* out: exchanges started and completed by this call */
  int stop;                /* out: every search stops now (the reason + 1), 0: go on */
} jl_migration_step;

#endif
