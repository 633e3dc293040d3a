//! hourglass's benchmarks: measurements that reproduce the papers' tables (RSA variants, key
//! generation, time-lock puzzles, VDF verification, distributed key generation, trustless
//! submission), with OpenSSL and GMP timed in the same process and run on the same sizes.
//!
//! The command line's `hourglass bench ...` is a thin subcommand over [`BenchArgs`] and
//! [`run`]; everything here prints tables (or `--json`) and nothing asserts a speed: speed is
//! measured, never tested. docs/PERFORMANCE.md records the figures and what was tried.

#![deny(unsafe_code)]

mod args;
mod dkg;
mod error;
mod keygen;
mod log;
// The only unsafe code: OpenSSL's Montgomery multiplication through FFI (see its SAFETY note).
mod machine;
#[allow(unsafe_code)]
mod openssl_baseline;
mod plot;
mod postgres;
pub mod puzzle;
mod rsa;
mod rush;
mod served;
mod squaring;
mod stats;
mod submit;
mod tsa;
mod vdf;

use clap::{Args, Subcommand};
use hourglass_arith::atomic::Existing;

pub use args::parse_bits_list;
pub use error::{Disagreement, Error, Result, ScaleFailure, ScaleRunProblem};

/// Arguments of `hourglass bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Encryption/decryption time of all five variants (the RSA-variants paper's table), with
    /// the cost of the countermeasures and OpenSSL's private operation on the same sizes.
    #[command(
        after_help = "Examples:\n  hourglass bench rsa\n  hourglass bench rsa --bits 2048,4096 --runs 100 --json\n  hourglass bench rsa --plot rsa.svg"
    )]
    Rsa(rsa::RsaBenchArgs),
    /// Time many key generations (the RSAtron experiment) against OpenSSL's.
    #[command(
        after_help = "Examples:\n  hourglass bench keygen --bits 4096 --count 50 --plot keygen.svg\n  hourglass bench keygen --bits 2048 --count 100 --threads 2\n  hourglass bench keygen --bits 4096 --count 1000 --mr-rounds 12 --no-lucas   (RSAtron's setting)"
    )]
    Keygen(keygen::KeygenBenchArgs),
    /// Sequential squaring rates (paper Table I) against GMP and OpenSSL, the solver's checking
    /// overhead, and the key-generation cost of 2^t mod phi(n) (Table II).
    #[command(
        after_help = "Examples:\n  hourglass bench puzzle\n  hourglass bench puzzle --bits 2048 --seconds 5 --json"
    )]
    Puzzle(puzzle::PuzzleBenchArgs),
    /// Wesolowski and Pietrzak VDFs: the verification paper's Tables 1-5 (multi-exponentiation,
    /// hash-to-prime sieving, hashing), totals before/after, proof generation cost.
    #[command(
        after_help = "Examples:\n  hourglass bench vdf\n  hourglass bench vdf --bits 2048 --runs 101 --prove-iterations 0\n  hourglass bench vdf --json > vdf.json"
    )]
    Vdf(vdf::VdfBenchArgs),
    /// Nanoseconds per sequential modular squaring: hourglass's kernels against GMP and
    /// OpenSSL on the same modulus, with cycles against the multiplier's throughput.
    #[command(
        after_help = "Examples:\n  hourglass bench squaring\n  hourglass bench squaring --bits 2048 --seconds 1 --json"
    )]
    Squaring(squaring::SquaringBenchArgs),
    /// Distributed key generation (paper 001's Tables 1-4): iterations, data sent, time per
    /// iteration and total time by modulus size, network latency, batch size and party count,
    /// over loopback TLS; `--tables targets` runs the full-generation targets, `--tables scale`
    /// full generations with every party its own process (time, iterations, bytes sent and
    /// peak memory per party, beside the paper's Table 4 and the targets).
    #[command(
        after_help = "Examples:\n  hourglass bench dkg\n  hourglass bench dkg --tables 1 --bits 1024,2048,4096 --runs 5\n  hourglass bench dkg --tables 2,3 --rtt-ms 200\n  hourglass bench dkg --tables targets --runs 3 --json\n  hourglass bench dkg --tables scale\n      (3, 50 and 100 parties at 2048 bits, 200 at 1024 bits: about an hour)\n  hourglass bench dkg --tables scale --scale 100@2048,200@1024 --topology star\n  hourglass bench dkg --tables scale --scale 10@2048,50@1024 --runs 1\n  hourglass bench dkg --tables scale --rtt-ms 100 --json > scale.json\n      (every configuration again with a 100 ms round trip, beside the loopback rows)\nThe scale table runs this executable's `hourglass dkg local` for every generation; a failed\nconfiguration is reported in its row, the others still run, and the exit status is 2."
    )]
    Dkg(dkg::DkgBenchArgs),
    /// Trustless offline submission: the proofs' cost against the squarings, and public
    /// verification of a 10-link bundle on RSA-2048 (the institution's trapdoor verification
    /// beside it).
    #[command(
        after_help = "Examples:\n  hourglass bench submit\n  hourglass bench submit --links 10 --squarings 4194304 --runs 201 --json"
    )]
    Submit(submit::SubmitBenchArgs),
    /// RFC 3161: tokens per second through `POST /tsa` of `hourglass serve` (this executable,
    /// loopback, keep-alive clients) with an RSA-3072 and an ECDSA P-384 key, against OpenSSL's
    /// signatures per second on the same cores; or (--verify) one token verified, RSA-4096 and
    /// P-384 signers on paths of three, beside `openssl ts -verify` of the same token.
    #[command(
        after_help = "Examples:\n  hourglass bench tsa\n  hourglass bench tsa --key ecdsa-p256 --seconds 30 --clients 8 --json\n  hourglass bench tsa --verify\n  hourglass bench tsa --verify --rounds 1000 --json"
    )]
    Tsa(tsa::TsaBenchArgs),
    /// The transparency log of receipts: 10,000 entries through the service's sequencer on
    /// SQLite, inclusion proofs verified, and `log verify` of a 100,000-entry log served by
    /// `hourglass serve` read from scratch, each beside its baseline measured in the same run.
    #[command(
        after_help = "Examples:\n  hourglass bench log\n  hourglass bench log --entries 20000 --verify-entries 200000 --json"
    )]
    Log(log::LogBenchArgs),
    /// The deadline rush: N uploads (distinct 3 KB documents with valid bundles) from C
    /// concurrent clients, each on a fresh connection, to a real `hourglass serve` on loopback,
    /// on SQLite and on a throwaway PostgreSQL: uploads acknowledged per second, p50/p90/p99 of
    /// the 202 and the time until the last receipt, beside issue #39's targets.
    #[command(
        after_help = "Examples:\n  hourglass bench serve\n  hourglass bench serve --database sqlite --uploads 2000 --clients 100\n  hourglass bench serve --json > rush.json\nPostgreSQL needs the server binaries in /usr/lib/postgresql (scripts/setup-debian.sh installs\nthem). The clients run on the server's cores (at a real deadline they would not), so the\nfigures are what the server does with less than the whole machine."
    )]
    Serve(rush::ServeBenchArgs),
}

/// Runs `hourglass bench ...`. `existing` says whether an output file (a plot) that is already
/// there is replaced (the command line's `--force`) or refused.
pub fn run(args: BenchArgs, existing: Existing) -> Result<()> {
    match args.command {
        BenchCommand::Rsa(a) => rsa::run(a, existing),
        BenchCommand::Keygen(a) => keygen::run(a, existing),
        BenchCommand::Vdf(a) => vdf::run(a),
        BenchCommand::Squaring(a) => squaring::run(a),
        BenchCommand::Dkg(a) => dkg::run(a),
        BenchCommand::Tsa(a) => tsa::run(a),
        BenchCommand::Log(a) => log::run(a),
        BenchCommand::Serve(a) => rush::run(a),
        BenchCommand::Submit(a) => submit::run(a),
        BenchCommand::Puzzle(mut a) => {
            a.include_everything();
            puzzle::run(a)
        }
    }
}
