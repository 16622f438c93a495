/* N-dim arrays from C: create, info, dtype, slab writes and reads checked against a model
 * array, a vector array written by python-blosc2, and every error class. */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define D0 13
#define D1 17
#define D2 6

static double model[D0][D1][D2];

/* Reads [start, stop) from the model in C order. */
static size_t model_slab(const int64_t *start, const int64_t *stop, double *out) {
  size_t n = 0;
  for (int64_t i = start[0]; i < stop[0]; i++)
    for (int64_t j = start[1]; j < stop[1]; j++)
      for (int64_t k = start[2]; k < stop[2]; k++) out[n++] = model[i][j][k];
  return n;
}

static void check_slab(b2f_frame *a, int64_t i0, int64_t j0, int64_t k0, int64_t i1, int64_t j1,
                       int64_t k1) {
  int64_t start[3] = {i0, j0, k0}, stop[3] = {i1, j1, k1};
  static double want[D0 * D1 * D2], got[D0 * D1 * D2];
  size_t n = model_slab(start, stop, want);
  memset(got, 0xAB, sizeof got);
  CHECK_STATUS(b2f_nd_get_slice(a, start, stop, got, n * sizeof(double)), B2F_OK);
  CHECK(memcmp(got, want, n * sizeof(double)) == 0);
}

int main(void) {
  int64_t shape[3] = {D0, D1, D2};
  int32_t chunks[3] = {5, 6, 4}, blocks[3] = {2, 4, 3};
  b2f_frame *a = NULL;
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 3, shape, chunks, blocks, "<f8", &a), B2F_OK);

  b2f_nd_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(b2f_nd_info_get(a, &info), B2F_OK);
  CHECK(info.ndim == 3 && info.shape[0] == D0 && info.shape[2] == D2 && info.shape[3] == 0);
  CHECK(info.chunkshape[1] == 6 && info.blockshape[2] == 3 && info.itemsize == 8);
  CHECK(info.dtype_format == 0 && strcmp(info.dtype, "<f8") == 0);
  /* An older caller's smaller struct gets only the fields it has. */
  b2f_nd_info small;
  memset(&small, 0x5A, sizeof small);
  small.struct_size = offsetof(b2f_nd_info, chunkshape);
  CHECK_STATUS(b2f_nd_info_get(a, &small), B2F_OK);
  CHECK(small.ndim == 3 && small.shape[1] == D1 && small.itemsize == 0x5A5A5A5A);

  char dtype[8];
  size_t len = 0;
  CHECK_STATUS(b2f_nd_dtype(a, NULL, 0, &len), B2F_OK);
  CHECK(len == 3);
  CHECK_STATUS(b2f_nd_dtype(a, dtype, 2, &len), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(b2f_nd_dtype(a, dtype, sizeof dtype, &len), B2F_OK);
  CHECK(len == 3 && memcmp(dtype, "<f8", 3) == 0);

  /* Zero-filled and stored as special chunks: nothing compressed yet. */
  b2f_info fi;
  memset(&fi, 0, sizeof fi);
  fi.struct_size = sizeof fi;
  CHECK_STATUS(b2f_get_info(a, &fi), B2F_OK);
  CHECK(fi.nchunks == 3 * 3 * 2);
  size_t empty_len = 0;
  CHECK_STATUS(b2f_to_buffer(a, NULL, 0, &empty_len), B2F_OK);
  CHECK(empty_len < 1024);
  check_slab(a, 0, 0, 0, D0, D1, D2);

  /* Write two overlapping slabs, then read slabs of every kind. */
  static double src[D0 * D1 * D2];
  int64_t s1[3] = {1, 2, 0}, e1[3] = {12, 15, 6}, s2[3] = {4, 0, 1}, e2[3] = {9, 17, 4};
  size_t n = 0;
  for (int64_t i = s1[0]; i < e1[0]; i++)
    for (int64_t j = s1[1]; j < e1[1]; j++)
      for (int64_t k = s1[2]; k < e1[2]; k++) src[n++] = model[i][j][k] = (double)(i * 1000 + j * 10 + k);
  CHECK_STATUS(b2f_nd_set_slice(a, s1, e1, src, n * sizeof(double)), B2F_OK);
  n = 0;
  for (int64_t i = s2[0]; i < e2[0]; i++)
    for (int64_t j = s2[1]; j < e2[1]; j++)
      for (int64_t k = s2[2]; k < e2[2]; k++) src[n++] = model[i][j][k] = -(double)(i + j + k);
  CHECK_STATUS(b2f_nd_set_slice(a, s2, e2, src, n * sizeof(double)), B2F_OK);
  check_slab(a, 0, 0, 0, D0, D1, D2);
  check_slab(a, 6, 7, 2, 7, 8, 3);   /* one element */
  check_slab(a, 5, 0, 0, 6, D1, D2); /* a row plane */
  check_slab(a, 0, 9, 4, D0, 10, 5); /* a column */
  check_slab(a, 3, 3, 3, 3, 9, 5);   /* empty */
  check_slab(a, 2, 5, 1, 11, 16, 5);

  /* Round trip through a buffer: the array survives serialization. */
  void *buf = NULL;
  size_t buf_len = 0;
  CHECK_STATUS(b2f_to_buffer(a, NULL, 0, &buf_len), B2F_OK);
  buf = malloc(buf_len);
  CHECK_STATUS(b2f_to_buffer(a, buf, buf_len, &buf_len), B2F_OK);
  b2f_frame *b = NULL;
  CHECK_STATUS(b2f_open_buffer(buf, buf_len, B2F_READ, &b), B2F_OK);
  check_slab(b, 0, 0, 0, D0, D1, D2);

  /* Error classes. */
  int64_t start[3] = {0, 0, 0}, stop[3] = {1, 1, 1};
  double one = 1.0;
  int64_t neg[3] = {-1, 0, 0}, past[3] = {D0 + 1, 1, 1}, rev_a[3] = {5, 0, 0}, rev_b[3] = {4, 1, 1};
  CHECK_STATUS(b2f_nd_get_slice(a, neg, stop, &one, sizeof one), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_get_slice(a, start, past, src, sizeof src), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_get_slice(a, rev_a, rev_b, src, sizeof src), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_get_slice(a, start, stop, &one, 4), B2F_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(b2f_nd_get_slice(a, NULL, stop, &one, sizeof one), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_get_slice(a, start, stop, NULL, sizeof one), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_get_slice(NULL, start, stop, &one, sizeof one), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_set_slice(a, start, stop, &one, 4), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_set_slice(b, start, stop, &one, sizeof one), B2F_ERR_READ_ONLY);
  CHECK_STATUS(b2f_nd_info_get(a, NULL), B2F_ERR_INVALID_ARGUMENT);

  b2f_frame *bad = NULL;
  int64_t big[2] = {INT64_MAX / 2, 4}, negshape[1] = {-3};
  int32_t c1[2] = {1, 1}, c0[1] = {0}, b2[1] = {2}, c2[1] = {1};
  int64_t one_dim[1] = {10};
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 17, shape, chunks, blocks, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, -1, shape, chunks, blocks, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, negshape, c2, c2, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c0, c0, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c2, b2, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 2, big, c1, c1, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  int32_t huge[2] = {1 << 20, 1 << 20};
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 2, big, huge, c1, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c2, c2, "<x9", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c2, c2, "[('a', '<i4'", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, NULL, c2, c2, "<f8", &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c2, c2, NULL, &bad), B2F_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 1, one_dim, c2, c2, "<f8", NULL), B2F_ERR_INVALID_ARGUMENT);
  CHECK(bad == NULL);

  /* A plain frame is not an array. */
  b2f_storage st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.contiguous = true;
  b2f_cparams_default(&st.cparams);
  b2f_frame *plain = NULL;
  CHECK_STATUS(b2f_create(NULL, &st, &plain), B2F_OK);
  CHECK_STATUS(b2f_nd_info_get(plain, &info), B2F_ERR_NOT_FOUND);
  CHECK_STATUS(b2f_nd_get_slice(plain, start, stop, &one, sizeof one), B2F_ERR_NOT_FOUND);
  b2f_close(plain);

  /* A rank-0 array holds one item. */
  b2f_frame *scalar = NULL;
  CHECK_STATUS(b2f_nd_create(NULL, NULL, 0, NULL, NULL, NULL, "<i8", &scalar), B2F_OK);
  int64_t v = 42, w = 0;
  CHECK_STATUS(b2f_nd_set_slice(scalar, NULL, NULL, &v, sizeof v), B2F_OK);
  CHECK_STATUS(b2f_nd_get_slice(scalar, NULL, NULL, &w, sizeof w), B2F_OK);
  CHECK(w == 42);
  b2f_close(scalar);

  /* A vector array written by python-blosc2: one element of a float32 rank-3 ramp. */
  b2f_frame *v3 = NULL;
  CHECK_STATUS(b2f_open(h_vector("b2nd/asarray_r3_float32_zlib.b2nd"), B2F_READ, &v3), B2F_OK);
  CHECK_STATUS(b2f_nd_info_get(v3, &info), B2F_OK);
  CHECK(info.ndim == 3 && info.itemsize == 4 && strcmp(info.dtype, "<f4") == 0);
  b2f_close(v3);

  b2f_close(b);
  free(buf);
  b2f_close(a);
  DONE();
}
