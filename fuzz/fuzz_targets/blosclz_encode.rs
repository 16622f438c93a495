//! Any bytes through the BloscLZ encoder: what it writes must decode to the input and equal
//! what a table cleared for every use (as c-blosc2's is) gives, and its two ways of finding a
//! match's end (byte scan for regular data, computed otherwise) must write the same stream and
//! give up at the same points. The first byte gives the clevel and, with its top bit, turns
//! the rest into regular data (a slowly increasing int32 sequence with the fuzzer's bytes
//! mixed in), where the probe picks the byte scan; the second byte gives the destination's
//! size.
#![no_main]

use b2frame::codecs::blosclz;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[mode, room], bytes)) = data.split_first_chunk::<2>() else {
        return;
    };
    let clevel = mode % 9 + 1;
    let src = if mode & 0x80 != 0 {
        let step = 1 + usize::from(room % 16);
        // Up to 128 KiB: past MAX_FARDISTANCE, where the encoder tests a candidate's bytes
        // before its reach.
        let n = (bytes.len() * 32).min(1 << 17) / 4;
        let mut v: Vec<u8> = (0..n)
            .flat_map(|i| ((i / step) as u32).to_le_bytes())
            .collect();
        if !v.is_empty() {
            for (j, &b) in bytes.iter().enumerate() {
                let at = j * 61 % v.len();
                v[at] ^= b;
            }
        }
        v
    } else {
        bytes.to_vec()
    };
    // From a little more than the input down to the smallest the encoder accepts.
    let room = (src.len() + 64) * (usize::from(room) + 1) / 256;

    let mut out = vec![0u8; room];
    let n = blosclz::compress(clevel, &src, &mut out);
    // The thread's table, shared by every input so far, compresses as a cleared one.
    let mut cleared = vec![0u8; room];
    let m = blosclz::compress_cleared(clevel, &src, &mut cleared);
    assert_eq!(out[..n], cleared[..m], "clevel {clevel}: the shared table compresses otherwise");
    if n > 0 {
        let mut back = vec![0u8; src.len()];
        assert_eq!(
            blosclz::decompress(&out[..n], &mut back).ok(),
            Some(src.len())
        );
        assert!(back == src, "clevel {clevel}: decoded bytes differ");
    }

    let [scanned, computed] = blosclz::encode_both_ways(&src, room, clevel == 9);
    assert_eq!(scanned, computed, "the two match-end searches disagree");
});
