//! The task arena: a runtime's own slabs of task cells, handed out and taken back in batches
//! by per-thread caches, and freed with the runtime.
//!
//! # Why
//! At a million live tasks the allocator, not the scheduler, sets the spawn cost: `perf` on
//! `spawn_outside 1M` puts a large share of the samples in page faults on fresh heap
//! (`clear_page`, `do_anonymous_page`, memcg charging) and in `malloc`/`free`, and the same
//! binary with glibc's heap on transparent huge pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`)
//! runs the workload about twice as fast (docs/notes/performance-figures.md, "Task arena"). A
//! runtime cannot choose its users' allocator, but it can own the memory of its task cells:
//! this module.
//!
//! # Glossary
//! * **class** — cell sizes rounded up to 16 bytes, from 16 to 1,024 (64 classes); a cell
//!   larger than 1 KiB, or aligned to more than 16, goes to the global allocator.
//! * **slot** — one cell's memory. A free slot holds the link of a singly linked free list.
//! * **chunk** — memory the arena took from the global allocator for one class: 64 KiB for a
//!   class's first, doubling up to 2 MiB; 2 MiB chunks are 2 MiB-aligned and advised to the
//!   kernel as huge-page candidates (`MADV_HUGEPAGE`: one fault and one TLB entry per 2 MiB
//!   instead of 512). Smaller chunks ask for 16-byte alignment only: with page alignment glibc
//!   serves them from fresh pages in every new runtime, so a short-lived runtime's first
//!   spawns page-fault and cost more than without the arena (docs/notes/performance-figures.md,
//!   "Task arena"). Chunks of 128 KiB and more still come from fresh mappings in each new
//!   runtime (glibc maps them): a runtime that lives pays those faults once, the lab's fresh
//!   runtime per sample pays them every sample.
//!   Chunks are carved into slots on demand. 2 MiB chunks are mapped with `mmap` directly and
//!   given back with `munmap` by a trim (below); smaller ones (under 2 MiB per class in all)
//!   stay until the arena goes.
//! * **depot** — per class: the batches handed back by thread caches, a loose list of single
//!   slots, and the unused tail of the newest chunk. One lock for the whole arena.
//! * **trim** — after a burst, the 2 MiB chunks whose every slot is free go back to the system
//!   (`TaskArena::trim_if_due`, called by a worker about to park: the runtime is idle then).
//!   The depot's free slots of a class are taken out under the lock, counted per chunk without
//!   it (a slot's chunk is its address rounded down to 2 MiB), and the slots of chunks that
//!   are not wholly free are put back, in batches. Due when the depot holds `TRIM_STEP` more
//!   free bytes than after the last trim: the free pool grows only when live tasks shrink, so a
//!   runtime in a steady state never trims, and one that trims finds ≥ 4 MiB to look at.
//! * **thread cache** — per thread, for one arena at a time: a free list per class. A thread
//!   takes a batch (up to 64 slots) from the depot when its list is empty and hands its whole
//!   list back when it reaches 128, so the lock is taken at most once per 64 cells a thread
//!   creates or frees, and a thread that spawns and joins in turn never takes it.
//!
//! # Invariants
//! * A slot is in exactly one place: a live cell, one thread cache's list, the depot, or the
//!   list a trim has taken out of the depot.
//! * A trim unmaps a chunk only if every slot carved from it is in the list it took out, and,
//!   for the chunk still being carved, only if no slot was carved since it took the list.
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
//! * A live count per chunk, kept by every alloc and free, to return a chunk the moment it
//!   empties: a shared counter touched per spawn and per completion, on the path the thread
//!   caches exist to keep free of shared writes. The trim counts instead, rarely, off that path.
//! * Keeping 2 MiB chunks in the global allocator: glibc maps the first ones, but raises its
//!   mmap threshold when one is freed, and serves the next from its heap, from which a freed
//!   chunk in the middle does not go back; `mmap`/`munmap` return them for sure.
//! * Trimming on a timer thread: the runtime has one only with the monitor on; a worker about
//!   to park is idle by definition, and every flavour parks.
//! * One lock per class: the depot is touched once per 64 cells per thread, and loom models of
//!   the whole runtime would pay 64 modelled locks per runtime.

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
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
/// A trim is due when the depots hold this many more free bytes than after the last trim.
const TRIM_STEP: usize = 4 << 20;
/// The smallest trim step: after a trim that left chunks partly free, the next is due once
/// the emptiest of them could be free (its missing bytes), but not for less than this.
const MIN_TRIM_STEP: usize = 256 << 10;
/// Trims with a step under `TRIM_STEP` are at least this far apart.
const MIN_TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);
/// A huge chunk missing at most this many free slots counts as pinned by thread caches.
const NEARLY_FREE_MISSING: usize = 4 * BATCH;

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
    chunks: Vec<Chunk>,
    /// Slots in `batches` and `loose`.
    free_slots: usize,
}

/// Memory the arena took for one class.
struct Chunk {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl Chunk {
    fn start(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Maps a 2 MiB-aligned huge chunk (`mmap`), or allocates a smaller one.
    fn new(bytes: usize) -> Chunk {
        let align = if bytes >= HUGE_CHUNK { HUGE_CHUNK } else { GRAIN };
        let layout = Layout::from_size_align(bytes, align).expect("task arena chunk layout");
        #[cfg(all(target_os = "linux", not(loom)))]
        if bytes >= HUGE_CHUNK {
            return Chunk { ptr: map_aligned(bytes), layout };
        }
        // SAFETY: `layout` has a non-zero size.
        let Some(ptr) = NonNull::new(unsafe { std::alloc::alloc(layout) }) else {
            std::alloc::handle_alloc_error(layout)
        };
        Chunk { ptr, layout }
    }

    /// Gives the chunk's memory back.
    ///
    /// # Safety
    /// No slot of the chunk is used or listed anywhere any more.
    unsafe fn release(self) {
        #[cfg(all(target_os = "linux", not(loom)))]
        if self.layout.size() >= HUGE_CHUNK {
            // SAFETY: mapped by `map_aligned` with this size; nothing refers to it (`# Safety`).
            let rc = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.layout.size()) };
            debug_assert_eq!(rc, 0, "munmap of a task arena chunk failed");
            return;
        }
        // SAFETY: allocated in `Chunk::new` with this layout; unused (`# Safety`).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// `bytes` (a multiple of `HUGE_CHUNK`) of fresh memory aligned to `HUGE_CHUNK`: maps twice
/// that minus a page and unmaps the unaligned ends, then advises huge pages (a hint: where the
/// kernel has transparent huge pages in `madvise` mode, one 2 MiB page backs the chunk at its
/// first touch; failure changes nothing).
#[cfg(all(target_os = "linux", not(loom)))]
fn map_aligned(bytes: usize) -> NonNull<u8> {
    let span = bytes + HUGE_CHUNK;
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(Layout::from_size_align(bytes, HUGE_CHUNK).expect("chunk layout"));
    }
    let base = raw as usize;
    let start = (base + HUGE_CHUNK - 1) & !(HUGE_CHUNK - 1);
    let (head, tail) = (start - base, base + span - (start + bytes));
    // SAFETY: `[base, start)` and `[start + bytes, base + span)` are parts of the mapping just
    // made that nothing uses; unmapping them leaves `[start, start + bytes)` mapped.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((start + bytes) as *mut libc::c_void, tail);
        }
        libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
    }
    // SAFETY: `start` lies inside a successful mapping, so it is not null.
    unsafe { NonNull::new_unchecked(start as *mut u8) }
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
            free_slots: 0,
        }
    }

    /// Up to `want` (≥ 1) free slots: a handed-back batch, else the loose list, else new
    /// slots from the newest chunk (a fresh chunk when it has no room for one).
    fn take(&mut self, size: usize, want: usize) -> FreeList {
        if let Some(batch) = self.batches.pop() {
            self.free_slots -= batch.len;
            return batch;
        }
        if self.loose.len > 0 {
            self.free_slots -= self.loose.len;
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
        let chunk = Chunk::new(bytes);
        self.cursor = chunk.start();
        self.end = self.cursor + bytes;
        self.chunks.push(chunk);
    }

    fn put_back(&mut self, list: FreeList) {
        self.free_slots += list.len;
        self.batches.push(list);
    }

    fn chunk_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.layout.size()).sum()
    }

    #[cfg(all(test, not(loom)))]
    fn owns(&self, addr: usize) -> bool {
        self.chunks.iter().any(|c| (c.start()..c.start() + c.layout.size()).contains(&addr))
    }
}

impl Drop for Depot {
    fn drop(&mut self) {
        for chunk in self.chunks.drain(..) {
            // SAFETY: every slot is free (the arena outlives its cells, module invariant), and
            // nothing reads a slot after its arena is gone.
            unsafe { chunk.release() };
        }
    }
}

struct Inner {
    depots: Mutex<Box<[Depot]>>,
    /// Bytes of free slots in the depots (written under `depots`, read without it).
    free_bytes: AtomicUsize,
    /// `free_bytes` after the last trim, lowered whenever `free_bytes` goes below it: a trim is
    /// due at `TRIM_STEP` above it.
    trim_floor: AtomicUsize,
    /// Bytes of chunks held (written under `depots`; `TaskArena::retained_bytes`).
    chunk_bytes: AtomicUsize,
    /// A trim is under way (one at a time).
    trimming: AtomicBool,
    /// Huge chunks the last trim found free but for a few slots (`NEARLY_FREE_MISSING`),
    /// likely held in idle threads' caches: idle threads then flush their caches.
    pinned: AtomicUsize,
    /// A flush handed slots back since the last trim while chunks were pinned: a trim is due.
    flushed: AtomicBool,
    /// Free bytes above `trim_floor` that make a trim due (`MIN_TRIM_STEP..=TRIM_STEP`).
    step: AtomicUsize,
    last_trim: Mutex<Option<std::time::Instant>>,
}

#[cfg_attr(loom, allow(dead_code))] // `take`, `give_back`: the thread caches and the loom model
impl Inner {
    fn take(&self, class: usize, want: usize) -> FreeList {
        self.take_locked(&mut lock(&self.depots), class, want)
    }

    /// `Depot::take` with the arena's counters kept (the caller holds the lock).
    fn take_locked(&self, depots: &mut [Depot], class: usize, want: usize) -> FreeList {
        let before = depots[class].chunks.len();
        let list = depots[class].take(slot_size(class), want);
        if depots[class].chunks.len() != before {
            self.chunk_bytes.store(depots.iter().map(Depot::chunk_bytes).sum(), Relaxed);
        }
        self.sub_free(list.len * slot_size(class));
        list
    }

    /// # Safety
    /// Every slot in `list` belongs to this arena's `class` and is free.
    unsafe fn give_back(&self, class: usize, list: FreeList) {
        if list.len > 0 {
            self.put_back_locked(&mut lock(&self.depots), class, list);
        }
    }

    /// Puts free slots of `class` back in its depot, counted (the caller holds the lock).
    fn put_back_locked(&self, depots: &mut [Depot], class: usize, list: FreeList) {
        self.free_bytes.fetch_add(list.len * slot_size(class), Relaxed);
        depots[class].put_back(list);
    }

    /// Counts `bytes` of free slots leaving the depots (lock held), lowering the trim floor
    /// with them.
    fn sub_free(&self, bytes: usize) {
        let free = self.free_bytes.load(Relaxed).saturating_sub(bytes);
        self.free_bytes.store(free, Relaxed);
        self.trim_floor.fetch_min(free, Relaxed);
    }

    /// The depot's single slot, when the thread cache cannot serve (out of line, as `free_one`:
    /// inlined, it made `TaskArena::alloc` save six registers on every call).
    #[cold]
    #[inline(never)]
    fn alloc_one(&self, class: usize) -> NonNull<u8> {
        let mut depots = lock(&self.depots);
        let depot = &mut depots[class];
        if let Some(slot) = depot.loose.pop() {
            depot.free_slots -= 1;
            self.sub_free(slot_size(class));
            return slot.cast();
        }
        let mut list = self.take_locked(&mut depots, class, 1);
        let slot = list.pop().expect("task arena: a depot take returns at least one slot");
        if list.len > 0 {
            self.put_back_locked(&mut depots, class, list);
        }
        slot.cast()
    }

    /// # Safety
    /// `ptr` is a slot of this arena's `class` that the caller owns and no longer uses.
    #[cold]
    #[inline(never)]
    unsafe fn free_one(&self, ptr: NonNull<u8>, class: usize) {
        let mut depots = lock(&self.depots);
        let depot = &mut depots[class];
        // SAFETY: this function's `# Safety`.
        unsafe { depot.loose.push(ptr.cast()) };
        depot.free_slots += 1;
        self.free_bytes.fetch_add(slot_size(class), Relaxed);
    }

    /// Gives back every 2 MiB chunk of `class` whose slots are all free in the depot (see the
    /// module comment); returns the bytes given back.
    fn trim_class(&self, class: usize) -> (usize, usize, usize) {
        let size = slot_size(class);
        // 1. Under the lock: take the free slots out, note each huge chunk's carved slots.
        let (taken, mut chunks, cursor, end) = {
            let mut depots = lock(&self.depots);
            let depot = &mut depots[class];
            if depot.free_slots == 0 || !depot.chunks.iter().any(|c| c.layout.size() == HUGE_CHUNK) {
                return (0, 0, usize::MAX);
            }
            let mut taken = depot.loose.take();
            for batch in depot.batches.drain(..) {
                taken.append(batch);
            }
            depot.free_slots = 0;
            self.sub_free(taken.len * size);
            let (cursor, end) = (depot.cursor, depot.end);
            // (chunk start, slots carved from it, free slots seen)
            let chunks: Vec<(usize, usize, usize)> = depot
                .chunks
                .iter()
                .filter(|c| c.layout.size() == HUGE_CHUNK)
                .map(|c| {
                    let carving = end == c.start() + HUGE_CHUNK;
                    let carved = if carving { (cursor - c.start()) / size } else { HUGE_CHUNK / size };
                    (c.start(), carved, 0)
                })
                .collect();
            (taken, chunks, cursor, end)
        };
        // 2. Without it: count the free slots per huge chunk (sorted by start, searched).
        chunks.sort_unstable_by_key(|c| c.0);
        let find = |chunks: &[(usize, usize, usize)], addr: usize| {
            chunks.binary_search_by_key(&(addr & !(HUGE_CHUNK - 1)), |c| c.0).ok()
        };
        let mut at = taken.head;
        while let Some(slot) = at {
            if let Some(i) = find(&chunks, slot.as_ptr() as usize) {
                chunks[i].2 += 1;
            }
            // SAFETY: the slot is free and in `taken`, which this trim owns.
            at = unsafe { slot.as_ref().next };
        }
        let empty = |c: &(usize, usize, usize)| c.2 == c.1 && c.1 > 0;
        let pinned = chunks.iter().filter(|c| c.2 < c.1 && c.2 + NEARLY_FREE_MISSING >= c.1).count();
        // The bytes still held in the emptiest chunk that is at least half free: once that
        // much more went free, another trim may give it back.
        let missing = chunks.iter().filter(|c| c.2 < c.1 && 2 * c.2 >= c.1).map(|c| (c.1 - c.2) * size).min();
        let missing = missing.unwrap_or(usize::MAX);
        if !chunks.iter().any(empty) {
            self.put_back_locked(&mut lock(&self.depots), class, taken);
            return (0, pinned, missing);
        }
        // 3. Keep the slots of chunks that are not wholly free, in batches; those of the chunk
        // being carved aside (step 4 frees them with it, or puts them back).
        let carving_start = end.wrapping_sub(HUGE_CHUNK);
        let mut keep: Vec<FreeList> = Vec::new();
        let (mut current, mut carve_slots) = (FreeList::EMPTY, FreeList::EMPTY);
        let mut taken = taken;
        while let Some(slot) = taken.pop() {
            let addr = slot.as_ptr() as usize;
            match find(&chunks, addr) {
                // SAFETY: a free slot of this class that the trim owns.
                Some(i) if empty(&chunks[i]) && chunks[i].0 == carving_start => unsafe { carve_slots.push(slot) },
                Some(i) if empty(&chunks[i]) => {}
                _ => {
                    // SAFETY: a free slot of this class, popped from `taken`, which this trim
                    // owns (the depot's lists were taken in step 1); slots of the class are
                    // 16-aligned and at least 16 bytes.
                    unsafe { current.push(slot) };
                    if current.len == BATCH {
                        keep.push(current.take());
                    }
                }
            }
        }
        keep.push(current);
        // 4. Under the lock: unlink the empty chunks (the one being carved only if nothing was
        // carved from it meanwhile), put the rest back.
        let mut released = Vec::new();
        {
            let mut guard = lock(&self.depots);
            let depots = &mut *guard;
            let depot = &mut depots[class];
            let untouched = depot.cursor == cursor;
            let mut i = 0;
            while i < depot.chunks.len() {
                let c = &depot.chunks[i];
                let is_empty =
                    c.layout.size() == HUGE_CHUNK && find(&chunks, c.start()).is_some_and(|j| empty(&chunks[j]));
                let carving = c.start() == carving_start;
                if is_empty && (!carving || untouched) {
                    if carving {
                        depot.cursor = 0;
                        depot.end = 0;
                        carve_slots = FreeList::EMPTY;
                    }
                    released.push(depot.chunks.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            // Carved from since step 1 (or not empty): its free slots go back with the rest.
            keep.push(carve_slots);
            for list in keep {
                if list.len > 0 {
                    self.put_back_locked(depots, class, list);
                }
            }
            self.chunk_bytes.store(depots.iter().map(Depot::chunk_bytes).sum(), Relaxed);
        }
        let bytes = released.len() * HUGE_CHUNK;
        for chunk in released {
            // SAFETY: every slot carved from it was in `taken` (counted), and none was carved
            // since (checked just above): none is live, cached or listed.
            unsafe { chunk.release() };
        }
        (bytes, pinned, missing)
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
        TaskArena {
            inner: Arc::new(Inner {
                depots: Mutex::new(depots),
                free_bytes: AtomicUsize::new(0),
                trim_floor: AtomicUsize::new(0),
                chunk_bytes: AtomicUsize::new(0),
                trimming: AtomicBool::new(false),
                pinned: AtomicUsize::new(0),
                flushed: AtomicBool::new(false),
                step: AtomicUsize::new(TRIM_STEP),
                last_trim: Mutex::new(None),
            }),
        }
    }

    /// Bytes of memory the arena holds from the system (live cells and free slots alike).
    pub(crate) fn retained_bytes(&self) -> usize {
        self.inner.chunk_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Called by a thread going idle (a worker about to park, a `block_on` future waiting):
    /// gives task memory back if enough went free (module comment, "trim"). While the last
    /// trim found chunks pinned by a few cached slots, or when `leaving` (a `block_on`
    /// returning: its thread may not come back), the thread first hands its cache back, and a
    /// trim is then due. Returns true when this call's trim found pinned chunks after a burst
    /// or on leaving: the caller then wakes the other idle workers once, so that they flush too
    /// (their own trims wake nobody, so this ends).
    pub(crate) fn on_idle(&self, leaving: bool) -> bool {
        let inner = &self.inner;
        let pinned = inner.pinned.load(Relaxed) > 0;
        #[cfg(not(loom))]
        if (pinned || leaving) && thread_cache::flush(inner) {
            inner.flushed.store(true, Relaxed);
        }
        let step = inner.step.load(Relaxed);
        let burst = inner.free_bytes.load(Relaxed) >= inner.trim_floor.load(Relaxed).saturating_add(step);
        let flushed = (pinned || leaving) && inner.flushed.swap(false, Relaxed);
        if !burst && !flushed {
            return false;
        }
        // Small steps (a drain in progress) at most every `MIN_TRIM_INTERVAL`.
        if !flushed && step < TRIM_STEP && lock(&inner.last_trim).is_some_and(|t| t.elapsed() < MIN_TRIM_INTERVAL) {
            return false;
        }
        self.trim();
        (burst || leaving) && inner.pinned.load(Relaxed) > 0
    }

    /// Trims now: hands this thread's cache back and gives back every wholly free huge chunk
    /// (module comment). Returns the bytes given back.
    pub(crate) fn trim(&self) -> usize {
        let inner = &self.inner;
        if inner.trimming.swap(true, Acquire) {
            return 0;
        }
        #[cfg(not(loom))]
        thread_cache::flush(inner);
        let (mut released, mut pinned, mut missing) = (0, 0, usize::MAX);
        for class in 0..CLASSES {
            let (bytes, p, m) = inner.trim_class(class);
            released += bytes;
            pinned += p;
            missing = missing.min(m);
        }
        inner.pinned.store(pinned, Relaxed);
        inner.step.store(missing.clamp(MIN_TRIM_STEP, TRIM_STEP), Relaxed);
        *lock(&inner.last_trim) = Some(std::time::Instant::now());
        inner.trim_floor.store(inner.free_bytes.load(Relaxed), Relaxed);
        inner.trimming.store(false, Release);
        released
    }

    /// The class of cells of `layout`, or `None` when the arena does not serve it (too large,
    /// or aligned beyond 16): such cells use the global allocator.
    #[inline]
    pub(crate) fn class_of(layout: Layout) -> Option<usize> {
        (layout.size() <= MAX_SLOT && layout.align() <= GRAIN).then(|| layout.size().max(1).div_ceil(GRAIN) - 1)
    }

    /// Memory for one cell of `class` (16-aligned, `(class + 1) · 16` bytes).
    ///
    /// Never inline, and `free` neither: both are called from generic code instantiated in
    /// the user's crate, and with the thread cache's fast path inline in them they grew those
    /// callers enough to change LLVM's inlining there (`weft-lab micro`'s `mpsc_uncontended`:
    /// the `send` future's drop goes out of line, which costs every message).
    #[inline(never)]
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
    #[inline(never)]
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

    /// Hands this thread's cached slots back to `inner`'s depots if the cache serves it (a trim
    /// can then count them as free); true if it held any.
    pub(super) fn flush(inner: &Arc<Inner>) -> bool {
        CACHE
            .try_with(|cache| {
                let Ok(mut cache) = cache.try_borrow_mut() else { return false };
                if !cache.serves(inner) {
                    return false;
                }
                let mut any = false;
                for (class, list) in cache.lists.iter_mut().enumerate() {
                    let list = list.take();
                    any |= list.len > 0;
                    // SAFETY: the cache only holds free slots of its arena, per class.
                    unsafe { inner.give_back(class, list) };
                }
                any
            })
            .unwrap_or(false)
    }

    /// A slot from this thread's cache, switching the cache to `inner` if it served another
    /// arena; `None` when the cache is unusable (thread exit, re-entrance).
    ///
    /// The common case (the cache serves `inner` and holds a slot of the class) here, the
    /// rest out of line (`alloc_slow`, and the depot's `alloc_one`, cold): with the depot
    /// code inline, every call saves and restores six registers, and every actor spawn makes
    /// and frees three slots (task, mailbox, cell; docs/notes/performance-figures.md).
    #[inline]
    pub(super) fn alloc(inner: &Arc<Inner>, class: usize) -> Option<NonNull<u8>> {
        let hit = CACHE.try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if !cache.serves(inner) {
                return None;
            }
            cache.lists[class].pop()
        });
        match hit {
            Ok(Some(slot)) => Some(slot.cast()),
            _ => alloc_slow(inner, class),
        }
    }

    #[inline(never)]
    fn alloc_slow(inner: &Arc<Inner>, class: usize) -> Option<NonNull<u8>> {
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
    /// to the depot at `2 · BATCH`; gives the slot back (`Some`) otherwise. Inline up to the
    /// hand-back, as `alloc`.
    ///
    /// # Safety
    /// As `TaskArena::free`.
    #[inline]
    pub(super) unsafe fn free(inner: &Arc<Inner>, ptr: NonNull<u8>, class: usize) -> Option<NonNull<u8>> {
        let full = CACHE.try_with(|cache| {
            let mut cache = cache.try_borrow_mut().ok()?;
            if !cache.serves(inner) {
                return None;
            }
            let list = &mut cache.lists[class];
            // SAFETY: the caller gives up a slot of `inner`'s `class` (`# Safety`).
            unsafe { list.push(ptr.cast()) };
            Some((list.len >= 2 * BATCH).then(|| list.take()))
        });
        match full {
            Ok(Some(None)) => None,
            Ok(Some(Some(full))) => {
                give_back_full(inner, class, full);
                None
            }
            _ => Some(ptr),
        }
    }

    #[inline(never)]
    fn give_back_full(inner: &Arc<Inner>, class: usize, full: FreeList) {
        // SAFETY: the list holds free slots of `inner`'s `class`, taken from this thread's cache.
        unsafe { inner.give_back(class, full) };
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

    /// After a burst, a trim gives back every 2 MiB chunk whose slots are all free, keeps the
    /// chunk of a slot still live (and the slot untouched), and later allocations still work.
    #[test]
    fn trim_gives_back_wholly_free_huge_chunks_only() {
        let arena = TaskArena::new();
        let class = 12; // 208-byte slots
        let size = (class + 1) * GRAIN;
        let n = 40 * super::HUGE_CHUNK / size; // ~40 huge chunks beyond the small ones
        let slots: Vec<NonNull<u8>> = (0..n).map(|_| arena.alloc(class)).collect();
        let peak = arena.retained_bytes();
        assert!(peak >= 40 * super::HUGE_CHUNK, "peak {peak}");
        // Keep one slot in the middle alive, with a pattern in it.
        let kept = slots[n / 2];
        // SAFETY: a live slot of `size` bytes, ours.
        unsafe { kept.as_ptr().write_bytes(0x5A, size) };
        for &p in slots.iter().filter(|&&p| p != kept) {
            // SAFETY: from `alloc(class)`, unused from here on.
            unsafe { arena.free(p, class) };
        }
        let before = arena.retained_bytes();
        arena.on_idle(false);
        assert!(arena.retained_bytes() < before, "a trim is due after ~40 MiB went free");
        let after = arena.retained_bytes();
        assert!(after <= 2 * super::HUGE_CHUNK + super::HUGE_CHUNK, "retained {after} of {peak} after the trim");
        assert!(arena.owns(kept), "the live slot's chunk was given back");
        // SAFETY: the live slot is still ours and still mapped.
        assert!(unsafe { std::slice::from_raw_parts(kept.as_ptr(), size) }.iter().all(|&b| b == 0x5A));
        assert!(!arena.on_idle(false) && arena.retained_bytes() == after, "nothing more went free: no trim is due");
        // The arena serves a second burst, from kept free slots and new chunks.
        let again: Vec<NonNull<u8>> = (0..n).map(|_| arena.alloc(class)).collect();
        let distinct: HashSet<usize> = again.iter().map(|p| p.as_ptr() as usize).collect();
        assert_eq!(distinct.len(), n);
        assert!(!distinct.contains(&(kept.as_ptr() as usize)), "the live slot was handed out again");
        for p in again {
            assert!(arena.owns(p));
            // SAFETY: a fresh slot of `size` bytes, ours.
            unsafe { p.as_ptr().write_bytes(0xA5, size) };
            // SAFETY: from `alloc(class)`, unused from here on.
            unsafe { arena.free(p, class) };
        }
        // SAFETY: from `alloc(class)`, unused from here on.
        unsafe { arena.free(kept, class) };
        arena.trim();
        assert!(
            arena.retained_bytes() <= 2 * super::HUGE_CHUNK,
            "retained {} when all is free",
            arena.retained_bytes()
        );
    }

    /// A runtime's arena falls back to a few MiB after a burst of 200,000 parked tasks ends,
    /// on both flavours (the trim runs when a worker goes idle), as the metric shows.
    #[test]
    fn a_runtime_gives_a_burst_of_task_memory_back_when_idle() {
        for rt in [
            crate::runtime::Builder::new_multi_thread().worker_threads(2).enable_time().build().unwrap(),
            crate::runtime::Builder::new_current_thread().enable_time().build().unwrap(),
        ] {
            let metrics = rt.metrics();
            let peak = rt.block_on(async {
                let mut senders = Vec::new();
                let mut handles = Vec::new();
                for i in 0..200_000u64 {
                    let (tx, rx) = crate::sync::oneshot::channel::<u64>();
                    senders.push(tx);
                    handles.push(crate::spawn(async move { rx.await.unwrap() + i }));
                }
                crate::task::yield_now().await;
                let peak = crate::runtime::Handle::current().metrics().task_arena_retained_bytes();
                for (i, tx) in senders.into_iter().enumerate() {
                    tx.send(i as u64).unwrap();
                }
                for (i, h) in handles.into_iter().enumerate() {
                    assert_eq!(h.await.unwrap(), 2 * i as u64);
                }
                peak
            });
            assert!(peak > 16 << 20, "peak {peak}: 200,000 tasks should take tens of MiB");
            // Idle now: the workers park and trim (the current-thread one parks in block_on).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let mut retained = metrics.task_arena_retained_bytes();
            while retained > 4 << 20 && std::time::Instant::now() < deadline {
                rt.block_on(async { crate::time::sleep(std::time::Duration::from_millis(10)).await });
                retained = metrics.task_arena_retained_bytes();
            }
            assert!(retained <= 4 << 20, "retained {retained} of a {peak}-byte peak");
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
