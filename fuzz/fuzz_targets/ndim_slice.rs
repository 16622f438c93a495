//! Any bytes as an n-dim array: the b2nd and caterva metalayer parsers directly, then a frame
//! in memory opened as an array and sliced at places taken from the input's last bytes.
#![no_main]

use b2frame::ndim::{meta, Array};
use b2frame::schunk::SChunk;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = meta::parse(data, false);
    let _ = meta::parse(data, true);
    let _ = b2frame::ndim::dtype::itemsize(&String::from_utf8_lossy(data));
    let Ok(s) = SChunk::open_buffer(data.to_vec()) else {
        return;
    };
    let Ok(a) = Array::open(&s) else { return };
    let shape = a.meta.shape.clone();
    let tail = &data[data.len().saturating_sub(2 * shape.len())..];
    let mut start = Vec::new();
    let mut stop = Vec::new();
    for (d, &n) in shape.iter().enumerate() {
        let pick = |k: usize| tail.get(2 * d + k).map_or(0, |&b| b as i64);
        let a0 = if n > 0 { pick(0) % (n + 1) } else { 0 };
        let b0 = (a0 + pick(1) % 8).min(n);
        start.push(a0);
        stop.push(b0);
    }
    let items: i64 = start.iter().zip(&stop).map(|(a, b)| b - a).product();
    if items >= 0 && (items as usize).saturating_mul(a.geom.itemsize) <= 1 << 22 {
        let mut out = vec![0u8; items as usize * a.geom.itemsize];
        let _ = a.get_slice(&start, &stop, &mut out);
    }
});
