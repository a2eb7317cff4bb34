/* Contact graph colouring for parallel SOR (seed 002, sec. 4.3): bodies are
 * vertices, contacts are edges; two contacts of one colour share no dynamic
 * body, so Gauss-Seidel updates inside a colour are independent. Static
 * bodies are left out of the graph (ground contacts would otherwise form one
 * clique). Greedy colouring in contact order; colours smaller than a fixed
 * size are merged into one last group that runs in order on one thread, so
 * the result does not depend on the thread count. */
#ifndef JL_CONTACT_GRAPH_H
#define JL_CONTACT_GRAPH_H

#include "contact_setup.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Colours with fewer contacts than this are merged into the sequential group. */
#define JL_COLOUR_MIN_SIZE 64

typedef struct jl_colouring {
  int groups;              /* colour groups in `order` */
  int merged;              /* 1: the last group is the merged sequential one */
  int colours;             /* colours found by the greedy pass (before merging) */
  int *group_ptr;          /* groups + 1 offsets into order */
  int *order;              /* n contacts, grouped, ascending inside a group */
  int *colour;             /* n: greedy colour of each contact */
  int cap, group_cap;
} jl_colouring;

int jl_contact_colour(const jl_contact_problem *p, int min_size, jl_colouring *col,
                      jl_error *err);
void jl_colouring_free(jl_colouring *col);

#ifdef __cplusplus
}
#endif

#endif
