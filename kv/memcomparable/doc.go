// Package memcomparable encodes byte strings so that the encodings compare,
// byte by byte, in the same order as the strings themselves, and so that no
// encoding is a prefix of another. That second property is what lets the
// store append a timestamp to an encoded key: every version of key "a"
// sorts before every version of key "a\x00", because the encoded "a" ends
// before the timestamp begins.
//
// The format is TiDB's (pkg/util/codec, EncodeBytes) and is described in
// bytes.go.
package memcomparable
