//! `hourglass`: the command line for RSA-based timed cryptography.
//!
//! Subcommands are grouped by domain: `hourglass rsa ...` for keys and the RSA variants,
//! `hourglass bench ...` for the measurements, `hourglass demo` for a guided tour.

mod bench;
mod ca_cmd;
mod cli_error;
mod demo;
mod demo_public;
mod demo_submission;
mod dkg_cmd;
mod entropy_args;
mod files;
mod output_file;
mod progress;
mod puzzle_cmd;
mod rsa_cmd;
mod submit_cmd;
mod timelock_cmd;
mod vdf_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli_error::CliError;

const EXAMPLES: &str = "\
Examples:
  hourglass demo
  hourglass rsa keygen --variant rebalanced --bits 3072 -o key.pem
  hourglass rsa inspect -i key.pem
  hourglass vdf eval --input 'block 1234' --iterations 2^20 -o proof.json
  hourglass dkg local --parties 3 --bits 2048 -o cluster
  hourglass bench rsa --bits 2048,3072";

/// RSA-based timed cryptography: RSA and its fast variants, with benchmarks against OpenSSL.
#[derive(Parser, Debug)]
#[command(name = "hourglass", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// RSA keys and operations: standard, CRT, rebalanced, scheme A and B.
    Rsa(rsa_cmd::RsaArgs),
    /// RSA time-lock puzzles: keys, solving, verification.
    Puzzle(puzzle_cmd::PuzzleArgs),
    /// Institution certificate authorities for time-lock certificates.
    Ca(ca_cmd::CaArgs),
    /// Offline submission: puzzle sets, sealing a document, verifying a bundle.
    Submit(submit_cmd::SubmitArgs),
    /// Time-lock encryption of files (Rivest-Shamir-Wagner) and classic RSW puzzles.
    Timelock(timelock_cmd::TimelockArgs),
    /// Verifiable delay functions: Wesolowski and Pietrzak proofs in RSA groups.
    Vdf(vdf_cmd::VdfArgs),
    /// Distributed RSA key generation (nobody learns the factors) and signing with the shares.
    Dkg(dkg_cmd::DkgArgs),
    /// Benchmarks that reproduce the papers' tables and compare with OpenSSL.
    Bench(bench::BenchArgs),
    /// The whole offline-submission flow in about 30 s (or `--rsa`: a tour of the RSA variants).
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), CliError> = match cli.command {
        Command::Rsa(args) => rsa_cmd::run(args),
        Command::Puzzle(args) => puzzle_cmd::run(args),
        Command::Ca(args) => ca_cmd::run(args),
        Command::Submit(args) => submit_cmd::run(args),
        Command::Timelock(args) => timelock_cmd::run(args),
        Command::Vdf(args) => vdf_cmd::run(args),
        Command::Dkg(args) => dkg_cmd::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Demo(args) => demo::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            err.print();
            ExitCode::from(err.code)
        }
    }
}
