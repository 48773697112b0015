//! The output thread: takes records off the request path.
//!
//! Workers push finished records into a shared buffer (an uncontended lock
//! and a `Vec::push`); a dedicated thread swaps the buffer out every few
//! milliseconds and feeds the [`Output`] (results file, in-memory metrics,
//! live progress), calling `flush` at least every flush interval so a crash
//! loses at most that much. A slow consumer of stdout therefore never stalls
//! the request loop; if writing fails, the attack is stopped and the error
//! is returned.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use volley_results::Record;

use crate::engine::Stopper;

/// Where records go. Implemented by the CLI over the results writer, the
/// metrics and the progress line.
pub trait Output: Send + 'static {
    /// One record, in completion order.
    fn record(&mut self, r: &Record) -> io::Result<()>;
    /// Called at least every flush interval and once at the end.
    fn flush(&mut self, elapsed: Duration) -> io::Result<()>;
    /// Called once after the last record and flush.
    fn finish(&mut self) -> io::Result<()>;
}

struct Shared {
    buf: Mutex<Vec<Record>>,
    done: AtomicBool,
    wake: Condvar,
}

/// The workers' side of the output thread.
#[derive(Clone)]
pub struct OutputHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for OutputHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputHandle")
    }
}

/// The running output thread; `join` returns the output and the first error.
pub struct OutputThread<O> {
    handle: OutputHandle,
    thread: JoinHandle<(O, io::Result<()>)>,
}

impl OutputHandle {
    /// Hands one record to the output thread.
    pub fn push(&self, r: Record) {
        let mut b = self.shared.buf.lock().unwrap_or_else(|e| e.into_inner());
        b.push(r);
    }
}

/// Starts the output thread. `stopper` is triggered if the output fails.
pub fn spawn<O: Output>(
    mut out: O,
    flush_every: Duration,
    stopper: Stopper,
) -> io::Result<OutputThread<O>> {
    let shared = Arc::new(Shared {
        buf: Mutex::new(Vec::with_capacity(4096)),
        done: AtomicBool::new(false),
        wake: Condvar::new(),
    });
    let s = shared.clone();
    let thread = std::thread::Builder::new()
        .name("volley-output".into())
        .spawn(move || {
            let started = Instant::now();
            let mut last_flush = Instant::now();
            let mut batch = Vec::with_capacity(4096);
            let mut result = Ok(());
            loop {
                let done = {
                    let guard = s.buf.lock().unwrap_or_else(|e| e.into_inner());
                    let (mut guard, _) = s
                        .wake
                        .wait_timeout(guard, Duration::from_millis(10))
                        .unwrap_or_else(|e| e.into_inner());
                    std::mem::swap(&mut *guard, &mut batch);
                    s.done.load(Ordering::Acquire)
                };
                if result.is_ok() {
                    for r in batch.drain(..) {
                        if let Err(e) = out.record(&r) {
                            result = Err(e);
                            stopper.stop();
                            break;
                        }
                    }
                }
                batch.clear();
                if result.is_ok() && (done || last_flush.elapsed() >= flush_every) {
                    last_flush = Instant::now();
                    if let Err(e) = out.flush(started.elapsed()) {
                        result = Err(e);
                        stopper.stop();
                    }
                }
                if done {
                    let guard = s.buf.lock().unwrap_or_else(|e| e.into_inner());
                    if guard.is_empty() {
                        break;
                    }
                }
            }
            if result.is_ok() {
                result = out.finish();
            }
            (out, result)
        })?;
    Ok(OutputThread {
        handle: OutputHandle { shared },
        thread,
    })
}

impl<O> OutputThread<O> {
    /// The handle workers push records to.
    pub fn handle(&self) -> OutputHandle {
        self.handle.clone()
    }

    /// Drains every pushed record, finishes the output and returns it.
    pub fn join(self) -> (O, io::Result<()>) {
        self.handle.shared.done.store(true, Ordering::Release);
        self.handle.shared.wake.notify_all();
        match self.thread.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}
