// bullet_driver: one jostle scene stepped by Bullet (btDiscreteDynamicsWorld), for
// scripts/bench-peers. Built by Meson only when Bullet (libbullet-dev) is found.
//
//   bullet_driver BODIES STEPS ITERATIONS [--positions FILE]
//
// BODIES is a text file (scripts/bench-peers writes it from the bodies jostle expands from a
// scene file, `jostle scene FILE --steps 0 --out R.json`); '#' starts a comment line:
//
//   gravity GX GY GZ
//   dt H
//   friction MU
//   restitution E
//   bodies N
//   then N lines, one per body:
//   SHAPE MASS S0 S1 S2 PX PY PZ QW QX QY QZ VX VY VZ WX WY WZ
//
// SHAPE is sphere (S0 the radius), box (S0..S2 the half-extents) or plane (S0..S2 the outward
// normal, P a point on it); MASS 0 makes the body static (planes always are). Q is the
// orientation (w, x, y, z), V and W the linear and angular velocity, world frame.
//
// The world: btDbvtBroadphase, btSequentialImpulseConstraintSolver with ITERATIONS iterations,
// one fixed substep of H per step (stepSimulation(H, 0)), no sleeping (every body is stepped
// each time, as jostle does). Bullet multiplies the two bodies' friction and restitution, so
// each body gets sqrt(MU) and sqrt(E): every pair then has MU and E. Collision margins are
// Bullet's defaults (boxes keep their half-extents, the margin rounds their edges inside).
//
// It prints one JSON line: steps, iterations, ms_median (median over the steps of one
// stepSimulation), ms_total, max_displacement (the farthest a dynamic body that started at
// rest, zero velocity and angular velocity, ended from its start, m), max_penetration (the
// deepest contact point of any manifold after any step, m). --positions writes the final
// positions, one body a line (x y z), in the bodies' order.
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Body {
  std::string shape;
  double mass = 0, size[3] = {0, 0, 0}, pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};
  double vel[3] = {0, 0, 0}, omega[3] = {0, 0, 0};
};

struct Scene {
  double gravity[3] = {0, 0, -9.81}, dt = 0.001, friction = 0.5, restitution = 0;
  std::vector<Body> bodies;
};

bool fail(const std::string &msg) {
  std::fprintf(stderr, "bullet_driver: %s\n", msg.c_str());
  return false;
}

bool read_scene(const char *path, Scene &s) {
  std::ifstream in(path);
  if (!in) return fail(std::string(path) + ": cannot be read");
  std::string line;
  long n = -1;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    bool ok = true;
    const std::string where = std::string(path) + ":" + std::to_string(lineno);
    if (key == "gravity") ok = static_cast<bool>(ls >> s.gravity[0] >> s.gravity[1] >> s.gravity[2]);
    else if (key == "dt") ok = static_cast<bool>(ls >> s.dt) && s.dt > 0;
    else if (key == "friction") ok = static_cast<bool>(ls >> s.friction) && s.friction >= 0;
    else if (key == "restitution") ok = static_cast<bool>(ls >> s.restitution) && s.restitution >= 0;
    else if (key == "bodies") ok = static_cast<bool>(ls >> n) && n >= 0;
    else if (key == "sphere" || key == "box" || key == "plane") {
      Body b;
      b.shape = key;
      ok = static_cast<bool>(ls >> b.mass >> b.size[0] >> b.size[1] >> b.size[2] >> b.pos[0] >>
                             b.pos[1] >> b.pos[2] >> b.quat[0] >> b.quat[1] >> b.quat[2] >>
                             b.quat[3] >> b.vel[0] >> b.vel[1] >> b.vel[2] >> b.omega[0] >>
                             b.omega[1] >> b.omega[2]) && b.mass >= 0;
      s.bodies.push_back(b);
    } else {
      return fail(where + ": unknown key '" + key + "'");
    }
    if (!ok) return fail(where + ": bad or missing value for '" + key + "'");
  }
  if (n < 0) return fail(std::string(path) + ": no 'bodies N' line");
  if (static_cast<long>(s.bodies.size()) != n)
    return fail(std::string(path) + ": 'bodies " + std::to_string(n) + "' but " +
                std::to_string(s.bodies.size()) + " body lines");
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 6 && std::string(argv[4]) == "--positions")) {
    std::fprintf(stderr, "usage: bullet_driver BODIES STEPS ITERATIONS [--positions FILE]\n");
    return 2;
  }
  Scene s;
  if (!read_scene(argv[1], s)) return 2;
  char *end = nullptr;
  long steps = std::strtol(argv[2], &end, 10);
  if (*end || steps < 0) return fail("STEPS: must be an integer >= 0"), 2;
  long iterations = std::strtol(argv[3], &end, 10);
  if (*end || iterations < 1) return fail("ITERATIONS: must be an integer >= 1"), 2;

  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  world.setGravity(btVector3(s.gravity[0], s.gravity[1], s.gravity[2]));
  world.getSolverInfo().m_numIterations = static_cast<int>(iterations);

  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> motions;
  std::vector<std::unique_ptr<btRigidBody>> rigid;
  const double mu = std::sqrt(s.friction), e = std::sqrt(s.restitution);
  for (const Body &b : s.bodies) {
    btTransform tr;
    tr.setIdentity();
    btScalar mass = 0;
    if (b.shape == "plane") {
      btVector3 nrm(b.size[0], b.size[1], b.size[2]);
      nrm.normalize();
      btVector3 p(b.pos[0], b.pos[1], b.pos[2]);
      shapes.emplace_back(new btStaticPlaneShape(nrm, nrm.dot(p)));
    } else {
      if (b.shape == "sphere") shapes.emplace_back(new btSphereShape(b.size[0]));
      else shapes.emplace_back(new btBoxShape(btVector3(b.size[0], b.size[1], b.size[2])));
      tr.setOrigin(btVector3(b.pos[0], b.pos[1], b.pos[2]));
      tr.setRotation(btQuaternion(b.quat[1], b.quat[2], b.quat[3], b.quat[0]).normalized());
      mass = b.mass;
    }
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shapes.back()->calculateLocalInertia(mass, inertia);
    motions.emplace_back(new btDefaultMotionState(tr));
    btRigidBody::btRigidBodyConstructionInfo info(mass, motions.back().get(), shapes.back().get(),
                                                  inertia);
    info.m_friction = mu;
    info.m_restitution = e;
    rigid.emplace_back(new btRigidBody(info));
    btRigidBody *rb = rigid.back().get();
    if (mass > 0) {
      rb->setLinearVelocity(btVector3(b.vel[0], b.vel[1], b.vel[2]));
      rb->setAngularVelocity(btVector3(b.omega[0], b.omega[1], b.omega[2]));
      rb->setActivationState(DISABLE_DEACTIVATION);
    }
    world.addRigidBody(rb);
  }

  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(steps));
  double deepest = 0;
  using clock = std::chrono::steady_clock;
  for (long k = 0; k < steps; ++k) {
    auto t0 = clock::now();
    world.stepSimulation(static_cast<btScalar>(s.dt), 0, static_cast<btScalar>(s.dt));
    auto t1 = clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int m = 0; m < dispatcher.getNumManifolds(); ++m) {
      const btPersistentManifold *pm = dispatcher.getManifoldByIndexInternal(m);
      for (int c = 0; c < pm->getNumContacts(); ++c)
        deepest = std::max(deepest, -static_cast<double>(pm->getContactPoint(c).getDistance()));
    }
  }

  double moved = 0;
  for (size_t i = 0; i < s.bodies.size(); ++i) {
    const Body &b = s.bodies[i];
    bool rest = b.mass > 0 && b.shape != "plane";
    for (int d = 0; d < 3; ++d) rest = rest && b.vel[d] == 0 && b.omega[d] == 0;
    if (!rest) continue;
    btVector3 p = rigid[i]->getCenterOfMassPosition();
    double dx = p.x() - b.pos[0], dy = p.y() - b.pos[1], dz = p.z() - b.pos[2];
    moved = std::max(moved, std::sqrt(dx * dx + dy * dy + dz * dz));
  }
  if (argc == 6) {
    FILE *f = std::fopen(argv[5], "w");
    if (!f) return fail(std::string(argv[5]) + ": cannot be written"), 3;
    for (auto &rb : rigid) {
      btVector3 p = rb->getCenterOfMassPosition();
      std::fprintf(f, "%.17g %.17g %.17g\n", p.x(), p.y(), p.z());
    }
    if (std::fclose(f) != 0) return fail(std::string(argv[5]) + ": cannot be written"), 3;
  }
  double total = 0;
  for (double t : ms) total += t;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  std::printf("{\"engine\": \"bullet\", \"version\": %d, \"steps\": %ld, \"iterations\": %ld, "
              "\"ms_median\": %.6g, \"ms_total\": %.6g, \"max_displacement\": %.6g, "
              "\"max_penetration\": %.6g}\n",
              btGetVersion(), steps, iterations, median, total, moved, deepest);
  // the world holds raw pointers to the bodies: take them out before they go
  for (auto &rb : rigid) world.removeRigidBody(rb.get());
  return 0;
}
