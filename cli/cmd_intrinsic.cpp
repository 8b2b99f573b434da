// cli/cmd_intrinsic.cpp — `archdb intrinsic NAME...`: LLVM's own signature template of intrinsics, for
// writing catalog entries (which overload types an entry needs, which operands are immarg).
#include <cstdio>

#include "cli/commands.h"
#include "probe/resolve.h"
#include "llvm/toolchain.h"
#include "support/error.h"

namespace archdb::cli {

void add_intrinsic(CLI::App& app, Context& context, int& exit_code) {
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("intrinsic", "Print the signature template this LLVM has for intrinsics");
  sub->add_option("name", *names, "intrinsic names, e.g. llvm.amdgcn.mfma.f32.4x4x4bf16.1k")->required();
  sub->callback([&exit_code, names] {
    initialize_amdgpu();
    int missing = 0;
    for (const auto& n : *names) {
      std::string t = describe_intrinsic(n);
      if (t.empty()) {
        std::printf("%s: not an intrinsic in LLVM %s\n", n.c_str(), linked_toolchain().llvm_version.c_str());
        ++missing;
      } else {
        std::printf("%s: %s\n", n.c_str(), t.c_str());
      }
    }
    exit_code = missing ? kExitDifferent : kExitOk;
  });
  (void)context;
}

}  // namespace archdb::cli
