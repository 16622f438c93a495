//! The engine's error type. Every variant maps to one `b2f_status` code at the C boundary.

use std::fmt;

/// What went wrong, with a message that names the structure, the number and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Format(String),
    #[error("{0}")]
    Corrupt(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    NotFound(String),
    #[error("destination too small: {needed} bytes needed, {given} given")]
    BufferTooSmall { needed: usize, given: usize },
    #[error("{0}")]
    ReadOnly(String),
    #[error("{0}")]
    NoMemory(String),
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    // The constructors are cold and out of line: every check that can fail then costs its
    // caller a branch and a call, not an inlined `format!` (allocation and copy).
    #[cold]
    #[inline(never)]
    pub fn invalid(msg: impl fmt::Display) -> Self {
        Error::InvalidArgument(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn format(msg: impl fmt::Display) -> Self {
        Error::Format(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn corrupt(msg: impl fmt::Display) -> Self {
        Error::Corrupt(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn unsupported(msg: impl fmt::Display) -> Self {
        Error::Unsupported(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn not_found(msg: impl fmt::Display) -> Self {
        Error::NotFound(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn no_memory(msg: impl fmt::Display) -> Self {
        Error::NoMemory(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn read_only(msg: impl fmt::Display) -> Self {
        Error::ReadOnly(msg.to_string())
    }
    #[cold]
    #[inline(never)]
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            context: context.to_string(),
            source,
        }
    }

    /// Prefixes the message with where it happened ("chunk 17: ...").
    #[cold]
    #[inline(never)]
    pub fn context(self, what: impl fmt::Display) -> Self {
        match self {
            Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
            Error::Io { context, source } => Error::Io {
                context: format!("{what}: {context}"),
                source,
            },
            Error::Format(m) => Error::Format(format!("{what}: {m}")),
            Error::Corrupt(m) => Error::Corrupt(format!("{what}: {m}")),
            Error::Unsupported(m) => Error::Unsupported(format!("{what}: {m}")),
            Error::NotFound(m) => Error::NotFound(format!("{what}: {m}")),
            Error::ReadOnly(m) => Error::ReadOnly(format!("{what}: {m}")),
            Error::NoMemory(m) => Error::NoMemory(format!("{what}: {m}")),
            Error::Internal(m) => Error::Internal(format!("{what}: {m}")),
            e @ Error::BufferTooSmall { .. } => e,
        }
    }
}

/// Shorthand for `return Err(Error::corrupt(format_args!(...)))`, formatted in the cold
/// constructor rather than at the call site.
#[macro_export]
#[doc(hidden)]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::error::Error::$kind(format_args!($($arg)*)))
    };
}
