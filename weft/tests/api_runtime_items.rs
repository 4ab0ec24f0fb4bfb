//! `Handle::id`, `runtime::is_rt_shutdown_err`, and unwind-safety of the public types tokio
//! declares unwind-safe (compile-time assertions, as tokio's own tests make them).

use std::panic::{RefUnwindSafe, UnwindSafe};

use weft::runtime::{Builder, Handle};

fn is_unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}

#[allow(dead_code)] // the impls below are the compile-time check
trait AssertRefUnwindSafe: RefUnwindSafe {}
// For every `T`, as tokio's sync_mpsc test declares them.
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::OwnedPermit<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::Permit<'_, T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::Receiver<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::Sender<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::UnboundedReceiver<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::UnboundedSender<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::WeakSender<T> {}
impl<T> AssertRefUnwindSafe for weft::sync::mpsc::WeakUnboundedSender<T> {}

#[test]
fn public_types_are_unwind_safe() {
    is_unwind_safe::<weft::sync::Notify>();
    is_unwind_safe::<weft::task::JoinHandle<()>>();
    is_unwind_safe::<weft::net::TcpListener>();
    is_unwind_safe::<weft::net::TcpSocket>();
    is_unwind_safe::<weft::net::TcpStream>();
    is_unwind_safe::<weft::net::UdpSocket>();
    is_unwind_safe::<weft::net::UnixDatagram>();
    is_unwind_safe::<weft::net::UnixListener>();
    is_unwind_safe::<weft::net::UnixStream>();
    is_unwind_safe::<Handle>();
}

#[test]
fn handle_id_is_stable_per_runtime_and_distinct_between_live_runtimes() {
    let a = Builder::new_current_thread().build().unwrap();
    let b = Builder::new_multi_thread().worker_threads(1).build().unwrap();
    let id_a = a.handle().id();
    assert_eq!(a.handle().clone().id(), id_a);
    assert_eq!(a.block_on(async { Handle::current().id() }), id_a);
    assert_eq!(b.block_on(async { weft::spawn(async { Handle::current().id() }).await.unwrap() }), b.handle().id());
    assert_ne!(id_a, b.handle().id());
    assert_eq!(id_a.to_string(), format!("{id_a:?}").trim_start_matches("Id(").trim_end_matches(')'));
}

#[test]
fn io_after_runtime_shutdown_is_recognised() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let listener = rt.block_on(async { weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap() });
    let handle = rt.handle().clone();
    drop(rt);
    let err = handle.block_on(listener.accept()).unwrap_err();
    assert!(weft::runtime::is_rt_shutdown_err(&err), "{err:?}");
    assert!(!weft::runtime::is_rt_shutdown_err(&std::io::Error::other("other")));
    assert!(!weft::runtime::is_rt_shutdown_err(&std::io::Error::from(std::io::ErrorKind::ConnectionReset)));
}
