//! The `HashMap` model of a key-value SSD and the runner that holds a device to it: the requests
//! ([`Op`]), the keys and values they use, seeded request sequences, and [`check_ops`], which
//! applies a sequence to a device and to the model and names the first request where they differ
//! ([`Mismatch`]).
//!
//! Contract of the model (the one `KvDevice` states): a retrieve returns the last stored value of
//! its key that no delete followed, byte for byte, or nothing; exist says whether there is one; a
//! delete of a key without a value is `KeyNotFound`; no request completes before it arrives; a
//! flush changes no answer; the device's own consistency check passes after the sequence and after
//! a final flush, and every key still reads back as the model has it.

use std::collections::HashMap;

use flashsim::Nanos;

use crate::device::KvDevice;
use crate::error::{Inconsistency, KvError};

/// One request of a sequence. Keys are indices into [`key`]; a put's value is [`value`] of the
/// request's position and `len` (clamped to the device's largest value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Put {
        key: usize,
        len: usize,
    },
    Get(usize),
    Delete(usize),
    Exist(usize),
    /// [`KvDevice::flush`]: what the device holds in DRAM goes to flash.
    Flush,
}

/// Where a device and the model parted, and how.
#[derive(Debug, thiserror::Error)]
pub enum Mismatch {
    /// The device answered otherwise than the model.
    #[error("{device}: {step}: the device answered {got}, the model {want}")]
    Answer { device: String, step: String, got: String, want: String },
    /// A request completed before it arrived.
    #[error("{device}: {step}: completed at {done} ns, before it arrived at {at} ns")]
    Early { device: String, step: String, at: Nanos, done: Nanos },
    /// A request the model accepts failed.
    #[error("{device}: {step}: {source}")]
    Failed {
        device: String,
        step: String,
        #[source]
        source: KvError,
    },
    /// The device's consistency check failed after the sequence (`step` says when).
    #[error("{step}: {source}")]
    Inconsistent {
        step: &'static str,
        #[source]
        source: Inconsistency,
    },
}

/// Key `i`: its decimal digits, padded with dots to a length between 1 and 20 (distinct for
/// distinct `i`: the digits end at the first dot).
pub fn key(i: usize) -> Vec<u8> {
    let mut k = i.to_string().into_bytes();
    let len = k.len().max(1 + (i * 7) % 20);
    k.resize(len, b'.');
    k
}

/// A value of `len` bytes that differs from write to write (`seq` numbers the writes).
pub fn value(seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|j| ((seq * 131 + j as u64 * 7) % 251) as u8).collect()
}

/// A fixed pseudo-random sequence (64-bit LCG, Knuth's MMIX constants): deterministic workloads
/// without a dependency.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Keys of [`random_ops`]: [`HOT`] of them written often, the others rarely, so that rare keys
/// stay valid (or sink deep) for long and GC and compaction meet them.
pub const KEYS: usize = 64;
pub const HOT: usize = 8;

/// `n` requests from `seed`: half puts (over [`KEYS`] keys, [`HOT`] of them four in five times),
/// a quarter gets, deletes and exist calls, a flush about every hundred. Value lengths spread
/// over `0..=max_len`: many under 64 bytes, most under half of it, a few near it.
pub fn random_ops(seed: u64, n: usize, max_len: usize) -> Vec<Op> {
    let mut r = Lcg(seed);
    let key = |r: &mut Lcg| {
        if r.below(5) < 4 {
            r.below(HOT as u64) as usize
        } else {
            HOT + r.below((KEYS - HOT) as u64) as usize
        }
    };
    let max = max_len as u64;
    (0..n)
        .map(|_| match r.below(100) {
            0..=49 => {
                let len = match r.below(11) {
                    0..=2 => r.below(64.min(max) + 1),
                    3..=6 => r.below(max / 4 + 1),
                    7..=9 => r.below(max * 3 / 4 + 1),
                    _ => max - r.below(max / 8 + 1),
                } as usize;
                Op::Put { key: key(&mut r), len }
            }
            50..=74 => Op::Get(key(&mut r)),
            75..=86 => Op::Delete(key(&mut r)),
            87..=98 => Op::Exist(key(&mut r)),
            _ => Op::Flush,
        })
        .collect()
}

/// Deletes `k` at `t`: when the device answered, and whether the key held a value (an absent key
/// is the device's `KeyNotFound`, which says when it found out).
pub fn delete(dev: &mut dyn KvDevice, t: Nanos, k: &[u8]) -> Result<(Nanos, bool), KvError> {
    match dev.delete(t, k) {
        Ok(c) => Ok((c.done, true)),
        Err(KvError::KeyNotFound { done, .. }) => Ok((done, false)),
        Err(e) => Err(e),
    }
}

/// Applies `ops` to `dev` and to the model from simulated time 0, checking every answer and
/// completion time; then the device's check, every key the sequence names read back, a flush, the
/// check and every key again. The first difference is the error.
pub fn check_ops(dev: &mut dyn KvDevice, ops: &[Op]) -> Result<(), Mismatch> {
    let device = dev.name().to_string();
    let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut t: Nanos = 0;
    for (seq, op) in ops.iter().enumerate() {
        t += 1_000;
        let step = || format!("op {seq} ({op:?})");
        let failed = |source: KvError| Mismatch::Failed { device: device.clone(), step: step(), source };
        let answer = |got: String, want: String| Mismatch::Answer { device: device.clone(), step: step(), got, want };
        let done = match op {
            Op::Put { key: k, len } => {
                let (k, v) = (key(*k), value(seq as u64, (*len).min(dev.max_value_size())));
                let done = dev.store(t, &k, &v).map_err(failed)?.done;
                model.insert(k, v);
                done
            }
            Op::Get(k) => {
                let k = key(*k);
                let got = dev.retrieve(t, &k).map_err(failed)?;
                if got.value.as_ref() != model.get(&k) {
                    return Err(answer(shown(got.value.as_deref()), shown(model.get(&k).map(|v| &v[..]))));
                }
                got.done
            }
            Op::Delete(k) => {
                let k = key(*k);
                let (done, found) = delete(dev, t, &k).map_err(failed)?;
                let held = model.remove(&k).is_some();
                if found != held {
                    return Err(answer(format!("found {found}"), format!("held {held}")));
                }
                done
            }
            Op::Exist(k) => {
                let k = key(*k);
                let got = dev.exist(t, &k).map_err(failed)?;
                if got.value != model.contains_key(&k) {
                    return Err(answer(got.value.to_string(), model.contains_key(&k).to_string()));
                }
                got.done
            }
            Op::Flush => dev.flush(t).map_err(failed)?,
        };
        if done < t {
            return Err(Mismatch::Early { device, step: step(), at: t, done });
        }
        t = done;
    }
    // Every key the sequence names, stored or not.
    let keys = ops.iter().filter_map(|op| match op {
        Op::Put { key, .. } | Op::Get(key) | Op::Delete(key) | Op::Exist(key) => Some(*key + 1),
        Op::Flush => None,
    });
    let keys = keys.max().unwrap_or(0);
    for round in ["after the requests", "after a final flush"] {
        if round == "after a final flush" {
            t = dev.flush(t).map_err(|source| Mismatch::Failed {
                device: device.clone(),
                step: round.into(),
                source,
            })?;
        }
        dev.check().map_err(|source| Mismatch::Inconsistent { step: round, source })?;
        for i in 0..keys {
            let k = key(i);
            let step = || format!("get of key {i} {round}");
            let got = dev.retrieve(t, &k).map_err(|source| Mismatch::Failed {
                device: device.clone(),
                step: step(),
                source,
            })?;
            t = got.done;
            if got.value.as_ref() != model.get(&k) {
                let (got, want) = (shown(got.value.as_deref()), shown(model.get(&k).map(|v| &v[..])));
                return Err(Mismatch::Answer { device, step: step(), got, want });
            }
        }
    }
    Ok(())
}

/// A value as an error shows it: its length and first bytes.
fn shown(v: Option<&[u8]>) -> String {
    match v {
        None => "no value".into(),
        Some(v) => format!("{} bytes {:?}", v.len(), &v[..v.len().min(8)]),
    }
}
