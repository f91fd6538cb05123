//===- Grid.cpp - Variant grids: JSON -> variant specs --------------------===//

#include "compiler/Grid.h"
#include "compiler/Variant.h"
#include "core/TextNesting.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include <cstdio>
#include <optional>
#include <utility>

namespace mlir::attn {

namespace {

/// A grid value as variant text. Numbers keep every digit of the double JSON
/// read, so a float knob reaches the variant as the user wrote it.
llvm::Expected<std::string> gridValueText(const llvm::json::Value &v) {
  if (std::optional<llvm::StringRef> s = v.getAsString())
    return s->str();
  if (std::optional<bool> b = v.getAsBoolean())
    return std::string(*b ? "true" : "false");
  if (std::optional<int64_t> i = v.getAsInteger())
    return std::to_string(*i);
  if (std::optional<double> d = v.getAsNumber()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *d);
    return std::string(text);
  }
  return llvm::createStringError("a value that is not a string, number or "
                                 "boolean");
}

/// Expands one grid object into variant specs: the product of the value
/// lists; keys that do not apply to a combination's op are left out of it.
/// Every key must be a variant key.
llvm::Error expandObject(const llvm::json::Object &grid,
                         std::vector<std::string> &specs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  for (const auto &[key, value] : grid) {
    if (llvm::Error err = checkVariantKey(key))
      return err;
    const llvm::json::Array *values = value.getAsArray();
    if (!values || values->empty())
      return llvm::createStringError(
          "grid key '" + key.str() + "' must map to a non-empty list");
    std::vector<std::string> texts;
    for (const llvm::json::Value &v : *values) {
      llvm::Expected<std::string> text = gridValueText(v);
      if (!text)
        return llvm::createStringError("grid key '" + key.str() + "' has " +
                                       llvm::toString(text.takeError()));
      texts.push_back(std::move(*text));
    }
    axes.emplace_back(key.str(), std::move(texts));
  }
  // Sorted keys make the expansion order (and so variant order) stable.
  llvm::sort(axes, [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<size_t> index(axes.size(), 0);
  while (true) {
    std::string op;
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a].first == "op")
        op = axes[a].second[index[a]];
    std::string spec;
    for (size_t a = 0; a < axes.size(); ++a) {
      const std::string &key = axes[a].first;
      if (!op.empty() && key != "op" && !variantKeyApplies(key, op))
        continue;
      spec += (spec.empty() ? "" : ",") + key + "=" + axes[a].second[index[a]];
    }
    specs.push_back(spec);
    size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++index[a] < axes[a].second.size())
        break;
      index[a] = 0;
    }
    if (a == axes.size())
      return llvm::Error::success();
  }
}

} // namespace

llvm::Error expandGrid(llvm::StringRef json, llvm::StringRef name,
                       std::vector<std::string> &specs) {
  // llvm::json recurses per nesting level: refuse a deep text before it.
  if (::attn::Status s = ::attn::checkNesting(json, name); !s)
    return llvm::createStringError("grid " + s.message());
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return llvm::createStringError(
        "grid " + name + " is not valid JSON: " +
        llvm::toString(parsed.takeError()));
  std::vector<const llvm::json::Object *> grids;
  if (const llvm::json::Object *object = parsed->getAsObject())
    grids.push_back(object);
  else if (const llvm::json::Array *array = parsed->getAsArray())
    for (const llvm::json::Value &v : *array)
      grids.push_back(v.getAsObject());
  if (grids.empty() || llvm::is_contained(grids, nullptr))
    return llvm::createStringError(
        "grid " + name +
        " must be an object of key -> list of values, or an array of them");
  for (const llvm::json::Object *grid : grids)
    if (llvm::Error err = expandObject(*grid, specs))
      return llvm::createStringError("grid " + name + ": " +
                                     llvm::toString(std::move(err)));
  return llvm::Error::success();
}

} // namespace mlir::attn
