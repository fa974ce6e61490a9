//! The operations that move a ZoneFs file's bytes: append (buffered, written a chunk of whole
//! pages at a time; from the page cache's write-back, its whole pages at once), sync (the partial last page written padded, then the file's durable record
//! journaled) and read (extents from the device, the rest from the buffer).

use flashsim::{Nanos, SimClock, Wait};

use super::St;
use crate::error::Result;
use crate::flash::{device_error, label, CloneSpan, Origin};

pub(crate) fn append(st: &mut St, clock: &SimClock, ino: u64, path: &str, data: &[u8], from: Origin) -> Result<()> {
    // The page cache gathered what it writes back: that goes to the device.
    let chunk = match from {
        Origin::WriteBack => st.page_size,
        Origin::Handle => st.place.chunk_pages * st.page_size,
    };
    let i = st.inode(ino, "append", path)?;
    i.buf.extend_from_slice(data);
    i.len += data.len() as u64;
    if i.buf.len() >= chunk {
        write_buffer(st, clock, ino, path, false)?;
    }
    Ok(())
}

/// Writes the buffer's whole pages (and with `pad`, its partial last page, padded).
fn write_buffer(st: &mut St, clock: &SimClock, ino: u64, path: &str, pad: bool) -> Result<()> {
    let ps = st.page_size;
    let i = st.inode(ino, "append", path)?;
    let whole = i.buf.len() / ps * ps;
    let (mut data, bytes) = if pad { (i.buf.clone(), i.buf.len()) } else { (i.buf[..whole].to_vec(), whole) };
    if data.is_empty() {
        return Ok(());
    }
    data.resize(data.len().div_ceil(ps) * ps, 0);
    let padding = (data.len() - bytes) as u64;
    let hint = i.hint;
    let (written, r) = st.write_file_pages(clock, ino, hint, &data, bytes as u64, path);
    let chunk = st.place.chunk_pages * ps;
    let i = st.inode(ino, "append", path)?;
    i.buf.drain(..written as usize);
    // Memory: a write-back can hand over a whole file at once, and every live file kept its
    // buffer's largest size (at the paper's scale, thousands of SSTs held 2 MiB each, 18 GB). A
    // synced file gives its buffer back (an SST is not appended to after its sync); any other keeps
    // at most a chunk, what the handles' appends fill before they write.
    if pad && i.buf.is_empty() {
        i.buf = Vec::new();
    } else {
        i.buf.shrink_to(chunk.max(i.buf.len()));
    }
    i.pending = i.pending.max(*r.as_ref().unwrap_or(&0));
    if written == bytes as u64 {
        st.place.counters.padding_bytes += padding;
    }
    r.map(|_| ())
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
    let ps = st.page_size as u64;
    let i = st.inode(ino, "read_at", path)?;
    let n = buf.len() as u64;
    let dev_end = (offset + n).min(i.dev_len);
    let pieces = if offset < dev_end { i.pieces(offset, dev_end - offset, ps) } else { Vec::new() };
    // Bytes still in the buffer.
    let from = offset.max(i.dev_len);
    if from < offset + n {
        let b = (from - i.dev_len) as usize;
        let len = (offset + n - from) as usize;
        buf[(from - offset) as usize..(from - offset) as usize + len].copy_from_slice(&i.buf[b..b + len]);
    }
    let hint = label(i.hint);
    let at = clock.now();
    let mut done = at;
    let mut at_buf = 0usize;
    let mut pages = Vec::new();
    for p in pieces {
        pages.resize(p.pages as usize * ps as usize, 0);
        let t = st.dev.read(at, p.zone, p.page, &mut pages, hint).map_err(|e| device_error("read_at", path, e))?;
        done = done.max(t);
        st.stats.read_bytes += p.pages * ps;
        buf[at_buf..at_buf + p.len].copy_from_slice(&pages[p.skip..p.skip + p.len]);
        at_buf += p.len;
    }
    Ok(done)
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
