//! A section of a run specification made of the lab's own fields and a lower crate's override
//! struct embedded whole (the engine's `lsm::OptionOverrides`, the device's
//! `flashsim::GeometryOverrides`): one flat table of fields in the TOML, the JSON and the
//! command line, whichever crate owns a field.
//!
//! Writing is serde's: the section derives `Serialize` with the embedded struct `flatten`ed, so
//! its fields stand where it stands, in its order. Reading is here, because serde's `flatten`
//! reads the whole table into a buffer first and loses what a reader needs: an error in one of
//! the embedded fields would not name it (`engine: unknown unit` instead of
//! `engine.write_buffer_size: unknown unit`), and an unknown key could not be refused with the
//! fields accepted. So [`deserialize`] reads the table key by key: an unknown key is an error
//! naming it and every field (as `deny_unknown_fields` gives it), and each value is checked as it
//! is read (its own section's derive, or the embedded struct's, on that one field), so an error
//! names its field wherever the reader tracks paths (`serde_path_to_error`, which experiment
//! files use). The checked values, kept as JSON values meanwhile, then make the section (the own
//! fields through the section's derive, `remote = "Self"`; the embedded ones through the embedded
//! struct's). A field the lab names in words of its own (a plug-in's strategy) is read by the lab
//! ([`Flat::READ_BY_LAB`]).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// A section with an embedded override struct; see the module documentation.
pub trait Flat: Sized {
    /// The embedded struct.
    type Part: DeserializeOwned + Default;
    /// How many of the section's own fields stand before the embedded ones (their place in the
    /// list of fields an unknown key's error gives).
    const PART_AT: usize;
    /// The section's own fields, read by its derive (`#[serde(remote = "Self")]`, the embedded
    /// field `#[serde(flatten, skip_deserializing)]`).
    fn own<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
    /// The embedded struct in the section.
    fn part_mut(&mut self) -> &mut Self::Part;
    /// Embedded fields whose values are words the lab knows and the embedded struct does not (a
    /// plug-in's name): [`Flat::read_part_field`] reads them.
    const READ_BY_LAB: &'static [&'static str] = &[];
    /// Reads `value` into the embedded field `key`, one of [`Flat::READ_BY_LAB`].
    fn read_part_field(part: &mut Self::Part, key: &str, value: &Value) -> Result<(), String> {
        let _ = (part, value);
        Err(format!("{key} is read by its own struct"))
    }
}

/// Reads a [`Flat`] section; see the module documentation.
pub fn deserialize<'de, T: Flat, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let (name, own) = fields_of(|d| T::own(d));
    let (_, part) = fields_of(|d| T::Part::deserialize(d));
    let at = T::PART_AT.min(own.len());
    let all: Vec<&'static str> = own[..at].iter().chain(&part).chain(&own[at..]).copied().collect();
    d.deserialize_map(SectionVisitor::<T> { name, part, all, marker: PhantomData })
}

/// The struct name and the fields a derived `Deserialize` asks for (it names them to
/// `deserialize_struct`; this deserializer takes them and stops).
fn fields_of<T>(read: impl FnOnce(FieldNames) -> Result<T, de::value::Error>) -> (&'static str, Vec<&'static str>) {
    let mut found = ("", Vec::new());
    let _ = read(FieldNames(&mut found));
    found
}

struct FieldNames<'a>(&'a mut (&'static str, Vec<&'static str>));

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only a struct's fields are asked for"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = (name, fields.to_vec());
        Err(de::Error::custom("fields taken"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

struct SectionVisitor<T> {
    name: &'static str,
    part: Vec<&'static str>,
    all: Vec<&'static str>,
    marker: PhantomData<T>,
}

impl<'de, T: Flat> Visitor<'de> for SectionVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.name)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let (mut own, mut part, mut read_by_lab) = (Map::new(), Map::new(), Vec::new());
        while let Some(key) = map.next_key_seed(KnownField(&self.all))? {
            if own.contains_key(key) || part.contains_key(key) || read_by_lab.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::duplicate_field(key));
            }
            if !self.part.contains(&key) {
                own.insert(key.to_string(), map.next_value_seed(Checked(key, &check_own::<T>))?);
            } else if T::READ_BY_LAB.contains(&key) {
                read_by_lab.push((key, map.next_value_seed(Checked(key, &check_read_by_lab::<T>))?));
            } else {
                part.insert(key.to_string(), map.next_value_seed(Checked(key, &check_part::<T>))?);
            }
        }
        let mut section = T::own(Value::Object(own)).map_err(de::Error::custom)?;
        let embedded = section.part_mut();
        *embedded = T::Part::deserialize(Value::Object(part)).map_err(de::Error::custom)?;
        for (key, value) in read_by_lab {
            T::read_part_field(embedded, key, &value).map_err(de::Error::custom)?;
        }
        Ok(section)
    }
}

/// Reads a key that is one of the fields, else fails naming it and the fields (serde's own
/// message for an unknown field).
struct KnownField<'a>(&'a [&'static str]);

impl<'de> DeserializeSeed<'de> for KnownField<'_> {
    type Value = &'static str;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for KnownField<'_> {
    type Value = &'static str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<&'static str, E> {
        match self.0.iter().find(|f| **f == key) {
            Some(field) => Ok(field),
            None => Err(E::custom(format_args!("unknown field `{key}`, expected {}", OneOf(self.0)))),
        }
    }
}

/// Serde's list of accepted fields: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
struct OneOf<'a>(&'a [&'static str]);

impl fmt::Display for OneOf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted: Vec<String> = self.0.iter().map(|n| format!("`{n}`")).collect();
        match quoted.as_slice() {
            [] => f.write_str("no fields"),
            [one] => f.write_str(one),
            [a, b] => write!(f, "{a} or {b}"),
            all => write!(f, "one of {}", all.join(", ")),
        }
    }
}

/// A value, checked as it is read: an error is the reader's error at this field.
struct Checked<'a>(&'a str, &'a dyn Fn(&str, &Value) -> Result<(), String>);

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let value = Value::deserialize(d)?;
        (self.1)(self.0, &value).map_err(de::Error::custom)?;
        Ok(value)
    }
}

fn one_field(key: &str, value: &Value) -> Value {
    Value::Object(Map::from_iter([(key.to_string(), value.clone())]))
}

fn check_own<T: Flat>(key: &str, value: &Value) -> Result<(), String> {
    T::own(one_field(key, value)).map(drop).map_err(|e| e.to_string())
}

fn check_part<T: Flat>(key: &str, value: &Value) -> Result<(), String> {
    T::Part::deserialize(one_field(key, value)).map(drop).map_err(|e| e.to_string())
}

fn check_read_by_lab<T: Flat>(key: &str, value: &Value) -> Result<(), String> {
    T::read_part_field(&mut T::Part::default(), key, value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::named::ByteCount;
    use crate::spec::{Bytes, DeviceSpec, EngineName, EngineSpec, MappingRam};

    /// The keys of a JSON object, in order.
    fn keys(json: &str) -> Vec<String> {
        struct Keys(Vec<String>);
        impl<'de> Deserialize<'de> for Keys {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Keys;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                        let mut keys = Vec::new();
                        while let Some((k, _)) = map.next_entry::<String, de::IgnoredAny>()? {
                            keys.push(k);
                        }
                        Ok(Keys(keys))
                    }
                }
                d.deserialize_map(V)
            }
        }
        serde_json::from_str::<Keys>(json).unwrap().0
    }

    /// Every field of each section set (so none is left out when written).
    fn full() -> (EngineSpec, DeviceSpec) {
        let lsm = lsm::OptionOverrides {
            direct_reads: true,
            direct_writes: true,
            write_buffer_size: Some(Bytes(8 << 20)),
            max_file_size: Some(Bytes(4 << 20)),
            block_size: Some(Bytes(8192)),
            block_cache: Some(Bytes(1 << 30)),
            compaction_readahead: Some(ByteCount(0)),
            seek_compaction: Some(false),
            flush_lane: Some(true),
            sync_closed_wal: Some(true),
            max_bytes_for_level_base: Some(Bytes(64 << 20)),
            bloom_bits_per_key: Some(12),
            filter_layout: Some(lsm::FilterLayout::PerBlock),
            l0_compaction_trigger: Some(5),
            l0_slowdown_writes_trigger: Some(9),
            l0_stop_writes_trigger: Some(13),
            delayed_write_rate: Some(ByteCount(16 << 20)),
            ..lsm::OptionOverrides::default()
        };
        let engine = EngineSpec {
            name: EngineName::KvftlSp,
            profile: lsm::Profile::LevelDb,
            lsm,
            min_partition: Some(Bytes(4096)),
            max_partitions: Some(3),
            max_waste: Some(Bytes(2048)),
            mapping_ram: Some(MappingRam::Unlimited),
            dftl_cache: Some(kvssd::dftl_kv::DftlCache::Pages),
            buffer_reads: Some(false),
            gc_scope: Some(kvssd::GcScope::Plane),
            ust_planes: Some(kvssd::UstPlanes::Aligned),
        };
        let geometry = flashsim::GeometryOverrides {
            channels: Some(2),
            chips: Some(1),
            dies: Some(1),
            planes: Some(2),
            pages_per_block: Some(64),
            blocks_per_plane: Some(128),
        };
        let device = DeviceSpec {
            capacity: Some(Bytes(1 << 30)),
            page_size: Some(Bytes(8192)),
            zone_size: Some(Bytes(64 << 20)),
            block_size: Some(Bytes(1 << 20)),
            max_open_zones: Some(14),
            max_active_zones: Some(14),
            geometry,
            gc_reserve: Some(4),
            gc_destination: Some(flashsim::GcDestination::InPlane),
            page_cache: crate::spec::BytesOrOff(64 << 20),
            ..DeviceSpec::default()
        };
        (engine, device)
    }

    /// The message an unknown key `key` gets from a section whose fields are `fields`.
    fn unknown(key: &str, fields: &[String]) -> String {
        let fields: Vec<String> = fields.iter().map(|k| format!("`{k}`")).collect();
        format!("unknown field `{key}`, expected one of {}", fields.join(", "))
    }

    /// The fields a section reads are the fields it writes, in the order it writes them; a key
    /// that is none of them is refused naming it and them all (`deny_unknown_fields`' message).
    #[test]
    fn unknown_keys_are_refused_naming_every_field_in_order() {
        let (engine, device) = full();
        let json = serde_json::to_string(&engine).unwrap();
        assert_eq!(keys(&json).len(), 30, "{json}");
        assert_eq!(serde_json::from_str::<EngineSpec>(&json).unwrap(), engine);
        let e = serde_json::from_str::<EngineSpec>(r#"{"write_bufer_size": 1}"#).unwrap_err().to_string();
        assert_eq!(e, format!("{} at line 1 column 19", unknown("write_bufer_size", &keys(&json))));
        let json = serde_json::to_string(&device).unwrap();
        assert_eq!(serde_json::from_str::<DeviceSpec>(&json).unwrap(), device);
        // `ftl` is written only when a plug-in's, which this registry has none of.
        let mut fields = keys(&json);
        let gc = fields.iter().position(|k| k == "gc").unwrap();
        fields.insert(gc, "ftl".into());
        assert_eq!(fields.len(), 25, "{json}");
        let e = serde_json::from_str::<DeviceSpec>(r#"{"chanels": 2}"#).unwrap_err().to_string();
        assert_eq!(e, format!("{} at line 1 column 10", unknown("chanels", &fields)));
        assert!(e.contains("`max_active_zones`, `channels`") && e.contains("`blocks_per_plane`, `gc_reserve`"), "{e}");
        assert_eq!(serde_json::from_str::<DeviceSpec>("{}").unwrap(), DeviceSpec::default());
        assert_eq!(serde_json::from_str::<EngineSpec>("{}").unwrap(), EngineSpec::default());
    }

    /// An error in any field, the section's own or an embedded one, is the reader's error at
    /// that field (experiment files name it as `engine.write_buffer_size`).
    #[test]
    fn errors_name_their_field_wherever_it_is_owned() {
        let path = |text: &str, device: bool| {
            let v: toml::Value = toml::from_str(text).unwrap();
            let e = if device {
                serde_path_to_error::deserialize::<_, DeviceSpec>(v).map(drop).unwrap_err()
            } else {
                serde_path_to_error::deserialize::<_, EngineSpec>(v).map(drop).unwrap_err()
            };
            format!("{}: {}", e.path(), e.inner().message())
        };
        assert!(path("write_buffer_size = \"4G\"", false).starts_with("write_buffer_size: unknown unit 'G'"));
        assert_eq!(path("remap = \"fast\"", false), "remap: remap: unknown name 'fast'; accepted: off, base, full");
        assert!(path("name = \"nope\"", false).starts_with("name: unknown engine 'nope'"));
        assert_eq!(path("nmae = 1", false).split(',').next().unwrap(), "nmae: unknown field `nmae`");
        assert_eq!(path("dies = -1", true), "dies: invalid value: integer `-1`, expected u32");
        assert!(path("zone_gc = \"x\"", true).starts_with("zone_gc: 'x': accepted: off"));
    }

    /// `compaction` takes the lab's names (a plug-in's strategy), which the engine does not know.
    #[test]
    fn the_lab_reads_the_strategys_name() {
        let spec: EngineSpec = serde_json::from_str(r#"{"compaction": "ll", "write_buffer_size": 4096}"#).unwrap();
        assert_eq!(spec.lsm.compaction, lsm::CompactionStyle::LifetimeLeveling);
        assert_eq!(spec.lsm.write_buffer_size, Some(Bytes(4096)));
        let e = serde_json::from_str::<EngineSpec>(r#"{"compaction": "tiered"}"#).unwrap_err().to_string();
        assert!(e.starts_with("unknown compaction strategy 'tiered'; accepted: leveled, gear, ll"), "{e}");
        let e = serde_json::from_str::<EngineSpec>(r#"{"compaction": "ll", "compaction": "gear"}"#).unwrap_err();
        assert!(e.to_string().starts_with("duplicate field `compaction`"), "{e}");
    }
}
