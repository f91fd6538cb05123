//===- Version.h - attn's version ------------------------------*- C++ -*-===//
//
// The project's version (CMake's PROJECT_VERSION), what every tool's
// --version prints and what bundles record of the compiler that wrote them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_VERSION_H
#define ATTN_CORE_VERSION_H

namespace attn {

/// "MAJOR.MINOR.PATCH", e.g. "0.3.0".
const char *version();

} // namespace attn

#endif // ATTN_CORE_VERSION_H
