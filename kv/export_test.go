package kv

// StallOnFullDisk puts s in the state of a storage that holds writes for
// want of space (writestall.go): the disk full, or, with cannotCompact,
// a compaction that can never fit (compactgate.go) whatever the free
// space. For the tests of package kv_test, which see the store from
// outside, over gRPC.
func StallOnFullDisk(s *Store, cannotCompact bool) {
	if cannotCompact {
		s.gate.neverFits(1<<30, 1<<20, 0)
	} else {
		s.space.storageFull()
	}
	s.stall.begin()
}
