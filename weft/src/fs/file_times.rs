//! `FileTimes`: the timestamps [`File::set_times`](super::File::set_times) sets, weft's own
//! type as tokio's (it records the times itself and becomes std's `FileTimes` only inside the
//! blocking hop).

use std::time::SystemTime;

#[cfg(target_vendor = "apple")]
use std::os::darwin::fs::FileTimesExt;
#[cfg(windows)]
use std::os::windows::fs::FileTimesExt;

/// The timestamps to set on a file with [`File::set_times`](super::File::set_times); a time
/// left unset is left unchanged.
///
/// tokio's counterpart of [`std::fs::FileTimes`], with the same builder methods.
///
/// ```no_run
/// # async fn dox() -> std::io::Result<()> {
/// use std::time::SystemTime;
/// use weft::fs::{File, FileTimes};
///
/// let file = File::options().write(true).open("notes.txt").await?;
/// file.set_times(FileTimes::new().set_accessed(SystemTime::now()).set_modified(SystemTime::now())).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "must be applied to a file via `File::set_times` to have any effect"]
pub struct FileTimes {
    accessed: Option<SystemTime>,
    modified: Option<SystemTime>,
    #[cfg(any(windows, target_vendor = "apple"))]
    created: Option<SystemTime>,
}

impl FileTimes {
    /// No timestamps set.
    pub fn new() -> FileTimes {
        FileTimes::default()
    }

    /// Sets the last access time.
    pub fn set_accessed(mut self, t: SystemTime) -> FileTimes {
        self.accessed = Some(t);
        self
    }

    /// Sets the last modification time.
    pub fn set_modified(mut self, t: SystemTime) -> FileTimes {
        self.modified = Some(t);
        self
    }

    /// Sets the creation time (Apple platforms and Windows).
    #[cfg(any(windows, target_vendor = "apple"))]
    pub fn set_created(mut self, t: SystemTime) -> FileTimes {
        self.created = Some(t);
        self
    }

    /// std's `FileTimes` with the same times set.
    pub(crate) fn to_std(&self) -> std::fs::FileTimes {
        let mut times = std::fs::FileTimes::new();
        if let Some(t) = self.accessed {
            times = times.set_accessed(t);
        }
        if let Some(t) = self.modified {
            times = times.set_modified(t);
        }
        #[cfg(any(windows, target_vendor = "apple"))]
        if let Some(t) = self.created {
            times = times.set_created(t);
        }
        times
    }
}
