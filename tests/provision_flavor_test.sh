#!/usr/bin/env bash
# tests/provision_flavor_test.sh — tools/provision-flavor where no network or debootstrap is needed: its
# argument errors, its refusal to run without root, and its whole-root check (--check-root) on fake roots
# made here, the real check function judging them. Usage: provision_flavor_test.sh SCRIPT arguments|not-root|check-root
# Exit 0 all passed, 1 a check failed, 77 skipped (named on stderr).
set -uo pipefail
script=$1 mode=$2
failures=0 passed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME CODE PATTERN COMMAND...: COMMAND exits CODE and prints exactly one line matching PATTERN.
expect() {
    local name=$1 code=$2 pattern=$3; shift 3
    local out rc lines
    out=$("$@" 2>&1); rc=$?
    lines=$(printf '%s\n' "$out" | grep -c .)
    if ((rc == code)) && [[ $lines == 1 ]] && grep -Eq -- "$pattern" <<<"$out"; then
        passed=$((passed + 1))
    else
        printf 'FAILED %s: exit %s (want %s), %s lines, output:\n%s\n' "$name" "$rc" "$code" "$lines" "$out" >&2
        failures=$((failures + 1))
    fi
}

# expect_last NAME CODE PATTERN COMMAND...: COMMAND exits CODE and its last line matches PATTERN.
expect_last() {
    local name=$1 code=$2 pattern=$3; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if ((rc == code)) && tail -n 1 <<<"$out" | grep -Eq -- "$pattern"; then
        passed=$((passed + 1))
    else
        printf 'FAILED %s: exit %s (want %s), output:\n%s\n' "$name" "$rc" "$code" "$out" >&2
        failures=$((failures + 1))
    fi
}

finish() {
    echo "$passed passed, $failures failed"
    ((failures == 0))
    exit $?
}

need_root() {
    if [[ $(id -u) != 0 ]]; then echo "skipped: $mode needs root (the script checks roots with chroot)" >&2; exit 77; fi
}

case $mode in
arguments)
    need_root
    expect "unknown flavor" 2 "^provision-flavor: unknown flavor 'llvm99' \(expected one of: llvm21 llvm23 llvm24\)$" \
        "$script" llvm99
    expect "--flavors" 0 "^llvm21 llvm23 llvm24$" bash -c '"$0" --flavors | paste -sd" "' "$script"
    expect "--bind of a relative path" 2 "^provision-flavor: --bind data: not an absolute path$" \
        "$script" llvm23 --bind data
    expect "--bind of no folder" 2 "^provision-flavor: --bind $tmp/none: not a folder$" "$script" llvm23 --bind "$tmp/none"
    expect "--bind of /" 2 "^provision-flavor: --bind /: the whole file system cannot be bound$" "$script" llvm23 --bind /
    expect "no flavor" 2 "^provision-flavor: no FLAVOR given" "$script"
    expect "two flavors" 2 "^provision-flavor: only one FLAVOR allowed, got 'llvm23' and 'llvm24'$" \
        "$script" llvm23 llvm24
    expect "unknown option" 2 "^provision-flavor: unknown option '--frobnicate'" "$script" llvm23 --frobnicate
    expect "--cache without a folder" 2 "^provision-flavor: --cache needs a directory$" "$script" llvm23 --cache
    expect "--check-root of no folder" 2 "^provision-flavor: --check-root: $tmp/none is not a folder$" \
        "$script" llvm23 --check-root "$tmp/none"
    expect_last "--help" 0 "." "$script" --help
    finish ;;

not-root)
    # A copy anyone may read, run as nobody: the script must say it needs root before touching anything.
    install -m 0755 "$script" "$tmp/provision-flavor"
    chmod 0755 "$tmp"
    if [[ $(id -u) == 0 ]]; then
        as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home")
    else
        as_nobody=(env HOME="$tmp/home")  # already unprivileged
    fi
    expect "not root" 2 "^provision-flavor: needs root \(debootstrap and chroot\)$" \
        "${as_nobody[@]}" "$tmp/provision-flavor" llvm23
    [[ ! -e $tmp/home ]] || { echo "FAILED not root: it created $tmp/home" >&2; failures=$((failures + 1)); }
    finish ;;

check-root)
    need_root
    # A root in which the script's checks can run: a shell, env and their libraries, and stand-ins of the
    # tools it asks (dpkg-query, dpkg, llvm-config) answering as an installed llvm-23-dev would.
    root=$tmp/sid-llvm23
    mkdir -p "$root/usr/bin" "$root/bin" "$root/usr/lib/llvm-23/bin" "$root/usr/lib/llvm-23/lib/cmake/llvm"
    for bin in /usr/bin/env "$(readlink -f /bin/sh)"; do
        cp -L "$bin" "$root/usr/bin/"
        ldd "$bin" | grep -oE '/[^ ]+' | while read -r lib; do cp -L --parents "$lib" "$root"; done
    done
    ln -sf "$(basename "$(readlink -f /bin/sh)")" "$root/usr/bin/sh"
    ln -sf /usr/bin/sh "$root/bin/sh"
    version=1:23.1.4-1
    printf '#!/bin/sh\nprintf "ii %s"\n' "$version" >"$root/usr/bin/dpkg-query"
    printf '#!/bin/sh\nexit 0\n' >"$root/usr/bin/dpkg"  # -s: all installed; --audit: nothing to report
    printf '#!/bin/sh\necho 23.1.4\n' >"$root/usr/lib/llvm-23/bin/llvm-config"
    chmod 755 "$root/usr/bin/dpkg-query" "$root/usr/bin/dpkg" "$root/usr/lib/llvm-23/bin/llvm-config"
    : >"$root/usr/lib/llvm-23/lib/cmake/llvm/LLVMConfig.cmake"
    stamp() { printf 'flavor=%s\nllvm_package=llvm-23-dev\nllvm_package_version=%s\n' "$1" "$2" >"$root/.archdb-root-ok"; }

    stamp llvm23 "$version"
    expect "whole root" 0 "^provision-flavor: root $root is whole \(llvm-23-dev $version\): a run would reuse it$" \
        "$script" llvm23 --check-root "$root"
    rm "$root/.archdb-root-ok"
    expect "missing stamp" 1 "^provision-flavor: broken or partial root $root \(no stamp .*provisioning never finished\)\): a run would remove and rebuild it$" \
        "$script" llvm23 --check-root "$root"
    stamp llvm23 1:23.1.0-1
    expect "package version changed" 1 "broken or partial root .*llvm-23-dev is 'ii $version', stamp says '1:23.1.0-1'.*rebuild it$" \
        "$script" llvm23 --check-root "$root"
    stamp llvm21 "$version"
    expect "stamp of another flavor" 1 "broken or partial root .*stamp is for flavor 'llvm21'.*rebuild it$" \
        "$script" llvm23 --check-root "$root"
    stamp llvm23 "$version"
    printf '#!/bin/sh\necho 22.1.8\n' >"$root/usr/lib/llvm-23/bin/llvm-config"
    expect "llvm-config of another LLVM" 1 "broken or partial root .*llvm-config says 22.1.8, not 23.x.*rebuild it$" \
        "$script" llvm23 --check-root "$root"
    printf '#!/bin/sh\necho 23.1.4\n' >"$root/usr/lib/llvm-23/bin/llvm-config"
    printf '#!/bin/sh\n[ "$1" = --audit ] && echo "libfoo is half-installed"\nexit 0\n' >"$root/usr/bin/dpkg"
    expect "half-installed packages" 1 "broken or partial root .*dpkg --audit reports half-installed packages.*rebuild it$" \
        "$script" llvm23 --check-root "$root"
    [[ -f $root/usr/bin/dpkg-query && -f $root/.archdb-root-ok ]] ||
        { echo "FAILED: --check-root changed the root" >&2; failures=$((failures + 1)); }
    finish ;;

*)
    echo "usage: $0 SCRIPT arguments|not-root|check-root" >&2
    exit 2 ;;
esac
