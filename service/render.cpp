// service/render.cpp — see render.h.
#include "service/render.h"

#include <cctype>

#include "schema/targets.h"

namespace archdb::service {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Server Error" : "Client Error";
  }
}

std::string error_body(int status, const std::string& message) {
  nlohmann::ordered_json j;
  j["status"] = status;
  j["error"] = std::string(reason_phrase(status));
  j["message"] = message;
  // Messages may quote what the client sent: never fail on bytes that are not UTF-8.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

nlohmann::ordered_json cell_json(const FlavorData& flavor, const Cell& cell) {
  nlohmann::ordered_json j;
  j["flavor"] = flavor.row.name;
  j["origin"] = std::string(origin_name(flavor.row.origin));
  // A non-answer (unknown processor, crash, timeout) says nothing about the target.
  j["answer"] = is_answer(cell.status);
  nlohmann::ordered_json fields = cell_to_json(cell);
  for (auto& [k, v] : fields.items()) j[k] = std::move(v);
  return j;
}

nlohmann::ordered_json flavor_json(const FlavorData& f) {
  nlohmann::ordered_json j;
  j["name"] = f.row.name;
  j["origin"] = std::string(origin_name(f.row.origin));
  j["keys"] = f.keys.size();
  j["cells"] = f.cells.size();
  j["targets"] = f.targets;
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (Status s : storable_statuses()) {
    auto it = f.counts.find(std::string(status_name(s)));
    counts[std::string(status_name(s))] = it == f.counts.end() ? 0 : it->second;
  }
  j["counts"] = counts;
  j["source_digest"] = f.row.source_digest.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.row.source_digest);
  if (f.run) {
    nlohmann::ordered_json run;
    run["id"] = f.run->id;
    run["kind"] = f.run->kind;
    run["started_at"] = f.run->started_at;
    run["ended_at"] = f.run->ended_at;
    run["outcome"] = f.run->outcome;
    j["run"] = run;
  } else {
    j["run"] = nullptr;  // loaded from data/ (or imported): the provenance says how it was made
  }
  j["provenance"] = f.provenance;
  return j;
}

std::string target_family(const std::string& target) {
  if (target.rfind("gfx", 0) != 0) return target;
  std::string rest = target_processor(target).substr(3);  // gfx1100:+wavefrontsize64,... is gfx11's too
  size_t dash = rest.find('-');
  std::string base = rest.substr(0, dash);
  if (dash != std::string::npos) return "gfx" + base;  // gfx11-generic -> gfx11
  // Processor numbers are <major><minor><stepping>: three characters for gfx9 and older, four after.
  if (base.size() >= 4) return "gfx" + base.substr(0, 2);
  if (!base.empty()) return "gfx" + base.substr(0, 1);
  return target;
}

}  // namespace archdb::service
