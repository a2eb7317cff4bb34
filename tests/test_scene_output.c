/* Scene outputs read back by their own libraries: the animated .glb through
 * assimp's importer, the FCLib problem through fclib_read_local. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "file_util.h"

#include <assimp/cimport.h>
#include <assimp/scene.h>
#ifdef JL_HAVE_FCLIB
#include <fclib.h>
#endif

#include "fclib_export.h"
#include "math3d.h"
#include "rigid_body.h"
#include "timer.h"
#include "trajectory.h"

#ifdef JL_HAVE_FCLIB
static void assert_near(double a, double b, double tol) {
  if (!(fabs(a - b) <= tol)) fail_msg("%.17g != %.17g (tol %g)", a, b, tol);
}
#endif

static void tmp_path(char *buf, size_t n, const char *name) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, n, "%s/jostle_test_%d_%s", dir ? dir : "/tmp", (int)getpid(), name);
}

static void set_body(jl_bodies *b, int i, int shape, int st, jl_vec3 p, jl_quat q, jl_vec3 s) {
  b->shape[i] = (uint8_t)shape;
  b->is_static[i] = (uint8_t)st;
  b->material[i] = 0;
  double *P = b->pos + 3 * i, *Q = b->quat + 4 * i, *S = b->size + 3 * i;
  P[0] = p.x, P[1] = p.y, P[2] = p.z;
  Q[0] = q.w, Q[1] = q.x, Q[2] = q.y, Q[3] = q.z;
  S[0] = s.x, S[1] = s.y, S[2] = s.z;
  for (int k = 0; k < 3; ++k) b->vel[3 * i + k] = b->omega[3 * i + k] = b->inv_inertia[3 * i + k] = 0;
  b->inv_mass[i] = st ? 0 : 1;
}

static const struct aiNode *find_node(const struct aiNode *root, const char *name) {
  for (unsigned i = 0; i < root->mNumChildren; ++i)
    if (strcmp(root->mChildren[i]->mName.data, name) == 0) return root->mChildren[i];
  return NULL;
}

/* Five bodies (2 spheres of one size, a box, a static box, a plane), three
 * frames of a falling, turning motion: nodes, meshes and keys come back. */
/* JSON has no inf or nan: a scene that blew up still writes a file a JSON
 * reader takes, with null where a number overflowed. */
static void test_json_non_finite(void **state) {
  (void)state;
  char s[40];
  assert_string_equal(jl_fmt_json_double(s, sizeof s, INFINITY), "null");
  assert_string_equal(jl_fmt_json_double(s, sizeof s, -INFINITY), "null");
  assert_string_equal(jl_fmt_json_double(s, sizeof s, NAN), "null");
  assert_string_equal(jl_fmt_json_double(s, sizeof s, 0.1), "0.1");
  jl_buf b = {0};
  double v[3] = {1.5, INFINITY, NAN};
  jl_buf_json_vec(&b, v, 3);
  assert_false(b.failed);
  assert_string_equal(b.data, "[1.5, null, null]");
  jl_buf_free(&b);
}

static void test_trajectory_glb(void **state) {
  (void)state;
  jl_error err;
  jl_bodies b;
  assert_int_equal(jl_bodies_init(&b, 5, &err), JL_OK);
  b.count = 5;
  jl_quat id = jl_quat_identity();
  set_body(&b, 0, JL_SHAPE_SPHERE, 0, jl_v3(0, 0, 2), id, jl_v3(0.5, 0.5, 0.5));
  set_body(&b, 1, JL_SHAPE_SPHERE, 0, jl_v3(2, 0, 2), id, jl_v3(0.5, 0.5, 0.5));
  set_body(&b, 2, JL_SHAPE_BOX, 0, jl_v3(4, 0, 2), id, jl_v3(0.5, 0.25, 0.1));
  set_body(&b, 3, JL_SHAPE_BOX, 1, jl_v3(0, 3, 0.5), id, jl_v3(1, 1, 0.5));
  set_body(&b, 4, JL_SHAPE_PLANE, 1, jl_v3(0, 0, -0.5), id, jl_v3(0, 0.6, 0.8));
  jl_trajectory t;
  assert_int_equal(jl_trajectory_init(&t, &b, &err), JL_OK);
  assert_int_equal(t.dynamic_count, 3);
  const int F = 3;
  for (int f = 0; f < F; ++f) {
    double time = 0.1 * f;
    for (int i = 0; i < 3; ++i) b.pos[3 * i + 2] = 2.0 - 0.5 * 9.81 * time * time;
    jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), 0.5 * f);
    b.quat[4 * 2] = q.w, b.quat[4 * 2 + 1] = q.x, b.quat[4 * 2 + 2] = q.y, b.quat[4 * 2 + 3] = q.z;
    assert_int_equal(jl_trajectory_add_frame(&t, &b, time, &err), JL_OK);
  }
  /* times must increase */
  assert_int_equal(jl_trajectory_add_frame(&t, &b, 0.1, &err), JL_ERR_INTERNAL);
  char path[512];
  tmp_path(path, sizeof path, "traj.glb");
  assert_int_equal(jl_trajectory_write_glb(&t, path, &err), JL_OK);

  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  char magic[4];
  assert_int_equal(fread(magic, 1, 4, fp), 4);
  fclose(fp);
  assert_memory_equal(magic, "glTF", 4);

  const struct aiScene *s = aiImportFile(path, 0);
  if (!s) fail_msg("assimp cannot read %s: %s", path, aiGetErrorString());
  assert_int_equal(s->mRootNode->mNumChildren, 5);
  /* 1 sphere mesh shared, 2 box sizes, 1 plane */
  assert_int_equal(s->mNumMeshes, 4);
  const struct aiNode *n0 = find_node(s->mRootNode, "body_0"), *n1 = find_node(s->mRootNode, "body_1");
  assert_non_null(n0);
  assert_non_null(n1);
  assert_int_equal(n0->mNumMeshes, 1);
  assert_int_equal(n0->mMeshes[0], n1->mMeshes[0]);
  const struct aiNode *n3 = find_node(s->mRootNode, "body_3");
  assert_non_null(n3);
  /* the static box keeps its pose in the node transform */
  assert_true(fabs(n3->mTransformation.b4 - 3.0) < 1e-6 && fabs(n3->mTransformation.c4 - 0.5) < 1e-6);
  /* its mesh spans the half extents */
  const struct aiMesh *m3 = s->mMeshes[n3->mMeshes[0]];
  float xmax = -1e30f;
  for (unsigned v = 0; v < m3->mNumVertices; ++v) xmax = fmaxf(xmax, m3->mVertices[v].x);
  assert_true(fabsf(xmax - 1.0f) < 1e-6f);

  /* the plane's quad: local z along the plane's normal, centred on its point */
  const struct aiNode *n4 = find_node(s->mRootNode, "body_4");
  assert_non_null(n4);
  const struct aiMatrix4x4 *T = &n4->mTransformation;
  assert_true(fabsf(T->a3) < 1e-6f && fabsf(T->b3 - 0.6f) < 1e-6f && fabsf(T->c3 - 0.8f) < 1e-6f);
  assert_true(fabsf(T->a4) < 1e-6f && fabsf(T->b4) < 1e-6f && fabsf(T->c4 + 0.5f) < 1e-6f);

  assert_int_equal(s->mNumAnimations, 1);
  const struct aiAnimation *a = s->mAnimations[0];
  assert_int_equal(a->mNumChannels, 3);
  double tps = a->mTicksPerSecond > 0 ? a->mTicksPerSecond : 1.0;
  int seen = 0;
  for (unsigned c = 0; c < a->mNumChannels; ++c) {
    const struct aiNodeAnim *ch = a->mChannels[c];
    int body = -1;
    assert_int_equal(sscanf(ch->mNodeName.data, "body_%d", &body), 1);
    assert_true(body >= 0 && body < 3);
    seen |= 1 << body;
    assert_int_equal(ch->mNumPositionKeys, F);
    assert_int_equal(ch->mNumRotationKeys, F);
    for (int f = 0; f < F; ++f) {
      double time = 0.1 * f;
      assert_true(fabs(ch->mPositionKeys[f].mTime / tps - time) < 1e-6);
      assert_true(fabs(ch->mPositionKeys[f].mValue.x - 2.0 * body) < 1e-6);
      assert_true(fabs(ch->mPositionKeys[f].mValue.z - (2.0 - 0.5 * 9.81 * time * time)) < 1e-6);
      if (body == 2) {
        jl_quat q = jl_quat_axis_angle(jl_v3(0, 0, 1), 0.5 * f);
        const struct aiQuaternion *r = &ch->mRotationKeys[f].mValue;
        /* q and -q are the same rotation */
        double dot = q.w * r->w + q.x * r->x + q.y * r->y + q.z * r->z;
        assert_true(fabs(fabs(dot) - 1.0) < 1e-6);
      }
    }
  }
  assert_int_equal(seen, 7);
  aiReleaseImport(s);
  unlink(path);
  jl_trajectory_free(&t);
  jl_bodies_free(&b);
}

/* Three contacts, contacts 0-1 and 1-2 coupled: the 9 x 9 W read back
 * equals the blocks, q and mu too. */
#ifdef JL_HAVE_FCLIB
static void test_fclib_roundtrip(void **state) {
  (void)state;
  int rowptr[4] = {0, 2, 5, 7};
  int col[7] = {0, 1, 0, 1, 2, 1, 2};
  double blocks[63];
  for (int k = 0; k < 63; ++k) blocks[k] = 0.25 * k - 3.0 + (k % 9 == 0 ? 10.0 : 0.0);
  double c[9] = {-1, 0.5, 0.25, -2, 0, 0, 3, -0.125, 1};
  double mu[3] = {0.3, 0.6, 0.5};
  double lambda[9] = {0.5, 0.1, -0.05, 0.25, 0, 0, 0.125, 0.0625, 0.03125};
  jl_fc_problem p = {3, rowptr, col, blocks, c, mu};
  char path[512];
  tmp_path(path, sizeof path, "problem.hdf5");
  jl_error err;
  assert_int_equal(jl_fclib_write_local(&p, path, "test problem", "three contacts", &err), JL_OK);
  /* Written again with impulses: the second file replaces the first (FCLib
   * alone would append). */
  assert_int_equal(jl_fclib_write_local_solved(&p, lambda, path, "test problem", "three contacts", &err),
                   JL_OK);
  struct fclib_local *r = fclib_read_local(path);
  assert_non_null(r);
  assert_int_equal(r->spacedim, 3);
  assert_non_null(r->W);
  assert_int_equal(r->W->m, 9);
  assert_int_equal(r->W->n, 9);
  /* Dense copy of what came back, in whichever sparse form. */
  double dense[81];
  memset(dense, 0, sizeof dense);
  const struct fclib_matrix *W = r->W;
  if (W->nz == -2) {
    for (int row = 0; row < 9; ++row)
      for (int k = W->p[row]; k < W->p[row + 1]; ++k) dense[9 * row + W->i[k]] += W->x[k];
  } else if (W->nz == -1) {
    for (int cl = 0; cl < 9; ++cl)
      for (int k = W->p[cl]; k < W->p[cl + 1]; ++k) dense[9 * W->i[k] + cl] += W->x[k];
  } else {
    for (int k = 0; k < W->nz; ++k) dense[9 * W->p[k] + W->i[k]] += W->x[k];
  }
  double expect[81];
  memset(expect, 0, sizeof expect);
  for (int br = 0; br < 3; ++br)
    for (int k = rowptr[br]; k < rowptr[br + 1]; ++k)
      for (int a = 0; a < 3; ++a)
        for (int bb = 0; bb < 3; ++bb) expect[9 * (3 * br + a) + 3 * col[k] + bb] = blocks[9 * k + 3 * a + bb];
  for (int k = 0; k < 81; ++k) assert_true(dense[k] == expect[k]);
  for (int k = 0; k < 9; ++k) assert_true(r->q[k] == c[k]);
  for (int k = 0; k < 3; ++k) assert_true(r->mu[k] == mu[k]);
  assert_non_null(r->info);
  assert_string_equal(r->info->title, "test problem");
  /* the solution: r = lambda, u = W r + q */
  struct fclib_solution *sol = fclib_read_solution(path);
  assert_non_null(sol);
  assert_non_null(sol->r);
  assert_non_null(sol->u);
  for (int k = 0; k < 9; ++k) {
    double u = c[k];
    for (int l = 0; l < 9; ++l) u += expect[9 * k + l] * lambda[l];
    assert_true(sol->r[k] == lambda[k]);
    assert_near(sol->u[k], u, 1e-12 * (1 + fabs(u)));
  }
  fclib_delete_solutions(sol, 1);
  fclib_delete_local(r);
  free(r);
  unlink(path);
  /* A folder that does not exist: an error, not an exit inside libfclib. */
  assert_int_equal(jl_fclib_write_local(&p, "/nonexistent-jostle-dir/x.hdf5", NULL, NULL, &err), JL_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent-jostle-dir/x.hdf5"));
  /* Bad input: no contacts, a column out of range. */
  p.n = 0;
  assert_int_equal(jl_fclib_write_local(&p, path, NULL, NULL, &err), JL_ERR_INPUT);
  p.n = 3;
  col[2] = 7;
  assert_int_equal(jl_fclib_write_local(&p, path, NULL, NULL, &err), JL_ERR_INTERNAL);
  assert_int_equal(access(path, F_OK), -1);
}
#endif

/* 8,000 moving spheres over 31 frames: written in well under a second and
 * read back whole (assimp's exporter took 67 s: a copy of its whole buffer
 * per animation channel). */
static void test_trajectory_glb_many(void **state) {
  (void)state;
  jl_error err;
  jl_bodies b;
  const int n = 8000, F = 31;
  assert_int_equal(jl_bodies_init(&b, n, &err), JL_OK);
  b.count = n;
  for (int i = 0; i < n; ++i)
    set_body(&b, i, JL_SHAPE_SPHERE, 0, jl_v3(0.2 * (i % 20), 0.2 * (i / 20 % 20), 0.2 * (i / 400)),
             jl_quat_identity(), jl_v3(0.05, 0.05, 0.05));
  jl_trajectory t;
  assert_int_equal(jl_trajectory_init(&t, &b, &err), JL_OK);
  for (int f = 0; f < F; ++f) {
    for (int i = 0; i < n; ++i) b.pos[3 * i + 2] -= 0.01;
    assert_int_equal(jl_trajectory_add_frame(&t, &b, 0.01 * f, &err), JL_OK);
  }
  char path[512];
  tmp_path(path, sizeof path, "many.glb");
  double t0 = jl_time_now();
  assert_int_equal(jl_trajectory_write_glb(&t, path, &err), JL_OK);
  double took = jl_time_now() - t0;
  print_message("8,000 bodies x 31 frames: .glb in %.2f s\n", took);
  assert_true(took < 5.0);
  const struct aiScene *s = aiImportFile(path, 0);
  if (!s) fail_msg("assimp cannot read %s: %s", path, aiGetErrorString());
  assert_int_equal(s->mRootNode->mNumChildren, n);
  assert_int_equal(s->mNumMeshes, 1);
  assert_int_equal(s->mNumAnimations, 1);
  assert_int_equal(s->mAnimations[0]->mNumChannels, n);
  for (int c = 0; c < n; c += 997) {
    const struct aiNodeAnim *ch = s->mAnimations[0]->mChannels[c];
    int i = -1;
    assert_int_equal(sscanf(ch->mNodeName.data, "body_%d", &i), 1);
    assert_int_equal(ch->mNumPositionKeys, F);
    assert_true(fabs(ch->mPositionKeys[F - 1].mValue.x - 0.2 * (i % 20)) < 1e-5);
    assert_true(fabs(ch->mPositionKeys[F - 1].mValue.z - (0.2 * (i / 400) - 0.01 * F)) < 1e-5);
  }
  aiReleaseImport(s);
  unlink(path);
  jl_trajectory_free(&t);
  jl_bodies_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_json_non_finite),
    cmocka_unit_test(test_trajectory_glb),
    cmocka_unit_test(test_trajectory_glb_many),
#ifdef JL_HAVE_FCLIB
    cmocka_unit_test(test_fclib_roundtrip),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
