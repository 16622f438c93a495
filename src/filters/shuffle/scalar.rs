//! Portable byte shuffle: the reference every SIMD kernel is tested against.

/// Shuffles elements `from..n` (n = len / typesize) into their planes.
pub fn shuffle_tail(typesize: usize, from: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    match typesize {
        2 => shuffle_fixed::<2>(from, n, src, dst),
        4 => shuffle_fixed::<4>(from, n, src, dst),
        8 => shuffle_fixed::<8>(from, n, src, dst),
        16 => shuffle_fixed::<16>(from, n, src, dst),
        _ => {
            for j in 0..typesize {
                let plane = &mut dst[j * n..(j + 1) * n];
                for i in from..n {
                    plane[i] = src[i * typesize + j];
                }
            }
        }
    }
}

fn shuffle_fixed<const T: usize>(from: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    for (i, item) in src[..n * T].chunks_exact(T).enumerate().skip(from) {
        for (j, &b) in item.iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

/// Inverse of [`shuffle_tail`] for elements `from..n`.
pub fn unshuffle_tail(typesize: usize, from: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    match typesize {
        2 => unshuffle_fixed::<2>(from, n, src, dst),
        4 => unshuffle_fixed::<4>(from, n, src, dst),
        8 => unshuffle_fixed::<8>(from, n, src, dst),
        16 => unshuffle_fixed::<16>(from, n, src, dst),
        _ => {
            for j in 0..typesize {
                let plane = &src[j * n..(j + 1) * n];
                for i in from..n {
                    dst[i * typesize + j] = plane[i];
                }
            }
        }
    }
}

fn unshuffle_fixed<const T: usize>(from: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    for (i, item) in dst[..n * T].chunks_exact_mut(T).enumerate().skip(from) {
        for (j, b) in item.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
    }
}
