//! c-blosc2's automatic blocksize and split decisions (stune.c).
