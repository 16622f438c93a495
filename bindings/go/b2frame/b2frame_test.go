package b2frame

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func chunkData(k int) []byte {
	b := make([]byte, 4000)
	for i := 0; i < 1000; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(k*1000+i/3))
	}
	return b
}

func TestCreateAppendReopen(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "go.b2frame")
		f, err := Create(path, Options{Sparse: sparse, Chunksize: 4000, Typesize: 4, Codec: Zstd})
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 3; k++ {
			if err := f.Append(chunkData(k)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SetVLMeta("lang", []byte("go")); err != nil {
			t.Fatal(err)
		}
		f.Close()

		g, err := Open(path, false)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		n, err := g.NChunks()
		if err != nil || n != 3 {
			t.Fatalf("NChunks = %d, %v", n, err)
		}
		for k := int64(0); k < 3; k++ {
			c, err := g.Chunk(k)
			if err != nil || !bytes.Equal(c, chunkData(int(k))) {
				t.Fatalf("chunk %d differs (%v)", k, err)
			}
		}
		if v, err := g.VLMeta("lang"); err != nil || string(v) != "go" {
			t.Fatalf("vlmeta = %q, %v", v, err)
		}
		if err := g.Append(chunkData(9)); err == nil {
			t.Fatal("append on a read-only frame succeeded")
		}
	}
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.b2frame")
	_, err := Open(missing, false)
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrIO || !strings.Contains(e.Message, "missing.b2frame") {
		t.Fatalf("got %v", err)
	}
	f, _ := Create("", Options{Typesize: 4})
	defer f.Close()
	_, err = f.Meta("nope")
	if !errors.As(err, &e) || e.Status != ErrNotFound || e.Message == "" {
		t.Fatalf("got %v", err)
	}
	_, err = f.Chunk(5)
	if !errors.As(err, &e) || e.Status != ErrInvalid {
		t.Fatalf("got %v", err)
	}
	f.Close()
	if _, err := f.Chunk(0); err == nil {
		t.Fatal("a closed frame was used")
	}
}

// A frame written by c-blosc2 gives the manifest's chunk hashes and metalayer bytes.
func TestReadsVectorsWrittenByCBlosc2(t *testing.T) {
	dir := os.Getenv("B2F_VECTORS")
	if dir == "" {
		dir = "../../../../shared/vectors"
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Skipf("no reference vectors: %v", err)
	}
	var m struct {
		Entries []struct {
			Path        string    `json:"path"`
			Nchunks     int64     `json:"nchunks"`
			ChunkSha256 []*string `json:"chunk_sha256"`
			Meta        []struct {
				Name string `json:"name"`
				Hex  string `json:"hex"`
			} `json:"meta"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range m.Entries {
		if !strings.HasPrefix(e.Path, "b2nd/") && !strings.HasPrefix(e.Path, "schunk/") {
			continue
		}
		f, err := Open(filepath.Join(dir, e.Path), false)
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		n, _ := f.NChunks()
		if n != e.Nchunks {
			t.Fatalf("%s: %d chunks, manifest says %d", e.Path, n, e.Nchunks)
		}
		for i, want := range e.ChunkSha256 {
			if want == nil {
				continue
			}
			c, err := f.Chunk(int64(i))
			if err != nil {
				t.Fatalf("%s chunk %d: %v", e.Path, i, err)
			}
			sum := sha256.Sum256(c)
			if hex.EncodeToString(sum[:]) != *want {
				t.Fatalf("%s chunk %d: content differs", e.Path, i)
			}
			checked++
		}
		for _, ml := range e.Meta {
			got, err := f.Meta(ml.Name)
			if err != nil || hex.EncodeToString(got) != ml.Hex {
				t.Fatalf("%s meta %s differs (%v)", e.Path, ml.Name, err)
			}
		}
		f.Close()
	}
	if checked < 100 {
		t.Fatalf("only %d chunks checked", checked)
	}
}
