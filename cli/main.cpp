// archdb's entry point; everything else lives in the libraries (cli/, probe/, db/, schema/).
#include "cli/cli.h"

int main(int argc, char** argv) { return archdb::cli::run(argc, argv); }
