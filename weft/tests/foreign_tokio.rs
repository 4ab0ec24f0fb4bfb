//! A real tokio called on a weft runtime (a second tokio in the graph: a crate that pinned
//! another tokio, or weft used beside tokio) panics with tokio's own message; weft's hook adds
//! what happened, where, and how to fix it. Checked in a child process, whose stderr is read.

use std::process::Command;

const CHILD: &str = "WEFT_FOREIGN_TOKIO_CHILD";

/// Runs test `name` of this binary again as a child with `CHILD` set: its exit success and stderr.
fn in_child(name: &str) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_real_tokio_spawn_on_a_weft_runtime_is_explained() {
    if std::env::var_os(CHILD).is_some() {
        let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            // The real tokio's spawn: it sees no tokio runtime and panics.
            drop(tokio::spawn(async {}));
        });
        return;
    }
    let (ok, stderr) = in_child("a_real_tokio_spawn_on_a_weft_runtime_is_explained");
    assert!(!ok, "the real tokio must panic: {stderr}");
    assert!(stderr.contains("must be called from the context of a Tokio 1.x runtime"), "{stderr}");
    assert!(stderr.contains("weft: that panic came from a second tokio"), "{stderr}");
    assert!(stderr.contains("tests/foreign_tokio.rs"), "the call's location is named: {stderr}");
    assert!(stderr.contains("cargo tree -i tokio"), "{stderr}");
}

#[test]
fn weft_own_no_runtime_panic_gets_no_second_tokio_note() {
    if std::env::var_os(CHILD).is_some() {
        // Build a runtime (installs the hook), then spawn with none current: weft's own panic.
        drop(weft::runtime::Builder::new_current_thread().build().unwrap());
        drop(weft::spawn(async {}));
        return;
    }
    let (ok, stderr) = in_child("weft_own_no_runtime_panic_gets_no_second_tokio_note");
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("(weft: there is no weft runtime"), "{stderr}");
    assert!(!stderr.contains("second tokio"), "{stderr}");
}
