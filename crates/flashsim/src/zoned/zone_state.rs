//! The state of a zone, by the NVMe ZNS command set's names; the machine that moves zones between
//! states is `state`.

use std::fmt;

use serde::Serialize;

/// The state of a zone (NVMe ZNS names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ZoneState {
    Empty,
    ImplicitlyOpened,
    ExplicitlyOpened,
    Closed,
    Full,
    ReadOnly,
    Offline,
}

impl ZoneState {
    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
    }

    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

impl fmt::Display for ZoneState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZoneState::Empty => "Empty",
            ZoneState::ImplicitlyOpened => "Implicitly Opened",
            ZoneState::ExplicitlyOpened => "Explicitly Opened",
            ZoneState::Closed => "Closed",
            ZoneState::Full => "Full",
            ZoneState::ReadOnly => "Read Only",
            ZoneState::Offline => "Offline",
        })
    }
}
