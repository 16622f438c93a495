//! Special-value chunks: a header (and for `Value`, one item) standing for a whole chunk.
