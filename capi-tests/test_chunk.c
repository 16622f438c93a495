/* The one-shot chunk codec from C: b2f_cparams_default, b2f_max_compressed_size, b2f_compress,
 * b2f_decompress, b2f_decompress_threads, b2f_getitem, b2f_chunk_sizes — success and error
 * paths. */
#include <pthread.h>
#include <stddef.h>

#include "harness.h"

enum { N = 1 << 20 };

static void fill(int32_t *v, size_t n, int32_t seed) {
  for (size_t i = 0; i < n; i++) v[i] = (int32_t)(i / 3) + seed;
}

static void test_defaults(void) {
  b2f_cparams p;
  memset(&p, 0xAB, sizeof p);
  b2f_cparams_default(&p);
  CHECK(p.struct_size == sizeof(b2f_cparams));
  CHECK(p.codec == B2F_CODEC_BLOSCLZ && p.clevel == 5 && p.typesize == 8);
  CHECK(p.filters[5] == B2F_FILTER_SHUFFLE && p.filters[0] == B2F_FILTER_NONE);
  CHECK(p.nthreads == 1 && p.blocksize == 0 && p.splitmode == B2F_SPLIT_FORWARD_COMPAT);
  CHECK(p.use_dict == 0);
  b2f_cparams_default(NULL); /* no-op */
  CHECK(b2f_max_compressed_size(0) == B2F_MAX_OVERHEAD);
  CHECK(b2f_max_compressed_size(1000) == 1000 + B2F_MAX_OVERHEAD);
  CHECK(b2f_max_compressed_size((size_t)-1) == (size_t)-1);
}

static void test_roundtrip(uint8_t codec, uint8_t filter, int16_t nthreads) {
  static int32_t src[N / 4], out[N / 4];
  static unsigned char chunk[N + B2F_MAX_OVERHEAD];
  fill(src, N / 4, codec + filter);
  b2f_cparams p;
  b2f_cparams_default(&p);
  p.codec = codec;
  p.typesize = 4;
  p.filters[5] = filter;
  p.nthreads = nthreads;
  size_t cbytes = 0, nbytes = 0, blocksize = 0, cb2 = 0;
  CHECK_STATUS(b2f_compress(&p, src, N, chunk, sizeof chunk, &cbytes), B2F_OK);
  CHECK(cbytes > B2F_MAX_OVERHEAD && cbytes < N);
  CHECK_STATUS(b2f_chunk_sizes(chunk, cbytes, &nbytes, &cb2, &blocksize), B2F_OK);
  CHECK(nbytes == N && cb2 == cbytes && blocksize > 0 && blocksize <= N);
  /* Size query, then decode. */
  nbytes = 0;
  CHECK_STATUS(b2f_decompress(chunk, cbytes, NULL, 0, &nbytes), B2F_OK);
  CHECK(nbytes == N);
  memset(out, 0, sizeof out);
  CHECK_STATUS(b2f_decompress(chunk, cbytes, out, sizeof out, &nbytes), B2F_OK);
  CHECK(nbytes == N && memcmp(src, out, N) == 0);
  memset(out, 0, sizeof out);
  CHECK_STATUS(b2f_decompress_threads(chunk, cbytes, out, sizeof out, 2, &nbytes), B2F_OK);
  CHECK(nbytes == N && memcmp(src, out, N) == 0);
  /* Items here and there, across a block boundary, the last ones, none. */
  int64_t starts[] = {0, 7, 12345, N / 4 / 2 - 3, N / 4 - 10};
  for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
    int32_t items[10] = {0};
    CHECK_STATUS(b2f_getitem(chunk, cbytes, starts[k], 10, items, sizeof items, &nbytes), B2F_OK);
    CHECK(nbytes == sizeof items && memcmp(items, src + starts[k], sizeof items) == 0);
  }
  CHECK_STATUS(b2f_getitem(chunk, cbytes, 5, 0, NULL, 0, &nbytes), B2F_OK);
  CHECK(nbytes == 0);
}

static void test_getitem_errors(void) {
  static int32_t src[1000];
  unsigned char chunk[sizeof src + B2F_MAX_OVERHEAD];
  fill(src, 1000, 3);
  b2f_cparams p;
  b2f_cparams_default(&p);
  p.typesize = 4;
  size_t cb = 0, n = 0;
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &cb), B2F_OK);
  int32_t items[8];
  CHECK_STATUS(b2f_getitem(chunk, cb, 995, 6, items, sizeof items, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK(strstr(b2f_last_error(), "1000 items") != NULL);
  CHECK_STATUS(b2f_getitem(chunk, cb, -1, 2, items, sizeof items, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_getitem(chunk, cb, 0, -2, items, sizeof items, &n), B2F_ERR_INVALID_ARGUMENT);
  n = 0;
  CHECK_STATUS(b2f_getitem(chunk, cb, 10, 8, items, 8, &n), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK(n == 32);
  CHECK_STATUS(b2f_getitem(chunk, cb, 10, 2, NULL, 8, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_getitem(chunk, 20, 0, 2, items, sizeof items, &n), B2F_ERR_CORRUPT);
  CHECK_STATUS(b2f_getitem(chunk, cb, 996, 4, items, sizeof items, NULL), B2F_OK);
  CHECK(memcmp(items, src + 996, 16) == 0);
}

static void test_errors(void) {
  static unsigned char src[4096], chunk[8192], out[4096];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 7 / 5);
  b2f_cparams p;
  b2f_cparams_default(&p);
  size_t n = 0;
  /* NULL pointers. */
  CHECK_STATUS(b2f_compress(NULL, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_compress(&p, NULL, 10, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, NULL, 10, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, NULL), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_decompress(NULL, 10, out, sizeof out, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_chunk_sizes(NULL, 32, &n, NULL, NULL), B2F_ERR_INVALID_ARGUMENT);
  /* Zero lengths: an empty source is a valid (empty) chunk; an empty chunk is corrupt. */
  CHECK_STATUS(b2f_compress(&p, NULL, 0, chunk, sizeof chunk, &n), B2F_OK);
  CHECK(n == B2F_MAX_OVERHEAD);
  size_t nb = 99;
  CHECK_STATUS(b2f_decompress(chunk, n, NULL, 0, &nb), B2F_OK);
  CHECK(nb == 0);
  CHECK_STATUS(b2f_decompress(NULL, 0, out, sizeof out, &nb), B2F_ERR_CORRUPT);
  /* Bad parameters, each named. */
  b2f_cparams bad = p;
  bad.clevel = 10;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK(strstr(b2f_last_error(), "clevel") != NULL);
  /* Still there when read again or after a call that cannot fail; a failure replaces it, and
   * a call that succeeds clears it. */
  CHECK(strstr(b2f_last_error(), "clevel") != NULL);
  CHECK(b2f_max_compressed_size(16) > 16 && strcmp(b2f_version(), B2FRAME_VERSION_STRING) == 0);
  CHECK(strstr(b2f_last_error(), "clevel") != NULL);
  CHECK_STATUS(b2f_decompress(chunk, 0, NULL, 0, &nb), B2F_ERR_CORRUPT);
  CHECK(strstr(b2f_last_error(), "chunk") != NULL && strstr(b2f_last_error(), "clevel") == NULL);
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &n), B2F_OK);
  CHECK(strcmp(b2f_last_error(), "") == 0);
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &n), B2F_OK);
  CHECK(strcmp(b2f_last_error(), "") == 0);
  bad = p;
  bad.typesize = 0;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  bad = p;
  bad.typesize = -3;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  bad = p;
  bad.nthreads = 0;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  bad = p;
  bad.splitmode = 9;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  bad = p;
  bad.codec = 32;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_UNSUPPORTED);
  CHECK(strstr(b2f_last_error(), "32") != NULL);
  bad = p;
  bad.filters[0] = 99;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_UNSUPPORTED);
  bad = p;
  bad.use_dict = 1; /* blosclz has no dictionaries */
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  bad = p;
  bad.struct_size = 2;
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_ERR_INVALID_ARGUMENT);
  /* An older, smaller struct: the fields it lacks take their defaults. */
  bad = p;
  bad.struct_size = offsetof(b2f_cparams, typesize);
  bad.typesize = -1; /* beyond struct_size: ignored */
  CHECK_STATUS(b2f_compress(&bad, src, sizeof src, chunk, sizeof chunk, &n), B2F_OK);
  /* Destination too small: the size needed comes back. */
  size_t need = 0;
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, 8, &need), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK(need == b2f_max_compressed_size(sizeof src));
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &n), B2F_OK);
  need = 0;
  CHECK_STATUS(b2f_decompress(chunk, n, out, 100, &need), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK(need == sizeof src);
  CHECK(strstr(b2f_last_error(), "4096") != NULL);
  /* Truncated and inconsistent chunks. */
  CHECK_STATUS(b2f_decompress(chunk, 10, out, sizeof out, &nb), B2F_ERR_CORRUPT);
  CHECK_STATUS(b2f_decompress(chunk, n - 1, out, sizeof out, &nb), B2F_ERR_CORRUPT);
  CHECK_STATUS(b2f_chunk_sizes(chunk, 10, &nb, NULL, NULL), B2F_ERR_CORRUPT);
  CHECK_STATUS(b2f_decompress_threads(chunk, n, out, sizeof out, 0, &nb), B2F_ERR_INVALID_ARGUMENT);
  /* The message is per call: a success clears it. */
  CHECK_STATUS(b2f_chunk_sizes(chunk, n, NULL, NULL, NULL), B2F_OK);
}

static void test_compat_vector(void) {
  size_t len = 0;
  unsigned char *c = h_read_file(h_vector("c-blosc2-compat/compat/blosc-1.14.0-lz4.cdata"), &len);
  CHECK(c != NULL);
  size_t nbytes = 0;
  CHECK_STATUS(b2f_decompress(c, len, NULL, 0, &nbytes), B2F_OK);
  CHECK(nbytes == 4000000);
  int32_t *out = malloc(nbytes);
  CHECK_STATUS(b2f_decompress(c, len, out, nbytes, &nbytes), B2F_OK);
  for (int32_t i = 0; i < 1000000; i++) CHECK(out[i] == i);
  free(out);
  free(c);
}

/* Many threads compress and decompress at once; each checks its own result and message. */
static void *worker(void *arg) {
  int id = (int)(size_t)arg;
  enum { M = 200000 };
  int32_t *src = malloc(M * 4), *out = malloc(M * 4);
  unsigned char *chunk = malloc(M * 4 + B2F_MAX_OVERHEAD);
  b2f_cparams p;
  b2f_cparams_default(&p);
  p.typesize = 4;
  p.codec = (uint8_t)(id % 2 ? B2F_CODEC_ZSTD : B2F_CODEC_LZ4);
  p.nthreads = (int16_t)(1 + id % 2);
  for (int round = 0; round < 20; round++) {
    fill(src, M, id * 100 + round);
    size_t cb = 0, nb = 0;
    if (b2f_compress(&p, src, M * 4, chunk, M * 4 + B2F_MAX_OVERHEAD, &cb) != B2F_OK) return (void *)1;
    if (b2f_decompress(chunk, cb, out, M * 4, &nb) != B2F_OK || nb != M * 4) return (void *)1;
    if (memcmp(src, out, M * 4) != 0) return (void *)1;
    if (b2f_decompress(chunk, 5, out, M * 4, &nb) != B2F_ERR_CORRUPT) return (void *)1;
    if (strstr(b2f_last_error(), "16 bytes") == NULL) return (void *)1;
    /* Cleared by this thread's next call that succeeds, whatever the others hold. */
    if (b2f_decompress(chunk, cb, NULL, 0, &nb) != B2F_OK || strcmp(b2f_last_error(), "") != 0)
      return (void *)1;
  }
  free(src);
  free(out);
  free(chunk);
  return NULL;
}

static void *fail_then_succeed(void *arg) {
  (void)arg;
  b2f_cparams p;
  b2f_cparams_default(&p);
  unsigned char src[64] = {0}, chunk[64 + B2F_MAX_OVERHEAD];
  size_t n = 0;
  if (b2f_decompress(src, 5, NULL, 0, &n) != B2F_ERR_CORRUPT || *b2f_last_error() == 0) return (void *)1;
  if (b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &n) != B2F_OK) return (void *)1;
  return *b2f_last_error() == 0 ? NULL : (void *)1;
}

/* Messages are per thread: another thread's errors and successes neither set nor clear this
 * thread's (a shortcut taken while no thread holds a message must not skip a clear). */
static void test_message_per_thread(void) {
  unsigned char junk[5] = {0}, src[64] = {0}, chunk[64 + B2F_MAX_OVERHEAD];
  size_t n = 0;
  b2f_cparams p;
  b2f_cparams_default(&p);
  CHECK_STATUS(b2f_decompress(junk, sizeof junk, NULL, 0, &n), B2F_ERR_CORRUPT);
  pthread_t t;
  void *r = (void *)1;
  CHECK(pthread_create(&t, NULL, fail_then_succeed, NULL) == 0);
  CHECK(pthread_join(t, &r) == 0);
  CHECK(r == NULL);
  CHECK(strstr(b2f_last_error(), "16 bytes") != NULL);
  CHECK_STATUS(b2f_compress(&p, src, sizeof src, chunk, sizeof chunk, &n), B2F_OK);
  CHECK(strcmp(b2f_last_error(), "") == 0);
  /* Nor does another thread's failure give this thread a message. */
  CHECK(pthread_create(&t, NULL, fail_then_succeed, NULL) == 0);
  CHECK(pthread_join(t, &r) == 0);
  CHECK(r == NULL && strcmp(b2f_last_error(), "") == 0);
}

static void test_threads(void) {
  pthread_t t[8];
  for (size_t i = 0; i < 8; i++) CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
  for (size_t i = 0; i < 8; i++) {
    void *r = (void *)1;
    CHECK(pthread_join(t[i], &r) == 0);
    CHECK(r == NULL);
  }
}

int main(void) {
  test_defaults();
  uint8_t codecs[] = {B2F_CODEC_BLOSCLZ, B2F_CODEC_LZ4, B2F_CODEC_LZ4HC, B2F_CODEC_ZLIB, B2F_CODEC_ZSTD};
  uint8_t filters[] = {B2F_FILTER_NONE, B2F_FILTER_SHUFFLE, B2F_FILTER_BITSHUFFLE};
  for (size_t c = 0; c < 5; c++)
    for (size_t f = 0; f < 3; f++)
      for (int16_t t = 1; t <= 2; t++) test_roundtrip(codecs[c], filters[f], t);
  test_errors();
  test_getitem_errors();
  test_compat_vector();
  test_message_per_thread();
  test_threads();
  DONE();
}
