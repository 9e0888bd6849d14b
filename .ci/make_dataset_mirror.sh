#!/usr/bin/env bash
# Builds a dataset mirror from public sources: every file named in datasets/checksums.sha256, downloaded from the
# GitHub commit it is pinned to and checked against its sha256, laid out as `deno task fetch --mirror DIR` and the
# full-data tests read it (ACEBENCH_DATASET_MIRROR=DIR). Files already there with the right sha256 are kept, so a
# re-run only fetches what is missing. Writes DIR/SHA256SUMS for the files present.
#
#   bash .ci/make_dataset_mirror.sh DIR      build or complete the mirror in DIR
#   bash .ci/make_dataset_mirror.sh --urls   print "PATH URL" for every file, and nothing else
#
# ACEBENCH_GITHUB_RAW replaces https://raw.githubusercontent.com (a proxy, or a file:// copy laid out as
# OWNER/REPO/COMMIT/PATH). A Git LFS pointer served in place of a file is fetched again from GitHub's media host.
# Exit status 1 when a file could not be fetched or failed its checksum (each is named); the others are kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
raw="${ACEBENCH_GITHUB_RAW:-https://raw.githubusercontent.com}"
raw="${raw%/}"

# The public origin of a mirror path: OWNER/REPO/COMMIT/PATH on GitHub (sources: datasets/sources.ts, docs/datasets.md).
origin() {
  local path="$1"
  case "$path" in
    math500/test.jsonl)
      echo "Zhuofeng-Li/math-evaluation-harness/1b9885d817962a8494728376625ce6605772edbd/data/math500/test.jsonl" ;;
    aime2025/matharena/*)
      echo "eth-sri/matharena/81f103e38b1df076afa65ee0a3ffbe148d42e6d2/data/aime/${path#aime2025/matharena/}" ;;
    aime2025/yentinglin-format/test.jsonl)
      echo "ZhangShimin1/PassKEval/4a1495c890778fc3f477853e13db03cc5ec772c2/data/aime2025/test.jsonl" ;;
    dapo-math-17k/dapo_math_17k.parquet)
      echo "MasterVito/SvS/9fd8f35375b31b8632b52e715296c264a3ad4176/data/dapo_math_17k.parquet" ;;
    aime2024/test.jsonl | amc2023/test.jsonl | minerva/test.jsonl | olympiadbench/test.jsonl | gsm8k/test.jsonl)
      local dir="${path%/test.jsonl}"
      case "$dir" in aime2024) dir=aime24 ;; amc2023) dir=amc23 ;; minerva) dir=minerva_math ;; esac
      echo "QwenLM/Qwen2.5-Math/a45202bd16f1ec06f433442dc1152d0074773465/evaluation/data/$dir/test.jsonl" ;;
    *) echo "make_dataset_mirror: no public origin known for $path (add it to origin())" >&2; return 1 ;;
  esac
}

sums="$root/datasets/checksums.sha256"
if [ "${1:-}" = "--urls" ]; then
  while read -r _ path; do echo "$path $raw/$(origin "$path")"; done <"$sums"
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: bash .ci/make_dataset_mirror.sh DIR | --urls" >&2; exit 2; }
dir="$1"
mkdir -p "$dir"
failed=0 kept=0 fetched=0
while read -r sum path; do
  dest="$dir/$path"
  if [ -f "$dest" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" = "$sum" ]; then
    kept=$((kept + 1))
    continue
  fi
  src="$(origin "$path")" || { failed=$((failed + 1)); continue; }
  mkdir -p "$(dirname "$dest")"
  tmp="$dest.part"
  if ! curl -fsSL --retry 3 -o "$tmp" "$raw/$src"; then
    echo "make_dataset_mirror: $path: cannot download $raw/$src" >&2
    rm -f "$tmp"
    failed=$((failed + 1))
    continue
  fi
  if head -c 40 "$tmp" | grep -q '^version https://git-lfs'; then
    curl -fsSL --retry 3 -o "$tmp" "https://media.githubusercontent.com/media/$src" || true
  fi
  got="$(sha256sum "$tmp" | cut -d' ' -f1)"
  if [ "$got" != "$sum" ]; then
    echo "make_dataset_mirror: $path: sha256 $got, expected $sum (from $raw/$src); not kept" >&2
    rm -f "$tmp"
    failed=$((failed + 1))
    continue
  fi
  mv "$tmp" "$dest"
  fetched=$((fetched + 1))
done <"$sums"
# SHA256SUMS of the files present, in the "./path" form `sha256sum -c` reads (the full-data tests look for it).
(cd "$dir" && while read -r sum path; do if [ -f "$path" ]; then echo "$sum  ./$path"; fi; done <"$sums" >SHA256SUMS.part &&
  mv SHA256SUMS.part SHA256SUMS)
echo "make_dataset_mirror: $dir: $fetched fetched, $kept already there, $failed failed"
[ "$failed" = 0 ]
