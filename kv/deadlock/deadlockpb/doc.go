// Package deadlockpb holds the gRPC protocol of the cluster's deadlock
// detector (deadlockpb.proto; package kv/deadlock serves and sends it).
package deadlockpb

//go:generate sh gen.sh
