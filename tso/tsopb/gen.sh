#!/bin/sh
# Regenerates tso.pb.go and tso_grpc.pb.go from tso.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../scripts/genproto.sh . tso.proto
