//! A hyper HTTP/1.1 server on weft answering "Hello, world!".
//!
//! Usage: `cargo run --release -p weft --example hello_server [PORT]` — binds 127.0.0.1 on
//! PORT (an ephemeral port if absent or 0) and prints `listening on 127.0.0.1:PORT` at
//! start-up, so scripts and load tools (e.g. `wrk -c64 -d5s http://127.0.0.1:PORT/`) can
//! find it. Stops on Ctrl-C.

use std::convert::Infallible;
use std::future::Future;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use weft::hyper::{WeftIo, WeftTimer};
use weft::net::TcpListener;

async fn hello(_req: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(b"Hello, world!"))))
}

#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = match std::env::args().nth(1) {
        Some(p) => p
            .parse()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad port {p:?}: {e}")))?,
        None => 0,
    };
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on {}", listener.local_addr()?);
    use std::io::Write;
    std::io::stdout().flush()?;

    let mut ctrl_c = std::pin::pin!(weft::signal::ctrl_c());
    loop {
        // Accept, or stop on Ctrl-C.
        let accepted = std::future::poll_fn(|cx| {
            if ctrl_c.as_mut().poll(cx).is_ready() {
                return std::task::Poll::Ready(None);
            }
            listener.poll_accept(cx).map(Some)
        })
        .await;
        let stream = match accepted {
            None => return Ok(()),
            Some(Ok((stream, _))) => stream,
            Some(Err(e)) => {
                // Out of fds, a connection reset before accept, ...: keep serving the others.
                eprintln!("accept error: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        weft::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(WeftTimer::new())
                .serve_connection(WeftIo::new(stream), hyper::service::service_fn(hello));
            if let Err(e) = conn.await {
                // One bad connection never affects the others: report and move on.
                eprintln!("connection error: {e}");
            }
        });
    }
}
