#!/bin/sh
# Regenerates pd.pb.go and pd_grpc.pb.go from pd.proto (scripts/genproto.sh
# installs the generators at the versions the module needs).
set -eu
cd "$(dirname "$0")"
exec sh ../../scripts/genproto.sh . pd.proto
