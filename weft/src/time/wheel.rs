//! The hierarchical timer wheel: 6 levels × 64 slots, 1 µs per tick at level 0.
//!
//! Level `l` slot `s` covers ticks `[s·64^l, (s+1)·64^l)` within the level's current window of
//! `64^(l+1)` ticks, so the wheel spans 64^6 µs ≈ 19 hours; later deadlines are clamped to
//! the last slot it can tell apart (`reach`) and re-inserted when it comes round (they never
//! fire early).
//!
//! Why 1 µs and not tokio's 1 ms: with the I/O driver waiting with nanosecond timeouts
//! (`runtime/io/epoll.rs`), the tick is what bounds timer lateness; 1 ms ticks would make every
//! sleep late by half a tick on average. The price is one more level of cascading for a given
//! duration (a 1 ms sleep sits on level 1 and cascades once, 0–64 µs before it fires).
//!
//! An entry goes in the lowest level whose window, aligned at the current `elapsed` tick,
//! contains its deadline (`level_for`). Inserting and removing are O(1): the entry records
//! the (level, slot) it sits in, each slot is an intrusive doubly linked list, and each level
//! keeps a 64-bit occupancy mask. Advancing finds the next occupied slot with one
//! `trailing_zeros` per level; when a higher-level slot comes due, its entries cascade into
//! lower levels (or fire, if their deadline has passed).
//!
//! Every method runs under the time driver's lock; entries are owned by `Sleep`s (pinned) and
//! only linked here. Architecture Invariant: an entry is in at most one slot list, and its
//! recorded (level, slot) is the list it is in whenever `linked` is true.

use std::ptr::NonNull;

use super::entry::TimerShared;

const LEVELS: usize = 6;
const SLOTS: usize = 64;
const SLOT_BITS: u32 = 6;
/// First tick the wheel cannot represent relative to `elapsed`.
pub(crate) const MAX_SPAN: u64 = 1 << (SLOT_BITS as u64 * LEVELS as u64);

pub(crate) struct Wheel {
    /// Ticks processed so far: every entry with `when <= elapsed` has been fired.
    elapsed: u64,
    levels: Box<[Level; LEVELS]>,
}

struct Level {
    occupied: u64,
    slots: [List; SLOTS],
}

#[derive(Clone, Copy)]
struct List {
    head: Option<NonNull<TimerShared>>,
}

/// A slot that is due at `deadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expiration {
    level: usize,
    slot: usize,
    pub(crate) deadline: u64,
}

// SAFETY: the wheel only holds pointers to entries, which are accessed under the driver lock
// that also guards the wheel.
unsafe impl Send for Wheel {}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        let level = || Level { occupied: 0, slots: [List { head: None }; SLOTS] };
        Wheel { elapsed: 0, levels: Box::new([level(), level(), level(), level(), level(), level()]) }
    }

    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Links `entry` for tick `when`. Returns `Err(())` if `when` has already passed (the
    /// caller fires it instead).
    ///
    /// # Safety
    /// `entry` is live, pinned, not linked, and stays so until `remove` or it fires.
    pub(crate) unsafe fn insert(&mut self, entry: NonNull<TimerShared>, when: u64) -> Result<(), ()> {
        if when <= self.elapsed {
            return Err(());
        }
        // Deadlines beyond the wheel's reach sit in the last slot it can tell apart and are
        // re-inserted when it comes due (the entry keeps its real deadline). That reach ends
        // just before the current top-level slot comes round again: a position there would
        // share the current slot's index and read as due now, and re-inserting it from the
        // due slot would put it straight back — an endless loop (tokio's test
        // `long_wait_sleep_does_not_corrupt_wheel` found it).
        let pos = when.min(reach(self.elapsed));
        let level = level_for(self.elapsed, pos);
        let slot = slot_for(pos, level);
        // SAFETY: `insert`'s `# Safety`: `entry` is live and pinned; its wheel fields are guarded
        // by the driver lock, which every wheel method runs under.
        let e = unsafe { entry.as_ref() };
        // SAFETY: `entry` is live and we run under the driver lock, which `set_position` requires.
        unsafe { e.set_position(when, level as u8, slot as u8) };
        let lvl = &mut self.levels[level];
        // SAFETY: list nodes are live linked entries (invariant above).
        unsafe { lvl.slots[slot].push_front(entry) };
        lvl.occupied |= 1 << slot;
        Ok(())
    }

    /// Unlinks `entry` if it is linked.
    ///
    /// # Safety
    /// `entry` is live; called under the driver lock.
    pub(crate) unsafe fn remove(&mut self, entry: NonNull<TimerShared>) {
        // SAFETY: `remove`'s `# Safety`: `entry` is live.
        let e = unsafe { entry.as_ref() };
        // SAFETY: fields guarded by the driver lock, which the caller holds.
        let Some((level, slot)) = (unsafe { e.position() }) else { return };
        let (level, slot) = (level as usize, slot as usize);
        let lvl = &mut self.levels[level];
        // SAFETY: the entry is in exactly this list (invariant above).
        unsafe { lvl.slots[slot].remove(entry) };
        if lvl.slots[slot].head.is_none() {
            lvl.occupied &= !(1 << slot);
        }
    }

    /// The earliest slot that comes due, if any entry is linked.
    pub(crate) fn next_expiration(&self) -> Option<Expiration> {
        (0..LEVELS).find_map(|level| self.levels[level].next_expiration(level, self.elapsed))
    }

    /// Advances to `now`, calling `fire` for every entry whose filed tick is `<= now` (already
    /// unlinked when `fire` sees it). Entries in due higher-level slots that are not yet due
    /// cascade to lower levels. `fire` returns `Some(tick)` when the entry's owner moved its
    /// deadline later (`TimerShared::extend`): the entry is filed again under that tick.
    pub(crate) fn advance(&mut self, now: u64, mut fire: impl FnMut(NonNull<TimerShared>) -> Option<u64>) {
        while let Some(exp) = self.next_expiration() {
            if exp.deadline > now {
                break;
            }
            let mut list = std::mem::replace(&mut self.levels[exp.level].slots[exp.slot], List { head: None });
            self.levels[exp.level].occupied &= !(1 << exp.slot);
            self.elapsed = self.elapsed.max(exp.deadline);
            // A level-0 slot is one tick: its entries share a deadline, fire in any order. A
            // higher slot spans many ticks, and a late advance may find several of its entries
            // already due: those fire sorted by deadline (a slot list is in insertion order).
            let mut due: Vec<(u64, NonNull<TimerShared>)> = Vec::new();
            // SAFETY: the detached list holds live entries; we relink or fire each.
            while let Some(entry) = unsafe { list.pop_front() } {
                // SAFETY: live entry, under the driver lock.
                let when = unsafe { entry.as_ref().when() };
                // SAFETY: popped entries are unlinked; insert's contract holds.
                if unsafe { self.insert(entry, when) }.is_err() {
                    if exp.level == 0 {
                        // SAFETY: popped, unlinked, live.
                        unsafe { self.fire_or_refile(entry, &mut fire) };
                    } else {
                        due.push((when, entry));
                    }
                }
            }
            due.sort_by_key(|&(when, _)| when);
            for (_, entry) in due {
                // SAFETY: popped, unlinked, live.
                unsafe { self.fire_or_refile(entry, &mut fire) };
            }
        }
        self.elapsed = self.elapsed.max(now);
    }

    /// Hands a due entry to `fire`, filing it again if `fire` reports a later deadline.
    ///
    /// # Safety
    /// `entry` is live, pinned and unlinked.
    unsafe fn fire_or_refile(
        &mut self,
        entry: NonNull<TimerShared>,
        fire: &mut impl FnMut(NonNull<TimerShared>) -> Option<u64>,
    ) {
        while let Some(later) = fire(entry) {
            // SAFETY: still unlinked; `insert` only refuses a tick the wheel has passed (then
            // `fire` looks at the entry again).
            if unsafe { self.insert(entry, later) }.is_ok() {
                return;
            }
        }
    }

    /// Unlinks every entry (for shutdown), calling `fire` on each.
    pub(crate) fn drain(&mut self, mut fire: impl FnMut(NonNull<TimerShared>)) {
        for level in self.levels.iter_mut() {
            for slot in level.slots.iter_mut() {
                // SAFETY: list nodes are live linked entries.
                while let Some(entry) = unsafe { slot.pop_front() } {
                    fire(entry);
                }
            }
            level.occupied = 0;
        }
    }
}

impl Level {
    fn next_expiration(&self, level: usize, elapsed: u64) -> Option<Expiration> {
        if self.occupied == 0 {
            return None;
        }
        let now_slot = slot_for(elapsed, level);
        let rotated = self.occupied.rotate_right(now_slot as u32);
        let slot = (rotated.trailing_zeros() as usize + now_slot) % SLOTS;
        let slot_range = 1u64 << (SLOT_BITS as usize * level);
        let level_range = slot_range << SLOT_BITS;
        let level_start = elapsed & !(level_range - 1);
        let mut deadline = level_start + slot as u64 * slot_range;
        if deadline <= elapsed && slot != now_slot {
            // The slot is behind us in this window: it belongs to the next window.
            deadline += level_range;
        }
        Some(Expiration { level, slot, deadline: deadline.max(elapsed) })
    }
}

/// The last tick that `insert` can place exactly, seen from `elapsed`: one top-level window
/// ahead of the start of the current top-level slot, minus one. It is always at least
/// `MAX_SPAN - MAX_SPAN / 64` ticks (~18.7 hours) ahead, so a long deadline is re-inserted at
/// most once per ~18.7 hours of clock and each re-insertion moves it to a later slot.
fn reach(elapsed: u64) -> u64 {
    let top_slot = 1u64 << (SLOT_BITS as usize * (LEVELS - 1));
    (elapsed & !(top_slot - 1)).saturating_add(MAX_SPAN - 1)
}

fn level_for(elapsed: u64, when: u64) -> usize {
    const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
    // The highest bit in which `elapsed` and `when` differ decides the level; OR-ing the slot
    // mask makes deadlines within the current 64-tick window land on level 0.
    let mut masked = (elapsed ^ when) | SLOT_MASK;
    if masked >= MAX_SPAN {
        masked = MAX_SPAN - 1;
    }
    let significant = 63 - masked.leading_zeros() as usize;
    significant / SLOT_BITS as usize
}

fn slot_for(tick: u64, level: usize) -> usize {
    ((tick >> (level as u32 * SLOT_BITS)) & (SLOTS as u64 - 1)) as usize
}

impl List {
    /// # Safety
    /// `entry` is live and unlinked; called under the driver lock.
    unsafe fn push_front(&mut self, entry: NonNull<TimerShared>) {
        // SAFETY: `push_front`'s `# Safety`: `entry` is live and unlinked, the driver lock is held,
        // and the old head is a live linked entry.
        unsafe {
            entry.as_ref().set_links(None, self.head);
            if let Some(old) = self.head {
                old.as_ref().set_prev(Some(entry));
            }
        }
        self.head = Some(entry);
    }

    /// # Safety
    /// `entry` is in this list; called under the driver lock.
    unsafe fn remove(&mut self, entry: NonNull<TimerShared>) {
        // SAFETY: `remove`'s `# Safety`: `entry` is in this list, the driver lock is held, and its
        // neighbours are live linked entries.
        unsafe {
            let (prev, next) = entry.as_ref().links();
            match prev {
                Some(p) => p.as_ref().set_next(next),
                None => self.head = next,
            }
            if let Some(n) = next {
                n.as_ref().set_prev(prev);
            }
            entry.as_ref().clear_position();
        }
    }

    /// # Safety
    /// Called under the driver lock; list nodes are live.
    unsafe fn pop_front(&mut self) -> Option<NonNull<TimerShared>> {
        let head = self.head?;
        // SAFETY: `head` is in this list (it is its head) and we run under the driver lock, as
        // `remove` requires.
        unsafe { self.remove(head) };
        Some(head)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::pin::Pin;

    fn entries(n: usize) -> Vec<Pin<Box<TimerShared>>> {
        (0..n).map(|_| Box::pin(TimerShared::new())).collect()
    }

    fn ptr(e: &Pin<Box<TimerShared>>) -> NonNull<TimerShared> {
        NonNull::from(&**e)
    }

    #[test]
    fn level_boundaries() {
        assert_eq!(level_for(0, 1), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(0, 4095), 1);
        assert_eq!(level_for(0, 4096), 2);
        assert_eq!(level_for(0, MAX_SPAN * 4), LEVELS - 1);
        assert_eq!(level_for(60, 70), 1);
    }

    #[test]
    fn fires_in_deadline_order_never_early() {
        let whens: Vec<u64> = vec![5, 1, 64, 63, 4097, 100, 3000, 70, 1_000_000, 2];
        let es = entries(whens.len());
        let mut wheel = Wheel::new();
        for (e, &w) in es.iter().zip(&whens) {
            // SAFETY: entries are pinned and outlive the wheel's use of them.
            unsafe { wheel.insert(ptr(e), w).unwrap() };
        }
        let mut fired = Vec::new();
        let mut now = 0;
        while fired.len() < whens.len() {
            now += 1;
            wheel.advance(now, |e| {
                // SAFETY: fired entries are live.
                let when = unsafe { e.as_ref().when() };
                assert!(when <= now, "fired early: when={when} now={now}");
                assert!(when == now, "fired late at step granularity: when={when} now={now}");
                fired.push(when);
                None
            });
        }
        let mut sorted = whens.clone();
        sorted.sort();
        assert_eq!(fired, sorted);
    }

    /// Runs `f` on another thread and fails (instead of hanging the test run) if it does not
    /// finish within 60 s.
    fn finishes<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()).unwrap());
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the wheel looped: advance never returned")
    }

    #[test]
    fn deadlines_past_the_reach_from_mid_slot_fire_exactly_and_never_loop() {
        let fired = finishes(|| {
            // The clock is in the middle of top-level slot 5, where a deadline one span ahead
            // has the current slot's index.
            let start = 5 * (MAX_SPAN / 64) + 1_000;
            let whens = [start + MAX_SPAN - 500, start + 10 * MAX_SPAN, start + 10_000, start + 2 * MAX_SPAN + 7];
            let es = entries(whens.len());
            let mut wheel = Wheel::new();
            wheel.advance(start, |_| unreachable!("nothing is linked yet"));
            for (e, &w) in es.iter().zip(&whens) {
                // SAFETY: the entries are pinned in `es`, live for the whole closure, unlinked.
                unsafe { wheel.insert(ptr(e), w).unwrap() };
            }
            let mut fired = Vec::new();
            let mut sorted = whens.to_vec();
            sorted.sort();
            for &w in &sorted {
                // Just before each deadline: nothing more fires; at it: exactly that one.
                wheel.advance(w - 1, |e| {
                    // SAFETY: fired entries are live (pinned in `es`).
                    fired.push((w - 1, unsafe { e.as_ref().when() }));
                    None
                });
                wheel.advance(w, |e| {
                    // SAFETY: fired entries are live (pinned in `es`).
                    fired.push((w, unsafe { e.as_ref().when() }));
                    None
                });
            }
            assert!(wheel.next_expiration().is_none());
            (fired, sorted)
        });
        let (fired, sorted) = fired;
        assert_eq!(fired, sorted.iter().map(|&w| (w, w)).collect::<Vec<_>>());
    }

    #[test]
    fn reach_is_at_least_most_of_a_span_ahead_and_never_in_the_current_top_slot() {
        let top = MAX_SPAN / 64;
        for elapsed in [0, 1, top - 1, top, 5 * top + 1_000, 63 * top + 5, MAX_SPAN + 17 * top + 3] {
            let r = reach(elapsed);
            assert!(r - elapsed >= MAX_SPAN - top, "elapsed {elapsed}");
            assert!(r - elapsed < MAX_SPAN, "elapsed {elapsed}");
            assert_ne!(slot_for(r, LEVELS - 1), slot_for(elapsed, LEVELS - 1), "elapsed {elapsed}");
        }
    }

    #[test]
    fn big_jumps_fire_everything_due() {
        let es = entries(4);
        let mut wheel = Wheel::new();
        for (e, w) in es.iter().zip([10u64, 200, 5000, 300_000]) {
            // SAFETY: the entries are pinned in `es`, live for the whole test, and not linked yet.
            unsafe { wheel.insert(ptr(e), w).unwrap() };
        }
        let mut fired = Vec::new();
        wheel.advance(6000, |e| {
            // SAFETY: fired entries are live (pinned in `es`).
            fired.push(unsafe { e.as_ref().when() });
            None
        });
        assert_eq!(fired, vec![10, 200, 5000]);
        assert_eq!(wheel.next_expiration().map(|e| e.deadline <= 300_000), Some(true));
        wheel.advance(300_000, |e| {
            // SAFETY: fired entries are live (pinned in `es`).
            fired.push(unsafe { e.as_ref().when() });
            None
        });
        assert_eq!(fired, vec![10, 200, 5000, 300_000]);
        assert!(wheel.next_expiration().is_none());
    }

    /// A late advance that finds several entries of one higher-level slot already due fires
    /// them in deadline order, not in the slot list's order.
    #[test]
    fn late_cascade_fires_in_deadline_order() {
        let whens: Vec<u64> = vec![4_150, 4_100, 4_190, 4_101, 4_120];
        let es = entries(whens.len());
        let mut wheel = Wheel::new();
        for (e, &w) in es.iter().zip(&whens) {
            // SAFETY: the entries are pinned in `es`, live for the whole test, and not linked yet.
            unsafe { wheel.insert(ptr(e), w).unwrap() };
        }
        let mut fired = Vec::new();
        wheel.advance(5_000, |e| {
            // SAFETY: fired entries are live (pinned in `es`).
            fired.push(unsafe { e.as_ref().when() });
            None
        });
        assert_eq!(fired, vec![4_100, 4_101, 4_120, 4_150, 4_190]);
    }

    #[test]
    fn removed_entries_never_fire() {
        let es = entries(3);
        let mut wheel = Wheel::new();
        for (e, w) in es.iter().zip([10u64, 10, 700]) {
            // SAFETY: the entries are pinned in `es`, live for the whole test, and not linked yet.
            unsafe { wheel.insert(ptr(e), w).unwrap() };
        }
        // SAFETY: the entries are pinned in `es` and live for the whole test, and the two are
        // linked in this wheel (inserted above, not yet removed), as `remove` requires.
        unsafe {
            wheel.remove(ptr(&es[0]));
            wheel.remove(ptr(&es[2]));
            wheel.remove(ptr(&es[2])); // idempotent
        }
        let mut n = 0;
        wheel.advance(10_000, |_| {
            n += 1;
            None
        });
        assert_eq!(n, 1);
        assert!(wheel.next_expiration().is_none());
    }

    /// An entry whose owner moved its deadline later (without the lock) is filed again when
    /// its old tick comes due and fires at the new one, never before.
    #[test]
    fn extended_entries_fire_at_their_new_deadline() {
        let es = entries(2);
        let mut wheel = Wheel::new();
        for (e, w) in es.iter().zip([10u64, 20]) {
            e.arm(w);
            // SAFETY: the entries are pinned in `es`, live for the whole test, and not linked yet.
            unsafe { wheel.insert(ptr(e), w).unwrap() };
        }
        assert!(es[0].extend(5_000));
        assert!(es[0].extend(70_000));
        assert!(!es[0].extend(60_000), "an earlier deadline needs the lock");
        let mut fired = Vec::new();
        let step = |wheel: &mut Wheel, now: u64, fired: &mut Vec<(u64, usize)>| {
            wheel.advance(now, |e| {
                // SAFETY: unlinked live entries; this test is the only thread.
                match unsafe { e.as_ref().fire_unless_extended(now) } {
                    Ok(_) => {
                        fired.push((now, es.iter().position(|x| ptr(x) == e).unwrap()));
                        None
                    }
                    Err(later) => Some(later),
                }
            })
        };
        step(&mut wheel, 20, &mut fired);
        assert_eq!(fired, vec![(20, 1)]);
        assert!(!es[0].is_fired());
        step(&mut wheel, 69_999, &mut fired);
        assert_eq!(fired, vec![(20, 1)], "fired before its new deadline");
        step(&mut wheel, 70_000, &mut fired);
        assert_eq!(fired, vec![(20, 1), (70_000, 0)]);
        assert!(es[0].is_fired() && !es[0].extend(80_000), "a fired entry cannot be extended");
        assert!(wheel.next_expiration().is_none());
    }

    #[test]
    fn past_deadline_is_rejected() {
        let es = entries(1);
        let mut wheel = Wheel::new();
        wheel.advance(100, |_| None);
        // SAFETY: the entry is pinned in `es` and not linked (the first insert is rejected).
        assert!(unsafe { wheel.insert(ptr(&es[0]), 100) }.is_err());
        // SAFETY: the entry is pinned in `es` and not linked.
        assert!(unsafe { wheel.insert(ptr(&es[0]), 101) }.is_ok());
    }
}
