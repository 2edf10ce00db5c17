#!/usr/bin/env bash
# Builds the local container image that agent tasks run and are verified in:
# assay-task-python:local (override with ASSAY_TASK_IMAGE). No container registry is needed.
#
# How: Debian's mmdebstrap assembles a bookworm root filesystem (variant "essential" plus bash,
# coreutils, grep, sed, git, python3 with python3-pytest and python-is-python3, so both
# `python` and `python3` are on PATH) from the Debian mirror that apt on this machine already
# uses, writes it as a tarball to stdout, and `docker import` turns that tarball into a
# single-layer image (the same thing as `FROM scratch` + `ADD rootfs.tar /`). Packages come
# from Debian's package archive, the one registry of this machine that serves an OS; nothing
# is pulled from Docker Hub or any other image registry, and the daemon needs no network.
#
# Why not the alternatives: `debootstrap --variant=minbase` with the same packages took 38 s
# and gave 391 MB (it keeps the .debs and apt lists); mmdebstrap took 23-26 s for a 195 MB
# tarball (docs, man pages and locales excluded at unpack time). Copying the host's own files
# means working out the closure of a 5.6 GB /usr (and this host's python is pyenv's, under
# /root): not reliable.
#
# In the image: /etc/gitconfig trusts every directory (a bind-mounted worktree may belong to
# another uid than the container's) and gives a fallback commit identity; /etc/passwd has a
# user `assay` with uid/gid 1000 and home /tmp (mount a tmpfs there), so `--user 1000:1000`
# has a name and a HOME.
#
# Cache: the image carries the label assay.task-image.hash = sha256 of this script (and the
# suite). When an image of that tag has the same hash, nothing is done; edit the script and
# the next run rebuilds. --force rebuilds anyway.
#
# Usage: scripts/task_image.sh [--force]     (needs a Docker daemon; root to install mmdebstrap)
# Measured on a 2-core Debian 12 VM: a cold build takes 26-27 s on an idle machine (60-120 s
# while a test suite loads both cores), 190 MB; the cached check takes under 0.1 s.
set -euo pipefail

tag="${ASSAY_TASK_IMAGE:-assay-task-python:local}"
suite="${ASSAY_TASK_IMAGE_SUITE:-bookworm}"
label="assay.task-image.hash"
force=0
[ "${1:-}" = "--force" ] && force=1

self="${BASH_SOURCE[0]}"
hash=$( { cat "$self"; echo "$suite"; } | sha256sum | cut -c1-64)

if ! docker info >/dev/null 2>&1; then
    echo "task_image: no Docker daemon answers (docker info failed)" >&2
    exit 2
fi

if [ "$force" = 0 ]; then
    have=$(docker image inspect --format "{{ index .Config.Labels \"$label\" }}" "$tag" 2>/dev/null || true)
    if [ "$have" = "$hash" ]; then
        echo "task_image: $tag is up to date"
        exit 0
    fi
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null 2>&1 || {
            apt-get update -qq >/dev/null
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
        }
    else
        echo "task_image: mmdebstrap is missing (apt-get install mmdebstrap, as root)" >&2
        exit 2
    fi
fi

# The Debian mirror apt uses here (deb822 or one-line sources), else deb.debian.org.
mirror=""
security=""
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    while read -r uri; do
        case "$uri" in
            *debian-security*) [ -n "$security" ] || security="$uri" ;;
            *debian*) [ -n "$mirror" ] || mirror="$uri" ;;
        esac
    done < <(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$f")
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 !~ /security/ && $2 ~ /debian/ {print $2; exit}' /etc/apt/sources.list)
    security=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /debian-security/ {print $2; exit}' /etc/apt/sources.list)
fi
mirror="${mirror:-http://deb.debian.org/debian}"
security="${security:-${mirror%/debian}/debian-security}"

# Run inside the root filesystem before it is packed ($1 is its path).
customize='
set -e
root="$1"
printf "assay:x:1000:1000:assay task user:/tmp:/bin/bash\n" >> "$root/etc/passwd"
printf "assay:x:1000:\n" >> "$root/etc/group"
cat > "$root/etc/gitconfig" <<EOF
[safe]
	directory = *
[user]
	name = assay
	email = assay@localhost
[init]
	defaultBranch = main
EOF
'

start=$(date +%s)
echo "task_image: building $tag from $suite ($mirror) with mmdebstrap ..."
log=$(mktemp)
# Imported under a temporary tag, given the real one only once the whole build succeeded.
building="${tag%:*}:building-$$"
trap 'rm -f "$log"; docker rmi -f "$building" >/dev/null 2>&1 || true' EXIT
set +e
mmdebstrap --variant=essential \
    --include=bash,coreutils,grep,sed,git,python3,python3-pytest,python-is-python3 \
    --aptopt='Acquire::Languages "none"' --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="$customize" \
    "$suite" - \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" \
    </dev/null 2>"$log" |
    docker import \
        --change "LABEL $label=$hash" \
        --change "LABEL org.opencontainers.image.description=\"assay task image: Debian $suite, python3, pytest, git\"" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'WORKDIR /' \
        --change 'CMD ["python3"]' \
        - "$building" >/dev/null
codes=("${PIPESTATUS[@]}")
set -e
if [ "${codes[0]}" != 0 ] || [ "${codes[1]}" != 0 ]; then
    # A failed mmdebstrap still feeds docker import an empty stream: never tag that.
    docker rmi -f "$building" >/dev/null 2>&1 || true
    tail -n 20 "$log" >&2
    echo "task_image: build failed (mmdebstrap exit ${codes[0]}, docker import exit ${codes[1]})" >&2
    exit 1
fi
old=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
docker tag "$building" "$tag"
docker rmi "$building" >/dev/null
# The image this one replaces, unless a container or another tag still holds it.
new=$(docker image inspect --format '{{.Id}}' "$tag")
[ -z "$old" ] || [ "$old" = "$new" ] || docker rmi "$old" >/dev/null 2>&1 || true
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "task_image: built $tag in $(($(date +%s) - start)) s, $((size / 1000000)) MB"
