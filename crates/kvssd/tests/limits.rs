//! Bad input is a typed error that names the limit, and changes nothing.

mod common;

use common::small_config;
use kvssd::{KvDevice, KvError, Plsc, PlscConfig};

#[test]
fn empty_and_oversized_keys_and_oversized_values_are_refused_with_their_limit() {
    let mut dev = Plsc::new(small_config()).unwrap();
    let (max_key, max_value) = (dev.max_key_size(), dev.max_value_size());
    assert_eq!(max_key, 32);
    // 4 planes x 1 KiB pages = 4096-byte buffer, less the 6-byte header and the largest key.
    assert_eq!(max_value, 4096 - 6 - 32);

    let e = dev.store(0, b"", b"v").unwrap_err();
    assert!(matches!(e, KvError::EmptyKey { max: 32 }), "{e:?}");
    assert!(e.to_string().contains("1 to 32 bytes"), "{e}");

    let long = vec![b'k'; max_key + 1];
    let e = dev.store(0, &long, b"v").unwrap_err();
    assert!(matches!(e, KvError::KeyTooLarge { len: 33, max: 32 }), "{e:?}");
    assert!(e.to_string().contains("33 bytes") && e.to_string().contains("32 bytes"), "{e}");
    for e in [
        dev.retrieve(0, &long).unwrap_err(),
        dev.delete(0, &long).unwrap_err(),
        dev.exist(0, &long).unwrap_err(),
        dev.retrieve(0, b"").unwrap_err(),
    ] {
        assert!(matches!(e, KvError::KeyTooLarge { .. } | KvError::EmptyKey { .. }), "{e:?}");
    }

    let big = vec![7u8; max_value + 1];
    let e = dev.store(0, b"k", &big).unwrap_err();
    assert!(matches!(e, KvError::ValueTooLarge { len, max } if len == max_value + 1 && max == max_value), "{e:?}");
    assert!(e.to_string().contains(&format!("maximum value size of {max_value} bytes")), "{e}");

    // Nothing was stored; the largest key and value are accepted and read back.
    assert!(!dev.exist(0, b"k").unwrap().value);
    assert_eq!(dev.counters().programs, 0);
    let (k, v) = (vec![b'x'; max_key], vec![9u8; max_value]);
    dev.store(0, &k, &v).unwrap();
    let t = dev.flush(0).unwrap();
    assert_eq!(dev.retrieve(t, &k).unwrap().value, Some(v));
}

#[test]
fn a_bad_configuration_names_its_field() {
    let mut cfg = small_config();
    cfg.l1_threshold_pages = 10_000;
    let e = Plsc::new(cfg).err().unwrap();
    assert!(matches!(e, KvError::InvalidConfig { .. }) && e.to_string().contains("l1_threshold_pages"), "{e}");
    let mut cfg = small_config();
    cfg.max_key_size = 5000;
    assert!(Plsc::new(cfg).err().unwrap().to_string().contains("max_key_size"));
    let mut cfg = small_config();
    cfg.media.geometry.page_size = 1000;
    assert!(Plsc::new(cfg).err().unwrap().to_string().contains("page_size"));
    assert!(PlscConfig::preset(Some(1 << 30)).unwrap().validate().is_ok());
}
