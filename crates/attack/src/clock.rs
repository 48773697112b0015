//! The pacer's sleep: microsecond precision, and a window that batches
//! requests at high rates.
//!
//! tokio's timer fires on millisecond ticks, rounding every deadline up, so
//! requests would leave 1–2 ms after their intended time and every latency
//! would carry that lag. The pacer sleeps on a Linux `timerfd` instead,
//! registered with the runtime's reactor: one `timerfd_settime` and one
//! `read` per wake, no thread, no busy wait. Where a timerfd cannot be made,
//! it falls back to tokio's timer.
//!
//! Each wake-up costs far more than a request: the generator leaves and
//! re-enters idle, and every request sent to a sleeping target wakes it
//! too (about 40 µs of generator CPU per wake-up measured on this project's
//! 2-core benchmark machine, against about 8 µs per request). So the pacer
//! wakes at most once per *window* and sends every request due by then.
//! A request waits at most the window past its intended time; that wait is
//! its send lag, recorded, and inside its latency. The automatic window
//! grows with the rate ([`auto_window`]): no batching below 1,000 req/s,
//! 1 ms at 5,000 req/s, 2 ms from 10,000 req/s up, which keeps wake-ups
//! at or under about 1,000 a second at any rate.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

/// The automatic window's ceiling, reached at 10,000 req/s.
pub const MAX_AUTO_WINDOW: Duration = Duration::from_millis(2);

/// The automatic window for requests `gap` apart: 0.2 µs per request per
/// second of rate (200 µs at 1,000 req/s, 1 ms at 5,000), at most
/// [`MAX_AUTO_WINDOW`]. Below 1,000 req/s it is shorter than the gap, so
/// every request gets a wake-up of its own.
pub fn auto_window(gap: Duration) -> Duration {
    let gap_ns = gap.as_nanos().max(1);
    let ns = (200_000_000_000u128 / gap_ns).min(MAX_AUTO_WINDOW.as_nanos());
    Duration::from_nanos(ns as u64)
}

/// How long the pacer may hold due requests back to send them together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// [`auto_window`] of the current gap between requests.
    #[default]
    Auto,
    /// A fixed window; zero wakes for every request at its own time.
    Fixed(Duration),
}

impl Window {
    /// The window for requests `gap` apart.
    pub fn for_gap(self, gap: Duration) -> Duration {
        match self {
            Window::Auto => auto_window(gap),
            Window::Fixed(d) => d,
        }
    }
}

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
    window: Window,
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
    /// A precise clock when the platform allows, tokio's timer otherwise,
    /// with the automatic window. Must be called inside a tokio runtime.
    pub fn new() -> Clock {
        Clock::with_window(Window::Auto)
    }

    /// A clock with the given batching window.
    pub fn with_window(window: Window) -> Clock {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .ok()
        .and_then(|t| register(Timer(t)));
        Clock {
            fd,
            last_wake: Instant::now(),
            window,
        }
    }

    /// Sleeps until `at` (no earlier), but no sooner than one window after
    /// the last wake-up, for requests `gap` apart. Returns the time it woke.
    pub async fn sleep_until(&mut self, at: Instant, gap: Duration) -> Instant {
        let at = at.max(self.last_wake + self.window.for_gap(gap));
        let now = Instant::now();
        if at > now && !self.precise(at - now).await {
            tokio::time::sleep_until(at.into()).await;
        }
        self.last_wake = Instant::now();
        self.last_wake
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
            let woke = clock.sleep_until(at, Duration::from_micros(100)).await;
            assert!(woke >= at, "woke early for {us} µs");
            assert!(Instant::now() >= woke);
        }
    }

    #[tokio::test]
    async fn wakes_at_most_once_per_window() {
        let mut clock = Clock::with_window(Window::Fixed(Duration::from_millis(5)));
        let first = clock.sleep_until(Instant::now(), Duration::ZERO).await;
        // Due at once, but the window holds it until 5 ms after the last wake.
        let second = clock.sleep_until(Instant::now(), Duration::ZERO).await;
        assert!(second >= first + Duration::from_millis(5));
    }

    #[test]
    fn the_automatic_window_grows_with_the_rate() {
        let us = |d: Duration| d.as_nanos() as f64 / 1e3;
        let at_rate = |r: u64| auto_window(Duration::from_nanos(1_000_000_000 / r));
        assert_eq!(us(at_rate(100)), 20.0);
        assert_eq!(us(at_rate(1_000)), 200.0);
        assert_eq!(us(at_rate(5_000)), 1_000.0);
        assert_eq!(us(at_rate(10_000)), 2_000.0);
        assert_eq!(us(at_rate(1_000_000)), 2_000.0);
        // Requests at the same instant (a burst, or -rate=0).
        assert_eq!(auto_window(Duration::ZERO), MAX_AUTO_WINDOW);
        // Below 1,000 req/s the window is shorter than the gap: no batching.
        for r in [10u64, 200, 999] {
            let gap = Duration::from_nanos(1_000_000_000 / r);
            assert!(auto_window(gap) < gap, "{r}/s");
        }
        let zero = Window::Fixed(Duration::ZERO);
        assert_eq!(zero.for_gap(Duration::ZERO), Duration::ZERO);
    }
}
