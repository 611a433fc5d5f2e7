package node

import "github.com/percdb/percdb/kv"

// KVStore is the node's store, for tests that look at a replica's keys.
func (n *Node) KVStore() *kv.Store { return n.store }
