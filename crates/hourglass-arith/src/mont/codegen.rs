//! Generator of the x86-64 MULX/ADCX/ADOX kernels in `asm/` (compiled for tests only).
//!
//! The kernels are committed as generated text (`asm/sqr_adx_<limbs>.s`) and included with
//! `include_str!` by [`super::x86_adx`]; the test `generated_kernels_are_up_to_date` checks that
//! the committed files are exactly what this generator produces. To regenerate them after
//! changing the generator:
//!
//! ```text
//! HOURGLASS_REGEN_ASM=1 cargo test -p hourglass-arith --lib mont::codegen
//! ```
//!
//! # What one kernel computes
//!
//! `k` times in a row (`k >= 1`, the loop is inside the asm block): `a = a^2 / R mod n`, with
//! `R = 2^(64 L)`. Values are "almost Montgomery" (as in OpenSSL's RSAZ code): any `a < R` is
//! accepted and every result is `< R` and congruent to `a^2 / R`, but not necessarily `< n`; the
//! caller reduces once at the end of the chain.
//!
//! # Algorithm (all unrolled by this generator; loops only over tiles and strips)
//!
//! Notation: `B = 2^64`, positions are limb indices, `L` is a multiple of 8.
//!
//! 1. **Off-diagonal square** `S = sum_{i<j} a_i a_j B^(i+j)` into `V[0..2L)`, in *strips* of
//!    eight rows (`i` in `8s..8s+8`). A strip keeps an 8-limb *window* of positions in
//!    `r8..r15`; each row adds `a_i * (8 limbs of a)` with two carry chains (ADCX for the low
//!    halves, ADOX for the high halves) and slides the window up by one position: the lowest
//!    limb leaves the window (stored, after adding the value already in memory for that
//!    position on the otherwise idle ADOX chain) and the product's top half becomes the new
//!    highest limb. The first 8x8 block of each strip is the triangle `j > i`.
//! 2. **Doubling and diagonal**: `V = 2 S + sum a_i^2 B^(2i)` (one pass, two carry chains); the
//!    upper half goes to `H`, so that `V[L..2L)` is free.
//! 3. **Montgomery reduction** in strips of eight rows: the first 8x8 block computes the eight
//!    factors `m = V[i] * n' mod B` one after the other (MULX, which leaves the flags alone) and
//!    stores them in the now-zero positions `V[i..i+8)`; the other blocks reuse them. Positions
//!    `>= L` accumulate only the contributions `m * n` (not `H`), so a strip never has to merge a
//!    carry into memory: its final window is stored as is.
//! 4. **Final correction**: `r = H + V[L..2L)` with carry `c`. Since `a < R`, the unreduced
//!    result `r + c R = (a^2 + m n) / R` is below `R + n`, so when `c = 1` one subtraction of `n`
//!    (an addition of `R - n` modulo `R`) brings it below `R`; when `c = 0` nothing is done.
//!    The branch is taken only when the sum carries out (about 15 to 25% of the squarings for
//!    random full-size moduli, in simulation), which costs less on average than a branch-free
//!    conditional subtraction over all limbs.
//!
//! # Performance notes (AMD Zen 3, measured with interleaved micro-benchmarks)
//!
//! - The MULX + ADCX + ADOX triple per product runs at about 1 product per cycle when nothing
//!   else is in the way, which saturates the integer pipes: every extra ALU instruction in the
//!   inner loop costs one to two cycles, while loads, register moves and zeroing idioms are
//!   free. A row of 8 products costs about 11 cycles (`W + 3` for a window of `W` limbs, also
//!   measured for W = 9, 10, 11): the two carry absorptions at the top of each row are the
//!   overhead. This is why memory is merged on the ADOX chain at the bottom of a row (free)
//!   rather than in a separate pass (about 9 cycles per 8x8 block), and why strips never carry
//!   into memory.
//! - `rsp`-relative stores in the inner loop are slower than stores through another base
//!   register (Zen's stack "memory file"), so rows only address memory through `rcx`, `rsi`
//!   and `rdi`.
//! - Fully unrolling the tile loops (3,700 instructions at 32 limbs) gives the same speed as the
//!   loops; the m-factor latency chain of the reduction costs about 1%.
//! - What would be left: a window of 11 limbs (about 1.30 instead of 1.39 cycles per product,
//!   but 32 = 11 + 11 + 10 needs irregular tiles and full unrolling), and the idle AVX2 units
//!   (one VPMULUDQ + VPADDQ per cycle run for free next to the scalar chains) for part of the
//!   products.
//!
//! # Register and memory interface
//!
//! Inputs: `rsi` = `a` (`L` limbs, in/out), `rcx` = `n` (`L` limbs, with `n' = -n^-1 mod 2^64`
//! stored in the word just below `n`), `rdx` = `R - n` (`L` limbs), `rdi` = `V` (scratch,
//! `2L + 8` limbs), `r8` = `H` (scratch, `L` limbs), `r9` = `k`. The kernel saves and restores
//! `rbx` and `rbp` itself and uses a small frame below `rsp`; every other general register and
//! the flags are clobbered.

use std::fmt::Write as _;

/// The window registers, lowest position first.
const WIN: [&str; 8] = ["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];

/// Frame slots (offsets from `rsp` after the prologue).
const F_A: usize = 0;
const F_N: usize = 8;
const F_NN: usize = 16;
const F_V: usize = 24;
const F_H: usize = 32;
const F_K: usize = 40;
const F_AEND: usize = 48;
const F_NEND: usize = 56;
const F_STRIPS: usize = 64;
const FRAME: usize = 80;

/// Accumulates instructions and hands out local label numbers.
struct Asm {
    text: String,
    label: u32,
}

impl Asm {
    fn new() -> Self {
        Self {
            text: String::new(),
            label: 1,
        }
    }

    fn op(&mut self, line: impl AsRef<str>) {
        self.text.push_str(line.as_ref());
        self.text.push('\n');
    }

    /// A fresh numeric local label. Labels made only of the digits 0 and 1 are skipped: LLVM
    /// reads `10b` as a binary number in Intel syntax.
    fn label(&mut self) -> u32 {
        loop {
            self.label += 1;
            if self.label.to_string().chars().any(|c| c != '0' && c != '1') {
                return self.label;
            }
        }
    }
}

/// `qword ptr [base + off]`.
fn q(base: &str, off: usize) -> String {
    if off == 0 {
        format!("qword ptr [{base}]")
    } else {
        format!("qword ptr [{base} + {off}]")
    }
}

/// One row of a full 8x8 block: window += rdx * x[0..8) where `rdx` = multiplier `r` of the
/// strip (read from `rcx`), `x` = eight limbs at `rsi`; the lowest window limb (position at
/// `rdi + 8r`) leaves the window and is stored, after adding the value in memory there when
/// `merge` is set.
fn full_row(a: &mut Asm, r: usize, merge: bool) {
    a.op(format!("mov rdx, {}", q("rcx", 8 * r)));
    a.op("mov rbx, r8");
    if merge {
        a.op(format!("adox rbx, {}", q("rdi", 8 * r)));
    }
    row_products(a, 0);
    a.op(format!("mov {}, rbx", q("rdi", 8 * r)));
}

/// Products `c = first..8` of a row whose window has already been shifted below `first`
/// (see the triangle), or a full row when `first == 0` (then `rbx` holds the leaving limb).
fn row_products(a: &mut Asm, first: usize) {
    for c in first..8 {
        a.op(format!("mulx {}, rax, {}", WIN[c], q("rsi", 8 * c)));
        if c == 0 {
            a.op("adcx rbx, rax");
        } else {
            a.op(format!("adcx {}, rax", WIN[c - 1]));
        }
        if c < 7 {
            a.op(format!("adox {}, {}", WIN[c], WIN[c + 1]));
        } else {
            a.op("adox r15, rbp");
            a.op("adcx r15, rbp");
        }
    }
}

/// Phase 1: off-diagonal products into `V`.
fn off_diagonal(a: &mut Asm, limbs: usize) {
    let strips = limbs / 8;
    for s in 0..strips {
        a.op(format!("mov rsi, {}", q("rsp", F_A)));
        if s > 0 {
            a.op(format!("add rsi, {}", 64 * s));
        }
        a.op("mov rcx, rsi");
        a.op(format!("mov rdi, {}", q("rsp", F_V)));
        if s > 0 {
            a.op(format!("add rdi, {}", 128 * s));
        }
        a.op("xor ebp, ebp");
        // Window = positions 16s..16s+8, already complete from the previous strips.
        for (k, w) in WIN.iter().enumerate() {
            if s > 0 {
                a.op(format!("mov {w}, {}", q("rdi", 8 * k)));
            } else {
                a.op(format!("xor {w}d, {w}d"));
            }
        }
        // Triangle: row r multiplies a[8s+r] by a[8s+c] for c > r.
        for r in 0..8 {
            if r < 7 {
                a.op(format!("mov rdx, {}", q("rcx", 8 * r)));
            }
            a.op("mov rbx, r8");
            for k in 0..=r.min(6) {
                a.op(format!("mov {}, {}", WIN[k], WIN[k + 1]));
            }
            if r == 7 {
                a.op("mov r15, rbp");
            } else {
                row_products(a, r + 1);
            }
            a.op(format!("mov {}, rbx", q("rdi", 8 * r)));
        }
        a.op("add rdi, 64");
        a.op("add rsi, 64");
        if s + 1 < strips {
            let l = a.label();
            a.op(format!("{l}:"));
            a.op("xor ebp, ebp");
            for r in 0..8 {
                full_row(a, r, s > 0);
            }
            a.op("add rdi, 64");
            a.op("add rsi, 64");
            a.op(format!("cmp rsi, {}", q("rsp", F_AEND)));
            a.op(format!("jb {l}b"));
        }
        // Positions 8s+L..8s+L+8 are touched for the first time: store the window.
        for (k, w) in WIN.iter().enumerate() {
            a.op(format!("mov {}, {w}", q("rdi", 8 * k)));
        }
    }
}

/// Phase 2: `V = 2 V + diagonal`, upper half into `H`.
fn double_add_diagonal(a: &mut Asm, limbs: usize) {
    a.op(format!("mov rsi, {}", q("rsp", F_A)));
    a.op(format!("mov rdi, {}", q("rsp", F_V)));
    a.op(format!("mov rcx, {}", q("rsp", F_H)));
    let dst = |p: usize| {
        if p < limbs {
            q("rdi", 8 * p)
        } else {
            q("rcx", 8 * (p - limbs))
        }
    };
    a.op("xor eax, eax");
    for i in 0..limbs {
        a.op(format!("mov rdx, {}", q("rsi", 8 * i)));
        a.op("mulx r9, r8, rdx");
        if i == 0 {
            a.op(format!("mov r10, {}", q("rdi", 8)));
            a.op("adcx r10, r10");
            a.op("adox r10, r9");
            a.op(format!("mov {}, r8", dst(0)));
            a.op(format!("mov {}, r10", dst(1)));
        } else if i == limbs - 1 {
            a.op(format!("mov r10, {}", q("rdi", 16 * i)));
            a.op("adcx r10, r10");
            a.op("adcx r9, rax");
            a.op("adox r10, r8");
            a.op("adox r9, rax");
            a.op(format!("mov {}, r10", dst(2 * i)));
            a.op(format!("mov {}, r9", dst(2 * i + 1)));
        } else {
            a.op(format!("mov r10, {}", q("rdi", 16 * i)));
            a.op(format!("mov r11, {}", q("rdi", 16 * i + 8)));
            a.op("adcx r10, r10");
            a.op("adcx r11, r11");
            a.op("adox r10, r8");
            a.op("adox r11, r9");
            a.op(format!("mov {}, r10", dst(2 * i)));
            a.op(format!("mov {}, r11", dst(2 * i + 1)));
        }
    }
}

/// Phase 3: Montgomery reduction of `V[0..L) + H B^L`, contributions above `L` kept in `V`.
fn reduce(a: &mut Asm, limbs: usize) {
    let strips = limbs / 8;
    a.op(format!("mov qword ptr [rsp + {F_STRIPS}], {strips}"));
    a.op(format!("mov rdi, {}", q("rsp", F_V)));
    let ls = a.label();
    a.op(format!("{ls}:"));
    a.op(format!("mov rsi, {}", q("rsp", F_N)));
    a.op("mov rcx, rdi");
    for (k, w) in WIN.iter().enumerate() {
        a.op(format!("mov {w}, {}", q("rdi", 8 * k)));
    }
    a.op("xor ebp, ebp");
    // m_0 = V[i] * n' mod 2^64 (n' sits just below n).
    a.op("mov rdx, r8");
    a.op("mulx rax, rdx, qword ptr [rsi - 8]");
    for r in 0..8 {
        a.op(format!("mov {}, rdx", q("rcx", 8 * r)));
        a.op("mov rbx, r8");
        // The leaving limb becomes zero: only its carry matters.
        row_products(a, 0);
        if r < 7 {
            a.op("mov rdx, r8");
            a.op("mulx rax, rdx, qword ptr [rsi - 8]");
        }
    }
    a.op("add rdi, 64");
    a.op("add rsi, 64");
    if strips > 1 {
        let lt = a.label();
        a.op(format!("{lt}:"));
        a.op("xor ebp, ebp");
        for r in 0..8 {
            full_row(a, r, true);
        }
        a.op("add rdi, 64");
        a.op("add rsi, 64");
        a.op(format!("cmp rsi, {}", q("rsp", F_NEND)));
        a.op(format!("jb {lt}b"));
    }
    for (k, w) in WIN.iter().enumerate() {
        a.op(format!("mov {}, {w}", q("rdi", 8 * k)));
    }
    a.op(format!("sub rdi, {}", 8 * limbs - 64));
    a.op(format!("dec qword ptr [rsp + {F_STRIPS}]"));
    a.op(format!("jnz {ls}b"));
}

/// Phase 4: `a = H + V[L..2L)`; if that carries out (`>= R`), add `R - n` (i.e. subtract `n`).
fn correct(a: &mut Asm, limbs: usize) {
    a.op(format!("mov rdi, {}", q("rsp", F_V)));
    a.op(format!("mov rcx, {}", q("rsp", F_H)));
    a.op(format!("mov rdx, {}", q("rsp", F_A)));
    a.op("xor eax, eax");
    for j in 0..limbs {
        a.op(format!("mov r8, {}", q("rcx", 8 * j)));
        a.op(format!("adcx r8, {}", q("rdi", 8 * (limbs + j))));
        a.op(format!("mov {}, r8", q("rdx", 8 * j)));
    }
    let done = a.label();
    a.op(format!("jnc {done}f"));
    a.op(format!("mov rsi, {}", q("rsp", F_NN)));
    a.op("xor eax, eax");
    for j in 0..limbs {
        a.op(format!("mov r8, {}", q("rdx", 8 * j)));
        a.op(format!("adcx r8, {}", q("rsi", 8 * j)));
        a.op(format!("mov {}, r8", q("rdx", 8 * j)));
    }
    a.op(format!("{done}:"));
}

/// The complete kernel for `limbs` limbs (a multiple of 8), as assembly text.
pub(crate) fn generate(limbs: usize) -> String {
    assert!(
        limbs >= 8 && limbs.is_multiple_of(8),
        "limb count must be a multiple of 8"
    );
    let mut a = Asm::new();
    let mut head = String::new();
    let _ = writeln!(
        head,
        "// GENERATED by crates/hourglass-arith/src/mont/codegen.rs: do not edit.\n\
         // Montgomery squaring chain, {limbs} limbs ({} bits), x86-64 BMI2 + ADX.",
        64 * limbs
    );
    a.text.push_str(&head);
    a.op("push rbx");
    a.op("push rbp");
    a.op(format!("sub rsp, {FRAME}"));
    a.op(format!("mov {}, rsi", q("rsp", F_A)));
    a.op(format!("mov {}, rcx", q("rsp", F_N)));
    a.op(format!("mov {}, rdx", q("rsp", F_NN)));
    a.op(format!("mov {}, rdi", q("rsp", F_V)));
    a.op(format!("mov {}, r8", q("rsp", F_H)));
    a.op(format!("mov {}, r9", q("rsp", F_K)));
    a.op(format!("lea rax, [rsi + {}]", 8 * limbs));
    a.op(format!("mov {}, rax", q("rsp", F_AEND)));
    a.op(format!("lea rax, [rcx + {}]", 8 * limbs));
    a.op(format!("mov {}, rax", q("rsp", F_NEND)));
    let top = a.label();
    a.op(format!("{top}:"));
    off_diagonal(&mut a, limbs);
    double_add_diagonal(&mut a, limbs);
    reduce(&mut a, limbs);
    correct(&mut a, limbs);
    a.op(format!("dec qword ptr [rsp + {F_K}]"));
    a.op(format!("jnz {top}b"));
    a.op(format!("add rsp, {FRAME}"));
    a.op("pop rbp");
    a.op("pop rbx");
    a.text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(limbs: usize) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/mont/asm")
            .join(format!("sqr_adx_{limbs}.s"))
    }

    #[test]
    fn generated_kernels_are_up_to_date() {
        let regen = std::env::var_os("HOURGLASS_REGEN_ASM").is_some();
        for &limbs in super::super::x86_adx::KERNEL_LIMBS {
            let want = generate(limbs);
            let p = path(limbs);
            if regen {
                std::fs::write(&p, &want).unwrap();
            }
            let have = std::fs::read_to_string(&p).unwrap_or_default();
            assert!(
                have == want,
                "{} is stale: rerun with HOURGLASS_REGEN_ASM=1",
                p.display()
            );
        }
    }

    #[test]
    fn labels_avoid_binary_lookalikes() {
        let mut a = Asm::new();
        for _ in 0..200 {
            let l = a.label().to_string();
            assert!(l.chars().any(|c| c != '0' && c != '1'), "{l}");
        }
    }
}
