//! LZ4 block decoding in safe Rust.
//!
//! lz4's own decoder fills a match with a short offset 8 bytes per store. Blosc's shuffled
//! streams are mostly such matches (long runs of one byte), so that loop was where decoding them
//! went. Here runs are filled 16 bytes per store, or by `memset` for one-byte runs; long runs of
//! literals are copied by `memcpy`. Short copies go through [`copy_piece`], a load and a store:
//! `copy_within` is a function that LLVM stops inlining once the decoder calls it from several
//! places, and a call costs more than such a copy.
//!
//! The decoder accepts exactly the blocks `LZ4_decompress_safe` (lz4 1.10.0) accepts and
//! decodes them to the same bytes: it keeps lz4's split into a fast loop (64 bytes or more of
//! output left) and a safe loop, with the same parsing limits in each, since some malformed
//! blocks are refused by one loop and not by the other. Like lz4 it reads offset 0 as a run of
//! zeros. Tests compare both decoders on valid and mutated blocks.

const MINMATCH: usize = 4;
const LASTLITERALS: usize = 5;
const MFLIMIT: usize = 12;
/// Output that must follow a match for the safe loop to copy it in whole 8-byte pieces.
const MATCH_SAFEGUARD_DISTANCE: usize = 12;
/// Output left for the fast loop; every copy there may write up to this far past its end.
const FASTLOOP_SAFE_DISTANCE: usize = 64;
const RUN_MASK: usize = 15;
const ML_MASK: usize = 15;

/// Where the safe loop picks up a sequence that the fast loop handed over.
enum Step {
    Token,
    Literals { token: usize, length: usize },
    MatchLength { token: usize, offset: usize },
    Match { length: usize, offset: usize },
}

/// Decodes one LZ4 block into `dst`. Returns the number of bytes written, or `None` where
/// `LZ4_decompress_safe` would return an error.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let iend = src.len();
    let oend = dst.len();
    if oend == 0 {
        return (src == [0]).then_some(0);
    }
    if iend == 0 {
        return None;
    }
    let mut ip = 0;
    let mut op = 0;
    let mut step = Step::Token;
    if oend >= FASTLOOP_SAFE_DISTANCE {
        // Invariants: ip < iend; op + FASTLOOP_SAFE_DISTANCE <= oend.
        step = loop {
            let token = usize::from(src[ip]);
            let mut length = token >> 4;
            let offset;
            if length != RUN_MASK {
                // The token, the 16 literal bytes that lz4 copies whatever the length (so the
                // offset after them) and one more byte, lz4's condition for this path: one
                // bound check for all their reads.
                let Some(window) = src
                    .get(ip..ip + 18)
                    .and_then(|w| <&[u8; 18]>::try_from(w).ok())
                else {
                    ip += 1;
                    break Step::Literals { token, length };
                };
                dst[op..op + 16].copy_from_slice(&window[1..17]);
                offset = usize::from(u16::from_le_bytes([window[length + 1], window[length + 2]]));
                ip += length + 3;
            } else {
                ip += 1;
                length += read_length(src, &mut ip, RUN_MASK, true)?;
                if op + length + 32 > oend || ip + length + 32 > iend {
                    break Step::Literals { token, length };
                }
                // A first 32-byte piece inline (room for it was checked just above), the rest
                // by `memcpy`.
                dst[op..op + 32].copy_from_slice(&src[ip..ip + 32]);
                if length > 32 {
                    dst[op + 32..op + length].copy_from_slice(&src[ip + 32..ip + length]);
                }
                ip += length;
                offset = usize::from(u16::from_le_bytes([src[ip], src[ip + 1]]));
                ip += 2;
            }
            op += length;

            let mut length = token & ML_MASK;
            if length == ML_MASK {
                length += read_length(src, &mut ip, LASTLITERALS - 1, false)? + MINMATCH;
                if op + length + FASTLOOP_SAFE_DISTANCE >= oend {
                    break Step::Match { length, offset };
                }
            } else {
                length += MINMATCH;
                if op + length + FASTLOOP_SAFE_DISTANCE >= oend {
                    break Step::Match { length, offset };
                }
                if offset >= 8 && offset <= op {
                    copy_short_match_wide(dst, op, offset);
                    op += length;
                    continue;
                }
            }
            if offset > op {
                return None;
            }
            copy_match_wild(dst, op, offset, length);
            op += length;
        };
    }

    loop {
        step = match step {
            Step::Token => {
                let token = usize::from(*src.get(ip)?);
                ip += 1;
                let length = token >> 4;
                if length != RUN_MASK && ip + 16 < iend && op + 32 <= oend {
                    dst[op..op + 16].copy_from_slice(&src[ip..ip + 16]);
                    op += length;
                    ip += length;
                    let offset = usize::from(u16::from_le_bytes([src[ip], src[ip + 1]]));
                    ip += 2;
                    let match_length = token & ML_MASK;
                    if match_length != ML_MASK && offset >= 8 && offset <= op {
                        copy_short_match(dst, op, offset);
                        op += match_length + MINMATCH;
                        Step::Token
                    } else {
                        Step::MatchLength { token, offset }
                    }
                } else if length == RUN_MASK {
                    let length = length + read_length(src, &mut ip, RUN_MASK, true)?;
                    Step::Literals { token, length }
                } else {
                    Step::Literals { token, length }
                }
            }
            Step::Literals { token, length } => {
                let cpy = op + length;
                if cpy + MFLIMIT > oend || ip + length + 2 + 1 + LASTLITERALS > iend {
                    // The last sequence: its literals must end the input exactly.
                    if ip + length != iend || cpy > oend {
                        return None;
                    }
                    copy_exact(&mut dst[op..cpy], &src[ip..iend]);
                    return Some(cpy);
                }
                // Not the last sequence, so at least MFLIMIT bytes of output and 8 of input
                // follow these literals: short runs are copied in whole 8-byte pieces.
                if length <= 8 {
                    dst[op..op + 8].copy_from_slice(&src[ip..ip + 8]);
                } else if length <= 16 {
                    dst[op..op + 16].copy_from_slice(&src[ip..ip + 16]);
                } else {
                    dst[op..cpy].copy_from_slice(&src[ip..ip + length]);
                }
                ip += length;
                op = cpy;
                let offset = usize::from(u16::from_le_bytes([src[ip], src[ip + 1]]));
                ip += 2;
                Step::MatchLength { token, offset }
            }
            Step::MatchLength { token, offset } => {
                let mut length = token & ML_MASK;
                if length == ML_MASK {
                    length += read_length(src, &mut ip, LASTLITERALS - 1, false)?;
                }
                Step::Match {
                    length: length + MINMATCH,
                    offset,
                }
            }
            Step::Match { length, offset } => {
                if offset > op || op + length + LASTLITERALS > oend {
                    return None;
                }
                let end = op + length;
                if offset >= 8 && end + MATCH_SAFEGUARD_DISTANCE <= oend {
                    // 8-byte pieces, as lz4 copies here (32-byte ones first where the offset
                    // allows): the last may write up to 7 bytes past the match, which the output
                    // has room for.
                    let window = &mut dst[op - offset..end + 7];
                    let mut at = offset;
                    if offset >= 32 {
                        while at + 32 <= offset + length {
                            copy_piece::<32>(window, at - offset, at);
                            at += 32;
                        }
                    }
                    while at < offset + length {
                        copy_piece::<8>(window, at - offset, at);
                        at += 8;
                    }
                } else {
                    copy_match_exact(dst, op, offset, length);
                }
                op = end;
                Step::Token
            }
        };
    }
}

/// Copies `from` to `to` (as long): up to 16 bytes in two overlapping pieces. For such a copy,
/// the `memcpy` call that `copy_from_slice` makes (and a byte loop, which LLVM turns into one)
/// costs more than the copy, most of all in a call that finds libc's code out of the cache.
/// Every stream ends with such a copy, its last literals (5 bytes or more).
#[inline(always)]
fn copy_exact(to: &mut [u8], from: &[u8]) {
    let n = from.len();
    // The pieces below would copy into a longer `to` without a word (`copy_from_slice` panics).
    debug_assert_eq!(to.len(), n, "copy between slices of different lengths");
    if n > 16 {
        to.copy_from_slice(from);
    } else if n >= 8 {
        to[..8].copy_from_slice(&from[..8]);
        to[n - 8..n].copy_from_slice(&from[n - 8..]);
    } else if n >= 4 {
        to[..4].copy_from_slice(&from[..4]);
        to[n - 4..n].copy_from_slice(&from[n - 4..]);
    } else if n > 0 {
        to[0] = from[0];
        to[n - 1] = from[n - 1];
        to[n / 2] = from[n / 2];
    }
}

/// Reads the bytes that extend a length of 15, stopping (as lz4 does) where fewer than
/// `reserve` input bytes would be left.
///
/// The first byte is read apart from the rest, as lz4 reads it: one byte is the common case.
/// With it in the loop, LLVM carried `ip` with an offset that each sequence undid, one more
/// add between a length's byte and the load of the next token, on which the next sequence
/// waits. The LZ4 streams of c-blosc2's chunks of the benchmark's data, each decoded
/// alone in a loop: geometric mean of lz4's speed 1.17 -> 1.22 and 1.21 -> 1.27 in two runs;
/// made-up streams of literal runs of 30-60 bytes 0.54-0.57 -> 0.65 (bench/RESULTS.md, stop 57).
#[inline(always)]
fn read_length(src: &[u8], ip: &mut usize, reserve: usize, initial_check: bool) -> Option<usize> {
    if initial_check && *ip + reserve >= src.len() {
        return None;
    }
    let byte = length_byte(src, *ip, reserve)?;
    let after = *ip + 1;
    if byte != 255 {
        *ip = after;
        return Some(usize::from(byte));
    }
    let (length, after) = read_length_rest(src, after, reserve)?;
    *ip = after;
    Some(length)
}

/// The length byte at `ip`, unless fewer than `reserve` input bytes would be left after it.
#[inline(always)]
fn length_byte(src: &[u8], ip: usize, reserve: usize) -> Option<u8> {
    let byte = *src.get(ip)?;
    (ip + 1 + reserve <= src.len()).then_some(byte)
}

/// The rest of a length whose first byte was 255 (lengths of 270 or more): the length so
/// far included, and where the input continues. Takes and returns positions by value, so that
/// the caller's `ip` stays in a register.
#[cold]
#[inline(never)]
fn read_length_rest(src: &[u8], mut ip: usize, reserve: usize) -> Option<(usize, usize)> {
    let mut length = 255;
    loop {
        let byte = length_byte(src, ip, reserve)?;
        ip += 1;
        length += usize::from(byte);
        if byte != 255 {
            return Some((length, ip));
        }
    }
}

/// Copies a match of up to 18 bytes whose offset is 8 or more: 8-byte pieces in order, each
/// reading only bytes already written. Writes 18 bytes.
#[inline(always)]
fn copy_short_match(dst: &mut [u8], op: usize, offset: usize) {
    let from = op - offset;
    copy_piece::<8>(dst, from, op);
    copy_piece::<8>(dst, from + 8, op + 8);
    copy_piece::<2>(dst, from + 16, op + 16);
}

/// Copies `N` bytes from `from` to `to` through a register: a load and a store, never a call.
#[inline(always)]
fn copy_piece<const N: usize>(dst: &mut [u8], from: usize, to: usize) {
    let mut piece = [0u8; N];
    piece.copy_from_slice(&dst[from..from + N]);
    dst[to..to + N].copy_from_slice(&piece);
}

/// Copies a match of up to 18 bytes whose offset is 8 or more in the fast loop, where up to 32
/// bytes may be written: as few pieces as the offset allows, each reading only bytes already
/// written.
#[inline(always)]
fn copy_short_match_wide(dst: &mut [u8], op: usize, offset: usize) {
    if offset >= 48 {
        // One load and one store. The load ends before the 16-byte store of the literals (up
        // to 14 bytes back): a load that overlaps part of a recent store waits for it.
        copy_piece::<32>(dst, op - offset, op);
    } else {
        copy_short_match(dst, op, offset);
    }
}

/// Copies a match in the fast loop, where up to 32 bytes past its end may be overwritten.
/// Fixed-size pieces, so that short matches cost no `memcpy` call.
fn copy_match_wild(dst: &mut [u8], op: usize, offset: usize, length: usize) {
    let end = op + length;
    if length >= 256 && offset >= 2 {
        // Long matches by `memmove`, whose wide stores outrun the loops below: a match of 3 KiB
        // at offset 2, which ends a bitshuffled 4 KiB block of incr_i32, took 400 stores of 8
        // bytes there.
        copy_match_exact(dst, op, offset, length);
        return;
    }
    if offset >= 16 {
        let mut at = op;
        if offset >= 32 {
            while at < end {
                copy_piece::<32>(dst, at - offset, at);
                at += 32;
            }
        } else {
            while at < end {
                copy_piece::<16>(dst, at - offset, at);
                at += 16;
            }
        }
        return;
    }
    if offset <= 1 {
        // Offset 0 reads the bytes being written; lz4 leaves zeros there.
        let byte = if offset == 0 { 0 } else { dst[op - 1] };
        // Up to 32 bytes by stores in place (the fast loop has that room), not `memset` calls.
        if length <= 16 {
            dst[op..op + 16].fill(byte);
        } else if length <= 32 {
            dst[op..op + 32].fill(byte);
        } else {
            dst[op..end].fill(byte);
        }
        return;
    }
    if length <= 32 && offset != 2 && offset != 4 && offset != 8 {
        // Offsets whose pattern is not a word repeated: building its 16 bytes costs more than
        // copying a short match in 8-byte pieces.
        copy_short_period(dst, op, offset, end);
        return;
    }
    let (pattern, stride) = period_pattern(dst, op, offset);
    if stride == 16 {
        let rounded = end + (op.wrapping_sub(end) & 15);
        for piece in dst[op..rounded].chunks_exact_mut(16) {
            piece.copy_from_slice(&pattern);
        }
    } else {
        let mut at = op;
        while at < end {
            dst[at..at + 16].copy_from_slice(&pattern);
            at += stride;
        }
    }
}

/// Copies a short match of offset 2 to 15 in 8-byte pieces, as lz4 does: below 8, the first 8
/// bytes one by one, then pieces from a multiple of the offset that is 8 or more back, each
/// reading only bytes already written. Writes up to 7 bytes past `end`.
fn copy_short_period(dst: &mut [u8], op: usize, offset: usize, end: usize) {
    let mut at = op;
    let mut distance = offset;
    if offset < 8 {
        let window = &mut dst[op - offset..op + 8];
        for i in offset..offset + 8 {
            window[i] = window[i - offset];
        }
        at += 8;
        distance = offset * (8usize.div_ceil(offset));
    }
    while at < end {
        copy_piece::<8>(dst, at - distance, at);
        at += 8;
    }
}

/// 16 bytes of the period of `offset` (2 to 15) that ends at `op`, and the largest multiple
/// of the period that fits in 16: consecutive stores of the pattern that far apart continue it.
fn period_pattern(dst: &[u8], op: usize, offset: usize) -> ([u8; 16], usize) {
    let from = op - offset;
    let word = match offset {
        2 => u64::from(u16::from_le_bytes([dst[from], dst[from + 1]])) * 0x0001_0001_0001_0001,
        4 => {
            let bytes = [dst[from], dst[from + 1], dst[from + 2], dst[from + 3]];
            u64::from(u32::from_le_bytes(bytes)) * 0x0000_0001_0000_0001
        }
        8 => u64::from_le_bytes(dst[from..op].try_into().unwrap_or_default()),
        _ => {
            let mut pattern = [0u8; 16];
            for i in 0..16 {
                pattern[i] = if i < offset {
                    dst[from + i]
                } else {
                    pattern[i - offset]
                };
            }
            return (pattern, 16 - 16 % offset);
        }
    };
    let half = word.to_le_bytes();
    let mut pattern = [0u8; 16];
    pattern[..8].copy_from_slice(&half);
    pattern[8..].copy_from_slice(&half);
    (pattern, 16)
}

/// Copies a match without writing past its end.
fn copy_match_exact(dst: &mut [u8], op: usize, offset: usize, length: usize) {
    let end = op + length;
    if offset <= 1 {
        let byte = if offset == 0 { 0 } else { dst[op - 1] };
        dst[op..end].fill(byte);
        return;
    }
    let from = op - offset;
    if length <= 32 {
        // Byte by byte, as lz4 ends its blocks: a `memmove` call costs more than the copy.
        let window = &mut dst[from..end];
        for i in offset..window.len() {
            window[i] = window[i - offset];
        }
        return;
    }
    // Each piece reads only bytes already written; pieces double as the written part grows.
    let mut at = op;
    while at < end {
        let n = (at - from).min(end - at);
        dst.copy_within(from..from + n, at);
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::{copy_exact, decompress};
    use crate::codecs::test_rng::Rng;

    /// lz4's own decoder, the reference.
    fn reference(src: &[u8], capacity: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; capacity];
        // SAFETY: valid slices with their lengths.
        let n = unsafe {
            lz4_sys::LZ4_decompress_safe(
                src.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                src.len() as i32,
                capacity as i32,
            )
        };
        usize::try_from(n).ok().map(|n| {
            out.truncate(n);
            out
        })
    }

    fn ours(src: &[u8], capacity: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; capacity];
        decompress(src, &mut out).map(|n| {
            out.truncate(n);
            out
        })
    }

    fn compress(data: &[u8], hc: bool) -> Vec<u8> {
        let mut out = vec![0u8; data.len() + data.len() / 255 + 16];
        let n = if hc {
            crate::codecs::lz4::compress_hc(9, data, &mut out)
        } else {
            crate::codecs::lz4::compress(5, data, &mut out)
        };
        out.truncate(n);
        out
    }

    /// Data whose matches have every offset from 0 to 80 and lengths from 4 to thousands.
    fn samples() -> Vec<Vec<u8>> {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut all = vec![];
        for len in [1, 5, 12, 13, 17, 31, 63, 64, 65, 80, 100, 300, 4096, 70_000] {
            all.push((0..len).map(|_| rng.next() as u8).collect());
            all.push(vec![7u8; len]);
            all.push((0..len).map(|i| (i / 10) as u8).collect());
        }
        for period in 1..80 {
            for len in [20, 50, 97, 1000, 5000] {
                let mut v: Vec<u8> = (0..len).map(|i| (i % period) as u8 ^ 0x5a).collect();
                for _ in 0..len / 97 {
                    let i = rng.below(len);
                    v[i] = rng.next() as u8;
                }
                all.push(v);
            }
        }
        // Shuffled-like streams: runs, short literals between them, and repeats far back.
        for _ in 0..40 {
            let mut v = vec![];
            while v.len() < 20_000 {
                match rng.below(4) {
                    0 => v.extend(std::iter::repeat_n(rng.next() as u8, rng.below(3000))),
                    1 => v.extend((0..rng.below(20)).map(|_| rng.next() as u8)),
                    2 if v.len() > 100 => {
                        let from = rng.below(v.len() - 50);
                        let n = rng.below(v.len() - from);
                        v.extend_from_within(from..from + n);
                    }
                    _ => v.extend((0..rng.below(200)).map(|i| (i / 7) as u8)),
                }
            }
            all.push(v);
        }
        all
    }

    #[test]
    fn decodes_what_lz4_writes() {
        for data in samples() {
            for hc in [false, true] {
                let block = compress(&data, hc);
                assert!(!block.is_empty());
                assert_eq!(ours(&block, data.len()).as_deref(), Some(&data[..]));
                // A larger buffer: lz4 stops where the block ends.
                assert_eq!(
                    ours(&block, data.len() + 100),
                    reference(&block, data.len() + 100)
                );
                // A smaller one: refused by both.
                assert_eq!(ours(&block, data.len() - 1), None);
                assert_eq!(reference(&block, data.len() - 1), None);
            }
        }
    }

    #[test]
    fn accepts_and_refuses_what_lz4_does() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut checked = 0;
        for data in samples() {
            let block = compress(&data, rng.below(2) == 0);
            for _ in 0..60 {
                let mut bad = block.clone();
                match rng.below(4) {
                    0 => {
                        let i = rng.below(bad.len());
                        bad[i] = rng.next() as u8;
                    }
                    1 => bad.truncate(rng.below(bad.len())),
                    2 => {
                        for _ in 0..1 + rng.below(4) {
                            let i = rng.below(bad.len());
                            bad[i] ^= 1 << rng.below(8);
                        }
                    }
                    _ => {
                        let i = rng.below(bad.len());
                        bad[i] = [0, 15, 0xf0, 0xff][rng.below(4)];
                    }
                }
                let capacity = match rng.below(3) {
                    0 => data.len(),
                    1 => rng.below(data.len() + 64),
                    _ => data.len() + rng.below(300),
                };
                assert_eq!(
                    ours(&bad, capacity),
                    reference(&bad, capacity),
                    "block of {} bytes for {} bytes, capacity {capacity}",
                    bad.len(),
                    data.len()
                );
                checked += 1;
            }
        }
        assert!(checked > 10_000);
    }

    /// The parsing limits act near the ends of the input and output: there, every byte of
    /// the block takes values that change its meaning, against capacities around the size.
    #[test]
    fn agrees_near_the_ends() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut lengths: Vec<usize> = (40..200).step_by(7).collect();
        lengths.extend([1000, 5000]);
        for len in lengths {
            let kinds: [Vec<u8>; 3] = [
                (0..len).map(|_| rng.next() as u8).collect(),
                (0..len).map(|i| (i / 9) as u8).collect(),
                (0..len)
                    .map(|i| (i % 13) as u8 | (rng.below(8) == 0) as u8)
                    .collect(),
            ];
            for data in kinds {
                let block = compress(&data, false);
                let capacities = [len - 1, len, len + 1, len + 13, len + 64];
                for pos in block.len().saturating_sub(24)..block.len() {
                    let was = block[pos];
                    for v in [
                        0,
                        1,
                        4,
                        0x0f,
                        0x10,
                        0x1f,
                        0x4f,
                        0xf0,
                        0xff,
                        was ^ 0x80,
                        was.wrapping_add(1),
                    ] {
                        let mut bad = block.clone();
                        bad[pos] = v;
                        for capacity in capacities {
                            assert_eq!(ours(&bad, capacity), reference(&bad, capacity));
                        }
                    }
                    for capacity in capacities {
                        let cut = &block[..pos];
                        assert_eq!(ours(cut, capacity), reference(cut, capacity));
                    }
                }
            }
        }
    }

    /// Blocks built sequence by sequence, with lengths and offsets near every limit (offsets
    /// from 0 to past the output written), each cut at every point of its last 40 bytes.
    #[test]
    fn agrees_on_generated_sequences() {
        let mut rng = Rng(0x0bad_cafe_f00d_d00d);
        let mut checked = 0;
        for _ in 0..3000 {
            let mut block = vec![];
            let mut out_len = 0usize;
            let lengths = |rng: &mut Rng| match rng.below(4) {
                0 => rng.below(15),
                1 => 15 + rng.below(300),
                2 => 15 + 255 + rng.below(40),
                _ => rng.below(40),
            };
            for _ in 0..rng.below(12) {
                let lit = lengths(&mut rng);
                let ml = lengths(&mut rng).max(4);
                let token = (lit.min(15) << 4) | (ml - 4).min(15);
                block.push(token as u8);
                if lit >= 15 {
                    let mut rest = lit - 15;
                    while rest >= 255 {
                        block.push(255);
                        rest -= 255;
                    }
                    block.push(rest as u8);
                }
                block.extend((0..lit).map(|_| rng.next() as u8));
                out_len += lit;
                let offset = match rng.below(3) {
                    0 => rng.below(17),
                    1 => rng.below(out_len + 3),
                    _ => out_len.saturating_sub(rng.below(3)),
                };
                block.extend((offset as u16).to_le_bytes());
                if ml - 4 >= 15 {
                    let mut rest = ml - 4 - 15;
                    while rest >= 255 {
                        block.push(255);
                        rest -= 255;
                    }
                    block.push(rest as u8);
                }
                out_len += ml;
            }
            let last = lengths(&mut rng);
            block.push((last.min(15) << 4) as u8);
            if last >= 15 {
                block.push((last - 15).min(254) as u8);
            }
            block.extend((0..last).map(|_| rng.next() as u8));
            out_len += last;
            for cut in block.len().saturating_sub(40)..=block.len() {
                for capacity in [
                    out_len.saturating_sub(2),
                    out_len,
                    out_len + 3,
                    out_len + 70,
                ] {
                    let src = &block[..cut];
                    assert_eq!(
                        ours(src, capacity),
                        reference(src, capacity),
                        "{src:?} {capacity}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000);
    }

    #[test]
    fn copy_exact_copies_every_length_and_nothing_else() {
        let from: Vec<u8> = (1..=40).collect();
        for n in 0..=from.len() {
            for at in [0, 3] {
                let mut to = vec![0u8; at + n + 3];
                copy_exact(&mut to[at..at + n], &from[..n]);
                assert_eq!(&to[at..at + n], &from[..n], "n {n}");
                assert!(
                    to[..at].iter().chain(&to[at + n..]).all(|&b| b == 0),
                    "n {n}"
                );
            }
        }
    }

    #[test]
    fn hand_made_blocks() {
        // Offset 0 fills zeros, as lz4 does.
        let mut block = vec![0x1f, b'a', 0, 0, 200];
        block.extend([0x50, 1, 2, 3, 4, 5]);
        let out = ours(&block, 1 + 219 + 5).unwrap();
        assert_eq!(out, reference(&block, out.len()).unwrap());
        assert!(out[1..220].iter().all(|&b| b == 0));
        for (src, capacity) in [
            (&[][..], 0),
            (&[0][..], 0),
            (&[1][..], 0),
            (&[][..], 10),
            (&[0x10, b'x'][..], 1),
            (&[0x10, b'x'][..], 5),
            (&[0xf0][..], 40),
            (&[0xf0, 255, 255][..], 600),
        ] {
            assert_eq!(
                ours(src, capacity),
                reference(src, capacity),
                "{src:?} {capacity}"
            );
        }
    }
}
