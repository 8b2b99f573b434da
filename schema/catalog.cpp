// schema/catalog.cpp — parser for schema/catalog.txt (format described at the top of that file).
#include "schema/catalog.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "schema/targets.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Removes a trailing "# comment" that is not inside quotes (declare lines may quote names).
std::string strip_comment(const std::string& s) {
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (s[i] == '#' && !quoted) return s.substr(0, i);
  }
  return s;
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '$';
}

// Splits "a, <2 x i32>, {i32, i1}" at top-level commas.
bool split_types(const std::string& s, std::vector<std::string>& out, std::string& why) {
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '<' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == '}' || c == ']') {
      if (--depth < 0) {
        why = "unbalanced '" + std::string(1, c) + "' in overload types";
        return false;
      }
    }
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (depth != 0) {
    why = "unbalanced brackets in overload types";
    return false;
  }
  std::string last = trim(cur);
  if (!last.empty() || !out.empty()) out.push_back(last);
  for (const auto& t : out) {
    if (t.empty()) {
      why = "empty overload type";
      return false;
    }
  }
  return true;
}

bool parse_spec(const std::string& text, int line, DeclSpec& spec, std::string& why) {
  spec = DeclSpec{};
  spec.line = line;
  if (text.rfind("declare ", 0) == 0) {
    spec.kind = DeclSpec::Kind::kDeclare;
    spec.declare_text = text;
    size_t at = text.find('@');
    if (at == std::string::npos) {
      why = "declare without a function name ('@name')";
      return false;
    }
    size_t i = at + 1;
    if (i < text.size() && text[i] == '"') {
      size_t close = text.find('"', i + 1);
      if (close == std::string::npos) {
        why = "unterminated quoted function name";
        return false;
      }
      spec.name = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      size_t b = i;
      while (i < text.size() && is_name_char(text[i])) ++i;
      spec.name = text.substr(b, i - b);
    }
    if (spec.name.empty()) {
      why = "declare without a function name ('@name')";
      return false;
    }
    // Trailing attributes ("nounwind", "#0") may follow the parameter list; LLVM's parser checks the rest.
    if (i >= text.size() || text[i] != '(') {
      why = "declare of @" + spec.name + " has no parameter list";
      return false;
    }
    return true;
  }
  spec.kind = DeclSpec::Kind::kIntrinsic;
  size_t bracket = text.find('[');
  std::string name = trim(bracket == std::string::npos ? text : text.substr(0, bracket));
  if (name.rfind("llvm.", 0) != 0) {
    why = "expected an intrinsic name starting with 'llvm.' or a 'declare' line, got '" + text + "'";
    return false;
  }
  for (char c : name) {
    if (!is_name_char(c)) {
      why = "invalid character '" + std::string(1, c) + "' in intrinsic name '" + name + "'";
      return false;
    }
  }
  spec.name = name;
  if (bracket != std::string::npos) {
    if (text.back() != ']') {
      why = "overload types must end with ']'";
      return false;
    }
    spec.overloaded = true;
    std::string inner = text.substr(bracket + 1, text.size() - bracket - 2);
    if (!split_types(inner, spec.overload_types, why)) return false;
  }
  return true;
}

}  // namespace

std::string DeclSpec::to_string() const {
  if (kind == Kind::kDeclare) return declare_text;
  std::string s = name;
  if (overloaded) {
    s += "[";
    for (size_t i = 0; i < overload_types.size(); ++i) s += (i ? ", " : "") + overload_types[i];
    s += "]";
  }
  return s;
}

const DeclSpec& CatalogEntry::spec_for(const std::string& flavor) const {
  auto it = per_flavor.find(flavor);
  return it == per_flavor.end() ? spec : it->second;
}

const DeclSpec& CatalogEntry::spec_for(const std::string& flavor, const std::string& target) const {
  return wave64 && is_wave64_target(target) ? *wave64 : spec_for(flavor);
}

const CatalogEntry* Catalog::find(const std::string& key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::vector<std::string> Catalog::keys() const {
  std::vector<std::string> k;
  for (const auto& e : entries) k.push_back(e.key);
  std::sort(k.begin(), k.end());
  return k;
}

bool names_intrinsic(const std::string& name) {
  return name.rfind("llvm.amdgcn.", 0) == 0 && name.size() > 12 && is_valid_key(name);
}

bool names_builtin(const std::string& name) {
  constexpr std::string_view kPrefix = "__builtin_amdgcn_";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool names_uncatalogued(const std::string& name) { return names_intrinsic(name) || names_builtin(name); }

bool is_valid_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  char prev = 0;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok || (c == '.' && prev == '.')) return false;
    prev = c;
  }
  return true;
}

bool is_valid_flavor(const std::string& flavor) {
  if (flavor.size() < 5 || flavor.rfind("llvm", 0) != 0) return false;
  return std::all_of(flavor.begin() + 4, flavor.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Catalog parse_catalog(const std::string& text, const std::string& path) {
  Catalog cat;
  cat.path = path;
  std::map<std::string, int> seen;
  size_t pos = 0;
  int lineno = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string raw = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    auto fail = [&](const std::string& why) { return input_error(path + ":" + std::to_string(lineno) + ": " + why); };
    std::string line = trim(strip_comment(raw));
    if (line.empty()) continue;
    bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    if (indented) {
      if (line[0] != '@') throw fail("an indented line must be an override: '@llvmNN SPEC' or '@wave64 SPEC'");
      if (cat.entries.empty()) throw fail("override before any entry");
      size_t sp = line.find_first_of(" \t");
      std::string flavor = line.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
      bool wave64 = flavor == "wave64";
      if (!wave64 && !is_valid_flavor(flavor))
        throw fail("invalid override '@" + flavor + "' (expected a flavor, e.g. '@llvm19', or '@wave64')");
      if (sp == std::string::npos) throw fail("override for " + flavor + " has no spec");
      DeclSpec spec;
      std::string why;
      if (!parse_spec(trim(line.substr(sp)), lineno, spec, why)) throw fail(why);
      CatalogEntry& owner = cat.entries.back();
      if (wave64) {
        if (owner.wave64) throw fail("second wave64 override of key '" + owner.key + "'");
        owner.wave64 = spec;
      } else if (!owner.per_flavor.emplace(flavor, spec).second) {
        throw fail("second override for " + flavor + " of key '" + owner.key + "'");
      }
      continue;
    }
    size_t sp = line.find_first_of(" \t");
    if (sp == std::string::npos) throw fail("entry '" + line + "' has no spec (expected 'KEY SPEC')");
    std::string key = line.substr(0, sp);
    if (!is_valid_key(key))
      throw fail("invalid key '" + key + "' (dot-separated segments of a-z, 0-9, '_' and '-')");
    auto [it, fresh] = seen.emplace(key, lineno);
    if (!fresh) throw fail("duplicate key '" + key + "' (first at line " + std::to_string(it->second) + ")");
    CatalogEntry entry;
    entry.key = key;
    entry.line = lineno;
    std::string why;
    if (!parse_spec(trim(line.substr(sp)), lineno, entry.spec, why)) throw fail(why);
    cat.entries.push_back(std::move(entry));
  }
  if (cat.entries.empty()) throw input_error(path + ": the catalog has no entries");
  return cat;
}

Catalog load_catalog(const std::string& path) { return parse_catalog(read_file(path), path); }

std::string catalog_from_peer_decls(const std::string& table, const std::string& path, const std::string& source) {
  // The catalog text is built line for line with the table, so that parse_catalog's errors name the table's
  // lines; the header is put in front afterwards.
  std::vector<std::pair<std::string, std::string>> entries;  // key, declare; an empty key keeps a line
  size_t width = 0;
  size_t pos = 0;
  int lineno = 0;
  while (pos < table.size()) {
    size_t nl = table.find('\n', pos);
    std::string raw = table.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? table.size() : nl + 1;
    ++lineno;
    auto fail = [&](const std::string& why) { return input_error(path + ":" + std::to_string(lineno) + ": " + why); };
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') {
      entries.emplace_back("", "");
      continue;
    }
    size_t tab = raw.find('\t');
    if (tab == std::string::npos) throw fail("expected KEY<TAB>declare line, found no tab");
    std::string key = trim(raw.substr(0, tab)), declare = trim(raw.substr(tab + 1));
    if (!is_valid_key(key)) throw fail("invalid key '" + key + "' (segments of a-z, 0-9, '_', '-', joined by '.')");
    if (declare.rfind("declare ", 0) != 0)
      throw fail("the declaration of '" + key + "' does not start with 'declare ': '" + declare + "'");
    if (trim(strip_comment(declare)) != declare)  // the catalog reads '#' as a comment
      throw fail("the declaration of '" + key + "' holds '#' outside quotes (an attribute group: write its attributes)");
    width = std::max(width, key.size());
    entries.emplace_back(key, declare);
  }
  std::string body;
  size_t count = 0;
  for (const auto& [key, declare] : entries) {
    if (key.empty()) {
      body += "\n";
      continue;
    }
    body += key + std::string(width + 2 - key.size(), ' ') + declare + "\n";
    ++count;
  }
  if (count == 0) throw input_error(path + ": no KEY<TAB>declare line");
  parse_catalog(body, path);  // as the catalog's own entries are: a repeated key, a declare without '@name'...
  std::string named = source;  // one comment line, whatever the file is called
  for (char& c : named)
    if (c == '\n' || c == '\r') c = ' ';
  return "# A catalog made by `archdb catalog import --format rocke-decls` from " + named + ": " +
         std::to_string(count) + " keys, each measured exactly as declared (schema/catalog.txt describes the format).\n" +
         body;
}

}  // namespace archdb
