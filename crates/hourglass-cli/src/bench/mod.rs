//! `hourglass bench ...`: measurements that reproduce the papers' tables, against OpenSSL
//! timed in the same run.

mod dkg;
mod keygen;
mod openssl_baseline;
mod plot;
pub(crate) mod puzzle;
mod rsa;
mod squaring;
mod stats;
mod submit;
mod vdf;

use clap::{Args, Subcommand};

use crate::cli_error::CliError;

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
    /// over loopback TLS; `--tables targets` runs the full-generation targets.
    #[command(
        after_help = "Examples:\n  hourglass bench dkg\n  hourglass bench dkg --tables 1 --bits 1024,2048,4096 --runs 5\n  hourglass bench dkg --tables 2,3 --rtt-ms 200\n  hourglass bench dkg --tables targets --runs 3 --json"
    )]
    Dkg(dkg::DkgBenchArgs),
    /// Trustless offline submission: the proofs' cost against the squarings, and public
    /// verification of a 10-link bundle on RSA-2048 (the institution's trapdoor verification
    /// beside it).
    #[command(
        after_help = "Examples:\n  hourglass bench submit\n  hourglass bench submit --links 10 --squarings 4194304 --runs 201 --json"
    )]
    Submit(submit::SubmitBenchArgs),
}

/// Runs `hourglass bench ...`.
pub fn run(args: BenchArgs) -> Result<(), CliError> {
    match args.command {
        BenchCommand::Rsa(a) => rsa::run(a),
        BenchCommand::Keygen(a) => keygen::run(a),
        BenchCommand::Vdf(a) => vdf::run(a),
        BenchCommand::Squaring(a) => squaring::run(a),
        BenchCommand::Dkg(a) => dkg::run(a),
        BenchCommand::Submit(a) => submit::run(a),
        BenchCommand::Puzzle(mut a) => {
            a.include_everything();
            puzzle::run(a)
        }
    }
}

/// Parses a comma-separated list of bit sizes.
pub fn parse_bits_list(s: &str) -> Result<Vec<u32>, String> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{t}' is not a bit size"))
        })
        .collect()
}
