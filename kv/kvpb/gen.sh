#!/bin/sh
# Regenerates kv.pb.go and kv_grpc.pb.go from kv.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../scripts/genproto.sh . kv.proto
