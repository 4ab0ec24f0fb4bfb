//! tokio's function-like macros: `select!`, `join!`, `try_join!`, `pin!` and `task_local!`.
//!
//! # Design
//! * `select!`, `join!`, `try_join!` are thin `macro_rules!` wrappers that hand their input,
//!   prefixed with `($crate)`, to procedural generators in `weft-macros` (`select.rs`,
//!   `join.rs`). `$crate` is what makes the expansion name weft's support items correctly
//!   whatever the dependency is called (`tokio = { package = "weft" }` included); the
//!   generators are procedural so the number of branches is not capped by a table of arities.
//!   They need the `macros` feature.
//! * `support` holds what the generated code calls: `MaybeDone`, the random start index and
//!   the coop-budget check.
//! * `pin!` pins on the stack through `core::pin::pin!` (no unsafe here); `task_local!`
//!   declares a `task::LocalKey` (weft/src/task/task_local.rs) around a `thread_local!`.
//!
//! # Semantics (as tokio documents them)
//! * `select!` evaluates every `, if` precondition, then every future expression (also those
//!   of disabled branches), polls the enabled branches starting at a random index (`biased;`:
//!   in order), and on the first completion whose value matches its pattern drops all the
//!   futures and runs that branch's handler. A completion that does not match disables its
//!   branch. With every branch disabled, `else` runs; without `else` it panics.
//! * `join!` returns the tuple of every output once all complete; `try_join!` returns the
//!   first `Err` at once (dropping the others) or `Ok` of the tuple.
//! * All three check the task's coop budget before each poll and yield when it is spent.
//! * Branch count: no fixed limit (a test compiles a 1,000-branch `select!`); tokio caps
//!   `select!` at 64 branches.
//!
//! Rejected alternative: a `u64` disabled-mask as in tokio, which is what caps tokio at 64;
//! an array of `bool` costs N bytes on the stack of the `select!` and lifts the cap.

#[doc(hidden)]
pub mod support;

/// Waits on several futures at once and runs the handler of the first to complete (whose
/// output matches its pattern); the others are dropped. See tokio's `select!` for the syntax:
/// `[biased;] pattern = future [, if condition] => handler, … [else => expression]`.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<u32>();
/// tx.send(7).unwrap();
/// let got = weft::select! {
///     Some(v) = rx.recv() => v,
///     _ = weft::time::sleep(std::time::Duration::from_secs(10)) => 0,
/// };
/// assert_eq!(got, 7);
/// # });
/// ```
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! select {
    ($($tokens:tt)*) => {
        $crate::__private::select_impl! { ($crate) $($tokens)* }
    };
}

/// Polls several futures concurrently and returns the tuple of their outputs once all are
/// done. `join!(biased; a, b)` polls in the given order instead of rotating the start.
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! join {
    ($($tokens:tt)*) => {
        $crate::__private::join_impl! { ($crate) $($tokens)* }
    };
}

/// Like [`join!`] for futures returning `Result`: the first `Err` is returned at once (the
/// other futures are dropped), otherwise `Ok` of the tuple of values.
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! try_join {
    ($($tokens:tt)*) => {
        $crate::__private::try_join_impl! { ($crate) $($tokens)* }
    };
}

/// Pins values on the stack: `pin!(fut)` shadows `fut` with a `Pin<&mut _>` to it;
/// `pin! { let a = expr; }` declares and pins in one step.
#[macro_export]
macro_rules! pin {
    ($($x:ident),* $(,)?) => { $(
        #[allow(unused_mut)]
        let mut $x = ::core::pin::pin!($x);
    )* };
    ($(
        let $x:ident = $init:expr;
    )*) => { $(
        let $x = $init;
        $crate::pin!($x);
    )* };
}

/// Declares task-local keys: `task_local! { pub static NAME: Type; }` makes `NAME` a
/// [`task::LocalKey<Type>`](crate::task::LocalKey), set for the duration of a future with
/// `NAME.scope(value, future)` or of a closure with `NAME.sync_scope(value, f)`.
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_inner!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_inner!($(#[$attr])* $vis $name, $t);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __task_local_inner {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __KEY: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey { inner: __KEY }
        };
    };
}
