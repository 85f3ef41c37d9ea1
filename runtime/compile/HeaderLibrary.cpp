//===- HeaderLibrary.cpp - Headers a kernel includes ----------------------===//

#include "runtime/compile/HeaderLibrary.h"

#include "rudnn/errors.h"
#include "runtime/support/InputFile.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

using namespace rudnn;
using namespace rudnn::runtime;

std::vector<std::string> rudnn::runtime::quotedIncludes(std::string_view text) {
  std::vector<std::string> names;
  size_t lineStart = 0;
  while (lineStart < text.size()) {
    size_t lineEnd = text.find('\n', lineStart);
    if (lineEnd == std::string_view::npos)
      lineEnd = text.size();
    std::string_view line = text.substr(lineStart, lineEnd - lineStart);
    lineStart = lineEnd + 1;
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string_view::npos || line[at] != '#')
      continue;
    at = line.find_first_not_of(" \t", at + 1);
    if (at == std::string_view::npos || line.substr(at, 7) != "include")
      continue;
    size_t open = line.find('"', at + 7);
    if (open == std::string_view::npos)
      continue;
    size_t close = line.find('"', open + 1);
    if (close != std::string_view::npos)
      names.emplace_back(line.substr(open + 1, close - open - 1));
  }
  return names;
}

HeaderLibrary::HeaderLibrary(std::vector<HeaderFile> headers)
    : files(std::move(headers)) {
  includes.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    index.emplace(files[i].name, i);
    includes.push_back(quotedIncludes(files[i].contents));
  }
}

std::vector<std::string>
HeaderLibrary::includedBy(std::string_view source) const {
  std::set<std::string, std::less<>> seen;
  std::vector<std::string> pending = quotedIncludes(source);
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    auto found = index.find(name);
    if (found == index.end() || !seen.insert(name).second)
      continue;
    const std::vector<std::string> &next = includes[found->second];
    pending.insert(pending.end(), next.begin(), next.end());
  }
  return {seen.begin(), seen.end()};
}

Hash128 HeaderLibrary::hashIncludedBy(std::string_view source) const {
  const std::vector<std::string> names = includedBy(source);
  std::string key;
  for (const std::string &name : names)
    key += name + '\n';
  std::lock_guard<std::mutex> lock(hashesMutex);
  auto [it, inserted] = hashes.try_emplace(std::move(key));
  if (inserted) {
    Hasher hasher;
    for (const std::string &name : names)
      hasher.add(name).add(files[index.find(name)->second].contents);
    it->second = hasher.finish();
  }
  return it->second;
}

std::vector<HeaderFile> HeaderLibrary::overlaid(std::vector<HeaderFile> headers,
                                                const std::string &directory,
                                                const std::string &prefix) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw InvalidArgument("the device library folder '" + directory +
                          "' is not a readable folder");
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < headers.size(); ++i)
    byName.emplace(headers[i].name, i);
  fs::recursive_directory_iterator it(directory, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path &path = it->path();
    const std::string extension = path.extension().string();
    if (!it->is_regular_file(error) ||
        (extension != ".cuh" && extension != ".h"))
      continue;
    std::string name =
        prefix + path.lexically_relative(directory).generic_string();
    std::string contents =
        readInputFile(path.string(), "a device library header");
    if (auto known = byName.find(name); known != byName.end())
      headers[known->second].contents = std::move(contents);
    else
      headers.push_back({std::move(name), std::move(contents)});
  }
  if (error)
    throw InvalidArgument("cannot read the device library folder '" +
                          directory + "': " + error.message());
  return headers;
}
