//! The on-disk framing of an SST, as in LevelDB's `table/format.cc`:
//!
//! - A [`BlockHandle`] locates a block: `varint64 offset, varint64 size`, where `size` counts the block's
//!   contents only, not its trailer.
//! - Every block is followed by a 5-byte trailer: one type byte (0 = uncompressed, the only type flashkv
//!   writes or accepts) and the masked CRC32C of the contents followed by the type byte (fixed32).
//! - The file ends with a 48-byte [`Footer`]: the metaindex handle, the index handle, zero padding up to 40
//!   bytes, and the 8-byte magic number `0xdb4775248b80fb57` (little-endian).
//!
//! Contract: decoding never panics; every failure (short read, bad type, bad checksum, bad handle) is an
//! [`Error::Corruption`] naming the file and the offset where the bad data starts.

use bytes::Bytes;

use crate::coding::{get_fixed32, get_fixed64, get_varint64, put_fixed32, put_fixed64, put_varint64};
use crate::cpu::{self, Term};
use crate::crc;
use crate::error::{Error, Result};
use storage::RandomAccessFile;

/// Bytes after each block: type byte and masked CRC32C.
pub const BLOCK_TRAILER_SIZE: usize = 5;

/// The only block type: contents stored as is.
pub const NO_COMPRESSION: u8 = 0;

/// LevelDB's table magic number.
pub const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;

/// Most bytes a varint-encoded handle can take (two varint64s).
pub const MAX_HANDLE_LEN: usize = 20;

/// Size of the footer: two handles padded to 40 bytes, then the magic number.
pub const FOOTER_SIZE: usize = 2 * MAX_HANDLE_LEN + 8;

/// Where a block lies in a file: its contents' offset and size (the trailer follows them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    pub fn new(offset: u64, size: u64) -> BlockHandle {
        BlockHandle { offset, size }
    }

    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(MAX_HANDLE_LEN);
        self.encode_to(&mut v);
        v
    }

    /// Decodes a handle from the start of `src`: (handle, bytes used), or `None` if malformed.
    pub fn decode(src: &[u8]) -> Option<(BlockHandle, usize)> {
        let (offset, n1) = get_varint64(src)?;
        let (size, n2) = get_varint64(src.get(n1..)?)?;
        Some((BlockHandle { offset, size }, n1 + n2))
    }

    /// The offset just past the block's trailer, or `None` on overflow (only a corrupt handle overflows).
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset.checked_add(self.size)?.checked_add(BLOCK_TRAILER_SIZE as u64)
    }
}

/// The fixed-size tail of every SST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footer {
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
}

impl Footer {
    /// The 48 encoded bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(FOOTER_SIZE);
        self.metaindex.encode_to(&mut v);
        self.index.encode_to(&mut v);
        v.resize(2 * MAX_HANDLE_LEN, 0);
        put_fixed64(&mut v, TABLE_MAGIC);
        v
    }

    /// Decodes a footer read at `offset` of `file` (both only for error messages).
    pub fn decode(src: &[u8], file: &str, offset: u64) -> Result<Footer> {
        if src.len() != FOOTER_SIZE {
            return Err(Error::corruption(
                file,
                offset,
                format!("footer of {} bytes, expected {FOOTER_SIZE}", src.len()),
            ));
        }
        // Magic first: a file that is not an SST should be named as such, not as a bad handle.
        let magic = src.get(2 * MAX_HANDLE_LEN..).and_then(get_fixed64);
        if magic != Some(TABLE_MAGIC) {
            return Err(Error::corruption(
                file,
                offset + 2 * MAX_HANDLE_LEN as u64,
                "bad table magic number (not an sstable)",
            ));
        }
        let bad = |what: &str| Error::corruption(file, offset, format!("bad {what} handle in footer"));
        let (metaindex, n) = BlockHandle::decode(src).ok_or_else(|| bad("metaindex"))?;
        let rest = src.get(n..).ok_or_else(|| bad("index"))?;
        let (index, _) = BlockHandle::decode(rest).ok_or_else(|| bad("index"))?;
        Ok(Footer { metaindex, index })
    }
}

/// Appends the trailer of a block whose contents are `contents` (type byte, masked CRC).
pub fn append_trailer(dst: &mut Vec<u8>, contents: &[u8]) {
    let crc = crc::crc32c_extend(crc::crc32c(contents), &[NO_COMPRESSION]);
    dst.push(NO_COMPRESSION);
    put_fixed32(dst, crc::mask(crc));
}

/// The trailer of a block with these contents.
pub fn block_trailer(contents: &[u8]) -> [u8; BLOCK_TRAILER_SIZE] {
    let mut v = Vec::with_capacity(BLOCK_TRAILER_SIZE);
    append_trailer(&mut v, contents);
    let mut out = [0u8; BLOCK_TRAILER_SIZE];
    out.copy_from_slice(&v);
    out
}

/// A block's contents as read from a file, with where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockContents {
    pub data: Bytes,
    /// Whether the CRC was checked on this read.
    pub verified: bool,
    /// Whether `data` shares a mapping of the file (no copy was made).
    pub mapped: bool,
}

/// Reads the block at `handle` of `file` (whose size is `file_size`, so that a corrupt handle is refused
/// before anything is allocated) and checks its trailer: the type byte always, the CRC when
/// `verify_checksums` is set. A mapped file's bytes are shared, not copied. Any failure is a corruption
/// naming the file and the block's offset.
pub fn read_block(
    file: &dyn RandomAccessFile,
    handle: &BlockHandle,
    file_size: u64,
    verify_checksums: bool,
) -> Result<BlockContents> {
    let path = file.path();
    let end = handle.end_with_trailer();
    let len = match (end, usize::try_from(handle.size)) {
        (Some(end), Ok(len)) if end <= file_size => len,
        _ => {
            return Err(Error::corruption(
                path,
                handle.offset,
                format!(
                    "block handle (offset {}, size {}) runs past the end of the file ({file_size} bytes)",
                    handle.offset, handle.size
                ),
            ))
        }
    };
    let wanted = len + BLOCK_TRAILER_SIZE;
    cpu::count(Term::BlockRead, 1);
    cpu::count(Term::ReadByte, wanted as u64);
    let (buf, mapped) = match file.read_shared(handle.offset, wanted) {
        Some(shared) => (shared, true),
        None => {
            let mut buf = vec![0u8; wanted];
            let got = file.read_at(handle.offset, &mut buf)?;
            buf.truncate(got);
            (Bytes::from(buf), false)
        }
    };
    if buf.len() < wanted {
        return Err(Error::corruption(
            path,
            handle.offset,
            format!("truncated block read: wanted {wanted} bytes, got {}", buf.len()),
        ));
    }
    let (type_byte, stored) = match (buf.get(len), buf.get(len + 1..).and_then(get_fixed32)) {
        (Some(&t), Some(c)) => (t, c),
        _ => return Err(Error::corruption(path, handle.offset, "block trailer missing")),
    };
    let trailer_offset = handle.offset + handle.size;
    if verify_checksums {
        let actual = crc::crc32c(buf.get(..len + 1).unwrap_or(&[]));
        if crc::unmask(stored) != actual {
            return Err(Error::corruption(
                path,
                handle.offset,
                format!("block checksum mismatch (block of {} bytes, trailer at offset {trailer_offset})", handle.size),
            ));
        }
    }
    if type_byte != NO_COMPRESSION {
        return Err(Error::corruption(
            path,
            trailer_offset,
            format!("unknown block type {type_byte} (compression is not supported)"),
        ));
    }
    Ok(BlockContents { data: buf.slice(..len), verified: verify_checksums, mapped })
}

/// `v` rounded up to a multiple of `unit` (`unit` 0 or 1 leaves it as is); `None` on overflow.
pub fn round_up(v: u64, unit: u64) -> Option<u64> {
    if unit <= 1 {
        return Some(v);
    }
    v.checked_add(unit - 1).map(|x| x / unit * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_and_footer_round_trip() {
        let h = BlockHandle::new(1 << 40, 4091);
        let enc = h.encode();
        assert_eq!(BlockHandle::decode(&enc), Some((h, enc.len())));
        assert!(BlockHandle::decode(&enc[..enc.len() - 1]).is_none());
        let f = Footer { metaindex: BlockHandle::new(u64::MAX, u64::MAX), index: BlockHandle::new(7, 9) };
        let enc = f.encode();
        assert_eq!(enc.len(), FOOTER_SIZE);
        assert_eq!(Footer::decode(&enc, "t", 0).unwrap(), f);
        let mut bad = enc.clone();
        bad[45] ^= 1;
        let e = Footer::decode(&bad, "t.sst", 100).unwrap_err();
        assert!(matches!(e, Error::Corruption { ref file, offset: 140, .. } if file == "t.sst"), "{e}");
    }

    #[test]
    fn rounding() {
        assert_eq!(round_up(0, 4096), Some(0));
        assert_eq!(round_up(1, 4096), Some(4096));
        assert_eq!(round_up(4096, 4096), Some(4096));
        assert_eq!(round_up(5, 1), Some(5));
        assert_eq!(round_up(u64::MAX, 4096), None);
    }
}
