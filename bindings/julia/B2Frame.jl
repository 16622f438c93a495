"""
    B2Frame

Blosc2 frames (.b2frame, .b2nd) from Julia through libb2frame, with the same surface as the
Go and Ruby bindings. Untested here (Julia cannot be installed on the project's machines).

    using B2Frame
    f = B2Frame.open("data.b2frame")
    println(B2Frame.nchunks(f)); data = B2Frame.chunk(f, 0)
    B2Frame.close(f)
"""
module B2Frame

const lib = get(ENV, "B2F_LIB", "libb2frame")
const READ = UInt32(1)
const WRITE = UInt32(2)

struct B2FError <: Exception
    status::Int32
    message::String
end
Base.showerror(io::IO, e::B2FError) = print(io, "b2frame: ", e.message, " (status ", e.status, ")")

# Julia tasks may move between threads: the message is read right after the call, with no
# yield point in between.
function check(status::Int32)
    status == 0 && return nothing
    msg = unsafe_string(ccall((:b2f_last_error, lib), Cstring, ()))
    isempty(msg) && (msg = unsafe_string(ccall((:b2f_status_message, lib), Cstring, (Int32,), status)))
    throw(B2FError(status, msg))
end

mutable struct Frame
    h::Ptr{Cvoid}
end

version() = unsafe_string(ccall((:b2f_version, lib), Cstring, ()))

function open(path::AbstractString; write::Bool=false)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    mode = write ? (READ | WRITE) : READ
    check(ccall((:b2f_open, lib), Int32, (Cstring, UInt32, Ref{Ptr{Cvoid}}), path, mode, out))
    return Frame(out[])
end

function close(f::Frame)
    f.h == C_NULL || ccall((:b2f_close, lib), Cvoid, (Ptr{Cvoid},), f.h)
    f.h = C_NULL
    return nothing
end

handle(f::Frame) = f.h == C_NULL ? throw(B2FError(-1, "the frame is closed")) : f.h

# b2f_info, read as raw bytes at its C layout (struct_size first).
function nchunks(f::Frame)
    info = zeros(UInt8, 128)
    info[1:4] = reinterpret(UInt8, [UInt32(64)])  # sizeof(b2f_info)
    check(ccall((:b2f_get_info, lib), Int32, (Ptr{Cvoid}, Ptr{UInt8}), handle(f), info))
    return reinterpret(Int64, info[9:16])[1]
end

function sized(call)
    n = Ref{Csize_t}(0)
    check(call(C_NULL, 0, n))
    buf = Vector{UInt8}(undef, max(n[], 1))
    check(call(pointer(buf), length(buf), n))
    return buf[1:n[]]
end

chunk(f::Frame, i::Integer) = sized((dst, len, n) -> ccall((:b2f_get_chunk, lib), Int32,
    (Ptr{Cvoid}, Int64, Ptr{Cvoid}, Csize_t, Ref{Csize_t}), handle(f), i, dst, len, n))

meta(f::Frame, name::AbstractString) = sized((dst, len, n) -> ccall((:b2f_meta_get, lib), Int32,
    (Ptr{Cvoid}, Cstring, Ptr{Cvoid}, Csize_t, Ref{Csize_t}), handle(f), name, dst, len, n))

vlmeta(f::Frame, name::AbstractString) = sized((dst, len, n) -> ccall((:b2f_vlmeta_get, lib), Int32,
    (Ptr{Cvoid}, Cstring, Ptr{Cvoid}, Csize_t, Ref{Csize_t}), handle(f), name, dst, len, n))

function append(f::Frame, data::Vector{UInt8})
    check(ccall((:b2f_append, lib), Int32, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, Ptr{Int64}),
        handle(f), data, length(data), C_NULL))
end

end
