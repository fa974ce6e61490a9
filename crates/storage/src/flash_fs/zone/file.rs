//! The operations that move a ZoneFs file's bytes: append (buffered, written a chunk of whole
//! pages at a time; from the page cache's write-back, its whole pages at once), sync (the partial
//! last page written padded, then the file's durable record journaled) and read (extents from the
//! device, the rest from the buffer).

use flashsim::{Nanos, SimClock, Wait};

use super::extent::Piece;
use super::St;
use crate::error::Result;
use crate::flash_fs::{device_error, label, CloneSpan, Origin};

pub(crate) fn append(st: &mut St, clock: &SimClock, ino: u64, path: &str, data: &[u8], from: Origin) -> Result<()> {
    // The page cache gathered what it writes back: that goes to the device.
    let ps = st.page_size;
    let chunk = match from {
        Origin::WriteBack => ps,
        Origin::Handle => st.place.chunk_pages * ps,
    };
    let i = st.inode(ino, "append", path)?;
    i.len += data.len() as u64;
    if !i.buf.is_empty() || data.len() < chunk {
        i.buf.extend_from_slice(data);
        if i.buf.len() >= chunk {
            write_buffer(st, clock, ino, path, false)?;
        }
        return Ok(());
    }
    // Nothing buffered and a chunk or more to write (a write-back hands over up to a whole file):
    // its whole pages go to the device from `data` itself, the rest to the buffer. The same writes
    // as buffering it first, without copying every byte written back once more (7 % of a
    // simulated fill's instructions).
    let whole = data.len() / ps * ps;
    let (written, r) = write_pages(st, clock, ino, path, &data[..whole], whole);
    st.inode(ino, "append", path)?.buf.extend_from_slice(&data[written..]);
    r
}

/// Writes the buffer's whole pages (and with `pad`, its partial last page, padded).
fn write_buffer(st: &mut St, clock: &SimClock, ino: u64, path: &str, pad: bool) -> Result<()> {
    let ps = st.page_size;
    let i = st.inode(ino, "append", path)?;
    let held = i.buf.len();
    let bytes = if pad { held } else { held / ps * ps };
    if bytes == 0 {
        return Ok(());
    }
    // The device writes from the buffer itself, taken for the write (and padded for it), rather
    // than from a copy of it: one copy fewer of every byte written.
    let mut buf = std::mem::take(&mut i.buf);
    let padded = bytes.div_ceil(ps) * ps;
    buf.resize(padded.max(held), 0);
    let (written, r) = write_pages(st, clock, ino, path, &buf[..padded], bytes);
    buf.truncate(held);
    buf.drain(..written);
    let chunk = st.place.chunk_pages * ps;
    let i = st.inode(ino, "append", path)?;
    i.buf = buf;
    // Memory: a write-back can hand over a whole file at once, and every live file kept its
    // buffer's largest size (at the paper's scale, thousands of SSTs held 2 MiB each, 18 GB). A
    // synced file gives its buffer back (an SST is not appended to after its sync); any other keeps
    // at most a chunk, what the handles' appends fill before they write.
    if pad && i.buf.is_empty() {
        i.buf = Vec::new();
    } else {
        i.buf.shrink_to(chunk.max(i.buf.len()));
    }
    r
}

/// Writes `pages` (whole pages: the file's next `bytes`, then padding) after `ino`'s extents on
/// the device; returns how many of the file's bytes it wrote, all unless it failed.
fn write_pages(st: &mut St, clock: &SimClock, ino: u64, path: &str, pages: &[u8], bytes: usize) -> (usize, Result<()>) {
    let hint = match st.inode(ino, "append", path) {
        Ok(i) => i.hint,
        Err(e) => return (0, Err(e)),
    };
    let (written, r) = st.write_file_pages(clock, ino, hint, pages, bytes as u64, path);
    if let Some(i) = st.inodes.get_mut(&ino) {
        i.pending = i.pending.max(*r.as_ref().unwrap_or(&0));
    }
    if written == bytes as u64 {
        st.place.counters.padding_bytes += (pages.len() - bytes) as u64;
    }
    (written as usize, r.map(|_| ()))
}

/// The first half of a sync: writes `ino`'s buffer (the last page padded) and returns the length
/// it made durable and when the file's data writes complete. The caller waits for that time with
/// the file system unlocked, so that the other lanes go on meanwhile, then calls [`sync_record`].
/// The durable length moves only then: a record another lane journals meanwhile (zone GC's) must
/// not point at data still in flight.
pub(crate) fn sync_data(st: &mut St, clock: &SimClock, ino: u64, path: &str) -> Result<(u64, Nanos)> {
    write_buffer(st, clock, ino, path, true)?;
    let i = st.inode(ino, "sync", path)?;
    Ok((i.len, i.pending))
}

/// The second half of a sync: makes `len` bytes of `ino` durable and journals its record (issued
/// once the data it points at is on the flash: the caller waited for [`sync_data`]'s time), then
/// waits for it.
pub(crate) fn sync_record(st: &mut St, clock: &SimClock, ino: u64, path: &str, len: u64) -> Result<()> {
    let i = st.inode(ino, "sync", path)?;
    i.synced_len = i.synced_len.max(len);
    let (len, hint, extents) = (i.synced_len, i.hint, i.durable_extents());
    let record = st.meta.inode_record(ino, len, hint, extents);
    let done = st.commit(clock.now(), vec![record])?;
    clock.wait(done, Wait::Metadata);
    Ok(())
}

/// Reads `buf.len()` bytes at `offset`, inside the file (the caller checked): extents from the
/// device, the rest from the buffer; returns when the device completes.
pub(crate) fn read(st: &mut St, clock: &SimClock, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<Nanos> {
    let n = buf.len() as u64;
    timed(st, clock, ino, path, offset, n, Some(buf))
}

/// The time and counts of [`read`] of `n` bytes at `offset`, without the bytes.
pub(crate) fn read_timing(st: &mut St, clock: &SimClock, ino: u64, path: &str, offset: u64, n: u64) -> Result<Nanos> {
    timed(st, clock, ino, path, offset, n, None)
}

/// A read of `n` bytes at `offset` on the device's clock, into `buf` or (without) its time and
/// counts only.
fn timed(
    st: &mut St,
    clock: &SimClock,
    ino: u64,
    path: &str,
    offset: u64,
    n: u64,
    buf: Option<&mut [u8]>,
) -> Result<Nanos> {
    let ps = st.page_size as u64;
    let at = clock.now();
    let mut done = at;
    let hint = label(st.inode(ino, "read_at", path)?.hint);
    let with_data = buf.is_some();
    walk(st, ino, path, offset, n, buf, |st, p, into| {
        let t = if with_data {
            st.dev.read(at, p.zone, p.page, into, hint)?
        } else {
            st.dev.read_no_data(at, p.zone, p.page, p.pages, hint)?
        };
        done = done.max(t);
        st.stats.read_bytes += p.pages * ps;
        Ok(())
    })?;
    Ok(done)
}

/// The file's bytes at `offset` as [`read`] gives them, without time or counts (the page cache's
/// clean pages, which it does not keep).
pub(crate) fn contents(st: &mut St, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
    let n = buf.len() as u64;
    walk(st, ino, path, offset, n, Some(buf), |st, p, into| st.dev.contents(p.zone, p.page, into).map(|_| ()))
}

/// Goes over the file's `n` bytes at `offset` (inside the file) into `buf` when there is one: the
/// bytes still in the buffer copied, each piece of an extent through `device` (whole pages of one
/// zone, and where they go: empty without `buf`).
fn walk(
    st: &mut St,
    ino: u64,
    path: &str,
    offset: u64,
    n: u64,
    mut buf: Option<&mut [u8]>,
    mut device: impl FnMut(&mut St, Piece, &mut [u8]) -> flashsim::Result<()>,
) -> Result<()> {
    let ps = st.page_size as u64;
    let i = st.inode(ino, "read_at", path)?;
    let dev_end = (offset + n).min(i.dev_len);
    let pieces = if offset < dev_end { i.pieces(offset, dev_end - offset, ps) } else { Vec::new() };
    // Bytes still in the buffer.
    let from = offset.max(i.dev_len);
    if let Some(buf) = buf.as_deref_mut().filter(|_| from < offset + n) {
        let b = (from - i.dev_len) as usize;
        let len = (offset + n - from) as usize;
        buf[(from - offset) as usize..(from - offset) as usize + len].copy_from_slice(&i.buf[b..b + len]);
    }
    let mut at_buf = 0usize;
    let mut pages = Vec::new();
    for p in pieces {
        let bytes = p.pages as usize * ps as usize;
        let Some(buf) = buf.as_deref_mut() else {
            device(st, p, &mut []).map_err(|e| device_error("read_at", path, e))?;
            continue;
        };
        // Pages the caller's buffer holds whole are read straight into it (no bounce copy).
        let whole = p.skip == 0 && p.len == bytes;
        let into = if whole {
            &mut buf[at_buf..at_buf + bytes]
        } else {
            pages.resize(bytes, 0);
            &mut pages[..]
        };
        device(st, p, into).map_err(|e| device_error("read_at", path, e))?;
        if !whole {
            buf[at_buf..at_buf + p.len].copy_from_slice(&pages[p.skip..p.skip + p.len]);
        }
        at_buf += p.len;
    }
    Ok(())
}

/// Copies the span's bytes to the end of its destination (checked by the caller): a zoned file
/// system cannot share extents.
pub(crate) fn append_copy(st: &mut St, clock: &SimClock, span: &CloneSpan) -> Result<()> {
    let CloneSpan { src, src_offset, dst, len, .. } = *span;
    const CHUNK: u64 = 1 << 20;
    let mut done = 0;
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    while done < len {
        let n = CHUNK.min(len - done) as usize;
        let t = read(st, clock, src.0, src.1, src_offset + done, &mut buf[..n])?;
        clock.wait(t, Wait::Read);
        append(st, clock, dst.0, dst.1, &buf[..n], Origin::Handle)?;
        done += n as u64;
    }
    Ok(())
}
