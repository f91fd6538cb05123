//===- AttnOps.h - attn operations, attributes and types ------*- C++ -*-===//
#ifndef ATTN_DIALECT_ATTNOPS_H
#define ATTN_DIALECT_ATTNOPS_H

#include "dialect/AttnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/AttnTypes.h.inc"

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTNOPS_H
