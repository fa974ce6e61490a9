//! Merges several sorted internal iterators into one, in `compare_internal` order. With equal
//! keys (which internal keys never are across sources, sequence numbers being unique) the earlier
//! child wins. Direction changes re-position every child, as LevelDB's merger does.
//!
//! Errors: the merge stops at the first child that reports one. A child that failed is not
//! exhausted: it may hold newer versions or deletions of the keys still to come, and going on
//! with the other children would show the older versions below them (or deleted keys) as if they
//! were current. So once a child fails the merge is invalid and stays so (every later
//! positioning call too, whatever the children do), and `status()` returns that error; everything
//! yielded before it was merged from every child. The check costs nothing per step: `status()` is
//! asked only of the child that moved, and only where it stopped.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::compare_internal;

#[derive(PartialEq, Eq, Clone, Copy)]
enum Direction {
    Forward,
    Reverse,
}

pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
    direction: Direction,
    /// The first error a child reported; the merge is invalid from then on.
    error: Option<Error>,
}

impl MergingIterator {
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator { children, current: None, direction: Direction::Forward, error: None }
    }

    /// Whether the merge stopped at an error (cheaper than `status()`, which asks every child).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Stops the merge at `e`.
    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
        self.current = None;
    }

    /// Whether child `i` stopped at an error, which then stops the merge.
    fn child_failed(&mut self, i: usize) -> bool {
        let c = &self.children[i];
        if c.valid() {
            return false;
        }
        match c.status() {
            Ok(()) => false,
            Err(e) => {
                self.fail(e);
                true
            }
        }
    }

    /// After every child was re-positioned: whether any of them failed.
    fn any_child_failed(&mut self) -> bool {
        (0..self.children.len()).any(|i| self.child_failed(i))
    }

    /// Which child the current entry comes from.
    pub fn current_child(&self) -> Option<usize> {
        self.current
    }

    pub fn child(&self, i: usize) -> &dyn InternalIterator {
        &*self.children[i]
    }

    /// Positions on the smallest child; `moved` is the child that just stepped, whose error (if it
    /// stopped at one) stops the merge: asked here, in the walk over the children that every step
    /// makes anyway, so a step costs no extra call.
    fn find_smallest(&mut self, moved: Option<usize>) {
        let (mut best, mut failed): (Option<usize>, Option<Error>) = (None, None);
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                if Some(i) == moved {
                    if let Err(e) = c.status() {
                        failed = Some(e);
                        break;
                    }
                }
                continue;
            }
            match best {
                Some(b) if compare_internal(c.key(), self.children[b].key()) != Ordering::Less => {}
                _ => best = Some(i),
            }
        }
        self.current = best;
        if let Some(e) = failed {
            self.fail(e);
        }
    }

    /// [`Self::find_smallest`] backward.
    fn find_largest(&mut self, moved: Option<usize>) {
        let (mut best, mut failed): (Option<usize>, Option<Error>) = (None, None);
        for (i, c) in self.children.iter().enumerate().rev() {
            if !c.valid() {
                if Some(i) == moved {
                    if let Err(e) = c.status() {
                        failed = Some(e);
                        break;
                    }
                }
                continue;
            }
            match best {
                Some(b) if compare_internal(c.key(), self.children[b].key()) != Ordering::Greater => {}
                _ => best = Some(i),
            }
        }
        self.current = best;
        if let Some(e) = failed {
            self.fail(e);
        }
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn seek_to_first(&mut self) {
        if self.error.is_some() {
            return;
        }
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.direction = Direction::Forward;
        if !self.any_child_failed() {
            self.find_smallest(None);
        }
    }

    fn seek_to_last(&mut self) {
        if self.error.is_some() {
            return;
        }
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.direction = Direction::Reverse;
        if !self.any_child_failed() {
            self.find_largest(None);
        }
    }

    fn seek(&mut self, target: &[u8]) {
        if self.error.is_some() {
            return;
        }
        for c in &mut self.children {
            c.seek(target);
        }
        self.direction = Direction::Forward;
        if !self.any_child_failed() {
            self.find_smallest(None);
        }
    }

    fn next(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Forward {
            // Put every other child just after the current key.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek(&key);
                if c.valid() && compare_internal(&key, c.key()) == Ordering::Equal {
                    c.next();
                }
            }
            self.direction = Direction::Forward;
            if self.any_child_failed() {
                return;
            }
        }
        self.children[cur].next();
        self.find_smallest(Some(cur));
    }

    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Reverse {
            // Put every other child just before the current key.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek(&key);
                if c.valid() {
                    c.prev();
                } else {
                    c.seek_to_last();
                }
            }
            self.direction = Direction::Reverse;
            if self.any_child_failed() {
                return;
            }
        }
        self.children[cur].prev();
        self.find_largest(Some(cur));
    }

    fn key(&self) -> &[u8] {
        match self.current {
            Some(c) => self.children[c].key(),
            None => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match self.current {
            Some(c) => self.children[c].value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sorted vector as an internal iterator, for tests.
    pub struct VecIter {
        pub entries: Vec<(Vec<u8>, Vec<u8>)>,
        pub pos: Option<usize>,
    }

    impl VecIter {
        pub fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
            entries.sort_by(|a, b| compare_internal(&a.0, &b.0));
            VecIter { entries, pos: None }
        }
    }

    impl InternalIterator for VecIter {
        fn valid(&self) -> bool {
            self.pos.is_some()
        }
        fn seek_to_first(&mut self) {
            self.pos = (!self.entries.is_empty()).then_some(0);
        }
        fn seek_to_last(&mut self) {
            self.pos = self.entries.len().checked_sub(1);
        }
        fn seek(&mut self, t: &[u8]) {
            let i = self.entries.partition_point(|e| compare_internal(&e.0, t) == Ordering::Less);
            self.pos = (i < self.entries.len()).then_some(i);
        }
        fn next(&mut self) {
            self.pos = self.pos.and_then(|p| (p + 1 < self.entries.len()).then_some(p + 1));
        }
        fn prev(&mut self) {
            self.pos = self.pos.and_then(|p| p.checked_sub(1));
        }
        fn key(&self) -> &[u8] {
            self.pos.map_or(&[][..], |p| &self.entries[p].0)
        }
        fn value(&self) -> &[u8] {
            self.pos.map_or(&[][..], |p| &self.entries[p].1)
        }
        fn status(&self) -> Result<()> {
            Ok(())
        }
    }

    use crate::key::{internal_key, ValueKind};
    use proptest::prelude::*;

    fn ik(k: u16, seq: u64) -> Vec<u8> {
        internal_key(&k.to_be_bytes(), seq, ValueKind::Value)
    }

    /// A sorted vector that fails (invalid, with an error) when a move would land on entry `at`,
    /// as a table iterator does at a damaged block; the error stays.
    struct FailingIter {
        inner: VecIter,
        at: usize,
        failed: bool,
    }

    impl FailingIter {
        fn check(&mut self) {
            if self.failed || self.inner.pos == Some(self.at) {
                self.failed = true;
                self.inner.pos = None;
            }
        }
    }

    impl InternalIterator for FailingIter {
        fn valid(&self) -> bool {
            !self.failed && self.inner.valid()
        }
        fn seek_to_first(&mut self) {
            self.inner.seek_to_first();
            self.check();
        }
        fn seek_to_last(&mut self) {
            self.inner.seek_to_last();
            self.check();
        }
        fn seek(&mut self, t: &[u8]) {
            self.inner.seek(t);
            self.check();
        }
        fn next(&mut self) {
            self.inner.next();
            self.check();
        }
        fn prev(&mut self) {
            self.inner.prev();
            self.check();
        }
        fn key(&self) -> &[u8] {
            self.inner.key()
        }
        fn value(&self) -> &[u8] {
            self.inner.value()
        }
        fn status(&self) -> Result<()> {
            match self.failed {
                true => Err(Error::corruption("failing", self.at as u64, "damaged")),
                false => Ok(()),
            }
        }
    }

    /// A newer source (keys 0, 10, 20, ... at sequence 100) failing at its entry `at` over an older
    /// one holding every key: the merge yields nothing at or past the failed entry's key in either
    /// direction (going on would show the older source's versions of the newer one's keys), and
    /// stays stopped.
    #[test]
    fn a_failed_child_stops_the_merge_where_it_failed() {
        let newer: Vec<_> = (0..10u16).map(|k| (ik(k * 10, 100), vec![1])).collect();
        let older: Vec<_> = (0..100u16).map(|k| (ik(k, 1), vec![0])).collect();
        let merge = |at| {
            let failing = FailingIter { inner: VecIter::new(newer.clone()), at, failed: false };
            MergingIterator::new(vec![Box::new(failing), Box::new(VecIter::new(older.clone()))])
        };
        let mut m = merge(4);
        m.seek_to_first();
        let mut n = 0;
        while m.valid() {
            assert!(compare_internal(m.key(), &ik(30, 100)).is_le(), "{:?}", m.key());
            n += 1;
            m.next();
        }
        // Keys 0, 10, 20, 30 of the newer source and 0..=29 of the older one: the newer one
        // failed leaving key 30, so the older version of key 30 is not shown, nor anything after.
        assert_eq!(n, 4 + 30);
        assert!(m.status().is_err() && m.failed());
        m.seek_to_first();
        assert!(!m.valid(), "a seek does not revive a failed merge");
        m.seek(&ik(90, 100));
        assert!(!m.valid() && m.status().is_err());

        let mut m = merge(7);
        m.seek_to_last();
        let mut n = 0;
        while m.valid() {
            assert!(compare_internal(m.key(), &ik(80, 100)).is_ge(), "{:?}", m.key());
            n += 1;
            m.prev();
        }
        // Backward the newer version of a key comes after the older: keys 99 down to 80 of the
        // older source, 90 and 80 of the newer one, which fails leaving key 80.
        assert_eq!(n, 20 + 2);
        assert!(m.status().is_err());

        // Failing on the first positioning: nothing at all.
        let mut m = merge(0);
        m.seek_to_first();
        assert!(!m.valid() && m.status().is_err());
    }

    proptest! {
        #[test]
        fn merge_equals_sorted_union_in_both_directions(
            parts in proptest::collection::vec(proptest::collection::vec(0u16..200, 0..30), 1..5),
            moves in proptest::collection::vec(any::<bool>(), 0..60),
            target in 0u16..220,
        ) {
            let mut all = Vec::new();
            let mut seq = 1;
            let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
            for p in &parts {
                let entries: Vec<_> = p.iter().map(|&k| { seq += 1; (ik(k, seq), vec![k as u8]) }).collect();
                all.extend(entries.clone());
                children.push(Box::new(VecIter::new(entries)));
            }
            let mut model = VecIter::new(all);
            let mut m = MergingIterator::new(children);
            m.seek(&ik(target, u64::MAX >> 8));
            model.seek(&ik(target, u64::MAX >> 8));
            for forward in moves {
                prop_assert_eq!(m.valid(), model.valid());
                if !m.valid() { break; }
                prop_assert_eq!(m.key(), model.key());
                if forward { m.next(); model.next(); } else { m.prev(); model.prev(); }
            }
            m.seek_to_first();
            model.seek_to_first();
            while model.valid() {
                prop_assert_eq!(m.key(), model.key());
                m.next();
                model.next();
            }
            prop_assert!(!m.valid());
        }
    }
}
