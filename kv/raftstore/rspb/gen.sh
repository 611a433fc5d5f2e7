#!/bin/sh
# Regenerates rspb.pb.go and rspb_grpc.pb.go from rspb.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../../scripts/genproto.sh . rspb.proto
