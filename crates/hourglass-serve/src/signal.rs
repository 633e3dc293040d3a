//! A server's life (the service's, a witness's): its listening socket, and how it is told to
//! stop (SIGINT or SIGTERM).

use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::error::Error;

/// Listens on `addr`; returns the socket and the address it is bound to (the port chosen for
/// port 0).
pub(crate) async fn listen(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), Error> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(Error::Serve)?;
    Ok((listener, bound))
}

/// Returns when the process receives SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
