//! The C API (`b2f_*`). Stub.
