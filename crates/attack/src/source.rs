//! Ticket sources: the only part of the worker loop that differs between
//! the open and the closed model.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::Stopper;
use crate::jobs::{Job, Jobs};
use crate::queue::TicketQueue;

/// One request to make: when it was due and what to send.
#[derive(Debug, Clone)]
pub struct Ticket {
    pub seq: u64,
    /// Intended send time; latency is measured from here.
    pub intended: Instant,
    pub job: Arc<Job>,
}

/// Where a worker gets its next ticket.
#[derive(Debug)]
pub enum Source {
    /// Open model: tickets released by the pacer task.
    Shared(SharedQueue),
    /// Closed model: the user's own clock (previous response + think time).
    User(UserClock),
}

impl Source {
    /// The next ticket, or `None` when this worker should stop.
    pub async fn next(&mut self) -> Option<Ticket> {
        match self {
            Source::Shared(q) => q.next().await,
            Source::User(u) => u.next().await,
        }
    }

    /// Tells the source the last ticket's response completed at `at`.
    pub fn done(&mut self, at: Instant) {
        if let Source::User(u) = self {
            u.next_at = at + u.think;
        }
    }
}

/// A worker's end of the pacer's queue.
#[derive(Debug)]
pub struct SharedQueue {
    pub queue: Arc<TicketQueue>,
    pub id: usize,
}

impl SharedQueue {
    /// Joins `queue` as a new worker.
    pub fn join(queue: &Arc<TicketQueue>) -> SharedQueue {
        SharedQueue {
            queue: queue.clone(),
            id: queue.worker(),
        }
    }

    async fn next(&mut self) -> Option<Ticket> {
        self.queue.pop(self.id).await
    }
}

/// State shared by all users of a closed-model attack.
#[derive(Debug)]
pub struct Users {
    pub jobs: Arc<Jobs>,
    pub seq: AtomicU64,
    /// Users with an id at or above this stop at their next ticket.
    pub allowed: AtomicUsize,
    /// Users currently running.
    pub active: AtomicUsize,
    pub max_requests: Option<u64>,
    pub deadline: Option<Instant>,
    pub stopper: Stopper,
    /// Set when the jobs ran out or failed: every user stops.
    pub exhausted: std::sync::atomic::AtomicBool,
    /// Why the jobs failed, if they did.
    pub error: std::sync::Mutex<Option<String>>,
}

/// One user's clock.
#[derive(Debug)]
pub struct UserClock {
    pub id: usize,
    pub think: Duration,
    pub next_at: Instant,
    pub users: Arc<Users>,
}

impl UserClock {
    async fn next(&mut self) -> Option<Ticket> {
        let u = &self.users;
        if self.next_at > Instant::now() {
            tokio::select! {
                _ = tokio::time::sleep_until(self.next_at.into()) => {}
                _ = u.stopper.wait() => return None,
            }
        }
        if u.stopper.stopped()
            || u.exhausted.load(Ordering::Relaxed)
            || self.id >= u.allowed.load(Ordering::Relaxed)
            || u.deadline.is_some_and(|d| self.next_at >= d)
        {
            return None;
        }
        let seq = u.seq.fetch_add(1, Ordering::Relaxed);
        if u.max_requests.is_some_and(|m| seq >= m) {
            return None;
        }
        let job = match u.jobs.next().await {
            Ok(Some(j)) => j,
            Ok(None) => {
                u.exhausted.store(true, Ordering::Relaxed);
                return None;
            }
            Err(e) => {
                u.exhausted.store(true, Ordering::Relaxed);
                *u.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                return None;
            }
        };
        // The intended time is when the user's think time ended; any delay
        // in waking up shows as send lag.
        Some(Ticket {
            seq,
            intended: self.next_at,
            job,
        })
    }
}
