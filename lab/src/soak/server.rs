//! The soak server, written once for runtimes with tokio's API (`soak_server!`, instantiated
//! for weft and for tokio): a hyper HTTP/1.1 server plus the background life of a real service.
//!
//! Routes: `/` (hello), `/work` (a `spawn_blocking` sum, checked), `/stats` (the runtime's own
//! metrics: alive tasks and workers, as a scrape would read them). Background tasks: a timer
//! reset every millisecond that fires every 100th round, a bounded channel kept full by a fast
//! producer and drained slowly (backpressure), `block_in_place` every 500 ms, and a task that
//! blocks its worker for 30 ms every 2 s.

/// Expected answer of `/work` (`(0..10_000).sum()`).
pub const WORK_SUM: u64 = 49_995_000;

macro_rules! soak_server {
    ($name:ident, $rt:ident, $($io:ident)::+) => {
        /// Serves until killed; prints `listening on ADDR` once bound.
        pub fn $name(workers: usize) -> Result<(), String> {
            use std::time::Duration;

            use http_body_util::Full;
            use hyper::body::Bytes;

            let runtime = $rt::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()
                .map_err(|e| format!("building the runtime: {e}"))?;
            runtime.block_on(async {
                let listener = $rt::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("binding: {e}"))?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                // Timers reset every millisecond; one in a hundred rounds lets it fire.
                $rt::spawn(async {
                    let mut t = Box::pin($rt::time::sleep(Duration::from_millis(10)));
                    loop {
                        for _ in 0..100 {
                            t.as_mut().reset($rt::time::Instant::now() + Duration::from_millis(10));
                            $rt::time::sleep(Duration::from_millis(1)).await;
                        }
                        t.as_mut().await;
                    }
                });
                // A bounded channel under backpressure: the producer waits on a full channel.
                let (tx, mut rx) = $rt::sync::mpsc::channel::<Vec<u8>>(16);
                $rt::spawn(async move { while tx.send(vec![7u8; 1024]).await.is_ok() {} });
                $rt::spawn(async move {
                    while let Some(v) = rx.recv().await {
                        assert_eq!(v.len(), 1024);
                        $rt::time::sleep(Duration::from_millis(1)).await;
                    }
                });
                // block_in_place now and then, and a task that blocks its worker outright.
                $rt::spawn(async {
                    loop {
                        $rt::time::sleep(Duration::from_millis(500)).await;
                        $rt::task::block_in_place(|| std::thread::sleep(Duration::from_millis(5)));
                    }
                });
                $rt::spawn(async {
                    loop {
                        $rt::time::sleep(Duration::from_secs(2)).await;
                        std::thread::sleep(Duration::from_millis(30));
                    }
                });
                {
                    use std::io::Write;
                    println!("listening on {addr}");
                    let _ = std::io::stdout().flush();
                }
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        $rt::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    $rt::spawn(async move {
                        let service =
                            hyper::service::service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                                let body = match req.uri().path() {
                                    "/work" => {
                                        let sum = $rt::task::spawn_blocking(|| (0..10_000u64).sum::<u64>())
                                            .await
                                            .map_err(|e| e.to_string())?;
                                        sum.to_string()
                                    }
                                    "/stats" => {
                                        let m = $rt::runtime::Handle::current().metrics();
                                        format!("alive_tasks {}\nworkers {}\n", m.num_alive_tasks(), m.num_workers())
                                    }
                                    _ => "hello".to_string(),
                                };
                                Ok::<_, String>(hyper::Response::new(Full::new(Bytes::from(body))))
                            });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection($($io)::+::new(stream), service)
                            .await;
                    });
                }
            })
        }
    };
}

soak_server!(serve_weft, weft, weft::hyper::WeftIo);
soak_server!(serve_tokio, tokio, hyper_util::rt::TokioIo);
