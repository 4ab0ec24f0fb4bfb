//! `weft::signal::unix`: several listeners per signal, across runtimes, coalescing, refused
//! signals (own test binary: it installs process-wide handlers).

use std::time::Duration;

use weft::signal::unix::{signal, SignalKind};

fn raise(signum: i32) {
    // SAFETY: raise(2) takes a signal number and touches no memory of ours; weft's handler is
    // installed for every signal raised here, so none of them kills the process.
    unsafe { libc::raise(signum) };
}

#[test]
fn every_listener_on_every_runtime_sees_a_delivery() {
    let rt1 = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rt2 = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let guard = rt1.enter(); // `signal` needs a runtime, as in tokio
    let mut a = signal(SignalKind::user_defined1()).unwrap();
    let mut b = signal(SignalKind::user_defined1()).unwrap();
    let mut c = signal(SignalKind::from_raw(libc::SIGUSR1)).unwrap();
    drop(guard);
    let on_rt2 = rt2.spawn(async move {
        c.recv().await.unwrap();
        c
    });
    raise(libc::SIGUSR1);
    rt1.block_on(async {
        let d = Duration::from_secs(10);
        weft::time::timeout(d, a.recv()).await.expect("a woken").unwrap();
        weft::time::timeout(d, b.recv()).await.expect("b woken").unwrap();
    });
    let mut c = rt2.block_on(async { weft::time::timeout(Duration::from_secs(10), on_rt2).await }).unwrap().unwrap();

    // Nothing new: a recv stays pending.
    rt1.block_on(async {
        assert!(weft::time::timeout(Duration::from_millis(20), a.recv()).await.is_err());
    });
    // Two deliveries before a recv coalesce into one completion.
    raise(libc::SIGUSR1);
    raise(libc::SIGUSR1);
    rt1.block_on(async {
        weft::time::timeout(Duration::from_secs(10), c.recv()).await.expect("c woken").unwrap();
        assert!(weft::time::timeout(Duration::from_millis(20), c.recv()).await.is_err(), "coalesced");
    });
    // A listener created after a delivery does not see it.
    let mut late = rt1.block_on(async { signal(SignalKind::user_defined1()).unwrap() });
    rt1.block_on(async {
        assert!(weft::time::timeout(Duration::from_millis(20), late.recv()).await.is_err());
    });
}

#[test]
fn listeners_of_other_signals_are_not_woken() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _guard = rt.enter();
    let mut hup = signal(SignalKind::hangup()).unwrap();
    let mut usr2 = signal(SignalKind::user_defined2()).unwrap();
    raise(libc::SIGUSR2);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(10), usr2.recv()).await.expect("usr2 woken").unwrap();
        assert!(weft::time::timeout(Duration::from_millis(20), hup.recv()).await.is_err());
    });
}

#[test]
fn uncatchable_and_invalid_signals_are_errors() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _guard = rt.enter();
    for kind in
        [SignalKind::from_raw(libc::SIGKILL), SignalKind::from_raw(libc::SIGSTOP), SignalKind::from_raw(libc::SIGSEGV)]
    {
        let err = signal(kind).unwrap_err();
        assert_eq!(err.to_string(), format!("Refusing to register signal {}", kind.as_raw_value()));
    }
    assert!(signal(SignalKind::from_raw(-1)).is_err());
    assert!(signal(SignalKind::from_raw(1000)).is_err());
    assert_eq!(SignalKind::terminate().as_raw_value(), libc::SIGTERM);
    assert_eq!(i32::from(SignalKind::interrupt()), libc::SIGINT);
}

#[test]
#[should_panic(expected = "there is no reactor running")]
fn signal_outside_a_runtime_panics() {
    let _ = signal(SignalKind::hangup());
}
