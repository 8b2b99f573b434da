// probe/job.cpp — the wire form of the parent-worker messages (see job.h): JSON lines, one object a message,
// its kind in "t". Every field name lives here and nowhere else.
#include "probe/job.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace archdb {
namespace {

using json = nlohmann::json;

std::string line_of(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json spec_to_json(const DeclSpec& s) {
  return {{"declare", s.kind == DeclSpec::Kind::kDeclare}, {"name", s.name},     {"overloaded", s.overloaded},
          {"types", s.overload_types},                     {"text", s.declare_text}, {"line", s.line}};
}

DeclSpec spec_from_json(const json& j) {
  DeclSpec s;
  s.kind = j.at("declare").get<bool>() ? DeclSpec::Kind::kDeclare : DeclSpec::Kind::kIntrinsic;
  s.name = j.at("name").get<std::string>();
  s.overloaded = j.at("overloaded").get<bool>();
  s.overload_types = j.at("types").get<std::vector<std::string>>();
  s.declare_text = j.at("text").get<std::string>();
  s.line = j.at("line").get<int>();
  return s;
}

json shape_to_json(const ProbeShape& s) {
  json params = json::array();
  for (const auto& p : s.params) params.push_back({{"type", p.type}, {"immarg", p.immarg}});
  return {{"callee", s.callee},        {"declare", s.declare_line}, {"ret", s.return_type},
          {"fields", s.return_fields}, {"params", params},          {"side_effects", s.has_side_effects}};
}

ProbeShape shape_from_json(const json& j) {
  ProbeShape s;
  s.callee = j.at("callee").get<std::string>();
  s.declare_line = j.at("declare").get<std::string>();
  s.return_type = j.at("ret").get<std::string>();
  s.return_fields = j.at("fields").get<std::vector<std::string>>();
  for (const auto& p : j.at("params")) s.params.push_back({p.at("type").get<std::string>(), p.at("immarg").get<bool>()});
  s.has_side_effects = j.at("side_effects").get<bool>();
  return s;
}

constexpr std::pair<Resolution::Kind, const char*> kResolutionKinds[] = {
    {Resolution::Kind::kResolved, "resolved"},
    {Resolution::Kind::kNameAbsent, "name_absent"},
    {Resolution::Kind::kSignatureMismatch, "signature_mismatch"},
    {Resolution::Kind::kCatalogError, "catalog_error"},
    {Resolution::Kind::kProbeError, "probe_error"},
};

const char* resolution_kind_name(Resolution::Kind k) {
  for (const auto& [kind, name] : kResolutionKinds)
    if (kind == k) return name;
  return "probe_error";
}

Resolution::Kind resolution_kind(const std::string& name) {
  for (const auto& [kind, n] : kResolutionKinds)
    if (name == n) return kind;
  return Resolution::Kind::kProbeError;
}

constexpr std::pair<EndKind, const char*> kEndKinds[] = {
    {EndKind::kCompleted, "completed"}, {EndKind::kFatal, "fatal"},     {EndKind::kSignal, "signal"},
    {EndKind::kTimeout, "timeout"},     {EndKind::kCpuBudget, "cpu_budget"}, {EndKind::kExit, "exit"},
    {EndKind::kRetired, "retired"},     {EndKind::kJobError, "job_error"},
};

EndKind end_kind(const std::string& name) {
  for (const auto& [kind, n] : kEndKinds)
    if (name == n) return kind;
  return EndKind::kExit;
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// Appends `s` JSON-escaped to buf (bounded; no allocation).
void append_escaped(char* buf, size_t cap, size_t& len, const char* s) {
  for (; *s && len + 7 < cap; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      buf[len++] = '\\';
      buf[len++] = static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      len += static_cast<size_t>(std::snprintf(buf + len, cap - len, "\\u%04x", c < 0x20 ? c : '?'));
    } else {
      buf[len++] = static_cast<char>(c);
    }
  }
}

void append_raw(char* buf, size_t cap, size_t& len, const char* s) {
  for (; *s && len + 1 < cap; ++s) buf[len++] = *s;
}

}  // namespace

std::string_view end_kind_name(EndKind k) {
  for (const auto& [kind, name] : kEndKinds)
    if (kind == k) return name;
  return "exit";
}

std::string encode_job(const Job& job) {
  json items = json::array();
  for (const auto& i : job.items) {
    json item = {{"id", i.id}};
    if (job.kind == Job::Kind::kResolve) {
      item["spec"] = spec_to_json(i.spec);
    } else {
      item["fn"] = i.function;
      item["ir"] = i.ir;
      item["decl"] = i.declare_line;
    }
    items.push_back(item);
  }
  return line_of({{"kind", job.kind == Job::Kind::kResolve ? "resolve" : "compile"},
                  {"target", job.target},
                  {"timeout", job.timeout_s},
                  {"cpu_budget_ms", job.cpu_budget_ms},
                  {"hang", job.hang_function},
                  {"recover", job.recover_refusals},
                  {"sweep", job.immarg_sweep},
                  {"object", job.emit_object},
                  {"select", static_cast<int>(job.selection)},
                  {"retire", job.retire_after},
                  {"items", items}});
}

Job decode_job(std::string_view line) {
  json j = json::parse(line);
  Job job;
  job.kind = j.at("kind").get<std::string>() == "resolve" ? Job::Kind::kResolve : Job::Kind::kCompile;
  job.target = j.at("target").get<std::string>();
  job.timeout_s = j.at("timeout").get<int>();
  job.cpu_budget_ms = j.at("cpu_budget_ms").get<int>();
  job.hang_function = j.at("hang").get<std::string>();
  job.recover_refusals = j.at("recover").get<bool>();
  job.immarg_sweep = j.at("sweep").get<std::vector<int64_t>>();
  job.emit_object = j.at("object").get<bool>();
  int selection = j.at("select").get<int>();
  if (selection < 0 || selection > static_cast<int>(Job::Selection::kBeforeFinalize))
    throw std::invalid_argument("a job's selection must be 0, 1 or 2");
  job.selection = static_cast<Job::Selection>(selection);
  job.retire_after = j.at("retire").get<bool>();
  for (const auto& i : j.at("items")) {
    JobItem item;
    item.id = i.at("id").get<int>();
    if (job.kind == Job::Kind::kResolve) {
      item.spec = spec_from_json(i.at("spec"));
    } else {
      item.function = i.at("fn").get<std::string>();
      item.ir = i.at("ir").get<std::string>();
      item.declare_line = i.at("decl").get<std::string>();
    }
    job.items.push_back(std::move(item));
  }
  return job;
}

std::string encode_report(const Report& report) {
  json j = std::visit(
      Overloaded{
          [](const CompileReport& r) {
            json o = {{"t", "item"}, {"id", r.id}, {"fn", r.function}, {"mnemonics", r.mnemonics},
                      {"cross_checked", r.cross_checked}, {"mc_errors", r.mc_errors}, {"undefined", r.undefined},
                      {"object", r.from_object}, {"object_error", r.object_error}, {"cpu_ms", r.cpu_ms}};
            if (r.refused) {
              o["refused"] = *r.refused;
              o["pass"] = r.refused_pass;
            }
            if (r.error) o["error"] = *r.error;
            if (!r.selected.empty()) {
              o["selected"] = r.selected;
              json missing = json::array();
              for (const MissingEncoding& m : r.unencodable)
                missing.push_back({{"opcode", m.opcode}, {"mnemonic", m.mnemonic}, {"diagnostic", m.diagnostic}});
              o["unencodable"] = missing;
            }
            return o;
          },
          [](const ResolveReport& r) {
            const Resolution& res = r.resolution;
            json o = {{"t", "resolved"}, {"id", r.id}, {"kind", resolution_kind_name(res.kind)},
                      {"intrinsic", res.intrinsic}, {"evidence", res.evidence}, {"upgrade", res.upgrade},
                      {"imm", res.default_imm}};
            if (res.kind == Resolution::Kind::kResolved) o["shape"] = shape_to_json(res.shape);
            return o;
          },
          [](const LastWords& w) {
            return json{{"t", "die"}, {"how", std::string(end_kind_name(w.how))}, {"fn", w.function},
                        {"pass", w.pass}, {"msg", w.message}, {"budget", w.budget}};
          },
          [](const JobError& e) { return json{{"t", "job_error"}, {"msg", e.message}}; },
          [](const UnattributedError& e) { return json{{"t", "unattributed"}, {"msg", e.message}}; },
          [](const JobDone&) { return json{{"t", "end"}}; },
      },
      report);
  return line_of(j);
}

std::optional<Report> decode_report(std::string_view line) {
  json j;
  try {
    j = json::parse(line);
    std::string t = j.at("t").get<std::string>();
    if (t == "item") {
      CompileReport r;
      r.id = j.at("id").get<int>();
      r.function = j.at("fn").get<std::string>();
      r.mnemonics = j.at("mnemonics").get<std::vector<std::string>>();
      r.cross_checked = j.at("cross_checked").get<bool>();
      r.mc_errors = j.at("mc_errors").get<std::vector<std::string>>();
      r.undefined = j.at("undefined").get<std::vector<std::string>>();
      r.from_object = j.at("object").get<bool>();
      r.object_error = j.at("object_error").get<std::string>();
      r.cpu_ms = j.at("cpu_ms").get<double>();
      if (j.contains("refused")) {
        r.refused = j.at("refused").get<std::string>();
        r.refused_pass = j.at("pass").get<std::string>();
      }
      if (j.contains("error")) r.error = j.at("error").get<std::string>();
      if (j.contains("selected")) {
        r.selected = j.at("selected").get<std::vector<std::string>>();
        for (const auto& m : j.at("unencodable"))
          r.unencodable.push_back({m.at("opcode").get<std::string>(), m.at("mnemonic").get<std::string>(),
                                   m.at("diagnostic").get<std::string>()});
      }
      return r;
    }
    if (t == "resolved") {
      ResolveReport r;
      r.id = j.at("id").get<int>();
      Resolution& res = r.resolution;
      res.kind = resolution_kind(j.at("kind").get<std::string>());
      res.intrinsic = j.at("intrinsic").get<std::string>();
      res.evidence = j.at("evidence").get<std::string>();
      res.upgrade = j.at("upgrade").get<std::string>();
      res.default_imm = j.at("imm").get<int64_t>();
      if (j.contains("shape")) res.shape = shape_from_json(j.at("shape"));
      return r;
    }
    if (t == "die") {
      return LastWords{end_kind(j.at("how").get<std::string>()), j.at("fn").get<std::string>(),
                       j.at("pass").get<std::string>(), j.at("msg").get<std::string>(), j.at("budget").get<int>()};
    }
    if (t == "job_error") return JobError{j.at("msg").get<std::string>()};
    if (t == "unattributed") return UnattributedError{j.at("msg").get<std::string>()};
    if (t == "end") return JobDone{};
  } catch (const json::exception&) {
  }
  return std::nullopt;
}

size_t encode_last_words(char* buf, size_t cap, EndKind how, const char* function, const char* pass,
                         const char* message, int budget) {
  size_t len = 0;
  const char* how_name = "exit";
  for (const auto& [kind, name] : kEndKinds)
    if (kind == how) how_name = name;
  // Room is kept for the closing characters: a message cut to fit still decodes.
  const size_t body = cap > 4 ? cap - 4 : 0;
  append_raw(buf, body, len, "{\"t\":\"die\",\"how\":\"");
  append_raw(buf, body, len, how_name);
  append_raw(buf, body, len, "\",\"fn\":\"");
  append_escaped(buf, body, len, function);
  append_raw(buf, body, len, "\",\"pass\":\"");
  append_escaped(buf, body, len, pass);
  // The budget before the message, which alone may be cut to fit; in decimal by hand (signal handlers).
  char number[16];
  char* n = number + sizeof number;
  *--n = 0;
  unsigned magnitude = budget < 0 ? 0u - static_cast<unsigned>(budget) : static_cast<unsigned>(budget);
  do *--n = static_cast<char>('0' + magnitude % 10); while ((magnitude /= 10) != 0);
  if (budget < 0) *--n = '-';
  append_raw(buf, body, len, "\",\"budget\":");
  append_raw(buf, body, len, n);
  append_raw(buf, body, len, ",\"msg\":\"");
  append_escaped(buf, body, len, message);
  append_raw(buf, cap, len, "\"}\n");
  return len;
}

}  // namespace archdb
