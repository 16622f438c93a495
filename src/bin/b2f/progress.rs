//! A progress bar with throughput on stderr, drawn only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    started: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
}

impl Progress {
    /// A bar for `total` bytes of work.
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        Progress {
            label: label.into(),
            total,
            done: 0,
            started: Instant::now(),
            last_draw: None,
            enabled: std::io::stderr().is_terminal()
                && std::env::var_os("B2F_NO_PROGRESS").is_none(),
        }
    }

    pub fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last_draw = Some(now);
        self.draw(now);
    }

    fn draw(&self, now: Instant) {
        const WIDTH: u64 = 30;
        let frac = if self.total == 0 {
            1.0
        } else {
            (self.done as f64 / self.total as f64).min(1.0)
        };
        let filled = (frac * WIDTH as f64) as u64;
        let secs = (now - self.started).as_secs_f64().max(1e-9);
        let rate = self.done as f64 / secs;
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '.' })
            .collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} [{bar}] {:5.1}% {}/s ",
            self.label,
            frac * 100.0,
            human(rate as u64)
        );
        let _ = err.flush();
    }

    /// Clears the bar.
    pub fn finish(self) {
        if self.enabled && self.last_draw.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.label.len() + 60));
            let _ = err.flush();
        }
    }
}

/// Bytes in binary units, e.g. "3.2 MiB".
pub fn human(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
