//! units: the values a user writes as text, parsed and printed in one place, below every other
//! crate of the workspace (it depends on none of them).
//!
//! - [`size`]: byte sizes with their units (`4096`, `4KiB`, `16 GiB`, `4GB`): [`Bytes`] (never
//!   zero), [`ByteCount`] (`0` allowed), [`BytesOrOff`] (`0` or `off`), and [`format_size`] for
//!   tables. Each parses with [`std::str::FromStr`], prints back with [`std::fmt::Display`] (the
//!   text parses to the same value), and goes through serde as that text.
//! - [`text`]: the serde and command-line edge of any value named by text: a number or a boolean
//!   where text is expected is taken as its text (a size written without quotes in TOML), and a
//!   type with `FromStr` and `Display` reads and writes by name ([`text::by_name`]).
//!
//! Contract: one spelling per value, the same at every edge (a command-line flag, a TOML file, the
//! JSON a run travels as); an error is one line that says what is wrong and what is accepted.

pub mod size;
pub mod text;

pub use size::{format_size, format_size_in, ByteCount, Bytes, BytesOrOff, SizeError};
