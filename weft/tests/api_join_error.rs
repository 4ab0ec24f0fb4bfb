//! `JoinError`'s Display/Debug and the no-runtime panic text match tokio's exactly.

use std::panic::catch_unwind;

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().build().unwrap()
}

#[test]
fn cancelled_display_and_debug() {
    rt().block_on(async {
        let h = weft::spawn(std::future::pending::<()>());
        h.abort();
        let err = h.await.unwrap_err();
        let id = err.id();
        assert_eq!(err.to_string(), format!("task {id} was cancelled"));
        assert_eq!(format!("{err:?}"), format!("JoinError::Cancelled(Id({id}))"));
        assert_eq!(std::io::Error::from(err).to_string(), "task was cancelled");
    });
}

#[test]
fn panic_with_str_and_string_messages() {
    rt().block_on(async {
        let err = weft::spawn(async { panic!("boom") }).await.unwrap_err();
        let id = err.id();
        assert_eq!(err.to_string(), format!("task {id} panicked with message \"boom\""));
        assert_eq!(format!("{err:?}"), format!("JoinError::Panic(Id({id}), \"boom\", ...)"));

        let n = 7;
        let err = weft::spawn(async move { panic!("formatted {n}") }).await.unwrap_err();
        let id = err.id();
        assert_eq!(err.to_string(), format!("task {id} panicked with message \"formatted 7\""));
        assert_eq!(format!("{err:?}"), format!("JoinError::Panic(Id({id}), \"formatted 7\", ...)"));
        assert_eq!(std::io::Error::from(err).to_string(), "task panicked");
    });
}

#[test]
fn panic_with_non_string_payload() {
    rt().block_on(async {
        let err = weft::spawn(async { std::panic::panic_any(42u32) }).await.unwrap_err();
        let id = err.id();
        assert_eq!(err.to_string(), format!("task {id} panicked"));
        assert_eq!(format!("{err:?}"), format!("JoinError::Panic(Id({id}), ...)"));
        assert_eq!(*err.into_panic().downcast::<u32>().unwrap(), 42);
    });
}

const TOKIO_NO_RUNTIME: &str = "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

#[test]
fn spawn_without_runtime_panics_with_tokio_text() {
    let payload = catch_unwind(|| drop(weft::spawn(async {}))).unwrap_err();
    let msg = payload.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with(TOKIO_NO_RUNTIME), "{msg}");
}

#[test]
fn tcp_from_std_without_runtime_panics_with_tokio_text() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let payload = catch_unwind(|| drop(weft::net::TcpListener::from_std(listener))).unwrap_err();
    let msg = payload.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with(TOKIO_NO_RUNTIME), "{msg}");
}
