//! Resource limits, one test per limit: no allocation larger than the input can justify.
//! A counting global allocator records the largest live heap of each scenario, so "never
//! allocated" is measured, not assumed. The tests share one lock: the counters are global.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use b2frame::chunk::{self, CParams, Context};
use b2frame::ndim::Array;
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::Error;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the most heap it held live beyond what was live
/// before.
fn peak_heap<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

const MIB: usize = 1 << 20;

fn opts() -> CreateOptions {
    CreateOptions {
        contiguous: true,
        chunksize: 0,
        params: CParams::default(),
        sync: false,
    }
}

/// A contiguous frame file that c-blosc2 writes with `fill_special` (in-memory frames would
/// be expanded by `to_cframe`, so it goes through a file).
fn special_frame_by_c_blosc2(chunksize: usize, nitems: i64) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!(
        "b2f-limits-{}-{chunksize}.b2frame",
        std::process::id()
    ));
    common::run_python(
        &format!(
            "import blosc2\n\
             s = blosc2.SChunk(chunksize={chunksize}, cparams={{'typesize': 8}}, urlpath={:?},\n\
                               contiguous=True, mode='w')\n\
             s.fill_special({nitems}, blosc2.SpecialValue.ZERO)\n",
            path.to_str().unwrap()
        ),
        b"",
    );
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

/// c-blosc2's fill_special writes 2^40 bytes of zeros as a 172-byte frame whose index is one
/// repeated-value chunk standing for 33,554,432 offsets. It opens and reads here without the
/// index (400 MB as lists) or the data ever being allocated.
#[test]
fn a_tiny_frame_claiming_a_terabyte_is_streamed_never_allocated() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = special_frame_by_c_blosc2(32768, (1 << 40) / 8);
    assert!(bytes.len() < 4096, "{} bytes", bytes.len());
    let ((), peak) = peak_heap(|| {
        let s = SChunk::open_buffer(bytes.clone()).unwrap();
        let info = s.info();
        assert_eq!(info.nbytes, 1 << 40);
        assert_eq!(info.nchunks, 1 << 25);
        // Whole chunks and slices go to the caller's buffers: zeros anywhere.
        let mut buf = vec![0xAAu8; 32768];
        assert_eq!(s.get_chunk((1 << 25) - 1, &mut buf).unwrap(), 32768);
        assert!(buf.iter().all(|&b| b == 0));
        buf.fill(0xAA);
        let mid = (1i64 << 36) + 3;
        s.get_slice(mid, mid + 4096, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
        // A chunk does not fit a smaller buffer: an error, not a bigger allocation.
        let mut small = [0u8; 100];
        assert!(matches!(
            s.get_chunk(7, &mut small),
            Err(Error::BufferTooSmall { needed: 32768, .. })
        ));
    });
    assert!(peak < 4 * MIB, "peak heap {peak} bytes");
}

/// The same for an n-dimensional array: python-blosc2's `zeros` of 8 TiB (2^20 chunks) is a
/// 240-byte file; reading a slab costs the slab.
#[test]
fn an_empty_8_tib_array_reads_a_slab_in_bounded_memory() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("b2f-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zeros.b2nd");
    common::run_python(
        &format!(
            "import blosc2, numpy as np\n\
             blosc2.zeros((1 << 20, 1 << 20), dtype=np.float64, urlpath={:?}, mode='w',\n\
                          chunks=(1024, 1024), blocks=(128, 128))\n",
            path.to_str().unwrap()
        ),
        b"",
    );
    assert!(std::fs::metadata(&path).unwrap().len() < 4096);
    let ((), peak) = peak_heap(|| {
        let s = SChunk::open(&path, false).unwrap();
        let a = Array::open(&s).unwrap();
        assert_eq!(a.meta.shape, vec![1 << 20, 1 << 20]);
        let mut out = vec![0xAAu8; 300 * 200 * 8];
        a.get_slice(&[700_000, 123_456], &[700_300, 123_656], &mut out)
            .unwrap();
        assert!(out.iter().all(|&b| b == 0));
    });
    assert!(peak < 4 * MIB, "peak heap {peak} bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A forged ordinary index chunk (three 512 MiB blocks of all-zero streams: 56 bytes) claiming
/// 200 million offsets is refused before the 1.6 GB it claims is allocated.
#[test]
fn a_forged_index_claiming_gigabytes_is_refused_before_allocating() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = special_frame_by_c_blosc2(8, 200_000_000);
    // The index is a 40-byte repeated-value chunk right after the header (no data chunks).
    let header_len = u32::from_be_bytes(bytes[11..15].try_into().unwrap()) as usize;
    let old = &bytes[header_len..header_len + 40];
    let nbytes = i32::from_le_bytes(old[4..8].try_into().unwrap());
    assert_eq!(nbytes, 200_000_000 * 8);
    assert_eq!(i32::from_le_bytes(old[12..16].try_into().unwrap()), 40);
    let blocksize: i32 = 536_866_816; // the largest a chunk header may declare
    let nblocks = (nbytes + blocksize - 1) / blocksize;
    let cbytes = 32 + 8 * nblocks;
    let mut ix = old[..32].to_vec();
    ix[31] &= !0x70; // not special: an ordinary chunk of unsplit streams
    ix[2] |= 0x10;
    ix[8..12].copy_from_slice(&blocksize.to_le_bytes());
    ix[12..16].copy_from_slice(&cbytes.to_le_bytes());
    for j in 0..nblocks {
        ix.extend_from_slice(&(32 + 4 * nblocks + 4 * j).to_le_bytes()); // block starts
    }
    ix.extend(std::iter::repeat_n(0u8, 4 * nblocks as usize)); // csize 0: all zeros
    let mut forged = bytes[..header_len].to_vec();
    forged.extend_from_slice(&ix);
    forged.extend_from_slice(&bytes[header_len + 40..]);
    let frame_len = forged.len() as u64;
    forged[16..24].copy_from_slice(&frame_len.to_be_bytes());
    let (r, peak) =
        peak_heap(|| SChunk::open_buffer(forged.clone()).and_then(|s| s.get_chunk_vec(0)));
    match r {
        Err(Error::NoMemory(m)) => assert!(m.contains("frame index"), "{m}"),
        Err(e) => panic!("expected a size-limit error, got {e:?}"),
        Ok(_) => panic!("the forged index was accepted"),
    }
    assert!(peak < 4 * MIB, "peak heap {peak} bytes");
}

/// A 64 MiB decompression bomb (a few KiB of all-zero streams) decodes only into a buffer the
/// caller sized: a smaller one is an error, and nothing is allocated on the bomb's word.
#[test]
fn decompression_bombs_are_bounded_by_the_callers_buffer() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let zeros = vec![0u8; 64 * MIB];
    let bomb = Context::new(CParams::default())
        .unwrap()
        .compress_to_vec(&zeros)
        .unwrap();
    drop(zeros);
    assert!(bomb.len() < 64 * 1024, "{} bytes", bomb.len());
    let ((), peak) = peak_heap(|| {
        let mut dst = vec![0u8; MIB];
        assert!(matches!(
            chunk::decompress(&bomb, &mut dst),
            Err(Error::BufferTooSmall { needed, .. }) if needed == 64 * MIB
        ));
        assert!(matches!(
            chunk::decompress_to_vec(&bomb, MIB),
            Err(Error::NoMemory(_))
        ));
        // Stored in a frame, the same: the caller's buffer bounds it.
        let s = SChunk::create(None, &opts()).unwrap();
        s.append_chunk(&bomb).unwrap();
        assert!(matches!(
            s.get_chunk(0, &mut dst),
            Err(Error::BufferTooSmall { .. })
        ));
    });
    assert!(peak < 4 * MIB, "peak heap {peak} bytes");
}

/// A metalayer or vlmetalayer whose length field claims 4 GiB in a small frame is refused
/// without allocating it.
#[test]
fn metalayer_lengths_beyond_the_frame_are_refused_without_allocating() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = SChunk::create(None, &opts()).unwrap();
    s.meta_add("big", &[7u8; 10]).unwrap();
    s.vlmeta_set("vbig", &[9u8; 10]).unwrap();
    s.append(&[1u8; 1000]).unwrap();
    let good = s.to_buffer().unwrap();
    // The metalayer content: 0xC6 + u32 length right before the 10 bytes of 7s.
    let at = good.windows(11).position(|w| w[1..] == [7u8; 10]).unwrap();
    assert_eq!(good[at - 4], 0xC6);
    let mut meta_bomb = good.clone();
    meta_bomb[at - 3..at + 1].copy_from_slice(&u32::MAX.to_be_bytes());
    // The vlmetalayer's stored chunk: its 0xC6 length in the trailer.
    let trailer_len =
        u32::from_be_bytes(good[good.len() - 22..good.len() - 18].try_into().unwrap());
    let tstart = good.len() - trailer_len as usize;
    let c6 = tstart + good[tstart..].iter().position(|&b| b == 0xC6).unwrap();
    let mut vl_bomb = good.clone();
    vl_bomb[c6 + 1..c6 + 5].copy_from_slice(&u32::MAX.to_be_bytes());
    for (what, bytes) in [("metalayer", meta_bomb), ("vlmetalayer", vl_bomb)] {
        let (r, peak) = peak_heap(|| {
            SChunk::open_buffer(bytes.clone()).and_then(|s| {
                s.meta_get("big")?;
                s.vlmeta_get("vbig", MIB)
            })
        });
        assert!(matches!(r, Err(Error::Corrupt(_))), "{what}: {r:?}");
        assert!(
            peak < bytes.len() * 4 + MIB,
            "{what}: peak heap {peak} bytes"
        );
    }
}

/// A vlmetalayer whose stored chunk claims more than the caller allows is refused by size.
#[test]
fn vlmetalayer_content_is_bounded_by_the_callers_limit() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = SChunk::create(None, &opts()).unwrap();
    s.vlmeta_set("zeros", &vec![0u8; 8 * MIB]).unwrap();
    let ((), peak) = peak_heap(|| {
        assert_eq!(s.vlmeta_len("zeros").unwrap(), 8 * MIB);
        assert!(matches!(
            s.vlmeta_get("zeros", MIB),
            Err(Error::NoMemory(_)) | Err(Error::BufferTooSmall { .. })
        ));
    });
    assert!(peak < 2 * MIB, "peak heap {peak} bytes");
}

/// Deeply nested structured dtypes (msgpack strings holding Python literals) are refused with
/// a clear error, not a stack overflow.
#[test]
fn deeply_nested_dtype_is_rejected() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let deep = format!(
        "{}('a', '<i4'){}",
        "[('x', ".repeat(100_000),
        ")]".repeat(100_000)
    );
    let m = b2frame::ndim::NdMeta {
        version: 0,
        shape: vec![4],
        chunkshape: vec![4],
        blockshape: vec![4],
        dtype_format: 0,
        dtype: Some(deep),
    };
    let s = SChunk::create(None, &opts()).unwrap();
    s.meta_add("b2nd", &b2frame::ndim::meta::encode(&m))
        .unwrap();
    match Array::open(&s) {
        Err(Error::Corrupt(msg)) | Err(Error::Unsupported(msg)) => {
            assert!(msg.contains("dtype"), "{msg}")
        }
        Err(e) => panic!("unexpected error {e:?}"),
        Ok(_) => panic!("a 100,000-deep dtype was accepted"),
    }
}
