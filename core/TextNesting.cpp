//===- TextNesting.cpp - Bracket depth before a recursive parser ----------===//
#include "core/TextNesting.h"

#include <cstddef>

namespace attn {

namespace {

/// "NAME:LINE:COL" of byte `at` of `text` (both counted from 1).
std::string locate(std::string_view text, std::string_view name, size_t at) {
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return std::string(name) + ":" + std::to_string(line) + ":" +
         std::to_string(at - lineStart + 1);
}

/// The index of the byte that ends the string opened at `at` (its closing
/// quote, or the end of the text).
size_t skipString(std::string_view text, size_t at) {
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i;
  }
  return text.size();
}

} // namespace

Status checkNesting(std::string_view text, std::string_view name,
                    int maxDepth) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '"') {
      i = skipString(text, i);
    } else if (c == '/' && next == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if ((c == '-' && next == '>') || (c == '>' && next == '=')) {
      ++i;
    } else if (c == '[' || c == '{' || c == '(' || c == '<') {
      if (++depth > maxDepth)
        return errorf(locate(text, name, i), ": nested more than ", maxDepth,
                      " brackets deep, the limit of attn's parsers");
    } else if ((c == ']' || c == '}' || c == ')' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return Status::ok();
}

} // namespace attn
