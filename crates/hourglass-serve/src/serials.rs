//! The TSA's serial numbers, unique across the servers of one database.

use std::sync::atomic::{AtomicU64, Ordering};

/// The serial numbers of one server start: its instance number (taken from the database) in
/// the high 64 bits, a counter in the low 64.
pub(crate) struct Serials {
    instance: u64,
    next: AtomicU64,
}

impl Serials {
    /// The serial numbers of instance `instance`, counting from 1.
    pub(crate) fn new(instance: u64) -> Self {
        Self {
            instance,
            next: AtomicU64::new(1),
        }
    }

    /// The next serial number, unsigned big-endian.
    pub(crate) fn next(&self) -> [u8; 16] {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut serial = [0u8; 16];
        serial[..8].copy_from_slice(&self.instance.to_be_bytes());
        serial[8..].copy_from_slice(&n.to_be_bytes());
        serial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_numbers_carry_the_instance_and_never_repeat() {
        let a = Serials::new(7);
        let b = Serials::new(8);
        let (a1, a2, b1) = (a.next(), a.next(), b.next());
        assert_ne!(a1, a2);
        assert_ne!(a1, b1);
        assert_eq!(&a1[..8], &7u64.to_be_bytes());
        assert_eq!(&b1[8..], &1u64.to_be_bytes());
    }
}
