// service/params.h — one request's query parameters (application/x-www-form-urlencoded), checked against what
// its endpoint takes: an unknown parameter is refused by name, a scalar given twice is refused, a list may be
// repeated, comma-separated or both. Every refusal is an HttpError 400 naming the parameter.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archdb::service {

class Params {
 public:
  // Throws HttpError 400 on malformed percent-encoding.
  explicit Params(const std::string& raw_query);

  // Refuses parameters the endpoint does not know (naming them) and scalars given twice.
  void allow(const std::vector<std::string>& scalars, const std::vector<std::string>& lists) const;

  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // A list parameter: repeated, comma-separated, or both; empty pieces dropped, blanks around pieces trimmed.
  std::vector<std::string> list(const std::string& name) const;
  // A list of GPU targets: as list(), each as cells name it (canonical_target: an alias such as fiji is
  // gfx803; features in LLVM's form, "gfx1100:+wavefrontsize64,-wavefrontsize32"); an unknown feature is a 400.
  // A featured target's own commas are its features, not the list's: a piece that starts with + or - continues
  // the target before it.
  std::vector<std::string> targets(const std::string& name) const;
  // A non-negative integer of at most 9 digits; otherwise a 400 naming it.
  size_t number(const std::string& name, size_t fallback) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> order_;
};

}  // namespace archdb::service
