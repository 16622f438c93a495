//! Worker pools for block-level parallelism. Like c-blosc2's shared pools, one pool per
//! thread count lives for the whole process and is shared by every context asking for that
//! many threads: contexts never spawn threads per call. One thread means no pool at all.
//!
//! A pool of `n` threads is the calling thread and `n - 1` workers: the caller works too,
//! rather than waiting while `n` workers run. Waiting workers spin for a while before they
//! sleep, and with as many workers as CPUs they kept CPUs busy that other threads needed
//! (with c-blosc2's threads in the same process, 2 threads, 2 CPUs: 16 of 75 benchmark cases
//! compressed and 9 decompressed slower than c-blosc2; with the caller working, 8 and 1).
//! The workers are kept off the caller's CPU: see [`on_each_thread`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::memcopy;

mod placement;

/// Worker threads for block-level parallelism.
pub struct Pool {
    workers: Option<&'static Workers>,
    nthreads: usize,
}

/// The workers of each thread count, started on first use and kept for the life of the
/// process, as c-blosc2 keeps its pools.
fn registry() -> &'static Mutex<HashMap<usize, &'static Workers>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, &'static Workers>>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Thread counts below this find their workers without the registry's lock: every call
/// with `nthreads` > 1 asks, and for a 4 KiB chunk the lock, the map and the reference count
/// were a sixth of a decode.
const UNLOCKED_POOLS: usize = 64;
static UNLOCKED: [OnceLock<&'static Workers>; UNLOCKED_POOLS] =
    [const { OnceLock::new() }; UNLOCKED_POOLS];

/// The process's workers for `nthreads` (2 or more), started on first use. Every call that
/// passes `nthreads` > 1 comes here, so this stays a load and a compare, the first use in
/// [`start_workers`].
#[inline(never)]
fn workers_for(nthreads: usize) -> Result<&'static Workers> {
    match UNLOCKED.get(nthreads).and_then(OnceLock::get) {
        Some(w) => Ok(w),
        None => start_workers(nthreads),
    }
}

/// [`workers_for`] the first time (or past [`UNLOCKED_POOLS`]). In one function with the
/// common path, this path's frame made every call save and restore six registers: 34
/// instructions a call (16 now), against 690 for a whole 1 KiB decode. Inlined into its
/// callers instead, the common path cost the serial calls 5 instructions more.
#[cold]
#[inline(never)]
fn start_workers(nthreads: usize) -> Result<&'static Workers> {
    let mut pools = registry().lock().unwrap_or_else(|e| e.into_inner());
    let workers = match pools.get(&nthreads) {
        Some(&w) => w,
        None => {
            let w: &'static Workers = Box::leak(Box::new(Workers::new(nthreads)?));
            pools.insert(nthreads, w);
            w
        }
    };
    if let Some(slot) = UNLOCKED.get(nthreads) {
        let _ = slot.set(workers);
    }
    Ok(workers)
}

/// The `nthreads - 1` workers of a pool of `nthreads` (2 or more), beside the calling thread.
pub struct Workers {
    pool: rayon::ThreadPool,
    placement: Arc<placement::Placement>,
}

impl Workers {
    fn new(nthreads: usize) -> Result<Workers> {
        let placement = Arc::new(placement::Placement::new(nthreads - 1));
        let starting = Arc::clone(&placement);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(nthreads - 1)
            .thread_name(move |i| format!("b2frame-{nthreads}-{i}"))
            .start_handler(move |_| starting.add_current_thread())
            .build()
            .map_err(|e| Error::Internal(format!("cannot start {nthreads} threads: {e}")))?;
        Ok(Workers { pool, placement })
    }
}

impl Pool {
    /// A pool of `nthreads` workers (1 = serial, no threads).
    #[inline]
    pub fn new(nthreads: usize) -> Result<Pool> {
        if nthreads == 0 {
            return Err(Error::invalid("nthreads must be at least 1"));
        }
        if nthreads == 1 {
            return Ok(Pool::serial());
        }
        Ok(Pool {
            workers: Some(workers_for(nthreads)?),
            nthreads,
        })
    }

    /// No workers: everything runs on the calling thread.
    pub const fn serial() -> Pool {
        Pool {
            workers: None,
            nthreads: 1,
        }
    }

    pub fn nthreads(&self) -> usize {
        self.nthreads
    }

    /// The workers for [`on_each_thread`], when there is more than one thread.
    pub fn workers(&self) -> Option<&Workers> {
        self.workers
    }

    /// Runs `f(offset, piece)` over `dst` cut into pieces of at most `PIECE` bytes, each
    /// but the last a multiple of `align` bytes (so a periodic fill stays in phase), that the
    /// threads claim as they come. Small buffers, or a serial pool, get one call on this
    /// thread. For memory-bound copies and fills, which two threads run faster than one, as
    /// c-blosc2's blockwise copies do.
    pub fn split_mut(&self, dst: &mut [u8], align: usize, f: impl Fn(usize, &mut [u8]) + Sync) {
        match self.workers().filter(|_| dst.len() >= PARALLEL_BYTES) {
            None => f(0, dst),
            Some(pool) => {
                let piece = dst
                    .len()
                    .div_ceil(self.nthreads)
                    .min(PIECE)
                    .next_multiple_of(align.max(1));
                let pieces = dst.chunks_mut(piece).enumerate();
                // Copies and fills cannot fail: the result is always Ok.
                let _ = for_each_claimed(pool, pieces, |(i, d)| {
                    f(i * piece, d);
                    Ok(())
                });
            }
        }
    }

    /// `f` over `items` on the pool's threads, results in the items' order; the first error,
    /// if any. One item, or a serial pool, runs on this thread.
    pub fn map<T: Sync, R: Send>(
        &self,
        items: &[T],
        f: impl Fn(&T) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        let Some(pool) = self.workers().filter(|_| items.len() > 1) else {
            return items.iter().map(f).collect();
        };
        let done = Mutex::new(Vec::with_capacity(items.len()));
        for_each_claimed(pool, items.iter().enumerate(), |(i, item)| {
            let r = f(item)?;
            done.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
            Ok(())
        })?;
        let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
        done.sort_unstable_by_key(|&(i, _)| i);
        Ok(done.into_iter().map(|(_, r)| r).collect())
    }

    /// `dst.copy_from_slice(src)`, split over the threads when large, in pieces of at most
    /// `PIECE` bytes (on one thread too), as c-blosc2 copies a memcpyed chunk block by block:
    /// on an AMD EPYC (Zen 5), one 8 MiB `memcpy` ran 3-5% slower than the same bytes in
    /// 128-512 KiB calls.
    pub fn copy(&self, dst: &mut [u8], src: &[u8]) {
        self.split_mut(dst, 1, |at, d| {
            let src = &src[at..at + d.len()];
            // A whole buffer when split_mut keeps it on this thread.
            for (d, s) in d.chunks_mut(PIECE).zip(src.chunks(PIECE)) {
                memcopy::copy(d, s);
            }
        });
    }
}

/// Runs `work` once on the calling thread and once on every worker beside it, at once, and
/// returns the first error. Each is meant to loop, claiming items until none are left, as
/// c-blosc2's threads do. Every worker gets the job directly (a broadcast), rather than one
/// starting and the others waking up to steal: decompression with shuffle on 2 threads ran
/// about 4% faster. A caller done with its share waits awake for the workers, yielding its
/// CPU, for up to [`FINISH_WAIT`] before it sleeps.
///
/// The workers are kept off the calling thread's CPU (Linux; src/pool/placement.rs): Linux
/// may queue a woken worker behind the caller on the caller's CPU while another CPU idles
/// (on a busy machine it does not look for an idle CPU at wake-up), and the worker, having
/// last run there, is woken there call after call while the caller does all the work. With
/// c-blosc2's threads alternating in one process, 2 threads, shuffled smooth_f64 LZ4
/// decompression: 30-55% of the calls took 600-730 us, the rest 1,140-1,250 (one thread's
/// time), the worker having waited 1.1-1.2 ms in the caller's run queue (`perf sched`);
/// kept off, 615-680 us median and under 750 us in 90% of the calls.
pub fn on_each_thread(workers: &Workers, work: impl Fn() -> Result<()> + Sync) -> Result<()> {
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let run = || {
        if let Err(e) = work() {
            failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(e);
        }
    };
    // A worker of a pool (ours, nested, or the user's) may owe its pool work of its own:
    // it works and waits as rayon has it, and its CPU is its pool's business.
    let nested = rayon::current_thread_index().is_some();
    let pool = &workers.pool;
    if !nested {
        workers.placement.keep_off_current_cpu();
    }
    let working = AtomicUsize::new(pool.current_num_threads());
    pool.in_place_scope(|scope| {
        scope.spawn_broadcast(|_, _| {
            run();
            working.fetch_sub(1, Ordering::Release);
        });
        run();
        if nested {
            return;
        }
        // The scope's own wait puts this thread to sleep at once, and when the last worker
        // finishes it must wake it on a CPU that has gone idle meanwhile: on 2 threads, 1-5% of
        // a 400 us decode.
        let since = Instant::now();
        while working.load(Ordering::Acquire) != 0 && since.elapsed() < FINISH_WAIT {
            // Not a bare spin: with more threads than free CPUs, a worker gets this one.
            std::thread::yield_now();
        }
    });
    match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// How long a caller done with its share of [`on_each_thread`] waits awake for the workers:
/// about the time a worker takes over a 256 KiB block of the faster codecs. Longer work costs
/// at most this much CPU per call, and no time. (2 threads, the benchmark's 75 cases:
/// decompression 1.22 -> 1.28 of c-blosc2's speed, geometric mean, rows below 1.0 5 -> 0;
/// compression 1.25 -> 1.28.)
const FINISH_WAIT: Duration = Duration::from_micros(100);

/// Runs `f` over `items` with [`on_each_thread`], each thread claiming the next item from a
/// shared queue until none are left. After an error the failing thread empties the queue, so
/// the others start nothing more, and the first error is returned.
pub fn for_each_claimed<T>(
    pool: &Workers,
    items: impl Iterator<Item = T> + Send,
    f: impl Fn(T) -> Result<()> + Sync,
) -> Result<()> {
    let queue = Mutex::new(items);
    let claim = || queue.lock().unwrap_or_else(|e| e.into_inner()).next();
    on_each_thread(pool, || {
        while let Some(item) = claim() {
            if let Err(e) = f(item) {
                while claim().is_some() {}
                return Err(e);
            }
        }
        Ok(())
    })
}

/// Below this many bytes a copy or fill stays on the calling thread: handing it to the workers
/// costs more than it saves.
const PARALLEL_BYTES: usize = 1 << 20;

/// The largest piece of [`Pool::split_mut`], and so the largest single `memcpy` of
/// [`Pool::copy`]. With one piece per thread, the caller finished its half and then waited for
/// a worker that had gone to sleep since the last call: an 8 MiB zero fill on 2 threads,
/// alternating with c-blosc2's (whose threads claim 256 KiB blocks), ran at 0.78-0.94 of its
/// speed.
const PIECE: usize = 256 << 10;

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("nthreads", &self.nthreads)
            .finish()
    }
}

/// Buffers kept between calls (up to `max_bytes` of them), so work split over blocks does not
/// allocate, zero and fault in fresh memory for every block.
pub struct BufferStash {
    spare: Mutex<Vec<Vec<u8>>>,
    max_bytes: usize,
}

impl BufferStash {
    pub const fn new(max_bytes: usize) -> BufferStash {
        BufferStash {
            spare: Mutex::new(Vec::new()),
            max_bytes,
        }
    }

    /// A buffer of `len` bytes; what it holds is stale data the caller overwrites.
    pub fn take(&self, len: usize) -> Vec<u8> {
        let mut b = self
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        b.resize(len, 0);
        b
    }

    /// Keeps `buffers` for later calls (the last one given is the first taken), those that
    /// fit within the byte limit.
    pub fn give_back(&self, buffers: impl IntoIterator<Item = Vec<u8>>) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        let mut held: usize = spare.iter().map(Vec::capacity).sum();
        for b in buffers {
            if held + b.capacity() > self.max_bytes {
                continue;
            }
            held += b.capacity();
            spare.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_caller_and_every_worker() {
        for nthreads in [2, 3] {
            let pool = Pool::new(nthreads).unwrap();
            let ran = Mutex::new(Vec::new());
            on_each_thread(pool.workers().unwrap(), || {
                ran.lock().unwrap().push(std::thread::current().id());
                Ok(())
            })
            .unwrap();
            let mut ran = ran.into_inner().unwrap();
            assert!(
                ran.contains(&std::thread::current().id()),
                "the caller did not work"
            );
            ran.sort_by_key(|id| format!("{id:?}"));
            ran.dedup();
            assert_eq!(ran.len(), nthreads, "{nthreads} threads");
        }
    }

    #[test]
    fn callers_wait_for_slow_workers_and_workers_of_other_pools_can_call() {
        let pool = Pool::new(3).unwrap();
        let caller = std::thread::current().id();
        let call = |caller| {
            let done = AtomicUsize::new(0);
            on_each_thread(pool.workers().unwrap(), || {
                if std::thread::current().id() != caller {
                    // Well past FINISH_WAIT: the caller must go on to wait asleep.
                    std::thread::sleep(FINISH_WAIT * 20);
                }
                done.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
            .unwrap();
            done.into_inner()
        };
        assert_eq!(call(caller), 3);
        let other = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(other.install(|| call(std::thread::current().id())), 3);
    }

    /// A pool of its own (the shared ones move with other tests' calls), every worker
    /// started (and so registered: each has run a job), and the CPUs it may use.
    #[cfg(target_os = "linux")]
    fn started_workers(nthreads: usize) -> (Workers, Vec<usize>) {
        let workers = Workers::new(nthreads).unwrap();
        workers.pool.broadcast(|_| ());
        let allowed = workers.placement.allowed();
        assert!(!allowed.is_empty());
        (workers, allowed)
    }

    /// Each worker's CPU mask.
    #[cfg(target_os = "linux")]
    fn worker_masks(workers: &Workers) -> Vec<rustix::thread::CpuSet> {
        workers
            .pool
            .broadcast(|_| rustix::thread::sched_getaffinity(None).unwrap())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn workers_are_kept_off_the_callers_cpu_and_on_every_other() {
        let (workers, allowed) = started_workers(3);
        for &cpu in &allowed {
            workers.placement.keep_off(cpu);
            for mask in worker_masks(&workers) {
                for &c in &allowed {
                    // With one CPU allowed there is nowhere else: the workers stay on it.
                    let expected = c != cpu || allowed.len() == 1;
                    assert_eq!(mask.is_set(c), expected, "CPU {c}, kept off {cpu}");
                }
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn workers_move_at_most_once_per_interval() {
        use std::time::Duration;
        let (workers, allowed) = started_workers(2);
        let [a, b, ..] = allowed[..] else {
            return; // one CPU: the workers never move
        };
        let masks = || worker_masks(&workers);
        let at = Duration::from_millis;
        let placement = &workers.placement;
        placement.keep_off_unless_recent(a, at(1));
        assert!(masks().iter().all(|m| !m.is_set(a) && m.is_set(b)));
        // Another CPU soon after: held back.
        placement.keep_off_unless_recent(b, at(1) + placement::MIN_MOVE_INTERVAL / 2);
        assert!(masks().iter().all(|m| !m.is_set(a) && m.is_set(b)));
        // Once the interval has passed, the workers move.
        placement.keep_off_unless_recent(b, at(1) + placement::MIN_MOVE_INTERVAL);
        assert!(masks().iter().all(|m| m.is_set(a) && !m.is_set(b)));
    }

    #[test]
    fn map_keeps_the_order_and_returns_the_first_error() {
        let items: Vec<usize> = (0..100).collect();
        for nthreads in [1, 2, 3] {
            let pool = Pool::new(nthreads).unwrap();
            let squares = pool.map(&items, |&i| Ok(i * i)).unwrap();
            assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
            let failed = pool.map(&items, |&i| {
                if i == 37 {
                    Err(Error::invalid("item 37"))
                } else {
                    Ok(i)
                }
            });
            assert!(failed.unwrap_err().to_string().contains("item 37"));
        }
    }

    #[test]
    fn split_mut_covers_every_byte_once_in_aligned_pieces() {
        let len = 5 * PIECE + 1_000;
        for (nthreads, align) in [(1, 1), (2, 1), (2, 3), (3, 8), (2, 7)] {
            let pool = Pool::new(nthreads).unwrap();
            let mut dst = vec![0u8; len];
            let pieces = Mutex::new(Vec::new());
            pool.split_mut(&mut dst, align, |at, piece| {
                piece.iter_mut().for_each(|b| *b += 1);
                pieces.lock().unwrap().push((at, piece.len()));
            });
            assert!(
                dst.iter().all(|&b| b == 1),
                "{nthreads} threads, align {align}"
            );
            let mut pieces = pieces.into_inner().unwrap();
            pieces.sort_unstable();
            let mut next = 0;
            for (i, &(at, n)) in pieces.iter().enumerate() {
                assert_eq!(
                    at, next,
                    "{nthreads} threads, align {align}: a gap or an overlap"
                );
                if i + 1 < pieces.len() {
                    assert_eq!(n % align, 0, "piece of {n} bytes, align {align}");
                    assert!(n < PIECE + align, "piece of {n} bytes");
                }
                next = at + n;
            }
            // More pieces than threads: a worker late to wake leaves its share to the others.
            if nthreads > 1 {
                assert!(pieces.len() > nthreads, "{} pieces", pieces.len());
            }
        }
    }

    #[test]
    fn copy_moves_every_byte_in_pieces_and_across_threads() {
        let src: Vec<u8> = (0..3 * PIECE as u32 + 12_345)
            .map(|i| (i ^ (i >> 9)) as u8)
            .collect();
        for nthreads in [1, 2, 3] {
            let pool = Pool::new(nthreads).unwrap();
            for len in [0, 1, PIECE - 1, PIECE, PIECE + 1, src.len()] {
                let mut dst = vec![0u8; len];
                pool.copy(&mut dst, &src[src.len() - len..]);
                assert!(
                    dst == src[src.len() - len..],
                    "{nthreads} threads, {len} bytes"
                );
            }
        }
    }
}
