// tests/ir_reader_test.cpp — the isolated IR reader (checker/ir_reader.h) with the real LLVM: it reads what the
// in-process reader reads; the guards refuse empty and deeply nested IR before LLVM sees it; LLVM's crashes,
// its endless readings and its allocations past the limit are answers naming the input, and the next read
// works. The hostile inputs are the ones that took the service down (issue 16), kept in tests/fixtures/hostile
// (bit flips of the bundled depthwise kernel's bitcode, found by a mutation fuzzer).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "checker/ir_reader.h"
#include "checker/ir_uses.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {

constexpr const char* kKernel = R"(
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare float @llvm.fmuladd.f32(float, float, float)
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  call void @llvm.amdgcn.s.barrier()
  %f = call float @llvm.fmuladd.f32(float 1.0, float 2.0, float 3.0)
  store float %f, ptr addrspace(1) %out
  ret void
}
)";

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The error `read` throws, or "" when it returns.
std::string refusal(const std::function<void()>& read, ExitCode* code = nullptr) {
  try {
    read();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

void expect_reads_normally(const IsolatedIrReader& reader) {
  IrUses uses = reader.read(kKernel, "k.ll");
  EXPECT_EQ(uses.kernels, std::vector<std::string>{"k"});
}

TEST(IsolatedIrReader, ReadsWhatTheInProcessReaderReads) {
  IsolatedIrReader reader;
  IrUses isolated = reader.read(kKernel, "k.ll");
  IrUses direct = scan_ir_buffer(kKernel, "k.ll");
  EXPECT_EQ(isolated.target_intrinsics, direct.target_intrinsics);
  EXPECT_EQ(isolated.generic_intrinsics, direct.generic_intrinsics);
  EXPECT_EQ(isolated.declared_only, direct.declared_only);
  EXPECT_EQ(isolated.kernels, direct.kernels);
  EXPECT_EQ(isolated.declarations, direct.declarations);
  EXPECT_EQ(isolated.target_intrinsics,
            (std::vector<std::string>{"llvm.amdgcn.s.barrier", "llvm.amdgcn.workitem.id.x"}));
  // LLVM's own diagnostics come back as they are.
  std::string broken = refusal([&] { reader.read("define void @f() {\n  %x = add i32 1\n}\n", "broken.ll"); });
  EXPECT_EQ(broken.rfind("broken.ll:3:1: ", 0), 0u) << broken;
  EXPECT_NE(broken.find("not valid LLVM IR"), std::string::npos) << broken;
}

TEST(IsolatedIrReader, EmptyAndDeeplyNestedIrIsRefusedBeforeLlvmReadsIt) {
  IsolatedIrReader reader;
  ExitCode code = kExitOk;
  EXPECT_EQ(refusal([&] { reader.read("", "empty.ll"); }, &code), "empty.ll: the IR is empty");
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_EQ(refusal([&] { reader.read(" \n\t\n", "blank.ll"); }), "blank.ll: the IR is empty (only whitespace)");

  const size_t n = 30000;
  const std::vector<std::pair<std::string, std::string>> nested = {
      {"structs.ll", "%t = type " + repeat("{", n) + "i32" + repeat("}", n) + "\n"},
      {"arrays.ll", "%t = type " + repeat("[1 x ", n) + "i32" + repeat("]", n) + "\n"},
      {"metadata.ll", "!0 = " + repeat("!{", n) + repeat("}", n) + "\n"},
      {"constexpr.ll", "@x = global i8 0\n@g = global ptr " + repeat("getelementptr (i8, ptr ", n) + "@x" +
                           repeat(", i64 1)", n) + "\n"},
  };
  for (const auto& [name, ir] : nested) {
    auto start = std::chrono::steady_clock::now();
    std::string why = refusal([&] { reader.read(ir, name); });
    EXPECT_EQ(why.rfind(name + ":", 0), 0u) << why;
    EXPECT_NE(why.find("nests brackets more than 256 deep; refused before LLVM reads it"), std::string::npos) << why;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << name << ": the guard reads no IR";
  }
  // Brackets in strings and comments are no nesting; a kernel's ordinary nesting passes.
  std::string quoted = "; " + repeat("{", 1000) + "\n@s = constant [1000 x i8] c\"" + repeat("{", 1000) + "\"\n";
  EXPECT_NO_THROW(reader.read(quoted + kKernel, "quoted.ll"));
  std::string nest_100 = "%t = type " + repeat("{", 100) + "i32" + repeat("}", 100) + "\n";
  EXPECT_NO_THROW(reader.read(nest_100 + kKernel, "nest100.ll"));
}

TEST(IsolatedIrReader, ACrashOfLlvmIsAnAnswerNamingTheInputAndTheNextReadWorks) {
  IrReadLimits unguarded;
  unguarded.max_nesting = 100000000;  // LLVM itself meets the nesting
  IsolatedIrReader reader(unguarded);
  // 200,000 nested array types overflow the stack of LLVM's recursive-descent parser.
  std::string deep = "%t = type " + repeat("[1 x ", 200000) + "i32" + repeat("]", 200000) + "\n";
  ExitCode code = kExitOk;
  std::string why = refusal([&] { reader.read(deep, "deep.ll"); }, &code);
  EXPECT_EQ(why, "deep.ll: LLVM crashed reading it (signal 11, SIGSEGV)");
  EXPECT_EQ(code, kExitBadInput);
  expect_reads_normally(reader);

  // Bitcode with one bit flipped, on which LLVM 22's reader traps every time (flip-7852's wild pointer crashes it or
  // not as the heap lies, as CheckCli and the service found).
  std::string path = (test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-4637.bc").string();
  std::string crash = refusal([&] { reader.read_file(path); });
  EXPECT_EQ(crash.rfind(path + ": LLVM crashed reading it (signal ", 0), 0u) << crash;
  expect_reads_normally(reader);
}

TEST(IsolatedIrReader, LimitsStopAReadingThatRunsTooLongOrGrowsTooLarge) {
  IrReadLimits limits;
  limits.max_nesting = 100000000;
  // 25,000 nested structs take LLVM 22 seconds of CPU (the parser is quadratic in the depth).
  std::string slow = "%t = type " + repeat("{", 25000) + "i32" + repeat("}", 25000) + "\n";

  limits.cpu_ms = 300;
  IsolatedIrReader cpu_limited(limits);
  EXPECT_EQ(refusal([&] { cpu_limited.read(slow, "slow.ll"); }), "slow.ll: reading it used more than its CPU budget (300 ms); stopped");
  expect_reads_normally(cpu_limited);

  limits.cpu_ms = 60000;
  limits.wall_seconds = 0.3;
  IsolatedIrReader wall_limited(limits);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(refusal([&] { wall_limited.read(slow, "slow.ll"); }), "slow.ll: LLVM took more than 0.3 s reading it; stopped");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  // A deadline depends on the machine's load as much as on the input: it is read again, not answered from the cache.
  size_t made = wall_limited.children_made();
  EXPECT_EQ(refusal([&] { wall_limited.read(slow, "slow.ll"); }), "slow.ll: LLVM took more than 0.3 s reading it; stopped");
  EXPECT_EQ(wall_limited.children_made(), made + 1);
  expect_reads_normally(wall_limited);

  // A bitcode file whose flipped bit claims a vast allocation, read within 2 GiB: the allocation fails.
  IsolatedIrReader memory_limited;
  std::string path = (test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-403.bc").string();
  EXPECT_EQ(refusal([&] { memory_limited.read_file(path); }),
            path + ": reading it needed more memory than the limit (2048 MiB)");
  expect_reads_normally(memory_limited);
}

TEST(IsolatedIrReader, TheMessagesBetweenReaderAndChildRoundTrip) {
  std::string name, bytes;
  decode_ir_request(encode_ir_request("a.ll", std::string("x\0y", 3)), name, bytes);
  EXPECT_EQ(name, "a.ll");
  EXPECT_EQ(bytes, std::string("x\0y", 3));
  IrUses uses = scan_ir_buffer(kKernel, "k.ll");
  IrUses back = decode_ir_reply(encode_ir_reply(uses), "k.ll");
  EXPECT_EQ(back.target_intrinsics, uses.target_intrinsics);
  EXPECT_EQ(back.declarations, uses.declarations);
  EXPECT_EQ(refusal([] { decode_ir_reply(encode_ir_reply_error("k.ll: bad"), "k.ll"); }), "k.ll: bad");
  ExitCode code = kExitOk;
  EXPECT_EQ(refusal([] { decode_ir_reply("{\"uses\": {\"kernels\": 1}}", "k.ll"); }, &code),
            "k.ll: the IR reader's reply is not one of ours");
  EXPECT_EQ(code, kExitInternal);
  EXPECT_EQ(refusal([] { decode_ir_reply("", "k.ll"); }), "k.ll: the IR reader's reply is not one of ours");
  // Frames: whole messages only, in order, however the bytes arrive.
  std::string stream = encode_frame("first") + encode_frame(std::string("se\0cond", 7)) + encode_frame("");
  std::string buffer, message;
  std::vector<std::string> got;
  for (char c : stream) {
    buffer.push_back(c);
    while (decode_frame(buffer, message)) got.push_back(message);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"first", std::string("se\0cond", 7), ""}));
  EXPECT_TRUE(buffer.empty());
  std::string huge = std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  EXPECT_EQ(refusal([&] { decode_frame(huge, message); }, &code).find("is none of ours") != std::string::npos, true);
}

// A kernel that differs from kKernel by a comment: the same answer, another reading.
std::string distinct_kernel(int i) { return "; kernel " + std::to_string(i) + "\n" + kKernel; }

// Until `n` warm children wait (each made and through its warm-up reading).
void wait_for_children(const IsolatedIrReader& reader, size_t n) {
  for (int i = 0; i < 1000 && reader.children_waiting() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST(IsolatedIrReader, WarmChildrenAreReusedAndRetiredAfterTheirReadings) {
  IrReadLimits limits;
  limits.warm_readers = 2;
  limits.readings_per_reader = 5;  // the warm-up is the first
  IsolatedIrReader reader(limits);
  wait_for_children(reader, 2);
  ASSERT_EQ(reader.children_made(), 2u);
  // The child last given back is taken first: three readings bring it to four of its five, and nobody is retired.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reader.read(distinct_kernel(i), "k.ll").kernels, std::vector<std::string>{"k"});
  EXPECT_EQ(reader.children_made(), 2u) << "three readings after the warm-up are done by the warm children";
  for (int i = 3; i < 24; ++i) EXPECT_EQ(reader.read(distinct_kernel(i), "k.ll").kernels, std::vector<std::string>{"k"});
  EXPECT_GE(reader.children_made(), 6u) << "each child is retired after five readings and another made";
  EXPECT_LE(reader.children_made(), 10u);
  // A crash retires the child that crashed; the next reading is answered.
  std::string path = (test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-4637.bc").string();
  EXPECT_EQ(refusal([&] { reader.read_file(path); }).rfind(path + ": LLVM crashed reading it (signal ", 0), 0u);
  EXPECT_EQ(reader.read(distinct_kernel(100), "k.ll").kernels, std::vector<std::string>{"k"});
}

TEST(IsolatedIrReader, AWarmChildKeepsItsCpuBudgetPerReading) {
  IrReadLimits limits;
  limits.warm_readers = 1;
  limits.cpu_ms = 300;
  limits.max_nesting = 100000000;
  IsolatedIrReader reader(limits);
  wait_for_children(reader, 1);
  // Many quick readings in one child add up past the budget without tripping it: the budget is per reading.
  for (int i = 0; i < 30; ++i) EXPECT_EQ(reader.read(distinct_kernel(i), "k.ll").kernels, std::vector<std::string>{"k"});
  std::string slow = "%t = type " + repeat("{", 25000) + "i32" + repeat("}", 25000) + "\n";
  EXPECT_EQ(refusal([&] { reader.read(slow, "slow.ll"); }), "slow.ll: reading it used more than its CPU budget (300 ms); stopped");
  expect_reads_normally(reader);
}

TEST(IsolatedIrReader, TheSameBytesAreAnsweredWithoutReadingThemAgain) {
  IsolatedIrReader reader;  // a fresh child per reading: children_made counts readings
  reader.read(kKernel, "k.ll");
  reader.read(kKernel, "k.ll");
  EXPECT_EQ(reader.children_made(), 1u);
  reader.read(distinct_kernel(1), "k.ll");
  EXPECT_EQ(reader.children_made(), 2u);
  std::string path = (test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-4637.bc").string();
  std::string first = refusal([&] { reader.read_file(path); });
  EXPECT_EQ(refusal([&] { reader.read_file(path); }), first) << "a refusal is kept as the answer too";
  EXPECT_EQ(reader.children_made(), 3u);
  IrReadLimits none;
  none.cached_readings = 0;
  IsolatedIrReader uncached(none);
  uncached.read(kKernel, "k.ll");
  uncached.read(kKernel, "k.ll");
  EXPECT_EQ(uncached.children_made(), 2u);
}

// A name in IR is bytes: a kernel named with a byte that is not UTF-8 is read and named as IR spells it, and
// a diagnostic quoting such bytes is a refusal in words, never the reader failing.
TEST(IsolatedIrReader, NamesThatAreNotUtf8AreReadAndSpeltAsIrSpellsThem) {
  IsolatedIrReader reader;
  IrUses uses = reader.read("define amdgpu_kernel void @\"small\\FFkernel\"() {\n  ret void\n}\n", "k.ll");
  EXPECT_EQ(uses.kernels, std::vector<std::string>{"small\\FFkernel"});
  ExitCode code = kExitOk;
  std::string refused = refusal([&] { reader.read("define void @f() {\n  \xff\xfe nonsense\n}\n", "bad.ll"); }, &code);
  EXPECT_EQ(code, kExitBadInput) << refused;
  EXPECT_EQ(refused.rfind("bad.ll:2:", 0), 0u) << refused;
}

}  // namespace
}  // namespace archdb
