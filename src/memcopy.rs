//! Large byte copies that avoid a slow path of glibc's `memcpy` on x86-64.
//!
//! From a few KiB up to a cache-dependent size (512 KiB on this project's CI machines), glibc
//! moves memory with `rep movsb`. When the destination starts 1 to 31 bytes after the source,
//! modulo 4 KiB, that runs at 2-3 GB/s instead of 30-40 GB/s (measured here, glibc 2.36). A
//! stream stored behind its 4-byte size lands in that window whenever the two buffers share an
//! alignment. There, the copy runs backwards in 64-byte steps: 20-35 GB/s, because each load
//! then precedes the stores whose addresses it shares modulo 4 KiB (forwards, every load waits
//! on such a store). Every other copy is a plain `memcpy`.

/// Copies up to this size stay on glibc's vector loop, which has no slow window.
const SMALL: usize = 2048;
/// Destination-after-source distances (modulo 4 KiB) that take the slow path.
const SLOW_GAPS: std::ops::Range<usize> = 1..32;

/// `dst.copy_from_slice(src)`, backwards when the two are placed so that one `memcpy` would
/// be slow.
#[inline]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let gap = (dst.as_ptr() as usize).wrapping_sub(src.as_ptr() as usize) % 4096;
    if dst.len() <= SMALL || !SLOW_GAPS.contains(&gap) {
        // (which checks the lengths; an `assert_eq!` first spilled both to the stack for
        // its message, 4 instructions a copy of a raw stream)
        dst.copy_from_slice(src);
        return;
    }
    assert_eq!(
        dst.len(),
        src.len(),
        "copy between slices of different lengths"
    );
    let head = dst.len() % 64;
    let (dst_head, dst_body) = dst.split_at_mut(head);
    let (src_head, src_body) = src.split_at(head);
    for (d, s) in dst_body
        .rchunks_exact_mut(64)
        .zip(src_body.rchunks_exact(64))
    {
        d.copy_from_slice(s);
    }
    dst_head.copy_from_slice(src_head);
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_length_and_offset() {
        let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for len in [0, 1, 2047, 2048, 2049, 2111, 4096, 6145, 19_000] {
            for shift in [0, 1, 4, 31] {
                let mut dst = vec![0u8; len + shift];
                super::copy(&mut dst[shift..], &src[..len]);
                assert_eq!(&dst[shift..], &src[..len], "len {len} shift {shift}");
                assert!(dst[..shift].iter().all(|&b| b == 0));
            }
        }
    }
}
