//! Merging several results inputs (several machines, several steps) into
//! one stream ordered by timestamp.
//!
//! A k-way merge holding one pending record per input: memory is constant
//! in the number of records. Files written by an attack are in completion
//! order, so their timestamps are only nearly sorted; the merge never
//! reorders records within one input, it only interleaves inputs, picking
//! the input whose next record has the earliest timestamp (ties go to the
//! earlier input).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::ReadError;
use crate::read::Records;
use crate::record::Record;

/// Merges `inputs` by timestamp, streaming.
///
/// An input's error (truncation, corruption, a bad line) is yielded when
/// that input reaches it, and the other inputs go on: unlike a single
/// [`Records`], the merged stream may carry several errors, each at the
/// point it happened.
pub fn merge(inputs: Vec<Records>) -> impl Iterator<Item = Result<Record, ReadError>> {
    let mut m = Merge {
        pending: inputs.iter().map(|_| None).collect(),
        inputs,
        heap: BinaryHeap::new(),
        errors: VecDeque::new(),
    };
    for i in 0..m.inputs.len() {
        m.pull(i);
    }
    m
}

struct Merge {
    inputs: Vec<Records>,
    pending: Vec<Option<Record>>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    errors: VecDeque<ReadError>,
}

impl Merge {
    fn pull(&mut self, i: usize) {
        match self.inputs[i].next() {
            Some(Ok(r)) => {
                self.heap.push(Reverse((r.timestamp, i)));
                self.pending[i] = Some(r);
            }
            Some(Err(e)) => self.errors.push_back(e),
            None => {}
        }
    }
}

impl Iterator for Merge {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        let Reverse((_, i)) = self.heap.pop()?;
        let r = self.pending[i].take()?;
        self.pull(i);
        Some(Ok(r))
    }
}
