#!/usr/bin/env bash
# `cmake --install` as a user meets it: installs this build into a temporary
# prefix; checks that librudnn.so exports only rudnn's API and needs only
# glibc, libstdc++ and libgcc; builds examples/host out of tree against the
# CMake package, and again with pkg-config alone; runs both on the emulation
# backend (each checks its results against float64 and fails otherwise).
#
#   install-test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rudnn-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
library=$(find "$prefix" -name 'librudnn.so.*.*.*' | head -1)
[[ -n "$library" ]] || fail "no librudnn.so.X.Y.Z under $prefix"
libdir=$(dirname "$library")
for header in rudnn.h rudnn.hpp kda.h program.h; do
  [[ -f "$prefix/include/rudnn/$header" ]] || fail "include/rudnn/$header missing"
done
for tool in rudnn-opt rudnn-translate rudnn-run rudnn-emulate; do
  [[ -x "$prefix/bin/$tool" ]] || fail "bin/$tool missing"
done

# Only the API is exported: the C functions rudnn_*, and C++ names of
# rudnn:: whose every part the public headers declare (never LLVM, MLIR,
# a class's Impl or another internal name).
nm -D --defined-only --demangle "$library" |
  awk '{$1=""; $2=""; line = substr($0, 3); sub(/@@?RUDNN_.*$/, "", line);
       print line}' > "$work/exports"
[[ -s "$work/exports" ]] || fail "librudnn exports nothing"
grep -qE '^rudnn::kdaForward\(' "$work/exports" || fail "rudnn::kdaForward not exported"
grep -qE '^rudnn_context_create$' "$work/exports" || fail "rudnn_context_create not exported"
! grep -qiE 'llvm|mlir|::Impl' "$work/exports" || fail "LLVM, MLIR or Impl symbols exported"
while IFS= read -r symbol; do
  case "$symbol" in
  RUDNN_[0-9]*) ;;
  rudnn_*) grep -qw "$symbol" "$prefix"/include/rudnn/*.h ||
      fail "exported $symbol is not in the C headers" ;;
  "typeinfo for rudnn::"* | "typeinfo name for rudnn::"* | "vtable for rudnn::"*)
    name=${symbol##*::}
    grep -qw "class $name" "$prefix"/include/rudnn/*.h ||
      fail "exported $symbol is not a public class" ;;
  rudnn::*)
    chain=${symbol#rudnn::}
    chain=${chain%%(*}
    chain=${chain%%\[*}
    for part in ${chain//::/ }; do
      grep -qw -- "${part#\~}" "$prefix"/include/rudnn/*.h ||
        fail "exported $symbol: '$part' is not in the public headers"
    done ;;
  *) fail "librudnn exports $symbol, outside rudnn's API" ;;
  esac
done < "$work/exports"
extra=$(ldd "$library" | awk '{print $1}' | sed 's|.*/||' |
  grep -vE '^(linux-vdso|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|librt|libdl)\.so' || true)
[[ -z "$extra" ]] || fail "librudnn.so needs $extra"
readelf -d "$library" | grep -q "SONAME.*librudnn\.so\.[0-9]*\.[0-9]*\]" ||
  fail "no versioned soname"

# The CMake package.
cmake -S "$source/examples/host" -B "$work/host" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/host.log" 2>&1 &&
  cmake --build "$work/host" >> "$work/host.log" 2>&1 ||
  { cat "$work/host.log"; fail "examples/host did not build against the package"; }
LD_LIBRARY_PATH="$libdir" "$work/host/rudnn-host-example" emulation ||
  fail "examples/host (CMake package) failed"

# pkg-config alone.
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs rudnn) ||
  fail "pkg-config does not find rudnn"
c++ -std=c++17 -O1 "$source/examples/host/main.cpp" $flags -o "$work/host-pc" ||
  fail "examples/host did not build with pkg-config's flags"
LD_LIBRARY_PATH="$libdir" "$work/host-pc" emulation > /dev/null ||
  fail "examples/host (pkg-config) failed"
echo "install test passed"
