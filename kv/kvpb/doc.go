// Package kvpb holds the KV service's gRPC protocol, the wire form of the
// kv.Client contract: kvpb.proto and the Go code generated from it (kvpb.pb.go,
// kvpb_grpc.pb.go; do not edit them). Package kvrpc serves and calls it. Run
// go generate here after changing kvpb.proto; gen.sh installs the generators
// at the versions the module needs.
package kvpb

//go:generate sh gen.sh
