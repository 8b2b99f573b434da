// kernels/wgrad_problem.cpp — see wgrad_problem.h.
#include "kernels/wgrad_problem.h"

#include <climits>

#include "support/error.h"

namespace archdb::kernels {

std::string kind_name(WgradKind k) { return k == WgradKind::kDepthwise ? "depthwise" : "grouped"; }
std::string dtype_name(WgradDType d) { return d == kDTypeBF16 ? "bf16" : "f16"; }
std::string path_name(WgradPath p) {
  switch (p) {
    case WgradPath::kMfma: return "mfma";
    case WgradPath::kMfmaTr16: return "mfma_tr16";
    case WgradPath::kPortable: return "portable";
  }
  return "";
}

std::string WgradProblem::describe() const {
  std::string s = kind_name(kind) + " " + dtype_name(dtype) + " N=" + std::to_string(n) + " C=" + std::to_string(c) +
                  " H=" + std::to_string(h) + " W=" + std::to_string(w) + " filter=" + std::to_string(filter) +
                  " stride=" + std::to_string(stride) + " pad=" + std::to_string(pad);
  if (kind == WgradKind::kGrouped) s += " cpg=" + std::to_string(cpg);
  return s + " target_blocks=" + std::to_string(target_blocks);
}

namespace {

[[noreturn]] void invalid(const std::string& what) { throw usage_error("invalid wgrad problem: " + what); }

std::string got(int64_t v) { return " (got " + std::to_string(v) + ")"; }

// The product of `factors`, or -1 past INT_MAX (the kernels index with 32-bit ints).
int64_t product_within_int(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p) || p > INT_MAX) return -1;
  return p;
}

}  // namespace

void validate_problem(const WgradProblem& p) {
  const std::pair<const char*, int64_t> sizes[] = {{"n", p.n}, {"c", p.c}, {"h", p.h}, {"w", p.w}};
  for (const auto& [name, v] : sizes) {
    if (v < 1) invalid(std::string(name) + " must be >= 1" + got(v));
    if (v > INT_MAX) invalid(std::string(name) + " must be <= " + std::to_string(INT_MAX) + got(v));
  }
  if (p.filter < 3 || p.filter > 11 || p.filter % 2 == 0) invalid("filter must be odd, 3 to 11" + got(p.filter));
  if (p.stride != 1 && p.stride != 2) invalid("stride must be 1 or 2" + got(p.stride));
  if (p.pad < 0) invalid("pad must be >= 0" + got(p.pad));
  if (p.pad >= p.filter) invalid("pad must be < filter " + std::to_string(p.filter) + got(p.pad));
  if (p.ho() < 1 || p.h + 2 * p.pad < p.filter)
    invalid("output height must be >= 1: h " + std::to_string(p.h) + " + 2*pad " + std::to_string(2 * p.pad) +
            " < filter " + std::to_string(p.filter));
  if (p.wo() < 1 || p.w + 2 * p.pad < p.filter)
    invalid("output width must be >= 1: w " + std::to_string(p.w) + " + 2*pad " + std::to_string(2 * p.pad) +
            " < filter " + std::to_string(p.filter));
  if (p.kind == WgradKind::kDepthwise) {
    if (p.cpg != 1) invalid("cpg must be 1 for depthwise" + got(p.cpg));
  } else {
    if (p.cpg != 4 && p.cpg != 8) invalid("cpg must be 4 or 8 for grouped" + got(p.cpg));
    if (p.c % p.cpg != 0) invalid("c must be a multiple of cpg " + std::to_string(p.cpg) + got(p.c));
  }
  if (p.target_blocks < 1) invalid("target_blocks must be >= 1" + got(p.target_blocks));
  if (p.target_blocks > kMaxTargetBlocks)
    invalid("target_blocks must be <= " + std::to_string(kMaxTargetBlocks) + got(p.target_blocks));
  if (product_within_int({p.n, p.c, p.h, p.w}) < 0)
    invalid("x has more than " + std::to_string(INT_MAX) + " elements (n*c*h*w)");
  if (product_within_int({p.n, p.c, p.ho(), p.wo()}) < 0)
    invalid("dy has more than " + std::to_string(INT_MAX) + " elements (n*c*ho*wo)");
  if (product_within_int({p.target_blocks, p.c, p.cpg, p.filter, p.filter}) < 0)
    invalid("target_blocks " + std::to_string(p.target_blocks) + " x " + std::to_string(p.dw_elems()) +
            " weights is more than " + std::to_string(INT_MAX) + " partial sums");
}

WgradArgs make_args(const WgradProblem& p) {
  WgradArgs a{};
  a.n = static_cast<int>(p.n);
  a.c = static_cast<int>(p.c);
  a.h = static_cast<int>(p.h);
  a.w = static_cast<int>(p.w);
  a.ho = static_cast<int>(p.ho());
  a.wo = static_cast<int>(p.wo());
  a.filter = static_cast<int>(p.filter);
  a.stride = static_cast<int>(p.stride);
  a.pad = static_cast<int>(p.pad);
  a.cpg = static_cast<int>(p.cpg);
  a.target_blocks = static_cast<int>(p.target_blocks);
  return a;
}

namespace {

// The target lists live once, in kernels/variants.cmake (which the build gate reads too); the build passes
// them here as comma-separated lists.
std::vector<std::string> target_list(const char* comma_separated) {
  std::vector<std::string> out;
  std::string item;
  for (const char* c = comma_separated;; ++c) {
    if (*c == ',' || *c == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*c == '\0') break;
    } else {
      item += *c;
    }
  }
  return out;
}

std::vector<WgradVariant> make_variants() {
  const std::vector<std::string> mfma_targets = target_list(ARCHDB_KERNEL_MFMA_TARGETS);
  const std::vector<std::string> tr16_targets = target_list(ARCHDB_KERNEL_TR16_TARGETS);
  const std::vector<std::string> portable_targets = target_list(ARCHDB_KERNEL_PORTABLE_TARGETS);
  std::vector<WgradVariant> out;
  for (WgradKind kind : {WgradKind::kDepthwise, WgradKind::kGrouped})
    for (WgradDType dt : {kDTypeF16, kDTypeBF16})
      for (WgradPath path : {WgradPath::kMfma, WgradPath::kMfmaTr16, WgradPath::kPortable}) {
        WgradVariant v;
        v.kind = kind;
        v.dtype = dt;
        v.path = path;
        v.name = std::string("wgrad_") + (kind == WgradKind::kDepthwise ? "dw" : "grouped") + "_" + path_name(path) +
                 "_" + dtype_name(dt);
        v.source = path == WgradPath::kPortable ? "wgrad_portable.hip" : "wgrad_mfma.hip";
        v.defines = {kind == WgradKind::kDepthwise ? "WGRAD_KIND_DEPTHWISE" : "WGRAD_KIND_GROUPED",
                     dt == kDTypeF16 ? "WGRAD_DTYPE_F16" : "WGRAD_DTYPE_BF16"};
        if (path == WgradPath::kMfmaTr16) v.defines.push_back("WGRAD_USE_TR16");
        v.targets = path == WgradPath::kMfma ? mfma_targets : path == WgradPath::kMfmaTr16 ? tr16_targets : portable_targets;
        out.push_back(v);
      }
  return out;
}

}  // namespace

const std::vector<WgradVariant>& wgrad_variants() {
  static const std::vector<WgradVariant> variants = make_variants();
  return variants;
}

const WgradVariant* find_variant(const std::string& name) {
  for (const auto& v : wgrad_variants())
    if (v.name == name) return &v;
  return nullptr;
}

const WgradVariant& default_variant(WgradKind kind, WgradDType dtype) {
  for (const auto& v : wgrad_variants())
    if (v.kind == kind && v.dtype == dtype && v.path == WgradPath::kMfma) return v;
  throw internal_error("no default wgrad variant");
}

WgradPlan plan_launch(const WgradProblem& p, const WgradVariant& v) {
  validate_problem(p);
  if (v.kind != p.kind || v.dtype != p.dtype)
    throw usage_error("variant " + v.name + " serves " + kind_name(v.kind) + " " + dtype_name(v.dtype) +
                      " problems, not " + kind_name(p.kind) + " " + dtype_name(p.dtype));
  WgradPlan plan;
  plan.args = make_args(p);
  const WgradArgs& a = plan.args;
  const int elems = out_elems(a);
  WgradLaunch main;
  main.grid.z = a.target_blocks;
  if (v.path == WgradPath::kPortable) {
    const bool dw = p.kind == WgradKind::kDepthwise;
    main.kernel = dw ? WgradKernel::kPortableDw : WgradKernel::kPortableGrouped;
    main.symbol = dw ? "wgrad_portable_dw" : "wgrad_portable_grouped";
    main.grid.x = ceil_div(elems, kPortableThreads);
    main.block = kPortableThreads;
  } else if (p.kind == WgradKind::kDepthwise) {
    main.tiles = filter_tiles(a.filter);
    main.kernel = main.tiles == 1 ? WgradKernel::kDw1 : main.tiles == 2 ? WgradKernel::kDw2 : WgradKernel::kDw3;
    main.symbol = "wgrad_dw_t" + std::to_string(main.tiles);
    main.grid.x = DepthwiseMap::groups_x(a);
  } else {
    main.tiles = a.cpg / 4;
    main.kernel = a.cpg == 4 ? WgradKernel::kGroupedCpg4 : WgradKernel::kGroupedCpg8;
    main.symbol = "wgrad_grouped_cpg" + std::to_string(a.cpg);
    main.grid.x = GroupedMap::groups_x(a);
  }
  if (v.path != WgradPath::kPortable) {
    main.block = kWave;
    main.lds_bytes = static_cast<int>(sizeof(uint16_t)) * kMfmaBlocks * 4 * kTileK * 2 * main.tiles;
  }
  plan.launches.push_back(main);
  if (a.target_blocks > 1) {
    plan.workspace_floats = static_cast<int64_t>(a.target_blocks) * elems;
    WgradLaunch reduce;
    reduce.kernel = WgradKernel::kReduceZ;
    reduce.symbol = "wgrad_reduce_z";
    reduce.grid.x = ceil_div(elems, kReduceThreads);
    reduce.block = kReduceThreads;
    plan.launches.push_back(reduce);
  }
  return plan;
}

}  // namespace archdb::kernels
