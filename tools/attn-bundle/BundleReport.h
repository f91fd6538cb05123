//===- BundleReport.h - What a bundle holds, where its bytes go -*- C++ -*-===//
//
// attn-bundle show: every entry of a bundle whole, as the runtime holds it
// (its plan and kernel records with full symbols), where the manifest
// writes shared tables and references.
//
// attn-bundle stats: the manifest's bytes and the kernel files' bytes, in
// total and per variant, and the files grouped by target, subgroup size,
// SPIR-V ABI form and kernel (entry point). A file shared by several
// entries is counted once, under the first entry (in manifest order) that
// names it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_BUNDLEREPORT_H
#define ATTN_TOOLS_BUNDLEREPORT_H

#include "runtime/bundle/Bundle.h"

#include <string>

namespace attn::tools {

/// The entries of `bundle` as JSON (one space of indentation): the
/// compiler, then per entry its name, subgroup size, cache key, parameters,
/// plans[] and kernels[] (symbol, target, file, entry, hash, launch).
std::string expandedManifest(const runtime::Bundle &bundle);

/// The report, as text (one table per grouping). The kernel files are
/// sized on disk; the bundle must be loaded (files checked).
std::string describeBundleBytes(const runtime::Bundle &bundle);

} // namespace attn::tools

#endif // ATTN_TOOLS_BUNDLEREPORT_H
