//! The task arena: a runtime's own slabs of task cells, handed out and taken back in batches
//! by per-thread caches, and freed with the runtime.
//!
//! # Why
//! At a million live tasks the allocator, not the scheduler, set the spawn cost: `perf` on
//! `spawn_outside 1M` (weft-mt, 2 cores) put ~15% of the samples in page faults on fresh heap
//! (`clear_page`, `do_anonymous_page`, memcg charging) and ~8% in `malloc`/`free`; the same
//! binary with glibc's heap on transparent huge pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`)
//! ran the workload in 89–102 ms instead of 205–224 ms. A runtime cannot choose its users'
//! allocator, but it can own the memory of its task cells: this module.
//!
//! # Glossary
//! * **class** — cell sizes rounded up to 16 bytes, from 16 to 1,024 (64 classes); a cell
//!   larger than 1 KiB, or aligned to more than 16, goes to the global allocator.
//! * **slot** — one cell's memory. A free slot holds the link of a singly linked free list.
//! * **chunk** — memory the arena took from the global allocator for one class: 64 KiB for a
//!   class's first, doubling up to 2 MiB; 2 MiB chunks are 2 MiB-aligned and advised to the
//!   kernel as huge-page candidates (`MADV_HUGEPAGE`: one fault and one TLB entry per 2 MiB
//!   instead of 512). Smaller chunks ask for 16-byte alignment only: with page alignment glibc
//!   served them from fresh pages in every new runtime (a current-thread runtime spawning
//!   1,000 tasks: 17 page faults, 133 µs, against 98 µs without the arena; with 16-byte
//!   alignment no fault, 91 µs). Chunks of 128 KiB and more still come from fresh mappings in
//!   each new runtime (glibc maps them; ~350 faults for 10,000 tasks): a runtime that lives
//!   pays them once, the lab's fresh runtime per sample pays them every sample.
//!   Chunks are carved into slots on demand, never returned before the arena goes.
//! * **depot** — per class: the batches handed back by thread caches, a loose list of single
//!   slots, and the unused tail of the newest chunk. One lock for the whole arena.
//! * **thread cache** — per thread, for one arena at a time: a free list per class. A thread
//!   takes a batch (up to 64 slots) from the depot when its list is empty and hands its whole
//!   list back when it reaches 128, so the lock is taken at most once per 64 cells a thread
//!   creates or frees, and a thread that spawns and joins in turn never takes it.
//!
//! # Invariants
//! * A slot is in exactly one place: a live cell, one thread cache's list, or the depot.
//! * A thread cache names its arena by a `Weak`: a cache never hands out a slot to another
//!   arena (the `Weak` keeps the arena's address from being reused while the cache points
//!   at it), and when its arena is gone the cache forgets its slots without reading them
//!   (they were freed with the arena's chunks).
//! * The arena outlives its cells: every cell holds its scheduler handle, which holds the
//!   arena; `harness::dealloc` takes the handle out of the cell, gives the slot back, and only
//!   then drops the handle.
//!
//! # Rejected alternatives
//! * Slots returned to the worker that allocated them (mimalloc's thread-free lists): needs an
//!   owner per chunk and a lock-free remote-free list per owner; with batches of 64 the shared
//!   lock is already off the per-task path (a task spawned on one thread and joined on another
//!   costs 1/64 of a lock on each side).
//! * A global (process-wide) pool: memory would outlive the runtimes that used it, and one
//!   sample of the lab would inherit the previous one's warm pages.
//! * Giving chunks back while the runtime lives: a runtime that once held a million tasks
//!   keeps their ~144 MB until it is dropped (as glibc's heap often does after a peak, through
//!   fragmentation). Returning a chunk needs every slot in it free, which the free lists do not
//!   track; not done.
//! * One lock per class: the depot is touched once per 64 cells per thread, and loom models of
//!   the whole runtime would pay 64 modelled locks per runtime.

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::loom::lock;
use crate::loom::sync::{Arc, Mutex};

/// Sizes are rounded up to a multiple of this, which is also the alignment every slot has.
const GRAIN: usize = 16;
/// The largest cell the arena serves.
const MAX_SLOT: usize = 1024;
const CLASSES: usize = MAX_SLOT / GRAIN;
/// Slots a thread takes from the depot at once; it hands its list back at twice this.
#[cfg_attr(loom, allow(dead_code))] // used by the thread caches and the loom model
const BATCH: usize = 64;
/// A class's first chunk; later ones double up to `HUGE_CHUNK`.
const MIN_CHUNK: usize = 64 << 10;
/// The size (and alignment) of a transparent huge page on x86-64 and most arm64 kernels.
const HUGE_CHUNK: usize = 2 << 20;

/// A free slot's content: the next free slot of its list.
struct Slot {
    next: Option<NonNull<Slot>>,
}

/// A singly linked list of free slots of one class.
struct FreeList {
    head: Option<NonNull<Slot>>,
    tail: Option<NonNull<Slot>>,
    len: usize,
}

// SAFETY: a free list owns its slots exclusively (a slot is in one place only, module
// invariant); moving the list to another thread moves that ownership.
unsafe impl Send for FreeList {}

impl FreeList {
    const EMPTY: FreeList = FreeList { head: None, tail: None, len: 0 };

    /// # Safety
    /// `slot` is a free slot of this list's class, owned by the caller, at least 16 bytes and
    /// 16-aligned.
    unsafe fn push(&mut self, slot: NonNull<Slot>) {
        // SAFETY: the caller owns the slot's memory (this function's `# Safety`).
        unsafe { slot.as_ptr().write(Slot { next: self.head }) };
        if self.head.is_none() {
            self.tail = Some(slot);
        }
        self.head = Some(slot);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<NonNull<Slot>> {
        let slot = self.head?;
        // SAFETY: a slot in the list is free and owned by the list; its link was written by
        // `push` or `carve`.
        self.head = unsafe { slot.as_ref().next };
        self.len -= 1;
        if self.head.is_none() {
            self.tail = None;
        }
        Some(slot)
    }

    /// Moves every slot of `other` onto the end of this list.
    fn append(&mut self, other: FreeList) {
        match self.tail {
            None => *self = other,
            Some(tail) if other.len > 0 => {
                // SAFETY: `tail` is a free slot owned by this list.
                unsafe { (*tail.as_ptr()).next = other.head };
                self.tail = other.tail;
                self.len += other.len;
            }
            Some(_) => {}
        }
    }

    fn take(&mut self) -> FreeList {
        std::mem::replace(self, FreeList::EMPTY)
    }
}

/// One class's shared state.
struct Depot {
    /// Lists handed back whole by thread caches.
    batches: Vec<FreeList>,
    /// Slots freed one at a time (no usable thread cache).
    loose: FreeList,
    /// The unused tail of the newest chunk: `[cursor, end)`.
    cursor: usize,
    end: usize,
    next_chunk: usize,
    chunks: Vec<(NonNull<u8>, Layout)>,
}

// SAFETY: the depot owns its chunks and free slots exclusively; it is only reached through
// the arena's mutex.
unsafe impl Send for Depot {}

impl Depot {
    fn new() -> Depot {
        Depot {
            batches: Vec::new(),
            loose: FreeList::EMPTY,
            cursor: 0,
            end: 0,
            next_chunk: MIN_CHUNK,
            chunks: Vec::new(),
        }
    }

    /// Up to `want` (≥ 1) free slots: a handed-back batch, else the loose list, else new
    /// slots from the newest chunk (a fresh chunk when it has no room for one).
    fn take(&mut self, size: usize, want: usize) -> FreeList {
        if let Some(batch) = self.batches.pop() {
            return batch;
        }
        if self.loose.len > 0 {
            return self.loose.take();
        }
        if self.end - self.cursor < size {
            self.new_chunk();
        }
        let n = want.min((self.end - self.cursor) / size);
        let mut list = FreeList::EMPTY;
        for i in (0..n).rev() {
            let addr = self.cursor + i * size;
            // SAFETY: `[cursor, cursor + n·size)` is unused memory of a chunk this depot owns,
            // 16-aligned (chunks are, sizes are multiples of 16), each slot `size` ≥ 16 bytes.
            unsafe { list.push(NonNull::new_unchecked(addr as *mut Slot)) };
        }
        self.cursor += n * size;
        list
    }

    fn new_chunk(&mut self) {
        let bytes = self.next_chunk;
        self.next_chunk = (bytes * 2).min(HUGE_CHUNK);
        let align = if bytes >= HUGE_CHUNK { HUGE_CHUNK } else { GRAIN };
        let layout = Layout::from_size_align(bytes, align).expect("task arena chunk layout");
        // SAFETY: `layout` has a non-zero size.
        let Some(ptr) = NonNull::new(unsafe { std::alloc::alloc(layout) }) else {
            std::alloc::handle_alloc_error(layout)
        };
        #[cfg(all(target_os = "linux", not(loom)))]
        if bytes >= HUGE_CHUNK {
            // A hint: where the kernel has transparent huge pages in `madvise` mode it backs
            // the chunk with one 2 MiB page at its first touch. Failure changes nothing.
            // SAFETY: `ptr..ptr+bytes` is memory we own; MADV_HUGEPAGE does not change its
            // contents or validity.
            unsafe { libc::madvise(ptr.as_ptr().cast(), bytes, libc::MADV_HUGEPAGE) };
        }
        self.chunks.push((ptr, layout));
        self.cursor = ptr.as_ptr() as usize;
        self.end = self.cursor + bytes;
    }

    #[cfg(all(test, not(loom)))]
    fn owns(&self, addr: usize) -> bool {
        self.chunks.iter().any(|(p, l)| (p.as_ptr() as usize..p.as_ptr() as usize + l.size()).contains(&addr))
    }
}

impl Drop for Depot {
    fn drop(&mut self) {
        for (ptr, layout) in self.chunks.drain(..) {
            // SAFETY: allocated in `new_chunk` with this layout; every slot in it is free (the
            // arena outlives its cells, module invariant), and nothing reads a slot after its
            // arena is gone.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
        }
    }
}

struct Inner {
    depots: Mutex<Box<[Depot]>>,
}

#[cfg_attr(loom, allow(dead_code))] // `take`, `give_back`: the thread caches and the loom model
impl Inner {
    fn take(&self, class: usize, want: usize) -> FreeList {
        lock(&self.depots)[class].take(slot_size(class), want)
    }

    /// # Safety
    /// Every slot in `list` belongs to this arena's `class` and is free.
    unsafe fn give_back(&self, class: usize, list: FreeList) {
        if list.len > 0 {
            lock(&self.depots)[class].batches.push(list);
        }
    }

    fn alloc_one(&self, class: usize) -> NonNull<u8> {
        let mut depots = lock(&self.depots);
        let depot = &mut depots[class];
        if let Some(slot) = depot.loose.pop() {
            return slot.cast();
        }
        let mut list = depot.take(slot_size(class), 1);
        let slot = list.pop().expect("task arena: a depot take returns at least one slot");
        depot.loose.append(list);
        slot.cast()
    }

    /// # Safety
    /// `ptr` is a slot of this arena's `class` that the caller owns and no longer uses.
    unsafe fn free_one(&self, ptr: NonNull<u8>, class: usize) {
        // SAFETY: this function's `# Safety`.
        unsafe { lock(&self.depots)[class].loose.push(ptr.cast()) };
    }
}

fn slot_size(class: usize) -> usize {
    (class + 1) * GRAIN
}

/// A runtime's task arena (see the module comment). Cloning shares it.
#[derive(Clone)]
pub(crate) struct TaskArena {
    inner: Arc<Inner>,
}

impl TaskArena {
    pub(crate) fn new() -> TaskArena {
        let depots: Box<[Depot]> = (0..CLASSES).map(|_| Depot::new()).collect();
        TaskArena { inner: Arc::new(Inner { depots: Mutex::new(depots) }) }
    }

    /// The class of cells of `layout`, or `None` when the arena does not serve it (too large,
    /// or aligned beyond 16): such cells use the global allocator.
    #[inline]
    pub(crate) fn class_of(layout: Layout) -> Option<usize> {
        (layout.size() <= MAX_SLOT && layout.align() <= GRAIN).then(|| layout.size().max(1).div_ceil(GRAIN) - 1)
    }

    /// Memory for one cell of `class` (16-aligned, `(class + 1) · 16` bytes).
    #[inline]
    pub(crate) fn alloc(&self, class: usize) -> NonNull<u8> {
        #[cfg(not(loom))]
        if let Some(ptr) = thread_cache::alloc(&self.inner, class) {
            return ptr;
        }
        self.inner.alloc_one(class)
    }

    /// Takes back a cell's memory.
    ///
    /// # Safety
    /// `ptr` came from `alloc(class)` on this arena (or a clone of it) and is no longer used.
    #[inline]
    pub(crate) unsafe fn free(&self, ptr: NonNull<u8>, class: usize) {
        #[cfg(not(loom))]
        // SAFETY: forwarded from this function's `# Safety`.
        let ptr = match unsafe { thread_cache::free(&self.inner, ptr, class) } {
            None => return,
            Some(ptr) => ptr,
        };
        // SAFETY: forwarded from this function's `# Safety`.
        unsafe { self.inner.free_one(ptr, class) }
    }

    /// Whether `ptr` lies in one of this arena's chunks (tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn owns(&self, ptr: NonNull<u8>) -> bool {
        lock(&self.inner.depots).iter().any(|d| d.owns(ptr.as_ptr() as usize))
    }

    /// Takes up to `BATCH` slots for a caller-held list (the loom model's stand-in for a
    /// thread cache).
    #[cfg(all(test, loom))]
    fn take_batch(&self, class: usize) -> FreeList {
        self.inner.take(class, BATCH)
    }
}

impl std::fmt::Debug for TaskArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskArena").finish_non_exhaustive()
    }
}

/// The per-thread caches (see the module comment). Not under loom: the model drives the depot
/// with explicit lists instead (`loom_tests` below).
#[cfg(not(loom))]
mod thread_cache {
    use std::cell::RefCell;
    use std::ptr::NonNull;

    use crate::loom::sync::{Arc, Weak};

    use super::{FreeList, Inner, BATCH, CLASSES};

    struct ThreadCache {
        arena: Option<Weak<Inner>>,
        lists: [FreeList; CLASSES],
    }

    thread_local! {
        static CACHE: RefCell<ThreadCache> =
            const { RefCell::new(ThreadCache { arena: None, lists: [FreeList::EMPTY; CLASSES] }) };
    }

    impl ThreadCache {
        fn serves(&self, inner: &Arc<Inner>) -> bool {
            self.arena.as_ref().is_some_and(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(inner)))
        }

        /// Hands every list back to the cache's arena if it still exists, else forgets the
        /// slots (their chunks went with the arena).
        fn release(&mut self) {
            let arena = self.arena.take().and_then(|w| w.upgrade());
            for (class, list) in self.lists.iter_mut().enumerate() {
                let list = list.take();
                if let Some(arena) = &arena {
                    // SAFETY: the cache only holds free slots of its arena, per class.
                    unsafe { arena.give_back(class, list) };
                }
            }
        }
    }

    impl Drop for ThreadCache {
        fn drop(&mut self) {
            self.release();
        }
    }

    /// A slot from this thread's cache, switching the cache to `inner` if it served another
    /// arena; `None` when the cache is unusable (thread exit, re-entrance).
    pub(super) fn alloc(inner: &Arc<Inner>, class: usize) -> Option<NonNull<u8>> {
        CACHE
            .try_with(|cache| {
                let mut cache = cache.try_borrow_mut().ok()?;
                if !cache.serves(inner) {
                    cache.release();
                    cache.arena = Some(Arc::downgrade(inner));
                }
                let list = &mut cache.lists[class];
                if list.len == 0 {
                    *list = inner.take(class, BATCH);
                }
                list.pop().map(NonNull::cast)
            })
            .ok()
            .flatten()
    }

    /// Puts a slot in this thread's cache if the cache serves `inner`, handing the list back
    /// to the depot at `2 · BATCH`; gives the slot back (`Some`) otherwise.
    ///
    /// # Safety
    /// As `TaskArena::free`.
    pub(super) unsafe fn free(inner: &Arc<Inner>, ptr: NonNull<u8>, class: usize) -> Option<NonNull<u8>> {
        CACHE
            .try_with(|cache| {
                let mut cache = cache.try_borrow_mut().ok()?;
                if !cache.serves(inner) {
                    return None;
                }
                let list = &mut cache.lists[class];
                // SAFETY: the caller gives up a slot of `inner`'s `class` (`# Safety`).
                unsafe { list.push(ptr.cast()) };
                if list.len >= 2 * BATCH {
                    let full = list.take();
                    // SAFETY: the list holds free slots of `inner`'s `class`.
                    unsafe { inner.give_back(class, full) };
                }
                Some(())
            })
            .ok()
            .flatten()
            .map_or(Some(ptr), |()| None)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::alloc::Layout;
    use std::collections::HashSet;
    use std::ptr::NonNull;

    use super::{TaskArena, BATCH, GRAIN, MAX_SLOT};

    #[test]
    fn classes_round_up_to_sixteen_bytes_and_stop_at_one_kib() {
        let class = |size, align| TaskArena::class_of(Layout::from_size_align(size, align).unwrap());
        assert_eq!(class(1, 1), Some(0));
        assert_eq!(class(16, 8), Some(0));
        assert_eq!(class(17, 8), Some(1));
        assert_eq!(class(136, 8), Some(8));
        assert_eq!(class(MAX_SLOT, 16), Some(MAX_SLOT / GRAIN - 1));
        assert_eq!(class(MAX_SLOT + 1, 8), None);
        assert_eq!(class(64, 32), None, "over-aligned cells use the global allocator");
    }

    /// Slots are distinct, 16-aligned, inside the arena, and writable over their whole size.
    #[test]
    fn slots_are_distinct_aligned_and_owned() {
        let arena = TaskArena::new();
        let mut seen = HashSet::new();
        for class in [0, 8, 63] {
            let size = (class + 1) * GRAIN;
            for _ in 0..3 * BATCH + 5 {
                let p = arena.alloc(class);
                assert_eq!(p.as_ptr() as usize % GRAIN, 0);
                assert!(arena.owns(p));
                // SAFETY: a fresh slot of `size` bytes, ours.
                unsafe { p.as_ptr().write_bytes(0xA5, size) };
                for other in &seen {
                    let (a, b) = (p.as_ptr() as usize, *other);
                    assert!(a + size <= b || b + 16 <= a, "overlapping slots");
                }
                seen.insert(p.as_ptr() as usize);
            }
        }
    }

    /// Freed slots come back before new memory is carved, on this thread and on another.
    #[test]
    fn freed_slots_are_reused_on_any_thread() {
        let arena = TaskArena::new();
        let first: Vec<usize> = (0..4 * BATCH).map(|_| arena.alloc(8).as_ptr() as usize).collect();
        let freed: HashSet<usize> = first.iter().copied().collect();
        // Free them on another thread (its cache hands full lists back to the depot at 2·BATCH,
        // the rest when the thread exits).
        let a2 = arena.clone();
        std::thread::spawn(move || {
            for p in first {
                // SAFETY: each came from `alloc(8)` and is used no more.
                unsafe { a2.free(NonNull::new(p as *mut u8).unwrap(), 8) };
            }
        })
        .join()
        .unwrap();
        // This thread's cache is empty; its next takes are the handed-back batches.
        let again: HashSet<usize> = (0..4 * BATCH).map(|_| arena.alloc(8).as_ptr() as usize).collect();
        assert_eq!(again, freed, "every freed slot is handed out again, and nothing else");
    }

    /// A thread that moves to another arena never hands the old arena's slots out, even when
    /// the old arena is gone.
    #[test]
    fn a_thread_cache_never_mixes_arenas() {
        let a = TaskArena::new();
        let b = TaskArena::new();
        let pa = a.alloc(3); // this thread's cache now holds a's slots
                             // SAFETY: from `a.alloc(3)`, unused.
        unsafe { a.free(pa, 3) };
        let pb = b.alloc(3);
        assert!(b.owns(pb) && !a.owns(pb));
        // SAFETY: from `b.alloc(3)`, unused; freeing into the wrong thread cache is refused
        // (the cache serves b now), so a's slot goes to a's depot.
        unsafe { b.free(pb, 3) };
        let pa2 = a.alloc(3);
        assert!(a.owns(pa2));
        drop(a); // the cache serves a dead arena now
        for _ in 0..2 * BATCH {
            let p = b.alloc(3);
            assert!(b.owns(p), "a slot of a dropped arena was handed out");
        }
    }

    /// Cells too large for the arena, and many live cells of a real runtime, round-trip.
    #[test]
    fn a_runtime_spawns_and_frees_through_the_arena() {
        let rt = crate::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let big = [7u8; 2 * MAX_SLOT];
        let total = rt.block_on(async move {
            let handles: Vec<_> = (0..20_000u64).map(|i| crate::spawn(async move { i })).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            let big = crate::spawn(async move { big.iter().map(|&b| b as u64).sum::<u64>() }).await.unwrap();
            sum + big
        });
        assert_eq!(total, 20_000 * 19_999 / 2 + 7 * 2 * MAX_SLOT as u64);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::{TaskArena, BATCH};
    use crate::loom::thread;

    /// Two threads take batches and single slots and give them back in every interleaving:
    /// no slot is handed to both, and a given-back batch is taken again whole.
    #[test]
    fn loom_arena_batches_and_singles() {
        loom::model(|| {
            let arena = TaskArena::new();
            let a2 = arena.clone();
            let t = thread::spawn(move || {
                let mut batch = a2.take_batch(2);
                let mine = batch.pop().unwrap().as_ptr() as usize;
                // SAFETY: the batch's slots are free slots of class 2 of this arena.
                unsafe { a2.inner.give_back(2, batch) };
                let one = a2.alloc(2);
                // SAFETY: from `alloc(2)`, unused.
                unsafe { a2.free(one, 2) };
                mine
            });
            let single = arena.alloc(2).as_ptr() as usize;
            let mut batch = arena.take_batch(2);
            let mine = t.join().unwrap();
            assert_ne!(single, mine, "one slot handed out twice");
            assert!(batch.len >= 1 && batch.len <= BATCH);
            while let Some(slot) = batch.pop() {
                let slot = slot.as_ptr() as usize;
                assert!(slot != single && slot != mine, "a slot both held and in a batch");
            }
        });
    }
}
