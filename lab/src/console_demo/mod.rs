//! `weft-lab console-demo`: a weft program worth watching with `weft-lab console`. Two workers,
//! poll timing on, the metrics endpoint on loopback, and:
//! * one task whose every poll blocks its worker for 50 ms (`std::thread::sleep` inside the
//!   task: the bug the console's "slowest polls" panel exists to find), then sleeps 50 ms;
//! * 20 tasks waking on timers (100 ms to 2 s), a `spawn_blocking` call every 100 ms, and a
//!   TCP ping-pong over loopback every 10 ms (timer, blocking-pool and I/O activity).
//!
//! It prints `metrics: http://ADDR` and `slow task: FILE:LINE` (the slow task's spawn site, as
//! `line!()` sees it, so a test can check the console against the source) and runs until
//! killed, or for `--seconds`.

use std::io::Write;
use std::time::Duration;

use weft::io::{AsyncReadExt, AsyncWriteExt};

/// `weft-lab console-demo`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Port for the metrics endpoint on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long)]
    pub seconds: Option<f64>,
}

fn serve_demo(args: Args) -> Result<(), String> {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .enable_metrics_poll_time_histogram()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let addr = weft::metrics::serve(([127, 0, 0, 1], args.port).into()).await.map_err(|e| e.to_string())?;
        let slow_line = line!() + 1;
        weft::spawn(async {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                weft::time::sleep(Duration::from_millis(50)).await;
            }
        });
        for i in 0..20u64 {
            weft::spawn(async move {
                loop {
                    weft::time::sleep(Duration::from_millis(100 * (i + 1))).await;
                }
            });
        }
        weft::spawn(async {
            loop {
                let _ = weft::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(1))).await;
                weft::time::sleep(Duration::from_millis(100)).await;
            }
        });
        weft::spawn(ping_pong());
        println!("metrics: http://{addr}");
        println!("slow task: {}:{slow_line}", file!());
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        match args.seconds {
            Some(s) => weft::time::sleep(Duration::from_secs_f64(s)).await,
            None => std::future::pending().await,
        }
        Ok(())
    })
}

/// One byte back and forth over a loopback TCP connection every 10 ms.
async fn ping_pong() -> std::io::Result<()> {
    let listener = weft::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    weft::spawn(async move {
        let (mut s, _) = listener.accept().await?;
        let mut b = [0u8; 1];
        loop {
            s.read_exact(&mut b).await?;
            s.write_all(&b).await?;
        }
        #[allow(unreachable_code)]
        Ok::<_, std::io::Error>(())
    });
    let mut c = weft::net::TcpStream::connect(addr).await?;
    let mut b = [7u8; 1];
    loop {
        c.write_all(&b).await?;
        c.read_exact(&mut b).await?;
        weft::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `weft-lab console-demo`.
pub fn run(args: Args) -> Result<std::process::ExitCode, String> {
    serve_demo(args).map(|()| std::process::ExitCode::SUCCESS)
}
