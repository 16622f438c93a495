# frozen_string_literal: true

# B2Frame: Blosc2 frames (.b2frame, .b2nd) from Ruby, through libb2frame and the ffi gem.
#
#   require_relative "b2frame"
#   B2Frame::Frame.open("data.b2frame") { |f| puts f.nchunks; p f.chunk(0).bytesize }
#
# The library is found as $B2F_LIB, else as "b2frame" on the loader's path.
require "ffi"

module B2Frame
  extend FFI::Library
  ffi_lib ENV.fetch("B2F_LIB", "b2frame")

  READ = 1
  WRITE = 2
  CODECS = { blosclz: 0, lz4: 1, lz4hc: 2, zlib: 4, zstd: 5 }.freeze

  # A failed call: the status code and the library's message.
  class Error < StandardError
    attr_reader :status

    def initialize(status, message)
      @status = status
      super("#{message} (status #{status})")
    end
  end

  class CParams < FFI::Struct
    layout :struct_size, :uint32, :codec, :uint8, :clevel, :uint8,
           :filters, [:uint8, 6], :filters_meta, [:uint8, 6],
           :typesize, :int32, :blocksize, :int32, :nthreads, :int16,
           :splitmode, :uint8, :use_dict, :uint8
  end

  class Storage < FFI::Struct
    layout :struct_size, :uint32, :contiguous, :bool, :chunksize, :int32, :cparams, CParams
  end

  class Info < FFI::Struct
    layout :struct_size, :uint32, :nchunks, :int64, :nbytes, :int64, :cbytes, :int64,
           :typesize, :int32, :chunksize, :int32, :blocksize, :int32,
           :codec, :uint8, :clevel, :uint8, :filters, [:uint8, 6], :filters_meta, [:uint8, 6],
           :contiguous, :bool, :format_version, :uint8
  end

  attach_function :b2f_version, [], :string
  attach_function :b2f_last_error, [], :string
  attach_function :b2f_status_message, [:int32], :string
  attach_function :b2f_cparams_default, [:pointer], :void
  attach_function :b2f_open, %i[string uint32 pointer], :int32
  attach_function :b2f_create, %i[string pointer pointer], :int32
  attach_function :b2f_close, [:pointer], :void
  attach_function :b2f_get_info, %i[pointer pointer], :int32
  attach_function :b2f_get_chunk, %i[pointer int64 pointer size_t pointer], :int32
  attach_function :b2f_append, %i[pointer pointer size_t pointer], :int32
  attach_function :b2f_meta_get, %i[pointer string pointer size_t pointer], :int32
  attach_function :b2f_vlmeta_get, %i[pointer string pointer size_t pointer], :int32
  attach_function :b2f_vlmeta_set, %i[pointer string pointer size_t], :int32

  def self.version = b2f_version

  # Raises B2Frame::Error unless the call returned B2F_OK. Ruby threads are OS threads, so
  # the thread-local message read right after the call is this call's.
  def self.check(status)
    return if status.zero?

    msg = b2f_last_error
    msg = b2f_status_message(status) if msg.nil? || msg.empty?
    raise Error.new(status, msg)
  end

  # An open frame: a contiguous file, a sparse directory, or memory.
  class Frame
    def self.open(path, write: false)
      out = FFI::MemoryPointer.new(:pointer)
      B2Frame.check(B2Frame.b2f_open(path, write ? READ | WRITE : READ, out))
      frame = new(out.read_pointer)
      return frame unless block_given?

      begin
        yield frame
      ensure
        frame.close
      end
    end

    # A new empty frame at path (nil: in memory).
    def self.create(path, chunksize: 0, typesize: 1, codec: :blosclz, clevel: 5, sparse: false)
      s = Storage.new
      s[:struct_size] = Storage.size
      s[:contiguous] = !sparse
      s[:chunksize] = chunksize
      B2Frame.b2f_cparams_default(s[:cparams].to_ptr)
      s[:cparams][:typesize] = typesize
      s[:cparams][:codec] = CODECS.fetch(codec)
      s[:cparams][:clevel] = clevel
      out = FFI::MemoryPointer.new(:pointer)
      B2Frame.check(B2Frame.b2f_create(path, s.to_ptr, out))
      new(out.read_pointer)
    end

    def initialize(handle)
      @h = handle
    end

    def close
      B2Frame.b2f_close(@h) if @h
      @h = nil
    end

    def info
      i = Info.new
      i[:struct_size] = Info.size
      B2Frame.check(B2Frame.b2f_get_info(handle, i.to_ptr))
      i
    end

    def nchunks = info[:nchunks]

    def chunk(index) = sized { |dst, len, out| B2Frame.b2f_get_chunk(handle, index, dst, len, out) }

    def append(data)
      buf = FFI::MemoryPointer.from_string(data.b)
      B2Frame.check(B2Frame.b2f_append(handle, buf, data.bytesize, nil))
    end

    def meta(name) = sized { |dst, len, out| B2Frame.b2f_meta_get(handle, name, dst, len, out) }

    def vlmeta(name) = sized { |dst, len, out| B2Frame.b2f_vlmeta_get(handle, name, dst, len, out) }

    def set_vlmeta(name, value)
      buf = FFI::MemoryPointer.from_string(value.b)
      B2Frame.check(B2Frame.b2f_vlmeta_set(handle, name, buf, value.bytesize))
    end

    private

    def handle
      raise Error.new(-1, "the frame is closed") unless @h

      @h
    end

    # The two-call pattern: ask the size, then read into a buffer of that size.
    def sized
      n = FFI::MemoryPointer.new(:size_t)
      B2Frame.check(yield(nil, 0, n))
      len = n.read(:size_t)
      buf = FFI::MemoryPointer.new(:uint8, [len, 1].max)
      B2Frame.check(yield(buf, len, n))
      buf.read_bytes(n.read(:size_t))
    end
  end
end
