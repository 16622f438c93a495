//! The worker pool a context owns: created once with the context, used by every call on it.
