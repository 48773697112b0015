//! A sleep with microsecond precision for the pacer.
//!
//! tokio's timer fires on millisecond ticks, rounding every deadline up, so
//! requests would leave 1–2 ms after their intended time and every latency
//! would carry that lag. The pacer sleeps on a Linux `timerfd` instead,
//! registered with the runtime's reactor: one `timerfd_settime` and one
//! `read` per wake, no thread, no busy wait. Where a timerfd cannot be made,
//! it falls back to tokio's timer.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

/// Wakes at most this often, so that very high rates batch tickets instead
/// of paying a wake per request; low rates get a wake per ticket.
pub const MIN_WAKE_SPACING: Duration = Duration::from_micros(500);

/// A timerfd the reactor can watch (nix's type offers `AsFd` only).
struct Timer(TimerFd);

impl std::os::fd::AsRawFd for Timer {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsFd;
        self.0.as_fd().as_raw_fd()
    }
}

/// Registers the timer with the reactor. `AsyncFd::new` is deprecated
/// because an arbitrary `AsRawFd` might close or swap its descriptor while
/// registered; `Timer` owns its timerfd and always returns that one, which
/// is the invariant `AsyncFd::register` asks its (unsafe) caller to uphold.
#[allow(deprecated)]
fn register(t: Timer) -> Option<AsyncFd<Timer>> {
    AsyncFd::with_interest(t, tokio::io::Interest::READABLE).ok()
}

/// The pacer's sleep.
pub struct Clock {
    fd: Option<AsyncFd<Timer>>,
    last_wake: Instant,
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock {{ precise: {} }}", self.fd.is_some())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A precise clock when the platform allows, tokio's timer otherwise.
    /// Must be called inside a tokio runtime.
    pub fn new() -> Clock {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .ok()
        .and_then(|t| register(Timer(t)));
        Clock {
            fd,
            last_wake: Instant::now(),
        }
    }

    /// Sleeps until `at` (no earlier), but wakes no more often than every
    /// [`MIN_WAKE_SPACING`].
    pub async fn sleep_until(&mut self, at: Instant) {
        let at = at.max(self.last_wake + MIN_WAKE_SPACING);
        let now = Instant::now();
        if at > now && !self.precise(at - now).await {
            tokio::time::sleep_until(at.into()).await;
        }
        self.last_wake = Instant::now();
    }

    /// Sleeps `d` on the timerfd; false when it could not.
    async fn precise(&self, d: Duration) -> bool {
        let Some(fd) = &self.fd else { return false };
        let spec = TimeSpec::from_duration(d);
        if fd
            .get_ref()
            .0
            .set(Expiration::OneShot(spec), TimerSetTimeFlags::empty())
            .is_err()
        {
            return false;
        }
        loop {
            let Ok(mut guard) = fd.readable().await else {
                return false;
            };
            // A timerfd becomes readable once it has expired; reading it
            // resets readiness. `wait` returns at once when it has fired.
            match guard.try_io(|inner| {
                let mut buf = [0u8; 8];
                nix::unistd::read(inner.get_ref().as_raw_fd(), &mut buf)
                    .map_err(std::io::Error::from)
            }) {
                Ok(Ok(_)) => return true,
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Ok(Err(_)) => return false,
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_wakes_before_the_deadline() {
        let mut clock = Clock::new();
        for us in [0u64, 50, 700, 1500, 3000] {
            let at = Instant::now() + Duration::from_micros(us);
            clock.sleep_until(at).await;
            assert!(Instant::now() >= at, "woke early for {us} µs");
        }
    }
}
