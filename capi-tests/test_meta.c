/* Metalayers and vlmetalayers from C, with their error paths. */
#include "harness.h"

int main(void) {
  b2f_storage s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.contiguous = true;
  s.chunksize = 4000;
  b2f_cparams_default(&s.cparams);
  s.cparams.typesize = 4;
  b2f_frame *f = NULL;
  CHECK_STATUS(b2f_create(NULL, &s, &f), B2F_OK);

  CHECK_STATUS(b2f_meta_add(f, "shape", "\x92\x02\x03", 3), B2F_OK);
  CHECK_STATUS(b2f_meta_add(f, "empty", NULL, 0), B2F_OK);
  CHECK_STATUS(b2f_meta_add(f, "shape", "x", 1), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_meta_add(f, "this-name-is-much-longer-than-31-bytes", "x", 1), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_meta_add(f, NULL, "x", 1), B2F_ERR_INVALID_ARGUMENT);
  size_t count = 0, len = 0;
  CHECK_STATUS(b2f_meta_count(f, &count), B2F_OK);
  CHECK(count == 2);
  char name[64];
  CHECK_STATUS(b2f_meta_name(f, 0, NULL, 0, &len), B2F_OK);
  CHECK(len == 6);
  CHECK_STATUS(b2f_meta_name(f, 0, name, 3, &len), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(b2f_meta_name(f, 0, name, sizeof name, &len), B2F_OK);
  CHECK(strcmp(name, "shape") == 0);
  CHECK_STATUS(b2f_meta_name(f, 2, name, sizeof name, &len), B2F_ERR_INVALID_ARGUMENT);
  unsigned char buf[64];
  CHECK_STATUS(b2f_meta_get(f, "shape", buf, sizeof buf, &len), B2F_OK);
  CHECK(len == 3 && memcmp(buf, "\x92\x02\x03", 3) == 0);
  CHECK_STATUS(b2f_meta_get(f, "nope", buf, sizeof buf, &len), B2F_ERR_NOT_FOUND);
  CHECK_STATUS(b2f_meta_update(f, "shape", "\x91\x07", 2), B2F_OK);
  CHECK_STATUS(b2f_meta_get(f, "shape", buf, sizeof buf, &len), B2F_OK);
  CHECK(len == 3 && memcmp(buf, "\x91\x07\x03", 3) == 0);
  CHECK_STATUS(b2f_meta_update(f, "shape", "1234", 4), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_meta_update(f, "nope", "1", 1), B2F_ERR_NOT_FOUND);

  int32_t data[1000];
  for (int i = 0; i < 1000; i++) data[i] = i;
  CHECK_STATUS(b2f_append(f, data, sizeof data, NULL), B2F_OK);
  CHECK_STATUS(b2f_meta_add(f, "late", "x", 1), B2F_ERR_INVALID_ARGUMENT);

  CHECK_STATUS(b2f_vlmeta_set(f, "author", "me", 2), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_set(f, "big", data, sizeof data), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_set(f, "author", "someone else", 12), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_count(f, &count), B2F_OK);
  CHECK(count == 2);
  CHECK_STATUS(b2f_vlmeta_get(f, "author", NULL, 0, &len), B2F_OK);
  CHECK(len == 12);
  CHECK_STATUS(b2f_vlmeta_get(f, "author", buf, 4, &len), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK(len == 12);
  CHECK_STATUS(b2f_vlmeta_get(f, "author", buf, sizeof buf, &len), B2F_OK);
  CHECK(memcmp(buf, "someone else", 12) == 0);
  int32_t back[1000];
  CHECK_STATUS(b2f_vlmeta_get(f, "big", back, sizeof back, &len), B2F_OK);
  CHECK(len == sizeof data && memcmp(back, data, sizeof data) == 0);
  CHECK_STATUS(b2f_vlmeta_name(f, 1, name, sizeof name, &len), B2F_OK);
  CHECK(strcmp(name, "big") == 0);
  CHECK_STATUS(b2f_vlmeta_delete(f, "author"), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_delete(f, "author"), B2F_ERR_NOT_FOUND);
  CHECK_STATUS(b2f_vlmeta_get(f, "author", buf, sizeof buf, &len), B2F_ERR_NOT_FOUND);
  CHECK_STATUS(b2f_vlmeta_count(f, NULL), B2F_ERR_INVALID_ARGUMENT);
  /* Names are msgpack fixstrs: 0 to 31 bytes, the empty one included (as in c-blosc2). */
  CHECK_STATUS(b2f_vlmeta_set(f, "0123456789abcdef0123456789abcdef", "x", 1),
               B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_vlmeta_set(f, "", "x", 1), B2F_OK);
  /* Names are bytes: one that is not UTF-8 is stored and listed as it is. */
  CHECK_STATUS(b2f_vlmeta_set(f, "caf\xe9", "y", 1), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_count(f, &count), B2F_OK);
  CHECK_STATUS(b2f_vlmeta_name(f, count - 1, name, sizeof name, &len), B2F_OK);
  CHECK(len == 5 && memcmp(name, "caf\xe9", 5) == 0);
  CHECK_STATUS(b2f_vlmeta_get(f, "", buf, sizeof buf, &len), B2F_OK);
  CHECK(len == 1 && buf[0] == 'x');
  b2f_close(f);
  DONE();
}
