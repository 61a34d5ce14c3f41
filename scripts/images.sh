#!/usr/bin/env bash
# scripts/images.sh: build Harness's local images offline, without a registry.
#
#   harness-busybox  busybox-static rootfs, `docker import`ed: 0.5-2 s,
#                    2.0 MB; the fast image of the dockerws tests.
#   harness-sandbox  Debian minbase (mmdebstrap) with bash, coreutils, git, make,
#                    python3, ca-certificates, procps, patch, ripgrep and less,
#                    `docker import`ed; the default workspace image. First build
#                    about 2 min (30-110 s measured on an idle machine), up to
#                    ~5 min on a loaded one (274 s measured with the CPUs
#                    saturated), 209 MB; the
#                    205 MB rootfs tarball is cached, so a re-import (--force)
#                    takes 2-3 s.
#
# Nothing is ever pulled. An image that already exists is left alone unless
# --force is given (the sandbox is then re-imported from the cached rootfs);
# --refresh also rebuilds the cached rootfs from the Debian mirror.
#
# Usage: scripts/images.sh [--force|--refresh] [busybox|sandbox|all]   (default all)
#
# An image with more tools: IMAGE_PACKAGES names more Debian packages for the
# sandbox, and IMAGE the name to give it, e.g.
#   IMAGE=harness-sandbox-node IMAGE_PACKAGES="nodejs npm" scripts/images.sh sandbox
# then `harness --image harness-sandbox-node`. (Most projects need none:
# harness mounts the host's Go, Node, Python and Rust toolchains read-only.)
#
# Environment:
#   IMAGE                the sandbox image's name (default harness-sandbox)
#   IMAGE_PACKAGES       more Debian packages for it, space-separated
#   HARNESS_IMAGE_CACHE  where the sandbox rootfs tarball is cached
#                        (default /var/cache/harness as root, else
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/harness)
#   HARNESS_DEBIAN_SUITE Debian suite of the sandbox (default: the host's, else bookworm)
#   HARNESS_DEBIAN_MIRROR mirror URL (default: the first archive this machine's apt sources name)
set -euo pipefail

log() { printf 'images.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

force=0
refresh=0
what=all
for arg in "$@"; do
	case $arg in
	--force | -f) force=1 ;;
	--refresh) force=1 refresh=1 ;;
	busybox | sandbox | all) what=$arg ;;
	-h | --help)
		sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument $arg (usage: scripts/images.sh [--force|--refresh] [busybox|sandbox|all])" ;;
	esac
done

command -v docker >/dev/null 2>&1 || die "the docker command is missing; run scripts/docker.sh first"
docker info --format '{{.ServerVersion}}' >/dev/null 2>&1 ||
	die "no Docker daemon answers; run scripts/docker.sh first"

if [ -n "${HARNESS_IMAGE_CACHE:-}" ]; then
	cache=$HARNESS_IMAGE_CACHE
elif [ "$(id -u)" -eq 0 ]; then
	cache=/var/cache/harness
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/harness
fi

# The uid and gid that own /workspace and /home/harness in both images; it is
# the user dockerws runs as when the image names no non-root user.
SANDBOX_UID=65534

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

exists() { docker image inspect "$1" >/dev/null 2>&1; }

# import_image REF TARBALL: docker import with the shared metadata; the image
# REF named before, now untagged, is removed unless a container still uses it.
import_image() {
	local ref=$1 tarball=$2 old
	old=$(docker image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
	docker import "${changes[@]}" "$tarball" "$ref" >/dev/null ||
		die "docker import of $ref failed"
	if [ -n "$old" ] && [ "$old" != "$(docker image inspect --format '{{.Id}}' "$ref")" ]; then
		docker image rm "$old" >/dev/null 2>&1 || true
	fi
}

report() {
	local ref=$1 started=$2
	log "built $ref in $((SECONDS - started))s: $(docker image inspect --format '{{.Id}}, {{.Size}} bytes' "$ref")"
}

# Image metadata shared by both images. No USER: dockerws picks the user.
changes=(
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
	--change 'ENV LANG=C.UTF-8'
	--change 'WORKDIR /workspace'
	--change 'CMD ["/bin/sh"]'
)

# host_mirror prints the first Debian archive URI of this machine's apt
# sources (deb822 .sources files or the classic sources.list), skipping the
# security archive, so the image comes from where this machine's packages do.
host_mirror() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { printf '%s\n' "$uri"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\// && $i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { printf '%s\n' "$uri"; return; }
	done
}

build_busybox() {
	local ref=harness-busybox started=$SECONDS bb root
	if [ "$force" -eq 0 ] && exists "$ref"; then
		log "$ref exists; nothing to do (use --force to rebuild)"
		return
	fi
	bb=$(command -v busybox || true)
	if [ -z "$bb" ] || ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
		[ "$(id -u)" -eq 0 ] || die "a statically linked busybox is needed (apt-get install busybox-static)"
		log "installing busybox-static"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends busybox-static >/dev/null ||
			die "apt-get install busybox-static failed"
		bb=$(command -v busybox)
	fi
	root=$work/busybox
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,workspace,home/harness}
	cp "$bb" "$root/bin/busybox"
	# One symlink per applet, at the path busybox gives for it.
	"$bb" --list-full | while read -r applet; do
		[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home/harness:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	chmod 1777 "$root/tmp"
	chmod 755 "$root"
	# Ownership is set in the archive, so building needs no root.
	tar --numeric-owner --owner=0 --group=0 -C "$root" \
		--exclude=./workspace --exclude=./home/harness -cf "$work/busybox.tar" . ||
		die "tar of the busybox rootfs failed"
	tar --numeric-owner --owner=$SANDBOX_UID --group=$SANDBOX_UID -C "$root" \
		--no-recursion -rf "$work/busybox.tar" ./workspace ./home/harness ||
		die "tar of the busybox rootfs failed"
	import_image "$ref" "$work/busybox.tar"
	report "$ref" "$started"
}

build_sandbox() {
	local ref=${IMAGE:-harness-sandbox} started=$SECONDS tarball suite mirror extra="" include
	include=bash,coreutils,git,make,python3,ca-certificates,procps,patch,ripgrep,less
	if [ -n "${IMAGE_PACKAGES:-}" ]; then
		# The cached rootfs is named by its package list.
		extra=$(printf '%s\n' $IMAGE_PACKAGES | sort -u | tr '\n' ',' | sed 's/,$//')
		include=$include,$extra
		extra=-$(printf '%s' "$extra" | sha256sum | cut -c1-12)
	fi
	if [ "$force" -eq 0 ] && exists "$ref"; then
		log "$ref exists; nothing to do (use --force to rebuild)"
		return
	fi
	suite=${HARNESS_DEBIAN_SUITE:-$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null || true)}
	suite=${suite:-bookworm}
	mirror=${HARNESS_DEBIAN_MIRROR:-$(host_mirror)}
	[ -n "$mirror" ] || die "no Debian mirror found in this machine's apt sources; set HARNESS_DEBIAN_MIRROR"
	tarball=$cache/harness-sandbox-$suite$extra.tar
	if [ "$refresh" -eq 1 ] || [ ! -s "$tarball" ]; then
		command -v mmdebstrap >/dev/null 2>&1 || {
			[ "$(id -u)" -eq 0 ] || die "mmdebstrap is needed to build $ref (apt-get install mmdebstrap)"
			log "installing mmdebstrap"
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mmdebstrap >/dev/null ||
				die "apt-get install mmdebstrap failed"
		}
		mkdir -p "$cache"
		log "building the $suite rootfs with mmdebstrap from $mirror: about 2 minutes, up to ~5 under load (once; the rootfs is cached)"
		# Documentation, man pages and locales are left out to keep the image small.
		# The hooks run inside mmdebstrap, where "$1" is the rootfs directory.
		# shellcheck disable=SC2016
		mmdebstrap --quiet --variant=minbase \
			--include="$include" \
			--aptopt='APT::Install-Recommends "false"' \
			--dpkgopt='path-exclude=/usr/share/man/*' \
			--dpkgopt='path-exclude=/usr/share/doc/*' \
			--dpkgopt='path-include=/usr/share/doc/*/copyright' \
			--dpkgopt='path-exclude=/usr/share/locale/*' \
			--dpkgopt='path-exclude=/usr/share/info/*' \
			--customize-hook='chmod 755 "$1"' \
			--customize-hook="mkdir -p \"\$1/workspace\" \"\$1/home/harness\" && chown $SANDBOX_UID:$SANDBOX_UID \"\$1/workspace\" \"\$1/home/harness\"" \
			--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
			"$suite" "$work/rootfs.tar" "$mirror" ||
			die "mmdebstrap failed; is $mirror reachable?"
		mv "$work/rootfs.tar" "$tarball"
		log "cached the rootfs at $tarball ($(du -h "$tarball" | cut -f1))"
	else
		log "re-importing the cached rootfs $tarball"
	fi
	import_image "$ref" "$tarball"
	report "$ref" "$started"
}

case $what in
busybox) build_busybox ;;
sandbox) build_sandbox ;;
all)
	build_busybox
	build_sandbox
	;;
esac
