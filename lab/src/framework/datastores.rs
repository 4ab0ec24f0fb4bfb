//! Real data stores for the studies that need them (`data-ab`): PostgreSQL and Redis, each
//! started by the lab on 127.0.0.1 only, from a fresh temporary directory of its own, and
//! stopped (directory removed) when its handle drops — on an error too, since every exit from a
//! study unwinds through the handle. Nothing here installs software: a missing server is an
//! error naming the Debian package (`.ci/run` installs them when missing).
//!
//! Both run for throughput, not durability (`fsync`, synchronous commit, snapshots and the
//! append-only file off): a study measures the runtime of the client, not the disk.
//!
//! Rejected: a PostgreSQL or Redis found already running on the machine (its configuration,
//! data and load are not ours to measure with) and containers (not on these machines).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::services::free_port;

/// How long a server may take to accept its first connection.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A fresh, private temporary directory (`/tmp/weft-lab-WHAT-PID-N`), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Result<TempDir, String> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let path = base.join(format!("weft-lab-{what}-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating {}: {e}", path.display())),
            }
        }
        Err(format!("no free temporary directory name for {what} under {}", base.display()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Polls until `addr` accepts a connection, `alive` says the server still runs, or time is up.
fn wait_accepting(what: &str, addr: SocketAddr, mut alive: impl FnMut() -> Result<(), String>) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < READY_WITHIN {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        alive()?;
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{what} did not accept connections on {addr} within {READY_WITHIN:?}"))
}

/// The last lines of a server's log, for an error message.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// A PostgreSQL server (Debian's `postgresql`, the newest version installed), superuser
/// `postgres` with trust authentication over loopback TCP and a Unix socket in its directory.
pub struct Postgres {
    bin: PathBuf,
    dir: TempDir,
    pub port: u16,
}

fn is_root() -> bool {
    // SAFETY: geteuid reads the process's credentials; it touches no memory and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `cmd` as the `postgres` user when the lab runs as root (PostgreSQL refuses to run as root).
fn as_postgres_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn postgres_bin() -> Result<PathBuf, String> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| {
            "PostgreSQL is not installed (apt-get install postgresql; .ci/run does so when missing)".to_string()
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no /usr/lib/postgresql/*/bin/pg_ctl (apt-get install postgresql)".into())
}

fn run(mut cmd: Command, what: &str) -> Result<String, String> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Postgres {
    /// initdb into a fresh directory and start the server; returns once it accepts connections.
    pub fn start() -> Result<Postgres, String> {
        let bin = postgres_bin()?;
        let dir = TempDir::new("postgres")?;
        if is_root() {
            run(
                {
                    let mut c = Command::new("chown");
                    c.args(["postgres:postgres"]).arg(&dir.0);
                    c
                },
                "chown postgres",
            )?;
        }
        let data = dir.0.join("data");
        let mut initdb = as_postgres_user(&bin.join("initdb"));
        initdb.arg("-D").arg(&data).args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        run(initdb, "initdb")?;
        let port = free_port()?;
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\nmax_connections = 200\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 128MB\n\
             log_min_messages = warning\n",
            dir.0.display()
        );
        let conf_path = data.join("postgresql.conf");
        let mut all = std::fs::read_to_string(&conf_path).map_err(|e| format!("{}: {e}", conf_path.display()))?;
        all += &conf;
        std::fs::write(&conf_path, all).map_err(|e| format!("{}: {e}", conf_path.display()))?;
        let pg = Postgres { bin, dir, port };
        let mut start = as_postgres_user(&pg.bin.join("pg_ctl"));
        start.arg("-D").arg(&data).arg("-l").arg(data.join("server.log")).args(["-w", "-t", "30", "start"]);
        if let Err(e) = run(start, "pg_ctl start") {
            return Err(format!("{e}\n{}", log_tail(&data.join("server.log"))));
        }
        wait_accepting("PostgreSQL", SocketAddr::from(([127, 0, 0, 1], port)), || Ok(()))?;
        Ok(pg)
    }

    /// A libpq-style connection string for database `db` (tokio-postgres parses it).
    pub fn conninfo(&self, db: &str) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname={db}", self.port)
    }

    /// Runs `sql` with `psql` in database `db`, stopping at the first error; returns its output
    /// (unaligned, tuples only).
    pub fn psql(&self, db: &str, sql: &str) -> Result<String, String> {
        let mut cmd = Command::new(self.bin.join("psql"));
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres"]).args([
            "-p",
            &self.port.to_string(),
            "-d",
            db,
            "-c",
            sql,
        ]);
        run(cmd, "psql")
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let mut stop = as_postgres_user(&self.bin.join("pg_ctl"));
        stop.arg("-D").arg(self.dir.0.join("data")).args(["-m", "immediate", "-w", "stop"]);
        let _ = stop.stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// A Redis server (Debian's `redis-server`), no persistence, loopback only.
pub struct Redis {
    child: Child,
    // Dropped after the child is stopped (fields drop in order, after `Drop::drop`).
    _dir: TempDir,
    pub addr: SocketAddr,
}

impl Redis {
    pub fn start() -> Result<Redis, String> {
        let dir = TempDir::new("redis")?;
        let port = free_port()?;
        let log = dir.0.join("redis.log");
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "yes", "--daemonize", "no", "--dir"])
            .arg(&dir.0)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!("starting redis-server: {e} (apt-get install redis-server; .ci/run does so when missing)")
            })?;
        let mut redis = Redis { child, _dir: dir, addr: SocketAddr::from(([127, 0, 0, 1], port)) };
        let addr = redis.addr;
        let child = &mut redis.child;
        wait_accepting("redis-server", addr, || match child.try_wait() {
            Ok(Some(status)) => Err(format!("redis-server exited ({status}):\n{}", log_tail(&log))),
            _ => Ok(()),
        })?;
        Ok(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// One command over a fresh connection (the lab's seeding and checks; never under load).
    pub fn command(&self, args: &[&str]) -> Result<Resp, String> {
        let mut s =
            TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).map_err(|e| format!("redis: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
        let mut req = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a.as_bytes());
            req.extend_from_slice(b"\r\n");
        }
        s.write_all(&req).map_err(|e| format!("redis: {e}"))?;
        match read_resp(&mut BufReader::new(s))? {
            Resp::Error(e) => Err(format!("redis {}: {e}", args.first().unwrap_or(&""))),
            r => Ok(r),
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Redis reply (RESP2), as far as the lab needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Resp>),
}

fn read_resp(r: &mut impl BufRead) -> Result<Resp, String> {
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| format!("redis: {e}"))?;
    let line = line.strip_suffix("\r\n").ok_or_else(|| format!("redis: truncated reply {line:?}"))?;
    let (kind, rest) = line.split_at_checked(1).ok_or("redis: empty reply")?;
    let int = || rest.parse::<i64>().map_err(|e| format!("redis: {line:?}: {e}"));
    Ok(match kind {
        "+" => Resp::Simple(rest.into()),
        "-" => Resp::Error(rest.into()),
        ":" => Resp::Integer(int()?),
        "$" if int()? < 0 => Resp::Bulk(None),
        "$" => {
            let mut buf = vec![0; int()? as usize + 2];
            r.read_exact(&mut buf).map_err(|e| format!("redis: {e}"))?;
            buf.truncate(buf.len() - 2);
            Resp::Bulk(Some(buf))
        }
        "*" if int()? < 0 => Resp::Array(Vec::new()),
        "*" => (0..int()?).map(|_| read_resp(r)).collect::<Result<_, _>>().map(Resp::Array)?,
        _ => return Err(format!("redis: unknown reply {line:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_replies_parse() {
        let mut input: &[u8] = b"*4\r\n+OK\r\n:42\r\n$5\r\nhe\r\no\r\n$-1\r\n-ERR nope\r\n";
        assert_eq!(
            read_resp(&mut input).unwrap(),
            Resp::Array(vec![
                Resp::Simple("OK".into()),
                Resp::Integer(42),
                Resp::Bulk(Some(b"he\r\no".to_vec())),
                Resp::Bulk(None)
            ])
        );
        assert_eq!(read_resp(&mut input).unwrap(), Resp::Error("ERR nope".into()));
        assert!(read_resp(&mut &b"$3\r\nab"[..]).is_err(), "a truncated bulk string is an error");
        assert!(read_resp(&mut &b"?x\r\n"[..]).is_err());
    }
}
