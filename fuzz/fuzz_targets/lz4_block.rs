//! Any bytes as an LZ4 block: the Rust decoder must accept exactly what lz4's
//! `LZ4_decompress_safe` accepts and decode it to the same bytes. The first two bytes give the
//! output capacity, so that every parsing limit near the end of the output is reached.
#![no_main]

use b2frame::codecs::lz4_block;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, block)) = data.split_first_chunk::<2>() else {
        return;
    };
    let capacity = usize::from(u16::from_le_bytes(*head));
    let mut ours = vec![0u8; capacity];
    let mut theirs = vec![0u8; capacity];
    let n_ours = lz4_block::decompress(block, &mut ours);
    // SAFETY: valid slices with their lengths.
    let n_theirs = unsafe {
        lz4_sys::LZ4_decompress_safe(
            block.as_ptr().cast(),
            theirs.as_mut_ptr().cast(),
            block.len() as i32,
            capacity as i32,
        )
    };
    let n_theirs = usize::try_from(n_theirs).ok();
    assert_eq!(n_ours, n_theirs);
    if let Some(n) = n_ours {
        assert_eq!(ours[..n], theirs[..n]);
    }
});
