//===- EmulationPrelude.cpp - The prelude compiled once -------------------===//

#include "runtime/backends/EmulationPrelude.h"
#include "runtime/cache/Hash.h"
#include "runtime/cache/KernelCache.h"
#include "runtime/compile/Shell.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <string_view>
#include <system_error>
#include <unistd.h>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

namespace {

constexpr const char *kPrecompiledName = "rudnn_emulation.h.gch";
constexpr const char *kHooksSource = "rudnn_emu_check_hooks.cpp";
constexpr const char *kHooksObject = "rudnn_emu_check_hooks.o";
constexpr const char *kThreadSlotSource = "rudnn_emu_thread_slot.cpp";

/// A name no other process or thread writes to in `folder`.
fs::path scratchName(const fs::path &folder, const std::string &name) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return folder / (".tmp-" + std::to_string(::getpid()) + "-" +
                   std::to_string(random()) + "-" + name);
}

/// Runs `command`, which writes `scratch`, and renames that to `target`
/// (atomically: a process reading `target` sees a whole file or none).
/// Returns the command's output when it fails.
std::pair<bool, std::string> writeByRename(const std::string &command,
                                           const fs::path &scratch,
                                           const fs::path &target) {
  auto [status, output] = runShell(command);
  std::error_code error;
  if (status == 0)
    fs::rename(scratch, target, error);
  if (status != 0 || error) {
    fs::remove(scratch, error);
    return {false, status != 0 ? output : "renaming into " + target.string()};
  }
  return {true, output};
}

/// The shared entry for `build`'s identity, made if missing; empty when
/// the folder cannot be made or others could write into it (whoever plants
/// a precompiled header or hooks object chooses the code kernels run).
fs::path sharedEntry(const PreludeBuild &build) {
  if (build.sharedDirectory.empty())
    return {};
  Hasher hasher;
  fs::path entry = build.sharedDirectory /
                   hasher.add(build.identity).finish().hex().substr(0, 16);
  std::string reason = makePrivateDirectory(build.sharedDirectory.string());
  if (reason.empty())
    reason = makePrivateDirectory(entry.string());
  if (!reason.empty()) {
    log(LogLevel::Info, "emulation: the prelude is compiled for this "
                        "process only (" +
                            entry.string() + ": " + reason + ")");
    return {};
  }
  return entry;
}

/// `name`, compiled from `source` with `flags` into `entry` (or straight
/// into the include folder when there is none) and copied to the include
/// folder, where kernel links and loads read it whatever other processes
/// prune.
fs::path preludeArtifact(const PreludeBuild &build, const fs::path &entry,
                         const char *name, const char *source,
                         const std::string &flags) {
  fs::path local = build.includeDirectory / name;
  fs::path shared = entry.empty() ? local : entry / name;
  fs::path from = build.includeDirectory / source;
  std::error_code error;
  if (!fs::exists(shared, error)) {
    fs::path scratch = scratchName(shared.parent_path(), name);
    std::string command = build.compiler + " " + flags + " " +
                          shellQuote(from.string()) + " -o " +
                          shellQuote(scratch.string());
    auto [made, output] = writeByRename(command, scratch, shared);
    if (!made)
      throw CompileError(name, command + "\n" + output, from.string());
  }
  if (shared != local)
    fs::copy_file(shared, local, fs::copy_options::overwrite_existing, error);
  if (error)
    throw CompileError(name,
                       "copying " + shared.string() + ": " + error.message(),
                       from.string());
  return local;
}

/// Whether the compiler takes `entry`'s precompiled header for the prelude
/// (-H marks a header it used with '!').
bool precompiledHeaderIsTaken(const PreludeBuild &build,
                              const fs::path &entry) {
  std::string command = "echo | " + build.compiler + " " + build.flags +
                        " -include rudnn_emulation.h -I" +
                        shellQuote(entry.string()) + " -I" +
                        shellQuote(build.includeDirectory.string()) +
                        " -x c++ -fsyntax-only -H - 2>&1";
  auto [status, output] = runShell(command);
  return status == 0 &&
         output.find("! " + (entry / kPrecompiledName).string()) !=
             std::string::npos;
}

/// Whether `path` starts as GCC's precompiled headers do (a damaged one
/// would be ignored by every compile, which would only be slow).
bool looksPrecompiled(const fs::path &path) {
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
  return std::string_view(magic, sizeof magic) == "gpch";
}

/// `entry`'s precompiled prelude, made if missing or damaged and checked
/// once made; false when there is none the compiler takes.
bool precompiledHeader(const PreludeBuild &build, const fs::path &entry) {
  fs::path target = entry / kPrecompiledName;
  std::error_code error;
  if (looksPrecompiled(target))
    return true;
  fs::path scratch = scratchName(entry, kPrecompiledName);
  std::string command =
      build.compiler + " " + build.flags + " -x c++-header " +
      shellQuote((build.includeDirectory / "rudnn_emulation.h").string()) +
      " -o " + shellQuote(scratch.string());
  auto [made, output] = writeByRename(command, scratch, target);
  if (made && precompiledHeaderIsTaken(build, entry))
    return true;
  fs::remove(target, error);
  log(LogLevel::Info,
      "emulation: the prelude is not precompiled" +
          (made ? std::string(" (the compiler refuses it)") : ": " + output));
  return false;
}

/// Marks `entry` used and removes all but the most recently used entries.
void pruneEntries(const fs::path &shared, const fs::path &entry) {
  std::error_code error;
  fs::last_write_time(entry, fs::file_time_type::clock::now(), error);
  std::vector<std::pair<fs::file_time_type, fs::path>> others;
  for (const fs::directory_entry &item :
       fs::directory_iterator(shared, error)) {
    if (item.path() == entry || !item.is_directory(error))
      continue;
    others.emplace_back(item.last_write_time(error), item.path());
  }
  if (others.size() <= kKeptPreludeEntries)
    return;
  std::sort(others.begin(), others.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  for (size_t i = kKeptPreludeEntries; i < others.size(); ++i)
    fs::remove_all(others[i].second, error);
}

} // namespace

fs::path rudnn::runtime::defaultPreludeDirectory() {
  std::string root = defaultCacheDirectory();
  return root.empty() ? fs::path() : fs::path(root) / "emulation";
}

CompiledPrelude rudnn::runtime::compilePrelude(const PreludeBuild &build) {
  CompiledPrelude result;
  fs::path entry = sharedEntry(build);
  // Kernel objects name the slot library by its soname, which the loader
  // finds among the objects the process has loaded.
  result.threadSlot = preludeArtifact(
      build, entry, kThreadSlotLibrary, kThreadSlotSource,
      build.hooksFlags + " -shared -Wl,-soname," + kThreadSlotLibrary);
  if (build.hooks)
    result.hooksObject = preludeArtifact(
        build, entry, kHooksObject, kHooksSource, build.hooksFlags + " -c");
  if (build.precompile && !entry.empty() && precompiledHeader(build, entry))
    result.precompiledInclude = "-I" + shellQuote(entry.string());
  if (!entry.empty())
    pruneEntries(build.sharedDirectory, entry);
  return result;
}
