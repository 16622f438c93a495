/* Force-included into lz4.c's decoders (cmake/deps-cc.sh).
 *
 * LZ4_memcpy_using_offset fills a match at offset 1 by building an 8-byte pattern
 * (`MEM_INIT(v, *srcPtr, 8)`) and storing it with `while (dstPtr < dstEnd)`, a loop clang
 * vectorizes: each match, most of them 4-18 bytes, pays the vector loop's trip-count set-up
 * before the one or two stores it takes. Here that one memset (told by its arguments'
 * spelling) also fills the whole match with 16-byte stores and moves `dstEnd` back, so that
 * lz4's loop does not run; lz4's first 8-byte store then rewrites the same bytes. The fills
 * at offsets 2 and 4, and every other copy, stay lz4's own: the same fill at offset 4 cost
 * unfiltered incr_i32 (matches of 39 bytes at offset 4) 11% (bench/RESULTS.md, stop 60).
 *
 * The fill writes up to 30 bytes past the match, no further than lz4's LZ4_wildCopy32 at the
 * same call site (matches at offsets of 16 or more): the fast loop only takes matches that end
 * more than 64 bytes before the output's end (FASTLOOP_SAFE_DISTANCE). */
#include <stddef.h>
#include <string.h>

/* The names the fill reads. Only LZ4_memcpy_using_offset's own parameters are ever used; these
 * let the macro compile at lz4's other MEM_INIT calls, where its fill is dead code. */
static unsigned char *dstPtr __attribute__((unused));
static unsigned char *dstEnd __attribute__((unused));
static const unsigned char *srcPtr __attribute__((unused));

static inline __attribute__((always_inline)) void b2f_lz4_fill1(unsigned char *dst,
                                                                unsigned char **end,
                                                                unsigned char byte) {
  typedef unsigned char b2f_v16 __attribute__((vector_size(16)));
  b2f_v16 pattern = (b2f_v16){0} + byte;
  unsigned char *const stop = *end;
  *end = dst;
  memcpy(dst, &pattern, 16);
  dst += 16;
#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)
  while (dst < stop) {
    memcpy(dst, &pattern, 16);
    memcpy(dst + 16, &pattern, 16);
    dst += 32;
  }
}

/* lz4's MEM_INIT(p,v,s) is LZ4_memset((p),(v),(s)), which lz4 lets a build define. */
#define LZ4_memset(p, value, size)                                                   \
  ((__builtin_strcmp(#p "," #value, "(v),(*srcPtr)") == 0                            \
        ? b2f_lz4_fill1(dstPtr, &dstEnd, *srcPtr)                                    \
        : (void)0),                                                                  \
   (void)memset((p), (value), (size)))
