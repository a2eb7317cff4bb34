#!/usr/bin/env python3
"""mujoco_driver: one jostle scene stepped by MuJoCo, for scripts/bench-peers.

  python mujoco_driver.py BODIES STEPS ITERATIONS [--positions FILE] [--mjcf FILE]

BODIES is the text file bench/bullet_driver.cpp reads (its header comment gives the format):
gravity, dt, friction, restitution and one line per body (sphere, box or plane with mass,
size, position, orientation, velocity, angular velocity). This writes the same bodies as MJCF:
each dynamic body a free joint and one geom of its shape and mass (MuJoCo computes the same
inertia from the shape: sphere 2/5 m r^2, box m/3 (b^2 + c^2)), static bodies and planes geoms
of the world body. One fixed step of dt per mj_step, Newton solver with ITERATIONS
iterations at most, elliptic friction cones (Coulomb's cone, as jostle), every geom the
scene's friction (MuJoCo takes the larger of a pair's: the same mu). MuJoCo's contacts are
soft (its default solref/solimp): it has no restitution parameter, so restitution is ignored.

Prints one JSON line: steps, iterations, ms_median, ms_total, max_displacement (the farthest
a dynamic body that started at rest ended from its start, m), max_penetration (the deepest
contact, -dist, after any step, m).
"""
import json, math, sys, time

import mujoco
import numpy as np


def read_bodies(path):
    s = {"gravity": [0.0, 0.0, -9.81], "dt": 0.001, "friction": 0.5, "restitution": 0.0,
         "bodies": []}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "gravity":
                s["gravity"] = [float(x) for x in w[1:4]]
            elif w[0] in ("dt", "friction", "restitution"):
                s[w[0]] = float(w[1])
            elif w[0] == "bodies":
                pass
            else:
                v = [float(x) for x in w[1:]]
                s["bodies"].append({"shape": w[0], "mass": v[0], "size": v[1:4], "pos": v[4:7],
                                    "quat": v[7:11], "vel": v[11:14], "omega": v[14:17]})
    return s


def f3(v):
    return " ".join(repr(float(x)) for x in v)


def mjcf(s, iterations):
    mu = s["friction"]
    g = s["gravity"]
    out = [f'<mujoco model="jostle-scene">',
           f'  <option timestep="{s["dt"]!r}" gravity="{f3(g)}" iterations="{iterations}" '
           f'solver="Newton" cone="elliptic"/>',
           '  <size memory="2G"/>',
           f'  <default><geom friction="{mu!r} 0 0" condim="3"/></default>',
           '  <worldbody>']
    for i, b in enumerate(s["bodies"]):
        if b["shape"] == "plane":
            out.append(f'    <geom name="b{i}" type="plane" size="0 0 1" pos="{f3(b["pos"])}" '
                       f'zaxis="{f3(b["size"])}"/>')
            continue
        if b["shape"] == "sphere":
            geom = f'type="sphere" size="{b["size"][0]!r}"'
        else:
            geom = f'type="box" size="{f3(b["size"])}"'
        if b["mass"] == 0:
            out.append(f'    <geom name="b{i}" {geom} pos="{f3(b["pos"])}" quat="{f3(b["quat"])}"/>')
        else:
            out.append(f'    <body name="b{i}" pos="{f3(b["pos"])}" quat="{f3(b["quat"])}">'
                       f'<freejoint/><geom {geom} mass="{b["mass"]!r}"/></body>')
    out += ['  </worldbody>', '</mujoco>']
    return "\n".join(out) + "\n"


def main():
    argv = sys.argv[1:]
    opts = {}
    while len(argv) > 3 and argv[-2].startswith("--"):
        opts[argv[-2]] = argv[-1]
        argv = argv[:-2]
    if len(argv) != 3:
        raise SystemExit("usage: mujoco_driver.py BODIES STEPS ITERATIONS [--positions FILE] "
                         "[--mjcf FILE]")
    s = read_bodies(argv[0])
    steps, iterations = int(argv[1]), int(argv[2])
    xml = mjcf(s, iterations)
    if "--mjcf" in opts:
        with open(opts["--mjcf"], "w") as f:
            f.write(xml)
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    # initial velocities: a free joint's qvel is the linear velocity (world frame) then the
    # angular velocity in the body frame
    dyn = [i for i, b in enumerate(s["bodies"]) if b["shape"] != "plane" and b["mass"] > 0]
    for k, i in enumerate(dyn):
        b = s["bodies"][i]
        bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"b{i}")
        dof = model.jnt_dofadr[model.body_jntadr[bid]]
        w, x, y, z = b["quat"]
        n = math.sqrt(w * w + x * x + y * y + z * z)
        q = np.array([w, x, y, z]) / n
        r = np.zeros(9)
        mujoco.mju_quat2Mat(r, q)
        data.qvel[dof:dof + 3] = b["vel"]
        data.qvel[dof + 3:dof + 6] = r.reshape(3, 3).T @ np.array(b["omega"])
    mujoco.mj_forward(model, data)
    ms = []
    deepest = 0.0
    for _ in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(model, data)
        ms.append(1e3 * (time.perf_counter() - t0))
        if data.ncon:
            deepest = max(deepest, float(-data.contact.dist[:data.ncon].min()))
    moved = 0.0
    final = {}
    for i in dyn:
        bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"b{i}")
        p = data.xpos[bid]
        final[i] = p
        b = s["bodies"][i]
        if any(b["vel"]) or any(b["omega"]):
            continue
        moved = max(moved, float(np.linalg.norm(p - np.array(b["pos"]))))
    if "--positions" in opts:
        with open(opts["--positions"], "w") as f:
            for i, b in enumerate(s["bodies"]):
                p = final.get(i, b["pos"])
                f.write("%.17g %.17g %.17g\n" % tuple(p))
    print(json.dumps({"engine": "mujoco", "version": mujoco.__version__, "steps": steps,
                      "iterations": iterations, "ms_median": float(np.median(ms)) if ms else 0.0,
                      "ms_total": float(sum(ms)), "max_displacement": moved,
                      "max_penetration": max(deepest, 0.0)}))


if __name__ == "__main__":
    main()
