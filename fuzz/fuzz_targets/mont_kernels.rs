//! Every Montgomery squaring kernel against GMP on arbitrary moduli and inputs: the first two
//! bytes choose the modulus size (64 to 4160 bits) and the chain length (0 to 255), the rest
//! fill the modulus (made odd, top bit set) and the input. All kernels must agree with GMP's
//! `x^(2^k) mod n`.
#![no_main]

use hourglass_arith::mont::{Kernel, MontContext};
use hourglass_arith::squaring::square_k_times;
use hourglass_arith::Integer;
use libfuzzer_sys::fuzz_target;
use rug::integer::Order;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let bits = 64 + (u32::from(data[0]) * 16) % (4160 - 64);
    let k = u64::from(data[1]);
    let bytes = (bits as usize).div_ceil(8);
    let rest = &data[2..];
    let (nb, xb) = rest.split_at(rest.len().min(bytes));
    let mut n = Integer::from_digits(nb, Order::Msf);
    n.keep_bits_mut(bits);
    n.set_bit(bits - 1, true);
    n.set_bit(0, true);
    let x = Integer::from_digits(xb, Order::Msf) % &n;
    let want = square_k_times(&x, k, &n);
    for ctx in [MontContext::new(&n).unwrap(), MontContext::new_portable(&n).unwrap()] {
        for kernel in [Kernel::Portable, Kernel::X86Adx, Kernel::X86Ifma] {
            if ctx.supports(kernel) {
                assert_eq!(ctx.square_k_times_with(&x, k, kernel).unwrap(), want, "{kernel} at {bits} bits");
            }
        }
    }
});
