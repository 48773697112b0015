//! Targets prepared for the client.
//!
//! Eager targets are prepared once (request bytes serialised, URL parsed)
//! and handed out round-robin; lazy targets (`-lazy`) are read and prepared
//! on a thread of their own (reading a pipe blocks) a little ahead of use,
//! and the attack ends when they run out.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use volley_client::{Client, Prepared};
use volley_targets::{Target, Targeter};

/// A target ready to execute, with the strings records carry.
#[derive(Debug)]
pub struct Job {
    pub prepared: Prepared,
    pub method: Arc<str>,
    pub url: Arc<str>,
}

/// Why no job could be produced.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("{0}")]
    Target(#[from] volley_targets::TargetError),
    #[error("{0}")]
    Client(#[from] volley_client::ClientError),
    #[error("no targets to attack")]
    Empty,
}

/// Where workers get their next job.
pub enum Jobs {
    /// Prepared up front, served round-robin forever.
    Eager {
        jobs: Vec<Arc<Job>>,
        next: AtomicUsize,
    },
    /// Read and prepared on demand by a reader thread; ends at the end of
    /// input or at the first bad target.
    Lazy {
        rx: async_channel::Receiver<Result<Arc<Job>, String>>,
    },
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Jobs::Eager { jobs, .. } => write!(f, "Jobs::Eager({})", jobs.len()),
            Jobs::Lazy { .. } => write!(f, "Jobs::Lazy"),
        }
    }
}

fn prepare(client: &Client, t: &Target) -> Result<Job, JobError> {
    let prepared = client.prepare(&t.method, &t.url, &t.headers, t.body.clone())?;
    Ok(Job {
        prepared,
        method: Arc::from(t.method.as_str()),
        url: Arc::from(t.url.as_str()),
    })
}

impl Jobs {
    /// Prepares every target now: a bad URL is reported before the first
    /// request.
    pub fn eager(client: &Client, targets: &[Arc<Target>]) -> Result<Jobs, JobError> {
        if targets.is_empty() {
            return Err(JobError::Empty);
        }
        let jobs = targets
            .iter()
            .map(|t| prepare(client, t).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Jobs::Eager {
            jobs,
            next: AtomicUsize::new(0),
        })
    }

    /// Reads targets on demand, on a thread of its own.
    pub fn lazy(client: &Client, mut targeter: Targeter) -> Jobs {
        let (tx, rx) = async_channel::bounded(1024);
        let client = client.clone();
        let reader = move || loop {
            let item = match targeter.next() {
                Ok(None) => return,
                Ok(Some(t)) => prepare(&client, &t)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            let failed = item.is_err();
            if tx.send_blocking(item).is_err() || failed {
                return;
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("volley-targets".into())
            .spawn(reader)
        {
            let (tx, rx) = async_channel::bounded(1);
            let _ = tx.try_send(Err(format!("starting the targets reader: {e}")));
            return Jobs::Lazy { rx };
        }
        Jobs::Lazy { rx }
    }

    /// The next job; `Ok(None)` when lazy input is exhausted.
    pub async fn next(&self) -> Result<Option<Arc<Job>>, String> {
        match self {
            Jobs::Eager { jobs, next } => {
                let i = next.fetch_add(1, Ordering::Relaxed) % jobs.len();
                Ok(Some(jobs[i].clone()))
            }
            Jobs::Lazy { rx } => match rx.recv().await {
                Err(_) => Ok(None),
                Ok(item) => item.map(Some),
            },
        }
    }
}
