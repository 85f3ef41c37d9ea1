//===- RudnnDialect.h - The rudnn dialect and its attributes ----*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_RUDNNDIALECT_H
#define RUDNN_DIALECTS_IR_RUDNNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/IR/RudnnDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/IR/RudnnAttrs.h.inc"

#endif // RUDNN_DIALECTS_IR_RUDNNDIALECT_H
