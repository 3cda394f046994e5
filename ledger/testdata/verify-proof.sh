#!/usr/bin/env bash
# verify-proof.sh PROOF.json KEY — checks an opx inclusion proof (the output of
# `opx ledger prove SEQ --json`) without opx, using only bash, jq, openssl and
# coreutils (sha256sum, base64, od, head):
#   - KEY is the verifier key (`opx ledger key`, saved elsewhere): NAME+HASH+KEY in the
#     C2SP signed-note format, HASH = first 4 bytes of SHA-256(NAME "\n" 0x01 pubkey),
#     or a file holding it (`opx ledger key > FILE`);
#   - the checkpoint note carries a signature line "— NAME base64(keyhash || sig)" whose
#     Ed25519 signature over the note text verifies with openssl;
#   - the checkpoint's origin is the key's NAME (a key signs only for the log it names);
#   - the checkpoint's tree size and root are the proof's tree_size and root_hash;
#   - the entry's seq is the proof's index, and its leaf hash is SHA-256(0x00 || entry);
#   - the RFC 6962 inclusion path (RFC 9162 section 2.1.3.2) leads from the leaf to the root.
# Exit 0 when all hold; otherwise it says which check failed and exits 1.
set -euo pipefail
proof=${1:?usage: verify-proof.sh PROOF.json NAME+HASH+KEY|KEYFILE}
key=${2:?usage: verify-proof.sh PROOF.json NAME+HASH+KEY|KEYFILE}
fail() { echo "verify-proof: $*" >&2; exit 1; }
for tool in jq openssl sha256sum base64 od head; do
  command -v "$tool" > /dev/null || fail "needs $tool (jq, openssl and coreutils)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hex() { od -An -v -tx1 | tr -d ' \n'; }                 # stdin bytes -> hex
unhex() { local h; h=$(cat); printf "$(printf '%s' "$h" | sed 's/../\\x&/g')"; }  # hex -> bytes
b64hex() { base64 -d | hex; }                           # base64 on stdin -> hex
sha() { sha256sum | cut -c1-64; }                       # stdin bytes -> hex SHA-256

# The key: the string itself when it has the form NAME+HASH+KEY, else the
# first line of the file it names, read bounded (a key is under 1 KiB).
if ! [[ $key =~ ^[^+[:space:]]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$ ]]; then
  if [ -e "$key" ]; then
    [ -f "$key" ] || fail "key file $key is not a regular file"
    key=$(head -c 4096 "$key" | tr -d '\0\r' | head -n 1)
    key=${key//[[:space:]]/}
  elif [[ $key != *+* ]]; then
    fail "key file $key does not exist (KEY is NAME+HASH+KEY or a file holding it)"
  fi
fi
# The key's base64 may hold '+': split at the first two only.
name=${key%%+*}; rest=${key#*+}; khash=${rest%%+*}; kb64=${rest#*+}
[ -n "$name" ] && [ "$name" != "$key" ] && [ "$khash" != "$rest" ] && [ -n "$kb64" ] || fail "key is not NAME+HASH+KEY"
khex=$(printf '%s' "$kb64" | b64hex 2>/dev/null) || fail "key is not base64"
[ ${#khex} = 66 ] && [ "${khex:0:2}" = 01 ] || fail "key is not an Ed25519 verifier key"
want=$( { printf '%s\n' "$name"; printf '%s' "$khex" | unhex; } | sha | cut -c1-8)
[ "$want" = "$khash" ] || fail "key hash $khash does not match the key ($want)"
# An Ed25519 SubjectPublicKeyInfo is a fixed 12-byte DER prefix and the 32 key bytes.
printf '302a300506032b6570032100%s' "${khex:2}" | unhex > "$tmp/key.der"

# The note: text up to the blank line, then signature lines.
jq -j .checkpoint "$proof" > "$tmp/note" || fail "proof is not JSON with a checkpoint"
sep=$(grep -n -m1 -x '' "$tmp/note" | cut -d: -f1) || fail "checkpoint is not a signed note"
head -n $((sep - 1)) "$tmp/note" > "$tmp/text"
sighex=""
while IFS= read -r line; do
  case $line in "— $name "*) ;; *) continue ;; esac
  h=$(printf '%s' "${line#"— $name "}" | b64hex 2>/dev/null) || continue
  if [ ${#h} = 136 ] && [ "${h:0:8}" = "$khash" ]; then sighex=$h; break; fi
done < <(tail -n +$((sep + 1)) "$tmp/note")
[ -n "$sighex" ] || fail "the checkpoint carries no signature by $name"
printf '%s' "${sighex:8}" | unhex > "$tmp/sig"
openssl pkeyutl -verify -pubin -keyform DER -inkey "$tmp/key.der" -rawin -in "$tmp/text" -sigfile "$tmp/sig" > /dev/null 2>&1 ||
  fail "the signature by $name does not verify"

# The checkpoint body against the proof.
origin=$(sed -n 1p "$tmp/text"); size=$(sed -n 2p "$tmp/text"); root=$(sed -n 3p "$tmp/text")
[ "$origin" = "$name" ] || fail "the checkpoint's origin \"$origin\" is not the key's name \"$name\""
[ "$size" = "$(jq -r .tree_size "$proof")" ] || fail "the signed checkpoint is tree $size, the proof claims $(jq -r .tree_size "$proof")"
[ "$root" = "$(jq -r .root_hash "$proof")" ] || fail "the signed checkpoint has root $root, the proof claims $(jq -r .root_hash "$proof")"
roothex=$(printf '%s' "$root" | b64hex)

# The leaf.
index=$(jq -r .index "$proof")
jq -j .entry "$proof" > "$tmp/entry"
[ "$(jq -r .seq "$tmp/entry")" = "$index" ] || fail "entry has seq $(jq -r .seq "$tmp/entry"), the proof is for leaf $index"
leaf=$( { printf '\0'; cat "$tmp/entry"; } | sha)

# The path (RFC 9162 2.1.3.2).
[ "$index" -lt "$size" ] || fail "leaf $index is outside a tree of $size"
fn=$index; sn=$((size - 1)); r=$leaf
for p in $(jq -r '.hashes[]' "$proof"); do
  ph=$(printf '%s' "$p" | b64hex)
  [ ${#ph} = 64 ] || fail "a path hash is not a base64 SHA-256 hash"
  [ "$sn" -gt 0 ] || fail "inclusion path is too long"
  if [ $((fn & 1)) = 1 ] || [ "$fn" = "$sn" ]; then
    r=$(printf '01%s%s' "$ph" "$r" | unhex | sha)
    while [ $((fn & 1)) = 0 ] && [ "$fn" != 0 ]; do fn=$((fn >> 1)); sn=$((sn >> 1)); done
  else
    r=$(printf '01%s%s' "$r" "$ph" | unhex | sha)
  fi
  fn=$((fn >> 1)); sn=$((sn >> 1))
done
[ "$sn" = 0 ] || fail "inclusion path is too short"
[ "$r" = "$roothex" ] || fail "the path leads to root $r, the checkpoint's root is $roothex"
echo "ok: entry $index (leaf $leaf) is in tree $size of $origin, signed by $name"
