#!/usr/bin/env bash
# Lays out the build context of deploy/container/Dockerfile in the folder it is given (make image
# uses dist/image): the npm package as `npm pack` makes it (prepack builds dist/), unpacked to
# ledger-json-gateway/, with its production dependencies installed by `npm ci` from the
# repository's package-lock.json, so that the image runs the versions the tests ran, and
# `docker build` needs no registry but the one of its base images.
set -euo pipefail
context=${1:?usage: deploy/container/prepare-context.sh CONTEXT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$context"
mkdir -p "$context"
context=$(cd "$context" && pwd)
cd "$root"
tarball=$(npm pack --pack-destination "$context" --loglevel=warn | tail -n 1)
mkdir "$context/ledger-json-gateway"
tar -xzf "$context/$tarball" -C "$context/ledger-json-gateway" --strip-components=1
rm "$context/$tarball"
cp package-lock.json "$context/ledger-json-gateway/"
# No install scripts: none of the production dependencies builds anything (uWebSockets.js ships
# its binaries), and protobufjs' only checks its own version.
(cd "$context/ledger-json-gateway" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=warn)
rm "$context/ledger-json-gateway/package-lock.json"
