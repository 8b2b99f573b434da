// probe/census.h — measuring the census (db/census.h): every intrinsic of LLVM's own table whose name has
// the amdgcn target prefix, on every processor the AMDGPU target's MCSubtargetInfo knows, with the same probe
// (run_probe) and statuses as a catalog column.
//
// Instantiation. A non-overloaded intrinsic is posed as it is. An overloaded one is posed with concrete
// overload types from the candidate set below: each overload slot gets the candidates its constraint in
// LLVM's table admits (integer, float, pointer, vector or any), in the listed order, and combinations are
// tried in that order (the first slot varies slowest). A combination is an instantiation when LLVM accepts
// it as it would a kernel's declaration: the types fit the table's constraints and derived types, the probe
// module parses, and the verifier passes (resolve.h, in forked workers). The first `max_instantiations`
// accepted combinations (at most `max_candidates` tried) are measured. An intrinsic with no accepted
// combination, or whose signature a probe kernel cannot take (token or label operands, a variadic
// declaration), is listed as not probed with LLVM's or the probe's reason, and never given a status.
//
// Candidate set v2 (kCandidateSet), per slot constraint:
//   integer scalars   i32 i64 i16 i8 i1
//   float scalars     float half double bfloat
//   integer vectors   <2 x i32> <4 x i32> <8 x i32> <2 x i16> <4 x i16> <8 x i16> <16 x i16> <2 x i64> <3 x i32>
//                     <16 x i32> <4 x i8>
//   float vectors     <2 x half> <4 x float> <8 x float> <4 x half> <8 x half> <16 x half> <2 x float>
//                     <16 x float> <2 x bfloat> <4 x bfloat> <8 x bfloat> <16 x bfloat> <2 x double> <3 x float>
//   pointers          ptr addrspace(1) ptr addrspace(3) ptr ptr addrspace(4) ptr addrspace(5) ptr addrspace(7)
//                     ptr addrspace(8)
//   an `any` slot     the scalars (integers, then floats, interleaved as i32 float i64 half ...), then the
//                     vectors, then the pointers; an `anyvector` slot only the vectors.
//   image intrinsics  (llvm.amdgcn.image.*) an `any` slot of the result (the texels) takes <4 x float> first;
//                     the `any` slots only parameters use are the descriptors: the first (the resource)
//                     takes <8 x i32> first, the second (the sampler) <4 x i32> first; image atomics take
//                     i32 results first.
//   family hints      (v2) put first what the intrinsic's name implies: a pointer into LDS for ds.* and *lds*
//                     names, global for global.* and cluster.*, flat for flat.*; a result of the width a
//                     .b32/.b64/.b96/.b128 in the name states (i32, <2 x i32>, <3 x i32>, <4 x i32>; of i16
//                     elements for .tr16.), (v3) then that width in the other element size; a buffer resource
//                     (ptr addrspace(8)) as the result of make.buffer.rsrc; for wmma.* and swmmac.*, vectors
//                     before scalars (but a sparse index: (v3) i16, then i32), those of the element types the
//                     name states first (wmma.f32.16x16x16.f16: <8 x float> results, <16 x half> sources;
//                     narrow integer and fp8 sources as dwords), wide ones first.
//   layout families   (v3) matrix operations, lane masks, transposing loads (layout_family in census.cpp):
//                     combinations in the order of the sum of their slots' ranks (one step from the first
//                     before two steps), not with the last slot varying fastest.
//
// Clang's instantiations. Every call clang of the same flavor makes of a builtin on any processor (the front-end
// axis, db/frontend.h) whose instantiation is not a row yet becomes one, measured on every processor, before the
// searches: the overload types are read from its mangled name (LLVM's mangling: i32, f16, bf16, v8f32, p3) and the
// declaration must resolve to that same name.
//
// The search. An overloaded intrinsic none of whose measured instantiations lowers on any processor tries its
// next accepted candidates (search_width a round, search_rounds rounds) on one processor of each generation
// (kSearchProcessors); the first that lowers on one of them is measured on every processor and kept as a row
// of its own beside the first. Candidates that lower nowhere in the search are not kept.
//
// The layout search. An intrinsic of a layout family tries its next layout_width accepted candidates on each
// of those processors where none of its instantiations lowers but an intrinsic of its family becomes an
// instruction (a lane mask: wherever it does not lower); each candidate that becomes an instruction on such a
// processor is measured on every processor and kept as a row of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/census.h"
#include "probe/probe.h"

namespace archdb {

constexpr const char* kCandidateSet = "v3";

// LLVM's table: every intrinsic named llvm.amdgcn.*, sorted.
std::vector<std::string> amdgcn_intrinsic_names();
// Every processor the AMDGPU target knows by a gfx name (aliases such as "tahiti" left out), sorted.
std::vector<std::string> amdgpu_processor_names();
// The candidate overload-type combinations of an intrinsic, in trial order (empty if not overloaded, or
// if its table has a slot no candidate fits: `why` says so).
std::vector<std::vector<std::string>> candidate_combinations(const std::string& intrinsic, size_t limit, std::string& why);

struct CensusOptions {
  std::string flavor;                     // the linked LLVM's flavor
  std::vector<std::string> intrinsics;    // only these (exact names); empty: every llvm.amdgcn.* intrinsic
  std::vector<std::string> processors;    // only these; empty: every gfx processor
  // The calls clang of the same flavor makes of its builtins (the front-end axis's emitted names, mangled): each
  // that is not a row yet becomes one, measured on every processor (clang's instantiations).
  std::vector<std::string> clang_calls;
  std::string clang;                      // clang's version line, for the provenance
  int jobs = 0;
  // Budgets per probe kernel (see docs/measuring.md "The census"): CPU time on the first attempt and on the retry of a
  // crash or hang, and a wall-clock backstop for a hang that does not spend CPU (the catalog's is 60 s).
  int cpu_budget_ms = 50;
  int retry_cpu_budget_ms = 100;
  int timeout_s = 10;
  int retries = 1;
  std::vector<int64_t> immarg_sweep = kDefaultImmargSweep;
  int max_instantiations = 1;             // per overloaded intrinsic
  int max_candidates = 64;                // combinations tried per overloaded intrinsic
  // The search (docs/measuring.md "The census"): rounds, and candidates measured a round per intrinsic that lowers nowhere.
  // Two rounds: the third measured 172 candidates (LLVM 22) and 176 (LLVM 23) for 15 s of a 121 s census and
  // found none.
  int search_rounds = 2;
  int search_width = 4;
  // The layout search (docs/measuring.md "The census"): candidates measured per intrinsic.
  int layout_width = 4;
  bool progress = false;
};

struct CensusRun {
  Census census;                          // sorted and counted
  std::vector<std::string> probe_errors;  // "key/target: reason": such a census is never written
  ProbeStats stats;
  int candidates_tried = 0;               // combinations posed to LLVM while instantiating
  int search_candidates = 0;              // instantiations measured by the search on its processors
  struct SearchRound {
    size_t intrinsics = 0;                // searching: none of their instantiations lowered yet
    size_t candidates = 0;                // measured on the search's processors
    size_t found = 0;                     // that lowered on one of them, then measured on every processor
  };
  std::vector<SearchRound> search;
  SearchRound layout;                     // the layout search: intrinsics sought, candidates, kept
  struct ClangCalls {
    size_t calls = 0;                     // distinct llvm.amdgcn.* calls clang makes of its builtins
    size_t rows = 0;                      // those that were no row yet, measured everywhere
    std::vector<std::string> unread;      // "name: why" for calls whose overload types could not be read
  } clang;
  double plan_seconds = 0;                // enumeration and instantiation
  double seconds = 0;                     // the whole census
};

// The overload types of a mangled intrinsic name ("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16" ->
// {"<8 x float>", "<16 x half>"}), as the census writes them; nullopt, with `why`, where it is not an overloaded
// intrinsic of this LLVM or its suffix is not read here (structs, functions).
std::optional<std::vector<std::string>> overload_types_of_mangled(const std::string& mangled, std::string& why);

// Throws Error for an unknown intrinsic or processor named in the options.
// How the census poses its kernels (budgets, retries, the sweep), for anything that measures an instantiation
// to stand beside the census's cells (on-demand cells, the cross-check's own declarations).
ProbeOptions census_probe_options(const CensusOptions& options);

CensusRun run_census(const CensusOptions& options);

// The probe module of a declaration as the probe poses it (its declaration, the kernel calling it posed as
// `posed` says, or the default way when it is empty, and the module flags), for one-line reproducers. Resolved in this process; empty, with `why`, if LLVM does not resolve it.
std::string probe_module_text(const DeclSpec& spec, const std::optional<CallPosing>& posed, std::string& why);

}  // namespace archdb
