//! LEB128 varints and zigzag, the integer encoding of the binary format.
//!
//! Writing appends to a `Vec<u8>` the writer reuses, so encoding a record
//! never allocates once the buffers reached their steady size. Reading goes
//! through [`Cursor`], which returns `None` instead of panicking on short or
//! malformed input: the decoder turns that into a corrupt-frame error.

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn put_uvarint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Maps signed to unsigned so that small magnitudes get short varints.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends `v` zigzag-encoded as a varint.
#[inline]
pub fn put_ivarint(buf: &mut Vec<u8>, v: i64) {
    put_uvarint(buf, zigzag(v));
}

/// A read position over a byte slice that never panics.
#[derive(Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits in 64 bits.
    pub fn uvarint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.u8()?;
            if i == 9 && b > 1 {
                return None; // more than 64 bits
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    pub fn ivarint(&mut self) -> Option<i64> {
        self.uvarint().map(unzigzag)
    }

    /// `n` raw bytes.
    pub fn bytes(&mut self, n: u64) -> Option<&'a [u8]> {
        let n = usize::try_from(n).ok()?;
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_extremes() {
        let values = [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut buf = Vec::new();
        for v in values {
            put_uvarint(&mut buf, v);
        }
        let mut c = Cursor::new(&buf);
        for v in values {
            assert_eq!(c.uvarint(), Some(v));
        }
        assert!(c.is_empty());
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -123456789] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn rejects_overlong() {
        let buf = [0xffu8; 11];
        assert_eq!(Cursor::new(&buf).uvarint(), None);
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(Cursor::new(&buf).uvarint(), None);
        assert_eq!(Cursor::new(&[0x80]).uvarint(), None);
    }
}
