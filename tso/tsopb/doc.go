// Package tsopb holds the timestamp oracle's gRPC protocol: tso.proto and
// the Go code generated from it (tso.pb.go, tso_grpc.pb.go; do not edit
// them). Run go generate here after changing tso.proto; gen.sh installs the
// generators at the versions the module needs.
package tsopb

//go:generate sh gen.sh
