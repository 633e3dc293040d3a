//! `hourglass dkg ...`: distributed RSA key generation among parties that do not trust each
//! other (Boneh-Franklin), over mutually authenticated TLS, and signing with the shares: with
//! every share, or after a reshare to threshold shares with any `t + 1` (and refreshes of
//! those to new epochs).
//!
//! One file per subcommand (its flags and its `run`); what several share lives in files of its
//! own below them: flags (`options`), the files of a cluster directory (`cluster_files`),
//! the party processes a coordinator runs (`processes`) and what those print (`reports`),
//! the coordinator and the party of a reshare or refresh (`resharing`, `party_resharing`).

use clap::{Args, Subcommand};

use crate::cli_error::CliError;

mod cluster_files;
mod init;
mod local;
mod options;
mod party;
mod party_refresh;
mod party_reshare;
mod party_resharing;
mod party_sign;
mod processes;
mod refresh;
mod relay;
mod reports;
mod reshare;
mod resharing;
mod sign;

/// Arguments of `hourglass dkg`.
#[derive(Args, Debug)]
pub struct DkgArgs {
    #[command(subcommand)]
    command: DkgCommand,
}

#[derive(Subcommand, Debug)]
enum DkgCommand {
    /// Write a ready cluster for testing on one machine: configs, TLS keys, loopback ports.
    #[command(after_help = "Examples:
  hourglass dkg init --parties 3 --bits 2048 -o cluster
  hourglass dkg party --config cluster/party-1.toml --id 1 &   (and so on for 2 and 3)
For a real deployment, give each organisation its own key and certificate and one config
listing every party's address and certificate (docs/FORMATS.md section 16).")]
    Init(init::InitArgs),
    /// Run one party of a generation (every party runs this at about the same time).
    #[command(after_help = "Examples:
  hourglass dkg party --config cluster/party-2.toml --id 2
  hourglass dkg party --config party.toml --id 7 -o /secure/dir --rtt-ms 80
Writes public.pem (the public key, readable by OpenSSL), transcript.json (the public record of the
generation, format v2: signed by every member with the key of its TLS certificate, over the
fingerprint a public puzzle set names; every member checks the others' signatures before
anything is written) and party-I.share.json (this party's share of d, mode 0600). If a party
dies or stops answering, the others restart without it, down to min_parties. The report (--json:
one object) gives the time, candidate pairs, batches, bytes sent and this process's peak
resident memory (peak_rss_bytes). A party holds a socket for every other party: the soft limit
of open files is raised when it is too low (up to the hard limit; see `ulimit -n`).")]
    Party(party::PartyArgs),
    /// Run the relay of a star cluster: it forwards the members' sealed frames, holds no secret.
    #[command(after_help = "Examples:
  hourglass dkg init --parties 3 --bits 2048 --topology star -o cluster
  hourglass dkg relay --config cluster/relay.toml &
  hourglass dkg party --config cluster/party-1.toml --id 1 &   (and so on for 2 and 3)
  hourglass dkg relay --config cluster/relay.toml --members 1,3 &
  hourglass dkg party-sign --config cluster/party-1.toml --id 1 --signers 1,3 -i contract.pdf -o contract.sig &
      (a signature among some members through the relay: it runs among those alone)
Every member holds one TLS link, to the relay (pinned by its certificate, as the members pin
each other's in a mesh); between two members every frame is sealed with keys only they hold
(P-256 keys announced through the relay and signed by each member's certificate key, then
ChaCha20-Poly1305 with a frame counter). The relay learns who sends how much to whom; it can
delay, drop or cut off (the members then see that member fail), but cannot read, change,
replay or forge a frame. It exits when every member's link is gone. --json prints what it
forwarded.")]
    Relay(relay::RelayArgs),
    /// Run every party of a fresh loopback cluster as separate processes, and report.
    #[command(after_help = "Examples:
  hourglass dkg local --parties 3 --bits 2048 -o cluster
  hourglass dkg local --parties 10 --bits 2048 --batch 64 -o cluster10
  hourglass dkg local --parties 20 --bits 1024 --topology star -o cluster20   (one relay process, k links)
  hourglass dkg local --parties 4 --bits 1024 --kill 3 --kill-after-ms 500 -o c4   (failure tolerance)
  hourglass dkg local --parties 5 --bits 1024 --adversary 2:false-abort --adversary 4:false-abort -o c5
      (deviating parties: the honest ones stop naming them; nobody honest is ever removed)
  hourglass dkg local --parties 50 --bits 1024 --timeout 600 --connect-timeout 120 --json -o c50
      (a large cluster: generous timeouts on a loaded machine; the summary, per party)
Writes the cluster, public.pem and transcript.json (v2, signed by every member; checked here
against the cluster's certs/) into the output directory. The summary gives the time, candidate
pairs (iterations), batches, and per party the time, bytes sent and peak resident memory
(median and max over the parties that finished).")]
    Local(local::LocalArgs),
    /// Sign a file with the shares in a cluster directory (runs every party-sign locally).
    #[command(after_help = "Examples:
  hourglass dkg sign --cluster cluster -i contract.pdf -o contract.sig
  hourglass dkg sign --cluster cluster -i contract.pdf -o contract.sig --pss
  hourglass dkg sign --cluster cluster --signers 1,4,5 -i contract.pdf -o contract.sig   (after dkg reshare)
  hourglass dkg sign --cluster cluster --signers 1,2,3,5 --adversary 3:wrong-partial -i contract.pdf -o c.sig
      (party 3 lies: its partial is named and left out, and the three others sign)
  hourglass dkg sign --cluster cluster --signers 1,2,3,4,5 --adversary 2:wrong-partial --adversary 4:wrong-partial -i contract.pdf -o c.sig
      (two liars among five, t = 2: both are named, and 1, 3 and 5 sign)
  openssl dgst -sha256 -verify cluster/public.pem -signature contract.sig contract.pdf
  (for --pss add: -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:-1)
With n-of-n shares (from a generation) every party signs. With threshold shares (from dkg
reshare) any t + 1 sign: --signers names them (default: every share in the directory); fewer
than t + 1, a party named twice or one without a share is refused before anything runs. Every
partial is checked (combinations under e first, then the proofs of correctness), so every
wrong partial signature present is named and left out while t + 1 valid ones remain, with a
warning each (exit 0); otherwise the command fails naming them (exit 1). The signature is
checked with the public key before it is written. In a star cluster (its directory holds
relay.toml) a relay process runs among the signers and every signer's one link goes to it, as
in the generation (and in dkg reshare and dkg refresh, among every member).")]
    Sign(sign::SignArgs),
    /// One party's part of a joint signature (every signer runs this with the same file).
    #[command(after_help = "Examples:
  hourglass dkg party-sign --config party.toml --id 2 -i contract.pdf
  hourglass dkg party-sign --config party.toml --id 1 -i contract.pdf -o contract.sig --pss
  hourglass dkg party-sign --config party.toml --id 4 --signers 1,4,5 -i contract.pdf -o contract.sig
With a threshold share, every signer runs it with the same --signers list and connects to
those parties only. In a star cluster (a [relay] table in the configuration) each signer
connects to the relay alone, which must run among the same signers (dkg relay --members).")]
    PartySign(party_sign::PartySignArgs),
    /// Turn a cluster directory's n-of-n shares into t-of-k shares: afterwards any t + 1 sign.
    #[command(after_help = "Examples:
  hourglass dkg reshare --cluster cluster --threshold 2
  hourglass dkg sign --cluster cluster --signers 1,4,5 -i contract.pdf -o contract.sig
Runs every party's dkg party-reshare (a reshare needs every share of d). Nobody ever holds d:
each party deals its share of d by Shamir's scheme over the integers to the others, over the
cluster's TLS links. Each party-I.share.json is rewritten in place (atomically, mode 0600) as a
version 2 file of epoch 1, once every party has checked the new sharing; the public key does
not change. t is fixed here and checked at every use: 1 <= t and 2t + 1 <= parties. Any t
parties learn nothing of d (docs/FORMATS.md section 16.7).")]
    Reshare(reshare::ReshareArgs),
    /// One party's part of a reshare (every party runs this with the same threshold).
    #[command(after_help = "Examples:
  hourglass dkg party-reshare --config party.toml --id 2 --threshold 2
Rewrites this party's share file (default: party-I.share.json beside the configuration) in
place, atomically, mode 0600, once every party has checked the new sharing. A party asked for
another threshold than the others is refused, naming it: nobody changes t on another's word.
In a star cluster (a [relay] table in the configuration) each party connects to the relay
alone, which must run among every member (dkg relay --members).")]
    PartyReshare(party_reshare::PartyReshareArgs),
    /// Refresh a cluster directory's threshold shares to a new epoch (same key, t and parties).
    #[command(after_help = "Examples:
  hourglass dkg refresh --cluster cluster
Runs every party's dkg party-refresh. Every share changes and the epoch goes up by one; the
key, t and the parties stay. Shares of different epochs never sign together (refused by
epoch; even relabelled, they make no signature), so a copy of an old share file is useless.
A party whose share is of another epoch is named (it missed a refresh).")]
    Refresh(refresh::RefreshArgs),
    /// One party's part of a refresh (every party runs this at the same time).
    #[command(after_help = "Examples:
  hourglass dkg party-refresh --config party.toml --id 2
Rewrites this party's share file in place, atomically, mode 0600, once every party has checked
the new epoch's sharing. In a star cluster (a [relay] table in the configuration) each party
connects to the relay alone, which must run among every member (dkg relay --members).")]
    PartyRefresh(party_refresh::PartyRefreshArgs),
}

/// Runs `hourglass dkg ...`.
pub fn run(args: DkgArgs) -> Result<(), CliError> {
    match args.command {
        DkgCommand::Init(a) => init::run(a),
        DkgCommand::Party(a) => party::run(a),
        DkgCommand::Local(a) => local::run(a),
        DkgCommand::Relay(a) => relay::run(a),
        DkgCommand::Sign(a) => sign::run(a),
        DkgCommand::PartySign(a) => party_sign::run(a),
        DkgCommand::Reshare(a) => reshare::run(a),
        DkgCommand::Refresh(a) => refresh::run(a),
        DkgCommand::PartyReshare(a) => party_reshare::run(a),
        DkgCommand::PartyRefresh(a) => party_refresh::run(a),
    }
}
