//! `weft::fs`: every helper's behaviour, `File` read-ahead/seek/write-behind semantics,
//! errors identical to std's, concurrency, and files that change under a reader.

mod support;

use std::io::SeekFrom;
use std::path::{Path, PathBuf};

use weft::fs::{self, DirBuilder, File, OpenOptions};
use weft::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("weft-fs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Deterministic bytes: byte i is (i * 7 + i / 251) mod 256.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(7) + i / 251) as u8).collect()
}

/// `n` numbered JSON-ish lines.
fn lines_text(n: usize) -> String {
    (0..n).map(|i| format!("{{\"line\":{i},\"pad\":\"{}\"}}\n", "x".repeat(i % 97))).collect()
}

#[test]
fn whole_file_helpers() {
    for (flavor, rt) in support::flavors() {
        let dir = Scratch::new(&format!("helpers-{flavor}"));
        rt.block_on(async {
            let a = dir.join("a.txt");
            fs::write(&a, b"hello weft").await.unwrap();
            assert_eq!(fs::read(&a).await.unwrap(), b"hello weft");
            assert_eq!(fs::read_to_string(&a).await.unwrap(), "hello weft");
            assert_eq!(fs::metadata(&a).await.unwrap().len(), 10);
            assert_eq!(fs::copy(&a, dir.join("b.txt")).await.unwrap(), 10);
            fs::rename(dir.join("b.txt"), dir.join("c.txt")).await.unwrap();
            assert!(!fs::try_exists(dir.join("b.txt")).await.unwrap());
            assert_eq!(fs::read(dir.join("c.txt")).await.unwrap(), b"hello weft");
            fs::remove_file(dir.join("c.txt")).await.unwrap();
            assert!(!fs::try_exists(dir.join("c.txt")).await.unwrap());
            assert!(fs::try_exists(&a).await.unwrap());

            fs::write(dir.join("bad.txt"), [0xff, 0xfe, 0x00]).await.unwrap();
            let err = fs::read_to_string(dir.join("bad.txt")).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        });
    }
}

#[test]
fn errors_are_std_errors_unchanged() {
    let dir = Scratch::new("errors");
    support::ct().block_on(async {
        let missing = dir.join("missing");
        let ours = File::open(&missing).await.unwrap_err();
        let std = std::fs::File::open(&missing).unwrap_err();
        assert_eq!(ours.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(ours.to_string(), std.to_string());
        assert_eq!(fs::read(&missing).await.unwrap_err().to_string(), std::fs::read(&missing).unwrap_err().to_string());
        let ours = fs::remove_dir(&missing).await.unwrap_err();
        assert_eq!(ours.kind(), std::io::ErrorKind::NotFound);

        fs::create_dir(dir.join("d")).await.unwrap();
        let err = fs::create_dir(dir.join("d")).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        fs::write(dir.join("d/f"), b"x").await.unwrap();
        assert!(fs::remove_dir(dir.join("d")).await.is_err(), "a non-empty directory is not removed");
        let err = File::create_new(dir.join("d/f")).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        // A directory opened as a file opens, but reading it is an error (EISDIR), not a hang.
        let mut d = File::open(dir.join("d")).await.unwrap();
        let mut buf = Vec::new();
        assert!(d.read_to_end(&mut buf).await.is_err());
    });
}

#[test]
fn directories_and_read_dir_batches() {
    for (flavor, rt) in support::flavors() {
        let dir = Scratch::new(&format!("dirs-{flavor}"));
        rt.block_on(async {
            fs::create_dir_all(dir.join("x/y/z")).await.unwrap();
            DirBuilder::new().recursive(true).mode(0o700).create(dir.join("m/n")).await.unwrap();
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(dir.join("m/n")).await.unwrap().permissions().mode() & 0o777, 0o700);
            assert!(DirBuilder::new().create(dir.join("p/q")).await.is_err(), "not recursive: parent missing");

            // More entries than one batch (256), plus one directory.
            let list = dir.join("list");
            fs::create_dir(&list).await.unwrap();
            for i in 0..600 {
                std::fs::write(list.join(format!("f{i:03}")), i.to_string()).unwrap();
            }
            fs::create_dir(list.join("sub")).await.unwrap();
            let mut rd = fs::read_dir(&list).await.unwrap();
            let mut names = Vec::new();
            let mut dirs = 0;
            while let Some(e) = rd.next_entry().await.unwrap() {
                assert_eq!(e.path(), list.join(e.file_name()));
                if e.file_type().await.unwrap().is_dir() {
                    dirs += 1;
                    assert!(e.metadata().await.unwrap().is_dir());
                }
                names.push(e.file_name().into_string().unwrap());
            }
            assert!(rd.next_entry().await.unwrap().is_none(), "stays at the end");
            names.sort();
            let mut want: Vec<String> = (0..600).map(|i| format!("f{i:03}")).collect();
            want.push("sub".into());
            assert_eq!(names, want);
            assert_eq!(dirs, 1);

            fs::remove_dir_all(&list).await.unwrap();
            assert!(!fs::try_exists(&list).await.unwrap());
            assert!(fs::read_dir(&list).await.is_err());
        });
    }
}

#[test]
fn links_permissions_canonicalize() {
    let dir = Scratch::new("links");
    support::ct().block_on(async {
        let f = dir.join("f");
        fs::write(&f, b"data").await.unwrap();
        fs::symlink(&f, dir.join("s")).await.unwrap();
        assert_eq!(fs::read_link(dir.join("s")).await.unwrap(), f);
        assert!(fs::symlink_metadata(dir.join("s")).await.unwrap().file_type().is_symlink());
        assert!(fs::metadata(dir.join("s")).await.unwrap().is_file());
        assert_eq!(fs::canonicalize(dir.join("s")).await.unwrap(), std::fs::canonicalize(&f).unwrap());
        fs::hard_link(&f, dir.join("h")).await.unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(fs::metadata(&f).await.unwrap().nlink(), 2);

        let mut perm = fs::metadata(&f).await.unwrap().permissions();
        perm.set_readonly(true);
        fs::set_permissions(&f, perm).await.unwrap();
        assert!(fs::metadata(&f).await.unwrap().permissions().readonly());
        let file = File::open(&f).await.unwrap();
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o640)).await.unwrap();
        assert_eq!(file.metadata().await.unwrap().permissions().mode() & 0o777, 0o640);
        assert!(!fs::metadata(&f).await.unwrap().permissions().readonly());

        // A dangling symlink does not "exist".
        fs::symlink(dir.join("nowhere"), dir.join("dangling")).await.unwrap();
        assert!(!fs::try_exists(dir.join("dangling")).await.unwrap());
    });
}

#[test]
fn bufreader_lines_and_read_to_end_match_the_file() {
    for (flavor, rt) in support::flavors() {
        let dir = Scratch::new(&format!("lines-{flavor}"));
        // ~5.5 MB: several read-ahead chunks.
        let text = lines_text(100_000);
        std::fs::write(dir.join("l.jsonl"), &text).unwrap();
        rt.block_on(async {
            let file = File::open(dir.join("l.jsonl")).await.unwrap();
            let mut lines = BufReader::new(file).lines();
            let mut n = 0;
            let mut expect = text.lines();
            while let Some(line) = lines.next_line().await.unwrap() {
                assert_eq!(Some(line.as_str()), expect.next());
                n += 1;
            }
            assert_eq!(n, 100_000);

            let mut file = File::open(dir.join("l.jsonl")).await.unwrap();
            let mut all = Vec::new();
            file.read_to_end(&mut all).await.unwrap();
            assert_eq!(all, text.as_bytes());
            // A small max_buf_size still reads everything, in more hops.
            let mut file = File::open(dir.join("l.jsonl")).await.unwrap();
            file.set_max_buf_size(4096);
            let mut small = String::new();
            file.read_to_string(&mut small).await.unwrap();
            assert_eq!(small, text);
        });
    }
}

#[test]
fn seek_after_partial_read_is_at_the_logical_position() {
    let dir = Scratch::new("seek");
    let data = pattern(3 * 1024 * 1024 + 17);
    std::fs::write(dir.join("p"), &data).unwrap();
    support::mt(2).block_on(async {
        let mut f = File::open(dir.join("p")).await.unwrap();
        let mut buf = [0u8; 10];
        f.read_exact(&mut buf).await.unwrap();
        assert_eq!(buf, data[..10]);
        assert_eq!(f.stream_position().await.unwrap(), 10, "read-ahead is not counted");
        assert_eq!(f.seek(SeekFrom::Current(5)).await.unwrap(), 15);
        assert_eq!(f.read_u8().await.unwrap(), data[15]);
        assert_eq!(f.seek(SeekFrom::Start(3)).await.unwrap(), 3);
        assert_eq!(f.read_u8().await.unwrap(), data[3]);
        assert_eq!(f.seek(SeekFrom::End(-2)).await.unwrap(), data.len() as u64 - 2);
        let mut tail = Vec::new();
        f.read_to_end(&mut tail).await.unwrap();
        assert_eq!(tail, data[data.len() - 2..]);
        // Seek back across a chunk boundary after reading past it.
        f.seek(SeekFrom::Start(0)).await.unwrap();
        let mut first = vec![0u8; 2 * 1024 * 1024 + 100];
        f.read_exact(&mut first).await.unwrap();
        assert_eq!(first, data[..first.len()]);
        assert_eq!(f.seek(SeekFrom::Current(-200)).await.unwrap(), first.len() as u64 - 200);
        assert_eq!(f.read_u8().await.unwrap(), data[first.len() - 200]);
        assert!(f.seek(SeekFrom::Current(-(10 * 1024 * 1024))).await.is_err(), "before the start");
    });
}

#[test]
fn start_seek_twice_without_completion_is_an_error() {
    let dir = Scratch::new("seek2");
    std::fs::write(dir.join("p"), b"abc").unwrap();
    support::ct().block_on(async {
        let mut f = File::open(dir.join("p")).await.unwrap();
        let mut pinned = std::pin::Pin::new(&mut f);
        use weft::io::AsyncSeek;
        pinned.as_mut().start_seek(SeekFrom::Start(1)).unwrap();
        assert!(pinned.as_mut().start_seek(SeekFrom::Start(2)).is_err());
        let pos = std::future::poll_fn(|cx| pinned.as_mut().poll_complete(cx)).await.unwrap();
        assert_eq!(pos, 1);
        assert_eq!(f.read_u8().await.unwrap(), b'b');
    });
}

#[test]
fn write_after_partial_read_lands_at_the_logical_position() {
    let dir = Scratch::new("rw");
    std::fs::write(dir.join("f"), b"0123456789").unwrap();
    support::mt(2).block_on(async {
        let mut f = OpenOptions::new().read(true).write(true).open(dir.join("f")).await.unwrap();
        let mut four = [0u8; 4];
        f.read_exact(&mut four).await.unwrap();
        f.write_all(b"XY").await.unwrap();
        f.flush().await.unwrap();
        assert_eq!(f.read_u8().await.unwrap(), b'6', "reading resumes after the written bytes");
        assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"0123XY6789");
    });
}

#[test]
fn many_small_writes_then_read_back() {
    for (flavor, rt) in support::flavors() {
        let dir = Scratch::new(&format!("writes-{flavor}"));
        rt.block_on(async {
            let data = pattern(5 * 1024 * 1024 + 3);
            let mut f = File::create(dir.join("w")).await.unwrap();
            for chunk in data.chunks(1000) {
                f.write_all(chunk).await.unwrap();
            }
            f.sync_all().await.unwrap();
            assert_eq!(f.metadata().await.unwrap().len(), data.len() as u64);
            assert_eq!(fs::read(dir.join("w")).await.unwrap(), data);

            // Bytes written and never flushed still reach the file once the drain is done
            // (into_std waits for it).
            let mut f = File::create(dir.join("w2")).await.unwrap();
            f.write_all(b"unflushed").await.unwrap();
            let std = f.into_std().await;
            drop(std);
            assert_eq!(std::fs::read(dir.join("w2")).unwrap(), b"unflushed");

            let mut f = OpenOptions::new().append(true).open(dir.join("w2")).await.unwrap();
            f.write_all(b"+more").await.unwrap();
            f.flush().await.unwrap();
            assert_eq!(std::fs::read(dir.join("w2")).unwrap(), b"unflushed+more");
        });
    }
}

#[test]
fn write_error_is_reported_by_flush() {
    let dir = Scratch::new("werr");
    std::fs::write(dir.join("ro"), b"x").unwrap();
    support::ct().block_on(async {
        let mut f = File::open(dir.join("ro")).await.unwrap(); // read-only
        let accepted = f.write(b"nope").await;
        let flushed = f.flush().await;
        assert!(accepted.is_err() || flushed.is_err(), "writing a read-only file must fail somewhere");
        assert_eq!(std::fs::read(dir.join("ro")).unwrap(), b"x");
    });
}

#[test]
fn set_len_drops_stale_read_ahead() {
    let dir = Scratch::new("setlen");
    std::fs::write(dir.join("f"), pattern(100)).unwrap();
    support::ct().block_on(async {
        let mut f = OpenOptions::new().read(true).write(true).open(dir.join("f")).await.unwrap();
        let mut ten = [0u8; 10];
        f.read_exact(&mut ten).await.unwrap();
        f.set_len(20).await.unwrap();
        let mut rest = Vec::new();
        f.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, pattern(100)[10..20]);
    });
}

#[test]
fn clone_and_std_conversions_keep_the_logical_position() {
    let dir = Scratch::new("conv");
    let data = pattern(1000);
    std::fs::write(dir.join("f"), &data).unwrap();
    support::mt(2).block_on(async {
        let mut f = File::open(dir.join("f")).await.unwrap();
        let mut b = [0u8; 100];
        f.read_exact(&mut b).await.unwrap();
        let mut c = f.try_clone().await.unwrap();
        assert_eq!(c.stream_position().await.unwrap(), 100);
        assert_eq!(c.read_u8().await.unwrap(), data[100]);

        let mut f = File::open(dir.join("f")).await.unwrap();
        f.read_exact(&mut b).await.unwrap();
        let mut std = f.try_into_std().expect("nothing in flight after read_exact returned");
        use std::io::Seek;
        assert_eq!(std.stream_position().unwrap(), 100);

        let mut f = File::from_std(std);
        f.read_exact(&mut b).await.unwrap();
        let mut std = f.into_std().await;
        assert_eq!(std.stream_position().unwrap(), 200);
    });
}

#[test]
fn a_file_removed_or_truncated_mid_read_finishes() {
    let dir = Scratch::new("vanish");
    let text = lines_text(60_000); // ~3.3 MB: more than one chunk
    std::fs::write(dir.join("a"), &text).unwrap();
    std::fs::write(dir.join("b"), &text).unwrap();
    support::mt(2).block_on(async {
        // Unlinked: Linux keeps the open inode, so the reader sees every byte.
        let mut r = BufReader::new(File::open(dir.join("a")).await.unwrap());
        let mut first = String::new();
        r.read_line(&mut first).await.unwrap();
        fs::remove_file(dir.join("a")).await.unwrap();
        let mut rest = String::new();
        r.read_to_string(&mut rest).await.unwrap();
        assert_eq!(first.len() + rest.len(), text.len());

        // Truncated: the reader stops at EOF (what it had read ahead, then nothing).
        let mut r = BufReader::new(File::open(dir.join("b")).await.unwrap());
        r.read_line(&mut first).await.unwrap();
        std::fs::OpenOptions::new().write(true).open(dir.join("b")).unwrap().set_len(0).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).await.unwrap();
        assert!(rest.len() < text.len());
    });
}

#[test]
fn concurrent_files_on_many_tasks() {
    let dir = Scratch::new("concurrent");
    let base: PathBuf = dir.0.clone();
    support::mt(2).block_on(async move {
        let mut handles = Vec::new();
        for i in 0..48usize {
            let path = base.join(format!("c{i}"));
            handles.push(weft::spawn(async move {
                let data = pattern(10_000 + i * 977);
                let mut f = File::create(&path).await.unwrap();
                for c in data.chunks(333) {
                    f.write_all(c).await.unwrap();
                }
                f.flush().await.unwrap();
                drop(f);
                let mut back = Vec::new();
                BufReader::new(File::open(&path).await.unwrap()).read_to_end(&mut back).await.unwrap();
                assert_eq!(back, data);
                fs::read(&path).await.unwrap() == data
            }));
        }
        for h in handles {
            assert!(h.await.unwrap());
        }
        let mut rd = fs::read_dir(&base).await.unwrap();
        let mut n = 0;
        while rd.next_entry().await.unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 48);
    });
}

#[test]
fn options_and_constructors() {
    let dir = Scratch::new("options");
    support::ct().block_on(async {
        let p: &Path = &dir.join("o");
        let mut f = File::options().write(true).create(true).mode(0o600).open(p).await.unwrap();
        f.write_all(b"abc").await.unwrap();
        f.flush().await.unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(p).await.unwrap().permissions().mode() & 0o777, 0o600);
        let mut f = File::create(p).await.unwrap(); // truncates
        f.flush().await.unwrap();
        assert_eq!(fs::metadata(p).await.unwrap().len(), 0);
        let opts: OpenOptions = std::fs::OpenOptions::new().read(true).clone().into();
        let mut f = opts.open(p).await.unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).await.unwrap();
        assert_eq!(s, "");
        assert_eq!(f.max_buf_size(), 2 * 1024 * 1024);
    });
}
