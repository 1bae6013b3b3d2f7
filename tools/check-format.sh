#!/usr/bin/env bash
# Checks C++ files against .clang-format without changing them (clang-format --dry-run -Werror).
#
#   tools/check-format.sh                  files changed since the merge base with main (+ uncommitted)
#   tools/check-format.sh --all            every tracked .cpp/.h/.hpp file
#   tools/check-format.sh FILE...          the given files
# Options (before the files):
#   --base REF    compare with REF instead of main (or $FORMAT_BASE)
#   --warn-only   report but exit 0 (what CI uses for now, see docs/build.md)
#   --verbose     print every violation, not only a count per file
#
# Exit status: 0 when every checked file is formatted, 1 otherwise (0 with --warn-only), 2 on misuse.
# It never reformats; to fix your own file: clang-format -i FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
mode=changed
base=${FORMAT_BASE:-main}
warn_only=no
verbose=no
files=()
while [ $# -gt 0 ]; do
    case $1 in
    --all) mode=all ;;
    --base) base=$2; shift ;;
    --warn-only) warn_only=yes ;;
    --verbose) verbose=yes ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "check-format.sh: unknown option $1" >&2; exit 2 ;;
    *) mode=files; files+=("$1") ;;
    esac
    shift
done

if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check-format.sh: $CLANG_FORMAT not found (Debian: clang-format)" >&2
    [ "$warn_only" = yes ] && exit 0 || exit 2
fi

# Tracked C++ files; outside a git checkout (e.g. a source tarball), every C++ file of the source dirs.
all_files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -- '*.cpp' '*.h' '*.hpp'
    else
        find include src tests tools \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -type f 2>/dev/null | sort
    fi
}
is_cxx() { case $1 in *.cpp|*.h|*.hpp) return 0 ;; *) return 1 ;; esac; }
case $mode in
all)
    mapfile -t files < <(all_files)
    ;;
changed)
    if ! mb=$(git merge-base HEAD "$base" 2>/dev/null); then
        echo "check-format.sh: no merge base with '$base'; checking every file" >&2
        mapfile -t files < <(all_files)
    else
        mapfile -t files < <({ git diff --name-only --diff-filter=d "$mb" -- '*.cpp' '*.h' '*.hpp';
                               git ls-files --others --exclude-standard -- '*.cpp' '*.h' '*.hpp'; } | sort -u)
    fi
    ;;
esac

bad=0
checked=0
for f in "${files[@]}"; do
    is_cxx "$f" && [ -f "$f" ] || continue
    checked=$((checked + 1))
    if ! out=$("$CLANG_FORMAT" --style=file --dry-run -Werror "$f" 2>&1); then
        bad=$((bad + 1))
        if [ "$verbose" = yes ]; then
            printf '%s\n' "$out"
        else
            echo "$f: $(printf "%s\n" "$out" | grep -c clang-format-violations) places to reformat"
        fi
    fi
done
echo "check-format.sh: $checked file(s) checked, $bad not formatted ($($CLANG_FORMAT --version | head -n1))"
if [ "$bad" -gt 0 ]; then
    echo "check-format.sh: see them with --verbose; fix your own files with: clang-format -i FILE"
    [ "$warn_only" = yes ] && exit 0
    exit 1
fi
