/* The chunk benchmarks' datasets, shared by bench_chunk.c and decode_ab.c. Needs b2frame.h
 * (the rainfall grid is a chunk, decoded by b2frame). */
#ifndef B2F_BENCH_DATA_H
#define B2F_BENCH_DATA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  unsigned char *data;
  size_t len;
  int typesize;
} dataset;

static void *page_alloc(size_t n) {
  void *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  if (!p) exit(7);
  return p;
}

static dataset make_generated(const char *name, int typesize, size_t len) {
  dataset d = {name, malloc(len), len, typesize};
  uint64_t s = 42;
  if (!strcmp(name, "smooth_f64")) {
    double *v = (double *)d.data;
    for (size_t i = 0; i < len / 8; i++) v[i] = sin(i * 1e-4) * 1000.0 + i * 1e-3;
  } else if (!strcmp(name, "incr_i32")) {
    int32_t *v = (int32_t *)d.data;
    for (size_t i = 0; i < len / 4; i++) v[i] = (int32_t)(i / 10);
  } else if (!strcmp(name, "random")) {
    for (size_t i = 0; i < len; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      d.data[i] = (unsigned char)s;
    }
  } else if (!strcmp(name, "zeros")) {
    memset(d.data, 0, len);
  } else if (!strcmp(name, "sparse_f64")) {
    /* smooth_f64's values in runs of 16-64 KiB between runs of zeros of 64 KiB-1 MiB: whole
     * blocks of zeros and blocks partly zero, as in sparse arrays and the padding of an n-dim
     * array's edge chunks. */
    double *v = (double *)d.data;
    size_t n = len / 8, i = 0;
    for (int values = 1; i < n; values = !values) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      size_t end = i + (values ? 2048 + s % 6144 : 8192 + s % 122880);
      for (; i < n && i < end; i++) v[i] = values ? sin(i * 1e-4) * 1000.0 + i * 1e-3 : 0.0;
    }
  }
  return d;
}

/* The real float32 grid of ../shared/bench-data, tiled to the buffer size. */
static int make_rainfall(const char *path, size_t len, dataset *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  size_t nbytes = 0;
  if (b2f_decompress(buf, n, NULL, 0, &nbytes) != B2F_OK) return 0;
  unsigned char *grid = malloc(nbytes);
  if (b2f_decompress(buf, n, grid, nbytes, &nbytes) != B2F_OK) return 0;
  d->name = "rainfall_f32";
  d->typesize = 4;
  d->len = len;
  d->data = malloc(len);
  for (size_t i = 0; i < len; i += nbytes) memcpy(d->data + i, grid, len - i < nbytes ? len - i : nbytes);
  free(grid);
  return 1;
}

/* Every dataset, in the benchmark table's order, with its item size. */
static const struct {
  const char *name;
  int typesize;
} DATASETS[] = {{"smooth_f64", 8}, {"incr_i32", 4}, {"random", 1},
                {"zeros", 8},      {"sparse_f64", 8}, {"rainfall_f32", 4}};
#define NDATASETS (sizeof DATASETS / sizeof *DATASETS)

/* Dataset `name` of `len` bytes into *d (rainfall_f32 from the file `rain`). Returns 0 for an
 * unknown name or an unreadable file. */
static int make(const char *name, size_t len, const char *rain, dataset *d) {
  for (size_t i = 0; i < NDATASETS; i++) {
    if (strcmp(name, DATASETS[i].name)) continue;
    if (!strcmp(name, "rainfall_f32")) return make_rainfall(rain, len, d);
    *d = make_generated(DATASETS[i].name, DATASETS[i].typesize, len);
    return 1;
  }
  return 0;
}

#endif
