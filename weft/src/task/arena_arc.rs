//! `ArenaArc<T>`: a shared value with a reference count, like `Arc<T>`, whose memory comes
//! from the current runtime's task arena (`task::arena`) when it is created on a runtime
//! thread, and from the global allocator otherwise. The `mpsc` and `oneshot` channels live
//! in one, and so does each weft-actor actor's cell (public as `weft::arena::ArenaArc`, a
//! weft-only module, kept out of `weft::sync` so that tokio's own modules in the facade gain
//! nothing tokio lacks).
//!
//! # Why
//! An actor's mailbox is a channel of ~600 bytes, created with the actor and freed when it
//! stops. With many such channels alive, glibc's per-thread cache (7 chunks per size) is
//! empty, and each `malloc` and `free` of a channel takes its slow paths, a visible share of
//! each actor's spawn in `weft-lab actors --filter =spawn` (docs/notes/performance-figures.md,
//! "Task arena"). The arena's thread caches hand out and take back
//! any number of slots of a class with a list push or pop. A task cell already comes from
//! there; a channel is the same kind of memory (made with a task, gone with it).
//!
//! # Glossary
//! * **header** — the count and the arena handle before the value: 16 bytes, as `Arc`'s
//!   two counts are. There are no weak references (the channels count their weak senders
//!   themselves), so one count suffices.
//! * **arena handle** — a clone of the runtime's `TaskArena`, kept by the value: the arena
//!   frees its chunks only when its last handle goes, and a channel can outlive its runtime
//!   (a `Sender` kept in a static, or returned from `block_on`).
//!
//! # Invariants
//! * The memory goes back where it came from: to the arena of the handle in the header (the
//!   class is a function of `T`'s layout), or to the global allocator when the header holds
//!   none.
//! * The value is dropped once, by whoever takes the count from 1 to 0, after an Acquire
//!   fence that orders every other holder's last use before it (each drop is a Release
//!   decrement), as in `Arc`.
//!
//! # Costs
//! * With few channels alive, where glibc's per-thread cache serves every request, the
//!   arena path costs the same as glibc: `chained_spawn` (each actor spawns the next, so one
//!   or two mailboxes live at a time) shows no difference (docs/notes/performance-figures.md).
//! * The handle is one shared read-modify-write when a channel is made and one when it is
//!   freed (the arena's `Arc` count), as the task's scheduler handle is for a task.
//!
//! # Rejected alternatives
//! * A pool of channels of its own (`util::spaced` records that rejection): a second
//!   allocator to tune and to trim. The task arena is already tuned and trimmed; this module
//!   only asks it for memory.
//! * One helper for "arena slot if it serves the layout, else the global allocator", shared
//!   with `raw::alloc_cell`/`free_cell`, which make the same decision: the same
//!   instructions, but LLVM then leaves the `send` future's drop out of line in `weft-lab
//!   micro`'s `mpsc_uncontended`, which costs every message, so the two stay written out.
//! * No arena handle, relying on the runtime to outlive its channels: it does not have to
//!   (see "arena handle"), and a freed chunk under a live channel is a use-after-free.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use super::arena::TaskArena;
use crate::loom::sync::atomic::{fence, AtomicUsize, Ordering::*};

/// Above this many references, a clone aborts, as `Arc`'s does: the count cannot wrap.
const MAX_REFS: usize = isize::MAX as usize;

#[repr(C)]
struct Inner<T> {
    refs: AtomicUsize,
    /// `Some` when the memory is a slot of this arena (see the module's invariants).
    arena: Option<TaskArena>,
    value: T,
}

/// A shared `T` with a reference count, in arena memory when made on a runtime (module
/// comment). Cloning shares; the value is dropped with the last clone.
pub struct ArenaArc<T> {
    ptr: NonNull<Inner<T>>,
    _owns: PhantomData<Inner<T>>,
}

// SAFETY: as `Arc<T>`: clones on several threads share `&T` (needs `T: Sync`) and the last one,
// on any thread, drops the `T` (needs `T: Send`). The count is atomic.
unsafe impl<T: Send + Sync> Send for ArenaArc<T> {}
// SAFETY: as `Arc<T>`: `&ArenaArc<T>` on several threads gives each `&T` (needs `T: Sync`) and
// lets each clone the handle, whose last clone may drop the `T` on any thread (needs
// `T: Send`). The count is atomic.
unsafe impl<T: Send + Sync> Sync for ArenaArc<T> {}

// As `Arc<T>`: the value is never moved by whoever moves the handle, so pinning the handle
// promises nothing about it (tokio's channel handles are `Unpin` for every `T`).
impl<T> Unpin for ArenaArc<T> {}

impl<T> ArenaArc<T> {
    /// The class of the arena that serves an `Inner<T>`, if any (a constant per `T`).
    fn class() -> Option<usize> {
        TaskArena::class_of(Layout::new::<Inner<T>>())
    }

    /// A new value with one reference, written in place by `init` (the value never moves
    /// once made, so it may point into itself).
    ///
    /// # Safety
    /// `init` writes a whole valid `T` at the pointer it is given (which is aligned and valid
    /// for writes of one `T`) before it returns, and does not unwind.
    pub(crate) unsafe fn new_in_place(init: impl FnOnce(*mut T)) -> ArenaArc<T> {
        let layout = Layout::new::<Inner<T>>();
        let arena = match Self::class() {
            Some(_) => crate::runtime::context::current_arena(),
            None => None,
        };
        let mem: NonNull<Inner<T>> = match (&arena, Self::class()) {
            (Some(a), Some(class)) => a.alloc(class).cast(),
            _ => {
                // SAFETY: `Inner<T>` holds a count, so its layout is never zero-sized.
                match NonNull::new(unsafe { std::alloc::alloc(layout) }) {
                    Some(p) => p.cast(),
                    None => std::alloc::handle_alloc_error(layout),
                }
            }
        };
        let p = mem.as_ptr();
        // SAFETY: `mem` is fresh memory for one `Inner<T>` (the arena's slots are 16-aligned
        // and `class_of` serves only alignments up to 16; the global allocator was given the
        // layout). Each field is written once; `init` writes the value (`# Safety`).
        unsafe {
            ptr::addr_of_mut!((*p).refs).write(AtomicUsize::new(1));
            ptr::addr_of_mut!((*p).arena).write(arena);
            init(ptr::addr_of_mut!((*p).value));
        }
        ArenaArc { ptr: mem, _owns: PhantomData }
    }

    /// A new value with one reference.
    pub fn new(value: T) -> ArenaArc<T> {
        // SAFETY: the closure writes the whole value and cannot unwind.
        unsafe { ArenaArc::new_in_place(|p: *mut T| p.write(value)) }
    }

    /// Whether the two share one value.
    pub fn ptr_eq(a: &ArenaArc<T>, b: &ArenaArc<T>) -> bool {
        a.ptr == b.ptr
    }

    /// Whether the value lives in a runtime's arena (tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn in_arena(this: &ArenaArc<T>) -> bool {
        this.inner().arena.is_some()
    }

    fn inner(&self) -> &Inner<T> {
        // SAFETY: this reference keeps the count above zero, so the memory is live and the
        // value initialised (`new_in_place`).
        unsafe { self.ptr.as_ref() }
    }

    /// Drops the value and gives the memory back: the count reached zero.
    #[inline(never)]
    fn drop_slow(&mut self) {
        let p = self.ptr.as_ptr();
        // SAFETY: the count is zero and this thread took it there, so no other reference
        // exists; the fence in `drop` ordered their uses before this. The arena handle is
        // read out (its slot is not dropped again), then the value is dropped in place.
        let arena = unsafe {
            let arena = ptr::read(ptr::addr_of!((*p).arena));
            ptr::drop_in_place(ptr::addr_of_mut!((*p).value));
            arena
        };
        match (arena, Self::class()) {
            // SAFETY: `new_in_place` took the memory from this arena's `class` (the header
            // holds the arena it came from, and the class is `T`'s); nothing uses it again.
            // The handle is dropped after the free, keeping the arena alive until then.
            (Some(a), Some(class)) => unsafe { a.free(self.ptr.cast(), class) },
            // SAFETY: from the global allocator with this layout (no arena in the header).
            _ => unsafe { std::alloc::dealloc(p.cast(), Layout::new::<Inner<T>>()) },
        }
    }
}

impl<T> Clone for ArenaArc<T> {
    #[inline]
    fn clone(&self) -> ArenaArc<T> {
        // Relaxed, as `Arc`'s: a new reference is made from an existing one, which already
        // orders everything the new holder may see.
        if self.inner().refs.fetch_add(1, Relaxed) > MAX_REFS {
            std::process::abort();
        }
        ArenaArc { ptr: self.ptr, _owns: PhantomData }
    }
}

impl<T> Drop for ArenaArc<T> {
    #[inline]
    fn drop(&mut self) {
        // Release: this holder's uses of the value happen before the drop that frees it.
        if self.inner().refs.fetch_sub(1, Release) != 1 {
            return;
        }
        // Acquire: pairs with every other holder's Release decrement.
        fence(Acquire);
        self.drop_slow();
    }
}

impl<T> Deref for ArenaArc<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.inner().value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ArenaArc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    use super::ArenaArc;

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn the_value_is_dropped_once_with_the_last_clone() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = ArenaArc::new(Counted(drops.clone()));
        let b = a.clone();
        assert!(ArenaArc::ptr_eq(&a, &b));
        drop(a);
        assert_eq!(drops.load(SeqCst), 0);
        let t = std::thread::spawn(move || drop(b));
        t.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1);
    }

    #[test]
    fn made_on_a_runtime_it_lives_in_the_arena_and_may_outlive_the_runtime() {
        assert!(!ArenaArc::in_arena(&ArenaArc::new(1u64)), "no runtime here: global allocator");
        let drops = Arc::new(AtomicUsize::new(0));
        let rt = crate::runtime::Builder::new_multi_thread().worker_threads(1).task_arena(true).build().unwrap();
        let kept = rt.block_on(async {
            let here = ArenaArc::new(Counted(drops.clone()));
            assert!(ArenaArc::in_arena(&here));
            let d = drops.clone();
            let there = crate::spawn(async move { ArenaArc::new(Counted(d)) }).await.unwrap();
            assert!(ArenaArc::in_arena(&there));
            drop(here);
            there
        });
        let no_arena = crate::runtime::Builder::new_current_thread().task_arena(false).build().unwrap();
        assert!(!no_arena.block_on(async { ArenaArc::in_arena(&ArenaArc::new(1u64)) }));
        drop(rt);
        // The runtime is gone; its arena is not, while `kept` holds it (memcheck would flag a
        // read of freed memory here).
        assert_eq!(drops.load(SeqCst), 1);
        let other = kept.clone();
        drop(kept);
        drop(other);
        assert_eq!(drops.load(SeqCst), 2);
    }

    #[test]
    fn large_values_use_the_global_allocator() {
        let rt = crate::runtime::Builder::new_current_thread().task_arena(true).build().unwrap();
        rt.block_on(async {
            assert!(ArenaArc::in_arena(&ArenaArc::new([0u8; 512])));
            assert!(!ArenaArc::in_arena(&ArenaArc::new([0u8; 4096])), "over the largest class");
        });
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::ArenaArc;
    use crate::loom::UnsafeCell;

    /// Written by its drop: loom reports the write as a race unless every holder's read is
    /// ordered before it (the Release decrements and the Acquire fence).
    struct Probe(UnsafeCell<usize>);

    impl Drop for Probe {
        fn drop(&mut self) {
            // SAFETY: `&mut self`: the last reference is gone.
            self.0.with_mut(|p| unsafe { *p = 1 });
        }
    }

    fn read(p: &Probe) -> usize {
        // SAFETY: shared reads only, until the drop.
        p.0.with(|v| unsafe { *v })
    }

    #[test]
    fn loom_arena_arc_the_last_drop_follows_every_use() {
        loom::model(|| {
            let a = ArenaArc::new(Probe(UnsafeCell::new(0)));
            let b = a.clone();
            let t = loom::thread::spawn(move || {
                assert_eq!(read(&b), 0);
                drop(b);
            });
            assert_eq!(read(&a), 0);
            drop(a);
            t.join().unwrap();
        });
    }
}
