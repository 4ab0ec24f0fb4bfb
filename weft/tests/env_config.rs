//! `WEFT_*` environment configuration through `Builder::build`. One test in its own binary:
//! it is the only code in this process that touches the environment, so no other thread
//! reads it while it changes (the parsing itself is unit-tested without the environment in
//! `runtime/env_config.rs`).

use std::io;

use weft::runtime::Builder;

fn set(name: &str, value: Option<&str>) {
    // This binary has a single test, and no runtime is alive while it changes a variable.
    match value {
        Some(v) => std::env::set_var(name, v),
        None => std::env::remove_var(name),
    }
}

#[test]
fn environment_sets_defaults_builder_calls_win_and_bad_values_fail_build() {
    set("WEFT_WORKER_THREADS", Some("3"));
    set("WEFT_EVENT_INTERVAL", Some("7"));
    let rt = Builder::new_multi_thread().build().unwrap();
    assert_eq!(rt.handle().metrics().num_workers(), 3, "environment over the default");
    drop(rt);
    let rt = Builder::new_multi_thread().worker_threads(2).build().unwrap();
    assert_eq!(rt.handle().metrics().num_workers(), 2, "builder call over the environment");
    drop(rt);

    set("WEFT_COMPENSATE", Some("maybe"));
    let err = Builder::new_multi_thread().worker_threads(1).build().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("WEFT_COMPENSATE=\"maybe\""), "{err}");
    // Current-thread runtimes read the shared knobs too, so they fail the same way.
    let err = Builder::new_current_thread().build().unwrap_err();
    assert!(err.to_string().contains("WEFT_COMPENSATE"), "{err}");
    set("WEFT_COMPENSATE", None);

    set("WEFT_WORKER_THREADS", Some("zero"));
    let err = Builder::new_multi_thread().build().unwrap_err();
    assert!(err.to_string().contains("WEFT_WORKER_THREADS"), "{err}");
    set("WEFT_WORKER_THREADS", None);
    set("WEFT_EVENT_INTERVAL", None);
    assert!(Builder::new_multi_thread().worker_threads(1).build().is_ok());
}
