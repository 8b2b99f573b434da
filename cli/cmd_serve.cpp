// cli/cmd_serve.cpp — `archdb serve`: the checker and the columns as a read-only HTTP service (JSON API under
// /v1, the matrix page at /). The database is made from data/ where it is missing, and brought up to date
// with data/ once, at start, as every command does.
#include <filesystem>

#include "service/server.h"
#include "cli/commands.h"
#include "support/error.h"

namespace archdb::cli {
namespace {

struct ServeArgs {
  service::ServeOptions options;
  size_t cache_mb = service::Limits{}.cache_bytes >> 20;
};

int serve(const Context& ctx, ServeArgs args) {
  if (args.options.web_dir.empty()) args.options.web_dir = ctx.web;
  args.options.limits.cache_bytes = args.cache_mb << 20;
  auto schema = std::make_shared<service::Schema>();
  schema->catalog = ctx.load_catalog();
  schema->targets = ctx.load_targets();
  return service::serve(ctx.open_store(), schema, args.options);
}

}  // namespace

void add_serve(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the columns and the checker over HTTP, read-only: JSON API under /v1, the matrix page at /. "
               "SIGTERM or Ctrl-C finishes the requests in flight and exits 0");
  cmd->add_option("--host", o.host, "the address to listen on; the default serves this machine only")
      ->capture_default_str();
  cmd->add_option("--port", o.port, "the TCP port; 0 picks a free one (the first line printed names it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--allow-host", o.allow_hosts,
                 "a host name (NAME, no port) clients may reach this service by, besides IP addresses, localhost and "
                 "--host; repeatable. Requests naming any other host are refused (403): a DNS name rebound to this "
                 "machine cannot reach the API");
  cmd->add_option("--web", o.web_dir, "the page's folder (default: <prefix>/share/archdb/web for an installed archdb, else service/web of this checkout)");
  cmd->add_option("--threads", o.limits.threads, "workers, which serve requests once they have arrived whole (default: 16 per CPU this process may use)");
  cmd->add_option("--cache-mb", args->cache_mb, "MiB of rendered answers kept until the database changes (0: none, "
                                         "every answer is rendered afresh)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--ir-cpu-ms", o.limits.ir_cpu_ms, "CPU time one kernel's IR may take to read; past it the check is a "
                                                  "422 naming the budget")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  cmd->add_option("--ir-per-client", o.limits.ir_per_client, "IR checks one client (address) may have running or "
                                                          "waiting; one more is a 429")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--access-log", o.access_log, "print one line per request on stderr");
  cmd->callback([&context, &exit_code, args] { exit_code = serve(context, *args); });
}

}  // namespace archdb::cli
