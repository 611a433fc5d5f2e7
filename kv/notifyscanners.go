package kv

import (
	"bytes"
	"sync"
	"time"
)

// scanners is what a store knows of the observers' scanners that read its
// notify space (ScanNotifyRequest.Scanner): where each reads next and
// which entries each was given, for ScannerLease after its page. It lets
// scanners of different processes avoid each other: Percolator's
// scanners see the others' positions and jump away from a convoy, and a
// notification one scanner's process is running is not handed to
// another's, which would run it too and lose the acknowledgement's write
// conflict. It is soft state: a restart or a new leader starts empty, and
// the worst that costs is a run done twice and rolled back.
type scanners struct {
	lease time.Duration

	mu sync.Mutex
	// positions maps a scanner to where it reads next; nil: past the
	// end of the key space (it wraps around).
	positions map[uint64]scannerPosition
	// claims maps a notify key (keyspace.NotifyKey) to the scanner it
	// was last given to.
	claims map[string]claim
	// pages counts scanner pages since claims were last pruned.
	pages int
}

type scannerPosition struct {
	next    []byte
	expires time.Time
}

type claim struct {
	scanner uint64
	expires time.Time
}

// maxClaims bounds the claims a store keeps: beyond it entries are handed
// out unclaimed (a notify space with that many entries in flight at once
// spreads scanners by position anyway).
const maxClaims = 1 << 16

// pruneEvery is how many scanner pages pass between walks of the claims
// that drop the expired ones.
const pruneEvery = 64

func newScanners(lease time.Duration) *scanners {
	return &scanners{lease: lease, positions: make(map[uint64]scannerPosition), claims: make(map[string]claim)}
}

// page records scanner's page of [start, end) (end nil: to the end of the
// key space), which read entries whose notify keys are notifyKeys, at
// now: it returns which entries to hand the scanner (keep[i]), how many
// another live scanner holds, and whether another's position lies in
// (start, end]. The scanner's position becomes end, and it claims the
// entries it is handed.
func (s *scanners) page(scanner uint64, start, end []byte, notifyKeys [][]byte, now time.Time) (keep []bool, skipped int, trailing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages++
	if s.pages >= pruneEvery || len(s.claims) >= maxClaims {
		s.prune(now)
	}
	for id, p := range s.positions {
		switch {
		case now.After(p.expires):
			delete(s.positions, id)
		case id != scanner && p.next != nil && bytes.Compare(p.next, start) > 0 && (end == nil || bytes.Compare(p.next, end) <= 0):
			trailing = true
		}
	}
	s.positions[scanner] = scannerPosition{next: bytes.Clone(end), expires: now.Add(s.lease)}
	keep = make([]bool, len(notifyKeys))
	for i, nk := range notifyKeys {
		c, held := s.claims[string(nk)]
		if held && c.scanner != scanner && !now.After(c.expires) {
			skipped++
			continue
		}
		keep[i] = true
		if held || len(s.claims) < maxClaims {
			s.claims[string(nk)] = claim{scanner: scanner, expires: now.Add(s.lease)}
		}
	}
	return keep, skipped, trailing
}

// release ends the claims of notify keys (their runs ended).
func (s *scanners) release(notifyKeys [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, nk := range notifyKeys {
		delete(s.claims, string(nk))
	}
}

// prune drops the expired claims.
func (s *scanners) prune(now time.Time) {
	s.pages = 0
	for k, c := range s.claims {
		if now.After(c.expires) {
			delete(s.claims, k)
		}
	}
}
