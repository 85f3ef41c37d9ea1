/*===- assert.h - Device assert for emulated kernels ----------------------===*\
|*                                                                            *|
|* Found before the C library's on the emulation include path: a failed       *|
|* device assert ends the kernel call through the executor instead of         *|
|* aborting the process. Like the C header it has no include guard, so each   *|
|* inclusion redefines assert according to NDEBUG.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e)                                                              \
  (static_cast<bool>(e)                                                        \
       ? (void)0                                                               \
       : ::rudnn_emu_assert_fail(#e, __FILE__, __LINE__, __func__))
#endif
