// cli/cmd_site.cpp — `archdb site --out DIR`: the service's answers as a static site any file server can
// publish (service/site.h), made from the database as every command keeps it.
#include <cstdio>

#include "cli/commands.h"
#include "service/site.h"
#include "support/error.h"

namespace archdb::cli {

void add_site(CLI::App& app, Context& context, int& exit_code) {
  auto out = std::make_shared<std::string>();
  auto web = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "site", "Write archdb's answers as a static site: the matrix page, the JSON it reads, and a page per key and "
              "per census intrinsic, for any plain file server");
  cmd->add_option("--out", *out, "the folder to write: missing, empty, or an earlier site (replaced whole)")->required();
  cmd->add_option("--web", *web, "the page's folder (default: as `archdb serve`)");
  cmd->callback([&context, &exit_code, out, web] {
    auto schema = std::make_shared<service::Schema>();
    schema->catalog = context.load_catalog();
    schema->targets = context.load_targets();
    service::SiteSummary s = service::write_site(context.open_store(), schema, web->empty() ? context.web : *web, *out);
    std::printf("%s: %zu files (%.1f MB): the page, %zu flavors, %zu key pages, %zu intrinsic pages\n", out->c_str(),
                s.files, s.bytes / 1e6, s.flavors, s.keys, s.intrinsics);
    exit_code = kExitOk;
  });
}

}  // namespace archdb::cli
