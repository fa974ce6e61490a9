//! Merges several sorted internal iterators into one, in `compare_internal` order. With equal
//! keys (which internal keys never are across sources, sequence numbers being unique) the earlier
//! child wins. Direction changes re-position every child, as LevelDB's merger does.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::Result;
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
}

impl MergingIterator {
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator { children, current: None, direction: Direction::Forward }
    }

    /// Which child the current entry comes from.
    pub fn current_child(&self) -> Option<usize> {
        self.current
    }

    pub fn child(&self, i: usize) -> &dyn InternalIterator {
        &*self.children[i]
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            match best {
                Some(b) if compare_internal(c.key(), self.children[b].key()) != Ordering::Less => {}
                _ => best = Some(i),
            }
        }
        self.current = best;
    }

    fn find_largest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate().rev() {
            if !c.valid() {
                continue;
            }
            match best {
                Some(b) if compare_internal(c.key(), self.children[b].key()) != Ordering::Greater => {}
                _ => best = Some(i),
            }
        }
        self.current = best;
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.direction = Direction::Forward;
        self.find_smallest();
    }

    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.direction = Direction::Reverse;
        self.find_largest();
    }

    fn seek(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek(target);
        }
        self.direction = Direction::Forward;
        self.find_smallest();
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
        }
        self.children[cur].next();
        self.find_smallest();
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
        }
        self.children[cur].prev();
        self.find_largest();
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
