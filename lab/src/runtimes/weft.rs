//! weft adapter (`weft-mt`, `weft-ct`).
//!
//! weft mirrors tokio's names, so this file reads like `tokio.rs`, and its channel kit
//! (`WeftChannels`, on `weft::sync`) is `TokioChannels` with the crate renamed.

use std::future::Future;
use std::time::Duration;

use crate::adapter::{Adapter, BroadcastEnd, Channels, Closed, Flavor, Net, Panicked, RtConfig};

/// A built weft runtime of either flavor.
pub struct Weft {
    runtime: weft::runtime::Runtime,
}

impl Adapter for Weft {
    type Handle<T: Send + 'static> = weft::task::JoinHandle<T>;
    type Channels = WeftChannels;
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

/// `weft::sync`: `mpsc` (bounded), `oneshot`, `broadcast`, `Semaphore`, `Mutex`.
pub enum WeftChannels {}

impl Channels for WeftChannels {
    const AVAILABLE: bool = true;
    type Sender<T: Send + 'static> = weft::sync::mpsc::Sender<T>;
    type Receiver<T: Send + 'static> = weft::sync::mpsc::Receiver<T>;
    type OneshotSender<T: Send + 'static> = weft::sync::oneshot::Sender<T>;
    type OneshotReceiver<T: Send + 'static> = weft::sync::oneshot::Receiver<T>;

    fn bounded<T: Send + 'static>(capacity: usize) -> (Self::Sender<T>, Self::Receiver<T>) {
        weft::sync::mpsc::channel(capacity)
    }
    fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> impl Future<Output = Result<(), Closed>> + Send + '_ {
        async move { tx.send(value).await.map_err(|_| Closed) }
    }
    fn recv<T: Send + 'static>(rx: &mut Self::Receiver<T>) -> impl Future<Output = Option<T>> + Send + '_ {
        rx.recv()
    }
    fn oneshot<T: Send + 'static>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>) {
        weft::sync::oneshot::channel()
    }
    fn send_once<T: Send + 'static>(tx: Self::OneshotSender<T>, value: T) -> Result<(), Closed> {
        tx.send(value).map_err(|_| Closed)
    }
    fn recv_once<T: Send + 'static>(rx: Self::OneshotReceiver<T>) -> impl Future<Output = Result<T, Closed>> + Send {
        async move { rx.await.map_err(|_| Closed) }
    }
    type BroadcastSender<T: Clone + Send + Sync + 'static> = weft::sync::broadcast::Sender<T>;
    type BroadcastReceiver<T: Clone + Send + Sync + 'static> = weft::sync::broadcast::Receiver<T>;
    fn broadcast<T: Clone + Send + Sync + 'static>(capacity: usize) -> (Self::BroadcastSender<T>, Self::BroadcastReceiver<T>) {
        weft::sync::broadcast::channel(capacity)
    }
    fn subscribe<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>) -> Self::BroadcastReceiver<T> {
        tx.subscribe()
    }
    fn broadcast_send<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>, value: T) -> impl Future<Output = Result<(), Closed>> + Send + '_ {
        std::future::ready(tx.send(value).map(|_| ()).map_err(|_| Closed))
    }
    fn broadcast_recv<T: Clone + Send + Sync + 'static>(rx: &mut Self::BroadcastReceiver<T>) -> impl Future<Output = Result<T, BroadcastEnd>> + Send + '_ {
        async move {
            rx.recv().await.map_err(|e| match e {
                weft::sync::broadcast::error::RecvError::Closed => BroadcastEnd::Closed,
                weft::sync::broadcast::error::RecvError::Lagged(_) => BroadcastEnd::Lagged,
            })
        }
    }
    type Semaphore = weft::sync::Semaphore;
    fn semaphore(permits: usize) -> Self::Semaphore {
        weft::sync::Semaphore::new(permits)
    }
    fn with_permit<'a, F: Future<Output: Send> + Send + 'a>(sem: &'a Self::Semaphore, work: F) -> impl Future<Output = F::Output> + Send + 'a {
        async move {
            let _permit = sem.acquire().await.expect("the lab never closes its semaphore");
            work.await
        }
    }
    type Mutex<T: Send + 'static> = weft::sync::Mutex<T>;
    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
        weft::sync::Mutex::new(value)
    }
    fn with_lock<'a, T: Send + 'static, R: Send + 'a>(m: &'a Self::Mutex<T>, f: impl FnOnce(&mut T) -> R + Send + 'a) -> impl Future<Output = R> + Send + 'a {
        async move { f(&mut *m.lock().await) }
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
