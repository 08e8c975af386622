//! The size of this CPU's L1 data cache, which
//! [`Config::n_buffer_for_cache`](crate::Config::n_buffer_for_cache) sizes
//! buffers to.

/// Where Linux describes CPU 0's caches: one `index<N>` directory per cache,
/// each with `level`, `type` and `size` (Documentation/ABI/testing/
/// sysfs-devices-system-cpu, "cache/index*").
const CPU0_CACHES: &str = "/sys/devices/system/cpu/cpu0/cache";

/// Bytes of CPU 0's level-1 data cache as Linux reports it, or `None` where
/// it cannot be read (not Linux, no sysfs, a container that hides it).
///
/// Read from sysfs on each call: call it once and keep the answer.
///
/// ```
/// if let Some(bytes) = hspc::l1d_bytes() {
///     assert!(bytes >= 1024, "an L1d of {bytes} bytes");
/// }
/// ```
pub fn l1d_bytes() -> Option<usize> {
    let dir = std::fs::read_dir(CPU0_CACHES).ok()?;
    dir.flatten().find_map(|entry| {
        let read = |name: &str| read_small(&entry.path().join(name));
        let (level, kind) = (read("level")?, read("type")?);
        (level.trim() == "1" && kind.trim() == "Data")
            .then(|| parse_size(&read("size")?))
            .flatten()
    })
}

/// Bytes read of one sysfs attribute at most: its values here (`1`, `Data`,
/// `48K`) are a few bytes, so a longer one is not what this file expects.
const ATTRIBUTE_MAX_BYTES: u64 = 64;

/// The text of the regular file at `path`, if it holds at most
/// [`ATTRIBUTE_MAX_BYTES`].
fn read_small(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(ATTRIBUTE_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .ok()?;
    (text.len() as u64 <= ATTRIBUTE_MAX_BYTES).then_some(text)
}

/// A sysfs cache size: a number of bytes with an optional `K`, `M` or `G`
/// (powers of 1024), as in `48K`.
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::{parse_size, read_small, ATTRIBUTE_MAX_BYTES};

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("hspc-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (small, big) = (dir.join("small"), dir.join("big"));
        std::fs::write(&small, "48K\n").unwrap();
        std::fs::write(&big, "9".repeat(ATTRIBUTE_MAX_BYTES as usize + 1)).unwrap();
        assert_eq!(read_small(&small).as_deref(), Some("48K\n"));
        assert_eq!(read_small(&big), None, "longer than an attribute");
        assert_eq!(read_small(&dir), None, "a directory");
        assert_eq!(read_small(&dir.join("absent")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("1024K"), Some(1 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("K"), None);
    }
}
