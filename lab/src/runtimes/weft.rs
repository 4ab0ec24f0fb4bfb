//! weft adapter (`weft-mt`, `weft-ct`).
//!
//! weft mirrors tokio's names, so this file reads like `tokio.rs`. weft has no channels yet
//! (`weft::sync` is a later issue): its channel kit is [`NotYet`], and the channel workloads'
//! weft rows say "not yet". When `weft::sync` lands, write a `WeftChannels` kit here (copy the
//! shape of `TokioChannels`) and name it in `type Channels`.

use std::future::Future;
use std::time::Duration;

use crate::adapter::{Adapter, Flavor, Net, NotYet, Panicked, RtConfig};

/// A built weft runtime of either flavor.
pub struct Weft {
    runtime: weft::runtime::Runtime,
}

impl Adapter for Weft {
    type Handle<T: Send + 'static> = weft::task::JoinHandle<T>;
    type Channels = NotYet;
    type Net = WeftNet;

    fn build(config: &RtConfig) -> std::io::Result<Self> {
        let mut builder = match config.flavor {
            Flavor::MultiThread => {
                let mut b = weft::runtime::Builder::new_multi_thread();
                b.worker_threads(config.workers);
                b
            }
            Flavor::CurrentThread => weft::runtime::Builder::new_current_thread(),
        };
        if let Some(n) = config.global_queue_interval {
            builder.global_queue_interval(n);
        }
        if let Some(n) = config.event_interval {
            builder.event_interval(n);
        }
        let runtime = builder.thread_name("weft-lab").enable_all().build()?;
        Ok(Weft { runtime })
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.runtime.block_on(fut)
    }

    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        weft::spawn(fut)
    }

    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send {
        async move { handle.await.map_err(|_| Panicked) }
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        weft::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        weft::time::sleep(duration)
    }
}

/// `weft::net` TCP.
pub enum WeftNet {}

impl Net for WeftNet {
    type Listener = weft::net::TcpListener;
    type Stream = weft::net::TcpStream;
    type HyperIo = weft::compat::hyper::WeftIo<weft::net::TcpStream>;

    fn hyper_io(stream: Self::Stream) -> Self::HyperIo {
        weft::compat::hyper::WeftIo::new(stream)
    }

    fn bind_loopback() -> impl Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send {
        async {
            let l = weft::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = l.local_addr()?;
            Ok((l, addr))
        }
    }
    fn accept(listener: &Self::Listener) -> impl Future<Output = std::io::Result<Self::Stream>> + Send + '_ {
        async move {
            let (s, _) = listener.accept().await?;
            s.set_nodelay(true)?;
            Ok(s)
        }
    }
    fn connect(addr: std::net::SocketAddr) -> impl Future<Output = std::io::Result<Self::Stream>> + Send {
        async move {
            let s = weft::net::TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            Ok(s)
        }
    }
    fn read_exact<'a>(stream: &'a mut Self::Stream, buf: &'a mut [u8]) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
        use weft::io::AsyncReadExt;
        async move { stream.read_exact(buf).await.map(drop) }
    }
    fn write_all<'a>(stream: &'a mut Self::Stream, buf: &'a [u8]) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
        use weft::io::AsyncWriteExt;
        stream.write_all(buf)
    }
}
