#!/usr/bin/env bash
# verify-export.sh EXPORT — checks an opx ledger export (opx-ledger/1) without
# opx, using only zstd, jq and b3sum:
#   - every line ends in "\n"; seq counts up by one from the manifest's from_seq (0 for a full export);
#   - the prev of the first line is the manifest's prev (64 zeros for a full export), and the prev
#     of every later line is the b3sum of the line before it (without its newline);
#   - the last line's hash is the manifest's last_hash;
#   - every blob in the bundle decompresses and hashes to its file name.
# Exit 0 when all hold; otherwise it says which check failed and exits 1.
set -euo pipefail
export_file=${1:?usage: verify-export.sh EXPORT(.jsonl or .jsonl.zst)}
base=${export_file%.zst}
bundle=${base%.jsonl}.blobs
fail() { echo "verify-export: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $export_file in
  *.zst) zstd -dcq -- "$export_file" > "$tmp/lines" ;;
  *) cat -- "$export_file" > "$tmp/lines" ;;
esac
[ -s "$tmp/lines" ] || fail "empty export"
[ "$(tail -c1 "$tmp/lines" | od -An -tx1 | tr -d ' ')" = "0a" ] || fail "last line has no newline"

prev=0000000000000000000000000000000000000000000000000000000000000000
seq=0
last=""
if [ -f "$bundle/manifest.json" ]; then
  prev=$(jq -r .prev "$bundle/manifest.json")
  seq=$(jq -r .from_seq "$bundle/manifest.json")
  last=$(jq -r .last_hash "$bundle/manifest.json")
fi

jq -r '"\(.seq) \(.prev)"' "$tmp/lines" > "$tmp/links" || fail "a line is not JSON"
n=0
while IFS=' ' read -r s p <&3 && IFS= read -r line <&4; do
  n=$((n + 1))
  [ "$s" = "$seq" ] || fail "line $n: seq $s, expected $seq"
  [ "$p" = "$prev" ] || fail "line $n (seq $s): prev $p, expected $prev"
  prev=$(printf '%s' "$line" | b3sum --no-names)
  seq=$((seq + 1))
done 3< "$tmp/links" 4< "$tmp/lines"
[ "$n" = "$(wc -l < "$tmp/lines")" ] || fail "line count mismatch"
if [ -n "$last" ]; then
  [ "$prev" = "$last" ] || fail "last line hashes to $prev, manifest says $last"
fi

blobs=0
if [ -d "$bundle" ]; then
  for f in "$bundle"/*.zst; do
    [ -e "$f" ] || continue
    want=$(basename "$f" .zst)
    got=$(zstd -dcq -- "$f" | b3sum --no-names) || fail "blob $want does not decompress"
    [ "$got" = "$want" ] || fail "blob $want hashes to $got"
    blobs=$((blobs + 1))
  done
fi
echo "ok: $n entries, last hash $prev, $blobs blobs"
