/* Mutation sweep through the C API: for small vector files, every truncation length, every
 * single-byte change at every header, index and trailer offset (to 0, 0xFF, +1 and -1), and
 * random multi-byte mutations of whole files. Each case runs in a child process that opens
 * the bytes with b2f_open_buffer and walks everything (info, every chunk, metalayers,
 * vlmetalayers, the array slab); it must end with B2F_OK or an error status: never a signal,
 * never a hang (an alarm per case), never B2F_ERR_INTERNAL.
 *
 * B2F_MUTATION_STRIDE=N runs every N-th case only (for valgrind); B2F_MUTATION_RANDOM sets the
 * number of random mutations per file (default 300). */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *FILES[] = {
    "schunk/fill_special_value_cframe.b2frame", "b2nd/full_value.b2nd",
    "c-blosc2-compat/compat/varchunks-lz4-3.0.0.b2frame",
    "schunk/matrix_17_lz4hc_shuffle-bytedelta_ts2_cl9.b2frame",
    "c-blosc2-compat/compat/vlblocks-lz4-variable-3.0.0.b2frame", "b2nd/big_endian_f8.b2nd",
    "schunk/leftover_bytes.b2frame",
};

#define WALK_INTERNAL 3
#define MAX_OUT (64u << 20)

/* Every call must return OK or a documented error, never INTERNAL. */
#define STEP(call)                                  \
  do {                                              \
    b2f_status s_ = (call);                         \
    if (s_ == B2F_ERR_INTERNAL) {                   \
      fprintf(stderr, "%s: %s\n", #call, b2f_last_error()); \
      _exit(WALK_INTERNAL);                         \
    }                                               \
    st = s_;                                        \
  } while (0)

/* The child: opens and walks the bytes. */
static void walk(const unsigned char *buf, size_t len) {
  b2f_status st;
  b2f_frame *f = NULL;
  STEP(b2f_open_buffer(buf, len, B2F_READ, &f));
  if (st != B2F_OK) _exit(0);
  b2f_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  STEP(b2f_get_info(f, &info));
  for (int64_t i = 0; i < info.nchunks && i < 256; i++) {
    size_t n = 0;
    STEP(b2f_get_chunk(f, i, NULL, 0, &n));
    if (st == B2F_OK && n <= MAX_OUT) {
      void *out = malloc(n ? n : 1);
      STEP(b2f_get_chunk(f, i, out, n, &n));
      free(out);
    }
    STEP(b2f_get_chunk_raw(f, i, NULL, 0, &n));
  }
  size_t count = 0, nlen = 0;
  char name[256];
  unsigned char *content = malloc(1 << 20);
  STEP(b2f_meta_count(f, &count));
  for (size_t i = 0; st == B2F_OK && i < count; i++) {
    STEP(b2f_meta_name(f, i, name, sizeof name, &nlen));
    if (st == B2F_OK) STEP(b2f_meta_get(f, name, content, 1 << 20, &nlen));
  }
  STEP(b2f_vlmeta_count(f, &count));
  for (size_t i = 0; i < count; i++) {
    STEP(b2f_vlmeta_name(f, i, name, sizeof name, &nlen));
    if (st == B2F_OK) STEP(b2f_vlmeta_get(f, name, content, 1 << 20, &nlen));
  }
  free(content);
  b2f_nd_info nd;
  memset(&nd, 0, sizeof nd);
  nd.struct_size = sizeof nd;
  STEP(b2f_nd_info_get(f, &nd));
  if (st == B2F_OK) {
    int64_t start[B2F_MAX_DIM] = {0}, stop[B2F_MAX_DIM];
    uint64_t items = 1;
    for (int d = 0; d < nd.ndim; d++) {
      stop[d] = nd.shape[d] < 64 ? nd.shape[d] : 64;
      items *= (uint64_t)stop[d];
    }
    if (items * (uint64_t)nd.itemsize <= MAX_OUT) {
      size_t bytes = (size_t)(items * (uint64_t)nd.itemsize);
      void *out = malloc(bytes ? bytes : 1);
      STEP(b2f_nd_get_slice(f, start, stop, out, bytes));
      free(out);
    }
  }
  b2f_close(f);
  _exit(0);
}

static int failures = 0, cases = 0, run_cases = 0, stride = 1;

/* Runs one case in a child process with a time limit. */
static void run(const char *file, const char *what, long at, const unsigned char *buf, size_t len) {
  if (cases++ % stride != 0) return;
  run_cases++;
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    walk(buf, len);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0) {
    if (failures++ < 20)
      fprintf(stderr, "%s: %s at %ld: %s %d\n", file, what, at,
              WIFSIGNALED(status) ? "signal" : "exit status",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
}

static uint32_t be32(const unsigned char *b) {
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint64_t be64(const unsigned char *b) {
  return (uint64_t)be32(b) << 32 | be32(b + 4);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

int main(void) {
  const char *s = getenv("B2F_MUTATION_STRIDE");
  stride = s && atoi(s) > 0 ? atoi(s) : 1;
  const char *r = getenv("B2F_MUTATION_RANDOM");
  int nrandom = r ? atoi(r) : 300;
  for (size_t k = 0; k < sizeof FILES / sizeof FILES[0]; k++) {
    size_t len = 0;
    unsigned char *orig = h_read_file(h_vector(FILES[k]), &len);
    CHECK(orig != NULL && len > 64);
    unsigned char *buf = malloc(len);
    /* The intact file walks cleanly. */
    run(FILES[k], "intact", 0, orig, len);

    for (size_t n = 0; n < len; n++) run(FILES[k], "truncated to", (long)n, orig, n);

    /* Header (its header_len), index and trailer regions (up to 256 bytes each). */
    size_t header_len = be32(orig + 11) < len ? be32(orig + 11) : 64;
    /* The index chunk sits right after the chunks: at header_len + cbytes (header field). */
    uint64_t chunks_len = be64(orig + 39);
    size_t index_at = chunks_len < len - header_len ? header_len + (size_t)chunks_len
                                                    : (len > 512 ? len - 512 : 0);
    size_t regions[3][2] = {{0, header_len},
                            {len > 256 ? len - 256 : 0, len},
                            {index_at, index_at + 256 < len ? index_at + 256 : len}};
    const int deltas[4] = {-1, 1, 0x100, 0x1FF}; /* -1, +1, to 0, to 0xFF */
    for (int g = 0; g < 3; g++) {
      for (size_t at = regions[g][0]; at < regions[g][1]; at++) {
        for (int d = 0; d < 4; d++) {
          memcpy(buf, orig, len);
          buf[at] = deltas[d] == 0x100 ? 0 : deltas[d] == 0x1FF ? 0xFF : (unsigned char)(orig[at] + deltas[d]);
          if (buf[at] == orig[at]) continue;
          run(FILES[k], g == 0 ? "header byte" : g == 1 ? "trailer byte" : "index byte", (long)at, buf, len);
        }
      }
    }

    /* Random multi-byte mutations of the whole file. */
    for (int i = 0; i < nrandom; i++) {
      memcpy(buf, orig, len);
      int nflips = 1 + (int)(next() % 8);
      for (int j = 0; j < nflips; j++) {
        size_t at = next() % len;
        switch (next() % 3) {
          case 0: buf[at] = (unsigned char)next(); break;
          case 1: buf[at] ^= (unsigned char)(1u << (next() % 8)); break;
          default: {
            size_t w = 1 + next() % 8;
            for (size_t q = 0; q < w && at + q < len; q++) buf[at + q] = (q == 0) ? 0x7F : 0xFF;
          }
        }
      }
      run(FILES[k], "random mutation", i, buf, len);
    }
    free(buf);
    free(orig);
  }
  printf("%d cases run (of %d), %d failures\n", run_cases, cases, failures);
  CHECK(failures == 0);
  CHECK(run_cases > 100);
  DONE();
}
