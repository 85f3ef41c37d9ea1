//===- CommandLine.h - Parsing a tool's command line ------------*- C++ -*-===//

#ifndef RUDNN_TOOLS_SUPPORT_COMMANDLINE_H
#define RUDNN_TOOLS_SUPPORT_COMMANDLINE_H

#include <boost/program_options.hpp>

#include <initializer_list>

namespace rudnn::tools {

/// An argument given by position: `count` of them (-1: all that remain)
/// stored through `value`. Not shown by --help.
struct PositionalArgument {
  const char *name;
  boost::program_options::value_semantic *value;
  int count = 1;
};

/// argv parsed against `options` and the positional arguments, in order.
inline boost::program_options::variables_map
parseCommandLine(int argc, char **argv,
                 const boost::program_options::options_description &options,
                 std::initializer_list<PositionalArgument> positionals) {
  namespace po = boost::program_options;
  po::options_description all, hidden;
  po::positional_options_description positional;
  for (const PositionalArgument &argument : positionals) {
    hidden.add_options()(argument.name, argument.value);
    positional.add(argument.name, argument.count);
  }
  all.add(options).add(hidden);
  po::variables_map given;
  po::store(po::command_line_parser(argc, argv)
                .options(all)
                .positional(positional)
                .run(),
            given);
  po::notify(given);
  return given;
}

} // namespace rudnn::tools

#endif // RUDNN_TOOLS_SUPPORT_COMMANDLINE_H
