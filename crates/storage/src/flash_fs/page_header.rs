//! The header every journal page starts with, whatever the placement's journal layout: 32 bytes
//! of magic, kind, generation, sequence number, payload length, total length (of a checkpoint,
//! snapshot or commit, on its first page) and a CRC32C of header and payload, so that a page
//! that is unwritten, foreign, stale or damaged is told from a valid one.

/// Bytes of the header; the payload follows it.
pub const HEADER: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: u8,
    pub generation: u64,
    pub seq: u32,
    pub payload_len: u32,
    pub total_len: u32,
}

/// Writes `h` with `magic` at the start of `page`, whose payload is already in place.
pub fn write(page: &mut [u8], magic: u32, h: &Header) {
    page[0..4].copy_from_slice(&magic.to_le_bytes());
    page[4] = h.kind;
    page[5..8].fill(0);
    page[8..16].copy_from_slice(&h.generation.to_le_bytes());
    page[16..20].copy_from_slice(&h.seq.to_le_bytes());
    page[20..24].copy_from_slice(&h.payload_len.to_le_bytes());
    page[24..28].copy_from_slice(&h.total_len.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&page[..28]), &page[HEADER..HEADER + h.payload_len as usize]);
    page[28..32].copy_from_slice(&crc.to_le_bytes());
}

/// Parses and checks a page header; `None` for an unwritten, foreign or damaged page.
pub fn read(page: &[u8], magic: u32) -> Option<Header> {
    if page.len() < HEADER {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes([page[i], page[i + 1], page[i + 2], page[i + 3]]);
    if u32_at(0) != magic {
        return None;
    }
    let h = Header {
        kind: page[4],
        generation: u64::from_le_bytes(page[8..16].try_into().ok()?),
        seq: u32_at(16),
        payload_len: u32_at(20),
        total_len: u32_at(24),
    };
    let end = HEADER.checked_add(h.payload_len as usize)?;
    if end > page.len() {
        return None;
    }
    let crc = crc32c::crc32c_append(crc32c::crc32c(&page[..28]), &page[HEADER..end]);
    (crc == u32_at(28)).then_some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_detect_damage_and_foreign_magic() {
        let mut page = vec![0u8; 512];
        page[HEADER..HEADER + 3].copy_from_slice(b"abc");
        let h = Header { kind: 2, generation: 7, seq: 2, payload_len: 3, total_len: 0 };
        write(&mut page, 0x1234_5678, &h);
        assert_eq!(read(&page, 0x1234_5678), Some(h));
        assert_eq!(read(&page, 0x1234_5679), None, "another journal's page");
        page[HEADER + 1] ^= 1;
        assert!(read(&page, 0x1234_5678).is_none());
        assert!(read(&[0u8; 512], 0).is_none(), "an unwritten page fails its checksum");
        assert!(read(&[0u8; 16], 0).is_none());
    }
}
