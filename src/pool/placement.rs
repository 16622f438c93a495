//! Where a pool's workers may run: anywhere their threads were allowed to start, but the CPU
//! of the thread that calls into the pool, which works beside them (see
//! [`super::on_each_thread`] for why). Linux only; elsewhere the workers go where the
//! scheduler puts them.
//!
//! Only our own worker threads are ever restricted, never a caller's thread, and never to
//! fewer CPUs than they started with but one. A call from another CPU moves the restriction
//! there (one `sched_setaffinity` per worker, skipped while the caller stays on its CPU), but
//! not sooner than `MIN_MOVE_INTERVAL` (10 ms) after the last move: callers on several CPUs
//! at once would otherwise move the workers at nearly every call. (A move that finds some
//! workers not yet started is retried after the interval too.)

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use rustix::thread::{gettid, sched_getaffinity, sched_getcpu, sched_setaffinity};
    use rustix::thread::{CpuSet, Pid};

    pub struct Placement {
        /// The workers' thread ids, as they start.
        workers: Mutex<Vec<Pid>>,
        /// How many workers the pool starts.
        nworkers: usize,
        /// The CPUs the workers may run on, as the pool's creator was allowed.
        allowed: CpuSet,
        /// The CPU the workers are kept off, plus one (0: none yet).
        off: AtomicUsize,
        /// When the workers were last moved: nanoseconds since `epoch`, plus one (0: never).
        moved: AtomicU64,
        epoch: Instant,
    }

    /// The shortest time between two moves of the workers. A lone caller changes CPU rarely
    /// (6 calls in 1,000 in a loop of 8 MiB decodes here), so a move is seldom held back.
    /// Two callers on 2 CPUs sharing one pool moved them at a third of their calls, of 1 and 2
    /// MiB chunks, and together decoded 12-16% less than one caller alone.
    pub const MIN_MOVE_INTERVAL: Duration = Duration::from_millis(10);

    impl Placement {
        pub fn new(nworkers: usize) -> Placement {
            Placement {
                workers: Mutex::new(Vec::with_capacity(nworkers)),
                nworkers,
                // The workers inherit the creating thread's affinity.
                allowed: sched_getaffinity(None).unwrap_or_else(|_| CpuSet::new()),
                off: AtomicUsize::new(0),
                moved: AtomicU64::new(0),
                epoch: Instant::now(),
            }
        }

        /// Called by each worker as it starts.
        pub fn add_current_thread(&self) {
            self.workers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(gettid());
        }

        /// Keeps the workers (once all have started) off the calling thread's CPU, unless
        /// they were moved less than [`MIN_MOVE_INTERVAL`] ago.
        pub fn keep_off_current_cpu(&self) {
            self.keep_off_unless_recent(sched_getcpu(), self.epoch.elapsed());
        }

        /// Keeps the workers off `cpu` at time `now` (since `epoch`), unless they were moved
        /// less than [`MIN_MOVE_INTERVAL`] before.
        pub fn keep_off_unless_recent(&self, cpu: usize, now: Duration) {
            if self.off.load(Relaxed) == cpu + 1 {
                return;
            }
            let now = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX - 1);
            let moved = self.moved.load(Relaxed);
            if moved != 0 && now.saturating_sub(moved - 1) < MIN_MOVE_INTERVAL.as_nanos() as u64 {
                return;
            }
            self.moved.store(now + 1, Relaxed);
            self.keep_off(cpu);
        }

        pub fn keep_off(&self, cpu: usize) {
            if self.off.load(Relaxed) == cpu + 1 {
                return;
            }
            let mut set = self.allowed;
            set.unset(cpu);
            if set.count() == 0 {
                // One CPU for everything: nowhere else to go.
                return;
            }
            let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
            for &tid in workers.iter() {
                // A failure (a CPU gone offline) leaves that worker where it was allowed.
                let _ = sched_setaffinity(Some(tid), &set);
            }
            // Until every worker has started and been placed, the next call places them.
            if workers.len() == self.nworkers {
                self.off.store(cpu + 1, Relaxed);
            }
        }

        /// The CPUs the workers were started with.
        #[cfg(test)]
        pub fn allowed(&self) -> Vec<usize> {
            (0..CpuSet::MAX_CPU)
                .filter(|&c| self.allowed.is_set(c))
                .collect()
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub struct Placement;

    impl Placement {
        pub fn new(_nworkers: usize) -> Placement {
            Placement
        }

        pub fn add_current_thread(&self) {}

        pub fn keep_off_current_cpu(&self) {}
    }
}

pub use imp::Placement;
#[cfg(all(target_os = "linux", test))]
pub use imp::MIN_MOVE_INTERVAL;
