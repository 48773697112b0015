//! Adaptive time bucketing: the downsampler behind every over-time panel.
//!
//! A [`Timeline`] receives `(time, value)` events in any order, without
//! knowing the time range in advance, and keeps at most `limit` buckets of
//! width `base × 2^k` (1 ms × 2^k for latencies, 1 s × 2^k for rates, so
//! "per second" stays exact). When a new event would need more
//! buckets, the width doubles and neighbouring buckets merge pairwise, so
//! memory stays bounded however many events arrive. A bucket keeps
//! aggregates that merge exactly (counts, minima, maxima), which makes the
//! downsampling max-preserving: one 5-second request among ten million 1 ms
//! ones is still the maximum of its bucket after any number of merges.

use std::collections::VecDeque;

/// What a bucket must do: start empty and absorb a neighbour when the
/// timeline coarsens.
pub trait Merge: Default {
    /// Folds `other` (the adjacent bucket) into `self`.
    fn merge(&mut self, other: Self);
}

/// Buckets of width `base << shift` ns, aligned on `origin`, bounded in
/// number.
#[derive(Debug, Clone)]
pub struct Timeline<B> {
    origin: Option<i64>,
    base: u64,
    shift: u32,
    /// Index (in units of the current width, relative to `origin`) of
    /// `buckets[0]`.
    first: i128,
    buckets: VecDeque<B>,
    limit: usize,
}

impl<B: Merge> Timeline<B> {
    /// A timeline of at most `limit` buckets (at least 4), the narrowest
    /// `base` ns wide (at least 1).
    pub fn new(limit: usize, base: u64) -> Self {
        Timeline {
            origin: None,
            base: base.max(1),
            shift: 0,
            first: 0,
            buckets: VecDeque::new(),
            limit: limit.max(4),
        }
    }

    /// Sets the alignment point before the first event (otherwise the first
    /// event's time is used). Ignored once events were added.
    pub fn set_origin(&mut self, origin: i64) {
        if self.buckets.is_empty() {
            self.origin = Some(origin);
        }
    }

    /// The bucket holding time `t` (Unix ns), created (and the timeline
    /// coarsened) as needed.
    pub fn bucket(&mut self, t: i64) -> &mut B {
        let origin = *self.origin.get_or_insert(t);
        let offset = t as i128 - origin as i128;
        let mut idx = self.index(offset);
        if self.buckets.is_empty() {
            self.first = idx;
            self.buckets.push_back(B::default());
            return &mut self.buckets[0];
        }
        loop {
            let last = self.first + self.buckets.len() as i128 - 1;
            let lo = idx.min(self.first);
            let hi = idx.max(last);
            if hi - lo < self.limit as i128 {
                break;
            }
            self.coarsen();
            idx = self.index(offset);
        }
        while idx < self.first {
            self.buckets.push_front(B::default());
            self.first -= 1;
        }
        while idx >= self.first + self.buckets.len() as i128 {
            self.buckets.push_back(B::default());
        }
        let at = (idx - self.first) as usize;
        &mut self.buckets[at]
    }

    /// Floor of `offset / width`, on i64 when it fits (the common case:
    /// i128 division is a slow library call).
    fn index(&self, offset: i128) -> i128 {
        let width = self.width_ns();
        match (i64::try_from(offset), i64::try_from(width)) {
            (Ok(o), Ok(w)) => o.div_euclid(w) as i128,
            _ => offset.div_euclid(width as i128),
        }
    }

    /// Doubles the width, merging buckets pairwise.
    fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        let old_first = self.first;
        self.shift += 1;
        // Arithmetic shift is floor division, also for negative indices.
        self.first = old_first >> 1;
        for (i, b) in old.into_iter().enumerate() {
            let idx = (old_first + i as i128) >> 1;
            let at = (idx - self.first) as usize;
            if at == self.buckets.len() {
                self.buckets.push_back(b);
            } else {
                self.buckets[at].merge(b);
            }
        }
    }

    /// Coarsens until at most `limit` buckets remain (at least 4).
    pub fn shrink_to(&mut self, limit: usize) {
        self.limit = self.limit.min(limit.max(4));
        while self.buckets.len() > self.limit {
            self.coarsen();
        }
    }

    /// Current bucket width in nanoseconds.
    pub fn width_ns(&self) -> u128 {
        (self.base as u128) << self.shift
    }

    /// Number of buckets (from the earliest to the latest event).
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// True before the first event.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Buckets in time order with their start time (Unix ns, as i128 so
    /// that no input can overflow it).
    pub fn iter(&self) -> impl Iterator<Item = (i128, &B)> + '_ {
        let origin = self.origin.unwrap_or(0) as i128;
        let first = self.first;
        let width = self.width_ns() as i128;
        self.buckets
            .iter()
            .enumerate()
            .map(move |(i, b)| (origin + (first + i as i128) * width, b))
    }
}

/// Count, minimum and maximum of a set of latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extent {
    /// Number of values.
    pub count: u64,
    /// Smallest value (meaningless when `count == 0`).
    pub min: u64,
    /// Largest value (meaningless when `count == 0`).
    pub max: u64,
}

impl Extent {
    /// Adds one value.
    pub fn add(&mut self, v: u64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
    }

    /// Folds another extent in.
    pub fn merge(&mut self, o: Extent) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.count += o.count;
    }
}

/// Latencies of the requests *sent* (intended) in one time slice, split
/// into successes and errors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyBucket {
    /// Successful requests.
    pub ok: Extent,
    /// Failed requests (status outside 200..=399 or no response).
    pub err: Extent,
}

impl Merge for LatencyBucket {
    fn merge(&mut self, other: Self) {
        self.ok.merge(other.ok);
        self.err.merge(other.err);
    }
}

/// Responses *completed* in one time slice, by status code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RateBucket {
    /// All completed requests.
    pub count: u64,
    /// `(status code, count)`, sorted by code; status 0 = no response.
    pub codes: Vec<(u16, u64)>,
}

impl RateBucket {
    /// Counts one response with status `code`.
    pub fn add(&mut self, code: u16) {
        self.count += 1;
        self.add_code(code, 1);
    }

    fn add_code(&mut self, code: u16, n: u64) {
        match self.codes.binary_search_by_key(&code, |&(c, _)| c) {
            Ok(i) => self.codes[i].1 += n,
            Err(i) => self.codes.insert(i, (code, n)),
        }
    }
}

impl Merge for RateBucket {
    fn merge(&mut self, other: Self) {
        self.count += other.count;
        for (c, n) in other.codes {
            self.add_code(c, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn add(t: &mut Timeline<LatencyBucket>, at: i64, lat: u64) {
        t.bucket(at).ok.add(lat);
    }

    #[test]
    fn stays_within_limit_and_keeps_counts() {
        let mut t = Timeline::<LatencyBucket>::new(100, MS as u64);
        for i in 0..100_000i64 {
            add(&mut t, i * MS, 1);
        }
        assert!(t.len() <= 100, "{} buckets", t.len());
        let total: u64 = t.iter().map(|(_, b)| b.ok.count).sum();
        assert_eq!(total, 100_000);
        // 100 s over ≤100 buckets: 1 ms × 1024.
        assert_eq!(t.width_ns(), 1_024_000_000);
    }

    #[test]
    fn merging_is_exact() {
        // The same events in two orders give the same buckets once the
        // widths agree.
        let events: Vec<(i64, u64)> = (0..5000).map(|i| (i * 7 * MS, (i % 13) as u64)).collect();
        let mut a = Timeline::<LatencyBucket>::new(50, MS as u64);
        let mut b = Timeline::<LatencyBucket>::new(50, MS as u64);
        for &(at, l) in &events {
            add(&mut a, at, l);
        }
        b.set_origin(0);
        for &(at, l) in events.iter().rev() {
            add(&mut b, at, l);
        }
        assert_eq!(a.width_ns(), b.width_ns());
        let va: Vec<_> = a.iter().map(|(s, x)| (s, x.clone())).collect();
        let vb: Vec<_> = b.iter().map(|(s, x)| (s, x.clone())).collect();
        assert_eq!(va, vb);
    }

    #[test]
    fn pairwise_merge_of_extents_and_codes() {
        let mut t = Timeline::<RateBucket>::new(4, 1000);
        let w = 1000;
        for (i, code) in [200u16, 200, 500, 0].into_iter().enumerate() {
            t.bucket(i as i64 * w).add(code);
        }
        assert_eq!(t.len(), 4);
        t.bucket(4 * w).add(200); // a fifth bucket: coarsen to 3 buckets
        assert_eq!(t.len(), 3);
        let b: Vec<_> = t.iter().map(|(_, b)| b.clone()).collect();
        assert_eq!(b[0].codes, vec![(200, 2)]);
        assert_eq!(b[1].codes, vec![(0, 1), (500, 1)]);
        assert_eq!(b[2].count, 1);
    }

    #[test]
    fn shrinks_on_demand() {
        let mut t = Timeline::<LatencyBucket>::new(1000, MS as u64);
        for i in 0..1000 {
            add(&mut t, i * MS, i as u64);
        }
        assert_eq!(t.len(), 1000);
        t.shrink_to(100);
        assert!(t.len() <= 100);
        assert_eq!(t.iter().map(|(_, b)| b.ok.count).sum::<u64>(), 1000);
        assert_eq!(t.iter().map(|(_, b)| b.ok.max).max(), Some(999));
        add(&mut t, 5000 * MS, 1);
        assert!(t.len() <= 100);
    }

    #[test]
    fn out_of_order_and_negative_offsets() {
        let mut t = Timeline::<LatencyBucket>::new(10, MS as u64);
        add(&mut t, 1_000 * MS, 1);
        add(&mut t, 0, 2);
        add(&mut t, 500 * MS, 3);
        let starts: Vec<i128> = t.iter().map(|(s, _)| s).collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]));
        assert!(*starts.first().unwrap() <= 0);
        let total: u64 = t.iter().map(|(_, b)| b.ok.count).sum();
        assert_eq!(total, 3);
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        let mut t = Timeline::<LatencyBucket>::new(4, MS as u64);
        add(&mut t, i64::MAX, 1);
        add(&mut t, i64::MIN, 2);
        add(&mut t, 0, 3);
        assert!(t.len() <= 4);
        let total: u64 = t.iter().map(|(_, b)| b.ok.count).sum();
        assert_eq!(total, 3);
    }

    #[test]
    fn keeps_a_single_spike() {
        // One 5 s request among a million 1 ms ones survives every merge.
        let mut t = Timeline::<LatencyBucket>::new(4000, MS as u64);
        for i in 0..1_000_000i64 {
            let lat = if i == 777_777 {
                5_000 * MS as u64
            } else {
                MS as u64
            };
            add(&mut t, i * MS / 10, lat);
        }
        let maxes: Vec<u64> = t.iter().map(|(_, b)| b.ok.max).collect();
        assert_eq!(maxes.iter().filter(|&&m| m == 5_000 * MS as u64).count(), 1);
        assert!(maxes
            .iter()
            .all(|&m| m == MS as u64 || m == 5_000 * MS as u64));
    }
}
