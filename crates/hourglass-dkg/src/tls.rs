//! Mutually authenticated TLS 1.3 links between the parties of a cluster.
//!
//! [`TlsTransport::connect`] gives one party a link to every other party of a
//! [`ClusterConfig`]: it dials every party with a lower id and accepts the parties with a
//! higher id, so each pair shares exactly one connection. Both ends present their certificate
//! and accept only the exact certificates pinned in the configuration; a peer's id is the id
//! whose certificate it presented, never anything it claims.
//!
//! On the wire, each frame is a 4-byte big-endian length followed by the frame. All network
//! work runs on a background thread with a single-threaded tokio runtime: every link has a
//! reader task, which forwards frames to [`Transport::recv_until`], and a writer task, which
//! applies the [`Shaper`] of [`TlsOptions::sim`] and writes whatever is due in one batch.
//!
//! Connecting is bounded by one deadline, [`TlsOptions::connect_timeout`] from the call:
//! dialling, retrying a party that is not listening yet, and every handshake, dialled or
//! accepted. An accepted connection has until that deadline to finish its handshake (not a
//! fixed time of its own: `k` parties starting together on a few cores make `k(k-1)/2`
//! handshakes at once, and a slow but honest one must not be refused), and is dropped when
//! connecting ends, at the deadline or as soon as every peer is linked: a peer that never
//! finishes its handshake holds nothing past it.

use std::collections::{HashMap, VecDeque};
use std::net::ToSocketAddrs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{verify_tls13_signature, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, DistinguishedName, OtherError,
    ServerConfig, SignatureScheme,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc as async_mpsc;
use tokio::sync::oneshot;
use tokio::task::JoinSet;
use tokio_rustls::{TlsAcceptor, TlsConnector, TlsStream};

use crate::bounds::FrameBounds;
use crate::cluster::ClusterConfig;
use crate::limits;
use crate::transport::{Event, NetSim, Shaper, TrafficStats, Transport};
use crate::wire::HEADER;
use crate::{
    ConfigError, ConfigProblem, Error, IoOp, LinkLoss, LinkRejection, ParamError, PartyId, Result,
    TlsError,
};

pub(crate) mod error;

/// Exchanged right after the handshake: the dialling party learns that its certificate was
/// accepted (in TLS 1.3 the client finishes its handshake before the server has checked it).
const HELLO: &[u8; 8] = b"HGDKG/1\n";

/// Dropping a transport writes what is queued for as long as some link makes progress (a busy
/// peer, such as a star's relay forwarding every member's last frames, may leave a finished
/// party's frames unread for seconds): by default it gives up when no link moved a byte for
/// this long ([`TlsOptions::close_stall`])...
const CLOSE_STALL: Duration = Duration::from_secs(60);

/// ... or, whatever the progress, after this long ([`TlsOptions::close_limit`]: a peer
/// trickling bytes cannot hold a party that has finished forever; a round waits up to its
/// timeout for a frame, a 200-member star's last round can take minutes on two cores).
const CLOSE_LIMIT: Duration = Duration::from_secs(600);

/// Longest pause between two attempts to dial a party that is not listening yet.
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Writes are batched up to this size before reaching TLS.
const WRITE_BUFFER: usize = 64 << 10;

/// How a [`TlsTransport`] connects and what it accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsOptions {
    /// How long to wait for every peer (parties start at different times): the deadline of
    /// dialling and of every handshake, dialled or accepted.
    pub connect_timeout: Duration,
    /// Simulated network conditions added to every outgoing frame.
    pub sim: NetSim,
    /// The largest frame of each type a peer may send ([`FrameBounds::generation`] for a
    /// generation, [`FrameBounds::signing`] for a joint signature): a frame past its bound is
    /// refused after its header is read and before its payload is, and drops the link.
    pub bounds: FrameBounds,
    /// Dropping the transport stops writing and waiting for the peers to close their ends
    /// once no link has moved a byte for this long (60 s by default).
    pub close_stall: Duration,
    /// ... and, whatever the progress, once this long has passed (10 minutes by default).
    pub close_limit: Duration,
}

impl TlsOptions {
    /// Options accepting frames within `bounds`, waiting 30 seconds for the peers, on an
    /// unshaped network, closing within 60 s of the last progress and 10 minutes in all.
    pub fn new(bounds: FrameBounds) -> Self {
        TlsOptions {
            connect_timeout: Duration::from_secs(30),
            sim: NetSim::default(),
            bounds,
            close_stall: CLOSE_STALL,
            close_limit: CLOSE_LIMIT,
        }
    }
}

/// A frame queued for a writer task, with the time [`Transport::send`] was called.
type Outgoing = (Instant, Vec<u8>);

/// One party's TLS links to the other parties of a cluster (see the [module
/// documentation](self)).
///
/// Dropping it closes every connection, after writing what was queued for as long as bytes keep
/// moving (at most ten minutes) and letting each peer close its end, stops the network thread
/// and frees the port.
pub struct TlsTransport {
    me: PartyId,
    peers: Vec<PartyId>,
    missing: Vec<PartyId>,
    links: HashMap<PartyId, async_mpsc::UnboundedSender<Outgoing>>,
    events: mpsc::Receiver<Event>,
    /// Bytes each peer has delivered that the protocol has not taken yet (bounded: a peer that
    /// floods is cut off and named).
    pending: Arc<Pending>,
    /// The frames the peers may send (and whether they carry an origin to account them to).
    bounds: Arc<FrameBounds>,
    bytes_sent: AtomicU64,
    frames_sent: AtomicU64,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTransport")
            .field("me", &self.me)
            .field("peers", &self.peers)
            .field("missing", &self.missing)
            .finish_non_exhaustive()
    }
}

/// The certificates of the other parties, by id.
type Pins = Arc<Vec<(PartyId, CertificateDer<'static>)>>;

fn pinned_party(pins: &Pins, cert: &CertificateDer<'_>) -> Option<PartyId> {
    pins.iter()
        .find(|(_, pinned)| pinned.as_ref() == cert.as_ref())
        .map(|&(id, _)| id)
}

/// Why a peer's certificate is refused.
#[derive(Debug, thiserror::Error)]
enum PinRejection {
    /// The certificate of a party that does not dial this one.
    #[error(
        "certificate of party {dialer}, which does not dial party {me} (higher ids dial lower ids)"
    )]
    WrongDirection {
        /// The party whose certificate it is.
        dialer: PartyId,
        /// This party.
        me: PartyId,
    },
    /// A certificate of no party.
    #[error("certificate not pinned in the cluster configuration")]
    NotPinned,
    /// Not the certificate of the party dialled.
    #[error("not the certificate pinned for party {party}")]
    NotPinnedFor {
        /// The party dialled.
        party: PartyId,
    },
}

fn rejected(reason: PinRejection) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(reason))))
}

/// An I/O error of a handshake, with the reason of a rejected certificate spelled out.
fn describe(e: &std::io::Error) -> String {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(CertificateError::Other(other))) => {
            format!("invalid peer certificate: {}", other.0)
        }
        _ => e.to_string(),
    }
}

/// Server side: accepts exactly the pinned certificates of the parties that dial this one.
#[derive(Debug)]
struct PinnedClients {
    me: PartyId,
    pins: Pins,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for PinnedClients {
    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> std::result::Result<ClientCertVerified, rustls::Error> {
        match pinned_party(&self.pins, end_entity) {
            Some(id) if id > self.me => Ok(ClientCertVerified::assertion()),
            Some(id) => Err(rejected(PinRejection::WrongDirection {
                dialer: id,
                me: self.me,
            })),
            None => Err(rejected(PinRejection::NotPinned)),
        }
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("TLS 1.2 is not used".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Client side: accepts only the pinned certificate of the party being dialled.
#[derive(Debug)]
struct PinnedServer {
    party: PartyId,
    cert: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.cert.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rejected(PinRejection::NotPinnedFor { party: self.party }))
        }
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("TLS 1.2 is not used".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What the network thread needs.
struct Setup {
    me: PartyId,
    listener: Option<std::net::TcpListener>,
    acceptor: TlsAcceptor,
    /// Parties with a lower id: (id, address, connector pinned to its certificate).
    dial: Vec<(PartyId, String, TlsConnector)>,
    pins: Pins,
    deadline: Instant,
    sim: NetSim,
    /// [`TlsOptions::close_stall`] and [`TlsOptions::close_limit`].
    close: (Duration, Duration),
    bounds: Arc<FrameBounds>,
    events: mpsc::Sender<Event>,
    pending: Arc<Pending>,
    outgoing: HashMap<PartyId, async_mpsc::UnboundedReceiver<Outgoing>>,
}

impl TlsTransport {
    /// Connects party `me` to the other parties of `config`.
    ///
    /// Listens on `me`'s address, dials every party with a lower id (retrying until
    /// [`TlsOptions::connect_timeout`], since parties start at different times) and accepts
    /// the parties with a higher id. Returns once every link is up, or when the timeout
    /// passes: then with the links it has, and [`TlsTransport::missing`] names the others.
    ///
    /// Before opening any socket, raises this process's soft limit of open files to what a
    /// party of this cluster needs ([`limits::party_open_files`]: a socket per link and a
    /// margin) when it is lower.
    ///
    /// Fails if that needs more than the hard limit ([`Error::OpenFiles`]), if `me` is not in
    /// the configuration or the configuration's key belongs to another party, if the address
    /// cannot be bound, or if TLS cannot be set up. Connections that fail authentication, or do
    /// not finish their handshake by the deadline, are refused and logged on standard error.
    pub fn connect(config: &ClusterConfig, me: PartyId, options: &TlsOptions) -> Result<Self> {
        let deadline = Instant::now() + options.connect_timeout;
        let in_file =
            |problem: ConfigProblem| Error::from(ConfigError::in_file(config.path(), problem));
        let own = config
            .party(me)
            .ok_or_else(|| in_file(ConfigProblem::PartyNotInCluster { party: me }))?;
        match config.own_id() {
            Some(id) if id == me => {}
            Some(id) => {
                return Err(in_file(ConfigProblem::OtherPartysKey {
                    key_party: id,
                    party: me,
                }))
            }
            None => return Err(in_file(ConfigProblem::KeyMatchesNoParty)),
        }
        // Before any socket: a party of a large cluster needs more than the usual soft limit.
        limits::ensure_open_files(limits::party_open_files(config.parties.len()))?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let algorithms = provider.signature_verification_algorithms;
        let own_cert = CertificateDer::from(own.certificate.clone());
        let certified = Arc::new(CertifiedKey::new(vec![own_cert], config.signing_key()?));
        let pins: Pins = Arc::new(
            config
                .parties
                .iter()
                .filter(|p| p.id != me)
                .map(|p| (p.id, CertificateDer::from(p.certificate.clone())))
                .collect(),
        );

        let mut server = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(TlsError::Setup)?
            .with_client_cert_verifier(Arc::new(PinnedClients {
                me,
                pins: Arc::clone(&pins),
                algorithms,
            }))
            .with_cert_resolver(Arc::new(SingleCertAndKey::from(Arc::clone(&certified))));
        server.send_tls13_tickets = 0;
        let acceptor = TlsAcceptor::from(Arc::new(server));

        let mut dial = Vec::new();
        for party in config.parties.iter().filter(|p| p.id < me) {
            let mut client = ClientConfig::builder_with_provider(Arc::clone(&provider))
                .with_protocol_versions(&[&rustls::version::TLS13])
                .map_err(TlsError::Setup)?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(PinnedServer {
                    party: party.id,
                    cert: CertificateDer::from(party.certificate.clone()),
                    algorithms,
                }))
                .with_client_cert_resolver(Arc::new(SingleCertAndKey::from(Arc::clone(
                    &certified,
                ))));
            client.resumption = Resumption::disabled();
            dial.push((
                party.id,
                party.address.clone(),
                TlsConnector::from(Arc::new(client)),
            ));
        }

        let has_higher = config.parties.iter().any(|p| p.id > me);
        let listener = if has_higher {
            let addrs: Vec<_> = own
                .address
                .to_socket_addrs()
                .map_err(|e| {
                    Error::io(
                        IoOp::Resolve {
                            address: own.address.clone(),
                        },
                        e,
                    )
                })?
                .collect();
            let listener = std::net::TcpListener::bind(&addrs[..]).map_err(|e| {
                Error::io(
                    IoOp::Listen {
                        party: me,
                        address: own.address.clone(),
                    },
                    e,
                )
            })?;
            listener
                .set_nonblocking(true)
                .map_err(|e| Error::io(IoOp::ConfigureListener, e))?;
            Some(listener)
        } else {
            // The highest-numbered party only dials: nobody connects to it.
            None
        };

        let mut links = HashMap::new();
        let mut outgoing = HashMap::new();
        for &(id, _) in pins.iter() {
            let (tx, rx) = async_mpsc::unbounded_channel();
            links.insert(id, tx);
            outgoing.insert(id, rx);
        }
        let (events_tx, events) = mpsc::channel();
        let pending = Arc::new(Pending::new(pins.iter().map(|&(id, _)| id)));
        let bounds = Arc::new(options.bounds.clone());
        let setup = Setup {
            me,
            listener,
            acceptor,
            dial,
            pins,
            deadline,
            sim: options.sim,
            close: (options.close_stall, options.close_limit),
            bounds: Arc::clone(&bounds),
            events: events_tx,
            pending: pending.clone(),
            outgoing,
        };

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(IoOp::StartRuntime, e))?;
        let (ready_tx, ready_rx) = mpsc::channel();
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("dkg-tls-{me}"))
            .spawn(move || runtime.block_on(run(setup, ready_tx, shutdown_rx)))
            .map_err(|e| Error::io(IoOp::StartThread, e))?;
        let mut transport = TlsTransport {
            me,
            peers: Vec::new(),
            missing: Vec::new(),
            links,
            events,
            pending,
            bounds,
            bytes_sent: AtomicU64::new(0),
            frames_sent: AtomicU64::new(0),
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        };
        let connected = match ready_rx.recv() {
            Ok(Ok(connected)) => connected,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(TlsError::ThreadStopped.into()),
        };
        transport.links.retain(|id, _| connected.contains(id));
        transport.missing = config
            .ids()
            .into_iter()
            .filter(|&id| id != me && !connected.contains(&id))
            .collect();
        transport.peers = connected;
        Ok(transport)
    }

    /// Accounts for a frame the protocol takes off the queue.
    fn taken(&self, event: Event) -> Event {
        if let Event::Frame { from, bytes } = &event {
            self.pending
                .take(*from, self.bounds.origin_of(bytes), bytes.len() as u64);
        }
        event
    }

    /// The peers that did not connect within the connect timeout, in increasing order.
    pub fn missing(&self) -> Vec<PartyId> {
        self.missing.clone()
    }
}

impl Drop for TlsTransport {
    fn drop(&mut self) {
        // Closing the queues lets every writer write what is queued, then close its link.
        self.links.clear();
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Transport for TlsTransport {
    fn me(&self) -> PartyId {
        self.me
    }

    fn peers(&self) -> Vec<PartyId> {
        self.peers.clone()
    }

    fn send(&self, to: PartyId, frame: Vec<u8>) -> Result<()> {
        let link = self.links.get(&to).ok_or_else(|| Error::PartyFailed {
            party: to,
            reason: if self.missing.contains(&to) {
                LinkLoss::NeverConnected.into()
            } else {
                LinkLoss::NotAPeer.into()
            },
        })?;
        if u32::try_from(frame.len()).is_err() {
            return Err(ParamError::FrameTooLarge { len: frame.len() }.into());
        }
        let len = frame.len() as u64;
        link.send((Instant::now(), frame))
            .map_err(|_| Error::PartyFailed {
                party: to,
                reason: LinkLoss::Closed.into(),
            })?;
        self.bytes_sent.fetch_add(len, Ordering::Relaxed);
        self.frames_sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        if let Ok(event) = self.events.try_recv() {
            return Some(self.taken(event));
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return None;
        }
        match self.events.recv_timeout(wait) {
            Ok(event) => Some(self.taken(event)),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                None
            }
        }
    }

    fn stats(&self) -> TrafficStats {
        TrafficStats {
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            frames_sent: self.frames_sent.load(Ordering::Relaxed),
        }
    }
}

/// The network thread: set up the links, run them, close them on shutdown.
async fn run(
    mut setup: Setup,
    ready: mpsc::Sender<Result<Vec<PartyId>>>,
    shutdown: oneshot::Receiver<()>,
) {
    let listener = match setup.listener.take().map(tokio::net::TcpListener::from_std) {
        None => None,
        Some(Ok(listener)) => Some(listener),
        Some(Err(e)) => {
            let _ = ready.send(Err(Error::io(IoOp::RegisterListener, e)));
            return;
        }
    };
    let streams = establish(&setup, listener).await;

    let mut connected: Vec<PartyId> = streams.keys().copied().collect();
    connected.sort_unstable();
    let mut links = JoinSet::new();
    let progress = Arc::new(AtomicU64::new(0));
    for (peer, stream) in streams {
        let Some(outgoing) = setup.outgoing.remove(&peer) else {
            continue;
        };
        let seed = (u64::from(setup.me) << 32) | u64::from(peer);
        let shared = LinkShared {
            events: setup.events.clone(),
            bounds: Arc::clone(&setup.bounds),
            pending: setup.pending.clone(),
            progress: Arc::clone(&progress),
        };
        links.spawn(run_link(
            peer,
            stream,
            outgoing,
            Shaper::new(setup.sim, seed),
            shared,
        ));
    }
    let (stall, limit) = setup.close;
    // Queues of peers that never connected are closed: sending to them fails.
    drop(setup);
    if ready.send(Ok(connected)).is_err() {
        return;
    }
    let _ = shutdown.await;
    let limit = tokio::time::Instant::now() + limit;
    let mut moved = progress.load(Ordering::Relaxed);
    while !links.is_empty() && tokio::time::Instant::now() < limit {
        let wake = (tokio::time::Instant::now() + stall).min(limit);
        if let Ok(Some(_)) = tokio::time::timeout_at(wake, links.join_next()).await {
            continue;
        }
        let now = progress.load(Ordering::Relaxed);
        if now == moved {
            break;
        }
        moved = now;
    }
    // Returning drops the runtime, which aborts what is left and closes the sockets.
}

/// Dials the lower parties and accepts the higher ones until all are connected or the
/// deadline passes. A party connecting twice replaces its earlier connection.
async fn establish(
    setup: &Setup,
    listener: Option<tokio::net::TcpListener>,
) -> HashMap<PartyId, TlsStream<TcpStream>> {
    let deadline = tokio::time::Instant::from_std(setup.deadline);
    let wanted = setup.pins.len();
    let (found_tx, mut found) = async_mpsc::unbounded_channel();
    let mut tasks = JoinSet::new();
    if let Some(listener) = listener {
        tasks.spawn(accept_loop(
            setup.me,
            listener,
            setup.acceptor.clone(),
            Arc::clone(&setup.pins),
            found_tx.clone(),
            deadline,
        ));
    }
    for (peer, address, connector) in &setup.dial {
        tasks.spawn(dial(
            setup.me,
            *peer,
            address.clone(),
            connector.clone(),
            found_tx.clone(),
            deadline,
        ));
    }
    drop(found_tx);

    let mut streams = HashMap::new();
    let timeout = tokio::time::sleep_until(deadline);
    tokio::pin!(timeout);
    while streams.len() < wanted {
        tokio::select! {
            got = found.recv() => match got {
                Some((peer, stream)) => {
                    streams.insert(peer, stream);
                }
                None => break,
            },
            () = &mut timeout => break,
        }
    }
    // Stops listening (the port is free again) and stops dialling.
    tasks.shutdown().await;
    streams
}

type Found = async_mpsc::UnboundedSender<(PartyId, TlsStream<TcpStream>)>;

/// Accepts connections until [`establish`] stops it (which drops every handshake still under
/// way); each handshake may run until `deadline`, the connection deadline.
async fn accept_loop(
    me: PartyId,
    listener: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
    pins: Pins,
    found: Found,
    deadline: tokio::time::Instant,
) {
    let mut handshakes = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, remote)) => {
                    handshakes.spawn(accept_one(
                        me,
                        tcp,
                        remote,
                        acceptor.clone(),
                        Arc::clone(&pins),
                        found.clone(),
                        deadline,
                    ));
                }
                Err(e) => {
                    eprintln!("hourglass-dkg: party {me}: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = handshakes.join_next(), if !handshakes.is_empty() => {}
        }
    }
}

/// One accepted connection: its handshake and the hello, both by `deadline` (the connection
/// deadline of [`TlsOptions::connect_timeout`], the same as the dialling side's).
async fn accept_one(
    me: PartyId,
    tcp: TcpStream,
    remote: std::net::SocketAddr,
    acceptor: TlsAcceptor,
    pins: Pins,
    found: Found,
    deadline: tokio::time::Instant,
) {
    let _ = tcp.set_nodelay(true);
    let handshake = async {
        let mut tls = acceptor.accept(tcp).await?;
        let peer = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|certs| certs.first())
            .and_then(|cert| pinned_party(&pins, cert))
            .ok_or_else(|| std::io::Error::other("no pinned certificate"))?;
        let mut hello = [0u8; HELLO.len()];
        tls.read_exact(&mut hello).await?;
        if &hello != HELLO {
            return Err(std::io::Error::other("not an hourglass dkg party"));
        }
        tls.write_all(HELLO).await?;
        tls.flush().await?;
        Ok((peer, tls))
    };
    match tokio::time::timeout_at(deadline, handshake).await {
        Ok(Ok((peer, tls))) => {
            let _ = found.send((peer, TlsStream::Server(tls)));
        }
        Ok(Err(e)) => {
            eprintln!(
                "hourglass-dkg: party {me}: refused a connection from {remote}: {}",
                describe(&e)
            )
        }
        Err(_) => eprintln!(
            "hourglass-dkg: party {me}: refused a connection from {remote}: \
             no handshake by the connection deadline (the connect timeout)"
        ),
    }
}

async fn dial(
    me: PartyId,
    peer: PartyId,
    address: String,
    connector: TlsConnector,
    found: Found,
    deadline: tokio::time::Instant,
) {
    let name = match ServerName::try_from(format!("party-{peer}.hourglass.invalid")) {
        Ok(name) => name,
        Err(e) => {
            eprintln!("hourglass-dkg: party {me}: no server name for party {peer}: {e}");
            return;
        }
    };
    let mut backoff = Duration::from_millis(20);
    loop {
        let tcp =
            match tokio::time::timeout_at(deadline, TcpStream::connect(address.as_str())).await {
                Err(_) => return,
                Ok(Ok(tcp)) => tcp,
                Ok(Err(_)) => {
                    // Not listening yet: try again until the deadline.
                    if tokio::time::Instant::now() + backoff >= deadline {
                        return;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
        let _ = tcp.set_nodelay(true);
        let handshake = async {
            let mut tls = connector.connect(name.clone(), tcp).await?;
            tls.write_all(HELLO).await?;
            tls.flush().await?;
            let mut hello = [0u8; HELLO.len()];
            tls.read_exact(&mut hello).await?;
            if &hello != HELLO {
                return Err(std::io::Error::other("not an hourglass dkg party"));
            }
            Ok(tls)
        };
        match tokio::time::timeout_at(deadline, handshake).await {
            Ok(Ok(tls)) => {
                let _ = found.send((peer, TlsStream::Client(tls)));
            }
            Ok(Err(e)) => eprintln!(
                "hourglass-dkg: party {me}: could not connect to party {peer} at {address}: {}",
                describe(&e)
            ),
            Err(_) => {}
        }
        // Authentication failures are not retried: they do not go away by themselves.
        return;
    }
}

/// Bytes delivered that the protocol has not taken yet: each peer's, and on a
/// [`FrameBounds::stamped`] link each origin's share of them.
struct Pending {
    by_peer: HashMap<PartyId, AtomicU64>,
    by_origin: std::sync::Mutex<HashMap<PartyId, u64>>,
}

impl Pending {
    fn new(peers: impl Iterator<Item = PartyId>) -> Self {
        Pending {
            by_peer: peers.map(|id| (id, AtomicU64::new(0))).collect(),
            by_origin: std::sync::Mutex::new(HashMap::new()),
        }
    }

    fn origins(&self) -> std::sync::MutexGuard<'_, HashMap<PartyId, u64>> {
        // The map is consistent after any panic (each update is one assignment).
        self.by_origin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `len` more bytes from `peer`: its bytes pending (`None` for a party that is not
    /// a peer).
    fn add_peer(&self, peer: PartyId, len: u64) -> Option<u64> {
        let p = self.by_peer.get(&peer)?;
        Some(p.fetch_add(len, Ordering::Relaxed) + len)
    }

    /// Counts `len` more bytes from `origin`: `Err` with its bytes pending if that takes it
    /// past `limit`.
    fn add_origin(&self, origin: PartyId, len: u64, limit: u64) -> std::result::Result<(), u64> {
        let mut origins = self.origins();
        let queued = origins
            .get(&origin)
            .copied()
            .unwrap_or(0)
            .saturating_add(len);
        origins.insert(origin, queued);
        if queued > limit {
            return Err(queued);
        }
        Ok(())
    }

    /// The protocol took a frame of `len` bytes from `peer` (from `origin` on a stamped link).
    fn take(&self, peer: PartyId, origin: Option<PartyId>, len: u64) {
        if let Some(p) = self.by_peer.get(&peer) {
            p.fetch_sub(len, Ordering::Relaxed);
        }
        if let Some(origin) = origin {
            let mut origins = self.origins();
            if let Some(q) = origins.get_mut(&origin) {
                *q = q.saturating_sub(len);
                if *q == 0 {
                    origins.remove(&origin);
                }
            }
        }
    }
}

/// What every link of a transport shares.
struct LinkShared {
    /// Where frames and losses go.
    events: mpsc::Sender<Event>,
    /// The frames a peer may send.
    bounds: Arc<FrameBounds>,
    /// Bytes each peer has delivered that the protocol has not taken yet.
    pending: Arc<Pending>,
    /// Bytes any link wrote or read (how closing tells a slow peer from a stuck one).
    progress: Arc<AtomicU64>,
}

/// Runs one link until it fails or its queue is closed; reports a failure as [`Event::Lost`].
async fn run_link(
    peer: PartyId,
    stream: TlsStream<TcpStream>,
    outgoing: async_mpsc::UnboundedReceiver<Outgoing>,
    shaper: Shaper,
    shared: LinkShared,
) {
    let LinkShared {
        events,
        bounds,
        pending,
        progress,
    } = shared;
    let (mut reader, writer) = tokio::io::split(stream);
    let lost = tokio::select! {
        ended = read_frames(peer, &mut reader, &events, &bounds, &pending) => Some(ended),
        written = write_frames(writer, outgoing, shaper, &progress) => {
            written.err().map(|e| Ended::Lost(LinkLoss::SendFailed(Arc::new(e))))
        }
    };
    if lost.is_none() {
        // Every frame is written and this side is shut down, but the peer may not have read
        // them yet (a star's relay, busy forwarding every member's last frames, reads late).
        // A socket closed with unread bytes, or that receives any after it is closed, is
        // reset, and the kernel drops what it has not sent: the peer would lose the last
        // frames. So what still comes is read and dropped until the peer closes its end,
        // which it does once it has read this end's (see `read_frames`); [`run`] bounds the
        // wait.
        let mut sink = vec![0u8; 16 << 10];
        while let Ok(n @ 1..) = reader.read(&mut sink).await {
            progress.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
    // Returning drops both halves, which closes the connection.
    let _ = match lost {
        Some(Ended::Lost(reason)) => events.send(Event::Lost {
            party: peer,
            reason,
        }),
        Some(Ended::Rejected(reason)) => events.send(Event::Rejected {
            party: peer,
            reason,
        }),
        None => Ok(()),
    };
}

/// Why a link's reader stopped.
enum Ended {
    /// Closed or failed.
    Lost(LinkLoss),
    /// The peer broke the framing.
    Rejected(LinkRejection),
}

/// Forwards frames until the link fails; returns why. A frame past its type's bound is
/// refused after its header is read, before its payload is.
async fn read_frames(
    peer: PartyId,
    reader: &mut ReadHalf<TlsStream<TcpStream>>,
    events: &mpsc::Sender<Event>,
    bounds: &FrameBounds,
    pending: &Pending,
) -> Ended {
    let limit = bounds.max_pending();
    let per_origin = bounds.max_pending_per_origin();
    // The origins whose share ran out: what else comes from them is dropped.
    let mut refused = std::collections::HashSet::new();
    loop {
        let mut prefix = [0u8; 4];
        match reader.read_exact(&mut prefix).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ended::Lost(LinkLoss::Closed)
            }
            Err(e) => return Ended::Lost(LinkLoss::Failed(Arc::new(e))),
        }
        let len = u64::from(u32::from_be_bytes(prefix));
        if let Err(rejection) = bounds.admit_length(len) {
            return Ended::Rejected(rejection);
        }
        // The header first (a shorter frame is read whole and refused by the session).
        let mut frame = vec![0u8; len.min(HEADER as u64) as usize];
        match reader.read_exact(&mut frame).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ended::Lost(LinkLoss::ClosedMidFrame)
            }
            Err(e) => return Ended::Lost(LinkLoss::FailedMidFrame(Arc::new(e))),
        }
        if let Ok(header) = <&[u8; HEADER]>::try_from(&frame[..]) {
            if let Err(rejection) = bounds.admit(header, len) {
                return Ended::Rejected(rejection);
            }
        }
        // The payload grows as its bytes arrive, rather than trusting the length up front.
        let rest = len - frame.len() as u64;
        frame.reserve(rest.min(1 << 16) as usize);
        match reader.take(rest).read_to_end(&mut frame).await {
            Ok(n) if n as u64 == rest => {}
            Ok(_) => return Ended::Lost(LinkLoss::ClosedMidFrame),
            Err(e) => return Ended::Lost(LinkLoss::FailedMidFrame(Arc::new(e))),
        }
        let len = frame.len() as u64;
        if let Some(origin) = bounds.origin_of(&frame) {
            if refused.contains(&origin) {
                continue;
            }
            if let Err(queued) = pending.add_origin(origin, len, per_origin) {
                // The frame that ran past the share goes up first, then the loss: whoever
                // opens that member's frames can tell whether it sent them all (see
                // `crate::star`). What else comes from it is dropped.
                refused.insert(origin);
                pending.add_peer(peer, len);
                let reason = LinkLoss::FloodedThroughRelay {
                    queued,
                    limit: per_origin,
                };
                let frame = Event::Frame {
                    from: peer,
                    bytes: frame,
                };
                let lost = Event::Lost {
                    party: origin,
                    reason,
                };
                if events.send(frame).is_err() || events.send(lost).is_err() {
                    return Ended::Lost(LinkLoss::TransportDropped);
                }
                continue;
            }
        }
        if let Some(queued) = pending.add_peer(peer, len) {
            if queued > limit {
                return Ended::Rejected(LinkRejection::Flooded { queued, limit });
            }
        }
        if events
            .send(Event::Frame {
                from: peer,
                bytes: frame,
            })
            .is_err()
        {
            return Ended::Lost(LinkLoss::TransportDropped);
        }
    }
}

/// A writer that counts the bytes it accepts (how [`run`] tells a slow peer from a stuck one
/// when it closes the links).
struct Counted<'a, W> {
    inner: W,
    progress: &'a AtomicU64,
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Counted<'_, W> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_write(cx, buf);
        if let std::task::Poll::Ready(Ok(n)) = polled {
            self.progress.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Writes queued frames when the shaper says they are due, all due frames in one batch;
/// when the queue is closed, writes the rest and closes the TLS session.
async fn write_frames(
    writer: WriteHalf<TlsStream<TcpStream>>,
    mut outgoing: async_mpsc::UnboundedReceiver<Outgoing>,
    mut shaper: Shaper,
    progress: &AtomicU64,
) -> std::io::Result<()> {
    let mut writer = BufWriter::with_capacity(
        WRITE_BUFFER,
        Counted {
            inner: writer,
            progress,
        },
    );
    let mut queue: VecDeque<(tokio::time::Instant, Vec<u8>)> = VecDeque::new();
    let mut open = true;
    let mut schedule = |queue: &mut VecDeque<_>, (sent, frame): Outgoing| {
        let at = tokio::time::Instant::from_std(shaper.schedule(sent));
        queue.push_back((at, frame));
    };
    loop {
        if queue.is_empty() {
            if !open {
                break;
            }
            match outgoing.recv().await {
                Some(item) => schedule(&mut queue, item),
                None => {
                    open = false;
                    continue;
                }
            }
        }
        while open {
            match outgoing.try_recv() {
                Ok(item) => schedule(&mut queue, item),
                Err(async_mpsc::error::TryRecvError::Empty) => break,
                Err(async_mpsc::error::TryRecvError::Disconnected) => open = false,
            }
        }
        let Some(&(due, _)) = queue.front() else {
            continue;
        };
        if due > tokio::time::Instant::now() {
            if open {
                tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(due) => {}
                    item = outgoing.recv() => {
                        match item {
                            Some(item) => schedule(&mut queue, item),
                            None => open = false,
                        }
                        continue;
                    }
                }
            } else {
                tokio::time::sleep_until(due).await;
            }
        }
        let now = tokio::time::Instant::now();
        while queue.front().is_some_and(|&(at, _)| at <= now) {
            let Some((_, frame)) = queue.pop_front() else {
                break;
            };
            // `send` refused frames whose length does not fit in 32 bits.
            let len = u32::try_from(frame.len()).map_err(std::io::Error::other)?;
            writer.write_all(&len.to_be_bytes()).await?;
            writer.write_all(&frame).await?;
        }
        writer.flush().await?;
    }
    writer.shutdown().await
}
