//! Behaviours tokio's own suite checks and weft shares (each one a case of tokio's suite that weft
//! must pass): readiness waits spend no coop budget, a `block_on` future's `yield_now` lets the
//! driver run, `try_read` still reads after the runtime shut down, and `spawn_local` under a
//! `LocalRuntime`'s handle on another thread panics with tokio's message.

use std::io::Write;
use std::time::Duration;

use futures::FutureExt;

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_ready_stream_stays_ready_past_a_budget_of_waits() {
    rt().block_on(async {
        let (a, _b) = weft::net::UnixStream::pair().unwrap();
        // Far more waits than one task's coop budget (128): a readiness wait that found the
        // stream ready must not be turned into a forced yield.
        for i in 0..1_000 {
            let ready = a.writable().now_or_never();
            assert!(matches!(ready, Some(Ok(()))), "wait {i}: writable() was not ready at once");
        }
    });
}

#[test]
fn yield_now_in_block_on_lets_the_driver_deliver_readiness() {
    rt().block_on(async {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let a = weft::net::UnixStream::from_std(a).unwrap();
        // Nothing to read yet: the read clears any assumed readiness.
        assert_eq!(a.try_read(&mut [0u8; 4]).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        (&b).write_all(b"ping").unwrap();
        // One yield of the `block_on` future is enough for the driver to see the data.
        weft::task::yield_now().await;
        let mut buf = [0u8; 4];
        assert_eq!(a.try_read(&mut buf).expect("the yield let the driver mark the stream readable"), 4);
        assert_eq!(&buf, b"ping");
    });
}

#[test]
fn try_read_after_shutdown_reads_what_was_received() {
    let first = rt();
    let (a, b) = first.block_on(async {
        let (a, b) = weft::net::UnixStream::pair().unwrap();
        b.try_write(b"hello").unwrap();
        a.readable().await.unwrap();
        (a, b)
    });
    drop(first);
    let mut buf = [0u8; 5];
    assert_eq!(a.try_read(&mut buf).unwrap(), 5, "the data arrived before the shutdown");
    assert_eq!(&buf, b"hello");
    // Nothing left: the next try finds nothing; a wait on a new runtime reports the shutdown.
    assert!(a.try_read(&mut buf).is_err());
    let rt2 = rt();
    let err = rt2.block_on(async {
        weft::time::timeout(Duration::from_secs(5), a.readable()).await.expect("the wait must not hang")
    });
    assert!(weft::runtime::is_rt_shutdown_err(&err.unwrap_err()));
    drop(b);
}

#[test]
fn spawn_local_under_another_threads_local_runtime_handle_panics_with_tokios_text() {
    let handle = std::thread::spawn(|| weft::runtime::LocalRuntime::new().unwrap().handle().clone()).join().unwrap();
    let _guard = handle.enter();
    let err = std::panic::catch_unwind(|| drop(weft::task::spawn_local(async {}))).unwrap_err();
    let msg =
        err.downcast_ref::<String>().map(String::as_str).or_else(|| err.downcast_ref::<&str>().copied()).unwrap_or("");
    assert!(
        msg.contains("Local tasks can only be spawned on a LocalRuntime from the thread the runtime was created on"),
        "{msg}"
    );
}
