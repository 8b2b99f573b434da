// cli/cmd_site.cpp — `archdb site --out DIR`: the service's answers as a static site any file server can
// publish (service/site.h), made from the database as every command keeps it.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "service/site.h"
#include "support/error.h"

namespace archdb::cli {

void add_site(CLI::App& app, Context& context, int& exit_code) {
  auto out = std::make_shared<std::string>();
  auto web = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "site", "Write archdb's answers as a static site: the matrix page, the JSON it reads, and a page per key and "
              "per census intrinsic, for any plain file server");
  cmd->add_option("--out", *out, "the folder to write: missing, empty, or an earlier site (replaced whole)")->required();
  cmd->add_option("--web", *web, "the page's folder (default: as `archdb serve`)");
  cmd->add_flag("--json", *as_json, "print what was written as JSON");
  cmd->callback([&context, &exit_code, out, web, as_json] {
    auto schema = std::make_shared<service::Schema>();
    schema->catalog = context.load_catalog();
    schema->targets = context.load_targets();
    service::SiteSummary s = service::write_site(context.open_store(), schema, web->empty() ? context.web : *web, *out);
    if (*as_json) {
      nlohmann::ordered_json j = {{"out", *out}, {"files", s.files}, {"bytes", s.bytes}, {"flavors", s.flavors},
                                  {"keys", s.keys}, {"intrinsics", s.intrinsics}};
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s: %zu files (%.1f MB): the page, %zu flavors, %zu key pages, %zu intrinsic pages\n", out->c_str(),
                  s.files, s.bytes / 1e6, s.flavors, s.keys, s.intrinsics);
    }
    exit_code = kExitOk;
  });
}

}  // namespace archdb::cli
