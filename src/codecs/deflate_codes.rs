//! What a zlib stream's first block says before it is decoded: a dynamic block's code lengths
//! for literals and match lengths (RFC 1951, 3.2.7), from which the mean length of its matches
//! is estimated (a code of L bits stands for a frequency of about 2^-L). zlib.rs picks the
//! faster decoder by it.
//!
//! Only a hint: a stored or fixed-code first block, a preset dictionary, a truncated or invalid
//! header all give `None`, and the decoder picked still checks the whole stream.

/// Length symbols 257..=285: the shortest length each stands for and its extra bits.
const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// The order in which a dynamic block stores the lengths of its code length code.
const CODE_LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
/// The code length code's longest code.
const CL_BITS: u32 = 7;

/// Whether a zlib header's two bytes say deflate, pass their check and flag no preset
/// dictionary.
pub(super) fn zlib_header_ok(cmf: u8, flg: u8) -> bool {
    let check = u16::from(cmf) << 8 | u16::from(flg);
    cmf & 0x0f == 8 && check.is_multiple_of(31) && flg & 0x20 == 0
}

/// The mean match length that the first block's code lengths promise, or `None` where the
/// stream does not start with a well-formed dynamic block that has length codes.
pub fn mean_match_length(zlib: &[u8]) -> Option<u32> {
    let (&cmf, &flg) = (zlib.first()?, zlib.get(1)?);
    if !zlib_header_ok(cmf, flg) {
        return None;
    }
    let mut bits = Bits::new(&zlib[2..]);
    let _final_block = bits.take(1)?;
    if bits.take(2)? != 2 {
        return None;
    }
    let nlitlen = 257 + bits.take(5)? as usize;
    let _ndist = bits.take(5)?;
    let ncl = 4 + bits.take(4)? as usize;
    if nlitlen > 286 {
        return None;
    }
    let mut cl_lens = [0u8; 19];
    for &sym in &CODE_LENGTH_ORDER[..ncl] {
        cl_lens[sym] = bits.take(3)? as u8;
    }
    let table = cl_table(&cl_lens)?;
    // The literal/length code's lengths; the distance code's that follow are not needed.
    let mut lens = [0u8; 286];
    let mut got = 0;
    while got < nlitlen {
        let (sym, len) = table[bits.peek(CL_BITS)? as usize];
        if len == 0 {
            return None;
        }
        bits.take(u32::from(len))?;
        if sym < 16 {
            lens[got] = sym;
            got += 1;
            continue;
        }
        let (byte, repeat) = match sym {
            16 => (*lens[..got].last()?, 3 + bits.take(2)? as usize),
            17 => (0, 3 + bits.take(3)? as usize),
            _ => (0, 11 + bits.take(7)? as usize),
        };
        let end = (got + repeat).min(nlitlen);
        lens[got..end].fill(byte);
        got = end;
    }
    // Each length symbol weighted 2^(15-L); a symbol's lengths are taken at their middle,
    // doubled to stay whole: 2 * base + 2^extra - 1.
    let (mut sum, mut weight) = (0u64, 0u64);
    for (s, &len) in lens[257..nlitlen].iter().enumerate() {
        if len > 0 {
            let w = 1u64 << (15 - len);
            sum += w * (2 * u64::from(LENGTH_BASE[s]) + (1u64 << LENGTH_EXTRA[s]) - 1);
            weight += 2 * w;
        }
    }
    (weight > 0).then(|| (sum / weight) as u32)
}

/// The code length code's decoding table, indexed by the next `CL_BITS` bits of the stream:
/// (symbol, code length), length 0 where no code starts with those bits. `None` for an
/// over-subscribed code.
fn cl_table(lens: &[u8; 19]) -> Option<[(u8, u8); 1 << CL_BITS]> {
    let mut count = [0u32; CL_BITS as usize + 1];
    for &l in lens {
        count[usize::from(l)] += 1;
    }
    count[0] = 0;
    let mut left = 1i32;
    for &c in &count[1..] {
        left = 2 * left - c as i32;
        if left < 0 {
            return None;
        }
    }
    // Canonical codes (RFC 1951, 3.2.2), stored in the stream from their first bit on.
    let mut next = [0u32; CL_BITS as usize + 1];
    let mut code = 0;
    for l in 1..=CL_BITS as usize {
        code = (code + count[l - 1]) << 1;
        next[l] = code;
    }
    let mut table = [(0u8, 0u8); 1 << CL_BITS];
    for (sym, &l) in lens.iter().enumerate().filter(|(_, &l)| l > 0) {
        let c = next[usize::from(l)];
        next[usize::from(l)] += 1;
        let first = (c.reverse_bits() >> (32 - u32::from(l))) as usize;
        for slot in table.iter_mut().skip(first).step_by(1 << l) {
            *slot = (sym as u8, l);
        }
    }
    Some(table)
}

/// A deflate bit reader: bits from the low end of each byte on.
struct Bits<'a> {
    src: &'a [u8],
    at: usize,
    buf: u64,
    n: u32,
}

impl<'a> Bits<'a> {
    fn new(src: &'a [u8]) -> Self {
        Bits {
            src,
            at: 0,
            buf: 0,
            n: 0,
        }
    }

    /// The next `k` (at most 16) bits, not consumed; `None` past the end of the stream.
    fn peek(&mut self, k: u32) -> Option<u32> {
        if self.n < k {
            if let Some(word) = self.src.get(self.at..self.at + 8) {
                // As many whole bytes as the buffer takes, in one load.
                let word = u64::from_le_bytes(word.try_into().ok()?);
                self.buf |= word << self.n;
                let bytes = (63 - self.n) / 8;
                self.at += bytes as usize;
                self.n += 8 * bytes;
            }
            while self.n < k {
                self.buf |= u64::from(*self.src.get(self.at)?) << self.n;
                self.at += 1;
                self.n += 8;
            }
        }
        Some((self.buf & ((1 << k) - 1)) as u32)
    }

    fn take(&mut self, k: u32) -> Option<u32> {
        let v = self.peek(k)?;
        self.buf >>= k;
        self.n -= k;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::{xorshift, zlib};

    fn deflated(src: &[u8], clevel: u8) -> Vec<u8> {
        let mut out = vec![0u8; src.len() + src.len() / 100 + 64];
        let n = zlib::deflate(clevel, src, &mut out);
        assert!(n > 0);
        out.truncate(n);
        out
    }

    /// Counters whose matches are 36-40 bytes (a 4-byte count repeated 10 times), and runs
    /// of zeros between short runs of noise, whose matches are mostly 258 bytes.
    #[test]
    fn mean_match_length_tells_short_matches_from_long_ones() {
        let counters: Vec<u8> = (0..65536u32).flat_map(|i| (i / 10).to_le_bytes()).collect();
        let mut rnd = xorshift(7);
        let mut runs = Vec::new();
        while runs.len() < 262_144 {
            runs.extend((0..64).map(|_| rnd() as u8));
            runs.resize(runs.len() + 4096 + (rnd() % 8192) as usize, 0);
        }
        for clevel in [5, 9] {
            let short = mean_match_length(&deflated(&counters, clevel));
            assert!(matches!(short, Some(30..=50)), "{short:?} clevel {clevel}");
            let long = mean_match_length(&deflated(&runs, clevel));
            assert!(matches!(long, Some(200..=258)), "{long:?} clevel {clevel}");
        }
        // zlib-ng's level 1 codes with the fixed code: nothing to read.
        assert_eq!(mean_match_length(&deflated(&counters, 1)), None);
    }

    #[test]
    fn streams_without_a_dynamic_first_block_give_none() {
        // Too short to have a dynamic block: zlib-ng codes it with the fixed code.
        assert_eq!(mean_match_length(&deflated(b"abcabcabcabc", 5)), None);
        // Random bytes: stored.
        let mut rnd = xorshift(3);
        let noise: Vec<u8> = (0..4096).map(|_| rnd() as u8).collect();
        assert_eq!(mean_match_length(&deflated(&noise, 5)), None);
        // Only literals: a dynamic block without length codes.
        let literals: Vec<u8> = (0..4096).map(|_| b"ab"[(rnd() % 2) as usize]).collect();
        let c = deflated(&literals, 1);
        assert!(mean_match_length(&c).is_none() || c.len() < literals.len() / 4);
        // Not a zlib header (raw deflate, a preset dictionary flagged, a bad check).
        let good = deflated(&[7u8; 100_000], 5);
        assert!(mean_match_length(&good).is_some());
        for (at, flip) in [(0, 0x01), (1, 0x20), (1, 0x01)] {
            let mut bad = good.clone();
            bad[at] ^= flip;
            assert_eq!(mean_match_length(&bad), None, "byte {at} ^ {flip:#x}");
        }
    }

    /// Every prefix of a stream and 20,000 streams with bits flipped in their first 64 bytes
    /// (the header) give an answer or `None`, never a panic; prefixes that end inside the
    /// header give `None`.
    #[test]
    fn truncated_and_mutated_headers_never_panic() {
        let src: Vec<u8> = (0..65536u32).flat_map(|i| (i / 10).to_le_bytes()).collect();
        let c = deflated(&src, 5);
        let whole = mean_match_length(&c);
        assert!(whole.is_some());
        let mut answered = 0;
        for n in 0..c.len().min(2048) {
            let got = mean_match_length(&c[..n]);
            if n < 3 {
                assert_eq!(got, None);
            }
            // Once the header is complete, the prefix answers as the whole stream does.
            if got.is_some() {
                assert_eq!(got, whole, "prefix {n}");
                answered += 1;
            }
        }
        assert!(answered > 0);
        let mut rnd = xorshift(11);
        let mut differ = 0;
        for _ in 0..20_000 {
            let mut m = c[..256].to_vec();
            for _ in 0..1 + rnd() % 3 {
                let at = 2 + (rnd() % 62) as usize;
                m[at] ^= 1 << (rnd() % 8);
            }
            differ += usize::from(mean_match_length(&m) != whole);
        }
        assert!(differ > 0);
    }
}
