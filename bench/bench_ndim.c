/* N-dim slicing benchmark: b2frame's b2f_nd_get_slice against c-blosc2's
 * b2nd_get_slice_cbuffer on the same ~1 GiB 3-D float64 array file, in one process, one
 * thread each, the two libraries alternating in every repetition; and writes
 * (b2f_nd_set_slice against b2nd_set_slice_cbuffer, run_writes). Reads a single element, a
 * row (last axis), a column (first axis) and a 10% hyper-slab, for two chunk layouts:
 * python-blosc2's default for this shape and a cubic one. Also times decoding one whole chunk
 * with b2frame, to show that a single element costs about one block, not one chunk.
 *
 *   bench/run.sh --ndim [--reps N] [--side N]
 */
#include <b2nd.h>
#include <blosc2.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "b2frame.h"
#include "bench_util.h"

static void die(const char *what, int rc) {
  fprintf(stderr, "%s failed (%d): %s\n", what, rc, b2f_last_error());
  exit(1);
}

static uint64_t rng_state = 12345;
static int64_t rnd(int64_t n) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % (uint64_t)n);
}

/* Writes the array chunk by chunk with b2frame (smooth data that compresses like a field). */
static void create(const char *path, int64_t side, const int32_t *chunks, const int32_t *blocks) {
  int64_t shape[3] = {side, side, side};
  b2f_storage s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.contiguous = true;
  b2f_cparams_default(&s.cparams);
  s.cparams.codec = 5; /* zstd, clevel 5, shuffle: python-blosc2's defaults */
  s.cparams.clevel = 5;
  s.cparams.nthreads = 2;
  b2f_frame *f = NULL;
  int rc = b2f_nd_create(path, &s, 3, shape, chunks, blocks, "<f8", &f);
  if (rc) die("b2f_nd_create", rc);
  size_t max = (size_t)chunks[0] * chunks[1] * chunks[2];
  double *buf = malloc(max * sizeof(double));
  for (int64_t i0 = 0; i0 < side; i0 += chunks[0])
    for (int64_t j0 = 0; j0 < side; j0 += chunks[1])
      for (int64_t k0 = 0; k0 < side; k0 += chunks[2]) {
        int64_t start[3] = {i0, j0, k0};
        int64_t stop[3] = {i0 + chunks[0], j0 + chunks[1], k0 + chunks[2]};
        for (int d = 0; d < 3; d++)
          if (stop[d] > side) stop[d] = side;
        size_t n = 0;
        for (int64_t i = start[0]; i < stop[0]; i++)
          for (int64_t j = start[1]; j < stop[1]; j++)
            for (int64_t k = start[2]; k < stop[2]; k++)
              buf[n++] = sin(i * 0.01) * cos(j * 0.02) + k * 1e-3 + (double)((i * 7 + j * 3 + k) % 5) * 1e-6;
        rc = b2f_nd_set_slice(f, start, stop, buf, n * sizeof(double));
        if (rc) die("b2f_nd_set_slice", rc);
      }
  free(buf);
  b2f_close(f);
}

typedef struct {
  const char *name;
  int64_t start[3], stop[3];
  int random_origin; /* move the query to a random place each repetition */
} query;

static void run_layout(const char *label, const char *path, int64_t side, const int32_t *chunks,
                       const int32_t *blocks, int reps) {
  double t0 = now();
  create(path, side, chunks, blocks);
  double tc = now() - t0;

  b2f_frame *f = NULL;
  int rc = b2f_open(path, B2F_READ, &f);
  if (rc) die("b2f_open", rc);
  b2nd_array_t *arr = NULL;
  rc = b2nd_open(path, &arr);
  if (rc < 0) die("b2nd_open", rc);

  b2f_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  b2f_get_info(f, &info);
  printf("\n## %s: shape %lldx%lldx%lld float64 (%.0f MiB), chunks %dx%dx%d, blocks %dx%dx%d, "
         "%.1fx compressed, written in %.1f s\n\n",
         label, (long long)side, (long long)side, (long long)side, info.nbytes / 1048576.0,
         chunks[0], chunks[1], chunks[2], blocks[0], blocks[1], blocks[2],
         (double)info.nbytes / info.cbytes, tc);

  int64_t h = side / 2, t = (int64_t)(side * 0.464 + 0.5); /* 0.464^3 = 10% */
  query qs[] = {
      {"single element", {0, 0, 0}, {1, 1, 1}, 1},
      {"row [i, j, :]", {0, 0, 0}, {1, 1, side}, 1},
      {"column [:, j, k]", {0, 0, 0}, {side, 1, 1}, 1},
      {"10% slab", {h / 4, h / 4, h / 4}, {h / 4 + t, h / 4 + t, h / 4 + t}, 0},
  };
  size_t cap = (size_t)t * t * t * sizeof(double);
  if (cap < (size_t)side * sizeof(double)) cap = (size_t)side * sizeof(double);
  double *a = malloc(cap), *b = malloc(cap);
  printf("| query | b2frame | c-blosc2 | speed ratio (c-blosc2 time / b2frame time) |\n");
  printf("|---|---:|---:|---:|\n");
  for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
    int n = qs[q].random_origin ? reps * 20 : reps;
    double *ta = malloc(n * sizeof(double)), *tb = malloc(n * sizeof(double));
    for (int r = 0; r < n; r++) {
      int64_t start[3], stop[3], shape[3];
      for (int d = 0; d < 3; d++) {
        int64_t len = qs[q].stop[d] - qs[q].start[d];
        start[d] = qs[q].random_origin ? rnd(side - len + 1) : qs[q].start[d];
        stop[d] = start[d] + len;
        shape[d] = len;
      }
      size_t bytes = (size_t)shape[0] * shape[1] * shape[2] * sizeof(double);
      /* The library that reads a place second finds its bytes in the CPU caches, so the
       * two take turns at going first. */
      for (int turn = 0; turn < 2; turn++) {
        double s0 = now();
        if ((turn + r) % 2 == 0) {
          rc = b2f_nd_get_slice(f, start, stop, a, bytes);
          ta[r] = now() - s0;
          if (rc) die("b2f_nd_get_slice", rc);
        } else {
          rc = b2nd_get_slice_cbuffer(arr, start, stop, b, shape, (int64_t)bytes);
          tb[r] = now() - s0;
          if (rc < 0) die("b2nd_get_slice_cbuffer", rc);
        }
      }
      if (memcmp(a, b, bytes) != 0) {
        fprintf(stderr, "%s: the two libraries disagree\n", qs[q].name);
        exit(1);
      }
    }
    double ma = median(ta, n), mb = median(tb, n);
    printf("| %s | %.3f ms | %.3f ms | %.2f |\n", qs[q].name, ma * 1e3, mb * 1e3, mb / ma);
    free(ta);
    free(tb);
  }

  /* One whole chunk and one block's worth, for scale. */
  double *tch = malloc(reps * sizeof(double));
  size_t chunk_bytes = 0;
  b2f_get_chunk(f, 0, NULL, 0, &chunk_bytes);
  void *cbuf = malloc(chunk_bytes);
  for (int r = 0; r < reps; r++) {
    double s0 = now();
    rc = b2f_get_chunk(f, rnd(info.nchunks), cbuf, chunk_bytes, &chunk_bytes);
    tch[r] = now() - s0;
    if (rc) die("b2f_get_chunk", rc);
  }
  printf("\nb2frame decoding one whole chunk (%.1f MiB): %.3f ms; a block is %.0f KiB\n",
         chunk_bytes / 1048576.0, median(tch, reps) * 1e3,
         (double)blocks[0] * blocks[1] * blocks[2] * 8 / 1024.0);
  free(tch);
  free(cbuf);
  free(a);
  free(b);
  b2nd_free(arr);
  b2f_close(f);
  remove(path);
}

/* Writing: the same 256^3 float64 array (128 MiB) written from memory into a new file by
 * b2f_nd_set_slice and by b2nd_set_slice_cbuffer, in slabs along the first axis that are
 * whole chunk rows (every chunk written once, from nothing) or not (chunks read back,
 * changed and rewritten). zstd clevel 1, shuffle, 1 thread; the two libraries alternate. */
static void run_writes(const char *dir, int reps) {
  enum { SIDE = 256 };
  int64_t shape[3] = {SIDE, SIDE, SIDE};
  int32_t chunks[3] = {64, 64, 64}, blocks[3] = {16, 32, 32};
  size_t n = (size_t)SIDE * SIDE * SIDE;
  double *data = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) data[i] = sin((double)(i / SIDE) * 0.01) + (double)(i % SIDE) * 1e-3;
  char ours[4096], theirs[4096];
  snprintf(ours, sizeof ours, "%s/b2f-bench-write-%d.b2nd", dir, (int)getpid());
  snprintf(theirs, sizeof theirs, "%s/b2f-bench-write-c-%d.b2nd", dir, (int)getpid());
  printf("\n## writes: shape %dx%dx%d float64 (128 MiB), chunks 64x64x64, blocks 16x32x32, "
         "zstd clevel 1 shuffle\n\n", SIDE, SIDE, SIDE);
  printf("| slabs | b2frame | c-blosc2 | speed ratio (c-blosc2 time / b2frame time) |\n");
  printf("|---|---:|---:|---:|\n");
  int64_t slabs[2] = {64, 50};
  for (int q = 0; q < 2; q++) {
    double *ta = malloc(reps * sizeof(double)), *tb = malloc(reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
      double s0 = now();
      b2f_storage s;
      memset(&s, 0, sizeof s);
      s.struct_size = sizeof s;
      s.contiguous = true;
      b2f_cparams_default(&s.cparams);
      s.cparams.codec = 5;
      s.cparams.clevel = 1;
      b2f_frame *f = NULL;
      int rc = b2f_nd_create(ours, &s, 3, shape, chunks, blocks, "<f8", &f);
      if (rc) die("b2f_nd_create", rc);
      for (int64_t i0 = 0; i0 < SIDE; i0 += slabs[q]) {
        int64_t start[3] = {i0, 0, 0}, stop[3] = {i0 + slabs[q] < SIDE ? i0 + slabs[q] : SIDE, SIDE, SIDE};
        rc = b2f_nd_set_slice(f, start, stop, data + i0 * SIDE * SIDE,
                              (size_t)(stop[0] - i0) * SIDE * SIDE * sizeof(double));
        if (rc) die("b2f_nd_set_slice", rc);
      }
      b2f_close(f);
      double s1 = now();
      blosc2_remove_urlpath(theirs);
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.compcode = 5, cp.clevel = 1, cp.typesize = 8, cp.nthreads = 1;
      blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
      blosc2_storage st = {.contiguous = true, .urlpath = theirs, .cparams = &cp, .dparams = &dp};
      b2nd_context_t *ctx = b2nd_create_ctx(&st, 3, shape, chunks, blocks, "<f8", DTYPE_NUMPY_FORMAT, NULL, 0);
      b2nd_array_t *arr = NULL;
      if (b2nd_zeros(ctx, &arr) < 0) die("b2nd_zeros", -1);
      for (int64_t i0 = 0; i0 < SIDE; i0 += slabs[q]) {
        int64_t start[3] = {i0, 0, 0}, stop[3] = {i0 + slabs[q] < SIDE ? i0 + slabs[q] : SIDE, SIDE, SIDE};
        int64_t bshape[3] = {stop[0] - i0, SIDE, SIDE};
        if (b2nd_set_slice_cbuffer(data + i0 * SIDE * SIDE, bshape,
                                   bshape[0] * SIDE * SIDE * (int64_t)sizeof(double), start, stop, arr) < 0)
          die("b2nd_set_slice_cbuffer", -1);
      }
      b2nd_free(arr);
      b2nd_free_ctx(ctx);
      double s2 = now();
      ta[r] = s1 - s0;
      tb[r] = s2 - s1;
    }
    /* Both files hold the same array. */
    b2f_frame *f = NULL;
    b2nd_array_t *arr = NULL;
    if (b2f_open(ours, B2F_READ, &f)) die("b2f_open", -1);
    if (b2nd_open(theirs, &arr) < 0) die("b2nd_open", -1);
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    int64_t zero[3] = {0, 0, 0};
    if (b2f_nd_get_slice(f, zero, shape, a, n * sizeof(double))) die("b2f_nd_get_slice", -1);
    if (b2nd_get_slice_cbuffer(arr, zero, shape, b, shape, (int64_t)(n * sizeof(double))) < 0)
      die("b2nd_get_slice_cbuffer", -1);
    if (memcmp(a, b, n * sizeof(double)) || memcmp(a, data, n * sizeof(double))) {
      fprintf(stderr, "writes: the two files differ\n");
      exit(1);
    }
    free(a);
    free(b);
    b2nd_free(arr);
    b2f_close(f);
    double ma = median(ta, reps), mb = median(tb, reps);
    printf("| %s (%lld x 256 x 256) | %.1f ms | %.1f ms | %.2f |\n",
           q == 0 ? "whole chunk rows" : "not chunk-aligned", (long long)slabs[q], ma * 1e3, mb * 1e3,
           mb / ma);
    free(ta);
    free(tb);
  }
  remove(ours);
  blosc2_remove_urlpath(theirs);
  free(data);
}

int main(int argc, char **argv) {
  int reps = 9;
  int64_t side = 512;
  const char *dir = "/tmp";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--side") && i + 1 < argc) side = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
  }
  blosc2_init();
  printf("# N-dim slicing: b2frame %s vs c-blosc2 %s, 1 thread each, median of %d (x20 for "
         "the small queries at random places)\n",
         b2f_version(), BLOSC2_VERSION_STRING, reps);
  char path[4096];
  snprintf(path, sizeof path, "%s/b2f-bench-ndim-%d.b2nd", dir, (int)getpid());
  /* python-blosc2's choice for (512, 512, 512) float64 */
  int32_t c1[3] = {4, 512, 512}, b1[3] = {1, 32, 512};
  if (side != 512) c1[1] = c1[2] = (int32_t)side, b1[2] = (int32_t)side;
  run_layout("python-blosc2 default layout", path, side, c1, b1, reps);
  int32_t c2[3] = {128, 128, 128}, b2[3] = {16, 32, 32};
  run_layout("cubic chunks", path, side, c2, b2, reps);
  run_writes(dir, reps);
  blosc2_destroy();
  return 0;
}
