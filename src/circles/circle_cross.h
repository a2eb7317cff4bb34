/* Cut-and-splice children of two packings: the crossover of Deaven and Ho's
 * genetic search for atomic clusters (Phys. Rev. Lett. 75, 288, 1995) on
 * circles in a circle. Restarts may start from a child of two elite
 * packings (--cross), which keeps one side of each parent's arrangement. */
#ifndef JL_CIRCLE_CROSS_H
#define JL_CIRCLE_CROSS_H

#include "circle_search.h"
#include "circles.h"
#include "rng.h"

/* Scratch doubles jl_circle_cross_child needs for n circles. */
#define JL_CROSS_TMP_DOUBLES(n) (6 * (size_t)(n))

/* A child of packings a and b (problem order, one instance; s its sorted
 * radii) into x, y (n centres each, in s's sorted order), at a's scale:
 *  1. b is scaled to a's R and turned (and mirrored where that fits better)
 *     onto a, by the least squares of the circles whose radius is unique
 *     (their labels match across packings; equal circles' do not). Without
 *     such circles the turn is random.
 *  2. A random line at most R / 2 from the centre cuts the container; each
 *     circle is taken from a on one side and from b on the other.
 *  3. For each radius the parents may offer too many circles (the seam) or
 *     too few: the ones farthest from the line are kept, and the missing
 *     ones go to random points of the container.
 * The child overlaps along the line; the search relaxes it as a start
 * (JL_START_PLACED). tmp: JL_CROSS_TMP_DOUBLES(n). Draws from rng. */
void jl_circle_cross_child(const jl_circle_packing *a, const jl_circle_packing *b,
                           const jl_circle_sorted *s, jl_rng *rng, double *tmp, double *x,
                           double *y);

#endif
