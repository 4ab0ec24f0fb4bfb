use bytes::BufMut;
use std::mem::MaybeUninit;
use weft::io::ReadBuf;

#[test]
fn new_is_fully_initialized_and_empty() {
    let mut storage = [7u8; 8];
    let rb = ReadBuf::new(&mut storage);
    assert_eq!(rb.capacity(), 8);
    assert_eq!(rb.remaining(), 8);
    assert!(rb.filled().is_empty());
    assert_eq!(rb.initialized(), &[7; 8]);
}

#[test]
fn uninit_tracks_initialization() {
    let mut storage = [MaybeUninit::<u8>::uninit(); 8];
    let mut rb = ReadBuf::uninit(&mut storage);
    assert!(rb.initialized().is_empty());
    assert_eq!(rb.initialize_unfilled_to(3), &[0, 0, 0]);
    assert_eq!(rb.initialized().len(), 3);
    rb.advance(2);
    assert_eq!(rb.filled(), &[0, 0]);
    assert_eq!(rb.initialize_unfilled().len(), 6);
    assert_eq!(rb.initialized().len(), 8);
}

#[test]
fn put_slice_fills_and_initializes() {
    let mut storage = [MaybeUninit::<u8>::uninit(); 6];
    let mut rb = ReadBuf::uninit(&mut storage);
    rb.put_slice(b"abc");
    rb.put_slice(b"de");
    assert_eq!(rb.filled(), b"abcde");
    assert_eq!(rb.initialized(), b"abcde");
    assert_eq!(rb.remaining(), 1);
    rb.filled_mut()[0] = b'X';
    assert_eq!(rb.filled(), b"Xbcde");
    rb.initialized_mut()[1] = b'Y';
    assert_eq!(rb.filled(), b"XYcde");
}

#[test]
fn clear_and_set_filled_keep_initialization() {
    let mut storage = [1u8; 4];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"ab");
    rb.clear();
    assert!(rb.filled().is_empty());
    assert_eq!(rb.initialized().len(), 4);
    rb.set_filled(4);
    assert_eq!(rb.filled(), &[b'a', b'b', 1, 1]);
    rb.set_filled(1);
    assert_eq!(rb.filled(), b"a");
}

#[test]
fn assume_init_extends_but_never_shrinks() {
    let mut storage = [MaybeUninit::new(5u8); 4];
    let mut rb = ReadBuf::uninit(&mut storage);
    // SAFETY: every byte of `storage` was initialised above.
    unsafe { rb.assume_init(3) };
    assert_eq!(rb.initialized(), &[5, 5, 5]);
    // SAFETY: every byte of `storage` was initialised above, so its first byte is.
    unsafe { rb.assume_init(1) };
    assert_eq!(rb.initialized().len(), 3);
    rb.advance(3);
    assert_eq!(rb.filled(), &[5, 5, 5]);
}

#[test]
fn take_limits_and_is_adopted_by_parent() {
    let mut storage = [0u8; 10];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"xy");
    let n = {
        let mut sub = rb.take(3);
        assert_eq!(sub.capacity(), 3);
        assert_eq!(sub.initialized().len(), 3, "initialisation is inherited");
        sub.put_slice(b"abc");
        sub.filled().len()
    };
    // SAFETY: the sub-buffer filled (initialised) these bytes.
    unsafe { rb.assume_init(n) };
    rb.advance(n);
    assert_eq!(rb.filled(), b"xyabc");
    assert_eq!(rb.take(100).capacity(), 5);
}

#[test]
fn unsafe_views_cover_expected_regions() {
    let mut storage = [0u8; 5];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"ab");
    // SAFETY: only lengths are inspected; nothing is de-initialised.
    unsafe {
        assert_eq!(rb.inner_mut().len(), 5);
        assert_eq!(rb.unfilled_mut().len(), 3);
    }
}

#[test]
fn buf_mut_impl_writes_into_unfilled() {
    let mut storage = [MaybeUninit::<u8>::uninit(); 8];
    let mut rb = ReadBuf::uninit(&mut storage);
    assert_eq!(rb.remaining_mut(), 8);
    rb.put_u16(0x0102);
    rb.put_u8(3);
    BufMut::put_slice(&mut rb, b"xy");
    assert_eq!(rb.filled(), &[1, 2, 3, b'x', b'y']);
    assert_eq!(rb.remaining_mut(), 3);
}

#[test]
#[should_panic]
fn advance_past_initialized_panics() {
    let mut storage = [MaybeUninit::<u8>::uninit(); 4];
    let mut rb = ReadBuf::uninit(&mut storage);
    rb.advance(1);
}

#[test]
#[should_panic]
fn set_filled_past_initialized_panics() {
    let mut storage = [0u8; 4];
    let mut rb = ReadBuf::new(&mut storage);
    rb.set_filled(5);
}

#[test]
#[should_panic]
fn put_slice_overflow_panics() {
    let mut storage = [0u8; 2];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"abc");
}

#[test]
#[should_panic]
fn initialize_unfilled_to_overflow_panics() {
    let mut storage = [0u8; 2];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"a");
    rb.initialize_unfilled_to(2);
}

#[test]
#[should_panic]
fn assume_init_past_capacity_panics() {
    let mut storage = [0u8; 2];
    let mut rb = ReadBuf::new(&mut storage);
    // SAFETY: the call panics before recording anything.
    unsafe { rb.assume_init(3) };
}

#[test]
fn debug_shows_cursors() {
    let mut storage = [0u8; 3];
    let mut rb = ReadBuf::new(&mut storage);
    rb.put_slice(b"a");
    let s = format!("{rb:?}");
    assert!(s.contains("filled: 1") && s.contains("capacity: 3"), "{s}");
}
