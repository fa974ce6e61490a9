//! A file's bytes through the page cache (`cache`), written once for every placement: appends
//! gather in dirty pages and reach the placement when they are written back; reads are served
//! from cached pages and fetch the rest (and readahead) from the placement. With the cache off,
//! each call goes straight to the placement, as it did before there was a cache; so does each call
//! through a handle opened for direct I/O (`O_DIRECT`), once the file's dirty bytes are written
//! back, as Linux does.
//!
//! Identities the tests check: pages the placement reads for the cache = misses + readahead
//! pages; bytes the cache hands to the placement = bytes written back.

use flashsim::{Nanos, SimClock, Wait};

use super::cache::WriteBack;
use super::state::{CloneSpan, FileInode, Origin, Placement, Shared, State};
use crate::error::{FsError, Result};

/// How a handle meets the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Buffered,
    /// `O_DIRECT`: straight to the placement.
    Direct,
}

/// Appends `data` to `ino`: into its cached pages (dirty), then writes back what is due.
pub(super) fn append<P: Placement>(
    st: &mut State<P>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    data: &[u8],
    mode: Mode,
) -> Result<()> {
    if !st.cache.enabled() {
        return P::append(st, clock, ino, path, data, Origin::Handle);
    }
    if mode == Mode::Direct {
        write_back(st, clock, ino, WriteBack::Direct, false)?;
        let ps = st.page_size as u64;
        let at = st.placed_len(ino);
        P::append(st, clock, ino, path, data, Origin::Handle)?;
        // A clean cached tail page no longer holds the file's bytes.
        st.cache.drop_pages(ino, at / ps, (at + data.len() as u64).div_ceil(ps));
        return write_back_due(st, clock);
    }
    st.inode(ino, "append", path)?;
    let ps = st.page_size as u64;
    let mut at = st.len_of(ino);
    let mut rest = data;
    while !rest.is_empty() {
        let (page, off) = (at / ps, (at % ps) as usize);
        if !st.cache.contains(ino, page) {
            // The page's bytes before `at` are on the placement (a dirty page is never evicted):
            // read them first, as Linux does for a write into a page it does not hold.
            let mut head = vec![0u8; off];
            if off > 0 {
                let done = P::read(st, clock, ino, path, page * ps, &mut head)?;
                clock.wait(done, Wait::Read);
                st.cache.stats_mut().misses += 1;
            }
            insert(st, clock, ino, page, Some(&head), 0)?;
        }
        let n = (ps as usize - off).min(rest.len());
        st.cache.append_dirty(ino, page, path, &rest[..n], clock.now());
        at += n as u64;
        rest = &rest[n..];
    }
    write_back_due(st, clock)
}

/// Reads `buf.len()` bytes of `ino` at `offset` (inside the file: the caller checked); the lane
/// waits for the pages it asked for, not for readahead.
pub(super) fn read<P: Placement>(
    st: &mut State<P>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    offset: u64,
    buf: &mut [u8],
    mode: Mode,
) -> Result<()> {
    if mode == Mode::Direct && st.cache.enabled() {
        write_back(st, clock, ino, WriteBack::Direct, false)?;
    }
    if mode == Mode::Direct || !st.cache.enabled() {
        let done = P::read(st, clock, ino, path, offset, buf)?;
        clock.wait(done, Wait::Read);
        return Ok(());
    }
    let ps = st.page_size as u64;
    let end = offset + buf.len() as u64;
    let (first, last) = (offset / ps, (end - 1) / ps);
    let placed = st.placed_len(ino);
    let fetch = st.cache.plan_read(ino, first, last, placed.div_ceil(ps));
    let mut ready = clock.now();
    // Hits first: fetching the misses may evict them. Runs of pages whose bytes are on the
    // device are read from there at once, without time (they are hits).
    let mut on_device: Option<(u64, u64)> = None;
    for p in first..=last {
        let Some(hit) = st.cache.read(ino, p, buf, offset) else { continue };
        ready = ready.max(hit.ready);
        st.cache.stats_mut().hits += 1;
        if !hit.on_device {
            continue;
        }
        match &mut on_device {
            Some((_, end)) if *end == p => *end = p + 1,
            _ => {
                if let Some(run) = on_device.replace((p, p + 1)) {
                    contents(st, ino, path, run, buf, offset)?;
                }
            }
        }
    }
    if let Some(run) = on_device {
        contents(st, ino, path, run, buf, offset)?;
    }
    for &(p, n) in &fetch.wait {
        ready = ready.max(fill(st, clock, ino, path, (p, n), placed, Some((buf, offset)))?);
        st.cache.stats_mut().misses += n;
    }
    for &(p, n) in &fetch.ahead {
        fill(st, clock, ino, path, (p, n), placed, None)?;
        st.cache.stats_mut().readahead_pages += n;
    }
    clock.wait(ready, Wait::Read);
    // Linux's flusher wakes on a timer, not on writes: a read-only phase writes back too.
    write_back_due(st, clock)
}

/// Reads the file's bytes of pages `from..to` that fall in `buf` (the bytes from `buf_at`) from
/// the placement, without time: cached pages whose bytes are on the device.
fn contents<P: Placement>(
    st: &mut State<P>,
    ino: u64,
    path: &str,
    (from, to): (u64, u64),
    buf: &mut [u8],
    buf_at: u64,
) -> Result<()> {
    let ps = st.page_size as u64;
    let start = buf_at.max(from * ps);
    let end = (buf_at + buf.len() as u64).min(to * ps);
    P::contents(st, ino, path, start, &mut buf[(start - buf_at) as usize..(end - buf_at) as usize])
}

/// Copies the part of `data` (the bytes of a file from `data_at`) that falls in `buf` (the bytes
/// from `buf_at`).
fn copy_page(buf: &mut [u8], buf_at: u64, data_at: u64, data: &[u8]) {
    let from = buf_at.max(data_at);
    let to = (buf_at + buf.len() as u64).min(data_at + data.len() as u64);
    if from < to {
        let (b, d) = ((from - buf_at) as usize, (from - data_at) as usize);
        let n = (to - from) as usize;
        buf[b..b + n].copy_from_slice(&data[d..d + n]);
    }
}

/// Reads pages `first..first + n` of `ino` (up to its placed length) from the placement into the
/// cache, and what falls in `want` (a buffer of the file's bytes from an offset) into it; returns
/// when the device completes them. A cache that leaves clean pages on the device takes only the
/// read's time and counts, and the bytes `want` asks for (and a partial last page's) from the
/// device's store.
fn fill<P: Placement>(
    st: &mut State<P>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    (first, n): (u64, u64),
    placed: u64,
    want: Option<(&mut [u8], u64)>,
) -> Result<Nanos> {
    let ps = st.page_size as u64;
    let start = first * ps;
    let end = ((first + n) * ps).min(placed);
    if st.cache.config().clean_on_device {
        let done = P::read_timing(st, clock, ino, path, start, end - start)?;
        for page in first..first + n {
            let len = (end - page * ps).min(ps) as usize;
            if len as u64 == ps {
                insert(st, clock, ino, page, None, done)?;
            } else {
                let mut tail = vec![0u8; len];
                P::contents(st, ino, path, page * ps, &mut tail)?;
                insert(st, clock, ino, page, Some(&tail), done)?;
            }
        }
        if let Some((buf, buf_at)) = want {
            contents(st, ino, path, (first, first + n), buf, buf_at)?;
        }
        return Ok(done);
    }
    // The buffer is the file system's, lent out for the call: a fresh one per fill was zeroed
    // memory the kernel faulted in, every time.
    let mut data = std::mem::take(&mut st.read_buf);
    data.clear();
    data.resize((end - start) as usize, 0);
    let r = P::read(st, clock, ino, path, start, &mut data).and_then(|done| {
        for (k, page) in data.chunks(ps as usize).enumerate() {
            insert(st, clock, ino, first + k as u64, Some(page), done)?;
        }
        Ok(done)
    });
    if let (Ok(_), Some((buf, buf_at))) = (&r, want) {
        copy_page(buf, buf_at, start, &data);
    }
    st.read_buf = data;
    r
}

/// Puts a page in the cache (`None`: a whole page whose bytes are on the device); when every
/// cached page is dirty, writes back the file dirtied longest ago first.
fn insert<P: Placement>(
    st: &mut State<P>,
    clock: &SimClock,
    ino: u64,
    page: u64,
    data: Option<&[u8]>,
    ready: Nanos,
) -> Result<()> {
    loop {
        let State { cache, inodes, .. } = &mut *st;
        let placed = |i: u64| inodes.get(&i).map_or(0, |n| n.len());
        if cache.insert(ino, page, data, ready, &placed) {
            return Ok(());
        }
        let Some(victim) = cache.dirty_files().first().copied() else {
            return Err(FsError::Io {
                op: "append",
                path: format!("inode {ino}"),
                source: std::io::Error::other("page cache: no page to evict"),
            });
        };
        write_back(st, clock, victim, WriteBack::Pressure, false)?;
    }
}

/// Hands `ino`'s dirty bytes to its placement, in file order: all of them, or with `whole_pages`
/// only up to its last whole page.
pub(super) fn write_back<P: Placement>(
    st: &mut State<P>,
    clock: &SimClock,
    ino: u64,
    cause: WriteBack,
    whole_pages: bool,
) -> Result<()> {
    let ps = st.page_size as u64;
    let placed = st.placed_len(ino);
    let dirty_end = placed + st.cache.dirty_bytes(ino);
    let end = if whole_pages { dirty_end / ps * ps } else { dirty_end };
    if end <= placed {
        return Ok(());
    }
    // The buffer is the file system's, lent out for the call (a write-back inside it, under
    // pressure, gathers into a fresh one).
    let mut data = std::mem::take(&mut st.write_back_buf);
    st.cache.dirty_data(ino, placed, end - placed, &mut data);
    let path = st.cache.dirty_path(ino).to_string();
    let done = P::append(st, clock, ino, &path, &data, Origin::WriteBack);
    st.write_back_buf = data;
    done?;
    st.cache.cleaned(ino, placed, end - placed, cause, clock.now());
    Ok(())
}

/// Background write-back: files past `dirty_expire`, then files oldest first while dirty pages
/// are over `dirty_background_ratio` (whole pages).
fn write_back_due<P: Placement>(st: &mut State<P>, clock: &SimClock) -> Result<()> {
    for ino in st.cache.expired_files(clock.now()) {
        write_back(st, clock, ino, WriteBack::Expired, true)?;
    }
    if st.cache.over_background() {
        for ino in st.cache.dirty_files() {
            write_back(st, clock, ino, WriteBack::Background, true)?;
            if !st.cache.over_background() {
                break;
            }
        }
    }
    Ok(())
}

/// `fsync`: every dirty byte of `ino` written back, then the placement makes the file durable.
pub(super) fn sync<P: Placement>(fs: &Shared<P>, ino: u64, path: &str, epoch: u64) -> Result<()> {
    {
        let mut st = fs.state();
        if st.cache.enabled() {
            st.inode(ino, "sync", path)?;
            write_back(&mut st, fs.clock(), ino, WriteBack::Fsync, false)?;
        }
    }
    P::sync(fs, ino, path, epoch)
}

/// Before a clone: the files' dirty bytes on the placement, whose pages the clone reads or
/// replaces.
pub(super) fn before_clone<P: Placement>(st: &mut State<P>, clock: &SimClock, inos: [u64; 2]) -> Result<()> {
    for ino in inos {
        write_back(st, clock, ino, WriteBack::Clone, false)?;
    }
    Ok(())
}

/// After a clone (page-aligned): the destination's cached pages in the span held its old bytes;
/// with `clone_keeps_pages` they take the source's cached pages.
pub(super) fn after_clone<P: Placement>(st: &mut State<P>, clock: &SimClock, span: &CloneSpan) -> Result<()> {
    if !st.cache.enabled() {
        return Ok(());
    }
    let ps = st.page_size as u64;
    let (s0, d0, n) = (span.src_offset / ps, span.dst_offset / ps, span.len.div_ceil(ps));
    st.cache.drop_pages(span.dst.0, d0, d0 + n);
    if st.cache.config().clone_keeps_pages {
        for k in 0..n {
            // A page of the source on the device is the destination's there too, once cloned.
            if let Some((data, ready)) = st.cache.peek(span.src.0, s0 + k) {
                insert(st, clock, span.dst.0, d0 + k, data.as_deref(), ready)?;
            }
        }
    }
    Ok(())
}
