//! A page as its runs of non-zero bytes: the encoding of the compact store (`media::compact`).
//!
//! A page is cut into [`GRANULE`]-byte granules and kept as its runs of granules that hold a
//! non-zero byte, each as `first granule (u16) | granules - 1 (u16) | bytes`; a page of zeros keeps
//! no bytes at all. Decoding writes zeros and copies the runs back: the bytes read are exactly the
//! bytes encoded, whatever they are. A page is at most 65,536 granules (4 MiB).

/// Bytes per granule: small enough that a record's header and key cost little more than their own
/// bytes, large enough that the scan and the run headers stay cheap.
pub const GRANULE: usize = 64;

/// Bytes of a run's header: its first granule and its length in granules, u16 each.
pub const RUN_HEADER: usize = 4;

/// The runs of non-zero granules of `page` (`runs`: scratch space).
pub fn encode(page: &[u8], runs: &mut Vec<(usize, usize)>) -> Box<[u8]> {
    // Sized once: a first pass finds the runs, so the output is allocated exactly (this is on the
    // path of every page programmed, and reallocation was a large part of its cost). The pass
    // walks whole granules as fixed-size chunks (no index arithmetic or bounds check per granule:
    // that took a third of the encoder's time), then the page's last, partial granule if any.
    runs.clear();
    let mut open: Option<usize> = None;
    let mut step = |g: usize, non_zero: bool| match (non_zero, open) {
        (true, None) => open = Some(g),
        (false, Some(first)) => {
            runs.push((first, g));
            open = None;
        }
        _ => {}
    };
    let mut granules = page.chunks_exact(GRANULE);
    let mut g = 0;
    for granule in &mut granules {
        step(g, !is_zero(granule));
        g += 1;
    }
    let tail = granules.remainder();
    if !tail.is_empty() {
        step(g, !is_zero(tail));
        g += 1;
    }
    step(g, false);
    let len = runs.iter().map(|&(a, b)| RUN_HEADER + (b * GRANULE).min(page.len()) - a * GRANULE).sum();
    let mut out = Vec::with_capacity(len);
    for &(first, end) in runs.iter() {
        // Both fit a u16: a page has at most 65,536 granules, and a run of all of them starts at 0
        // (its length is kept minus one).
        out.extend_from_slice(&(first as u16).to_le_bytes());
        out.extend_from_slice(&((end - first - 1) as u16).to_le_bytes());
        out.extend_from_slice(&page[first * GRANULE..(end * GRANULE).min(page.len())]);
    }
    out.into_boxed_slice()
}

/// Whether every byte of `g` is zero: the OR of its 8-byte words, with no early exit, which the
/// compiler turns into wide vector operations (a byte-by-byte scan that stops at the first
/// non-zero byte cannot be, and cost a third of a zero-valued run's time).
fn is_zero(g: &[u8]) -> bool {
    // A whole granule has a length the compiler knows, and its loop unrolls into a few vector
    // ORs; only a page's last, partial granule takes the general loop.
    if let Ok(full) = <&[u8; GRANULE]>::try_from(g) {
        return full.chunks_exact(8).fold(0u64, |a, w| a | u64::from_ne_bytes(w.try_into().expect("8 bytes"))) == 0;
    }
    let words = g.chunks_exact(8);
    let tail = words.remainder().iter().fold(0u8, |a, &b| a | b);
    words.fold(0u64, |a, w| a | u64::from_ne_bytes(w.try_into().expect("8-byte chunk"))) == 0 && tail == 0
}

/// Writes the page whose runs are `runs` into `buf` (the page's length).
pub fn decode(runs: &[u8], buf: &mut [u8]) {
    decode_range(runs, 0, buf);
}

/// Writes the page's bytes `offset..offset + buf.len()` into `buf`, from its runs.
pub fn decode_range(runs: &[u8], offset: usize, buf: &mut [u8]) {
    let end_wanted = offset + buf.len();
    // Every byte of `buf` is written once: zeros between the runs, the runs' bytes over them (a
    // fill of the whole buffer first, then the copies, wrote the non-zero bytes twice). Runs are
    // in page order, so the first run past the range ends the walk.
    let mut written = 0;
    let mut at = 0;
    while at < runs.len() {
        let first = u16::from_le_bytes([runs[at], runs[at + 1]]) as usize * GRANULE;
        if first >= end_wanted {
            break;
        }
        let granules = u16::from_le_bytes([runs[at + 2], runs[at + 3]]) as usize + 1;
        at += RUN_HEADER;
        // The run's bytes: whole granules, but a page's last granule may be partial, and the
        // run's stored length says where it ends.
        let stored = run_len(runs, at, granules);
        let (from, to) = (first.max(offset), (first + stored).min(end_wanted));
        if from < to {
            buf[written..from - offset].fill(0);
            buf[from - offset..to - offset].copy_from_slice(&runs[at + from - first..at + to - first]);
            written = to - offset;
        }
        at += stored;
    }
    buf[written..].fill(0);
}

/// The stored bytes of a run of `granules` starting at `at` of `runs`: whole granules, or fewer
/// when the run is the last and ends the page in a partial granule.
fn run_len(runs: &[u8], at: usize, granules: usize) -> usize {
    (granules * GRANULE).min(runs.len() - at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(page: &[u8]) -> usize {
        let runs = encode(page, &mut Vec::new());
        let mut back = vec![0xAA; page.len()];
        decode(&runs, &mut back);
        assert_eq!(back, page);
        runs.len()
    }

    #[test]
    fn pages_come_back_byte_for_byte_and_zeros_cost_nothing() {
        let ps = 16 << 10;
        assert_eq!(round_trip(&vec![0u8; ps]), 0, "a page of zeros keeps no bytes");
        let full: Vec<u8> = (0..ps).map(|i| (i % 251) as u8 + 1).collect();
        assert_eq!(round_trip(&full), ps + RUN_HEADER, "one run of the whole page");
        // A record header and key at 1,000 and another at 9,000, zeros between: two runs.
        let mut records = vec![0u8; ps];
        records[1000..1400].fill(7);
        records[9000..9010].fill(9);
        let kept = round_trip(&records);
        assert!(kept <= 2 * RUN_HEADER + 400 + 10 + 4 * GRANULE, "{kept} bytes kept for 410 non-zero bytes");
        // Non-zero bytes at both edges, and in the last byte only.
        let mut edges = vec![0u8; ps];
        edges[0] = 1;
        edges[ps - 1] = 2;
        assert_eq!(round_trip(&edges), 2 * (RUN_HEADER + GRANULE));
    }

    /// One non-zero byte anywhere, in a whole granule or in a page's last, partial one, is kept
    /// with its granule and nothing else.
    #[test]
    fn a_single_byte_is_found_at_every_offset() {
        let ps = 1000; // 15 whole granules and a partial one of 40 bytes
        for at in 0..ps {
            let mut page = vec![0u8; ps];
            page[at] = 0x80;
            let granule = GRANULE.min(ps - at / GRANULE * GRANULE);
            assert_eq!(round_trip(&page), RUN_HEADER + granule, "byte {at}");
        }
    }

    #[test]
    fn a_range_of_a_page_decodes_alone() {
        let ps = 1000; // a partial last granule
                       // Zero stretches of 150 bytes hold whole zero granules: runs with gaps between them.
        let page: Vec<u8> = (0..ps).map(|i| if (i / 150) % 3 == 0 { 0 } else { (i % 200) as u8 + 1 }).collect();
        let runs = encode(&page, &mut Vec::new());
        assert!(runs.len() < ps, "the page has zero granules");
        let sweep = (0..ps).step_by(7).flat_map(|from| (0..=ps - from).step_by(13).map(move |len| (from, len)));
        let edges = [(0, ps), (0, 1), (63, 2), (100, 500), (990, 10), (999, 1), (500, 0)];
        for (from, len) in edges.into_iter().chain(sweep) {
            // Not zeros: a gap between runs left unwritten shows.
            let mut out = vec![0xEE; len];
            decode_range(&runs, from, &mut out);
            assert_eq!(out, &page[from..from + len], "bytes {from}..{}", from + len);
        }
    }
}
