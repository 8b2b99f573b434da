// probe/frontend.cpp — asking clang about builtins (see frontend.h).
#include "probe/frontend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "probe/classify.h"
#include "probe/pool.h"
#include "support/error.h"
#include "support/files.h"
#include "support/spawn.h"
#include "support/text.h"

extern char** environ;

namespace archdb {
namespace fs = std::filesystem;

namespace {

struct Finished {
  int exit_code = -1;
  std::string out, err;
};

// Starts `argv` with its stdout and stderr in files out<slot>, err<slot> under `dir`.
pid_t spawn(const std::vector<std::string>& command, const fs::path& dir, size_t slot) {
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string out = (dir / ("out" + std::to_string(slot))).string(), err = (dir / ("err" + std::to_string(slot))).string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw usage_error("cannot run '" + command[0] + "'");
  return pid;
}

// Runs every command, at most `jobs` at once, each with its stdout and stderr in files under `dir`.
std::vector<Finished> run_all(const std::vector<std::vector<std::string>>& commands, int jobs, const fs::path& dir) {
  std::vector<Finished> results(commands.size());
  std::map<pid_t, size_t> running;
  size_t next = 0;
  auto out_of = [&](size_t i) { return dir / ("out" + std::to_string(i)); };
  auto err_of = [&](size_t i) { return dir / ("err" + std::to_string(i)); };
  while (next < commands.size() || !running.empty()) {
    while (static_cast<int>(running.size()) < std::max(1, jobs) && next < commands.size()) {
      size_t i = next++;
      running[spawn(commands[i], dir, i)] = i;
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw internal_error("waitpid failed while running clang");
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    size_t i = it->second;
    running.erase(it);
    results[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    results[i].out = read_file(out_of(i));
    results[i].err = read_file(err_of(i));
  }
  return results;
}

bool is_integral(const std::string& t) {
  static const std::set<std::string> kIntegral = {"int",       "unsigned int",  "short",        "unsigned short",
                                                  "long",      "unsigned long", "long long",    "unsigned long long",
                                                  "char",      "signed char",   "unsigned char", "bool",
                                                  "_Bool",     "unsigned",      "__int128",     "unsigned __int128"};
  return t.empty() || kIntegral.count(t);
}

// Clang spells HIP's address spaces by their CUDA names; as source they need no HIP header.
std::string as_source_type(std::string t) {
  static const std::pair<const char*, const char*> kSpaces[] = {
      {"__device__", "__attribute__((address_space(1)))"},
      {"__shared__", "__attribute__((address_space(3)))"},
      {"__constant__", "__attribute__((address_space(4)))"},
  };
  for (const auto& [from, to] : kSpaces)
    for (size_t at; (at = t.find(from)) != std::string::npos;) t.replace(at, std::strlen(from), to);
  // "E [space] * __attribute__((ext_vector_type(N)))" (clang 23's spelling) points to a vector of E.
  static const std::regex kPointerToVector(
      R"(^(.*?)( __attribute__\(\(address_space\(\d+\)\)\))? \* __attribute__\(\(ext_vector_type\((\d+)\)\)\)$)");
  std::smatch m;
  if (std::regex_match(t, m, kPointerToVector))
    t = "__typeof__(" + m[1].str() + " __attribute__((ext_vector_type(" + m[3].str() + "))))" + m[2].str() + " *";
  // "__attribute__((__vector_size__(N * sizeof(E)))) E *..." names a vector type that is then qualified or
  // pointed to; written as a declaration the attribute would apply to the pointer. __typeof__ keeps it on E.
  const std::string vector = "__attribute__((__vector_size__(";
  size_t at = t.find(vector);
  if (at != std::string::npos) {
    size_t sizeof_at = t.find("sizeof(", at), close = t.find("))))", at);
    if (sizeof_at != std::string::npos && close != std::string::npos && sizeof_at < close) {
      std::string element = t.substr(sizeof_at + 7, close - sizeof_at - 7);
      size_t after = close + 4;
      if (t.compare(after, element.size() + 1, " " + element) == 0) {
        size_t end = after + 1 + element.size();
        t = t.substr(0, at) + "__typeof__(" + t.substr(at, end - at) + ")" + t.substr(end);
      }
    }
  }
  return t;
}

struct Arg {
  std::string type;  // as clang named it; empty while unknown (an argument of type Z is passed)
  bool literal = false;
  long long value = 0;

  // A literal as source: a const char * is a synchronisation scope (fence, atomic inc/dec, cooperative atomics),
  // which clang wants as a string literal.
  std::string literal_text() const { return type == "const char *" ? "\"agent\"" : std::to_string(value); }
};

// One builtin on its way to being posed.
struct Posed {
  std::string builtin;
  int arity = -1;
  bool confirming_no_arguments = false;  // accepted with none: asked again with one, which clang must refuse
  std::set<std::string> sema_features;   // target features Sema is asked with: those it named checking the builtin
  size_t sema_processor = 0;             // which processor Sema is asked on: the next where the features named do
                                         // not satisfy it
  std::vector<Arg> args;
  bool done = false;
  std::string failure;      // why it could not be posed
  bool undeclared = false;  // clang has no builtin of this name
};

struct Emitted {
  int first_line = 0, last_line = 0;
  std::vector<int> arg_lines;
};

// The function posing builtin `p` as "k<index>", and where its lines are.
std::string function_source(const Posed& p, size_t index, int& line, Emitted& where) {
  std::string params = "Z z";
  std::string text = "extern \"C\" __attribute__((device)) void k" + std::to_string(index) + "(";
  for (size_t i = 0; i < p.args.size(); ++i)
    if (!p.args[i].type.empty() && !p.args[i].literal) params += ", " + as_source_type(p.args[i].type) + " a" + std::to_string(i);
  text += params + ") {\n(void)" + p.builtin + "(\n";
  where.first_line = line;
  line += 2;
  where.arg_lines.clear();
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Arg& a = p.args[i];
    std::string value = a.type.empty() && !a.literal ? "z" : a.literal ? a.literal_text() : "a" + std::to_string(i);
    text += value + (i + 1 < p.args.size() ? ",\n" : "\n");
    where.arg_lines.push_back(line);
    ++line;
  }
  text += ");\n}\n";
  line += 2;
  where.last_line = line - 1;
  return text;
}

// The same function on one line, self-contained, for the record and for reproducers.
std::string one_line(const Posed& p) {
  std::string params;
  std::string args;
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Arg& a = p.args[i];
    if (!a.literal) params += (params.empty() ? "" : ", ") + as_source_type(a.type) + " a" + std::to_string(i);
    args += (i ? ", " : "") + (a.literal ? a.literal_text() : "a" + std::to_string(i));
  }
  return "extern \"C\" __attribute__((device)) void probe(" + params + ") { (void)" + p.builtin + "(" + args + "); }";
}

struct Diagnostic {
  int line = 0;
  std::string message;
};

std::vector<Diagnostic> errors_of(const std::string& stderr_text) {
  static const std::regex kError(R"(^[^:\n]*:(\d+):\d+: (?:fatal )?error: (.*)$)");
  std::vector<Diagnostic> out;
  size_t pos = 0;
  while (pos < stderr_text.size()) {
    size_t nl = stderr_text.find('\n', pos);
    std::string line = stderr_text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? stderr_text.size() : nl + 1;
    std::smatch m;
    // A function is named as the record writes it (probe), not as this run numbered it.
    static const std::regex kFunction(R"('(?:archdb_probe::)?k\d+')");
    if (std::regex_match(line, m, kError))
      out.push_back({std::stoi(m[1].str()), std::regex_replace(m[2].str(), kFunction, "'probe'")});
  }
  return out;
}

// The first error inside each function, by line.
std::map<size_t, Diagnostic> first_errors(const std::vector<Diagnostic>& errors, const std::vector<Emitted>& where) {
  std::map<size_t, Diagnostic> out;
  for (const auto& d : errors)
    for (size_t f = 0; f < where.size(); ++f)
      if (d.line >= where[f].first_line && d.line <= where[f].last_line) {
        out.emplace(f, d);
        break;
      }
  return out;
}

const char* kPreamble = "struct Z {};\n";
constexpr int kPreambleLines = 1;

std::vector<std::string> base_command(const std::string& clang, const std::string& processor) {
  return {clang, "-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "--offload-arch=" + processor, "-w",
          "-ferror-limit=0", "-fno-crash-diagnostics"};
}

// Every integer literal of the call takes the next value of the probe's immarg sweep together (0, 1, 2, 4), as a
// kernel would pass a legal size, mode or ordering; false when they differ or the sweep is over.
bool next_literals(Posed& p) {
  long long shared = -1;
  bool same = true;
  for (const auto& a : p.args)
    if (a.literal && a.type != "const char *") {
      if (shared >= 0 && a.value != shared) same = false;
      shared = a.value;
    }
  if (!same || shared < 0 || shared >= 4) return false;
  for (auto& a : p.args)
    if (a.literal && a.type != "const char *") a.value = shared == 0 ? 1 : shared * 2;
  return true;
}

// Moves a builtin one step closer to being posed, from the first error clang gave about it.
void advance(Posed& p, const Diagnostic* error) {
  static const std::regex kArity(R"(too (?:few|many) arguments to function call, expected (?:at least |at most )?(\d+), have (\d+))");
  static const std::regex kConversion(
      R"(from 'Z' to '([^']+)'|parameter of type '([^']+)' with an lvalue of type 'Z'|passing 'Z' to parameter of incompatible type '([^']+)')");
  static const std::regex kRange(R"(argument value (-?\d+) is outside the valid range \[(-?\d+), (-?\d+)\])");
  auto first_unknown = [&]() -> Arg* {
    for (auto& a : p.args)
      if (a.type.empty() && !a.literal) return &a;
    return nullptr;
  };
  if (!error) {
    if (p.confirming_no_arguments) {
      p.failure = "clang checks no arguments of it in Sema (custom type checking), so its parameter types cannot be "
                  "asked of clang";
      return;
    }
    if (p.arity < 0) {  // accepted with no arguments: unless clang refuses one, it checks none
      p.arity = 0;
      p.confirming_no_arguments = true;
      p.args.assign(1, Arg{});
      return;
    }
    if (first_unknown()) p.failure = "clang accepts an argument of an empty struct type here";
    else p.done = true;
    return;
  }
  const std::string& m = error->message;
  std::smatch g;
  if (p.confirming_no_arguments) {
    if (std::regex_search(m, g, std::regex(R"(too many arguments to function call, expected 0,)"))) {
      p.args.clear();
      p.confirming_no_arguments = false;
      p.done = true;
    } else {
      p.failure = "clang accepts it with no arguments and with one (" + clean_evidence(m) +
                  "): it checks no arguments of it in Sema (custom type checking)";
    }
    return;
  }
  static const std::regex kFeatures(R"(needs target feature ([A-Za-z0-9_.,|()+-]+))");
  if (std::regex_search(m, g, kFeatures)) {  // Sema checks the builtin's features: asked again with them
    size_t before = p.sema_features.size();
    for (std::string need : split(g[1].str(), ',')) {
      need.erase(std::remove_if(need.begin(), need.end(), [](char c) { return c == '(' || c == ')'; }), need.end());
      need = need.substr(0, need.find('|'));  // of alternatives, the first
      if (!need.empty()) p.sema_features.insert(need);
    }
    if (p.sema_features.size() == before) ++p.sema_processor;  // not enough on this processor
    return;
  }
  if (m.find("use of undeclared identifier '" + p.builtin + "'") != std::string::npos) {
    p.undeclared = true;
    p.failure = "clang has no " + p.builtin;
    return;
  }
  if (std::regex_search(m, g, kArity)) {
    size_t n = static_cast<size_t>(std::stoul(g[1].str()));
    if (static_cast<int>(n) == p.arity) {
      p.failure = clean_evidence(m);
      return;
    }
    p.arity = static_cast<int>(n);
    p.args.resize(n);
    return;
  }
  if (p.arity < 0) p.arity = 0;
  if (std::regex_search(m, g, kConversion)) {
    std::string type = g[1].matched ? g[1].str() : g[2].matched ? g[2].str() : g[3].str();
    if (Arg* a = first_unknown()) {
      a->type = type;
      a->literal = type == "const char *";  // a scope: clang wants a string literal
      return;
    }
  }
  if (m.find("used type 'Z' where") != std::string::npos) {
    if (Arg* a = first_unknown()) {
      a->type = "int";
      return;
    }
  }
  // "used type 'unsigned int' where integer is required": clang's words for an ordering that must be a constant.
  if (m.find("must be a constant integer") != std::string::npos || m.find("must be a constant") != std::string::npos ||
      m.find("where integer is required") != std::string::npos) {
    for (size_t i = p.args.size(); i > 0; --i) {
      Arg& a = p.args[i - 1];
      if (!a.literal && is_integral(a.type)) {
        a.literal = true;
        a.value = 0;
        if (a.type.empty()) a.type = "int";
        return;
      }
    }
  }
  if (std::regex_search(m, g, kRange)) {
    long long low = std::stoll(g[2].str());
    for (size_t i = p.args.size(); i > 0; --i)
      if (p.args[i - 1].literal && p.args[i - 1].value < low) {
        p.args[i - 1].value = low;
        return;
      }
  }
  // Any other refusal of the constants ("invalid size value"): every literal takes the next value of the
  // probe's immarg sweep together (0, 1, 2, 4), as a kernel would pass a legal size or mode.
  if (!next_literals(p)) p.failure = clean_evidence(m);
}

// What clang said when it failed naming no line of the source: its crash, without the paths of this machine.
std::string clang_failure(const Finished& r) {
  std::string what;
  static const std::regex kKeep(R"(^(?:LLVM ERROR: |fatal error: |.*Assertion .* failed)(.*)$|^\d+\.\t(.*)$)");
  size_t pos = 0;
  while (pos < r.err.size()) {
    size_t nl = r.err.find('\n', pos);
    std::string line = r.err.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? r.err.size() : nl + 1;
    std::smatch m;
    if (!std::regex_match(line, m, kKeep) || line.find("Program arguments") != std::string::npos ||
        line.find("parser at end of file") != std::string::npos || line.find("'archdb_probe'") != std::string::npos)
      continue;
    std::string part = m[1].matched ? line : m[2].str();
    // The function as the record writes it (probe), without where this run put it.
    part = std::regex_replace(part, std::regex(R"((?:/[^ :']*)?/ask\d+\.hip:\d+:\d+: )"), "");
    part = std::regex_replace(part, std::regex(R"('archdb_probe::k\d+')"), "'probe'");
    what += (what.empty() ? "" : "; ") + part;
  }
  std::string code = r.exit_code >= 128 ? "signal " + std::to_string(r.exit_code - 128)
                                        : "exit code " + std::to_string(r.exit_code);
  return clean_evidence("clang crashed (" + code + ")" + (what.empty() ? "" : ": " + what));
}

std::vector<std::string> intrinsic_calls(const std::string& ir, const std::string& function) {
  std::vector<std::string> out;
  size_t at = ir.find("@" + function + "(");
  if (at == std::string::npos) return out;
  size_t end = ir.find("\n}", at);
  std::string body = ir.substr(at, end == std::string::npos ? std::string::npos : end - at);
  static const std::regex kCall(R"(call [^@\n]*@(llvm\.[A-Za-z0-9_.]+)\()");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kCall); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    if (name.rfind("llvm.lifetime.", 0) == 0 || name.rfind("llvm.dbg.", 0) == 0) continue;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

std::string builtin_for_intrinsic(const std::string& intrinsic) {
  const std::string prefix = "llvm.amdgcn.";
  if (intrinsic.rfind(prefix, 0) != 0) return "";
  std::string rest = intrinsic.substr(prefix.size());
  std::replace(rest.begin(), rest.end(), '.', '_');
  return "__builtin_amdgcn_" + rest;
}

std::string clang_version_line(const std::string& clang) {
  TempFolder tmp("archdb-frontend");
  std::vector<Finished> r = run_all({{clang, "--version"}}, 1, tmp.path());
  if (r[0].exit_code != 0) throw usage_error("clang '" + clang + "' --version failed");
  std::string line = r[0].out.substr(0, r[0].out.find('\n'));
  if (line.empty()) throw usage_error("clang '" + clang + "' --version printed nothing");
  return line;
}

std::vector<std::string> clang_builtin_names(const std::string& clang) {
  std::string driver = find_program(clang);
  if (driver.empty()) throw usage_error("cannot find clang '" + clang + "'");
  std::error_code ec;
  fs::path real = fs::canonical(driver, ec);
  if (ec) throw usage_error("cannot resolve clang '" + driver + "': " + ec.message());
  std::set<fs::path> files = {real};
  for (const auto& entry : fs::directory_iterator(real.parent_path().parent_path() / "lib", ec))
    if (entry.path().filename().string().rfind("libclang-cpp.so", 0) == 0) {
      fs::path lib = fs::canonical(entry.path(), ec);
      if (!ec && fs::is_regular_file(lib)) files.insert(lib);
    }
  std::set<std::string> names;
  const std::string prefix = "__builtin_amdgcn_";
  for (const fs::path& file : files) {
    std::string bytes = read_file(file);
    for (size_t at = bytes.find(prefix); at != std::string::npos; at = bytes.find(prefix, at + 1)) {
      size_t end = at + prefix.size();
      while (end < bytes.size() && (std::isalnum(static_cast<unsigned char>(bytes[end])) || bytes[end] == '_')) ++end;
      if (end > at + prefix.size()) names.insert(bytes.substr(at, end - at));
    }
  }
  return {names.begin(), names.end()};
}

Frontend measure_frontend(const FrontendOptions& options) {
  if (options.processors.empty()) throw usage_error("no processors to ask clang about");
  int jobs = options.jobs > 0 ? options.jobs : usable_cpus();
  Frontend fe;
  fe.provenance.flavor = options.flavor;
  fe.provenance.clang = clang_version_line(options.clang);
  fe.provenance.command = base_command(fs::path(options.clang).filename().string(), "{processor}");
  for (const char* a : {"-S", "-emit-llvm", "-O0", "-o", "-", "{file}"}) fe.provenance.command.push_back(a);
  fe.provenance.processors = options.processors;
  std::sort(fe.provenance.processors.begin(), fe.provenance.processors.end());
  TempFolder tmp("archdb-frontend");

  // ---- which builtins, and with which arguments: asked of clang, a round at a time ----
  std::set<std::string> names(options.builtins.begin(), options.builtins.end());
  for (const FrontendKeyRequest& k : options.keys)
    if (std::string base = builtin_for_intrinsic(k.intrinsic); !base.empty())
      for (const char* variant : {"", "_w32", "_w64"}) names.insert(base + variant);
  std::vector<Posed> posed;
  for (const std::string& name : names) {
    Posed p;
    p.builtin = name;
    posed.push_back(std::move(p));
  }
  // Sema is asked on one processor of a generation (what it accepts is measured below, per processor), with the
  // features it named checking a builtin added for that builtin, and on the next generation's where that is not enough.
  std::vector<std::string> sema_processors;
  for (const char* p : {"gfx950", "gfx1250", "gfx1201", "gfx1100", "gfx1030", "gfx90a", "gfx906", "gfx803", "gfx700"})
    if (std::find(options.processors.begin(), options.processors.end(), p) != options.processors.end())
      sema_processors.push_back(p);
  if (sema_processors.empty()) sema_processors.push_back(options.processors.back());
  for (int round = 0; round < 48; ++round) {
    // (processor, features) -> builtins
    std::map<std::pair<size_t, std::set<std::string>>, std::vector<size_t>> pending;
    for (size_t i = 0; i < posed.size(); ++i) {
      Posed& p = posed[i];
      if (p.done || !p.failure.empty()) continue;
      if (p.sema_processor >= sema_processors.size()) {
        p.failure = "clang's Sema refuses it for a target feature on every processor asked (" +
                    join(sema_processors, ", ") + ")";
        continue;
      }
      pending[{p.sema_processor, p.sema_features}].push_back(i);
    }
    if (pending.empty()) break;
    if (options.progress)
      std::fprintf(stderr, "\r\033[K%s: asking clang for builtin signatures (round %d)", options.flavor.c_str(),
                   round + 1);
    std::vector<std::vector<std::string>> commands;
    std::vector<std::vector<Emitted>> where(pending.size());
    size_t n = 0;
    for (const auto& [how, builtins] : pending) {
      const auto& [processor, features] = how;
      std::string source = kPreamble;
      int line = kPreambleLines + 1;
      where[n].resize(builtins.size());
      for (size_t f = 0; f < builtins.size(); ++f) source += function_source(posed[builtins[f]], f, line, where[n][f]);
      fs::path file = tmp.path() / ("sema" + std::to_string(n) + ".hip");
      write_file_atomically(file, source);
      std::vector<std::string> cmd = base_command(options.clang, sema_processors[processor]);
      for (const std::string& feature : features)
        cmd.insert(cmd.end(), {"-Xclang", "-target-feature", "-Xclang", "+" + feature});
      cmd.push_back("-fsyntax-only");
      cmd.push_back(file.string());
      commands.push_back(std::move(cmd));
      ++n;
    }
    std::vector<Finished> results = run_all(commands, jobs, tmp.path());
    n = 0;
    for (const auto& [how, builtins] : pending) {
      const Finished& r = results[n];
      std::map<size_t, Diagnostic> errors = first_errors(errors_of(r.err), where[n]);
      if (r.exit_code != 0 && errors.empty())
        throw internal_error("clang failed without attributable errors: " + clean_evidence(r.err));
      for (size_t f = 0; f < builtins.size(); ++f) {
        auto e = errors.find(f);
        advance(posed[builtins[f]], e == errors.end() ? nullptr : &e->second);
      }
      ++n;
    }
  }
  for (auto& p : posed)
    if (!p.done && p.failure.empty()) p.failure = "no call clang accepts was found in 48 rounds";
  std::vector<size_t> ready;
  for (size_t i = 0; i < posed.size(); ++i)
    if (posed[i].done) ready.push_back(i);

  // ---- acceptance, per processor ----
  // The first turn asks every posed builtin and names each one clang refuses (the functions sit in one namespace);
  // the next gives the IR of the rest. A function refused only beside others would be refused, and the rest asked
  // again.
  struct Asking {
    std::vector<std::vector<size_t>> groups;  // functions to ask, a group a turn; accepted as far as known
    std::map<size_t, std::string> refused, crashed;
    std::map<size_t, std::vector<std::string>> emitted;
    std::vector<size_t> asked;  // the group in flight
  };
  std::vector<Asking> asking(fe.provenance.processors.size());
  std::vector<std::vector<Emitted>> where_of(asking.size());
  auto next_command = [&](size_t t) -> std::optional<std::vector<std::string>> {
    Asking& a = asking[t];
    while (!a.groups.empty() && a.groups.front().empty()) a.groups.erase(a.groups.begin());
    if (a.groups.empty()) return std::nullopt;
    a.asked = std::move(a.groups.front());
    a.groups.erase(a.groups.begin());
    // Function f keeps its name k<f>; its lines are where this file puts them.
    std::string source = std::string(kPreamble) + "namespace archdb_probe {\n";
    int line = kPreambleLines + 2;
    where_of[t].assign(ready.size(), Emitted{});
    for (size_t f : a.asked) source += function_source(posed[ready[f]], f, line, where_of[t][f]);
    source += "}\n";
    fs::path file = tmp.path() / ("ask" + std::to_string(t) + ".hip");
    write_file_atomically(file, source);
    std::vector<std::string> cmd = base_command(options.clang, fe.provenance.processors[t]);
    for (const char* x : {"-S", "-emit-llvm", "-O0", "-o", "-"}) cmd.push_back(x);
    cmd.push_back(file.string());
    return cmd;
  };
  auto take_result = [&](size_t t, const Finished& r) {
    Asking& a = asking[t];
    std::map<size_t, Diagnostic> errors;
    for (const auto& d : errors_of(r.err))
      for (size_t f : a.asked)
        if (d.line >= where_of[t][f].first_line && d.line <= where_of[t][f].last_line) errors.emplace(f, d);
    if (!errors.empty()) {  // those refused; the rest asked again for their IR
      std::vector<size_t> rest;
      for (size_t f : a.asked) {
        auto e = errors.find(f);
        if (e != errors.end()) a.refused[f] = e->second.message;
        else rest.push_back(f);
      }
      a.groups.insert(a.groups.begin(), std::move(rest));
      return;
    }
    if (r.exit_code == 0) {
      for (size_t f : a.asked) a.emitted[f] = intrinsic_calls(r.out, "k" + std::to_string(f));
      return;
    }
    // Clang crashed, or failed naming no line: halve the group until the builtin it fails on stands alone.
    if (a.asked.size() == 1) {
      a.crashed[a.asked.front()] = clang_failure(r);
      return;
    }
    size_t half = a.asked.size() / 2;
    a.groups.insert(a.groups.begin(), std::vector<size_t>(a.asked.begin() + static_cast<std::ptrdiff_t>(half), a.asked.end()));
    a.groups.insert(a.groups.begin(), std::vector<size_t>(a.asked.begin(), a.asked.begin() + static_cast<std::ptrdiff_t>(half)));
  };
  auto ask = [&](const std::vector<size_t>& functions) {
    for (auto& a : asking) {
      for (size_t f : functions) a.refused.erase(f), a.crashed.erase(f), a.emitted.erase(f);
      a.groups.assign(1, functions);
    }
    // A round asks every processor with functions left its next group, `jobs` clangs at once (run_all).
    for (int round = 1;; ++round) {
      std::vector<size_t> asked_on;
      std::vector<std::vector<std::string>> commands;
      for (size_t t = 0; t < asking.size(); ++t)
        if (std::optional<std::vector<std::string>> cmd = next_command(t)) {
          asked_on.push_back(t);
          commands.push_back(std::move(*cmd));
        }
      if (commands.empty()) break;
      if (options.progress)
        std::fprintf(stderr, "\r\033[K%s: asking clang about %zu builtins (turn %d, %zu processors)", options.flavor.c_str(),
                     functions.size(), round, commands.size());
      std::vector<Finished> results = run_all(commands, jobs, tmp.path());
      for (size_t i = 0; i < asked_on.size(); ++i) take_result(asked_on[i], results[i]);
    }
  };
  std::vector<size_t> functions(ready.size());
  for (size_t f = 0; f < ready.size(); ++f) functions[f] = f;
  // A builtin clang refuses on every processor with the same words, not for a target feature, was posed with
  // constants no processor takes (an ordering of 0): its constants take the sweep's next value, and it is asked again.
  for (int attempt = 0; attempt < 4 && !functions.empty(); ++attempt) {
    ask(functions);
    std::vector<size_t> again;
    for (size_t f : functions) {
      std::set<std::string> words;
      for (const Asking& a : asking)
        if (auto e = a.refused.find(f); e != a.refused.end()) words.insert(e->second);
        else words.insert("");  // accepted or crashed somewhere
      if (words.size() == 1 && !words.begin()->empty() && words.begin()->find("needs target feature") == std::string::npos &&
          next_literals(posed[ready[f]]))
        again.push_back(f);
    }
    functions = std::move(again);
  }

  // ---- the rows: a catalog key's, then every other builtin's under its own name ----
  std::map<std::string, size_t> index_of;  // builtin -> index into posed
  for (size_t i = 0; i < posed.size(); ++i) index_of[posed[i].builtin] = i;
  std::map<size_t, size_t> ready_of;  // index into posed -> f
  for (size_t f = 0; f < ready.size(); ++f) ready_of[ready[f]] = f;
  auto emits = [&](size_t i, const std::string& call) {
    auto r = ready_of.find(i);
    if (r == ready_of.end()) return false;
    for (const Asking& a : asking)
      if (auto e = a.emitted.find(r->second);
          e != a.emitted.end() && std::find(e->second.begin(), e->second.end(), call) != e->second.end())
        return true;
    return false;
  };
  auto add_row = [&](const std::string& key, size_t i) {
    const Posed& p = posed[i];
    FrontendKey k;
    k.key = key;
    k.builtin = p.builtin;
    auto r = ready_of.find(i);
    if (r == ready_of.end()) {
      k.reason = p.failure;
      fe.keys.push_back(std::move(k));
      return;
    }
    k.call = one_line(p);
    fe.keys.push_back(std::move(k));
    for (size_t t = 0; t < asking.size(); ++t) {
      const Asking& a = asking[t];
      FrontendCell c;
      c.key = key;
      c.target = fe.provenance.processors[t];
      if (auto e = a.refused.find(r->second); e != a.refused.end()) {
        c.diagnostic = clean_evidence("error: " + e->second);
      } else if (auto x = a.crashed.find(r->second); x != a.crashed.end()) {
        c.crashed = true;
        c.diagnostic = x->second;
      } else {
        c.accepted = true;
        if (auto em = a.emitted.find(r->second); em != a.emitted.end()) c.emitted = em->second;
      }
      fe.cells.push_back(std::move(c));
    }
  };
  std::set<size_t> claimed;
  for (const FrontendKeyRequest& request : options.keys) {
    std::string base = builtin_for_intrinsic(request.intrinsic);
    std::vector<size_t> declared;
    if (!base.empty())
      for (const char* variant : {"", "_w32", "_w64"})
        if (size_t i = index_of.at(base + variant); !posed[i].undeclared) declared.push_back(i);
    if (declared.empty()) {
      FrontendKey k;
      k.key = request.key;
      k.reason = base.empty() ? request.intrinsic + " is not an llvm.amdgcn.* intrinsic"
                              : "clang has no " + base + " (the naming convention's name), nor " + base + "_w32 or _w64";
      fe.keys.push_back(std::move(k));
      continue;
    }
    const std::string& call = request.instantiation.empty() ? request.intrinsic : request.instantiation;
    size_t chosen = declared.front();
    for (size_t i : declared)
      if (emits(i, call)) {
        chosen = i;
        break;
      }
    claimed.insert(chosen);
    add_row(request.key, chosen);
  }
  size_t declared_names = 0;
  for (const std::string& name : options.builtins) {
    size_t i = index_of.at(name);
    if (posed[i].undeclared) continue;
    ++declared_names;
    if (!claimed.count(i)) add_row(name, i);
  }
  fe.provenance.builtin_names = {{"in_clang", static_cast<int>(options.builtins.size())},
                                 {"declared", static_cast<int>(declared_names)}};
  if (options.progress) std::fprintf(stderr, "\r\033[K");
  fe.sort();
  fe.recount();
  return fe;
}

}  // namespace archdb
