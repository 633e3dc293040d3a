//! `hourglass`: the command line for RSA-based timed cryptography.
//!
//! Subcommands are grouped by domain: `hourglass rsa ...` for keys and the RSA variants,
//! `hourglass bench ...` for the measurements, `hourglass demo` for a guided tour.

mod ca_cmd;
mod cli_error;
mod demo;
mod demo_public;
mod demo_submission;
mod dkg_cmd;
mod files;
mod inputs;
mod key_files;
mod log_cmd;
mod log_keys;
mod output_file;
mod progress;
mod puzzle_cmd;
mod puzzle_files;
mod rsa_cmd;
mod serve_cmd;
mod submit_cmd;
mod timelock_cmd;
mod timestamp_cmd;
mod vdf_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli_error::{CliError, IoOp, EXIT_CODES_HELP};

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
    /// Replace existing output files (keys, sets, certificates, results of long work); without
    /// it, hourglass refuses to overwrite anything and exits with status 2.
    #[arg(long, global = true)]
    force: bool,
    /// Passphrase for encrypted private keys (the first line of FILE), read and written;
    /// without it, hourglass asks on the terminal.
    #[arg(long, global = true, value_name = "FILE")]
    passphrase_file: Option<std::path::PathBuf>,
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
    /// RFC 3161 timestamps of any file, from any authority: verify, stamp, inspect.
    Timestamp(timestamp_cmd::TimestampArgs),
    /// Verifiable delay functions: Wesolowski and Pietrzak proofs in RSA groups.
    Vdf(vdf_cmd::VdfArgs),
    /// Distributed RSA key generation (nobody learns the factors) and signing with the shares.
    Dkg(dkg_cmd::DkgArgs),
    /// The institution's submission service: HTTP API, web page, signed receipts.
    #[command(after_help = "Examples:
  hourglass serve --data /var/lib/hourglass                         (SQLite, http://127.0.0.1:8080)
  hourglass serve --data srv/ --listen 0.0.0.0:8080 --database postgres://hourglass@db/hourglass
  hourglass serve --data srv/ --listen 10.0.0.5:8080 --trusted-proxy 10.0.0.0/24   (behind a proxy)
  hourglass serve --data srv/ --tsa-cert tsa-chain.pem --tsa-key tsa.key   (an institution's own TSA)
Then create a set (the token is in DIR/admin.token):
  curl -H \"Authorization: Bearer $(cat srv/admin.token)\" -H 'Content-Type: application/json' \\
       -d '{\"name\": \"conf-2027\", \"durations\": [\"4h\", \"1h\", \"10min\"]}' \\
       http://127.0.0.1:8080/api/v1/sets
The service is also an RFC 3161 TSA at POST /tsa (its certificates at /tsa.pem, /tsa-ca.pem):
  hourglass submit stamp paper.bundle --tsa http://127.0.0.1:8080/tsa -o paper.tsr
Every receipt is in its transparency log at /log (key at /log/key), cosigned by witnesses:
  hourglass serve --data srv/ --log-origin receipts.example.org/log \\
      --witness https://w1.example.org=w1.pub --witness https://w2.example.org=w2.pub \\
      --witness-quorum 2
  hourglass log verify --log http://127.0.0.1:8080/log --log-key log.pub --state audit.state
See docs/API.md.")]
    Serve(serve_cmd::ServeArgs),
    /// The transparency log of receipts: verify a log and its history, search it, run a
    /// witness, make witness keys.
    #[command(after_help = "Examples:
  hourglass log verify --log http://127.0.0.1:8080/log --log-key log.pub --state audit.state
  hourglass log search --log http://127.0.0.1:8080/log --log-key log.pub --document paper.pdf
  hourglass log keygen --name witness.example.org/w1 -o witness.key
  hourglass log witness --listen 0.0.0.0:7380 --key witness.key --log-key log.pub --state w-state/")]
    Log(log_cmd::LogArgs),
    /// Benchmarks that reproduce the papers' tables and compare with OpenSSL.
    Bench(hourglass_bench::BenchArgs),
    /// The whole offline-submission flow in about 30 s (or `--rsa`: a tour of the RSA variants).
    Demo(demo::DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Examples:
  hourglass completions bash > /etc/bash_completion.d/hourglass
  hourglass completions zsh > \"${fpath[1]}/_hourglass\"
  hourglass completions fish > ~/.config/fish/completions/hourglass.fish")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write roff man pages for hourglass and every subcommand into a directory.
    #[command(after_help = "Examples:
  hourglass man -o /usr/local/share/man/man1 && mandb
  hourglass man -o man/ && man -l man/hourglass-submit-verify.1")]
    Man {
        /// Directory to write hourglass.1, hourglass-rsa.1, ... into (created if missing).
        #[arg(short, long, value_name = "DIR")]
        out: std::path::PathBuf,
    },
}

/// Writes the completion script for `shell` to standard output.
fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    let mut cmd = command();
    clap_complete::generate(shell, &mut cmd, "hourglass", &mut std::io::stdout());
    Ok(())
}

/// Writes a man page per command and subcommand into `dir`.
fn man_pages(dir: &std::path::Path) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(IoOp::CreateDir, dir, e))?;
    let cmd = command();
    clap_mangen::generate_to(cmd, dir).map_err(|e| CliError::io(IoOp::ManPages, dir, e))?;
    Ok(())
}

/// Restores the default action of SIGPIPE (Rust ignores it, which turns a closed standard
/// output, as in `hourglass ... | head`, into a panic on the next write): the process then ends
/// quietly, as Unix tools do. Only for commands without network connections.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_DFL early in main, before any other thread
    // exists, has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `hourglass --version`: the version, the commit, the enabled features and the squaring
/// kernel this CPU gets at 2048 bits.
fn long_version() -> &'static str {
    let n = (hourglass_arith::Integer::from(1) << 2047u32) + 1u32;
    let kernel = hourglass_arith::mont::MontContext::new(&n)
        .map(|c| c.kernel().name())
        .unwrap_or("unavailable");
    let features = if cfg!(feature = "host-gmp") {
        "host-gmp (GMP built for this CPU)"
    } else {
        "bundled portable GMP"
    };
    let text = format!(
        "{}\ncommit {}\nfeatures: {features}\nsquaring kernel for 2048-bit moduli on this CPU: {kernel}",
        env!("CARGO_PKG_VERSION"),
        env!("HOURGLASS_COMMIT"),
    );
    Box::leak(text.into_boxed_str())
}

/// Appends the exit-status paragraph to the help of `cmd` and of every subcommand below it.
fn with_exit_codes(cmd: clap::Command) -> clap::Command {
    let help = match cmd.get_after_help() {
        Some(existing) => format!("{existing}\n\n{EXIT_CODES_HELP}"),
        None => EXIT_CODES_HELP.to_string(),
    };
    cmd.after_help(help).mut_subcommands(with_exit_codes)
}

/// The command-line definition with everything added at run time.
fn command() -> clap::Command {
    with_exit_codes(<Cli as clap::CommandFactory>::command().long_version(long_version()))
}

/// The private keys a command writes in a form hourglass cannot encrypt (JSON puzzle keys, key
/// shares, TLS and service keys), if it writes any. The commands that write PEM RSA keys
/// (`rsa keygen`, `ca new`) encrypt them with a given passphrase instead.
fn unencryptable_key_output(matches: &clap::ArgMatches) -> Option<&'static str> {
    let (command, args) = matches.subcommand()?;
    match (command, args.subcommand()) {
        ("puzzle", Some(("keygen", _))) => Some("a puzzle key (JSON)"),
        // A public set has no private keys (and may read an encrypted key for its modulus).
        ("submit", Some(("new-set", set))) => {
            let public = set.try_get_one::<bool>("public").ok().flatten();
            (public != Some(&true)).then_some("a private set's puzzle keys (JSON)")
        }
        ("dkg", Some(("init", _))) => Some("a cluster's TLS keys (PEM for rustls)"),
        ("dkg", Some(("party", _))) => Some("a key share (JSON)"),
        ("dkg", Some(("local", _))) => Some("a cluster's key shares (JSON) and TLS keys"),
        ("dkg", Some(("reshare" | "refresh", _))) => Some("a cluster's key shares (JSON)"),
        ("dkg", Some(("party-reshare" | "party-refresh", _))) => Some("a key share (JSON)"),
        ("serve", _) => Some("the service's keys (receipt-signing key, vault key)"),
        _ => None,
    }
}

fn main() -> ExitCode {
    hourglass_arith::secret::wipe_gmp_memory();
    let matches = command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // Not for the commands that talk over sockets: with SIGPIPE's default action, writing to
    // a peer that closed its connection would kill the process instead of failing the write.
    let serves = match &cli.command {
        Command::Dkg(_) | Command::Bench(_) | Command::Serve(_) => true,
        Command::Log(args) => args.serves(),
        _ => false,
    };
    if !serves {
        quiet_on_closed_pipe();
    }
    files::set_force(cli.force);
    key_files::set_passphrase_file(cli.passphrase_file.clone());
    // A passphrase asks for encrypted keys: a command that writes private keys it cannot
    // encrypt refuses it before any work (the others encrypt what they write with it).
    let refusal = match unencryptable_key_output(&matches) {
        Some(what) if cli.passphrase_file.is_some() => {
            Err(key_files::unencryptable_keys_error(what))
        }
        _ => Ok(()),
    };
    let result: Result<(), CliError> = refusal.and_then(|()| match cli.command {
        Command::Rsa(args) => rsa_cmd::run(args),
        Command::Puzzle(args) => puzzle_cmd::run(args),
        Command::Ca(args) => ca_cmd::run(args),
        Command::Submit(args) => submit_cmd::run(args),
        Command::Timelock(args) => timelock_cmd::run(args),
        Command::Timestamp(args) => timestamp_cmd::run(args),
        Command::Vdf(args) => vdf_cmd::run(args),
        Command::Dkg(args) => dkg_cmd::run(args),
        Command::Bench(args) => {
            hourglass_bench::run(args, files::existing_policy()).map_err(CliError::from)
        }
        Command::Serve(args) => serve_cmd::run(args),
        Command::Log(args) => log_cmd::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Completions { shell } => completions(shell),
        Command::Man { out } => man_pages(&out),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            err.print();
            ExitCode::from(err.exit_code())
        }
    }
}
