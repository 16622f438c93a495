/* Force-included into zstd's zstd_decompress_block.c (cmake/deps-cc.sh).
 *
 * zstd copies a match whose source is less than 16 bytes behind it (after ZSTD_overlapCopy8 has
 * made that distance 8 to 15: offsets 1, 2 and 4 become 8, 3 becomes 9, 5-7 become 10, 12 and
 * 14) with ZSTD_wildcopy's `do COPY8(op, ip) while (op < oend)`: each 8-byte load reads what
 * the stores before it wrote, so the copy runs at the speed of store-to-load forwarding, one
 * 8-byte step after another (and beyond 8 each load spans two stores, which do not forward).
 * Here the match's period is loaded once as a 16-byte pattern and stored:
 * - at a distance of 8 (runs of a byte, and of 2-, 4- and 8-byte items), 16 bytes at a time;
 * - at 9-15, one store every `distance` bytes, each continuing the period.
 * A copy of up to 8 bytes (a match of up to 16) stays zstd's single COPY8: filled here, the
 * 9-byte matches at offset 1 of shuffled incr_i32 decoded 3-4% slower. Every other copy is
 * zstd's own. bench/RESULTS.md: unfiltered incr_i32 at 64 KiB 0.98 -> 1.21 of c-blosc2's
 * speed (distance 8, stop 61), bitshuffled incr_i32 1.60 -> 2.13 (9-15, stop 62).
 *
 * The 16-byte stores write up to 15 bytes past the match, within the WILDCOPY_OVERLENGTH (32)
 * bytes that ZSTD_wildcopy may write past its length at every call site. */
#if defined(__SSE2__)
#include <emmintrin.h>

/* zstd's own definitions first (its include guard keeps the .c file's include from repeating
 * them), so that the name below changes only the calls in zstd_decompress_block.c. */
#include "zstd_internal.h"

static inline __attribute__((always_inline)) void b2f_zstd_wildcopy(void *dst, const void *src,
                                                                    ptrdiff_t length,
                                                                    ZSTD_overlap_e const ovtype) {
  unsigned char *op = (unsigned char *)dst;
  unsigned char *const oend = op + length;
  ptrdiff_t const distance = op - (const unsigned char *)src;
  if (ovtype == ZSTD_overlap_src_before_dst && length > 8) {
    /* 8 first: testing 8-15 as one range before telling 8 apart cost unfiltered incr_i32 3%. */
    if (distance == 8) {
      __m128i const period = _mm_loadl_epi64((const __m128i *)src);
      __m128i const pattern = _mm_unpacklo_epi64(period, period);
      do {
        _mm_storeu_si128((__m128i *)op, pattern);
        op += 16;
      } while (op < oend);
      return;
    }
    if (distance > 8 && distance < 16) {
      /* The period's first 8 bytes, then its other distance - 8 bytes followed by its start
       * again. The bytes loaded past the period are this match's own, not yet written; the
       * mask drops them. */
      U64 head, tail;
      ZSTD_memcpy(&head, src, 8);
      ZSTD_memcpy(&tail, (const unsigned char *)src + 8, 8);
      unsigned const rest_bits = (unsigned)(distance - 8) * 8;
      tail = (tail & (((U64)1 << rest_bits) - 1)) | (head << rest_bits);
      __m128i const pattern = _mm_set_epi64x((long long)tail, (long long)head);
      do {
        _mm_storeu_si128((__m128i *)op, pattern);
        op += distance;
      } while (op < oend);
      return;
    }
  }
  ZSTD_wildcopy(dst, src, length, ovtype);
}
#define ZSTD_wildcopy b2f_zstd_wildcopy
#endif
