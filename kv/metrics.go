package kv

import (
	"fmt"

	"github.com/cockroachdb/pebble"
)

// Metrics returns Pebble's own metrics of the store (compactions, read
// amplification, block cache hits and misses, disk usage), read at the
// moment of the call: an operator's scrape asks for them, so nothing
// polls. It fails with ErrClosed after Close.
func (s *Store) Metrics() (*pebble.Metrics, error) {
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer s.exit()
	return s.db.Metrics(), nil
}
