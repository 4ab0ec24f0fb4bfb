//! tokio adapter (`tokio-mt`, `tokio-ct`), with tokio's own `sync` channels.
//!
//! The reference point of most ratios. Built with `enable_all()` like a typical application,
//! so its timer and IO driver are present exactly as they are in production.

use std::future::Future;
use std::time::Duration;

use crate::adapter::{Adapter, BroadcastEnd, Channels, Closed, Flavor, Net, Panicked, RtConfig};

/// A built tokio runtime of either flavor.
pub struct Tokio {
    runtime: tokio::runtime::Runtime,
}

impl Adapter for Tokio {
    type Handle<T: Send + 'static> = tokio::task::JoinHandle<T>;
    type Channels = TokioChannels;
    type Net = TokioNet;

    fn build(config: &RtConfig) -> std::io::Result<Self> {
        let mut builder = match config.flavor {
            Flavor::MultiThread => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(config.workers);
                b
            }
            Flavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
        };
        if let Some(n) = config.global_queue_interval {
            builder.global_queue_interval(n);
        }
        if let Some(n) = config.event_interval {
            builder.event_interval(n);
        }
        let runtime = builder.thread_name("tokio-lab").enable_all().build()?;
        Ok(Tokio { runtime })
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.runtime.block_on(fut)
    }

    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(fut)
    }

    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send {
        async move { handle.await.map_err(|_| Panicked) }
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}

/// `tokio::sync`: `mpsc` (bounded), `oneshot`, `broadcast`, `Semaphore`, `Mutex`.
pub enum TokioChannels {}

impl Channels for TokioChannels {
    const AVAILABLE: bool = true;
    type Sender<T: Send + 'static> = tokio::sync::mpsc::Sender<T>;
    type Receiver<T: Send + 'static> = tokio::sync::mpsc::Receiver<T>;
    type OneshotSender<T: Send + 'static> = tokio::sync::oneshot::Sender<T>;
    type OneshotReceiver<T: Send + 'static> = tokio::sync::oneshot::Receiver<T>;

    fn bounded<T: Send + 'static>(capacity: usize) -> (Self::Sender<T>, Self::Receiver<T>) {
        tokio::sync::mpsc::channel(capacity)
    }
    fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> impl Future<Output = Result<(), Closed>> + Send + '_ {
        async move { tx.send(value).await.map_err(|_| Closed) }
    }
    fn recv<T: Send + 'static>(rx: &mut Self::Receiver<T>) -> impl Future<Output = Option<T>> + Send + '_ {
        rx.recv()
    }
    fn oneshot<T: Send + 'static>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>) {
        tokio::sync::oneshot::channel()
    }
    fn send_once<T: Send + 'static>(tx: Self::OneshotSender<T>, value: T) -> Result<(), Closed> {
        tx.send(value).map_err(|_| Closed)
    }
    fn recv_once<T: Send + 'static>(rx: Self::OneshotReceiver<T>) -> impl Future<Output = Result<T, Closed>> + Send {
        async move { rx.await.map_err(|_| Closed) }
    }
    type BroadcastSender<T: Clone + Send + Sync + 'static> = tokio::sync::broadcast::Sender<T>;
    type BroadcastReceiver<T: Clone + Send + Sync + 'static> = tokio::sync::broadcast::Receiver<T>;
    fn broadcast<T: Clone + Send + Sync + 'static>(capacity: usize) -> (Self::BroadcastSender<T>, Self::BroadcastReceiver<T>) {
        tokio::sync::broadcast::channel(capacity)
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
                tokio::sync::broadcast::error::RecvError::Closed => BroadcastEnd::Closed,
                tokio::sync::broadcast::error::RecvError::Lagged(_) => BroadcastEnd::Lagged,
            })
        }
    }
    type Semaphore = tokio::sync::Semaphore;
    fn semaphore(permits: usize) -> Self::Semaphore {
        tokio::sync::Semaphore::new(permits)
    }
    fn with_permit<'a, F: Future<Output: Send> + Send + 'a>(sem: &'a Self::Semaphore, work: F) -> impl Future<Output = F::Output> + Send + 'a {
        async move {
            let _permit = sem.acquire().await.expect("the lab never closes its semaphore");
            work.await
        }
    }
    type Mutex<T: Send + 'static> = tokio::sync::Mutex<T>;
    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
        tokio::sync::Mutex::new(value)
    }
    fn with_lock<'a, T: Send + 'static, R: Send + 'a>(m: &'a Self::Mutex<T>, f: impl FnOnce(&mut T) -> R + Send + 'a) -> impl Future<Output = R> + Send + 'a {
        async move { f(&mut *m.lock().await) }
    }
}

/// `tokio::net` TCP.
pub enum TokioNet {}

impl Net for TokioNet {
    type Listener = tokio::net::TcpListener;
    type Stream = tokio::net::TcpStream;
    type HyperIo = hyper_util::rt::TokioIo<tokio::net::TcpStream>;

    fn hyper_io(stream: Self::Stream) -> Self::HyperIo {
        hyper_util::rt::TokioIo::new(stream)
    }

    fn bind_loopback() -> impl Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send {
        async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
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
            let s = tokio::net::TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            Ok(s)
        }
    }
    fn read_exact<'a>(stream: &'a mut Self::Stream, buf: &'a mut [u8]) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
        use tokio::io::AsyncReadExt;
        async move { stream.read_exact(buf).await.map(drop) }
    }
    fn write_all<'a>(stream: &'a mut Self::Stream, buf: &'a [u8]) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
        use tokio::io::AsyncWriteExt;
        stream.write_all(buf)
    }
}
