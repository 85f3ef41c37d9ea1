//===- rudnn/rudnn.hpp - The rudnn C++ API ----------------------*- C++ -*-===//

#ifndef RUDNN_RUDNN_HPP
#define RUDNN_RUDNN_HPP

#include "rudnn/attention.h"
#include "rudnn/context.h"
#include "rudnn/errors.h"
#include "rudnn/kda.h"
#include "rudnn/kv_cache.h"
#include "rudnn/log.h"
#include "rudnn/gru.h"
#include "rudnn/lstm.h"
#include "rudnn/norm.h"
#include "rudnn/operator.h"
#include "rudnn/program.h"
#include "rudnn/types.h"
#include "rudnn/version.h"

#endif // RUDNN_RUDNN_HPP
