/* jostle: packing by contact simulation, on the CPU or a CUDA GPU.
 *
 *   circles.h  the smallest circle around circles of given radii
 *   trunk.h    trunk volume: 200 x 100 x 50 mm blocks packed into a closed mesh
 *   scene.h    rigid-body scenes: create or load, step, read the state
 *   bench.h    the timed kernels behind `jostle bench`
 *
 * Build against it with `pkg-config --cflags --libs jostle`. */
#ifndef JOSTLE_H
#define JOSTLE_H

#include <jostle/common.h>
#include <jostle/circles.h>
#include <jostle/trunk.h>
#include <jostle/scene.h>
#include <jostle/bench.h>

#endif
