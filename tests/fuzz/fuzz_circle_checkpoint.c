/* Search checkpoints (docs/formats.md) through jl_circle_checkpoint_load, as
 * `circles --continue FILE --n N` runs it. N is the count the header claims
 * (bytes 16-19) when it lies in 2..JL_FUZZ_CK_MAX_N, so a well-formed file
 * gets past the instance check, else 5. */
#include <math.h>
#include <string.h>

#include "circle_checkpoint.h"
#include "fuzz.h"

/* Instances up to this size; larger ones only repeat the per-circle work. */
#define JL_FUZZ_CK_MAX_N 60

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = jl_fuzz_file(data, size, "search.ck");
  uint32_t claimed = 0;
  if (size >= 20) memcpy(&claimed, data + 16, 4);
  int n = claimed >= 2 && claimed <= JL_FUZZ_CK_MAX_N ? (int)claimed : 5;
  jl_circle_problem prob;
  jl_error err = {0};
  JL_FUZZ_CHECK(jl_circle_problem_zimmermann(&prob, n, &err) == JL_OK);
  jl_circle_checkpoint ck;
  int rc = jl_circle_checkpoint_load(path, &prob, &ck, &err);
  if (rc != JL_OK) {
    jl_fuzz_check_error(rc, &err, path);
    JL_FUZZ_CHECK(ck.batch.x == NULL && ck.elite == NULL);
  } else {
    const jl_circle_batch *b = &ck.batch;
    JL_FUZZ_CHECK(b->n == n && b->count >= 1 && ck.elite_count >= 0);
    for (size_t i = 0; i < (size_t)n * (size_t)b->count; ++i)
      JL_FUZZ_CHECK(isfinite(b->x[i]) && isfinite(b->y[i]) && isfinite(b->wx[i]) && isfinite(b->wy[i]));
    for (int k = 0; k < b->count; ++k) JL_FUZZ_CHECK(b->need_start[k] <= JL_START_PLACED && b->R[k] >= 0.0);
    for (int e = 0; e < ck.elite_count; ++e) {
      jl_circle_check chk;
      jl_circle_check_packing(&ck.elite[e], JL_LEGAL_REL_TOL, &chk);
      JL_FUZZ_CHECK(chk.legal);
    }
    jl_circle_checkpoint_free(&ck);
  }
  jl_circle_problem_free(&prob);
  return 0;
}
