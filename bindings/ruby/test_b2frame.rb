# frozen_string_literal: true

# Tests of the Ruby binding against the library in $B2F_LIB (or on the loader's path).
require "minitest/autorun"
require "digest"
require "json"
require "tmpdir"
require_relative "b2frame"

class TestB2Frame < Minitest::Test
  def chunk_data(k)
    (0...1000).map { |i| k * 1000 + i / 3 }.pack("l<*")
  end

  def test_create_append_reopen
    Dir.mktmpdir do |dir|
      path = File.join(dir, "rb.b2frame")
      f = B2Frame::Frame.create(path, chunksize: 4000, typesize: 4, codec: :lz4)
      3.times { |k| f.append(chunk_data(k)) }
      f.set_vlmeta("lang", "ruby")
      f.close
      B2Frame::Frame.open(path) do |g|
        assert_equal 3, g.nchunks
        3.times { |k| assert_equal chunk_data(k), g.chunk(k) }
        assert_equal "ruby", g.vlmeta("lang")
        err = assert_raises(B2Frame::Error) { g.append(chunk_data(9)) }
        assert_equal(-8, err.status)
      end
    end
  end

  def test_errors_carry_status_and_message
    err = assert_raises(B2Frame::Error) { B2Frame::Frame.open("/nonexistent/x.b2frame") }
    assert_equal(-2, err.status)
    assert_includes err.message, "x.b2frame"
    f = B2Frame::Frame.create(nil, typesize: 4)
    err = assert_raises(B2Frame::Error) { f.meta("nope") }
    assert_equal(-6, err.status)
    f.close
    assert_raises(B2Frame::Error) { f.chunk(0) }
  end

  def test_reads_vectors_written_by_c_blosc2
    dir = ENV.fetch("B2F_VECTORS", File.join(__dir__, "../../../shared/vectors"))
    manifest = File.join(dir, "manifest.json")
    skip "no reference vectors" unless File.exist?(manifest)
    checked = 0
    JSON.parse(File.read(manifest))["entries"].first(40).each do |e|
      B2Frame::Frame.open(File.join(dir, e["path"])) do |f|
        assert_equal e["nchunks"], f.nchunks, e["path"]
        e["chunk_sha256"].each_with_index do |want, i|
          next if want.nil?

          assert_equal want, Digest::SHA256.hexdigest(f.chunk(i)), "#{e['path']} chunk #{i}"
          checked += 1
        end
        e["meta"].each { |m| assert_equal m["hex"], f.meta(m["name"]).unpack1("H*") }
      end
    end
    assert_operator checked, :>, 50
  end
end
