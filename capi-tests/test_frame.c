/* Frames from C: open/create/close, info, every chunk operation, to_buffer/save, and their
 * error paths (NULL pointers, bad modes, out-of-range indices, small buffers, read-only). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

#include "harness.h"

enum { CHUNK = 8000 };

static void chunk_data(int32_t *v, int k) {
  for (int i = 0; i < CHUNK / 4; i++) v[i] = i / 3 + k * 1000;
}

static const char *tmp_path(const char *name) {
  static char path[4096];
  const char *dir = getenv("B2F_TMPDIR");
  snprintf(path, sizeof path, "%s/%s-%d", dir ? dir : "/tmp", name, (int)getpid());
  return path;
}

/* Storage for frames of CHUNK-byte chunks of int32 (c-blosc2's other defaults). */
static void storage(b2f_storage *s, bool contiguous) {
  memset(s, 0, sizeof *s);
  s->struct_size = sizeof *s;
  s->contiguous = contiguous;
  s->chunksize = CHUNK;
  b2f_cparams_default(&s->cparams);
  s->cparams.typesize = 4;
}

static b2f_frame *create(const char *path, bool contiguous) {
  b2f_storage s;
  storage(&s, contiguous);
  s.cparams.codec = B2F_CODEC_ZSTD;
  b2f_frame *f = NULL;
  CHECK_STATUS(b2f_create(path, &s, &f), B2F_OK);
  CHECK(f != NULL);
  return f;
}

static void check_chunk(b2f_frame *f, int64_t i, int k) {
  int32_t want[CHUNK / 4], got[CHUNK / 4];
  chunk_data(want, k);
  size_t n = 0;
  CHECK_STATUS(b2f_get_chunk(f, i, NULL, 0, &n), B2F_OK);
  CHECK(n == CHUNK);
  CHECK_STATUS(b2f_get_chunk(f, i, got, sizeof got, &n), B2F_OK);
  CHECK(memcmp(want, got, CHUNK) == 0);
}

static void test_operations(const char *path, bool contiguous) {
  b2f_frame *f = create(path, contiguous);
  int32_t buf[CHUNK / 4];
  int64_t n = 0;
  /* No empty first chunk: c-blosc2 could not open the frame. */
  CHECK_STATUS(b2f_append(f, NULL, 0, &n), B2F_ERR_INVALID_ARGUMENT);
  for (int k = 0; k < 4; k++) {
    chunk_data(buf, k);
    CHECK_STATUS(b2f_append(f, buf, CHUNK, &n), B2F_OK);
    CHECK(n == k + 1);
  }
  chunk_data(buf, 40);
  CHECK_STATUS(b2f_insert(f, 1, buf, CHUNK), B2F_OK); /* 0 40 1 2 3 */
  chunk_data(buf, 41);
  CHECK_STATUS(b2f_update(f, 0, buf, CHUNK), B2F_OK); /* 41 40 1 2 3 */
  CHECK_STATUS(b2f_delete(f, 2), B2F_OK);             /* 41 40 2 3 */
  int64_t order[] = {3, 2, 1, 0};
  CHECK_STATUS(b2f_reorder(f, order, 4), B2F_OK); /* 3 2 40 41 */
  CHECK_STATUS(b2f_fill_special(f, CHUNK / 4, B2F_SPECIAL_ZERO), B2F_OK);
  /* Copy a raw chunk into the frame. */
  size_t clen = 0;
  CHECK_STATUS(b2f_get_chunk_raw(f, 0, NULL, 0, &clen), B2F_OK);
  unsigned char *raw = malloc(clen);
  CHECK_STATUS(b2f_get_chunk_raw(f, 0, raw, clen, &clen), B2F_OK);
  CHECK_STATUS(b2f_append_chunk(f, raw, clen, &n), B2F_OK); /* 3 2 40 41 0s 3 */
  CHECK(n == 6);
  free(raw);

  b2f_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(b2f_get_info(f, &info), B2F_OK);
  CHECK(info.nchunks == 6 && info.nbytes == 6 * CHUNK && info.typesize == 4 && info.chunksize == CHUNK);
  CHECK(info.codec == B2F_CODEC_ZSTD && info.contiguous == contiguous && info.struct_size == sizeof info);
  /* An older, smaller info struct receives only what it has. */
  b2f_info small;
  memset(&small, 0xAB, sizeof small);
  small.struct_size = offsetof(b2f_info, cbytes);
  CHECK_STATUS(b2f_get_info(f, &small), B2F_OK);
  CHECK(small.nchunks == 6 && small.nbytes == 6 * CHUNK);
  CHECK(small.cbytes == (int64_t)0xABABABABABABABABLL);

  int ks[] = {3, 2, 40, 41};
  for (int i = 0; i < 4; i++) check_chunk(f, i, ks[i]);
  int32_t zeros[CHUNK / 4], got[CHUNK / 4];
  memset(zeros, 0, sizeof zeros);
  size_t m = 0;
  CHECK_STATUS(b2f_get_chunk(f, 4, got, sizeof got, &m), B2F_OK);
  CHECK(m == CHUNK && memcmp(zeros, got, CHUNK) == 0);
  check_chunk(f, 5, 3);

  /* Items across chunk boundaries. */
  int32_t items[4000];
  CHECK_STATUS(b2f_get_slice(f, 1000, 5000, items, sizeof items), B2F_OK);
  int32_t c0[CHUNK / 4], c1[CHUNK / 4], c2[CHUNK / 4];
  chunk_data(c0, 3), chunk_data(c1, 2), chunk_data(c2, 40);
  CHECK(memcmp(items, c0 + 1000, 1000 * 4) == 0);
  CHECK(memcmp(items + 1000, c1, 2000 * 4) == 0);
  CHECK(memcmp(items + 3000, c2, 1000 * 4) == 0);

  /* Errors. */
  CHECK_STATUS(b2f_get_chunk(f, 6, got, sizeof got, &m), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_chunk(f, -1, got, sizeof got, &m), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_chunk(f, 0, got, 10, &m), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK(m == CHUNK);
  CHECK_STATUS(b2f_get_chunk(NULL, 0, got, sizeof got, &m), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_chunk(f, 0, NULL, 10, &m), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_slice(f, 5, 4, items, sizeof items), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_slice(f, 0, 100000, items, sizeof items), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_slice(f, 0, 10, items, 8), B2F_ERR_BUFFER_TOO_SMALL);
  /* Larger than the chunksize of a frame without chunks (with chunks, it would turn to
     variable-length chunks, as in c-blosc2). */
  int32_t big[CHUNK / 4 + 1];
  memset(big, 0, sizeof big);
  b2f_frame *empty = create(NULL, true);
  CHECK_STATUS(b2f_append(empty, big, sizeof big, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_append(empty, buf, CHUNK, &n), B2F_OK);
  CHECK_STATUS(b2f_append(empty, big, sizeof big, &n), B2F_OK);
  b2f_info grown;
  grown.struct_size = sizeof grown;
  CHECK_STATUS(b2f_get_info(empty, &grown), B2F_OK);
  CHECK(n == 2 && grown.chunksize == 0 && grown.nbytes == CHUNK + (int64_t)sizeof big);
  b2f_close(empty);
  CHECK_STATUS(b2f_append(f, NULL, 4, &n), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_append_chunk(f, "garbage", 7, &n), B2F_ERR_CORRUPT);
  CHECK_STATUS(b2f_insert(f, 99, buf, CHUNK), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_update(f, 99, buf, CHUNK), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_delete(f, 99), B2F_ERR_INVALID_ARGUMENT);
  int64_t bad_order[] = {0, 0, 1, 2, 3, 4};
  CHECK_STATUS(b2f_reorder(f, bad_order, 6), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_reorder(f, order, 4), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_reorder(f, NULL, 6), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_fill_special(f, 10, 3), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_get_info(f, NULL), B2F_ERR_INVALID_ARGUMENT);

  /* A copy as a buffer, reopened from it. */
  size_t len = 0;
  CHECK_STATUS(b2f_to_buffer(f, NULL, 0, &len), B2F_OK);
  CHECK(len > 0);
  unsigned char *image = malloc(len);
  CHECK_STATUS(b2f_to_buffer(f, image, 10, &len), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(b2f_to_buffer(f, image, len, &len), B2F_OK);
  b2f_frame *g = NULL;
  CHECK_STATUS(b2f_open_buffer(image, len, B2F_READ, &g), B2F_OK);
  free(image); /* the library made its own copy */
  check_chunk(g, 2, 40);
  CHECK_STATUS(b2f_append(g, buf, CHUNK, &n), B2F_ERR_READ_ONLY);
  b2f_close(g);

  /* Saved both ways. */
  char saved[4200];
  snprintf(saved, sizeof saved, "%s.saved", path);
  CHECK_STATUS(b2f_save(f, saved, !contiguous), B2F_OK);
  CHECK_STATUS(b2f_open(saved, B2F_READ, &g), B2F_OK);
  check_chunk(g, 3, 41);
  b2f_close(g);
  /* Again, over that copy and as the other kind: the new copy replaces it. */
  CHECK_STATUS(b2f_save(f, saved, contiguous), B2F_OK);
  CHECK_STATUS(b2f_open(saved, B2F_READ, &g), B2F_OK);
  check_chunk(g, 3, 41);
  b2f_close(g);
  /* Not over the frame's own storage, which it still reads through its old offsets. */
  CHECK_STATUS(b2f_save(f, path, contiguous), B2F_ERR_INVALID_ARGUMENT);
  CHECK(strstr(b2f_last_error(), "where this frame is stored") != NULL);
  check_chunk(f, 3, 41);
  b2f_close(f);

  /* Reopen for reading and for writing. */
  CHECK_STATUS(b2f_open(path, B2F_READ, &f), B2F_OK);
  check_chunk(f, 0, 3);
  CHECK_STATUS(b2f_delete(f, 0), B2F_ERR_READ_ONLY);
  b2f_close(f);
  CHECK_STATUS(b2f_open(path, B2F_READ | B2F_WRITE, &f), B2F_OK);
  CHECK_STATUS(b2f_delete(f, 0), B2F_OK);
  check_chunk(f, 0, 2);
  /* One writer at a time: a second writable handle is refused, a reader is not. */
  g = NULL;
  CHECK_STATUS(b2f_open(path, B2F_READ | B2F_WRITE, &g), B2F_ERR_IO);
  CHECK(g == NULL);
  CHECK(strstr(b2f_last_error(), "open for writing elsewhere") != NULL);
  CHECK_STATUS(b2f_open(path, B2F_READ, &g), B2F_OK);
  check_chunk(g, 0, 2);
  b2f_close(g);
  b2f_close(f);
  CHECK_STATUS(b2f_open(path, B2F_READ | B2F_WRITE, &g), B2F_OK);
  b2f_close(g);
}

static void test_open_errors(void) {
  b2f_frame *f = (b2f_frame *)0x1;
  CHECK_STATUS(b2f_open("/nonexistent/dir/x.b2frame", B2F_READ, &f), B2F_ERR_IO);
  CHECK(strstr(b2f_last_error(), "/nonexistent/dir/x.b2frame") != NULL);
  CHECK(f == (b2f_frame *)0x1); /* outputs are written only on success */
  CHECK_STATUS(b2f_open(NULL, B2F_READ, &f), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_open("x", 0, &f), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_open("x", 8, &f), B2F_ERR_INVALID_ARGUMENT);
  const char *p = tmp_path("not-a-frame");
  FILE *fp = fopen(p, "wb");
  for (int i = 0; i < 200; i++) fputc(i, fp);
  fclose(fp);
  CHECK_STATUS(b2f_open(p, B2F_READ, &f), B2F_ERR_FORMAT);
  CHECK(strstr(b2f_last_error(), p) != NULL);
  remove(p);
  CHECK_STATUS(b2f_open_buffer(NULL, 10, B2F_READ, &f), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_open_buffer("abc", 3, B2F_READ, &f), B2F_ERR_FORMAT);
  CHECK_STATUS(b2f_open_buffer("abc", 3, B2F_READ, NULL), B2F_ERR_INVALID_ARGUMENT);
  b2f_storage s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.chunksize = -1;
  s.contiguous = true;
  CHECK_STATUS(b2f_create(NULL, &s, &f), B2F_ERR_INVALID_ARGUMENT);
  CHECK(strstr(b2f_last_error(), "chunksize -1 is negative") != NULL);
  CHECK_STATUS(b2f_create(NULL, NULL, &f), B2F_ERR_INVALID_ARGUMENT);
  s.chunksize = 0;
  s.contiguous = false; /* in memory means contiguous */
  CHECK_STATUS(b2f_create(NULL, &s, &f), B2F_ERR_INVALID_ARGUMENT);
  b2f_close(NULL); /* no-op */
}

static void test_offset(void) {
  /* A frame embedded at an offset in a larger file. */
  b2f_frame *f = create(NULL, true);
  int32_t buf[CHUNK / 4];
  chunk_data(buf, 7);
  CHECK_STATUS(b2f_append(f, buf, CHUNK, NULL), B2F_OK);
  size_t len = 0;
  CHECK_STATUS(b2f_to_buffer(f, NULL, 0, &len), B2F_OK);
  unsigned char *image = malloc(len);
  CHECK_STATUS(b2f_to_buffer(f, image, len, &len), B2F_OK);
  b2f_close(f);
  const char *p = tmp_path("embedded");
  FILE *fp = fopen(p, "wb");
  fwrite("some prefix bytes", 1, 17, fp);
  fwrite(image, 1, len, fp);
  fclose(fp);
  free(image);
  CHECK_STATUS(b2f_open_offset(p, 17, B2F_READ, &f), B2F_OK);
  check_chunk(f, 0, 7);
  b2f_close(f);
  CHECK_STATUS(b2f_open_offset(p, 16, B2F_READ, &f), B2F_ERR_FORMAT);
  CHECK_STATUS(b2f_open_offset(p, 1 << 30, B2F_READ, &f), B2F_ERR_INVALID_ARGUMENT);
  remove(p);
}

/* Readers on several threads share one handle while the main thread appends. */
struct reader {
  b2f_frame *f;
  volatile int *stop;
  int bad, reads;
  atomic_int tries; /* reads begun: the appends wait for every reader's first */
};

static void *reader_main(void *arg) {
  struct reader *r = arg;
  int32_t got[CHUNK / 4], want[CHUNK / 4];
  unsigned seed = 12345;
  while (!*r->stop) {
    atomic_fetch_add(&r->tries, 1);
    b2f_info info;
    info.struct_size = sizeof info;
    if (b2f_get_info(r->f, &info) != B2F_OK) r->bad++;
    int64_t i = (int64_t)(seed = seed * 1103515245u + 12345u) % info.nchunks;
    size_t n = 0;
    if (b2f_get_chunk(r->f, i, got, sizeof got, &n) != B2F_OK || n != CHUNK) {
      r->bad++;
      continue;
    }
    chunk_data(want, (int)i);
    if (memcmp(want, got, CHUNK) != 0) r->bad++;
    r->reads++;
  }
  return NULL;
}

static void test_threads(void) {
  b2f_frame *f = create(tmp_path("threads.b2frame"), true);
  int32_t buf[CHUNK / 4];
  for (int k = 0; k < 4; k++) {
    chunk_data(buf, k);
    CHECK_STATUS(b2f_append(f, buf, CHUNK, NULL), B2F_OK);
  }
  volatile int stop = 0;
  struct reader r[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    r[i] = (struct reader){f, &stop, 0, 0, 0};
    CHECK(pthread_create(&t[i], NULL, reader_main, &r[i]) == 0);
  }
  /* Every reader at work before the appends, however the threads are scheduled. */
  for (int i = 0; i < 4; i++)
    while (atomic_load(&r[i].tries) == 0) sched_yield();
  for (int k = 4; k < 200; k++) {
    chunk_data(buf, k);
    CHECK(b2f_append(f, buf, CHUNK, NULL) == B2F_OK);
  }
  stop = 1;
  int reads = 0;
  for (int i = 0; i < 4; i++) {
    CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(r[i].bad == 0);
    reads += r[i].reads;
  }
  CHECK(reads > 0);
  b2f_close(f);
  remove(tmp_path("threads.b2frame"));
}

/* B2F_SYNC and b2f_storage.sync: the same frames, each change synced before its call
 * returns (tests/frame_io_faults.rs and frame_crash.rs check what syncing does). */
static void test_sync(bool contiguous) {
  const char *path = tmp_path(contiguous ? "sync.b2frame" : "sync-sparse.b2frame");
  b2f_storage s;
  storage(&s, contiguous);
  s.sync = true;
  b2f_frame *f = NULL;
  CHECK_STATUS(b2f_create(path, &s, &f), B2F_OK);
  int32_t buf[CHUNK / 4];
  int64_t n = 0;
  chunk_data(buf, 1);
  CHECK_STATUS(b2f_append(f, buf, CHUNK, &n), B2F_OK);
  b2f_close(f);
  CHECK_STATUS(b2f_open(path, B2F_SYNC, &f), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_open(path, B2F_READ | B2F_WRITE | B2F_SYNC, &f), B2F_OK);
  chunk_data(buf, 2);
  CHECK_STATUS(b2f_append(f, buf, CHUNK, &n), B2F_OK);
  CHECK(n == 2);
  CHECK_STATUS(b2f_vlmeta_set(f, "note", "\xa2hi", 3), B2F_OK);
  CHECK_STATUS(b2f_delete(f, 0), B2F_OK);
  b2f_close(f);
  CHECK_STATUS(b2f_open(path, B2F_READ | B2F_SYNC, &f), B2F_OK);
  check_chunk(f, 0, 2);
  b2f_close(f);
  /* A struct from before the field (its sync is not read). */
  s.struct_size = (uint32_t)offsetof(b2f_storage, sync);
  CHECK_STATUS(b2f_create(path, &s, &f), B2F_OK);
  CHECK_STATUS(b2f_append(f, buf, CHUNK, &n), B2F_OK);
  check_chunk(f, 0, 2);
  b2f_close(f);
}

int main(void) {
  const char *c = tmp_path("ops.b2frame");
  test_operations(c, true);
  remove(c);
  test_operations(tmp_path("ops-sparse.b2frame"), false);
  test_operations(NULL == c ? c : tmp_path("ops2.b2frame"), true);
  test_open_errors();
  test_offset();
  test_threads();
  test_sync(true);
  test_sync(false);
  DONE();
}
