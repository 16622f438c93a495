/* Force-included into zstd's zstd_decompress_block.c (cmake/deps-cc.sh).
 *
 * zstd copies a match whose source is less than 16 bytes behind it (after ZSTD_overlapCopy8 has
 * made that distance 8 or more) with ZSTD_wildcopy's `do COPY8(op, ip) while (op < oend)`: each
 * 8-byte load reads what the store before it wrote, so the copy runs at the speed of
 * store-to-load forwarding, one 8-byte step after another. At a distance of exactly 8 (matches
 * at offsets 1, 2, 4 and 8: runs of a byte, and of 2-, 4- and 8-byte items) the match repeats
 * those 8 bytes, which here are loaded once and stored 16 bytes at a time. A copy of up to 8
 * bytes (a match of up to 16) stays zstd's single COPY8: filled here, the 9-byte matches at
 * offset 1 of shuffled incr_i32 decoded 3-4% slower. Every other copy is zstd's own.
 * bench/RESULTS.md (stop 61): unfiltered incr_i32 at 64 KiB 0.98 -> 1.21 of c-blosc2's speed.
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
  if (ovtype == ZSTD_overlap_src_before_dst && length > 8 &&
      op - (const unsigned char *)src == 8) {
    unsigned char *const oend = op + length;
    __m128i const period = _mm_loadl_epi64((const __m128i *)src);
    __m128i const pattern = _mm_unpacklo_epi64(period, period);
    do {
      _mm_storeu_si128((__m128i *)op, pattern);
      op += 16;
    } while (op < oend);
    return;
  }
  ZSTD_wildcopy(dst, src, length, ovtype);
}
#define ZSTD_wildcopy b2f_zstd_wildcopy
#endif
