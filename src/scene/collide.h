/* Collision detection of a scene: broad phase (uniform grid built by sorting
 * cell keys) then narrow phase per candidate pair, into jl_contacts.
 *
 * jl_collide finds every contact with gap < margin (margin >= 0 lets the
 * solver see contacts about to close), following contact.h: normal from a to
 * b, static body as b (for two dynamic bodies a < b), gap < 0 when
 * penetrating, point = middle of the two closest surface points, key =
 * JL_CONTACT_KEY(min body, max body, feature) with a feature id that stays
 * the same while the same features touch (warm start).
 *
 * Output order is deterministic and the same for any thread count: contacts
 * are grouped by pair, pairs in increasing (a, b) order, points of one pair in
 * the order the narrow phase gives them. Pairs of two static bodies are never
 * reported.
 *
 * Usage: jl_broad_phase bp; jl_broad_phase_init(&bp, err) once (broad_phase.h),
 * then jl_collide(bodies, margin, threads, &bp, &contacts, err) every step,
 * jl_broad_phase_free(&bp) at the end. Scenes of up to JL_MAX_BODIES_KEYED bodies. */
#ifndef JL_COLLIDE_H
#define JL_COLLIDE_H

#include <stdint.h>

#include "broad_phase.h"
#include "contact.h"
#include "error.h"
#include "rigid_body.h"

#ifdef __cplusplus
extern "C" {
#endif

/* key = min body (26 bits) | max body (26 bits) | feature (12 bits). */
#define JL_KEY_BODY_BITS 26
#define JL_KEY_FEATURE_BITS 12
#define JL_MAX_BODIES_KEYED (1 << JL_KEY_BODY_BITS)
#define JL_CONTACT_KEY(lo, hi, feature)                                                  \
  (((uint64_t)(lo) << (JL_KEY_BODY_BITS + JL_KEY_FEATURE_BITS)) |                        \
   ((uint64_t)(hi) << JL_KEY_FEATURE_BITS) | (uint64_t)(feature))

/* Broad + narrow phase: out->count is set to the number of contacts found
 * (out grows as needed). threads <= 0: all cores. */
int jl_collide(const jl_bodies *bodies, double margin, int threads, jl_broad_phase *bp,
               jl_contacts *out, jl_error *err);

#ifdef __cplusplus
}
#endif

#endif
