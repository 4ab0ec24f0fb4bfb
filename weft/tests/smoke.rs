use std::time::Duration;

#[test]
fn mt_spawn_join_sleep() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let sum = rt.block_on(async {
        let hs: Vec<_> = (0..10_000u64).map(|i| weft::spawn(async move { i })).collect();
        let mut s = 0;
        for h in hs {
            s += h.await.unwrap();
        }
        weft::time::sleep(Duration::from_millis(5)).await;
        let inner = weft::spawn(async {
            let hs: Vec<_> = (0..10_000u64).map(|i| weft::spawn(async move { i })).collect();
            let mut s = 0;
            for h in hs {
                s += h.await.unwrap();
            }
            s
        });
        s + inner.await.unwrap()
    });
    assert_eq!(sum, 2 * (10_000 * 9_999 / 2));
}

#[test]
fn ct_spawn_join_sleep() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let sum = rt.block_on(async {
        let hs: Vec<_> = (0..10_000u64).map(|i| weft::spawn(async move { weft::task::yield_now().await; i })).collect();
        let mut s = 0;
        for h in hs {
            s += h.await.unwrap();
        }
        weft::time::sleep(Duration::from_millis(5)).await;
        s
    });
    assert_eq!(sum, 10_000 * 9_999 / 2);
}
