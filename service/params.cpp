// service/params.cpp — a request's query parameters (see params.h).
#include "service/params.h"

#include <algorithm>

#include "llvm/toolchain.h"
#include "service/messages.h"
#include "support/text.h"

namespace archdb::service {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding of one query component.
std::string decode_component(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) fail(400, "malformed percent-encoding in the query string");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

Params::Params(const std::string& raw) {
  size_t pos = 0;
  while (pos <= raw.size() && !raw.empty()) {
    size_t amp = raw.find('&', pos);
    std::string part = raw.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string name = decode_component(part.substr(0, eq));
      std::string value = eq == std::string::npos ? "" : decode_component(part.substr(eq + 1));
      values_[name].push_back(value);
      order_.push_back(name);
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
}

void Params::allow(const std::vector<std::string>& scalars, const std::vector<std::string>& lists) const {
  std::vector<std::string> unknown;
  for (const auto& name : order_) {
    bool known = std::count(scalars.begin(), scalars.end(), name) || std::count(lists.begin(), lists.end(), name);
    if (!known && std::find(unknown.begin(), unknown.end(), name) == unknown.end()) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    std::vector<std::string> quoted, all;
    for (const auto& u : unknown) quoted.push_back("'" + u + "'");
    all.insert(all.end(), scalars.begin(), scalars.end());
    all.insert(all.end(), lists.begin(), lists.end());
    fail(400, std::string(unknown.size() == 1 ? "unknown parameter " : "unknown parameters ") + join(quoted, ", ") +
                  (all.empty() ? " (this endpoint takes none)" : " (this endpoint takes: " + join(all, ", ") + ")"));
  }
  for (const auto& s : scalars) {
    auto it = values_.find(s);
    if (it != values_.end() && it->second.size() > 1) fail(400, "parameter '" + s + "' given more than once");
  }
}

std::optional<std::string> Params::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.front();
}
std::string Params::get_or(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? *v : fallback;
}
std::vector<std::string> Params::list(const std::string& name) const {
  std::vector<std::string> out;
  auto it = values_.find(name);
  if (it == values_.end()) return out;
  for (const auto& v : it->second) {
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      std::string piece = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      size_t b = piece.find_first_not_of(" \t"), e = piece.find_last_not_of(" \t");
      if (b != std::string::npos) out.push_back(piece.substr(b, e - b + 1));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}
std::vector<std::string> Params::targets(const std::string& name) const {
  std::vector<std::string> out;
  for (auto& piece : list(name)) {
    if (!out.empty() && (piece[0] == '+' || piece[0] == '-') && out.back().find(':') != std::string::npos)
      out.back() += "," + piece;
    else
      out.push_back(piece);
  }
  for (auto& t : out) t = canonical_target(t);
  return out;
}
size_t Params::number(const std::string& name, size_t fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  if (v->empty() || v->size() > 9 || !std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; }))
    fail(400, "parameter '" + name + "' must be a non-negative integer, not '" + *v + "'");
  return static_cast<size_t>(std::stoul(*v));
}

}  // namespace archdb::service
