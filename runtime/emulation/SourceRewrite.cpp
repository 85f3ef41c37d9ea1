//===- SourceRewrite.cpp - CUDA text the host compiler accepts ------------===//

#include "runtime/emulation/SourceRewrite.h"

#include <algorithm>
#include <regex>
#include <vector>

using namespace rudnn::runtime;

namespace {

/// Where each physical line of `source` is for the compiler: its line
/// number and file as `#line` directives in the text set them.
struct LogicalLine {
  long number;
  std::string file; // empty: the compiler's own name for the file
};

std::vector<LogicalLine> logicalLines(const std::string &source) {
  static const std::regex directive(
      R"re(^\s*#\s*line\s+(\d+)(?:\s+("(?:[^"\\]|\\.)*"))?)re");
  std::vector<LogicalLine> lines;
  LogicalLine next{1, ""};
  size_t start = 0;
  while (start <= source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos)
      end = source.size();
    lines.push_back(next);
    ++next.number;
    std::smatch match;
    const std::string text = source.substr(start, end - start);
    if (std::regex_search(text, match, directive)) {
      next.number = std::stol(match.str(1));
      if (match[2].matched)
        next.file = match.str(2);
    }
    start = end + 1;
  }
  return lines;
}

} // namespace

std::string rudnn::runtime::rewriteDynamicShared(const std::string &source) {
  static const std::regex declaration(
      R"(extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?)"
      R"(([A-Za-z_][\w:<>,\s\*]*?)\s*(?:__align__\s*\(\s*\d+\s*\)\s*)?)"
      R"(\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  auto first = std::sregex_iterator(source.begin(), source.end(), declaration);
  if (first == std::sregex_iterator())
    return source;
  const std::vector<LogicalLine> lines = logicalLines(source);
  std::string result;
  auto begin = source.cbegin();
  for (auto it = first; it != std::sregex_iterator(); ++it) {
    const std::smatch &match = *it;
    result.append(begin, match[0].first);
    const std::string type = match.str(1), name = match.str(2);
    // The directives take lines of their own; #line gives the rest of the
    // declaration's last line its original number (and file) back.
    const LogicalLine &after =
        lines[std::count(source.cbegin(), match[0].second, '\n')];
    result += "\n#undef " + name + "\n#define " + name + " (reinterpret_cast<" +
              type + " *>(::rudnn_emu_current()->dynamicShared))\n#line " +
              std::to_string(after.number) +
              (after.file.empty() ? "" : " " + after.file) + "\n";
    begin = match[0].second;
  }
  result.append(begin, source.cend());
  return result;
}

std::pair<unsigned, unsigned>
rudnn::runtime::launchBoundsOf(const std::string &source,
                               const std::string &entry) {
  const std::regex bounds(
      R"(__launch_bounds__\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*)" + entry +
      R"(\s*\()");
  std::smatch match;
  if (!std::regex_search(source, match, bounds))
    return {0, 0};
  return {static_cast<unsigned>(std::stoul(match.str(1))),
          match[2].matched ? static_cast<unsigned>(std::stoul(match.str(2)))
                           : 1u};
}
