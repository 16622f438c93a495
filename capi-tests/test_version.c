/* b2f_version, b2f_status_message and the version macros agree. */
#include "harness.h"

int main(void) {
  const char *v = b2f_version();
  CHECK(v != NULL);
  CHECK(strcmp(v, B2FRAME_VERSION_STRING) == 0);
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", B2FRAME_VERSION_MAJOR, B2FRAME_VERSION_MINOR,
           B2FRAME_VERSION_PATCH);
  CHECK(strcmp(v, expected) == 0);
  CHECK(strcmp(b2f_status_message(B2F_OK), "success") == 0);
  CHECK(strstr(b2f_status_message(B2F_ERR_CORRUPT), "corrupt") != NULL);
  CHECK(strstr(b2f_status_message(B2F_ERR_BUFFER_TOO_SMALL), "small") != NULL);
  CHECK(strcmp(b2f_status_message(12345), "unknown status code") == 0);
  CHECK(strcmp(b2f_status_message(-12345), "unknown status code") == 0);
  /* Codes are negative and distinct. */
  int codes[] = {B2F_ERR_INVALID_ARGUMENT, B2F_ERR_IO, B2F_ERR_FORMAT, B2F_ERR_CORRUPT,
                 B2F_ERR_UNSUPPORTED, B2F_ERR_NOT_FOUND, B2F_ERR_BUFFER_TOO_SMALL,
                 B2F_ERR_READ_ONLY, B2F_ERR_NO_MEMORY, B2F_ERR_INTERNAL};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    CHECK(codes[i] < 0);
    for (size_t j = 0; j < i; j++) CHECK(codes[i] != codes[j]);
  }
  CHECK(strcmp(b2f_last_error(), "") == 0);
  DONE();
}
