//===- Version.cpp - attn's version ---------------------------------------===//

#include "core/Version.h"

// ATTN_VERSION comes from core/CMakeLists.txt, for this file only.
const char *attn::version() { return ATTN_VERSION; }
