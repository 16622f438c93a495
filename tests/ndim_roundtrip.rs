//! Random slab writes and reads on arrays of ranks 0 to 5 with odd shapes, checked after every
//! step against a plain C-order model; with one and two threads, contiguous, sparse and in
//! memory, and after reopening.

mod common;

use b2frame::chunk::CParams;
use b2frame::ndim::{self, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};
use common::Rng;

fn below(rng: &mut Rng, n: i64) -> i64 {
    (rng.next_u64() % n as u64) as i64
}

/// Copies between the model (whole array, C order) and a slab buffer.
fn model_slab(
    shape: &[i64],
    model: &mut [u8],
    start: &[i64],
    stop: &[i64],
    slab: &mut [u8],
    item: usize,
    write: bool,
) {
    let nd = shape.len();
    let count: i64 = start.iter().zip(stop).map(|(a, b)| b - a).product();
    let mut idx = start.to_vec();
    for k in 0..count as usize {
        let mut off = 0i64;
        for d in 0..nd {
            off = off * shape[d] + idx[d];
        }
        let (m, s) = (off as usize * item, k * item);
        if write {
            model[m..m + item].copy_from_slice(&slab[s..s + item]);
        } else {
            slab[s..s + item].copy_from_slice(&model[m..m + item]);
        }
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < stop[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
}

fn random_slab(rng: &mut Rng, shape: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let start: Vec<i64> = shape.iter().map(|&s| below(rng, s + 1)).collect();
    let stop = start
        .iter()
        .zip(shape)
        .map(|(&a, &s)| a + below(rng, s - a + 1))
        .collect();
    (start, stop)
}

fn run(seed: u64, nd: usize, dtype: &str, nthreads: usize, where_: &str) {
    let mut rng = Rng::new(seed);
    let shape: Vec<i64> = (0..nd).map(|_| 1 + below(&mut rng, 14)).collect();
    let chunkshape: Vec<i32> = shape
        .iter()
        .map(|&s| 1 + below(&mut rng, s) as i32)
        .collect();
    let blockshape: Vec<i32> = chunkshape
        .iter()
        .map(|&c| 1 + below(&mut rng, c as i64) as i32)
        .collect();
    let meta = NdMeta {
        version: 0,
        shape: shape.clone(),
        chunkshape,
        blockshape,
        dtype_format: 0,
        dtype: Some(dtype.into()),
    };
    let item = ndim::dtype::itemsize(dtype).unwrap();
    let dir = std::env::temp_dir().join(format!(
        "b2f-ndim-rt-{}-{seed}-{where_}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let path = (where_ != "mem").then_some(dir.as_path());
    let opts = CreateOptions {
        contiguous: where_ != "sparse",
        chunksize: 0,
        params: CParams {
            typesize: item,
            nthreads,
            clevel: 5,
            codec: 5,
            ..CParams::default()
        },
        sync: false,
    };
    let nitems: i64 = shape.iter().product();
    let mut model = vec![0u8; nitems as usize * item];
    let s = ndim::slice::create(path, &opts, &meta).unwrap();
    let ctx = format!("seed {seed} shape {shape:?} {meta:?} {where_}");
    for step in 0..12 {
        let a = Array::open(&s).unwrap();
        let (start, stop) = random_slab(&mut rng, &shape);
        let n: i64 = start.iter().zip(&stop).map(|(a, b)| b - a).product();
        if step % 2 == 0 {
            let data = rng.bytes(n as usize * item);
            a.set_slice(&start, &stop, &data)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let mut d = data.clone();
            model_slab(&shape, &mut model, &start, &stop, &mut d, item, true);
        }
        let mut got = vec![0u8; n as usize * item];
        a.get_slice(&start, &stop, &mut got).unwrap();
        let mut want = vec![0u8; got.len()];
        model_slab(&shape, &mut model, &start, &stop, &mut want, item, false);
        assert_eq!(got, want, "{ctx}: step {step} slab {start:?}..{stop:?}");
    }
    let reopened = match where_ {
        "mem" => SChunk::open_buffer(s.to_buffer().unwrap()).unwrap(),
        _ => {
            drop(s);
            SChunk::open(&dir, false).unwrap()
        }
    };
    let a = Array::open(&reopened).unwrap();
    let mut whole = vec![0u8; model.len()];
    a.get_slice(&vec![0; nd], &shape, &mut whole).unwrap();
    assert_eq!(whole, model, "{ctx}: after reopening");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&dir);
}

#[test]
fn random_slabs_match_a_model() {
    let dtypes = [
        "|u1",
        "<i2",
        "<f4",
        "<f8",
        "|S3",
        "<c16",
        "[('a', '<i4'), ('b', '|S3')]",
    ];
    let places = ["mem", "cframe", "sparse"];
    for seed in 0..42u64 {
        let nd = (seed % 6) as usize;
        let dtype = dtypes[(seed / 6) as usize % dtypes.len()];
        run(
            seed,
            nd,
            dtype,
            1 + (seed % 2) as usize,
            places[(seed % 3) as usize],
        );
    }
}
