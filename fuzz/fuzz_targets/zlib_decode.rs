//! zlib streams through b2frame's decoder, which picks libdeflate or zlib-ng by the stream's
//! ratio and the codes of its first block (src/codecs/zlib.rs): whatever zlib-ng decodes, it
//! decodes to the same bytes, and what it decodes where zlib-ng refuses is the data compressed
//! (libdeflate's one leniency). The streams are deflated from the fuzzer's bytes (256 KiB of
//! them repeated between runs of zeros, so that the first block's codes are read), then up to
//! three bytes of their first 64 flipped: the header, whose codes pick the decoder.
#![no_main]

use b2frame::codecs::zlib;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[mode, flips], bytes)) = data.split_first_chunk::<2>() else {
        return;
    };
    if bytes.is_empty() {
        return;
    }
    let n = 256 << 10;
    let zeros = usize::from(mode & 0x3f) * 512;
    let mut src = Vec::with_capacity(n + bytes.len() + zeros);
    while src.len() < n {
        src.extend_from_slice(bytes);
        src.resize(src.len() + zeros, 0);
    }
    src.truncate(n);
    let clevel = if mode & 0x40 != 0 { 9 } else { 5 };
    let mut stream = vec![0u8; n + n / 100 + 64];
    let len = zlib::compress(clevel, &src, &mut stream);
    if len == 0 {
        return;
    }
    stream.truncate(len);
    for i in 0..usize::from(flips % 4) {
        let b = bytes[i % bytes.len()];
        let at = (usize::from(b) * 7 + i * 131) % stream.len().min(64);
        stream[at] ^= 1 << (b % 8);
    }
    let _ = zlib::mean_match_length(&stream);
    let mut ours = vec![0u8; n];
    let mut reference = vec![0u8; n];
    let picked = zlib::decompress(&stream, stream.len(), &mut ours, n);
    match zlib::zlib_ng_only(&stream, &mut reference) {
        Ok(_) => assert!(picked.is_ok() && ours == reference),
        Err(_) => assert!(picked.is_err() || ours == src),
    }
});
