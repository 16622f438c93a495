//! Any bytes as the `chunks.b2frame` index file of a sparse frame (a directory), next to two
//! valid chunk files: open it and read every chunk and vlmetalayer.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use b2frame::chunk::{CParams, Context};
use b2frame::schunk::SChunk;
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            "/dev/shm".into()
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("b2f-fuzz-sframe-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let ctx = Context::new(CParams {
            typesize: 4,
            ..CParams::default()
        })
        .unwrap();
        for id in 0..2u32 {
            let data: Vec<u8> = (0..1000u32)
                .flat_map(|i| (i + id * 7).to_le_bytes())
                .collect();
            std::fs::write(
                d.join(format!("{id:08X}.chunk")),
                ctx.compress_to_vec(&data).unwrap(),
            )
            .unwrap();
        }
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let d = dir();
    std::fs::write(d.join("chunks.b2frame"), data).unwrap();
    let Ok(s) = SChunk::open(d, false) else {
        return;
    };
    for i in 0..(s.nchunks() as i64).min(16) {
        if let Ok(n) = s.chunk_nbytes(i) {
            if n <= 1 << 20 {
                let mut out = vec![0u8; n];
                let _ = s.get_chunk(i, &mut out);
            }
        }
    }
    for n in s.vlmeta_names() {
        let _ = s.vlmeta_get(&n, 1 << 20);
    }
});
