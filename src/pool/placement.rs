//! Where a pool's workers may run: anywhere their threads were allowed to start, but the CPU
//! of the thread that calls into the pool, which works beside them (see
//! [`super::on_each_thread`] for why). Linux only; elsewhere the workers go where the
//! scheduler puts them.
//!
//! Only our own worker threads are ever restricted, never a caller's thread, and never to
//! fewer CPUs than they started with but one. A call from another CPU moves the restriction
//! there (one `sched_setaffinity` per worker, skipped while the caller stays on its CPU).

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::Mutex;

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
    }

    impl Placement {
        pub fn new(nworkers: usize) -> Placement {
            Placement {
                workers: Mutex::new(Vec::with_capacity(nworkers)),
                nworkers,
                // The workers inherit the creating thread's affinity.
                allowed: sched_getaffinity(None).unwrap_or_else(|_| CpuSet::new()),
                off: AtomicUsize::new(0),
            }
        }

        /// Called by each worker as it starts.
        pub fn add_current_thread(&self) {
            self.workers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(gettid());
        }

        /// Keeps the workers (once all have started) off the calling thread's CPU.
        pub fn keep_off_current_cpu(&self) {
            self.keep_off(sched_getcpu());
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
