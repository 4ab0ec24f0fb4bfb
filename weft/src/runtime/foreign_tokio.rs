//! A second tokio in the program, diagnosed where it fails.
//!
//! When tokio is patched to weft (`compat/tokio`), a crate that requires a tokio version the
//! facade does not satisfy (`tokio = "=1.40.0"`) makes cargo link the real tokio beside it.
//! That crate's `tokio::spawn`, `Handle::current()` or socket constructors then run on a weft
//! runtime, which the real tokio cannot see, and it panics with its own message ("there is no
//! reactor running, must be called from the context of a Tokio 1.x runtime"), which names
//! neither weft nor the cause. The same happens when weft is used beside tokio on purpose and
//! tokio code is called from a weft task.
//!
//! The first runtime built installs a panic hook (chained after the previous one, so nothing
//! printed before is lost) that recognises that message while a weft runtime is current on the
//! thread — weft's own version of the message says `(weft:` and is raised only when none is —
//! and adds what happened, where (the panic's location: tokio's panics there are
//! `#[track_caller]`, so it is the calling crate's file, with its name and version in the
//! registry path) and how to fix it.
//!
//! Rejected: detecting the second tokio at build time. The facade's build script cannot find
//! the user's lockfile reliably (a shared `CARGO_TARGET_DIR` puts its `OUT_DIR` under another
//! workspace), and failing the build would also stop graphs where the second tokio is used
//! only for runtime-free parts (`tokio::sync`), which work.

use std::sync::Once;

/// The real tokio's message when no tokio runtime is current (a substring of its panics).
const TOKIO_NO_RUNTIME: &str = "must be called from the context of a Tokio 1.x runtime";

static INSTALL: Once = Once::new();

/// Installs the hook (once per process).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            prev(info);
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str));
            // Every panic in the program passes here (an actor's crash, a task's), so the
            // message is matched before anything is looked up or formatted: eagerly, the
            // location's `format!` and the handle lookup cost every panic two allocations
            // (`valgrind --tool=dhat` on `weft-lab actors --filter =panic_signal`).
            let Some(msg) = msg.filter(|m| is_second_tokio(m)) else { return };
            let in_weft = crate::runtime::Handle::try_current().is_ok();
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            if let Some(text) = diagnosis(msg, in_weft, location.as_deref()) {
                eprintln!("{text}");
            }
        }));
    });
}

/// Whether `msg` is the real tokio's no-runtime panic (weft's own version says `(weft:`).
fn is_second_tokio(msg: &str) -> bool {
    msg.contains(TOKIO_NO_RUNTIME) && !msg.contains("(weft:")
}

/// The added explanation, if `msg` is a second tokio's no-runtime panic raised on a thread
/// where a weft runtime is current.
pub(crate) fn diagnosis(msg: &str, in_weft: bool, location: Option<&str>) -> Option<String> {
    if !in_weft || !is_second_tokio(msg) {
        return None;
    }
    let at = location.map(|l| format!(" The call was made at {l}.")).unwrap_or_default();
    Some(format!(
        "weft: that panic came from a second tokio linked into this program, called on a weft \
         runtime it cannot see.{at}\n\
         weft:   If tokio is patched to weft ([patch.crates-io] tokio = compat/tokio), a crate in \
         the graph requires a tokio version the facade does not satisfy (for example \
         `tokio = \"=1.40.0\"`): `cargo tree -i tokio` lists each tokio and the crates pulling it \
         (the real one is the entry with a registry version that is not the facade's path); \
         upgrade that crate, or relax or patch its requirement so it accepts the facade's \
         version, until `cargo tree -i tokio` shows only the facade.\n\
         weft:   If you use weft beside tokio on purpose, run that code on a tokio runtime (or \
         inside one entered with tokio's `Handle::enter`)."
    ))
}

#[cfg(test)]
mod tests {
    use super::diagnosis;

    const REAL: &str = "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

    #[test]
    fn a_real_tokio_panic_on_a_weft_thread_is_explained_with_its_location() {
        let text = diagnosis(REAL, true, Some("/registry/pinned-0.1.0/src/lib.rs:7")).expect("diagnosed");
        assert!(text.contains("second tokio"), "{text}");
        assert!(text.contains("pinned-0.1.0/src/lib.rs:7"), "{text}");
        assert!(text.contains("cargo tree -i tokio"), "{text}");
    }

    #[test]
    fn weft_own_message_and_threads_without_weft_are_left_alone() {
        assert!(diagnosis(REAL, false, None).is_none(), "no weft runtime: the message is accurate");
        let own = format!("{REAL} (weft: there is no weft runtime on this thread)");
        assert!(diagnosis(&own, true, None).is_none(), "weft's own panic");
        assert!(diagnosis("index out of bounds", true, None).is_none());
    }
}
