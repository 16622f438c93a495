# Sourced by bench/compare.sh and bench/decode_ab.sh: builds revisions of the library under
# several code layouts (see compare.sh for why).
#   build_layouts OUT SEEDS REV...  builds OUT/lib/SHA-sSEED/libb2frame.so.0 for each revision
#                                   (a worktree per revision in OUT/src-SHA, a target directory
#                                   per seed shared by the revisions); skips those built.
build_layouts() {
  local out=$1 seeds=$2 rev sha tree s lib
  shift 2
  for rev in "$@"; do
    sha=$(git rev-parse --short "$rev^{commit}")
    tree=$out/src-$sha
    [ -d "$tree" ] || git worktree add --detach "$tree" "$sha" >/dev/null 2>&1
    for s in $(seq "$seeds"); do
      lib=$out/lib/$sha-s$s
      [ -f "$lib/libb2frame.so.0" ] && continue
      echo "building $rev ($sha), layout $s" >&2
      (cd "$tree" && RUSTFLAGS="-C llvm-args=-align-loops=64 -C link-arg=-Wl,--shuffle-sections=.text*=$s" \
        CARGO_TARGET_DIR=$out/target-s$s cargo build --release --lib --quiet)
      mkdir -p "$lib"
      cp "$out/target-s$s/release/libb2frame.so" "$lib/libb2frame.so.0"
    done
  done
}
