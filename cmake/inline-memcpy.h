/* Force-included into zlib-ng's chunkset_avx512.c (cmake/deps-cc.sh). Its inflate loop ends a
 * match at a distance under 32 bytes with `memcpy(out, &chunk_load, len)`, len < 32 and not a
 * constant: gcc copies that inline, clang calls libc, which took 17% of inflate's time on
 * unfiltered incr_i32. This copy alone (told by its source, a whole vector) becomes one masked
 * load and store; every other memcpy of the file stays as it was (giving them the same made
 * smooth_f64 decode 2% slower). */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

static inline __attribute__((always_inline)) void *b2f_vector_tail_copy(void *dst,
                                                                        const __m256i *src,
                                                                        size_t n) {
  if (n >= sizeof(__m256i)) return memcpy(dst, src, n);
  __mmask32 live = (__mmask32)((1u << n) - 1); /* n < 32 */
  _mm256_mask_storeu_epi8(dst, live, _mm256_maskz_loadu_epi8(live, src));
  return dst;
}

#define memcpy(dst, src, n) \
  _Generic((src), __m256i *: b2f_vector_tail_copy, default: memcpy)((dst), (src), (n))
