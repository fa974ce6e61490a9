//! Internal keys: a user key followed by 8 bytes holding `(sequence << 8) | kind`, little-endian,
//! as in LevelDB. They order by user key ascending (bytewise), then by sequence descending, so the
//! newest version of a key comes first; a lookup at snapshot `s` seeks to `(key, s, Value)`.

use std::cmp::Ordering;

use crate::coding::{get_fixed64, put_fixed64};

/// A write's position in the total order of writes.
pub type SequenceNumber = u64;

/// Largest sequence number: 56 bits, the rest of the tag holds the kind.
pub const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// What an internal key records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueKind {
    Deletion = 0,
    Value = 1,
}

impl ValueKind {
    pub fn from_u8(b: u8) -> Option<ValueKind> {
        match b {
            0 => Some(ValueKind::Deletion),
            1 => Some(ValueKind::Value),
            _ => None,
        }
    }
}

/// The kind used when seeking: with sequence descending and kind descending, (key, s, Value) is
/// the first entry of `key` visible at snapshot `s`.
pub const KIND_FOR_SEEK: ValueKind = ValueKind::Value;

pub fn pack_tag(seq: SequenceNumber, kind: ValueKind) -> u64 {
    (seq << 8) | kind as u64
}

/// Appends the internal key of (`user_key`, `seq`, `kind`) to `dst`.
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, kind: ValueKind) {
    dst.extend_from_slice(user_key);
    put_fixed64(dst, pack_tag(seq, kind));
}

pub fn internal_key(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + 8);
    append_internal_key(&mut k, user_key, seq, kind);
    k
}

/// A decoded internal key borrowing its user key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    pub user_key: &'a [u8],
    pub seq: SequenceNumber,
    pub kind: ValueKind,
}

/// Decodes an internal key; `None` if it is shorter than 8 bytes or its kind is unknown.
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    let n = ikey.len().checked_sub(8)?;
    let tag = get_fixed64(&ikey[n..])?;
    Some(ParsedKey { user_key: &ikey[..n], seq: tag >> 8, kind: ValueKind::from_u8(tag as u8)? })
}

/// The user key of an internal key (all of it if malformed, which keeps comparisons total).
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(8)]
}

fn tag(ikey: &[u8]) -> u64 {
    if ikey.len() < 8 {
        return 0;
    }
    get_fixed64(&ikey[ikey.len() - 8..]).unwrap_or(0)
}

/// Orders internal keys: user key ascending, then tag (sequence, kind) descending.
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    user_key(a).cmp(user_key(b)).then_with(|| tag(b).cmp(&tag(a)))
}

/// A short key `k` with `start <= k < limit` in user-key order, to shrink index entries
/// (LevelDB's FindShortestSeparator). Returns `start` itself when nothing shorter works.
pub fn shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let common = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if common < start.len() && common < limit.len() {
        let b = start[common];
        if b < 0xff && b + 1 < limit[common] {
            let mut k = start[..=common].to_vec();
            k[common] += 1;
            return k;
        }
    }
    start.to_vec()
}

/// A short key `k >= key` (LevelDB's FindShortSuccessor).
pub fn short_successor(key: &[u8]) -> Vec<u8> {
    for (i, &b) in key.iter().enumerate() {
        if b != 0xff {
            let mut k = key[..=i].to_vec();
            k[i] += 1;
            return k;
        }
    }
    key.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_keys_order_newest_first() {
        let a1 = internal_key(b"a", 1, ValueKind::Value);
        let a2 = internal_key(b"a", 2, ValueKind::Value);
        let a2d = internal_key(b"a", 2, ValueKind::Deletion);
        let b1 = internal_key(b"b", 1, ValueKind::Value);
        assert_eq!(compare_internal(&a2, &a1), Ordering::Less);
        assert_eq!(compare_internal(&a2, &a2d), Ordering::Less);
        assert_eq!(compare_internal(&a1, &b1), Ordering::Less);
        let p = parse_internal_key(&a2d).unwrap();
        assert_eq!((p.user_key, p.seq, p.kind), (&b"a"[..], 2, ValueKind::Deletion));
        assert!(parse_internal_key(b"short").is_none());
        let mut bad = a1.clone();
        *bad.last_mut().unwrap() = 9;
        let n = bad.len();
        bad[n - 8] = 7;
        assert!(parse_internal_key(&bad).is_none());
    }

    #[test]
    fn separators_stay_between_their_bounds() {
        assert_eq!(shortest_separator(b"abcd", b"abzz"), b"abd".to_vec());
        assert_eq!(shortest_separator(b"abc", b"abd"), b"abc".to_vec());
        assert_eq!(shortest_separator(b"abc", b"abc"), b"abc".to_vec());
        assert_eq!(short_successor(b"ab"), b"b".to_vec());
        assert_eq!(short_successor(&[0xff, 0xff]), vec![0xff, 0xff]);
    }
}
