//! `ReadBuf`: the byte buffer `AsyncRead::poll_read` fills.
//!
//! A `ReadBuf` borrows a possibly-uninitialised byte slice and tracks two cursors over it:
//! `filled` (bytes a reader has produced) and `initialized` (bytes known to hold a value).
//! The invariant `filled <= initialized <= capacity` is what lets readers write into
//! uninitialised memory without ever handing out a `&[u8]` over bytes that were never written.
//! Every safe method maintains that invariant and panics rather than break it; the `unsafe`
//! methods (`inner_mut`, `unfilled_mut`, `assume_init`) hand the caller the obligation instead.

use std::fmt;
use std::mem::MaybeUninit;

/// A wrapper around a byte buffer that is incrementally filled and initialised.
///
/// The buffer has three regions: the *filled* prefix (data a reader produced), then the
/// *initialised but unfilled* bytes, then the *uninitialised* tail:
///
/// ```text
/// [             capacity              ]
/// [ filled |         unfilled         ]
/// [    initialized    | uninitialized ]
/// ```
pub struct ReadBuf<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    filled: usize,
    initialized: usize,
}

/// Views initialised bytes as `u8`.
///
/// # Safety
///
/// Every element of `slice` must be initialised.
unsafe fn assume_init_ref(slice: &[MaybeUninit<u8>]) -> &[u8] {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and the caller guarantees that every
    // element is initialised, so reading them as `u8` is defined.
    unsafe { &*(slice as *const [MaybeUninit<u8>] as *const [u8]) }
}

/// Views initialised bytes as mutable `u8`.
///
/// # Safety
///
/// Every element of `slice` must be initialised.
unsafe fn assume_init_mut(slice: &mut [MaybeUninit<u8>]) -> &mut [u8] {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and the caller guarantees that every
    // element is initialised, so reading them as `u8` is defined; writing a `u8` through the
    // result keeps each element initialised, so the `MaybeUninit` view stays valid afterwards.
    unsafe { &mut *(slice as *mut [MaybeUninit<u8>] as *mut [u8]) }
}

impl<'a> ReadBuf<'a> {
    /// Creates a `ReadBuf` over a fully initialised buffer, with nothing filled yet.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> ReadBuf<'a> {
        let initialized = buf.len();
        // SAFETY: `u8` and `MaybeUninit<u8>` share a layout. Handing out a `MaybeUninit` view of
        // initialised memory is only unsound if someone writes `uninit` through it; the safe API
        // never does, and `inner_mut`/`unfilled_mut` forbid callers from de-initialising bytes.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        ReadBuf { buf, filled: 0, initialized }
    }

    /// Creates a `ReadBuf` over a buffer that may be uninitialised, with nothing filled yet.
    #[inline]
    pub fn uninit(buf: &'a mut [MaybeUninit<u8>]) -> ReadBuf<'a> {
        ReadBuf { buf, filled: 0, initialized: 0 }
    }

    /// The total size of the buffer.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The filled part of the buffer.
    #[inline]
    pub fn filled(&self) -> &[u8] {
        // SAFETY: `filled <= initialized`, so every byte in `..filled` is initialised.
        unsafe { assume_init_ref(&self.buf[..self.filled]) }
    }

    /// The filled part of the buffer, mutably.
    #[inline]
    pub fn filled_mut(&mut self) -> &mut [u8] {
        // SAFETY: `filled <= initialized`, so every byte in `..filled` is initialised.
        unsafe { assume_init_mut(&mut self.buf[..self.filled]) }
    }

    /// A new `ReadBuf` over at most `n` bytes of this one's unfilled region.
    ///
    /// The new buffer starts empty; what a reader fills in it is *not* reflected here until the
    /// caller marks it with [`assume_init`](Self::assume_init) and [`advance`](Self::advance).
    #[inline]
    pub fn take(&mut self, n: usize) -> ReadBuf<'_> {
        let len = n.min(self.remaining());
        let already_init = self.initialized.saturating_sub(self.filled).min(len);
        let start = self.filled;
        let mut sub = ReadBuf::uninit(&mut self.buf[start..start + len]);
        // SAFETY: bytes `filled..initialized` of `self` are initialised, and the sub-buffer's
        // first `already_init` bytes are exactly a prefix of that range.
        unsafe { sub.assume_init(already_init) };
        sub
    }

    /// The initialised part of the buffer (a superset of the filled part).
    #[inline]
    pub fn initialized(&self) -> &[u8] {
        // SAFETY: the invariant says `..initialized` is initialised.
        unsafe { assume_init_ref(&self.buf[..self.initialized]) }
    }

    /// The initialised part of the buffer, mutably.
    #[inline]
    pub fn initialized_mut(&mut self) -> &mut [u8] {
        // SAFETY: the invariant says `..initialized` is initialised.
        unsafe { assume_init_mut(&mut self.buf[..self.initialized]) }
    }

    /// The whole underlying buffer, including filled and initialised bytes.
    ///
    /// # Safety
    ///
    /// The caller must not de-initialise any byte that is already initialised (for example by
    /// writing `MaybeUninit::uninit()` into it): the filled and initialised views rely on it.
    #[inline]
    pub unsafe fn inner_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        self.buf
    }

    /// The unfilled part of the buffer, which may be partly uninitialised.
    ///
    /// # Safety
    ///
    /// The caller must not de-initialise any byte that is already initialised.
    #[inline]
    pub unsafe fn unfilled_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut self.buf[self.filled..]
    }

    /// Initialises (zeroes where needed) the whole unfilled part and returns it.
    #[inline]
    pub fn initialize_unfilled(&mut self) -> &mut [u8] {
        self.initialize_unfilled_to(self.remaining())
    }

    /// Initialises (zeroes where needed) the first `n` unfilled bytes and returns them.
    ///
    /// # Panics
    ///
    /// Panics if `n` is larger than [`remaining`](Self::remaining).
    #[inline]
    #[track_caller]
    pub fn initialize_unfilled_to(&mut self, n: usize) -> &mut [u8] {
        assert!(
            self.remaining() >= n,
            "ReadBuf::initialize_unfilled_to: n ({n}) exceeds remaining ({})",
            self.remaining()
        );
        let end = self.filled + n;
        if self.initialized < end {
            for b in &mut self.buf[self.initialized..end] {
                b.write(0);
            }
            self.initialized = end;
        }
        // SAFETY: `end <= initialized` now holds, so `filled..end` is initialised.
        unsafe { assume_init_mut(&mut self.buf[self.filled..end]) }
    }

    /// Bytes left to fill: `capacity() - filled().len()`.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.capacity() - self.filled
    }

    /// Empties the filled region; initialisation is kept.
    #[inline]
    pub fn clear(&mut self) {
        self.filled = 0;
    }

    /// Grows the filled region by `n` bytes.
    ///
    /// # Panics
    ///
    /// Panics if the filled region would outgrow the initialised region.
    #[inline]
    #[track_caller]
    pub fn advance(&mut self, n: usize) {
        let new = self.filled.checked_add(n).expect("ReadBuf::advance: filled length overflowed");
        self.set_filled(new);
    }

    /// Sets the filled length to `n` (which may shrink it).
    ///
    /// # Panics
    ///
    /// Panics if `n` is larger than the initialised length.
    #[inline]
    #[track_caller]
    pub fn set_filled(&mut self, n: usize) {
        assert!(
            n <= self.initialized,
            "ReadBuf::set_filled: filled ({n}) must not exceed initialized ({})",
            self.initialized
        );
        self.filled = n;
    }

    /// Declares that the first `n` unfilled bytes are initialised.
    ///
    /// Does nothing if they are already known to be; never shrinks the initialised region.
    ///
    /// # Safety
    ///
    /// The first `n` bytes of the unfilled region must really be initialised.
    ///
    /// # Panics
    ///
    /// Panics if `n` is larger than [`remaining`](Self::remaining).
    #[inline]
    #[track_caller]
    pub unsafe fn assume_init(&mut self, n: usize) {
        assert!(n <= self.remaining(), "ReadBuf::assume_init: n ({n}) exceeds remaining ({})", self.remaining());
        let end = self.filled + n;
        if end > self.initialized {
            self.initialized = end;
        }
    }

    /// Appends `buf` to the filled region, initialising as it goes.
    ///
    /// # Panics
    ///
    /// Panics if `buf` is longer than [`remaining`](Self::remaining).
    #[inline]
    #[track_caller]
    pub fn put_slice(&mut self, buf: &[u8]) {
        assert!(
            self.remaining() >= buf.len(),
            "ReadBuf::put_slice: buf.len() ({}) exceeds remaining ({})",
            buf.len(),
            self.remaining()
        );
        let end = self.filled + buf.len();
        for (dst, src) in self.buf[self.filled..end].iter_mut().zip(buf) {
            dst.write(*src);
        }
        if self.initialized < end {
            self.initialized = end;
        }
        self.filled = end;
    }
}

impl fmt::Debug for ReadBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadBuf")
            .field("filled", &self.filled)
            .field("initialized", &self.initialized)
            .field("capacity", &self.capacity())
            .finish()
    }
}

// SAFETY: `remaining_mut` is the unfilled length and `chunk_mut` is exactly the unfilled
// region, so `advance_mut(cnt)` with `cnt <= remaining_mut()` (the trait's contract, on bytes
// the caller has initialised through `chunk_mut`) keeps `filled <= initialized <= capacity`.
unsafe impl bytes::BufMut for ReadBuf<'_> {
    fn remaining_mut(&self) -> usize {
        self.remaining()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: `BufMut::advance_mut`'s contract is that the next `cnt` bytes of `chunk_mut()`
        // (our unfilled region) have been initialised by the caller.
        unsafe { self.assume_init(cnt) };
        self.advance(cnt);
    }

    fn chunk_mut(&mut self) -> &mut bytes::buf::UninitSlice {
        // SAFETY: `UninitSlice` only permits writing initialised bytes, so handing it the
        // unfilled region cannot de-initialise anything.
        bytes::buf::UninitSlice::uninit(unsafe { self.unfilled_mut() })
    }

    fn put_slice(&mut self, src: &[u8]) {
        ReadBuf::put_slice(self, src);
    }
}
