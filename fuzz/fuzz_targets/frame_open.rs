//! Any bytes as a contiguous frame in memory: open it and walk everything — info, every chunk
//! (sizes, raw, decoded), every metalayer and vlmetalayer, a slice across chunks and a short one.
#![no_main]

use b2frame::schunk::SChunk;
use libfuzzer_sys::fuzz_target;

const MAX_CHUNK: usize = 1 << 22;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = SChunk::open_buffer(data.to_vec()) else {
        return;
    };
    let info = s.info();
    for i in 0..(s.nchunks() as i64).min(64) {
        let _ = s.chunk_special(i);
        let _ = s.get_chunk_raw(i);
        if let Ok(n) = s.chunk_nbytes(i) {
            if n <= MAX_CHUNK {
                let mut out = vec![0u8; n];
                let _ = s.get_chunk(i, &mut out);
            }
        }
    }
    if info.typesize > 0 && info.nbytes > 0 {
        // At most MAX_CHUNK bytes: a typesize of megabytes times 4096 items would be the
        // harness's own gigabytes.
        let items = (info.nbytes / info.typesize as i64)
            .min(4096)
            .min((MAX_CHUNK / info.typesize as usize) as i64);
        let mut out = vec![0u8; items as usize * info.typesize as usize];
        let _ = s.get_slice(0, items, &mut out);
        // A short slice inside: only the blocks that hold it are decoded.
        let total = info.nbytes / info.typesize as i64;
        let at = total / 3;
        let short = items.min(5).min(total - at);
        let _ = s.get_slice(at, at + short, &mut out);
    }
    for n in s.meta_names() {
        let _ = s.meta_get(&n);
    }
    for n in s.vlmeta_names() {
        let _ = s.vlmeta_get(&n, MAX_CHUNK);
    }
    let _ = s.to_buffer();
});
