//! Little-endian fixed-width and LEB128 varint encodings, as LevelDB's formats use them.

pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a fixed32 at the start of `src`; `None` if too short.
pub fn get_fixed32(src: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(src.get(..4)?.try_into().ok()?))
}

pub fn get_fixed64(src: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(src.get(..8)?.try_into().ok()?))
}

pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Decodes a varint64 from the start of `src`: (value, bytes used), or `None` if malformed.
pub fn get_varint64(src: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in src.iter().enumerate().take(10) {
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Decodes a varint32; `None` if malformed or over 32 bits.
pub fn get_varint32(src: &[u8]) -> Option<(u32, usize)> {
    let (v, n) = get_varint64(src)?;
    Some((u32::try_from(v).ok()?, n))
}

/// Appends a varint length followed by the bytes.
pub fn put_length_prefixed(dst: &mut Vec<u8>, data: &[u8]) {
    put_varint32(dst, data.len() as u32);
    dst.extend_from_slice(data);
}

/// Splits a length-prefixed slice off the front of `src`: (slice, rest).
pub fn get_length_prefixed(src: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, n) = get_varint32(src)?;
    let end = n.checked_add(len as usize)?;
    Some((src.get(n..end)?, &src[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_garbage() {
        let mut buf = Vec::new();
        let vals = [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        for &v in &vals {
            put_varint64(&mut buf, v);
        }
        let mut rest = &buf[..];
        for &v in &vals {
            let (got, n) = get_varint64(rest).unwrap();
            assert_eq!(got, v);
            assert_eq!(n, varint_len(v));
            rest = &rest[n..];
        }
        assert!(get_varint64(&[0x80, 0x80]).is_none());
        assert!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x7f]).is_none());
        let mut b = Vec::new();
        put_length_prefixed(&mut b, b"abc");
        assert_eq!(get_length_prefixed(&b), Some((&b"abc"[..], &[][..])));
        assert!(get_length_prefixed(&b[..3]).is_none());
    }
}
