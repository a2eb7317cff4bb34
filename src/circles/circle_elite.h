/* The population's elite: the best polished packings of a circle search,
 * one per basin family, that meta-stable candidates adopt. Two packings are
 * of one family when their R agree within JL_ELITE_SAME (relative) or their
 * shapes lie closer than the crowding distance. */
#ifndef JL_CIRCLE_ELITE_H
#define JL_CIRCLE_ELITE_H

#include <stdint.h>

#include "circles.h"
#include "error.h"

/* Polished packings whose R agree this closely (relative) count as one. */
#define JL_ELITE_SAME 1e-9

/* One circle of a radial profile while it is sorted. */
typedef struct jl_profile_entry {
  double r, rho;
} jl_profile_entry;

/* The radial profile of a packing: for each circle its distance from the
 * container centre over R, in order of radius, equal radii by that distance
 * (rho, n values), and each entry's weight r^2 / sum r^2 (w, n values; the
 * same for every packing of one instance). tmp: n entries of scratch.
 * Rotations and mirror images about the centre and swaps of equal circles
 * leave it unchanged. O(n log n). */
void jl_circle_profile(const jl_circle_packing *pk, jl_profile_entry *tmp, double *rho, double *w);

/* The shape distance of two profiles of one instance: sum w_k |a_k - b_k|,
 * the area-weighted mean change of the circles' relative distances from the
 * centre, in [0, 1). */
double jl_circle_profile_distance(const double *a, const double *b, const double *w, int n);

/* The same from two packings of one instance (allocates its scratch). */
int jl_circle_shape_distance(const jl_circle_packing *a, const jl_circle_packing *b, double *d,
                             jl_error *err);

typedef enum jl_elite_outcome {
  JL_ELITE_ADDED = 0,      /* a new family, the elite had room */
  JL_ELITE_REPLACED = 1,   /* better than every member of its family, which it replaces */
  JL_ELITE_DISPLACED = 2,  /* a new family that took the worst member's place */
  JL_ELITE_REJECTED = 3    /* its family has a member as good, or it is worse than all */
} jl_elite_outcome;

typedef struct jl_circle_elite {
  int n, cap, count;
  double crowding;           /* shapes closer than this are one family; 0: only equal R */
  jl_circle_packing *pk;     /* cap slots; the first count are the members, R ascending */
  double **rho;              /* each slot's radial profile (n values) */
  double *rho_store;         /* cap * n */
  double *w;                 /* n profile weights */
  double *rho_new;           /* n: the offered packing's profile */
  jl_profile_entry *tmp;     /* n */
  unsigned char *family;     /* cap: member in the offered packing's family */
  uint64_t offers, crowded;  /* offers; of them, ones that met a member by shape, not R */
} jl_circle_elite;

int jl_circle_elite_init(jl_circle_elite *e, int n, int cap, double crowding, jl_error *err);
void jl_circle_elite_free(jl_circle_elite *e);

/* Offers a legal packing (n circles, the instance's radii in one order): a
 * packing whose family has members takes their place, all of them, if it
 * is smaller than each, and is dropped otherwise; a packing of a new family
 * joins while there is room, else replaces the worst member if smaller.
 * With crowding 0 a family is one R. outcome may be NULL. */
int jl_circle_elite_offer(jl_circle_elite *e, const jl_circle_packing *pk,
                          jl_elite_outcome *outcome, jl_error *err);

/* Shape distance of member k from member 0 (the best). */
double jl_circle_elite_spread(const jl_circle_elite *e, int k);

/* The member whose shape lies nearest pk's (n circles, the instance's
 * radii), if nearer than near; -1 when none is (or pk has another n).
 * The search counts the candidates around each member with it. */
int jl_circle_elite_nearest(jl_circle_elite *e, const jl_circle_packing *pk, double near);

#endif
