//! Items in buckets by a small integer key, for O(1) "the item with the fewest ..." queries: closed
//! blocks by valid pages, for greedy GC's victim.
//!
//! Each bucket is a doubly linked list threaded through the items (no allocation after
//! construction); moving an item from key k to k - 1 is two O(1) list operations. The lowest
//! non-empty bucket is found from a hint that moves lazily, so a query is amortised O(1) when keys
//! change by small steps, as they do here.

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Buckets {
    heads: Vec<u32>,
    links: Vec<Link>,
    /// No bucket below `low` is non-empty.
    low: u32,
}

impl Buckets {
    /// Room for items `0..items` with keys `0..=max_key`, all absent.
    pub fn new(items: u32, max_key: u32) -> Buckets {
        Buckets {
            heads: vec![NIL; max_key as usize + 1],
            links: vec![Link { prev: NIL, next: NIL }; items as usize],
            low: max_key + 1,
        }
    }

    /// Adds `item` (absent) under `key`.
    pub fn insert(&mut self, item: u32, key: u32) {
        let head = self.heads[key as usize];
        self.links[item as usize] = Link { prev: NIL, next: head };
        if head != NIL {
            self.links[head as usize].prev = item;
        }
        self.heads[key as usize] = item;
        self.low = self.low.min(key);
    }

    /// Removes `item`, which is present under `key`.
    pub fn remove(&mut self, item: u32, key: u32) {
        let Link { prev, next } = self.links[item as usize];
        if prev == NIL {
            self.heads[key as usize] = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next != NIL {
            self.links[next as usize].prev = prev;
        }
    }

    /// An item with the lowest key, and that key.
    pub fn lowest(&mut self) -> Option<(u32, u32)> {
        while (self.low as usize) < self.heads.len() {
            let h = self.heads[self.low as usize];
            if h != NIL {
                return Some((self.low, h));
            }
            self.low += 1;
        }
        None
    }

    /// Every item with its key, keys ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.heads.iter().enumerate().flat_map(move |(key, &h)| {
            std::iter::successors((h != NIL).then_some(h), move |&i| {
                let n = self.links[i as usize].next;
                (n != NIL).then_some(n)
            })
            .map(move |i| (key as u32, i))
        })
    }

    /// Empties every bucket.
    pub fn clear(&mut self) {
        self.heads.iter_mut().for_each(|h| *h = NIL);
        self.low = self.heads.len() as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_track_moving_keys() {
        let mut b = Buckets::new(4, 8);
        assert_eq!(b.lowest(), None);
        for (item, key) in [(0, 5), (1, 2), (2, 8), (3, 2)] {
            b.insert(item, key);
        }
        assert_eq!(b.lowest().map(|x| x.0), Some(2));
        // Item 0 moves down one key at a time until it is the lowest.
        for k in (1..5).rev() {
            b.remove(0, k + 1);
            b.insert(0, k);
        }
        assert_eq!(b.lowest(), Some((1, 0)));
        b.remove(2, 8);
        let all: Vec<(u32, u32)> = b.iter().collect();
        assert_eq!(all.len(), 3);
        assert!(all.windows(2).all(|w| w[0].0 <= w[1].0), "{all:?}");
        b.clear();
        assert_eq!(b.lowest(), None);
    }
}
