//! A sequence of operations from the input (append, insert, update, delete, reorder, fill
//! special, vlmeta set/delete, reopen from its serialized form) on an in-memory frame, checked
//! against a plain model after every step.
#![no_main]

use b2frame::chunk::{CParams, SpecialValue};
use b2frame::schunk::{CreateOptions, SChunk};
use libfuzzer_sys::fuzz_target;

const CHUNK: usize = 256;

fn chunk(seed: u8) -> Vec<u8> {
    (0..CHUNK)
        .map(|i| (i as u8 / 3).wrapping_add(seed))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let opts = CreateOptions {
        contiguous: true,
        chunksize: CHUNK as i32,
        params: CParams {
            typesize: 4,
            ..CParams::default()
        },
        sync: false,
    };
    let mut s = SChunk::create(None, &opts).unwrap();
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut vlmeta: Vec<(String, Vec<u8>)> = Vec::new();
    for op in data.chunks(3).take(64) {
        let (kind, a, b) = (
            op[0] % 9,
            *op.get(1).unwrap_or(&0),
            *op.get(2).unwrap_or(&0),
        );
        let n = chunks.len();
        match kind {
            0 => {
                s.append(&chunk(a)).unwrap();
                chunks.push(chunk(a));
            }
            1 => {
                let pos = a as usize % (n + 1);
                s.insert(pos as i64, &chunk(b)).unwrap();
                chunks.insert(pos, chunk(b));
            }
            2 if n > 0 => {
                let i = a as usize % n;
                s.update(i as i64, &chunk(b)).unwrap();
                chunks[i] = chunk(b);
            }
            3 if n > 0 => {
                let i = a as usize % n;
                s.delete(i as i64).unwrap();
                chunks.remove(i);
            }
            4 if n > 1 => {
                let mut order: Vec<i64> = (0..n as i64).collect();
                order.swap(a as usize % n, b as usize % n);
                s.reorder(&order).unwrap();
                chunks.swap(a as usize % n, b as usize % n);
            }
            5 => {
                let k = 1 + a as usize % 3;
                s.fill_special((k * CHUNK / 4) as i64, SpecialValue::Zero)
                    .unwrap();
                chunks.extend(std::iter::repeat_n(vec![0u8; CHUNK], k));
            }
            6 => {
                let name = format!("v{}", a % 4);
                let val = vec![b; b as usize % 40];
                s.vlmeta_set(&name, &val).unwrap();
                match vlmeta.iter_mut().find(|(k, _)| *k == name) {
                    Some(e) => e.1 = val,
                    None => vlmeta.push((name, val)),
                }
            }
            7 => {
                let name = format!("v{}", a % 4);
                let had = vlmeta.iter().any(|(k, _)| *k == name);
                assert_eq!(s.vlmeta_delete(&name).is_ok(), had);
                vlmeta.retain(|(k, _)| *k != name);
            }
            8 => {
                let buf = s.to_buffer().unwrap();
                s = SChunk::open_buffer(buf).unwrap();
            }
            _ => {}
        }
        assert_eq!(s.nchunks(), chunks.len());
        for (i, want) in chunks.iter().enumerate() {
            assert_eq!(&s.get_chunk_vec(i as i64).unwrap(), want, "chunk {i}");
        }
        let mut names = s.vlmeta_names();
        names.sort();
        let mut want: Vec<String> = vlmeta.iter().map(|(k, _)| k.clone()).collect();
        want.sort();
        assert_eq!(names, want);
        for (k, v) in &vlmeta {
            assert_eq!(&s.vlmeta_get(k, 1 << 16).unwrap(), v);
        }
    }
});
