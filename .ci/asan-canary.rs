// A deliberate use-after-free: `.ci/run` builds this with `-Zsanitizer=address` and expects
// AddressSanitizer to stop it, proving the sanitizer step would catch such a bug in weft.
fn main() {
    let b = Box::new(7u64);
    let p: *const u64 = &*b;
    drop(b);
    // SAFETY: none; reading freed memory is the point (the sanitizer must report it).
    let v = unsafe { std::ptr::read_volatile(p) };
    println!("read {v} after free: the sanitizer did not catch it");
}
