//===- Shell.cpp - Running host tools -------------------------------------===//

#include "runtime/compile/Shell.h"

#include <cstdio>
#include <sys/wait.h>

using namespace rudnn::runtime;

std::string rudnn::runtime::shellQuote(const std::string &text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::pair<int, std::string>
rudnn::runtime::runShell(const std::string &command) {
  std::string output;
  FILE *pipe = ::popen(
      ("env -u LD_PRELOAD sh -c " + shellQuote(command) + " 2>&1").c_str(),
      "r");
  if (!pipe)
    return {-1, "cannot run: " + command};
  char buffer[4096];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, count);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}
