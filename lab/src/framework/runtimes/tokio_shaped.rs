//! The adapter for runtimes with tokio's API shape, written once: tokio itself, and weft,
//! whose API mirrors tokio's so that code ports by renaming the crate (`use weft as tokio;`).
//! `tokio.rs` and `weft.rs` instantiate it with their crate; the only other difference between
//! them is the hyper I/O wrapper (`hyper_util::rt::TokioIo` vs `weft::hyper::WeftIo`)
//! and a `configure` function for builder settings only one of them has (weft's opt-in metrics
//! histograms, the `sweep` knobs `poll_time_histogram` and `schedule_latency_histogram`; weft's
//! long-poll warning lines off), with `long_polls` reading weft's long-poll count.
//!
//! Each instance is built with `enable_all()` like a typical application, so the timer and I/O
//! drivers are present exactly as they are in production, and uses the runtime's own `sync`
//! channels and `net` sockets.

/// Defines `$Adapter` (an `Adapter`), `$Channels` (its `sync` kit) and `$Net` (its TCP kit)
/// on the crate `$rt`.
macro_rules! tokio_shaped_adapter {
    (
        crate: $rt:ident,
        adapter: $Adapter:ident,
        channels: $Channels:ident,
        net: $Net:ident,
        thread_name: $thread_name:literal,
        hyper_io: $($hyper_io:ident)::+,
        hyper_timer: $($hyper_timer:ident)::+,
        configure: $configure:path,
        long_polls: $long_polls:path $(,)?
    ) => {
        #[doc = concat!("A built `", stringify!($rt), "` runtime of either flavor.")]
                pub struct $Adapter {
            runtime: $rt::runtime::Runtime,
        }

        impl $crate::framework::adapter::Adapter for $Adapter {
            type Handle<T: Send + 'static> = $rt::task::JoinHandle<T>;
            type Channels = $Channels;
            type Net = $Net;

            fn build(config: &$crate::framework::adapter::RtConfig) -> std::io::Result<Self> {
                let mut builder = match config.flavor {
                    $crate::framework::adapter::Flavor::MultiThread => {
                        let mut b = $rt::runtime::Builder::new_multi_thread();
                        b.worker_threads(config.workers);
                        b
                    }
                    $crate::framework::adapter::Flavor::CurrentThread => $rt::runtime::Builder::new_current_thread(),
                };
                if let Some(n) = config.global_queue_interval {
                    builder.global_queue_interval(n);
                }
                if let Some(n) = config.event_interval {
                    builder.event_interval(n);
                }
                $configure(&mut builder, config);
                let runtime = builder.thread_name($thread_name).enable_all().build()?;
                Ok($Adapter { runtime })
            }

            fn block_on<F: std::future::Future>(&self, fut: F) -> F::Output {
                self.runtime.block_on(fut)
            }

            fn long_polls(&self) -> u64 {
                $long_polls(&self.runtime)
            }

            fn spawn<F>(fut: F) -> Self::Handle<F::Output>
            where
                F: std::future::Future + Send + 'static,
                F::Output: Send + 'static,
            {
                $rt::spawn(fut)
            }

            fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl std::future::Future<Output = Result<T, $crate::framework::adapter::Panicked>> + Send {
                async move { handle.await.map_err(|_| $crate::framework::adapter::Panicked) }
            }

            fn yield_now() -> impl std::future::Future<Output = ()> + Send {
                $rt::task::yield_now()
            }

            fn sleep(duration: std::time::Duration) -> impl std::future::Future<Output = ()> + Send {
                $rt::time::sleep(duration)
            }

            type Timer = $rt::time::Sleep;

            fn timer_at(deadline: std::time::Instant) -> Self::Timer {
                $rt::time::sleep_until($rt::time::Instant::from_std(deadline))
            }

            fn reset_timer(timer: std::pin::Pin<&mut Self::Timer>, deadline: std::time::Instant) {
                timer.reset($rt::time::Instant::from_std(deadline));
            }
        }

        #[doc = concat!("`", stringify!($rt), "::sync`: `mpsc` (bounded), `oneshot`, `broadcast`, `Semaphore`, `Mutex`.")]
                pub enum $Channels {}

        impl $crate::framework::adapter::Channels for $Channels {
            const AVAILABLE: bool = true;
            type Sender<T: Send + 'static> = $rt::sync::mpsc::Sender<T>;
            type Receiver<T: Send + 'static> = $rt::sync::mpsc::Receiver<T>;
            type OneshotSender<T: Send + 'static> = $rt::sync::oneshot::Sender<T>;
            type OneshotReceiver<T: Send + 'static> = $rt::sync::oneshot::Receiver<T>;

            fn bounded<T: Send + 'static>(capacity: usize) -> (Self::Sender<T>, Self::Receiver<T>) {
                $rt::sync::mpsc::channel(capacity)
            }
            fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> impl std::future::Future<Output = Result<(), $crate::framework::adapter::Closed>> + Send + '_ {
                async move { tx.send(value).await.map_err(|_| $crate::framework::adapter::Closed) }
            }
            fn recv<T: Send + 'static>(rx: &mut Self::Receiver<T>) -> impl std::future::Future<Output = Option<T>> + Send + '_ {
                rx.recv()
            }
            fn oneshot<T: Send + 'static>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>) {
                $rt::sync::oneshot::channel()
            }
            fn send_once<T: Send + 'static>(tx: Self::OneshotSender<T>, value: T) -> Result<(), $crate::framework::adapter::Closed> {
                tx.send(value).map_err(|_| $crate::framework::adapter::Closed)
            }
            fn recv_once<T: Send + 'static>(rx: Self::OneshotReceiver<T>) -> impl std::future::Future<Output = Result<T, $crate::framework::adapter::Closed>> + Send {
                async move { rx.await.map_err(|_| $crate::framework::adapter::Closed) }
            }
            type BroadcastSender<T: Clone + Send + Sync + 'static> = $rt::sync::broadcast::Sender<T>;
            type BroadcastReceiver<T: Clone + Send + Sync + 'static> = $rt::sync::broadcast::Receiver<T>;
            fn broadcast<T: Clone + Send + Sync + 'static>(capacity: usize) -> (Self::BroadcastSender<T>, Self::BroadcastReceiver<T>) {
                $rt::sync::broadcast::channel(capacity)
            }
            fn subscribe<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>) -> Self::BroadcastReceiver<T> {
                tx.subscribe()
            }
            fn broadcast_send<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>, value: T) -> impl std::future::Future<Output = Result<(), $crate::framework::adapter::Closed>> + Send + '_ {
                std::future::ready(tx.send(value).map(|_| ()).map_err(|_| $crate::framework::adapter::Closed))
            }
            fn broadcast_recv<T: Clone + Send + Sync + 'static>(rx: &mut Self::BroadcastReceiver<T>) -> impl std::future::Future<Output = Result<T, $crate::framework::adapter::BroadcastEnd>> + Send + '_ {
                async move {
                    rx.recv().await.map_err(|e| match e {
                        $rt::sync::broadcast::error::RecvError::Closed => $crate::framework::adapter::BroadcastEnd::Closed,
                        $rt::sync::broadcast::error::RecvError::Lagged(_) => $crate::framework::adapter::BroadcastEnd::Lagged,
                    })
                }
            }
            type Semaphore = $rt::sync::Semaphore;
            fn semaphore(permits: usize) -> Self::Semaphore {
                $rt::sync::Semaphore::new(permits)
            }
            fn with_permit<'a, F: std::future::Future<Output: Send> + Send + 'a>(sem: &'a Self::Semaphore, work: F) -> impl std::future::Future<Output = F::Output> + Send + 'a {
                async move {
                    let _permit = sem.acquire().await.expect("the lab never closes its semaphore");
                    work.await
                }
            }
            type Mutex<T: Send + 'static> = $rt::sync::Mutex<T>;
            fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
                $rt::sync::Mutex::new(value)
            }
            fn with_lock<'a, T: Send + 'static, R: Send + 'a>(m: &'a Self::Mutex<T>, f: impl FnOnce(&mut T) -> R + Send + 'a) -> impl std::future::Future<Output = R> + Send + 'a {
                async move { f(&mut *m.lock().await) }
            }
        }

        #[doc = concat!("`", stringify!($rt), "::net` TCP.")]
                pub enum $Net {}

        impl $crate::framework::adapter::Net for $Net {
            type Listener = $rt::net::TcpListener;
            type Stream = $rt::net::TcpStream;
            type HyperIo = $($hyper_io)::+<$rt::net::TcpStream>;

            fn hyper_io(stream: Self::Stream) -> Self::HyperIo {
                $($hyper_io)::+::new(stream)
            }

            type HyperTimer = $($hyper_timer)::+;

            fn hyper_timer() -> Option<Self::HyperTimer> {
                Some($($hyper_timer)::+::new())
            }

            fn bind_loopback() -> impl std::future::Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send {
                async {
                    let l = $rt::net::TcpListener::bind("127.0.0.1:0").await?;
                    let addr = l.local_addr()?;
                    Ok((l, addr))
                }
            }
            fn accept(listener: &Self::Listener) -> impl std::future::Future<Output = std::io::Result<Self::Stream>> + Send + '_ {
                async move {
                    let (s, _) = listener.accept().await?;
                    s.set_nodelay(true)?;
                    Ok(s)
                }
            }
            fn connect(addr: std::net::SocketAddr) -> impl std::future::Future<Output = std::io::Result<Self::Stream>> + Send {
                async move {
                    let s = $rt::net::TcpStream::connect(addr).await?;
                    s.set_nodelay(true)?;
                    Ok(s)
                }
            }
            fn read_exact<'a>(stream: &'a mut Self::Stream, buf: &'a mut [u8]) -> impl std::future::Future<Output = std::io::Result<()>> + Send + 'a {
                use $rt::io::AsyncReadExt;
                async move { stream.read_exact(buf).await.map(drop) }
            }
            fn write_all<'a>(stream: &'a mut Self::Stream, buf: &'a [u8]) -> impl std::future::Future<Output = std::io::Result<()>> + Send + 'a {
                use $rt::io::AsyncWriteExt;
                stream.write_all(buf)
            }
        }
    };
}

pub(crate) use tokio_shaped_adapter;
