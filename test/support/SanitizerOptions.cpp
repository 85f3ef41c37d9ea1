//===- SanitizerOptions.cpp - Sanitizer defaults built into executables ---===//
//
// Linked into every executable of a sanitized build (and into the suite that
// preloads ASan), so the options hold however a binary is started: by
// ctest, lit or by hand. Variables in the environment still override them.
//
//===----------------------------------------------------------------------===//

extern "C" {

// LLVM's inline allocator code poisons memory that the prebuilt,
// uninstrumented LLVM libraries then touch: ignore those manual
// annotations, keep the rest. LeakSanitizer's exit-time scan stops every
// thread through a tracer that now and then crashes on the emulation's
// fiber stacks: leaks are not checked.
__attribute__((visibility("default"), used)) const char *
__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

__attribute__((visibility("default"), used)) const char *
__ubsan_default_options() {
  return "print_stacktrace=1";
}

__attribute__((visibility("default"), used)) const char *
__tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1";
}

} // extern "C"
