//! Loom models of the parkers: an unpark racing a park is never lost, for the plain thread
//! parker and for workers parked in the driver or on their condvar.

use crate::loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use crate::loom::sync::Arc;
use crate::loom::thread;
use crate::runtime::driver::Driver;
use crate::runtime::park::{ParkThread, Parker, SharedDriver};

#[test]
fn park_thread_unpark_before_or_during_park() {
    loom::model(|| {
        let park = ParkThread::new();
        let flag = Arc::new(AtomicBool::new(false));
        let (p2, f2) = (park.clone(), flag.clone());
        let th = thread::spawn(move || {
            f2.store(true, SeqCst);
            p2.unpark();
        });
        // Sleep until the flag is visible; each unpark lets one park return.
        while !flag.load(SeqCst) {
            park.park_timeout(None);
        }
        th.join().unwrap();
    });
}

#[test]
fn two_workers_one_driver_both_unparked() {
    loom::model(|| {
        let (driver, handle) = Driver::new(false, false, false, false).unwrap();
        let shared = Arc::new(SharedDriver::new(driver));
        let handle = Arc::new(handle);
        let mut a = Parker::new(shared.clone());
        let mut b = Parker::new(shared);
        let (ua, ub) = (a.unparker(), b.unparker());
        let flag = Arc::new(AtomicBool::new(false));
        let (h2, f2) = (handle.clone(), flag.clone());
        let th = thread::spawn(move || {
            while !f2.load(SeqCst) {
                b.park(&h2);
            }
        });
        let h3 = handle.clone();
        let f3 = flag.clone();
        let waker = thread::spawn(move || {
            f3.store(true, SeqCst);
            ua.unpark(&h3);
            ub.unpark(&h3);
        });
        while !flag.load(SeqCst) {
            a.park(&handle);
        }
        waker.join().unwrap();
        th.join().unwrap();
    });
}
