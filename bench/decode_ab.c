/* Decoding speed of several builds of b2frame against c-blosc2, in one process.
 *   decode_ab [--kib N] [--codec C] [--filter F] [--data NAME] [--clevel N] [--rounds R]
 *             [--rainfall PATH] LIB...
 * Each LIB is a libb2frame.so, loaded with dlopen (its own copy of every symbol), so that the
 * builds of two revisions, in several code layouts each (bench/decode_ab.sh makes them as
 * bench/compare.sh does), take turns on one chunk in one process: every round runs a batch of
 * calls of each build and of c-blosc2, in an order rotated round by round. A change of the
 * machine's speed then falls on all of them alike, where compare.sh's processes, one per build,
 * meet it one at a time. Prints, per library, the median time of a decode and the median
 * over rounds of c-blosc2's time over its own (bench_chunk's decompression ratio).
 *
 * The chunk is c-blosc2's (b2frame writes the same bytes for these parameters), decoded on
 * one thread. */
#include <blosc2.h>
#include <dlfcn.h>

#include "b2frame.h"
#include "bench_data.h"
#include "bench_util.h"

typedef b2f_status (*decompress_fn)(const void *, size_t, void *, size_t, size_t *);

enum { MAX_LIBS = 16, MAX_ROUNDS = 201 };

int main(int argc, char **argv) {
  size_t len = 4 << 10;
  int codec = 0, filter = 1, clevel = 5, rounds = 41, nlibs = 0;
  const char *data = "incr_i32", *rain = "../shared/bench-data/rainfall-grid-150x150.bin";
  const char *paths[MAX_LIBS];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--kib") && i + 1 < argc) len = (size_t)atoi(argv[++i]) << 10;
    else if (!strcmp(argv[i], "--codec") && i + 1 < argc) codec = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!strcmp(argv[i], "--clevel") && i + 1 < argc) clevel = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rainfall") && i + 1 < argc) rain = argv[++i];
    else if (nlibs < MAX_LIBS) paths[nlibs++] = argv[i];
    else {
      fprintf(stderr, "at most %d libraries\n", MAX_LIBS);
      return 2;
    }
  }
  blosc2_init();
  dataset d;
  if (nlibs == 0 || rounds < 1 || rounds > MAX_ROUNDS || len == 0 || !make(data, len, rain, &d)) {
    fprintf(stderr,
            "usage: decode_ab [--kib N] [--codec C] [--filter F] [--rounds 1-%d] [--rainfall PATH] [--data smooth_f64|incr_i32|"
            "random|zeros|sparse_f64|rainfall_f32] LIB...\n",
            MAX_ROUNDS);
    return 2;
  }
  decompress_fn decode[MAX_LIBS];
  for (int l = 0; l < nlibs; l++) {
    void *h = dlopen(paths[l], RTLD_NOW | RTLD_LOCAL);
    if (!h || !(decode[l] = (decompress_fn)dlsym(h, "b2f_decompress"))) {
      fprintf(stderr, "%s: %s\n", paths[l], dlerror());
      return 1;
    }
  }

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = (uint8_t)codec;
  cp.clevel = (uint8_t)clevel;
  cp.typesize = d.typesize;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)filter;
  cp.nthreads = 1;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  unsigned char *chunk = page_alloc(len + BLOSC2_MAX_OVERHEAD), *out = page_alloc(len);
  int cbytes = blosc2_compress_ctx(cctx, d.data, (int32_t)len, chunk, (int32_t)(len + BLOSC2_MAX_OVERHEAD));
  if (cbytes <= 0) return 1;

  /* A batch of about 2 ms at 500 MB/s. */
  int batch = (int)(1e6 / (double)(len + 1024)) + 1;
  static double t[MAX_LIBS + 1][MAX_ROUNDS];
  for (int r = -1; r < rounds; r++) { /* round -1 warms up */
    for (int k = 0; k <= nlibs; k++) {
      int l = (k + (r < 0 ? 0 : r)) % (nlibs + 1);
      double t0 = now();
      for (int i = 0; i < batch; i++) {
        size_t nbytes = 0;
        int ok = l == nlibs ? blosc2_decompress_ctx(dctx, chunk, cbytes, out, (int32_t)len) == (int)len
                            : decode[l](chunk, (size_t)cbytes, out, len, &nbytes) == B2F_OK && nbytes == len;
        if (!ok || (i == 0 && memcmp(out, d.data, len))) {
          fprintf(stderr, "%s did not decode the chunk\n", l == nlibs ? "c-blosc2" : paths[l]);
          return 3;
        }
      }
      if (r >= 0) t[l][r] = (now() - t0) / batch;
    }
  }
  printf("%s, codec %d, filter %d, %zu KiB, %d bytes compressed; %d rounds of %d decodes\n", data, codec, filter,
         len >> 10, cbytes, rounds, batch);
  for (int l = 0; l <= nlibs; l++) {
    double ratio[MAX_ROUNDS], ns[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
      ratio[r] = t[nlibs][r] / t[l][r];
      ns[r] = t[l][r] * 1e9;
    }
    printf("%.1f ns %.3f %s\n", median(ns, rounds), median(ratio, rounds), l == nlibs ? "c-blosc2" : paths[l]);
  }
  return 0;
}
