//! Values named by text at the serde and command-line edges.
//!
//! Every reader here accepts a number or a boolean where text is expected and takes it as its
//! text: TOML and JSON may write `4096` or `true` without quotes. Writers always write the text.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serializer};

/// Text, or a number or a boolean taken as its text.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Text::deserialize(d).map(|t| t.0)
}

/// Text, or a number or a boolean taken as its text, or nothing (a null, or a missing field with
/// `#[serde(default)]`).
pub fn deserialize_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<Text>::deserialize(d).map(|t| t.map(|t| t.0))
}

/// `text`, trimmed, parsed by `T`'s `FromStr` (a command-line value parser for any named type).
pub fn parse<T: FromStr>(text: &str) -> Result<T, T::Err> {
    text.trim().parse()
}

/// Serde by name for a type with `FromStr` and `Display`: `#[serde(with = "units::text::by_name")]`.
pub mod by_name {
    use super::*;

    pub fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        parse(&super::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Serde by name for an optional value: `#[serde(default, with = "units::text::by_name_opt")]`.
pub mod by_name_opt {
    use super::*;

    pub fn serialize<T: Display, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(&v.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        match super::deserialize_opt(d)? {
            Some(t) => parse(&t).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Text, or a number or a boolean taken as its text.
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            Text(String),
            Unsigned(u64),
            Signed(i64),
            Float(f64),
            Bool(bool),
        }
        Ok(Text(match Any::deserialize(d)? {
            Any::Text(t) => t,
            Any::Unsigned(n) => n.to_string(),
            Any::Signed(n) => n.to_string(),
            Any::Float(f) => f.to_string(),
            Any::Bool(b) => b.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Named {
        #[serde(with = "by_name")]
        n: u32,
        #[serde(default, with = "by_name_opt")]
        o: Option<bool>,
    }

    #[test]
    fn numbers_and_booleans_are_read_as_their_text() {
        let v: Named = serde_json::from_str(r#"{"n": 7, "o": true}"#).unwrap();
        assert_eq!(v, Named { n: 7, o: Some(true) });
        let v: Named = serde_json::from_str(r#"{"n": " 7 "}"#).unwrap();
        assert_eq!(v, Named { n: 7, o: None });
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"n":"7","o":null}"#);
        let e = serde_json::from_str::<Named>(r#"{"n": "x"}"#).unwrap_err().to_string();
        assert!(e.starts_with("invalid digit found in string"), "{e}");
        assert_eq!(parse::<u8>(" 3\n"), Ok(3));
    }
}
