#!/usr/bin/env bash
# tests/regen_columns_test.sh — tools/regen-columns. Usage: regen_columns_test.sh CHECKOUT MODE [FLAVOR...]
#   arguments          bad arguments are one clear line and exit 2, before anything is built or written (a ctest)
#   scratch FLAVOR...  a key added to a scratch copy of the catalog is brought into the named flavors of a scratch
#                      copy of data/: each gets exactly its cells, every other committed cell stays byte for byte,
#                      coverage passes for them and fails, naming the command, for every measured column left out.
#                      It builds and measures for real (llvm19 needs llvm-19-dev, sid flavors root and their
#                      roots): a CI stage (.ci/run), not a ctest.
# Exit 0 all passed, 1 a check failed, 77 skipped (named on stderr).
set -uo pipefail
checkout=$(cd "$1" && pwd -P) mode=$2
shift 2
script=$checkout/tools/regen-columns
failures=0 passed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { passed=$((passed + 1)); }
fail() { printf 'FAILED %s\n' "$*" >&2; failures=$((failures + 1)); }
finish() { echo "$passed passed, $failures failed"; ((failures == 0)); exit $?; }

# expect NAME CODE PATTERN COMMAND...: COMMAND exits CODE and prints exactly one line, matching PATTERN.
expect() {
  local name=$1 code=$2 pattern=$3; shift 3
  local out rc lines
  out=$("$@" 2>&1); rc=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  if ((rc == code)) && [[ $lines == 1 ]] && grep -Eq -- "$pattern" <<<"$out"; then pass
  else fail "$name: exit $rc (want $code), $lines lines, output:"$'\n'"$out"; fi
}

case $mode in
arguments)
  before=$(cd "$checkout" && git status --porcelain --ignored -- data build/regen-columns 2>/dev/null | sort)
  printf 'made.up.key\n' >"$tmp/unknown.txt"
  printf '# keys\namdgcn.permlane16 amdgcn.permlane16\n' >"$tmp/two-words.txt"
  printf '# nothing but a comment\n\n' >"$tmp/empty.txt"
  expect "unknown flavor" 2 "^regen-columns: unknown flavor 'llvm9' \(committed columns in .*: llvm19 .*llvm22 .*\)$" \
    "$script" llvm9
  expect "unknown key" 2 "^regen-columns: unknown key 'made.up.key' \(not in .*catalog.txt\)$" \
    "$script" --only amdgcn.permlane16,made.up.key llvm22
  expect "unknown key in a file" 2 "^regen-columns: unknown key 'made.up.key'" "$script" --keys "@$tmp/unknown.txt" llvm22
  expect "two words a line" 2 "two-words.txt: 'amdgcn.permlane16 amdgcn.permlane16' is not a key" \
    "$script" --keys "@$tmp/two-words.txt" llvm22
  expect "a file of no key" 2 "empty.txt names no key$" "$script" --keys "@$tmp/empty.txt" llvm22
  expect "a missing key file" 2 "^regen-columns: --keys $tmp/none.txt: not a readable file$" \
    "$script" --keys "@$tmp/none.txt" llvm22
  expect "--keys without @" 2 "^regen-columns: --keys takes @FILE" "$script" --keys amdgcn.permlane16 llvm22
  expect "--only and --keys" 2 "cannot be combined" "$script" --only amdgcn.permlane16 --keys "@$tmp/unknown.txt"
  expect "--only of nothing" 2 "^regen-columns: --only names no key$" "$script" --only , llvm22
  expect "unknown option" 2 "^regen-columns: unknown option '--frob'" "$script" --frob
  expect "--data of no folder" 2 "^regen-columns: --data $tmp/none: not a folder$" "$script" --data "$tmp/none" llvm22
  expect "--data without a column" 2 "^regen-columns: no committed column in $tmp$" "$script" --data "$tmp" llvm22
  if [[ -f $checkout/data/llvm20/column.json ]]; then
    expect "a descriptor named" 2 "^regen-columns: llvm20 is a descriptor column.*archdb coverage --flavor llvm20" \
      "$script" llvm20
  fi
  # Without root, a flavor measured in a sid root is refused before anything runs.
  if [[ $(id -u) == 0 ]]; then
    as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/home")
  else
    as_nobody=(env HOME="$tmp/home")
  fi
  if "${as_nobody[@]}" test -x "$script" 2>/dev/null; then
    expect "sid flavor without root" 2 "^regen-columns: llvm23 are measured in Debian sid roots, which needs root" \
      "${as_nobody[@]}" "$script" llvm22 llvm23
  else
    echo "note: the checkout is not readable by nobody; the not-root case is not run" >&2
  fi
  expect "--help" 0 "^Usage: tools/regen-columns" bash -c '"$0" --help | grep "^Usage"' "$script"
  after=$(cd "$checkout" && git status --porcelain --ignored -- data build/regen-columns 2>/dev/null | sort)
  [[ $before == "$after" ]] && pass || fail "bad arguments changed data/ or wrote logs"
  finish ;;

scratch)
  (($#)) || { echo "scratch needs the flavors to fill" >&2; exit 2; }
  key=regen-columns-test.cvt.scalef32.pk.fp8.f32
  cp -r "$checkout/data" "$tmp/data"
  rm -f "$tmp"/data/*/census.txt "$tmp"/data/*/frontend.txt "$tmp"/data/*/findings.md
  cp -r "$tmp/data" "$tmp/committed"
  cp "$checkout/schema/catalog.txt" "$tmp/catalog.txt"
  printf '%s   llvm.amdgcn.cvt.scalef32.pk.fp8.f32\n' "$key" >>"$tmp/catalog.txt"
  ntargets=$(grep -c '^[^#[:space:]]' "$checkout/schema/targets.txt")
  measured=()
  for d in "$tmp"/data/*/; do [[ -f $d/cells.jsonl ]] && measured+=("$(basename "$d")"); done
  checkout_data_before=$(cd "$checkout" && git status --porcelain -- data)

  out=$("$script" --data "$tmp/data" --catalog "$tmp/catalog.txt" --only "$key" "$@" 2>&1); rc=$?
  printf '%s\n' "$out"
  want_rc=0
  for f in "${measured[@]}"; do [[ " $* " == *" $f "* ]] || want_rc=1; done
  ((rc == want_rc)) && pass || fail "exit $rc, want $want_rc (coverage fails while a measured column lacks the key)"
  for f in "$@"; do
    grep -Eq "^regen-columns: $f +$ntargets cells measured in [0-9.]+ s: $ntargets new, 0 changed, 0 unchanged; [0-9]+ s in all$" <<<"$out" &&
      pass || fail "$f: no line saying $ntargets new cells"
    grep -qx "$f: complete, [0-9]* cells" <<<"$out" && pass || fail "$f: coverage does not pass"
    have=$(grep -c "\"key\":\"$key\"" "$tmp/data/$f/cells.jsonl")
    ((have == ntargets)) && pass || fail "$f: $have cells of the key, want $ntargets"
    if cmp -s <(grep -v "\"key\":\"$key\"" "$tmp/data/$f/cells.jsonl") "$tmp/committed/$f/cells.jsonl"; then pass
    else fail "$f: a committed cell changed"; fi
  done
  for f in "${measured[@]}"; do
    [[ " $* " == *" $f "* ]] && continue
    grep -qxF "$f: FAIL; keys not measured: $key; fill it with: tools/regen-columns --only $key $f" <<<"$out" &&
      pass || fail "$f: coverage does not fail naming the key and the command"
    cmp -s "$tmp/data/$f/cells.jsonl" "$tmp/committed/$f/cells.jsonl" && pass || fail "$f changed, not named"
  done

  # Again, checked: every new cell reproduces.
  out=$("$script" --check --data "$tmp/data" --catalog "$tmp/catalog.txt" --only "$key" "$@" 2>&1); rc=$?
  ((rc == want_rc)) && pass || fail "--check: exit $rc, want $want_rc"$'\n'"$out"
  for f in "$@"; do
    grep -Eq "^regen-columns: $f +all $ntargets measured cells reproduce the committed column" <<<"$out" &&
      pass || fail "--check: $f does not reproduce"$'\n'"$out"
  done
  [[ $(cd "$checkout" && git status --porcelain -- data) == "$checkout_data_before" ]] && pass ||
    fail "the checkout's own data/ changed"
  finish ;;

*) echo "unknown mode '$mode'" >&2; exit 2 ;;
esac
