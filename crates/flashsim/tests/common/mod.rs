//! What the zoned-device tests share: the small ZNS device both run on (4 planes of 8 blocks of 4
//! pages of 512 bytes, quick timings) and the names of the zone errors they compare.

use flashsim::{FlashError, Geometry, Timing};

/// Bytes of a page of [`geometry`].
pub const PAGE: usize = 512;

/// 4 planes (2 channels x 2 planes), 8 blocks of 4 pages per plane.
pub fn geometry() -> Geometry {
    Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 4,
        page_size: PAGE as u32,
        oob_size: 16,
    }
}

/// Array and transfer times short enough for thousands of commands per case.
pub fn timing() -> Timing {
    Timing { read_ns: 50_000, program_ns: 500_000, erase_ns: 3_000_000, transfer_ps_per_byte: 1_000 }
}

/// A zone error's variant name (what the tests and the model compare), `other` for the rest.
pub fn name(e: &FlashError) -> &'static str {
    match e {
        FlashError::ZoneInvalidWrite { .. } => "ZoneInvalidWrite",
        FlashError::ZoneIsFull { .. } => "ZoneIsFull",
        FlashError::ZoneBoundaryError { .. } => "ZoneBoundaryError",
        FlashError::TooManyOpenZones { .. } => "TooManyOpenZones",
        FlashError::TooManyActiveZones { .. } => "TooManyActiveZones",
        FlashError::InvalidZoneStateTransition { .. } => "InvalidZoneStateTransition",
        FlashError::ZoneIsReadOnly { .. } => "ZoneIsReadOnly",
        FlashError::ZoneIsOffline { .. } => "ZoneIsOffline",
        FlashError::NoSuchZone { .. } => "NoSuchZone",
        _ => "other",
    }
}
