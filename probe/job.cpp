// probe/job.cpp — the JSON form of jobs (see job.h).
#include "probe/job.h"

namespace archdb {

namespace {
nlohmann::json spec_to_json(const DeclSpec& s) {
  return {{"declare", s.kind == DeclSpec::Kind::kDeclare}, {"name", s.name},     {"overloaded", s.overloaded},
          {"types", s.overload_types},                     {"text", s.declare_text}, {"line", s.line}};
}

DeclSpec spec_from_json(const nlohmann::json& j) {
  DeclSpec s;
  s.kind = j.at("declare").get<bool>() ? DeclSpec::Kind::kDeclare : DeclSpec::Kind::kIntrinsic;
  s.name = j.at("name").get<std::string>();
  s.overloaded = j.at("overloaded").get<bool>();
  s.overload_types = j.at("types").get<std::vector<std::string>>();
  s.declare_text = j.at("text").get<std::string>();
  s.line = j.at("line").get<int>();
  return s;
}
}  // namespace

nlohmann::json job_to_json(const Job& job) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& i : job.items) {
    nlohmann::json item = {{"id", i.id}};
    if (job.kind == Job::Kind::kResolve) {
      item["spec"] = spec_to_json(i.spec);
    } else {
      item["fn"] = i.function;
      item["ir"] = i.ir;
      item["decl"] = i.declare_line;
    }
    items.push_back(item);
  }
  return {{"kind", job.kind == Job::Kind::kResolve ? "resolve" : "compile"},
          {"target", job.target},
          {"timeout", job.timeout_s},
          {"cpu_budget_ms", job.cpu_budget_ms},
          {"hang", job.hang_function},
          {"recover", job.recover_refusals},
          {"sweep", job.immarg_sweep},
          {"object", job.emit_object},
          {"items", items}};
}

Job job_from_json(const nlohmann::json& j) {
  Job job;
  job.kind = j.at("kind").get<std::string>() == "resolve" ? Job::Kind::kResolve : Job::Kind::kCompile;
  job.target = j.at("target").get<std::string>();
  job.timeout_s = j.at("timeout").get<int>();
  job.cpu_budget_ms = j.value("cpu_budget_ms", 0);
  job.hang_function = j.at("hang").get<std::string>();
  job.recover_refusals = j.at("recover").get<bool>();
  job.immarg_sweep = j.at("sweep").get<std::vector<int64_t>>();
  job.emit_object = j.at("object").get<bool>();
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

}  // namespace archdb
