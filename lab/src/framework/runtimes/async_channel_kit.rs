//! The channel kit of the runtimes from the smol family, written once: smol and async-std
//! both use `async-channel` for mpsc (async-std re-exports its own copy, of another major
//! version, as `async_std::channel`, so the types differ and a macro rather than one type
//! serves both), a `bounded(1)` channel as the oneshot, `async-broadcast`, and `async-lock`'s
//! `Semaphore`. Only the channel module and the mutex type are the runtime's own.

/// Defines `pub enum $Kit {}` implementing `Channels` with `$channel`'s `bounded` channels and
/// `$mutex` as the mutex.
macro_rules! async_channel_kit {
    ($(#[$doc:meta])* $Kit:ident, channel = $($channel:ident)::+, mutex = $($mutex:ident)::+) => {
        $(#[$doc])*
        pub enum $Kit {}

        impl $crate::framework::adapter::Channels for $Kit {
            const AVAILABLE: bool = true;
            type Sender<T: Send + 'static> = $($channel)::+::Sender<T>;
            type Receiver<T: Send + 'static> = $($channel)::+::Receiver<T>;
            type OneshotSender<T: Send + 'static> = $($channel)::+::Sender<T>;
            type OneshotReceiver<T: Send + 'static> = $($channel)::+::Receiver<T>;

            fn bounded<T: Send + 'static>(capacity: usize) -> (Self::Sender<T>, Self::Receiver<T>) {
                $($channel)::+::bounded(capacity)
            }
            fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> impl std::future::Future<Output = Result<(), $crate::framework::adapter::Closed>> + Send + '_ {
                async move { tx.send(value).await.map_err(|_| $crate::framework::adapter::Closed) }
            }
            fn recv<T: Send + 'static>(rx: &mut Self::Receiver<T>) -> impl std::future::Future<Output = Option<T>> + Send + '_ {
                async move { rx.recv().await.ok() }
            }
            fn oneshot<T: Send + 'static>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>) {
                $($channel)::+::bounded(1)
            }
            fn send_once<T: Send + 'static>(tx: Self::OneshotSender<T>, value: T) -> Result<(), $crate::framework::adapter::Closed> {
                tx.try_send(value).map_err(|_| $crate::framework::adapter::Closed)
            }
            fn recv_once<T: Send + 'static>(rx: Self::OneshotReceiver<T>) -> impl std::future::Future<Output = Result<T, $crate::framework::adapter::Closed>> + Send {
                async move { rx.recv().await.map_err(|_| $crate::framework::adapter::Closed) }
            }
            type BroadcastSender<T: Clone + Send + Sync + 'static> = async_broadcast::Sender<T>;
            type BroadcastReceiver<T: Clone + Send + Sync + 'static> = async_broadcast::Receiver<T>;
            fn broadcast<T: Clone + Send + Sync + 'static>(
                capacity: usize,
            ) -> (Self::BroadcastSender<T>, Self::BroadcastReceiver<T>) {
                async_broadcast::broadcast(capacity)
            }
            fn subscribe<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>) -> Self::BroadcastReceiver<T> {
                tx.new_receiver()
            }
            fn broadcast_send<T: Clone + Send + Sync + 'static>(
                tx: &Self::BroadcastSender<T>,
                value: T,
            ) -> impl std::future::Future<Output = Result<(), $crate::framework::adapter::Closed>> + Send + '_ {
                async move { tx.broadcast(value).await.map(|_| ()).map_err(|_| $crate::framework::adapter::Closed) }
            }
            fn broadcast_recv<T: Clone + Send + Sync + 'static>(
                rx: &mut Self::BroadcastReceiver<T>,
            ) -> impl std::future::Future<Output = Result<T, $crate::framework::adapter::BroadcastEnd>> + Send + '_ {
                async move {
                    rx.recv().await.map_err(|e| match e {
                        async_broadcast::RecvError::Overflowed(_) => $crate::framework::adapter::BroadcastEnd::Lagged,
                        _ => $crate::framework::adapter::BroadcastEnd::Closed,
                    })
                }
            }
            type Semaphore = async_lock::Semaphore;
            fn semaphore(permits: usize) -> Self::Semaphore {
                async_lock::Semaphore::new(permits)
            }
            fn with_permit<'a, F: std::future::Future<Output: Send> + Send + 'a>(
                sem: &'a Self::Semaphore,
                work: F,
            ) -> impl std::future::Future<Output = F::Output> + Send + 'a {
                async move {
                    let _permit = sem.acquire().await;
                    work.await
                }
            }
            type Mutex<T: Send + 'static> = $($mutex)::+<T>;
            fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
                $($mutex)::+::new(value)
            }
            fn with_lock<'a, T: Send + 'static, R: Send + 'a>(
                m: &'a Self::Mutex<T>,
                f: impl FnOnce(&mut T) -> R + Send + 'a,
            ) -> impl std::future::Future<Output = R> + Send + 'a {
                async move { f(&mut *m.lock().await) }
            }
        }
    };
}

pub(crate) use async_channel_kit;
