/* A program that uses an installed b2frame: creates a frame in a temporary file, appends
 * chunks, reopens it and checks every item. Exits non-zero on any mismatch. */
#include <b2frame.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 5000

static int fail(const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, b2f_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "consumer.b2frame";
  b2f_storage s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.contiguous = true;
  s.chunksize = N * sizeof(int32_t);
  b2f_cparams_default(&s.cparams);
  s.cparams.typesize = sizeof(int32_t);
  b2f_frame *f = NULL;
  if (b2f_create(path, &s, &f) != B2F_OK) return fail("b2f_create");
  int32_t data[N];
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < N; i++) data[i] = k * N + i;
    if (b2f_append(f, data, sizeof data, NULL) != B2F_OK) return fail("b2f_append");
  }
  b2f_close(f);
  if (b2f_open(path, B2F_READ, &f) != B2F_OK) return fail("b2f_open");
  for (int k = 0; k < 4; k++) {
    size_t n = 0;
    if (b2f_get_chunk(f, k, data, sizeof data, &n) != B2F_OK || n != sizeof data) return fail("b2f_get_chunk");
    for (int i = 0; i < N; i++)
      if (data[i] != k * N + i) {
        fprintf(stderr, "consumer: chunk %d item %d is %d\n", k, i, (int)data[i]);
        return 1;
      }
  }
  b2f_close(f);
  remove(path);
  printf("consumer: b2frame %s OK\n", b2f_version());
  return 0;
}
