// cli/cli.cpp — the `archdb` application: global options, subcommands, and the one place where errors
// become a one-line message and an exit code.
#include "cli/cli.h"

#include <sys/personality.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "db/column.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb::cli {

namespace {
constexpr const char* kFooter = R"(Exit codes:
  0  success
  1  a check found differences (regen --check, coverage, compare)
  2  usage: bad flag or subcommand, unknown flavor, target or key; compare with a file of
     another flavor or no shared cell; diff of a descriptor
     (check: 0 cleared, 1 refused or manifest drift, 2 unvalidated, 3 any error)
  3  bad input: malformed catalog or rocke-v1 file, corrupt data file, corrupt or foreign
     database, a path that cannot be read or written
  4  the probe could not measure (probe_error cells, or a flavor this build does not link)
  5  internal error

Defaults: --db $ARCHDB_DB or <build dir>/archdb.sqlite (created from data/ on first use);
          --data $ARCHDB_DATA or <checkout>/data. An installed archdb: <prefix>/var/cache/archdb/archdb.sqlite
          (the user's cache if the prefix is not writable) and <prefix>/share/archdb/data.)";

std::string version_text() {
  initialize_amdgpu();
  const ToolchainInfo& tc = linked_toolchain();
  return "archdb " ARCHDB_VERSION " (generator " + std::to_string(Provenance::kGeneratorVersion) + "), linked with " +
         tc.identity + " (flavor " + tc.flavor() + ")";
}
// CLI11 reports a word that names no subcommand as an unexpected argument, or a missing subcommand, without
// naming it as such: the first word that is not a global option (or its value) must be a subcommand.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") return "";
    if (word.rfind('-', 0) == 0) {
      bool takes_value = word == "--db" || word == "--data" || word == "--catalog" || word == "--targets-file";
      bool global = takes_value || word.rfind("--db=", 0) == 0 || word.rfind("--data=", 0) == 0 ||
                    word.rfind("--catalog=", 0) == 0 || word.rfind("--targets-file=", 0) == 0;
      if (!global) return "";  // an option CLI11 will name itself
      if (takes_value) ++i;
      continue;
    }
    auto named = app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    return named.empty() ? word : "";
  }
  return "";
}
}  // namespace

CLI::Validator processor_name() {
  return CLI::Validator(
      [](std::string& name) {
        name = canonical_target(name);
        return std::string();
      },
      "PROCESSOR", "LLVM's processor name");
}

// A measuring command starts itself once more, before anything has happened (nothing is lost), set up for
// measuring in two ways only a new program image takes:
//  - huge pages for malloc: the probe's workers fault in fresh memory for every compile; with huge pages that
//    is a few faults instead of thousands (glibc reads its malloc tunables only at start-up);
//  - the same address layout every run (no ASLR): LLVM's crashes on bad memory land where the addresses of that
//    run send them, and the pass a crash is attributed to, which is a cell's evidence, changed from run to run
//    (a census's image samples on gfx1250 crashed "in pass 'Finalize ISel...'" in 1 run of 3, in "AMDGPU DAG->DAG
//    Pattern Instruction Selection" otherwise; with one layout, the same pass in 8 runs of 8).
void reexec_for_measuring(int argc, char** argv) {
  bool measuring = false;
  for (int i = 1; i < argc; ++i) measuring |= std::strcmp(argv[i], "regen") == 0 || std::strcmp(argv[i], "bench") == 0 ||
                                              std::strcmp(argv[i], "census") == 0;
  if (!measuring) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool huge_pages = tunables && std::strstr(tunables, "glibc.malloc.hugetlb");
  const int persona = ::personality(0xffffffff);
  const bool fixed_layout = persona != -1 && (persona & ADDR_NO_RANDOMIZE);
  if (huge_pages && fixed_layout) return;
  if (!huge_pages) {
    std::string value = std::string(tunables && *tunables ? std::string(tunables) + ":" : "") + "glibc.malloc.hugetlb=1";
    ::setenv("GLIBC_TUNABLES", value.c_str(), 1);
  }
  if (!fixed_layout && persona != -1) ::personality(static_cast<unsigned long>(persona) | ADDR_NO_RANDOMIZE);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then go on as we are
}

int run(int argc, char** argv) {
  reexec_for_measuring(argc, argv);
  Context context = Context::with_defaults();
  int exit_code = kExitOk;
  CLI::App app{"archdb: which LLVM intrinsics each AMD GPU target can lower, per LLVM version, with evidence"};
  app.name("archdb");
  app.footer(kFooter);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--db", context.db, "the SQLite database");
  app.add_option("--data", context.data, "the folder of committed columns (data/<flavor>/)");
  app.add_option("--catalog", context.catalog, "the decl-key catalog");
  app.add_option("--targets-file", context.targets_file, "the wired target list");
  app.set_version_flag("--version", std::function<std::string()>(version_text), "print the version and exit");

  add_regen(app, context, exit_code);
  add_coverage(app, context, exit_code);
  add_census(app, context, exit_code);
#ifndef ARCHDB_MEASURE_ONLY
  add_query(app, context, exit_code);
  add_search(app, context, exit_code);
  add_transfer(app, context, exit_code);
  add_history(app, context, exit_code);
  add_runs(app, context, exit_code);
  add_intrinsic(app, context, exit_code);
  add_bench(app, context, exit_code);
  add_check(app, context, exit_code);
#ifdef ARCHDB_WITH_SERVICE
  add_serve(app, context, exit_code);
  add_site(app, context, exit_code);
#endif
  add_code_object(app, context, exit_code);
  add_wgrad(app, context, exit_code);
  add_crosscheck(app, context, exit_code);
  add_catalog(app, context, exit_code);
#endif

  if (std::string word = unknown_subcommand(app, argc, argv); !word.empty()) {
    std::fprintf(stderr, "archdb: unknown subcommand '%s' (archdb --help lists them)\n", word.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // For `check`, 2 means unvalidated; its usage errors are 3 like its other errors.
    bool checking = false;
    for (const CLI::App* sub : app.get_subcommands()) checking |= sub->get_name() == "check";
    return code == 0 ? kExitOk : checking ? kExitBadInput : kExitUsage;
  } catch (const Error& e) {
    std::fprintf(stderr, "archdb: %s\n", e.what());
    return e.code();
  } catch (const std::filesystem::filesystem_error& e) {
    // A path that cannot be read, made or written (given by the user, or the data folder): bad input.
    std::fprintf(stderr, "archdb: %s\n", describe(e).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "archdb: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return exit_code;
}

}  // namespace archdb::cli
