//! A node serving `demo::Counter`s: the README's three-terminal example and the multi-process
//! tests' other processes.
//!
//!     weft-actor-node --name a --listen tcp/127.0.0.1:7447 --serve counter-a
//!     weft-actor-node --name b --connect tcp/127.0.0.1:7447 --serve counter-b
//!
//! Registers the factory `counter` (arguments `()`), so supervisors elsewhere can place
//! counters here. Prints `ready NODE_ID` once it has joined and serves, then one line per event it
//! sees (`down NODE_ID`, `up NODE_ID` when a cut-off node is back); runs until killed, or until stdin closes with `--exit-on-eof`.

use std::time::Duration;

use weft_actor_remote::demo::Counter;
use weft_actor_remote::{Node, NodeConfig};

fn usage() -> ! {
    eprintln!(
        "usage: weft-actor-node --name NAME [--listen ENDPOINT]… [--connect ENDPOINT]… [--serve ACTOR]… \
         [--lease-ms MS] [--multicast] [--exit-on-eof] [--burn THREADS]"
    );
    std::process::exit(2)
}

#[weft::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = NodeConfig::peer("node");
    config.listen.clear();
    let (mut serve, mut exit_on_eof, mut burn) = (Vec::new(), false, 0usize);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--name" => config.name = value(),
            "--listen" => config = config.listen(&value()),
            "--connect" => config = config.connect(&value()),
            "--serve" => serve.push(value()),
            "--lease-ms" => config.lease = Duration::from_millis(value().parse().unwrap_or_else(|_| usage())),
            "--multicast" => config.multicast = true,
            "--exit-on-eof" => exit_on_eof = true,
            "--burn" => burn = value().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    if config.listen.is_empty() {
        config = config.listen("tcp/127.0.0.1:0");
    }
    let node = Node::start(config).await.unwrap_or_else(|e| {
        eprintln!("weft-actor-node: {e}");
        std::process::exit(1)
    });
    // Other nodes may spawn counters here (remote supervisors, `spawn_on`).
    node.register_factory("counter", |(): ()| Counter::new());
    for name in &serve {
        if let Err(e) = node.serve(name, weft_actor::spawn(Counter::new())).await {
            eprintln!("weft-actor-node: serving {name}: {e}");
            std::process::exit(1)
        }
    }
    burn_cpu(burn);
    println!("ready {}", node.id());
    if exit_on_eof {
        weft::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink())).await.ok();
        node.shutdown().await;
        return;
    }
    let mut seen = std::collections::HashSet::new();
    loop {
        weft::time::sleep(Duration::from_millis(50)).await;
        let down: std::collections::HashSet<_> = node.nodes_down().into_iter().collect();
        // Whoever reads the events may have gone: not a reason to stop serving.
        use std::io::Write;
        for n in down.difference(&seen) {
            let _ = writeln!(std::io::stdout(), "down {n}");
        }
        for n in seen.difference(&down) {
            let _ = writeln!(std::io::stdout(), "up {n}");
        }
        seen = down;
    }
}

/// `--burn N`: keeps this process busy, as a node whose actors compute flat out would be — N
/// threads spinning, and N tasks on this node's runtime computing in ~1 ms slices between
/// yields (its workers stay busy too).
fn burn_cpu(n: usize) {
    for _ in 0..n {
        std::thread::spawn(|| {
            let mut x = 1u64;
            loop {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        weft::spawn(async {
            let mut x = 1u64;
            loop {
                let slice = std::time::Instant::now();
                while slice.elapsed() < Duration::from_millis(1) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                weft::task::yield_now().await;
            }
        });
    }
}
