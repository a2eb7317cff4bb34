/* Corpus replay without libFuzzer: runs the harness linked beside it on every
 * file of each folder given, in name order, so inputs the fuzzer once crashed
 * on stay fixed (suite 'unit'), and on each file given (to reproduce one
 * crash without clang). Prints how many files ran. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int jl_cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int jl_replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) { fprintf(stderr, "replay: out of memory\n"); fclose(f); return 1; }
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    uint8_t *nb = realloc(buf, cap);
    if (!nb) free(buf);
    buf = nb;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) { fprintf(stderr, "replay: %s: read error\n", path); free(buf); return 1; }
  /* an exact-size copy, so reads past the input's end show under ASan */
  uint8_t *in = malloc(n ? n : 1);
  if (!in) { free(buf); return 1; }
  memcpy(in, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(in, n);
  free(in);
  return 0;
}

static int jl_replay_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn) break;
      names = nn;
    }
    names[n] = strdup(e->d_name);
    if (names[n]) ++n;
  }
  closedir(d);
  qsort(names, n, sizeof *names, jl_cmp_name);
  int rc = 0;
  for (size_t i = 0; i < n; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      rc |= jl_replay_file(path);
      ++*count;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  int rc = 0, count = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) {
      rc |= jl_replay_file(argv[i]);
      ++count;
    } else {
      rc |= jl_replay_dir(argv[i], &count);
    }
  }
  if (count == 0) {
    fprintf(stderr, "replay: no input files\n");
    return 1;
  }
  printf("replay: %d inputs, no crash\n", count);
  return rc;
}
