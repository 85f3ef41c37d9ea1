//===- version.cpp - rudnn's version --------------------------------------===//

#include "rudnn/version.h"

const char *rudnn::version() { return RUDNN_VERSION; }
