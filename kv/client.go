package kv

import "context"

// NewLocalClient returns a Client served in process by s: routing comes
// from s's region map and every command runs directly on s.
func NewLocalClient(s *Store) Client { return localClient{s} }

// localClient is the in-process Client. The store already has the
// commands of the contract with its signatures; the client adds routing.
type localClient struct{ *Store }

// LocateKey returns the region of s that holds key.
func (c localClient) LocateKey(_ context.Context, key []byte) (RegionInfo, error) {
	return c.Store.LocateKey(key)
}

// InvalidateRegion does nothing: the in-process client reads the store's
// region map directly and has no cache to drop.
func (c localClient) InvalidateRegion(uint64) {}
