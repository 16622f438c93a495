/* Frame benchmark: b2frame against c-blosc2 in one process on the same data and parameters.
 *   1. append 10,000 chunks of 64 KiB to a file frame (each append committed);
 *   2. reopen that frame;
 *   3. read its 10,000 chunks in random order, and 2,000 short slices of 4 MiB chunks;
 *   4. open a frame of 100,000 chunks (written once by c-blosc2);
 *   5. memory opening a 1 GiB frame (in a child process each: peak RSS increase, heap in use).
 * Prints a Markdown table with b2frame/c-blosc2 speed ratios (> 1: b2frame faster).
 *
 *   bench/run.sh --frame [--reps N] [--dir DIR]
 */
#include <blosc2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "b2frame.h"
#include "bench_util.h"

#define CHUNK (64 * 1024)
#define NCHUNKS 10000

static void die(const char *what) {
  fprintf(stderr, "%s failed: %s\n", what, b2f_last_error());
  exit(1);
}

static void fill(int32_t *v, size_t n, int k) {
  for (size_t i = 0; i < n; i++) v[i] = (int32_t)((int64_t)k * 1000 + (int64_t)(i / 3));
}

static b2f_storage storage(void) {
  b2f_storage s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.contiguous = true;
  s.chunksize = CHUNK;
  b2f_cparams_default(&s.cparams); /* blosclz 5 shuffle: c-blosc2's defaults too */
  s.cparams.typesize = 4;
  return s;
}

static blosc2_schunk *c_new(const char *path) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp, .dparams = &dp};
  return blosc2_schunk_new(&st);
}

static double t_append_ours(const char *path, int32_t *buf) {
  remove(path);
  b2f_storage s = storage();
  b2f_frame *f;
  double t0 = now();
  if (b2f_create(path, &s, &f)) die("b2f_create");
  for (int k = 0; k < NCHUNKS; k++) {
    fill(buf, CHUNK / 4, k);
    if (b2f_append(f, buf, CHUNK, NULL)) die("b2f_append");
  }
  b2f_close(f);
  return now() - t0;
}

static double t_append_theirs(const char *path, int32_t *buf) {
  blosc2_remove_urlpath(path);
  double t0 = now();
  blosc2_schunk *s = c_new(path);
  for (int k = 0; k < NCHUNKS; k++) {
    fill(buf, CHUNK / 4, k);
    if (blosc2_schunk_append_buffer(s, buf, CHUNK) < 0) die("blosc2_schunk_append_buffer");
  }
  blosc2_schunk_free(s);
  return now() - t0;
}

/* What opening `path` costs one library, measured in a child process after a first
 * open/close of the same file (so code pages and allocator setup count for neither):
 * the increase of peak RSS, and the heap bytes in use while the frame is open. */
static void open_memory(const char *path, int ours, long *rss_kib, long *heap_bytes) {
  int fd[2];
  if (pipe(fd)) exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    long out[2] = {0, 0};
    for (int pass = 0; pass < 2; pass++) {
      struct rusage r0, r1;
      getrusage(RUSAGE_SELF, &r0);
      struct mallinfo2 m0 = mallinfo2();
      long n = 0;
      b2f_frame *f = NULL;
      blosc2_schunk *s = NULL;
      if (ours) {
        if (b2f_open(path, B2F_READ, &f)) die("b2f_open");
        b2f_info i;
        memset(&i, 0, sizeof i);
        i.struct_size = sizeof i;
        b2f_get_info(f, &i);
        n = (long)i.nchunks;
      } else {
        s = blosc2_schunk_open(path);
        if (!s) die("blosc2_schunk_open");
        n = (long)s->nchunks;
      }
      struct mallinfo2 m1 = mallinfo2();
      getrusage(RUSAGE_SELF, &r1);
      out[0] = r1.ru_maxrss - r0.ru_maxrss;
      out[1] = (long)(m1.uordblks + m1.hblkhd) - (long)(m0.uordblks + m0.hblkhd);
      if (n <= 0) _exit(1);
      if (ours) b2f_close(f);
      else blosc2_schunk_free(s);
    }
    if (write(fd[1], out, sizeof out) != sizeof out) _exit(1);
    _exit(0);
  }
  long in[2] = {-1, -1};
  close(fd[1]);
  if (read(fd[0], in, sizeof in) != sizeof in) in[0] = in[1] = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  *rss_kib = in[0];
  *heap_bytes = in[1];
}

static void row(const char *what, double ours, double theirs) {
  printf("| %s | %.3f ms | %.3f ms | %.2f |\n", what, ours * 1e3, theirs * 1e3, theirs / ours);
}

int main(int argc, char **argv) {
  int reps = 3;
  const char *dir = "/tmp";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
  }
  blosc2_init();
  char p_ours[4096], p_theirs[4096], p_big[4096], p_huge[4096];
  int pid = (int)getpid();
  snprintf(p_ours, sizeof p_ours, "%s/b2f-bench-ours-%d.b2frame", dir, pid);
  snprintf(p_theirs, sizeof p_theirs, "%s/b2f-bench-theirs-%d.b2frame", dir, pid);
  snprintf(p_big, sizeof p_big, "%s/b2f-bench-100k-%d.b2frame", dir, pid);
  snprintf(p_huge, sizeof p_huge, "%s/b2f-bench-1g-%d.b2frame", dir, pid);
  int32_t *buf = malloc(CHUNK);
  void *out = malloc(CHUNK);
  printf("# Frames: b2frame %s vs c-blosc2 %s, blosclz clevel 5 shuffle, 1 thread, median of %d\n\n",
         b2f_version(), BLOSC2_VERSION_STRING, reps);
  printf("| operation | b2frame | c-blosc2 | speed ratio (c-blosc2 time / b2frame time) |\n");
  printf("|---|---:|---:|---:|\n");

  double *ta = malloc(reps * sizeof(double)), *tb = malloc(reps * sizeof(double));
  for (int r = 0; r < reps; r++) {
    ta[r] = t_append_ours(p_ours, buf);
    tb[r] = t_append_theirs(p_theirs, buf);
  }
  row("append 10,000 chunks of 64 KiB to a file", median(ta, reps), median(tb, reps));

  /* Reopen: each library opens the other's file too, so both read the same bytes. */
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int k = 0; k < 20; k++) {
      b2f_frame *f;
      if (b2f_open(p_theirs, B2F_READ, &f)) die("b2f_open");
      b2f_close(f);
    }
    double t1 = now();
    for (int k = 0; k < 20; k++) blosc2_schunk_free(blosc2_schunk_open(p_theirs));
    ta[r] = (t1 - t0) / 20;
    tb[r] = (now() - t1) / 20;
  }
  row("reopen that frame (10,000 chunks)", median(ta, reps), median(tb, reps));

  /* Random reads, same order for both; content checked. */
  int64_t *order = malloc(NCHUNKS * sizeof(int64_t));
  for (int i = 0; i < NCHUNKS; i++) order[i] = i;
  uint64_t s = 7;
  for (int i = NCHUNKS - 1; i > 0; i--) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    int j = (int)(s % (uint64_t)(i + 1));
    int64_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  b2f_frame *f;
  if (b2f_open(p_theirs, B2F_READ, &f)) die("b2f_open");
  blosc2_schunk *sc = blosc2_schunk_open(p_theirs);
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int i = 0; i < NCHUNKS; i++) {
      size_t n;
      if (b2f_get_chunk(f, order[i], out, CHUNK, &n) || n != CHUNK) die("b2f_get_chunk");
    }
    double t1 = now();
    for (int i = 0; i < NCHUNKS; i++)
      if (blosc2_schunk_decompress_chunk(sc, order[i], buf, CHUNK) != CHUNK) die("decompress_chunk");
    ta[r] = t1 - t0;
    tb[r] = now() - t1;
    if (memcmp(out, buf, CHUNK) != 0) {
      fprintf(stderr, "the libraries disagree\n");
      return 1;
    }
  }
  row("read 10,000 chunks in random order", median(ta, reps), median(tb, reps));
  b2f_close(f);
  blosc2_schunk_free(sc);

  /* Short slices at random places of a frame of large chunks (c-blosc2 decodes only the
   * blocks that hold a slice: blosc2_getitem), the two libraries taking turns at going first. */
  {
    enum { BIG = 4 << 20, NBIG = 32, NSLICES = 2000, LEN = 100 };
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    blosc2_storage st = {.contiguous = true, .urlpath = p_big, .cparams = &cp};
    blosc2_remove_urlpath(p_big);
    blosc2_schunk *m = blosc2_schunk_new(&st);
    int32_t *big = malloc(BIG);
    for (int k = 0; k < NBIG; k++) {
      fill(big, BIG / 4, k);
      if (blosc2_schunk_append_buffer(m, big, BIG) < 0) die("append 4 MiB");
    }
    blosc2_schunk_free(m);
    if (b2f_open(p_big, B2F_READ, &f)) die("b2f_open slices");
    sc = blosc2_schunk_open(p_big);
    int32_t a[LEN], b[LEN];
    int64_t items = (int64_t)NBIG * (BIG / 4);
    for (int r = 0; r < reps; r++) {
      double t_ours = 0, t_theirs = 0;
      for (int i = 0; i < NSLICES; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int64_t at = (int64_t)(s % (uint64_t)(items - LEN));
        for (int turn = 0; turn < 2; turn++) {
          double t0 = now();
          if ((turn + i) % 2 == 0) {
            if (b2f_get_slice(f, at, at + LEN, a, sizeof a)) die("b2f_get_slice");
            t_ours += now() - t0;
          } else {
            if (blosc2_schunk_get_slice_buffer(sc, at, at + LEN, b) < 0) die("get_slice_buffer");
            t_theirs += now() - t0;
          }
        }
        if (memcmp(a, b, sizeof a) != 0) {
          fprintf(stderr, "slices: the libraries disagree\n");
          return 1;
        }
      }
      ta[r] = t_ours;
      tb[r] = t_theirs;
    }
    row("read 2,000 slices of 100 items (4 MiB chunks)", median(ta, reps), median(tb, reps));
    b2f_close(f);
    blosc2_schunk_free(sc);
    free(big);
  }

  /* 100,000 chunks, written once by c-blosc2 (an in-memory super-chunk saved to a file). */
  {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    blosc2_storage st = {.cparams = &cp};
    blosc2_schunk *m = blosc2_schunk_new(&st);
    for (int k = 0; k < 100000; k++) {
      fill(buf, 1024, k);
      blosc2_schunk_append_buffer(m, buf, 4096);
    }
    blosc2_remove_urlpath(p_big);
    if (blosc2_schunk_to_file(m, p_big) < 0) die("blosc2_schunk_to_file");
    blosc2_schunk_free(m);
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    if (b2f_open(p_big, B2F_READ, &f)) die("b2f_open 100k");
    b2f_close(f);
    double t1 = now();
    blosc2_schunk_free(blosc2_schunk_open(p_big));
    ta[r] = t1 - t0;
    tb[r] = now() - t1;
  }
  row("open a frame of 100,000 chunks", median(ta, reps), median(tb, reps));
  /* Both read the index when first needed: the first chunk read pays for it. */
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    if (b2f_open(p_big, B2F_READ, &f)) die("b2f_open 100k");
    size_t n;
    if (b2f_get_chunk(f, 99999, out, CHUNK, &n)) die("b2f_get_chunk 100k");
    b2f_close(f);
    double t1 = now();
    blosc2_schunk *b = blosc2_schunk_open(p_big);
    if (blosc2_schunk_decompress_chunk(b, 99999, buf, CHUNK) < 0) die("decompress_chunk 100k");
    blosc2_schunk_free(b);
    ta[r] = t1 - t0;
    tb[r] = now() - t1;
  }
  row("open it and read its last chunk", median(ta, reps), median(tb, reps));

  /* A 1 GiB frame (incompressible data, 16,384 chunks of 64 KiB), written by c-blosc2. */
  {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.clevel = 0;
    blosc2_storage st = {.cparams = &cp};
    blosc2_schunk *m = blosc2_schunk_new(&st);
    uint64_t x = 99;
    for (int k = 0; k < 16384; k++) {
      for (int i = 0; i < CHUNK / 4; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (int32_t)x;
      }
      blosc2_schunk_append_buffer(m, buf, CHUNK);
    }
    blosc2_remove_urlpath(p_huge);
    if (blosc2_schunk_to_file(m, p_huge) < 0) die("blosc2_schunk_to_file");
    blosc2_schunk_free(m);
  }
  long ro, ho, rt, ht;
  open_memory(p_huge, 1, &ro, &ho);
  open_memory(p_huge, 0, &rt, &ht);
  printf("| peak RSS increase opening a 1 GiB frame (16,384 chunks) | %ld KiB | %ld KiB | (memory) |\n", ro, rt);
  printf("| heap in use with that frame open | %ld B | %ld B | (memory) |\n", ho, ht);

  remove(p_ours);
  blosc2_remove_urlpath(p_theirs);
  blosc2_remove_urlpath(p_big);
  blosc2_remove_urlpath(p_huge);
  free(order);
  free(ta);
  free(tb);
  free(buf);
  free(out);
  blosc2_destroy();
  return 0;
}
