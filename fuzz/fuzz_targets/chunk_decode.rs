//! Any bytes as a Blosc chunk: the engine's decoder (whole, block by block, items of a block,
//! getitem) and the C entry points `b2f_chunk_sizes` and `b2f_decompress`. Nothing may panic or
//! read out of bounds.
#![no_main]

use b2frame::chunk::decompress::{decompress_to_vec, getitem, Decoder};
use libfuzzer_sys::fuzz_target;

const MAX_OUT: usize = 1 << 22;

fuzz_target!(|data: &[u8]| {
    let _ = decompress_to_vec(data, MAX_OUT);
    let mut items = [0u8; 4096];
    let _ = getitem(data, 3, 5, &mut items);
    if let Ok(d) = Decoder::new(data) {
        if d.header().nbytes() <= MAX_OUT {
            let mut out = vec![0u8; d.header().nbytes()];
            let _ = d.decode_all(&mut out, None);
            for j in 0..d.nblocks().min(8) {
                let mut b = vec![0u8; d.block_range(j).len()];
                let _ = d.decode_block(j, &mut b, None);
                // A few items, gathered from a shuffled block's planes.
                let ts = usize::from(d.header().typesize()).max(1);
                let parts = [0..ts.min(b.len()), (3 * ts).min(b.len())..(5 * ts).min(b.len())];
                let _ = d.decode_block_parts(j, &parts, &mut b, None);
            }
        }
    }
    let (mut nbytes, mut cbytes, mut blocksize) = (0usize, 0usize, 0usize);
    // SAFETY: valid pointers and lengths for the duration of the calls.
    unsafe {
        b2frame::capi::b2f_chunk_sizes(
            data.as_ptr().cast(),
            data.len(),
            &mut nbytes,
            &mut cbytes,
            &mut blocksize,
        );
        let mut out = vec![0u8; 1 << 16];
        let mut n = 0usize;
        let st = b2frame::capi::b2f_decompress(
            data.as_ptr().cast(),
            data.len(),
            out.as_mut_ptr().cast(),
            out.len(),
            &mut n,
        );
        assert_ne!(st, b2frame::capi::B2F_ERR_INTERNAL);
    }
});
