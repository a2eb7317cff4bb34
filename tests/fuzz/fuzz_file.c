#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Harness state, per process: the folder and the few file names written. */
#define JL_FUZZ_NAMES_MAX 8
#define JL_FUZZ_NAME_LEN 64
static char jl_fuzz_dir[1024];
static char jl_fuzz_names[JL_FUZZ_NAMES_MAX][JL_FUZZ_NAME_LEN];
static int jl_fuzz_n_names;

/* Room for the folder, a slash and a name. */
typedef char jl_fuzz_path_buf[sizeof jl_fuzz_dir + JL_FUZZ_NAMES_MAX * JL_FUZZ_NAME_LEN + 2];

static void jl_fuzz_cleanup(void) {
  jl_fuzz_path_buf path;
  for (int i = 0; i < jl_fuzz_n_names; ++i) {
    snprintf(path, sizeof path, "%s/%s", jl_fuzz_dir, jl_fuzz_names[i]);
    unlink(path);
  }
  rmdir(jl_fuzz_dir);
}

static void jl_fuzz_die(const char *what, const char *path) {
  fprintf(stderr, "fuzz: %s %s: %s\n", what, path, strerror(errno));
  abort();
}

const char *jl_fuzz_file(const uint8_t *data, size_t size, const char *name) {
  static jl_fuzz_path_buf path;
  if (!jl_fuzz_dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(jl_fuzz_dir, sizeof jl_fuzz_dir, "%s/jostle-fuzz.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(jl_fuzz_dir)) jl_fuzz_die("cannot create the folder", jl_fuzz_dir);
    atexit(jl_fuzz_cleanup);
  }
  int known = 0;
  for (int i = 0; i < jl_fuzz_n_names; ++i) known |= strcmp(jl_fuzz_names[i], name) == 0;
  if (!known) {
    JL_FUZZ_CHECK(jl_fuzz_n_names < JL_FUZZ_NAMES_MAX && strlen(name) < sizeof jl_fuzz_names[0]);
    strcpy(jl_fuzz_names[jl_fuzz_n_names++], name);
  }
  snprintf(path, sizeof path, "%s/%s", jl_fuzz_dir, name);
  /* written over in place, then cut to size: on ext4 a truncation to zero
   * before rewriting forces a flush at close (auto_da_alloc) */
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) jl_fuzz_die("cannot create", path);
  for (size_t done = 0; done < size; ) {
    ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) jl_fuzz_die("cannot write", path);
    done += (size_t)w;
  }
  if (ftruncate(fd, (off_t)size) != 0 || close(fd) != 0) jl_fuzz_die("cannot write", path);
  return path;
}

void jl_fuzz_check_error(int rc, const jl_error *err, const char *path) {
  JL_FUZZ_CHECK(rc == JL_ERR_INPUT || rc == JL_ERR_NOMEM);
  JL_FUZZ_CHECK(err->code == rc);
  JL_FUZZ_CHECK(memchr(err->msg, '\0', sizeof err->msg) != NULL);
  JL_FUZZ_CHECK(strstr(err->msg, path) != NULL);
}
