#!/bin/sh
# Generates the Go code of a gRPC protocol: genproto.sh DIR FILE.proto
# writes FILE.pb.go and FILE_grpc.pb.go next to DIR/FILE.proto, installing
# the generators first: protoc from Debian's protobuf-compiler package, and
# the Go plugins at versions that match the module: protoc-gen-go at the
# version of google.golang.org/protobuf in go.mod (its generated code must
# match the runtime), protoc-gen-go-grpc at a release whose generated code
# the grpc of go.mod supports (v1.6.x emits SupportPackageIsVersion9, grpc
# >= 1.64). The packages' gen.sh (tso/tsopb, kv/kvpb) call it.
set -eu

PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

cd "$1"

if ! command -v protoc >/dev/null 2>&1; then
	SUDO=
	if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
	$SUDO apt-get update
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y protobuf-compiler
fi

PROTOBUF_VERSION=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
GOBIN=$(go env GOPATH)/bin
export GOBIN
go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOBUF_VERSION}"
go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

PATH="$GOBIN:$PATH" protoc \
	--go_out=. --go_opt=paths=source_relative \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative \
	"$2"
