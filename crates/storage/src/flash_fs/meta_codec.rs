//! The byte encoding shared by the simulated file systems' metadata journals (SimFs, ZoneFs):
//! length-prefixed strings and a bounds-checked reading cursor.

/// Appends `s` as a little-endian u32 length and its bytes.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A cursor over a record stream; every read is bounds-checked.
pub struct Cursor<'a>(pub(crate) &'a [u8]);

impl Cursor<'_> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(crate) fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}

/// Fuzzing support for the journals' decoders: inputs that are valid record streams damaged by
/// flips, insertions, removals, truncations and overwritten 4-byte fields, or random bytes.
/// `FLASHKV_FUZZ_CASES` sets the number of cases (256 by default; a long run sets millions).
#[cfg(test)]
pub(crate) mod fuzz {
    use proptest::prelude::*;
    use proptest::test_runner::Config;

    pub fn config() -> Config {
        let cases = std::env::var("FLASHKV_FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
        Config { cases, failure_persistence: None, ..Config::default() }
    }

    pub fn damaged(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
        let edit = (0..5u8, any::<usize>(), any::<u32>());
        let mutated = proptest::collection::vec(edit, 1..6).prop_map(move |edits| {
            let mut b = valid.clone();
            for (kind, p, x) in edits {
                let n = b.len().max(1);
                match kind {
                    0 if !b.is_empty() => b[p % n] ^= (x as u8).max(1),
                    1 => b.insert(p % (b.len() + 1), x as u8),
                    2 if !b.is_empty() => {
                        b.remove(p % n);
                    }
                    3 => b.truncate(p % n),
                    4 if b.len() >= 4 => {
                        let at = p % (b.len() - 3);
                        b[at..at + 4].copy_from_slice(&x.to_le_bytes());
                    }
                    _ => {}
                }
            }
            b
        });
        prop_oneof![3 => mutated, 1 => proptest::collection::vec(any::<u8>(), 0..1024)]
    }
}
