#!/bin/sh
# Regenerates pdpb.pb.go and pdpb_grpc.pb.go from pdpb.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../scripts/genproto.sh . pdpb.proto
