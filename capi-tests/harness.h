/* A tiny test harness for the C API tests: CHECK aborts the test with file:line and the
 * library's last error; each test program prints "N passed, 0 failed" at the end. */
#ifndef B2F_HARNESS_H
#define B2F_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b2frame.h"

static int h_checks = 0;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    h_checks++;                                                                          \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, \
              #cond, b2f_last_error());                                                  \
      printf("0 passed, 1 failed\n");                                                    \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

/* The call returns `status` and, for errors, leaves a non-empty message. */
#define CHECK_STATUS(call, status)                                                       \
  do {                                                                                   \
    b2f_status h_rc = (call);                                                            \
    if (h_rc != (status)) {                                                              \
      fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__,   \
              #call, h_rc, (status), b2f_last_error());                                  \
      printf("0 passed, 1 failed\n");                                                    \
      exit(1);                                                                           \
    }                                                                                    \
    h_checks++;                                                                          \
    if ((status) != B2F_OK) CHECK(strlen(b2f_last_error()) > 0);                         \
    else CHECK(strlen(b2f_last_error()) == 0);                                           \
  } while (0)

#define DONE()                                  \
  do {                                          \
    printf("%d passed, 0 failed\n", h_checks);  \
    return 0;                                   \
  } while (0)

/* Reads a whole file into a malloc'ed buffer (NULL if missing). */
static inline unsigned char *h_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* $B2F_VECTORS/<rel> in a static buffer. */
static inline const char *h_vector(const char *rel) {
  static char path[4096];
  const char *dir = getenv("B2F_VECTORS");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : "../shared/vectors", rel);
  return path;
}

#endif
