// Package rspb holds the raft transport's gRPC protocol between KV nodes
// (rspb.proto; package kv/raftstore sends and receives it).
package rspb

//go:generate sh gen.sh
