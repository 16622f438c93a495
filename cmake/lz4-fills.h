/* Force-included into lz4.c's decoders (cmake/deps-cc.sh).
 *
 * LZ4_memcpy_using_offset fills a match at offset 1 by building an 8-byte pattern
 * (`MEM_INIT(v, *srcPtr, 8)`) and storing it with `while (dstPtr < dstEnd)`, a loop clang
 * vectorizes: each match, most of them 4-18 bytes, pays the vector loop's trip-count set-up
 * before the one or two stores it takes. Here that one memset (told by its arguments'
 * spelling) also fills the whole match with 16-byte stores and moves `dstEnd` back, so that
 * lz4's loop does not run; lz4's first 8-byte store then rewrites the same bytes. The fills
 * at offsets 2 and 4, and every other copy, stay lz4's own (the same fill at offset 4 cost
 * unfiltered incr_i32, matches of 39 bytes at offset 4, 11%: bench/RESULTS.md, stop 60), but
 * for long matches that end a block (below).
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

/* lz4's safe loop (sequences that end within 64 bytes of the output's end: most blocks' last
 * match) copies a match at offsets 1-7 8 bytes at a time, each load reading the store just
 * before it: a block that ends in a long run (zero padding, the zeros of a sparse array)
 * decodes that run at a fraction of memset's speed. Once lz4 has written the match's first 8
 * bytes (at `LZ4_memcpy(op+4, match, 4)`), a match of 64 bytes or more that ends in bounds is
 * filled here with 16-byte stores of its period, up to 8-23 bytes before its end; `op` and
 * `match` move on together, so that lz4's own copy does the rest from filled bytes. */
static unsigned char *op __attribute__((unused));
static unsigned char *cpy __attribute__((unused));
static unsigned char *oend __attribute__((unused));
static const unsigned char *match __attribute__((unused));
static size_t offset __attribute__((unused));

static inline __attribute__((always_inline)) void b2f_lz4_fill_tail(unsigned char **opp,
                                                                    const unsigned char **matchp,
                                                                    const unsigned char *end,
                                                                    const unsigned char *out_end,
                                                                    size_t period) {
  typedef unsigned char b2f_v16 __attribute__((vector_size(16)));
  unsigned char *const start = *opp;
  if (period == 0 || period >= 8 || end - start < 64 || out_end - end < 5) return;
  /* 16 bytes of the period that ends at `start`; stores `stride` apart (a multiple of the
   * period) continue it. */
  unsigned char bytes[16];
  for (size_t i = 0; i < 16; i++)
    bytes[i] = start[(ptrdiff_t)(i % period) - (ptrdiff_t)period];
  b2f_v16 pattern;
  memcpy(&pattern, bytes, 16);
  size_t const stride = 16 - 16 % period;
  unsigned char *d = start;
#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)
  while (d + 24 <= end) {
    memcpy(d, &pattern, 16);
    d += stride;
  }
  /* lz4 goes on with `op += 8` from `d - 8`, `match` as far behind as before. It then writes
   * 8 bytes at `d` and (more than 12 bytes from the output's end) 8 more after them whatever
   * the length left: `d` stays 8 bytes or more before the match's end. */
  *matchp += (d - 8) - start;
  *opp = d - 8;
}

/* lz4 defines LZ4_memcpy only where a build has not. */
#define LZ4_memcpy(dst, src, size)                                                   \
  ((void)__builtin_memcpy((dst), (src), (size)),                                     \
   __builtin_strcmp(#dst "," #src, "op+4,match") == 0                                \
       ? b2f_lz4_fill_tail((unsigned char **)&(op), (const unsigned char **)&(match), \
                           (const unsigned char *)(cpy), (const unsigned char *)(oend), \
                           (size_t)(offset))                                         \
       : (void)0)
