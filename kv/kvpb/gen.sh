#!/bin/sh
# Regenerates kvpb.pb.go and kvpb_grpc.pb.go from kvpb.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../scripts/genproto.sh . kvpb.proto
