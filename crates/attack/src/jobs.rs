//! Targets prepared for the client.
//!
//! Eager targets are prepared once (request bytes serialised, URL parsed)
//! and handed out round-robin; lazy targets (`-lazy`) are read and prepared
//! on demand, and the attack ends when they run out.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    /// Read and prepared on demand; ends at the end of input.
    Lazy {
        targeter: Mutex<Targeter>,
        client: Client,
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

    /// Reads targets on demand.
    pub fn lazy(client: &Client, targeter: Targeter) -> Jobs {
        Jobs::Lazy {
            targeter: Mutex::new(targeter),
            client: client.clone(),
        }
    }

    /// The next job; `Ok(None)` when lazy input is exhausted.
    pub fn next(&self) -> Result<Option<Arc<Job>>, JobError> {
        match self {
            Jobs::Eager { jobs, next } => {
                let i = next.fetch_add(1, Ordering::Relaxed) % jobs.len();
                Ok(Some(jobs[i].clone()))
            }
            Jobs::Lazy { targeter, client } => {
                let mut t = targeter.lock().unwrap_or_else(|e| e.into_inner());
                match t.next()? {
                    None => Ok(None),
                    Some(target) => Ok(Some(Arc::new(prepare(client, &target)?))),
                }
            }
        }
    }
}
