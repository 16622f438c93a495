// Package b2frame reads and writes Blosc2 frames (.b2frame, .b2nd) through libb2frame.
//
// A Frame may be used from several goroutines at once (reads run in parallel, writes are
// serialized by the library); Close must not race with other calls on the same Frame.
package b2frame

/*
#cgo pkg-config: b2frame
#include <stdlib.h>
#include <b2frame.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Status codes (b2f_status).
const (
	OK             = int(C.B2F_OK)
	ErrInvalid     = int(C.B2F_ERR_INVALID_ARGUMENT)
	ErrIO          = int(C.B2F_ERR_IO)
	ErrFormat      = int(C.B2F_ERR_FORMAT)
	ErrCorrupt     = int(C.B2F_ERR_CORRUPT)
	ErrUnsupported = int(C.B2F_ERR_UNSUPPORTED)
	ErrNotFound    = int(C.B2F_ERR_NOT_FOUND)
	ErrBufferSmall = int(C.B2F_ERR_BUFFER_TOO_SMALL)
	ErrReadOnly    = int(C.B2F_ERR_READ_ONLY)
	ErrNoMemory    = int(C.B2F_ERR_NO_MEMORY)
	ErrInternal    = int(C.B2F_ERR_INTERNAL)
)

// Codec ids.
const (
	BloscLZ = 0
	LZ4     = 1
	LZ4HC   = 2
	Zlib    = 4
	Zstd    = 5
)

// Error is a failed libb2frame call: its status code and the library's message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("b2frame: %s (status %d)", e.Message, e.Status) }

// call runs f with the goroutine locked to its OS thread, so that the thread-local message
// read after a failure is the one this call set.
func call(f func() C.b2f_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := f()
	if st == C.B2F_OK {
		return nil
	}
	msg := C.GoString(C.b2f_last_error())
	if msg == "" {
		msg = C.GoString(C.b2f_status_message(st))
	}
	return &Error{Status: int(st), Message: msg}
}

// Version is the library's version.
func Version() string { return C.GoString(C.b2f_version()) }

// Frame is an open frame: a contiguous file, a sparse directory, or memory.
type Frame struct {
	h *C.b2f_frame
}

// Options describe a new frame.
type Options struct {
	Sparse    bool  // a directory of chunk files instead of one file
	Chunksize int32 // bytes per chunk; 0 for variable-length chunks
	Typesize  int32 // bytes per item (default 1)
	Codec     uint8 // BloscLZ (default), LZ4, LZ4HC, Zlib, Zstd
	Clevel    uint8 // 0..9 (default 5)
}

// Open opens the frame at path, for reading or, with write, for changes too.
func Open(path string, write bool) (*Frame, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	mode := C.uint32_t(C.B2F_READ)
	if write {
		mode |= C.B2F_WRITE
	}
	f := &Frame{}
	if err := call(func() C.b2f_status { return C.b2f_open(cpath, mode, &f.h) }); err != nil {
		return nil, err
	}
	return f, nil
}

// Create makes a new, empty frame at path (replacing what is there); "" makes one in memory.
func Create(path string, o Options) (*Frame, error) {
	var s C.b2f_storage
	s.struct_size = C.uint32_t(unsafe.Sizeof(s))
	s.contiguous = C.bool(!o.Sparse)
	s.chunksize = C.int32_t(o.Chunksize)
	C.b2f_cparams_default(&s.cparams)
	if o.Typesize > 0 {
		s.cparams.typesize = C.int32_t(o.Typesize)
	}
	s.cparams.codec = C.uint8_t(o.Codec)
	if o.Clevel > 0 {
		s.cparams.clevel = C.uint8_t(o.Clevel)
	}
	var cpath *C.char
	if path != "" {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	f := &Frame{}
	if err := call(func() C.b2f_status { return C.b2f_create(cpath, &s, &f.h) }); err != nil {
		return nil, err
	}
	return f, nil
}

// Close releases the frame (every change is already committed). Closing twice is harmless.
func (f *Frame) Close() error {
	if f.h != nil {
		C.b2f_close(f.h)
		f.h = nil
	}
	return nil
}

func (f *Frame) handle() (*C.b2f_frame, error) {
	if f.h == nil {
		return nil, &Error{Status: ErrInvalid, Message: "the frame is closed"}
	}
	return f.h, nil
}

// Info is what b2f_get_info reports.
type Info struct {
	NChunks, NBytes, CBytes int64
	Typesize, Chunksize     int32
	Codec, Clevel           uint8
	Contiguous              bool
}

// Info reports the frame's sizes and parameters.
func (f *Frame) Info() (Info, error) {
	h, err := f.handle()
	if err != nil {
		return Info{}, err
	}
	var i C.b2f_info
	i.struct_size = C.uint32_t(unsafe.Sizeof(i))
	if err := call(func() C.b2f_status { return C.b2f_get_info(h, &i) }); err != nil {
		return Info{}, err
	}
	return Info{int64(i.nchunks), int64(i.nbytes), int64(i.cbytes), int32(i.typesize),
		int32(i.chunksize), uint8(i.codec), uint8(i.clevel), bool(i.contiguous)}, nil
}

// NChunks is the number of chunks.
func (f *Frame) NChunks() (int64, error) {
	i, err := f.Info()
	return i.NChunks, err
}

// Chunk returns chunk i, decompressed.
func (f *Frame) Chunk(i int64) ([]byte, error) {
	h, err := f.handle()
	if err != nil {
		return nil, err
	}
	var n C.size_t
	if err := call(func() C.b2f_status { return C.b2f_get_chunk(h, C.int64_t(i), nil, 0, &n) }); err != nil {
		return nil, err
	}
	buf := make([]byte, int(n)+1)
	err = call(func() C.b2f_status {
		return C.b2f_get_chunk(h, C.int64_t(i), unsafe.Pointer(&buf[0]), C.size_t(len(buf)), &n)
	})
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// Append compresses data with the frame's parameters and appends it as a new chunk.
func (f *Frame) Append(data []byte) error {
	h, err := f.handle()
	if err != nil {
		return err
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	return call(func() C.b2f_status { return C.b2f_append(h, p, C.size_t(len(data)), nil) })
}

type getter func(h *C.b2f_frame, name *C.char, dst unsafe.Pointer, dstLen C.size_t, lenOut *C.size_t) C.b2f_status

// sized runs the two-call pattern: ask the size, then read.
func (f *Frame) sized(name string, get getter) ([]byte, error) {
	h, err := f.handle()
	if err != nil {
		return nil, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var n C.size_t
	if err := call(func() C.b2f_status { return get(h, cname, nil, 0, &n) }); err != nil {
		return nil, err
	}
	buf := make([]byte, int(n)+1)
	err = call(func() C.b2f_status { return get(h, cname, unsafe.Pointer(&buf[0]), C.size_t(len(buf)), &n) })
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// Meta returns the content of the metalayer name (usually msgpack).
func (f *Frame) Meta(name string) ([]byte, error) {
	return f.sized(name, func(h *C.b2f_frame, n *C.char, d unsafe.Pointer, l C.size_t, o *C.size_t) C.b2f_status {
		return C.b2f_meta_get(h, n, d, l, o)
	})
}

// VLMeta returns the content of the variable-length metalayer name.
func (f *Frame) VLMeta(name string) ([]byte, error) {
	return f.sized(name, func(h *C.b2f_frame, n *C.char, d unsafe.Pointer, l C.size_t, o *C.size_t) C.b2f_status {
		return C.b2f_vlmeta_get(h, n, d, l, o)
	})
}

// SetVLMeta adds or replaces the variable-length metalayer name.
func (f *Frame) SetVLMeta(name string, value []byte) error {
	h, err := f.handle()
	if err != nil {
		return err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var p unsafe.Pointer
	if len(value) > 0 {
		p = unsafe.Pointer(&value[0])
	}
	return call(func() C.b2f_status { return C.b2f_vlmeta_set(h, cname, p, C.size_t(len(value))) })
}
