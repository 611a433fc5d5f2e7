package memcomparable

import (
	"bytes"
	"errors"
	"testing"
)

// samples covers the group boundaries: empty, 1..7 bytes, exactly 8, 9,
// 16, zeros and 0xFF bytes that look like padding and markers.
var samples = [][]byte{
	{}, {0}, {0, 0}, {0xFF}, []byte("a"), []byte("abc"), []byte("abcdefg"),
	[]byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefghi"),
	[]byte("0123456789abcdef"), bytes.Repeat([]byte{0xFF}, 17), bytes.Repeat([]byte{0}, 8),
}

func TestRoundTrip(t *testing.T) {
	for _, in := range samples {
		enc := EncodeBytes(nil, in)
		if len(enc) != EncodedLen(len(in)) {
			t.Errorf("%x: encoded length %d, EncodedLen says %d", in, len(enc), EncodedLen(len(in)))
		}
		rest, out, err := DecodeBytes(append(enc, "tail"...))
		if err != nil {
			t.Fatalf("%x: %v", in, err)
		}
		if !bytes.Equal(out, in) || string(rest) != "tail" {
			t.Errorf("%x: decoded %x, rest %q", in, out, rest)
		}
	}
}

func TestLayout(t *testing.T) {
	for in, want := range map[string]string{
		"":         "\x00\x00\x00\x00\x00\x00\x00\x00\xf7",
		"abc":      "abc\x00\x00\x00\x00\x00\xfa",
		"12345678": "12345678\xff\x00\x00\x00\x00\x00\x00\x00\x00\xf7",
	} {
		if got := string(EncodeBytes(nil, []byte(in))); got != want {
			t.Errorf("EncodeBytes(%q) = %x, want %x", in, got, want)
		}
	}
}

// TestOrder checks that encodings sort like their inputs and that a
// suffix after an encoding never changes the order of two keys.
func TestOrder(t *testing.T) {
	enc := make([][]byte, len(samples))
	for i, s := range samples {
		enc[i] = EncodeBytes(nil, s)
	}
	for i := range samples {
		for j := range samples {
			want := bytes.Compare(samples[i], samples[j])
			if got := bytes.Compare(enc[i], enc[j]); got != want {
				t.Errorf("compare(%x, %x): encoded %d, raw %d", samples[i], samples[j], got, want)
			}
			if want < 0 {
				hi := append(append([]byte{}, enc[i]...), 0xFF, 0xFF)
				if bytes.Compare(hi, enc[j]) >= 0 {
					t.Errorf("%x+suffix sorts after %x", samples[i], samples[j])
				}
			}
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	for name, in := range map[string][]byte{
		"empty":           {},
		"short group":     []byte("abc"),
		"no final group":  []byte("12345678\xff"),
		"marker too low":  []byte("abc\x00\x00\x00\x00\x00\xf6"),
		"nonzero padding": []byte("abc\x00\x00\x00\x00\x01\xfa"),
	} {
		if _, _, err := DecodeBytes(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzDecodeBytes checks that decoding never panics and that whatever
// decodes re-encodes to the bytes it was decoded from.
func FuzzDecodeBytes(f *testing.F) {
	for _, s := range samples {
		f.Add(EncodeBytes(nil, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, out, err := DecodeBytes(b)
		if err != nil {
			return
		}
		if enc := EncodeBytes(nil, out); !bytes.Equal(enc, b[:len(b)-len(rest)]) {
			t.Fatalf("decoded %x from %x, which re-encodes to %x", out, b, enc)
		}
	})
}
