// probe/frontend.cpp — asking clang about builtins (see frontend.h).
#include "probe/frontend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
};

// One builtin on its way to being posed.
struct Posed {
  size_t key = 0;  // index into the options' keys
  std::string base;     // the naming convention's name
  std::string builtin;  // the name posed: the base, or its _w32 / _w64 variant
  int arity = -1;
  std::vector<Arg> args;
  bool done = false;
  std::string failure;  // not posable (or no builtin, with no_builtin)
  bool no_builtin = false;
  int variants_tried = 0;
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
    std::string value = a.type.empty() && !a.literal ? "z" : a.literal ? std::to_string(a.value) : "a" + std::to_string(i);
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
    args += (i ? ", " : "") + (a.literal ? std::to_string(a.value) : "a" + std::to_string(i));
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
    if (std::regex_match(line, m, kError)) out.push_back({std::stoi(m[1].str()), m[2].str()});
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
          "-ferror-limit=0"};
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
    if (p.arity < 0) p.arity = 0;
    if (first_unknown()) p.failure = "clang accepts an argument of an empty struct type here";
    else p.done = true;
    return;
  }
  const std::string& m = error->message;
  std::smatch g;
  if (m.find("use of undeclared identifier '" + p.builtin + "'") != std::string::npos) {
    // Where clang has only wave-size variants of the builtin, the wave32 one, then the wave64 one.
    if (p.variants_tried < 2) {
      p.builtin = p.base + (p.variants_tried == 0 ? "_w32" : "_w64");
      ++p.variants_tried;
      p.arity = -1;
      p.args.clear();
      return;
    }
    p.no_builtin = true;
    p.failure = "clang has no " + p.base + " (the naming convention's name), nor " + p.base + "_w32 or _w64";
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
      return;
    }
  }
  if (m.find("used type 'Z' where") != std::string::npos) {
    if (Arg* a = first_unknown()) {
      a->type = "int";
      return;
    }
  }
  if (m.find("must be a constant integer") != std::string::npos || m.find("must be a constant") != std::string::npos) {
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
  long long shared = -1;
  bool same = true;
  for (const auto& a : p.args)
    if (a.literal) {
      if (shared >= 0 && a.value != shared) same = false;
      shared = a.value;
    }
  if (same && shared >= 0 && shared < 4) {
    for (auto& a : p.args)
      if (a.literal) a.value = shared == 0 ? 1 : shared * 2;
    return;
  }
  p.failure = clean_evidence(m);
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

  // ---- which builtin, and with which arguments: asked of clang, a round at a time ----
  std::vector<Posed> posed;
  for (size_t k = 0; k < options.keys.size(); ++k) {
    Posed p;
    p.key = k;
    p.base = p.builtin = builtin_for_intrinsic(options.keys[k].second);
    if (p.builtin.empty()) {
      p.no_builtin = true;
      p.failure = options.keys[k].second + " is not an llvm.amdgcn.* intrinsic";
    }
    posed.push_back(std::move(p));
  }
  const std::string sema_processor = std::find(options.processors.begin(), options.processors.end(), "gfx950") !=
                                             options.processors.end()
                                         ? "gfx950"
                                         : options.processors.back();
  for (int round = 0; round < 48; ++round) {
    std::vector<size_t> pending;
    for (size_t i = 0; i < posed.size(); ++i)
      if (!posed[i].done && posed[i].failure.empty()) pending.push_back(i);
    if (pending.empty()) break;
    if (options.progress)
      std::fprintf(stderr, "\r\033[K%s: asking clang for builtin signatures (round %d, %zu builtins)", options.flavor.c_str(),
                   round + 1, pending.size());
    std::string source = kPreamble;
    int line = kPreambleLines + 1;
    std::vector<Emitted> where(pending.size());
    for (size_t f = 0; f < pending.size(); ++f) source += function_source(posed[pending[f]], f, line, where[f]);
    write_file_atomically(tmp.path() / "sema.hip", source);
    std::vector<std::string> cmd = base_command(options.clang, sema_processor);
    cmd.push_back("-fsyntax-only");
    cmd.push_back((tmp.path() / "sema.hip").string());
    Finished r = run_all({cmd}, 1, tmp.path()).front();
    std::map<size_t, Diagnostic> errors = first_errors(errors_of(r.err), where);
    if (r.exit_code != 0 && errors.empty())
      throw internal_error("clang failed without attributable errors: " + clean_evidence(r.err));
    for (size_t f = 0; f < pending.size(); ++f) {
      auto e = errors.find(f);
      advance(posed[pending[f]], e == errors.end() ? nullptr : &e->second);
    }
  }
  for (auto& p : posed)
    if (!p.done && p.failure.empty()) p.failure = "no call clang accepts was found in 48 rounds";

  // ---- the keys' record ----
  std::vector<size_t> ready;
  for (size_t i = 0; i < posed.size(); ++i) {
    const Posed& p = posed[i];
    FrontendKey k;
    k.key = options.keys[p.key].first;
    if (p.no_builtin) {
      k.reason = p.failure;
    } else {
      k.builtin = p.builtin;
      if (p.done) {
        k.call = one_line(p);
        ready.push_back(i);
      } else {
        k.reason = p.failure;
      }
    }
    fe.keys.push_back(std::move(k));
  }

  // ---- acceptance, per processor ----
  // Clang reports the first error it meets while generating IR and generates nothing after it, so each
  // processor is asked in turns: the functions before the first error were accepted, the one it names was
  // refused, and the rest is asked again; a last turn with every accepted function gives their IR.
  std::vector<std::string> texts(ready.size());
  {
    int line = kPreambleLines + 1;
    Emitted ignored;
    for (size_t f = 0; f < ready.size(); ++f) texts[f] = function_source(posed[ready[f]], f, line, ignored);
  }
  struct Asking {
    std::vector<size_t> remaining;       // functions not yet answered, in order
    std::vector<size_t> accepted;        // answered yes; IR still wanted
    std::map<size_t, std::string> refused;
    std::map<size_t, std::vector<std::string>> emitted;
    std::vector<size_t> asked;           // the functions of the turn in flight
    bool final_turn = false;             // the turn in flight is the IR of the accepted ones
    bool done = false;
  };
  std::vector<Asking> asking(fe.provenance.processors.size());
  for (auto& a : asking)
    for (size_t f = 0; f < ready.size(); ++f) a.remaining.push_back(f);
  auto turn_file = [&](size_t t, const std::vector<size_t>& functions, std::vector<Emitted>& where) {
    // Function f keeps its name k<f>; its lines are where this file puts them.
    std::string source = kPreamble;
    int line = kPreambleLines + 1;
    where.assign(ready.size(), Emitted{});
    for (size_t f : functions) source += function_source(posed[ready[f]], f, line, where[f]);
    fs::path file = tmp.path() / ("ask" + std::to_string(t) + ".hip");
    write_file_atomically(file, source);
    return file;
  };
  std::vector<std::vector<Emitted>> where_of(asking.size());
  auto next_command = [&](size_t t) -> std::optional<std::vector<std::string>> {
    Asking& a = asking[t];
    if (!a.remaining.empty()) {
      a.asked = a.remaining;
      a.final_turn = false;
    } else if (!a.accepted.empty()) {
      a.asked = a.accepted;
      a.final_turn = true;
    } else {
      a.done = true;
      return std::nullopt;
    }
    std::vector<std::string> cmd = base_command(options.clang, fe.provenance.processors[t]);
    for (const char* x : {"-S", "-emit-llvm", "-O0", "-o", "-"}) cmd.push_back(x);
    cmd.push_back(turn_file(t, a.asked, where_of[t]).string());
    return cmd;
  };
  auto take_result = [&](size_t t, const Finished& r) {
    Asking& a = asking[t];
    std::vector<Diagnostic> errors = errors_of(r.err);
    const Diagnostic* first = nullptr;
    size_t culprit = 0;
    for (const auto& d : errors) {
      for (size_t f : a.asked)
        if (d.line >= where_of[t][f].first_line && d.line <= where_of[t][f].last_line && (!first || d.line < first->line)) {
          first = &d;
          culprit = f;
        }
    }
    if (r.exit_code != 0 && !first)
      throw internal_error("clang failed on " + fe.provenance.processors[t] + " without an attributable error: " +
                           clean_evidence(r.err));
    if (a.final_turn) {
      if (first) {  // refused beside the others what it accepted before them: refused, and the rest again
        a.refused[culprit] = first->message;
        a.accepted.erase(std::find(a.accepted.begin(), a.accepted.end(), culprit));
        return;
      }
      for (size_t f : a.asked) a.emitted[f] = intrinsic_calls(r.out, "k" + std::to_string(f));
      a.accepted.clear();
      return;
    }
    if (!first) {  // everything asked was accepted, and this is its IR
      for (size_t f : a.asked) a.emitted[f] = intrinsic_calls(r.out, "k" + std::to_string(f));
      a.remaining.clear();
      return;
    }
    std::vector<size_t> rest;
    bool after = false;
    for (size_t f : a.asked) {
      if (f == culprit) {
        a.refused[f] = first->message;
        after = true;
      } else if (after) {
        rest.push_back(f);
      } else {
        a.accepted.push_back(f);
      }
    }
    a.remaining = rest;
  };
  {
    std::map<pid_t, std::pair<size_t, size_t>> running;  // pid -> (processor, slot)
    size_t slot_counter = 0;
    std::vector<size_t> ready_to_ask;
    for (size_t t = 0; t < asking.size(); ++t) ready_to_ask.push_back(t);
    size_t answered = 0;
    while (!ready_to_ask.empty() || !running.empty()) {
      while (static_cast<int>(running.size()) < jobs && !ready_to_ask.empty()) {
        size_t t = ready_to_ask.front();
        ready_to_ask.erase(ready_to_ask.begin());
        std::optional<std::vector<std::string>> cmd = next_command(t);
        if (!cmd) {
          ++answered;
          continue;
        }
        size_t slot = slot_counter++;
        running[spawn(*cmd, tmp.path(), slot)] = {t, slot};
      }
      if (running.empty()) break;
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        throw internal_error("waitpid failed while running clang");
      }
      auto it = running.find(pid);
      if (it == running.end()) continue;
      auto [t, slot] = it->second;
      running.erase(it);
      Finished r;
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      r.out = read_file(tmp.path() / ("out" + std::to_string(slot)));
      r.err = read_file(tmp.path() / ("err" + std::to_string(slot)));
      take_result(t, r);
      ready_to_ask.push_back(t);
      if (options.progress)
        std::fprintf(stderr, "\r\033[K%s: asking clang on %zu processors (%zu done)", options.flavor.c_str(),
                     asking.size(), answered);
    }
  }
  for (size_t t = 0; t < asking.size(); ++t) {
    const Asking& a = asking[t];
    for (size_t f = 0; f < ready.size(); ++f) {
      FrontendCell c;
      c.key = options.keys[posed[ready[f]].key].first;
      c.target = fe.provenance.processors[t];
      auto e = a.refused.find(f);
      if (e != a.refused.end()) {
        c.accepted = false;
        c.diagnostic = clean_evidence("error: " + e->second);
      } else {
        c.accepted = true;
        auto em = a.emitted.find(f);
        if (em != a.emitted.end()) c.emitted = em->second;
      }
      fe.cells.push_back(std::move(c));
    }
  }
  if (options.progress) std::fprintf(stderr, "\r\033[K");
  fe.sort();
  fe.recount();
  return fe;
}

}  // namespace archdb
