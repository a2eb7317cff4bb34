/* Contact graph colouring for parallel SOR (seed 002, sec. 4.3): bodies are
 * vertices, and the units are the edges: a unit is the run of contacts of
 * one body pair (up to a box manifold's 4), swept in order by one thread.
 * Two units of one colour share no dynamic body, so their Gauss-Seidel
 * updates are independent; static bodies are left out of the graph (ground
 * contacts would otherwise form one clique). Colouring units rather than
 * contacts gives a box wall 5 colours instead of 20, so threads meet 4 times
 * fewer per sweep. Greedy colouring in contact order; colours smaller than a
 * fixed size are merged into one last group that runs in order on one
 * thread, so the result does not depend on the thread count. */
#ifndef JL_CONTACT_GRAPH_H
#define JL_CONTACT_GRAPH_H

#include <stdint.h>

#include "contact_setup.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Colours with fewer contacts than this are merged into the sequential group. */
#define JL_COLOUR_MIN_SIZE 64
/* Units woven into one segment: a unit's next contact waits on its last
 * one's du, so the sweep keeps several units' chains in flight. */
#ifndef JL_COLOUR_WEAVE
#define JL_COLOUR_WEAVE 8
#endif

typedef struct jl_colouring {
  int groups;              /* colour groups in `order` */
  int merged;              /* 1: the last group is the merged sequential one */
  int colours;             /* colours found by the greedy pass (before merging) */
  int *group_ptr;          /* groups + 1 offsets into order */
  int *group_seg;          /* groups + 1 offsets into seg_ptr */
  int *seg_ptr;            /* segments + 1 offsets into order */
  /* n contacts by group. A colour's segment is JL_COLOUR_WEAVE of its
   * units woven (u0 v0 w0 .. u1 v1 w1 ..: round k holds the k-th contact of
   * each unit that has one; the last segment may have fewer units), units
   * by first contact: a thread's share is whole segments, and neighbouring
   * slots of different units are independent (two updates at once).
   * A sweep visits a colour group forward (the groups in reverse order on
   * backward sweeps). The merged group: its contacts in contact order, one
   * segment, reversed on backward sweeps. */
  int *order;
  int *colour;             /* n: greedy colour of each contact (its unit's) */
  int cap, group_cap;
} jl_colouring;

int jl_contact_colour(const jl_contact_problem *p, int min_size, jl_colouring *col,
                      jl_error *err);
void jl_colouring_free(jl_colouring *col);

/* The device SOR's colouring (colour_math.h: Jones-Plassmann, priorities
 * from the contact keys, first-fit colours), computed here in priority
 * order as the CPU twin of kernels/scene/scene_colour.cu: same colours, same
 * order (by colour, ascending contact inside a colour). */
typedef struct jl_pc_item {
  uint64_t hash;
  int index;
} jl_pc_item;

typedef struct jl_pcolouring {
  int n, colours;
  int *colour;             /* n: colour of each contact */
  int *order;              /* n contacts by colour, ascending inside a colour */
  int *colour_ptr;         /* colours + 1 offsets into order */
  uint64_t *hash;          /* n: priorities */
  jl_pc_item *rank;        /* n: contacts by priority (scratch) */
  int cap, colour_cap;
} jl_pcolouring;

/* key: the n contact keys of p's contacts (contact.h). */
int jl_contact_colour_jp(const jl_contact_problem *p, const uint64_t *key, jl_pcolouring *col,
                         jl_error *err);
void jl_pcolouring_free(jl_pcolouring *col);

#ifdef __cplusplus
}
#endif

#endif
