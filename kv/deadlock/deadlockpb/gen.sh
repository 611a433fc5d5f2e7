#!/bin/sh
# Regenerates deadlockpb.pb.go and deadlockpb_grpc.pb.go from deadlockpb.proto
# (scripts/genproto.sh installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../../scripts/genproto.sh . deadlockpb.proto
