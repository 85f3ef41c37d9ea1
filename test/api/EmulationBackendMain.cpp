//===- EmulationBackendMain.cpp - The suites on the emulator ----*- C++ -*-===//
//
// The backend the operator suites of this executable run on.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

rudnn::BackendKind rudnn::test::testBackend() { return BackendKind::Emulation; }
