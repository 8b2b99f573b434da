// cli/cli.h — the `archdb` command line: parses, dispatches to a subcommand, maps errors to exit codes.
#pragma once

namespace archdb::cli {

int run(int argc, char** argv);

}  // namespace archdb::cli
