#!/usr/bin/env bash
# `cmake --install` as a user meets it: installs this build into a temporary
# prefix; checks that librudnn.so exports only rudnn's API and needs only
# glibc, libstdc++ and libgcc; builds examples/host out of tree against the
# CMake package, and again with pkg-config alone; runs both on the emulation
# backend (each checks its results against float64 and fails otherwise);
# saves a bundle and runs it with the installed runtime alone; configures
# rudnn as another project's subproject.
#
#   install-test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd)
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
for tool in rudnn-opt rudnn-translate rudnn-run rudnn-emulate rudnn-bundle-run; do
  [[ -x "$prefix/bin/$tool" ]] || fail "bin/$tool missing"
done

# Only the API is exported: the C functions rudnn_*, and C++ names of
# rudnn:: whose every part the public headers declare (never LLVM, MLIR,
# a class's Impl or another internal name); the library needs only glibc,
# libstdc++ and libgcc, and has a versioned soname.
checkLibrary() {
  local library=$1 exports="$work/exports-$(basename "$1")"
  nm -D --defined-only --demangle "$library" |
    awk '{$1=""; $2=""; line = substr($0, 3); sub(/@@?RUDNN_.*$/, "", line);
         print line}' > "$exports"
  [[ -s "$exports" ]] || fail "$library exports nothing"
  ! grep -qiE 'llvm|mlir|::Impl' "$exports" ||
    fail "$library exports LLVM, MLIR or Impl symbols"
  while IFS= read -r symbol; do
    case "$symbol" in
    RUDNN_*[0-9].[0-9]*) ;; # version nodes
    rudnn_*) grep -qw "$symbol" "$prefix"/include/rudnn/*.h ||
        fail "exported $symbol is not in the C headers" ;;
    "typeinfo for rudnn::"* | "typeinfo name for rudnn::"* | "vtable for rudnn::"*)
      grep -qw "class ${symbol##*::}" "$prefix"/include/rudnn/*.h ||
        fail "exported $symbol is not a public class" ;;
    rudnn::*)
      local chain=${symbol#rudnn::}
      chain=${chain%%(*}
      chain=${chain%%\[*}
      for part in ${chain//::/ }; do
        grep -qw -- "${part#\~}" "$prefix"/include/rudnn/*.h ||
          fail "exported $symbol: '$part' is not in the public headers"
      done ;;
    *) fail "$library exports $symbol, outside rudnn's API" ;;
    esac
  done < "$exports"
  local extra
  extra=$(ldd "$library" | awk '{print $1}' | sed 's|.*/||' |
    grep -vE '^(linux-vdso|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|librt|libdl)\.so' || true)
  [[ -z "$extra" ]] || fail "$library needs $extra"
  readelf -d "$library" | grep -q "SONAME.*\.so\.[0-9]*\.[0-9]*\]" ||
    fail "$library has no versioned soname"
}
checkLibrary "$library"
grep -qE '^rudnn::kdaForward\(' "$work/exports-$(basename "$library")" ||
  fail "rudnn::kdaForward not exported"
grep -qE '^rudnn_context_create$' "$work/exports-$(basename "$library")" ||
  fail "rudnn_context_create not exported"
runtime=$(find "$prefix" -name 'librudnn_runtime.so.*.*.*' | head -1)
[[ -n "$runtime" ]] || fail "no librudnn_runtime.so.X.Y.Z under $prefix"
checkLibrary "$runtime"
grep -qE '^rudnn::Bundle::load\(' "$work/exports-$(basename "$runtime")" ||
  fail "rudnn::Bundle::load not exported by librudnn_runtime"
! grep -qE '^rudnn::(kdaForward|Module::parse)' \
  "$work/exports-$(basename "$runtime")" ||
  fail "librudnn_runtime exports the compiler's API"

# A bundle saved by the installed compiler runs with the installed runtime
# alone, in another process, and gives what the JIT gives.
"$prefix/bin/rudnn-translate" "$source/examples/rms_norm.mlir" --rudnn-to-bundle \
  --rudnn-bundle-targets=emulation,sm_90 -o "$work/rms.bundle" ||
  fail "rudnn-translate --rudnn-to-bundle"
"$prefix/bin/rudnn-run" "$source/examples/rms_norm.mlir" --backend emulation \
  --random 3 --dims N=19 --check --cache-dir "" --save-inputs "$work/in" \
  --outputs "$work/jit" > "$work/jit.log" || { cat "$work/jit.log"; fail "rudnn-run"; }
"$prefix/bin/rudnn-bundle-run" "$work/rms.bundle" --backend emulation \
  --inputs "$work/in" --outputs "$work/aot" > "$work/aot.log" ||
  { cat "$work/aot.log"; fail "rudnn-bundle-run"; }
! ldd "$prefix/bin/rudnn-bundle-run" | grep -qiE 'llvm|mlir|nvrtc|librudnn\.so' ||
  fail "rudnn-bundle-run links a compiler"
for result in y rstd; do
  cmp -s "$work/jit/$result.npy" "$work/aot/$result.npy" ||
    fail "the bundle's $result differs from the JIT's"
done

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
# pkg-config's flags carry the library's rpath: the binary runs as linked.
"$work/host-pc" emulation > /dev/null ||
  fail "examples/host (pkg-config) failed without LD_LIBRARY_PATH"
# As a subproject (add_subdirectory or FetchContent): no tests, no
# benchmarks, and rudnn::rudnn carries its include directories only.
mkdir -p "$work/parent"
cat > "$work/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.24)
project(parent LANGUAGES C CXX)
add_subdirectory("$source" rudnn)
foreach(target rudnn-api-tests rudnn-unit-tests rudnn-bench-kda)
  if(TARGET \${target})
    message(FATAL_ERROR "a subproject build defines \${target}")
  endif()
endforeach()
foreach(target rudnn::rudnn rudnn::runtime)
  foreach(property INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS
                   INTERFACE_LINK_LIBRARIES)
    get_target_property(value \${target} \${property})
    if(value)
      message(FATAL_ERROR "\${target} passes \${property} on: \${value}")
    endif()
  endforeach()
endforeach()
CMAKE
cmake -S "$work/parent" -B "$work/parent/build" -G Ninja > "$work/parent.log" 2>&1 ||
  { cat "$work/parent.log"; fail "rudnn as a subproject"; }
echo "install test passed"
