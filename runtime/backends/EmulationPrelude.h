//===- EmulationPrelude.h - The prelude compiled once -----------*- C++ -*-===//
//
// Every emulated kernel is compiled with the same prelude, about 55,000
// lines once the standard headers are in: parsing it was half of a small
// kernel's compile. The prelude is therefore compiled once per compiler,
// flags and headers: into a precompiled header (GCC's, which the compiler
// picks up by itself and ignores when it does not fit), and in check mode
// into the object holding the instrumentation hooks, linked into every
// kernel object. Both are kept in a folder that processes share, so a test
// suite of many processes compiles them once.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BACKENDS_EMULATIONPRELUDE_H
#define RUDNN_RUNTIME_BACKENDS_EMULATIONPRELUDE_H

#include <filesystem>
#include <string>

namespace rudnn::runtime {

/// What the prelude is compiled with and where it is written.
struct PreludeBuild {
  /// The host compiler, quoted for the shell, and its kernel flags (without
  /// the prelude's -include).
  std::string compiler;
  std::string flags;
  /// The hooks object's flags: the kernels' without the instrumentation,
  /// which would call the hooks from within themselves (Clang instruments
  /// atomics even where a function is exempt).
  std::string hooksFlags;
  /// The folder the prelude and device headers were written to (private to
  /// the process); the hooks object is copied there.
  std::filesystem::path includeDirectory;
  /// Names the compiler, flags and every header: one shared entry each.
  std::string identity;
  /// The shared folder (entries beneath it, one per identity); empty: none,
  /// and the prelude is not precompiled.
  std::filesystem::path sharedDirectory;
  /// Whether the compiler takes GCC's precompiled headers.
  bool precompile = false;
  /// Whether kernels need the check mode's hooks object.
  bool hooks = false;
};

/// What kernel compiles add.
struct CompiledPrelude {
  /// "-I<folder>" holding rudnn_emulation.h.gch, put before the include
  /// folder; empty when there is none.
  std::string precompiledInclude;
  /// The hooks object inside the include folder; empty without check mode.
  std::filesystem::path hooksObject;
  /// The thread-slot library inside the include folder (soname
  /// kThreadSlotLibrary): kernel objects link it, the process loads it
  /// first.
  std::filesystem::path threadSlot;
};

/// The thread-slot library's soname.
inline constexpr const char *kThreadSlotLibrary = "librudnn_emu_thread_slot.so";

/// The shared folder's default: "emulation" under the kernel cache's
/// default folder, none where that is memory only.
std::filesystem::path defaultPreludeDirectory();

/// Compiles what `build` asks for, or reuses a shared entry. A precompiled
/// header that cannot be made is left out (compiles are only slower); hooks
/// that do not compile throw CompileError.
CompiledPrelude compilePrelude(const PreludeBuild &build);

/// Shared entries kept besides the one in use, most recently used first.
inline constexpr int kKeptPreludeEntries = 3;

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BACKENDS_EMULATIONPRELUDE_H
