//! The files a user names as input (run files, `tune --against`
//! configurations, `--xml` topologies, `plan --check` and `reference compare`
//! run files), read in one place: each must be a regular file (a FIFO would
//! wait for a writer, `/dev/zero` never ends), at most [`MAX_INPUT_BYTES`]
//! long, and UTF-8 text (a UTF-8 byte-order mark is accepted; UTF-16 and
//! compressed files are named as such).

use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest input file corescope reads (a run file of a `--full` run is a few
/// MiB; a 1 M-point series about 60 MiB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The UTF-8 byte-order mark some editors put first.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct InputError {
    /// The file as named.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What is wrong with an input file.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// Opening or reading it failed (missing, a directory, no permission).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, a device or a socket.
    #[error(
        "not a regular file (it is a {0}); corescope reads its inputs only from \
         regular files (a FIFO would wait, a device may never end): save it to a file"
    )]
    NotRegular(&'static str),
    /// Longer than [`MAX_INPUT_BYTES`].
    #[error(
        "larger than {} MiB, the most corescope reads from one input file",
        MAX_INPUT_BYTES >> 20
    )]
    TooLarge,
    /// Not UTF-8 text.
    #[error(transparent)]
    Encoding(#[from] Encoding),
}

/// What bytes that are not UTF-8 text look like instead.
#[derive(Debug, thiserror::Error)]
pub enum Encoding {
    /// Compressed data, with the command that undoes it.
    #[error("not valid UTF-8: looks like {name}-compressed data; {undo} it first")]
    Compressed {
        /// The format.
        name: &'static str,
        /// The command that undoes it.
        undo: &'static str,
    },
    /// UTF-32 text.
    #[error(
        "not valid UTF-8: looks like UTF-32 text (it starts with a UTF-32 \
         byte-order mark); convert it to UTF-8 first (iconv -f UTF-32 -t UTF-8)"
    )]
    Utf32,
    /// UTF-16 text.
    #[error(
        "not valid UTF-8: looks like UTF-16 text; convert it to UTF-8 first \
         (iconv -f UTF-16 -t UTF-8)"
    )]
    Utf16,
    /// Some other invalid byte, at this offset.
    #[error("not valid UTF-8 text (an invalid byte at offset {0}); corescope reads UTF-8")]
    Invalid(usize),
}

/// What a file that is not regular is, for messages.
fn kind_name(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Open `path` for reading if it is a regular file. The open does not wait
/// (`O_NONBLOCK`: a FIFO without a writer opens at once) and the check is made
/// on the opened descriptor, so nothing can be swapped in between.
pub fn open_regular(path: &Path) -> Result<std::fs::File, InputError> {
    use std::os::unix::fs::OpenOptionsExt;
    let err = |problem| InputError {
        path: path.to_path_buf(),
        problem,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| err(Problem::Io(e)))?;
    let meta = file.metadata().map_err(|e| err(Problem::Io(e)))?;
    let t = meta.file_type();
    if t.is_dir() {
        return Err(err(Problem::Io(std::io::Error::from_raw_os_error(
            libc::EISDIR,
        ))));
    }
    if !t.is_file() {
        return Err(err(Problem::NotRegular(kind_name(t))));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(err(Problem::TooLarge));
    }
    Ok(file)
}

/// The bytes of a regular file, at most [`MAX_INPUT_BYTES`] of them.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    let err = |problem| InputError {
        path: path.to_path_buf(),
        problem,
    };
    let file = open_regular(path)?;
    let mut buf = Vec::new();
    // One byte past the cap tells a file that grew (or a /proc file whose size
    // says 0) from one that fits.
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| err(Problem::Io(e)))?;
    if buf.len() as u64 > MAX_INPUT_BYTES {
        return Err(err(Problem::TooLarge));
    }
    Ok(buf)
}

/// The text of a regular file: UTF-8, a leading byte-order mark dropped.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read_bytes(path)?;
    decode(bytes).map_err(|what| InputError {
        path: path.to_path_buf(),
        problem: Problem::Encoding(what),
    })
}

/// Compressed formats by their magic bytes, and the command that undoes them.
const COMPRESSED: [(&[u8], &str, &str); 5] = [
    (b"\x1f\x8b", "gzip", "gunzip"),
    (b"\xfd7zXZ\x00", "xz", "unxz"),
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
    (b"BZh", "bzip2", "bunzip2"),
    (b"PK\x03\x04", "zip", "unzip"),
];

/// UTF-8 text from bytes, or what they look like instead.
pub fn decode(mut bytes: Vec<u8>) -> Result<String, Encoding> {
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    if let Some(&(_, name, undo)) = COMPRESSED.iter().find(|(m, _, _)| bytes.starts_with(m)) {
        return Err(Encoding::Compressed { name, undo });
    }
    let utf32 = bytes.starts_with(b"\xff\xfe\x00\x00") || bytes.starts_with(b"\x00\x00\xfe\xff");
    if utf32 {
        return Err(Encoding::Utf32);
    }
    // UTF-16: a byte-order mark, or ASCII text with every other byte zero.
    let bom16 = bytes.starts_with(b"\xff\xfe") || bytes.starts_with(b"\xfe\xff");
    let zeros_alternate = bytes.len() >= 2
        && bytes.len() % 2 == 0
        && (bytes.iter().step_by(2).all(|&b| b == 0)
            || bytes.iter().skip(1).step_by(2).all(|&b| b == 0));
    if bom16 || zeros_alternate {
        return Err(Encoding::Utf16);
    }
    String::from_utf8(bytes).map_err(|e| Encoding::Invalid(e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_named() {
        assert_eq!(decode(b"\xef\xbb\xbf{}".to_vec()).unwrap(), "{}");
        assert_eq!(decode(b"{}".to_vec()).unwrap(), "{}");
        assert!(decode(b"\x1f\x8b\x08".to_vec())
            .unwrap_err()
            .to_string()
            .contains("gunzip it first"));
        assert!(decode(b"\xff\xfe{\x00".to_vec())
            .unwrap_err()
            .to_string()
            .contains("UTF-16"));
        assert!(decode(b"{\x00}\x00".to_vec())
            .unwrap_err()
            .to_string()
            .contains("UTF-16"));
        assert!(decode(b"\xff\xfe\x00\x00".to_vec())
            .unwrap_err()
            .to_string()
            .contains("UTF-32"));
        assert!(decode(b"{\xff}".to_vec())
            .unwrap_err()
            .to_string()
            .contains("offset 1"));
    }
}
