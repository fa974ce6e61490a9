//! CRC32C with LevelDB's masking. A CRC stored next to data that itself contains CRCs is masked
//! (rotated and offset) so that computing a CRC over a string that embeds CRCs stays well mixed.

const MASK_DELTA: u32 = 0xa282_ead8;

pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC32C of `a` followed by `b`, without concatenating them.
pub fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_masking() {
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c_extend(crc32c(b"hello "), b"world"), crc32c(b"hello world"));
        let c = crc32c(b"foo");
        assert_ne!(mask(c), c);
        assert_eq!(unmask(mask(c)), c);
    }
}
