package tso

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/percdb/percdb/internal/durablefile"
)

// WindowStore keeps the oracle's saved upper bound durably: every timestamp
// the oracle has served or will serve before the next Save is below it. The
// Oracle calls Load once in Open and never calls Save concurrently with
// itself. A later issue keeps the bound in etcd, so that a new oracle leader
// starts above the old one's.
type WindowStore interface {
	// Load returns the last saved bound, or 0 if none was ever saved.
	Load(ctx context.Context) (uint64, error)
	// Save makes bound durable before returning nil: after a crash at any
	// point, Load returns either the previous bound or this one.
	Save(ctx context.Context, bound uint64) error
}

// WindowFileName is the name of the file in which a FileWindowStore keeps
// the bound, inside its directory.
const WindowFileName = "tso-window"

// ErrCorruptWindow is wrapped by the error of a FileWindowStore's Load when
// the window file exists but is not a valid window record.
var ErrCorruptWindow = errors.New("corrupt tso window file")

// windowMagic starts a window record, naming its format and version.
const windowMagic = "PCTSOW01"

// windowRecordLen is the size of a window record: magic, the bound (8 bytes,
// big-endian), and the CRC-32C of both (4 bytes, big-endian).
const windowRecordLen = len(windowMagic) + 8 + 4

// castagnoli is the CRC-32C table; a table is read-only once built.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FileWindowStore is a WindowStore in one small file of a data directory.
type FileWindowStore struct {
	dir  string
	path string
}

// OpenFileWindowStore returns the store of directory dir, creating the
// directory if it is missing. It reads nothing yet: a corrupt file shows in
// Load.
func OpenFileWindowStore(dir string) (*FileWindowStore, error) {
	if dir == "" {
		return nil, errors.New("tso window store: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tso window store: %w", err)
	}
	return &FileWindowStore{dir: dir, path: filepath.Join(dir, WindowFileName)}, nil
}

// Path returns the window file's path.
func (s *FileWindowStore) Path() string { return s.path }

// Load implements WindowStore. A missing file is a fresh store (bound 0); a
// file of the wrong size, magic or checksum is an error wrapping
// ErrCorruptWindow and naming the file, since starting from 0 could issue
// timestamps that were issued before.
func (s *FileWindowStore) Load(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("load tso window %s: %w", s.path, err)
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load tso window: %w", err)
	}
	bound, err := decodeWindow(b)
	if err != nil {
		return 0, fmt.Errorf("load tso window %s: %w", s.path, err)
	}
	return bound, nil
}

// Save implements WindowStore: it writes the record to a temporary file,
// fsyncs it, renames it over the window file and fsyncs the directory, so
// the rename itself is durable. A crash leaves the old file or the new one,
// never a torn record (a leftover temporary file is overwritten next time).
func (s *FileWindowStore) Save(ctx context.Context, bound uint64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("save tso window %s: %w", s.path, err)
	}
	if err := s.save(bound); err != nil {
		return fmt.Errorf("save tso window: %w", err)
	}
	return nil
}

func (s *FileWindowStore) save(bound uint64) error {
	return durablefile.Write(s.path, encodeWindow(bound), 0o644)
}

func encodeWindow(bound uint64) []byte {
	b := make([]byte, 0, windowRecordLen)
	b = append(b, windowMagic...)
	b = binary.BigEndian.AppendUint64(b, bound)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeWindow(b []byte) (uint64, error) {
	if len(b) != windowRecordLen {
		return 0, fmt.Errorf("%w: %d bytes, want %d", ErrCorruptWindow, len(b), windowRecordLen)
	}
	if string(b[:len(windowMagic)]) != windowMagic {
		return 0, fmt.Errorf("%w: bad magic %q", ErrCorruptWindow, b[:len(windowMagic)])
	}
	body, sum := b[:windowRecordLen-4], binary.BigEndian.Uint32(b[windowRecordLen-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return 0, fmt.Errorf("%w: checksum %08x, want %08x", ErrCorruptWindow, got, sum)
	}
	return binary.BigEndian.Uint64(body[len(windowMagic):]), nil
}
