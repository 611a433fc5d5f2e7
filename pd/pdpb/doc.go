// Package pdpb holds the placement driver's gRPC protocol and the records
// it keeps in etcd: pdpb.proto and the Go code generated from it (pdpb.pb.go,
// pdpb_grpc.pb.go; do not edit them). Run go generate here after changing
// pdpb.proto; gen.sh installs the generators at the versions the module
// needs.
package pdpb

//go:generate sh gen.sh
