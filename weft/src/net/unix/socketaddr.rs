//! `SocketAddr`: the address of a Unix-domain socket, weft's own type as in tokio (a thin
//! wrapper of std's, converted with `From` both ways). Every weft API that hands out or
//! takes a Unix socket address uses it: the listener's `accept`/`local_addr`/`bind_addr`,
//! the stream's and its halves' `local_addr`/`peer_addr` and `connect_addr`, and the
//! datagram socket's `recv_from` family.

use std::fmt;
use std::path::Path;

/// The address of a Unix-domain socket: a path, unnamed, or (Linux/Android) a name in the
/// abstract namespace.
///
/// A thin wrapper of [`std::os::unix::net::SocketAddr`]; convert between the two with
/// [`From`]. Its `Debug` output is std's.
#[derive(Clone)]
pub struct SocketAddr(std::os::unix::net::SocketAddr);

impl SocketAddr {
    /// Whether the address is unnamed (an unbound socket, or one of a `pair`).
    pub fn is_unnamed(&self) -> bool {
        self.0.is_unnamed()
    }

    /// The path, if this is a pathname address.
    pub fn as_pathname(&self) -> Option<&Path> {
        self.0.as_pathname()
    }

    /// The name (without the leading NUL byte), if this address is in the abstract
    /// namespace (a Linux/Android feature).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        #[cfg(target_os = "android")]
        use std::os::android::net::SocketAddrExt;
        #[cfg(target_os = "linux")]
        use std::os::linux::net::SocketAddrExt;

        self.0.as_abstract_name()
    }

    /// std's address, borrowed (for the mio calls that take one).
    pub(super) fn as_std(&self) -> &std::os::unix::net::SocketAddr {
        &self.0
    }
}

impl fmt::Debug for SocketAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<std::os::unix::net::SocketAddr> for SocketAddr {
    fn from(addr: std::os::unix::net::SocketAddr) -> SocketAddr {
        SocketAddr(addr)
    }
}

impl From<SocketAddr> for std::os::unix::net::SocketAddr {
    fn from(addr: SocketAddr) -> std::os::unix::net::SocketAddr {
        addr.0
    }
}

/// The address `bind`/`connect` use for `path`: on Linux and Android a path whose first byte is
/// NUL names the abstract namespace (the rest is the name), as in tokio; otherwise a filesystem
/// path.
pub(crate) fn for_path(path: &Path) -> std::io::Result<std::os::unix::net::SocketAddr> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        #[cfg(target_os = "android")]
        use std::os::android::net::SocketAddrExt;
        #[cfg(target_os = "linux")]
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::ffi::OsStrExt;
        if let Some(name) = path.as_os_str().as_bytes().strip_prefix(b"\0") {
            return std::os::unix::net::SocketAddr::from_abstract_name(name);
        }
    }
    std::os::unix::net::SocketAddr::from_pathname(path)
}
