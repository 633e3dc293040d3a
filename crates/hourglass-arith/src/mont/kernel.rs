//! Which Montgomery squaring kernel runs.

/// A Montgomery squaring kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Portable Rust (`u128` products), any size, any CPU.
    Portable,
    /// x86-64 MULX/ADCX/ADOX assembly, 8 to 64 limbs in steps of 8; needs BMI2 and ADX.
    X86Adx,
    /// x86-64 AVX-512 IFMA, radix 2^52, moduli up to 4158 bits; needs AVX-512F and IFMA.
    X86Ifma,
}

impl Kernel {
    /// A short name for reports (`"portable"`, `"x86-64 adx"`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::X86Adx => "x86-64 adx",
            Kernel::X86Ifma => "x86-64 avx512-ifma",
        }
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
