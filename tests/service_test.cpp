// tests/service_test.cpp — `archdb serve` end to end: the real binary on a free port of 127.0.0.1, against a
// fresh database made from data/, spoken to with cpp-httplib's client and with raw sockets. The JSON API,
// its errors (each followed by a request that must still be served), hostile framing (oversized and chunked
// bodies, bad Content-Length, huge headers, unknown methods), slow clients (many more than workers), path
// traversal, a column and a census rewritten while clients read, SIGTERM in the middle of a request, and bad
// databases at start-up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "db/census.h"
#include "db/store.h"
#include "llvm/toolchain.h"
#include "schema/targets.h"
#include "test_support.h"

extern char** environ;

namespace archdb {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kKey = "mfma.f32.4x4x4bf16.1k";

// A fresh database made from the committed columns (what any archdb command does on first use).
fs::path make_database(const test::TempDir& dir) {
  fs::path db = dir / "db.sqlite";
  auto r = test::run_archdb({"--db", db.string(), "runs", "--limit", "1"});
  if (r.exit_code != 0) throw std::runtime_error("cannot create the database: " + r.err);
  return db;
}

// `archdb serve --port 0 ...` in the background; the first line it prints names the port.
class ServerProcess {
 public:
  ServerProcess(const fs::path& db, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {ARCHDB_BINARY, "--db", db.string(), "serve", "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    err_path_ = io_ / "stderr";
    ::fcntl(out[0], F_SETFD, FD_CLOEXEC);
    pid_ = spawn_child(args, {{}, ChildStream::descriptor(out[1]), ChildStream::file(err_path_.string())});
    ::close(out[1]);
    out_ = out[0];
    std::string line;
    auto until = Clock::now() + std::chrono::seconds(30);
    while (line.find('\n') == std::string::npos && Clock::now() < until) {
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char c[256];
      ssize_t n = ::read(out_, c, sizeof c);
      if (n <= 0) break;
      line.append(c, static_cast<size_t>(n));
    }
    size_t at = line.find("127.0.0.1:");
    if (at == std::string::npos) throw std::runtime_error("archdb serve did not start: " + line + test::read(err_path_));
    port_ = std::stoi(line.substr(at + 10));
  }
  ~ServerProcess() {
    if (pid_ > 0) stop();
    ::close(out_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Sends `sig` and waits; the exit status (128+signal if killed).
  int stop(int sig = SIGTERM) {
    ::kill(pid_, sig);
    return wait();
  }
  int wait() {
    int code = wait_child(pid_);
    pid_ = -1;
    return code;
  }
  std::string err() const { return test::read(err_path_); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(5);
    c.set_read_timeout(20);
    return c;
  }

 private:
  test::TempDir io_;
  fs::path err_path_;
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
};

// A raw TCP connection, for what a well-behaved client would never send.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect");
  }
  ~RawConnection() { ::close(fd_); }
  void send(const std::string& bytes) { (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  // Reads until the peer closes or `timeout` passes; `closed` says which.
  std::string read_all(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    auto until = Clock::now() + timeout;
    if (closed) *closed = false;
    while (Clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

// Sends `request` from a second thread while this one reads the answer (a large request to a server that
// stops reading must not block the reader); the answer as read within `timeout`.
std::string exchange(int port, const std::string& request, std::chrono::milliseconds timeout, bool* closed = nullptr) {
  RawConnection raw(port);
  std::thread sender([&] { raw.send(request); });
  std::string response = raw.read_all(timeout, closed);
  sender.join();
  return response;
}

// A response that ends its connection says so once, and does not also offer to keep it alive.
void expect_closing_headers(const std::string& response) {
  std::string head = response.substr(0, response.find("\r\n\r\n"));
  size_t connection = 0;
  for (size_t at = 0; (at = head.find("\r\nConnection:", at)) != std::string::npos; ++at) ++connection;
  EXPECT_EQ(connection, 1u) << head;
  EXPECT_NE(head.find("\r\nConnection: close"), std::string::npos) << head;
  EXPECT_EQ(head.find("Keep-Alive"), std::string::npos) << head;
}

// A chunked body of `size` bytes in 64 KiB chunks; without its last chunk if `finish` is false.
std::string chunked(const std::string& body, bool finish = true) {
  std::string out;
  for (size_t at = 0; at < body.size(); at += 65536) {
    std::string part = body.substr(at, 65536);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    out += size + part + "\r\n";
  }
  if (finish) out += "0\r\n\r\n";
  return out;
}

json body_of(const httplib::Result& r) {
  if (!r) throw std::runtime_error("no response: " + httplib::to_string(r.error()));
  return json::parse(r->body);
}

// Every error is JSON with the status, its reason and a message.
void expect_error(const httplib::Result& r, int status, const std::string& message_part) {
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json j = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r->body;
  EXPECT_EQ(j["status"], status);
  EXPECT_NE(j["message"].get<std::string>().find(message_part), std::string::npos) << j["message"];
  // No path of this machine in a response.
  EXPECT_EQ(r->body.find(test::source_dir().string()), std::string::npos) << r->body;
}

// The server still answers.
void expect_serving(const ServerProcess& s) {
  auto c = s.client();
  auto r = c.Get("/v1/cells/llvm22/mfma.f32.4x4x4bf16.1k/gfx90a");
  ASSERT_TRUE(r) << "the server stopped serving";
  EXPECT_EQ(r->status, 200);
}

class Service : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    db_ = make_database(*dir_);
    server_ = new ServerProcess(db_);
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(), 0) << server_->err();
    delete server_;
    delete dir_;
  }
  static test::TempDir* dir_;
  static fs::path db_;
  static ServerProcess* server_;
};
test::TempDir* Service::dir_ = nullptr;
fs::path Service::db_;
ServerProcess* Service::server_ = nullptr;

TEST_F(Service, FlavorsComeWithTheirProvenance) {
  auto c = server_->client();
  auto r = c.Get("/v1/flavors");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = body_of(r);
  std::map<std::string, json> by_name;
  for (const auto& f : j["flavors"]) by_name[f["name"]] = f;
  ASSERT_TRUE(by_name.count("llvm22")) << r->body.substr(0, 500);
  const json& f = by_name["llvm22"];
  EXPECT_EQ(f["origin"], "measured");
  EXPECT_EQ(f["provenance"]["schema"], "archdb.column/v1");
  EXPECT_EQ(f["provenance"]["toolchain"]["llvm_major"], 22);
  EXPECT_EQ(f["cells"].get<int>(), f["keys"].get<int>() * static_cast<int>(f["targets"].size()));
  EXPECT_GT(f["counts"]["ok"].get<int>(), 0);
  ASSERT_TRUE(by_name.count("llvm20"));
  EXPECT_EQ(by_name["llvm20"]["origin"], "descriptor");
  EXPECT_EQ(by_name["llvm20"]["cells"], 0);
  // The flavors are in LLVM order.
  std::vector<std::string> names;
  for (const auto& x : j["flavors"]) names.push_back(x["name"]);
  EXPECT_LT(std::find(names.begin(), names.end(), "llvm19"), std::find(names.begin(), names.end(), "llvm22"));
  auto one = c.Get("/v1/flavors/llvm22");
  ASSERT_TRUE(one);
  EXPECT_EQ(body_of(one), f);
  expect_error(c.Get("/v1/flavors/llvm99"), 404, "unknown flavor 'llvm99'");
}

TEST_F(Service, TargetsWithFamiliesAndKeysWithSearch) {
  auto c = server_->client();
  json t = body_of(c.Get("/v1/targets"));
  std::map<std::string, std::string> family;
  for (const auto& x : t["targets"]) family[x["name"]] = x["family"];
  EXPECT_EQ(family["gfx90a"], "gfx9");
  EXPECT_EQ(family["gfx1030"], "gfx10");
  EXPECT_EQ(family["gfx11-generic"], "gfx11");
  EXPECT_EQ(family["gfx1201"], "gfx12");
  EXPECT_EQ(t["families"][0]["name"], "gfx9");

  json k = body_of(c.Get("/v1/keys?q=4X4X4BF16"));
  ASSERT_GT(k["total"].get<int>(), 0);
  bool found = false;
  for (const auto& x : k["keys"]) {
    std::string key = x["key"], spec = x["spec"].is_null() ? "" : x["spec"].get<std::string>();
    EXPECT_TRUE(key.find("4x4x4bf16") != std::string::npos || spec.find("4x4x4bf16") != std::string::npos) << key;
    found |= key == kKey;
  }
  EXPECT_TRUE(found);
  json page = body_of(c.Get("/v1/keys?flavor=llvm22&limit=5&offset=2"));
  EXPECT_EQ(page["keys"].size(), 5u);
  EXPECT_EQ(page["offset"], 2);
  EXPECT_TRUE(page["keys"][0].contains("intrinsic"));
  expect_error(c.Get("/v1/keys?limit=-1"), 400, "non-negative integer");
}

TEST_F(Service, OneCellWithItsEvidence) {
  auto c = server_->client();
  json ok = body_of(c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx90a"));
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["answer"], true);
  EXPECT_EQ(ok["intrinsic"], "llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
  EXPECT_NE(ok["lowered_to"].dump().find("v_mfma_f32_4x4x4bf16_1k"), std::string::npos);
  json no = body_of(c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx1201"));
  EXPECT_EQ(no["status"], "arch_absent");
  EXPECT_EQ(no["answer"], true);
  EXPECT_NE(no["evidence"].get<std::string>().find("Cannot select"), std::string::npos);
  // LLVM 22 selects S_BARRIER_SIGNAL_IMM on gfx942, which has no encoding there, and crashes: decided by its tables.
  json unencodable = body_of(c.Get("/v1/cells/llvm22/s.barrier.signal/gfx942"));
  EXPECT_EQ(unencodable["status"], "arch_absent");
  EXPECT_EQ(unencodable["cause"], "unencodable");
  EXPECT_NE(unencodable["evidence"].get<std::string>().find("which has no encoding on this processor"), std::string::npos);
  // LLVM 21 crashes after selecting V_ALIGNBYTE_B32_e64 on gfx1030, which has an encoding there: no table decides.
  json crash = body_of(c.Get("/v1/cells/llvm21/amdgcn.alignbyte/gfx1030"));
  EXPECT_EQ(crash["status"], "toolchain_crash");
  EXPECT_EQ(crash["answer"], false) << "a crash is no answer";

  expect_error(c.Get("/v1/cells/llvm99/x/gfx90a"), 404, "unknown flavor");
  expect_error(c.Get("/v1/cells/llvm22/mfma.f32.4x4x4bf16/gfx90a"), 404, "did you mean");
  expect_error(c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx999"), 404, "no cell");
  expect_error(c.Get(std::string("/v1/cells/llvm20/") + kKey + "/gfx90a"), 404, "descriptor");
  expect_error(c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx90a?verbose=1"), 400, "unknown parameter 'verbose'");
}

TEST_F(Service, MatrixSliceWithFilters) {
  auto c = server_->client();
  json m = body_of(c.Get("/v1/matrix?flavor=llvm22&targets=gfx90a,gfx1201&q=4x4x4bf16.1K"));
  EXPECT_EQ(m["targets"], json::array({"gfx90a", "gfx1201"}));
  bool found = false;
  for (const auto& row : m["rows"])
    if (row["key"] == kKey) {
      found = true;
      EXPECT_EQ(row["statuses"], json::array({"ok", "arch_absent"}));
    }
  EXPECT_TRUE(found) << m.dump();

  json all = body_of(c.Get("/v1/matrix?flavor=llvm22"));
  EXPECT_EQ(all["rows"].size(), all["total_keys"].get<size_t>());
  EXPECT_EQ(all["targets"].size(), load_targets((test::source_dir() / "schema/targets.txt").string()).names.size());

  // llvm21's crashes after selection no table decides (alignbyte on gfx1030).
  json crashes = body_of(c.Get("/v1/matrix?flavor=llvm21&status=toolchain_crash&family=gfx10"));
  ASSERT_GT(crashes["rows"].size(), 0u);
  for (const auto& t : crashes["targets"]) EXPECT_EQ(t.get<std::string>().substr(0, 5), "gfx10");
  for (const auto& row : crashes["rows"])
    EXPECT_NE(row["statuses"].dump().find("toolchain_crash"), std::string::npos) << row.dump();

  json full = body_of(c.Get(std::string("/v1/matrix?flavor=llvm22&detail=full&targets=gfx1201&keys=") + kKey));
  ASSERT_EQ(full["rows"].size(), 1u);
  EXPECT_NE(full["rows"][0]["cells"][0]["evidence"].get<std::string>().find("Cannot select"), std::string::npos);

  json paged = body_of(c.Get("/v1/matrix?flavor=llvm22&limit=3&offset=10"));
  EXPECT_EQ(paged["rows"].size(), 3u);
  EXPECT_EQ(paged["rows"][0]["key"], all["rows"][10]["key"]);

  expect_error(c.Get("/v1/matrix"), 400, "'flavor' is required");
  expect_error(c.Get("/v1/matrix?flavor=llvm22&status=maybe"), 400, "unknown status 'maybe'");
  expect_error(c.Get("/v1/matrix?flavor=llvm22&targets=gfx9000"), 400, "unknown target 'gfx9000'");
  expect_error(c.Get("/v1/matrix?flavor=llvm22&flavor=llvm23"), 400, "more than once");
  expect_error(c.Get("/v1/matrix?flavor=llvm22&sort=key&colour=1"), 400, "unknown parameters 'sort', 'colour'");
  expect_error(c.Post("/v1/check", "{\"keys\":" + std::string(100000, '[') + std::string(100000, ']') + "}", "application/json"),
               400, "the body's JSON nests 100001 levels deep (at most 64 are read)");
  expect_error(c.Get("/v1/status?x=1"), 400, "unknown parameter 'x' (this endpoint takes none)");
  expect_error(c.Get("/v1?verbose=1"), 400, "unknown parameter 'verbose' (this endpoint takes none)");
}

TEST_F(Service, HistoryAndDiffAreTheCommandLinesDocuments) {
  auto c = server_->client();
  json api = body_of(c.Get("/v1/history/amdgcn.alignbyte"));
  auto cli = test::run_archdb({"--db", db_.string(), "history", "amdgcn.alignbyte", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(api, json::parse(cli.out));
  json one = body_of(c.Get("/v1/history/amdgcn.alignbyte?targets=gfx1030"));
  EXPECT_EQ(one["targets"].size(), 1u);
  EXPECT_NE(one["targets"]["gfx1030"]["summary"].get<std::string>().find("toolchain_crash"), std::string::npos);
  // A featured target's own commas are its features, in a list of targets too.
  json featured = body_of(c.Get("/v1/history/amdgcn.alignbyte?targets=gfx1030:%2Bwavefrontsize64,-wavefrontsize32,gfx90a"));
  EXPECT_EQ(featured["targets"].size(), 2u) << featured.dump();
  EXPECT_TRUE(featured["targets"].contains("gfx1030:+wavefrontsize64,-wavefrontsize32")) << featured.dump();
  expect_error(c.Get("/v1/history/no.such.key"), 404, "unknown name");

  json d = body_of(c.Get("/v1/diff/llvm22/llvm23"));
  auto cli_diff = test::run_archdb({"--db", db_.string(), "diff", "llvm22", "llvm23", "--json"});
  ASSERT_EQ(cli_diff.exit_code, 0) << cli_diff.err;
  json expected = json::parse(cli_diff.out);
  for (const char* field : {"from", "to", "shared_cells", "groups"}) EXPECT_EQ(d[field], expected[field]) << field;
  json filtered = body_of(c.Get("/v1/diff/llvm22/llvm23?group=crash%20fixed&group=became%20ok"));
  for (const auto& [g, list] : filtered["groups"].items()) EXPECT_TRUE(g == "crash fixed" || g == "became ok") << g;
  expect_error(c.Get("/v1/diff/llvm22/llvm23?group=worse"), 400, "unknown group 'worse'");
  expect_error(c.Get("/v1/diff/llvm22/llvm99"), 404, "unknown flavor 'llvm99'");
  // A processor keeps its featured targets, as on the command line.
  json gfx1030 = body_of(c.Get("/v1/diff/llvm21/llvm22?targets=gfx1030"));
  auto cli_gfx1030 = test::run_archdb({"--db", db_.string(), "diff", "llvm21", "llvm22", "--target", "gfx1030", "--json"});
  ASSERT_EQ(cli_gfx1030.exit_code, 0) << cli_gfx1030.err;
  EXPECT_EQ(gfx1030["groups"], json::parse(cli_gfx1030.out)["groups"]);
  std::set<std::string> diff_targets;
  for (const auto& [g, list] : gfx1030["groups"].items())
    for (const auto& d : list) diff_targets.insert(d["target"].get<std::string>());
  EXPECT_EQ(diff_targets, (std::set<std::string>{"gfx1030", "gfx1030:+wavefrontsize64,-wavefrontsize32"}));
  // The command line filters the same way: a processor keeps its wave64 target; churn is counted, not listed.
  auto per_target = test::run_archdb({"--db", db_.string(), "diff", "llvm21", "llvm22", "--target", "gfx1030", "--group", "crash fixed"});
  ASSERT_EQ(per_target.exit_code, 0) << per_target.err;
  EXPECT_NE(per_target.out.find("\n  amdgcn.alignbyte/gfx1030: "), std::string::npos) << per_target.out;
  EXPECT_NE(per_target.out.find("\n  amdgcn.alignbyte/gfx1030:+wavefrontsize64,-wavefrontsize32: "), std::string::npos) << per_target.out;
  EXPECT_EQ(per_target.out.find("/gfx1250"), std::string::npos) << per_target.out;
  EXPECT_EQ(per_target.out.find("\nbecame ok"), std::string::npos) << per_target.out;
  auto worse = test::run_archdb({"--db", db_.string(), "diff", "llvm21", "llvm22", "--group", "worse"});
  EXPECT_EQ(worse.exit_code, 2);
  EXPECT_NE(worse.err.find("unknown group 'worse'"), std::string::npos) << worse.err;
  auto all = test::run_archdb({"--db", db_.string(), "diff", "llvm22", "llvm23"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  size_t churn = all.out.find("\nlowering churn (");
  ASSERT_NE(churn, std::string::npos) << all.out.substr(0, 2000);
  EXPECT_NE(all.out.find("only waits, nops and moves changed; --group 'lowering churn' lists them", churn), std::string::npos);
  size_t next = all.out.find("\n\n", churn + 1);
  std::string block = all.out.substr(churn + 1, next == std::string::npos ? std::string::npos : next - churn - 1);
  EXPECT_EQ(block.find("\n  "), std::string::npos) << "churn is not listed unless asked for: " << block;
}

TEST_F(Service, CheckKeysIntrinsicsAndIr) {
  auto c = server_->client();
  auto post = [&](const json& j) { return c.Post("/v1/check", j.dump(), "application/json"); };
  json refused = body_of(post({{"flavor", "llvm22"}, {"target", "gfx1201"}, {"keys", {kKey}}}));
  EXPECT_EQ(refused["verdict"], "refused");
  EXPECT_NE(refused["results"][0]["message"].get<std::string>().find("Cannot select"), std::string::npos);
  json cleared = body_of(post({{"flavor", "llvm22"}, {"targets", {"gfx90a", "gfx942"}}, {"keys", {kKey}}}));
  EXPECT_EQ(cleared["verdict"], "cleared");
  EXPECT_EQ(cleared["results"].size(), 2u);
  json by_name = body_of(post({{"compiler_version", "Debian clang version 21.1.8"}, {"target", "gfx1030"},
                               {"intrinsics", {"llvm.amdgcn.alignbyte"}}}));
  EXPECT_EQ(by_name["flavor"], "llvm21");
  EXPECT_EQ(by_name["verdict"], "unvalidated") << "a crash is no answer, never a refusal";
  json unencodable = body_of(post({{"compiler_version", "Debian clang version 22.1.8"}, {"target", "gfx942"},
                                   {"intrinsics", {"llvm.amdgcn.s.barrier.signal"}}}));
  EXPECT_EQ(unencodable["verdict"], "refused") << "LLVM's tables decide what it crashes on";
  // A builtin named where a key goes: clang's answer from the front-end axis, as the command line gives it.
  json builtin = body_of(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"keys", {"__builtin_amdgcn_cvt_f32_bf8"}}}));
  EXPECT_EQ(builtin["verdict"], "refused") << builtin.dump();
  EXPECT_EQ(builtin["results"][0]["items"][0]["source"], "frontend") << builtin.dump();
  EXPECT_EQ(builtin["results"][0]["items"][0]["key"], "amdgcn.cvt.f32.bf8");

  const std::string ir =
      "declare void @llvm.amdgcn.s.barrier()\n"
      "define amdgpu_kernel void @wgrad() {\n  call void @llvm.amdgcn.s.barrier()\n  ret void\n}\n";
  json from_ir = body_of(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"ir", ir}}));
  EXPECT_EQ(from_ir["verdict"], "cleared") << from_ir.dump();
  EXPECT_EQ(from_ir["kernels"], json::array({"wgrad"}));
  EXPECT_EQ(from_ir["results"][0]["subject"], "wgrad");
  // The same IR as the body itself, the rest in the query.
  auto raw = c.Post("/v1/check?flavor=llvm22&target=gfx90a", ir, "text/x-llvm-ir");
  EXPECT_EQ(body_of(raw)["verdict"], "cleared");

  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"ir", "define void @f( {"}}), 422, "not valid LLVM IR");
  expect_serving(*server_);
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"ir", std::string((1u << 20) + 1, ';')}}), 413,
               "the limit is 1048576 bytes");
  expect_error(c.Post("/v1/check", std::string((2u << 20) + 10, ' '), "application/json"), 413, "request body too large");
  expect_serving(*server_);
  expect_error(c.Post("/v1/check", "{\"flavor\": \"llvm22\", ", "application/json"), 400, "malformed JSON");
  expect_error(c.Post("/v1/check", "[1, 2]", "application/json"), 400, "JSON object");
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"keys", {kKey}}, {"verbose", true}}), 400,
               "unknown field 'verbose'");
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"keys", kKey}}), 400, "array of strings");
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}}), 400, "exactly one of");
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx9000"}, {"keys", {kKey}}}), 400, "unknown target 'gfx9000'");
  expect_error(post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"keys", {"no.such.key"}}}), 400,
               "unknown key 'no.such.key' (neither in the catalog nor an llvm.amdgcn.* intrinsic or a __builtin_amdgcn_* builtin)");
  {
    auto r = post({{"flavor", "llvm22"}, {"target", "gfx90a"}, {"keys", {"x"}}});
    ASSERT_TRUE(r);
    EXPECT_EQ(body_of(r)["message"].get<std::string>().find('/'), std::string::npos) << r->body;
  }
  expect_error(post({{"flavor", "clang22"}, {"target", "gfx90a"}, {"keys", {kKey}}}), 400, "unknown flavor");
  expect_error(c.Post("/v1/check", "<xml/>", "application/xml"), 415, "not accepted");
  expect_error(c.Get("/v1/check"), 405, "use POST");
  expect_serving(*server_);
}

// IR that took the service down when it was read in the server's own process (issue 16): each is now a 422
// naming what LLVM did, the server keeps serving, and the next check is answered normally.
// A target may be named as LLVM's processor table names it: an alias is answered as its gfx name, in the
// query, the JSON body and the cell's path alike.
TEST_F(Service, LlvmsProcessorAliasesAreAnsweredAsTheirGfxNames) {
  auto c = server_->client();
  json by_alias = body_of(c.Post("/v1/check", json{{"flavor", "llvm22"}, {"target", "tahiti"}, {"keys", {"workitem.x"}}}.dump(),
                                 "application/json"));
  EXPECT_EQ(by_alias["verdict"], "cleared") << by_alias.dump();
  EXPECT_EQ(by_alias["results"][0]["target"], "gfx600") << by_alias.dump();
  const std::string ir =
      "declare i32 @llvm.amdgcn.workitem.id.x()\n"
      "define amdgpu_kernel void @k(ptr addrspace(1) %p) {\n  %x = call i32 @llvm.amdgcn.workitem.id.x()\n"
      "  store i32 %x, ptr addrspace(1) %p\n  ret void\n}\n";
  json in_query = body_of(c.Post("/v1/check?flavor=llvm22&target=fiji", ir, "text/x-llvm-ir"));
  EXPECT_EQ(in_query["results"][0]["target"], "gfx803") << in_query.dump();
  expect_error(c.Post("/v1/check", json{{"flavor", "llvm22"}, {"target", "tahitii"}, {"keys", {"workitem.x"}}}.dump(),
                      "application/json"),
               400, "unknown target 'tahitii'");
  // Features as LLVM writes them; the service measures nothing, so a featured target is a non-answer saying so.
  expect_error(c.Post("/v1/check?flavor=llvm22&target=gfx1100:%2Bnosuch", ir, "text/x-llvm-ir"), 400,
               "'nosuch' is not a feature");
  json featured = body_of(c.Post("/v1/check?flavor=llvm22&target=gfx1100:xnack%2B", ir, "text/x-llvm-ir"));
  EXPECT_EQ(featured["results"][0]["target"], "gfx1100:+xnack") << featured.dump();
  EXPECT_EQ(featured["verdict"], "unvalidated") << featured.dump();
  EXPECT_EQ(featured["results"][0]["items"][0]["status"], "no_answer") << featured.dump();
}

TEST_F(Service, HostileIrIsAnAnswerAndTheServerKeepsServing) {
  auto c = server_->client();
  auto repeat = [](const std::string& s, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::string query = "/v1/check?flavor=llvm22&target=gfx90a";
  const std::string nested = "%t = type " + repeat("{", 30000) + "i32" + repeat("}", 30000) + "\n";
  expect_error(c.Post(query, nested, "text/plain"), 422, "request.ll:1: the IR nests brackets more than 256 deep");
  expect_serving(*server_);
  expect_error(c.Post(query, repeat("[1 x ", 20000), "text/plain"), 422, "nests brackets more than 256 deep");
  // The bitcode LLVM 22 traps on (SIGTRAP) every time; flip-7852's wild pointer crashes the reader or not as the
  // heap lies (1 of 6 runs here read it), as CheckCli found.
  std::string bitcode = test::read(test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-4637.bc");
  expect_error(c.Post(query, bitcode, "application/octet-stream"), 422, "request.ll: LLVM crashed reading it (signal ");
  expect_serving(*server_);
  std::string vast = test::read(test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-403.bc");
  expect_error(c.Post(query, vast, "application/octet-stream"), 422, "needed more memory than the limit");
  // Empty IR: the same answer as `archdb check` gives (exit 3, "FILE: the IR is empty").
  expect_error(c.Post("/v1/check", json{{"flavor", "llvm22"}, {"target", "gfx90a"}, {"ir", ""}}.dump(), "application/json"),
               422, "request.ll: the IR is empty");
  expect_error(c.Post(query, "\n \n", "text/plain"), 422, "request.ll: the IR is empty (only whitespace)");
  const std::string ir =
      "declare void @llvm.amdgcn.s.barrier()\n"
      "define amdgpu_kernel void @wgrad() {\n  call void @llvm.amdgcn.s.barrier()\n  ret void\n}\n";
  auto after = c.Post(query, ir, "text/plain");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200) << after->body;
  EXPECT_EQ(body_of(after)["verdict"], "cleared");
}

// Only the service's own origin: a page elsewhere cannot post to it (text/plain bodies need no preflight), and
// a DNS name rebound to 127.0.0.1 cannot read it. Clients that are no browser (no Origin) are served.
TEST_F(Service, OnlyItsOwnOriginIsAnswered) {
  const std::string self = "127.0.0.1:" + std::to_string(server_->port());
  const std::string ir = "define amdgpu_kernel void @k() {\n  ret void\n}\n";
  auto send = [&](const std::string& method, const std::string& target, const httplib::Headers& headers) {
    auto c = server_->client();
    if (method == "GET") return c.Get(target, headers);
    if (method == "OPTIONS") return c.Options(target, headers);
    return c.Post(target, headers, ir, "text/plain");
  };
  const std::string check = "/v1/check?flavor=llvm22&target=gfx90a";
  // The page's own requests, and tools without Origin.
  for (const httplib::Headers& own : std::vector<httplib::Headers>{
           {},
           {{"Origin", "http://" + self}, {"Sec-Fetch-Site", "same-origin"}},
           {{"Host", "localhost:" + std::to_string(server_->port())}, {"Origin", "http://localhost:" + std::to_string(server_->port())}},
           {{"Host", "[::1]:8787"}},
           {{"Sec-Fetch-Site", "none"}}}) {
    auto r = send("POST", check, own);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  struct Case {
    std::string method, target;
    httplib::Headers headers;
    std::string message;
  };
  const std::vector<Case> foreign = {
      {"POST", check, {{"Origin", "http://evil.example"}}, "another origin (Origin: http://evil.example)"},
      {"POST", check, {{"Origin", "null"}}, "another origin (Origin: null)"},
      {"POST", check, {{"Origin", "http://127.0.0.1:1"}}, "another origin"},
      {"OPTIONS", check, {{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "POST"}}, "another origin"},
      {"GET", "/v1/flavors", {{"Origin", "https://evil.example"}}, "another origin"},
      {"POST", check, {{"Sec-Fetch-Site", "cross-site"}}, "Sec-Fetch-Site: cross-site"},
      {"GET", "/v1/flavors", {{"Sec-Fetch-Site", "same-site"}, {"Sec-Fetch-Mode", "no-cors"}}, "Sec-Fetch-Site: same-site"},
      {"GET", "/v1/flavors", {{"Host", "rebound.evil.example:" + std::to_string(server_->port())}},
       "Host 'rebound.evil.example:"},
      {"POST", check, {{"Host", "rebound.evil.example"}}, "is not a name of this service"},
  };
  for (const Case& c : foreign) {
    SCOPED_TRACE(c.method + " " + c.target);
    auto r = send(c.method, c.target, c.headers);
    expect_error(r, 403, c.message);
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "");
  }
  // A link from another site still opens the page (a navigation), and its own requests are then same-origin.
  auto page = send("GET", "/", {{"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Mode", "navigate"}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  expect_serving(*server_);
}

// --allow-host adds a name (a team's DNS name for the machine) to the ones Host may carry.
TEST(ServiceOrigin, AllowHostAddsANameAndOnlyThat) {
  test::TempDir dir;
  ServerProcess server(make_database(dir), {"--allow-host", "archdb.team.example"});
  auto c = server.client();
  auto named = c.Get("/v1/flavors", {{"Host", "ARCHDB.team.example:8787"}});
  ASSERT_TRUE(named);
  EXPECT_EQ(named->status, 200) << named->body;
  expect_error(c.Get("/v1/flavors", {{"Host", "other.team.example:8787"}}), 403, "Host 'other.team.example:8787'");
  EXPECT_EQ(server.stop(), 0) << server.err();
}

TEST_F(Service, BadRequestsGetJsonErrorsAndTheServerKeepsServing) {
  auto c = server_->client();
  expect_error(c.Get("/v1/nothing/here"), 404, "no such endpoint");
  auto wrong_method = c.Delete("/v1/flavors");
  expect_error(wrong_method, 405, "use GET");
  EXPECT_EQ(wrong_method->get_header_value("Allow"), "GET, HEAD");
  expect_error(c.Post("/v1/flavors", "{}", "application/json"), 405, "use GET");
  expect_error(c.Get("/v1/matrix?flavor=llvm22&q=%zz"), 400, "percent-encoding");
  expect_serving(*server_);

  // Path traversal in static file requests, however spelled: refused with a JSON message.
  for (std::string target : {"/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
                             "/web/../../../etc/passwd", "/./index.html", "/%2E%2E/README.md"}) {
    RawConnection raw(server_->port());
    raw.send("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    std::string response = raw.read_all(std::chrono::seconds(5));
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << target << ": " << response;
    EXPECT_NE(response.find("\"message\":\"refused: path traversal"), std::string::npos) << response;
    EXPECT_EQ(response.find("root:"), std::string::npos);
  }
  expect_error(c.Get("/etc/passwd"), 404, "no such file");
  expect_error(c.Get("/index.html.bak"), 404, "no such file");

  // Malformed HTTP, a URI over the limit: JSON too, and the connection ends.
  for (std::string request : {"GET /v1/status\r\nHost: 127.0.0.1\r\n\r\n", "GET /v1/status HTTP/7.0\r\nHost: 127.0.0.1\r\n\r\n",
                              "GET /v1/status HTTP/1.1\nHost: 127.0.0.1\n\n"}) {
    RawConnection raw(server_->port());
    raw.send(request);
    bool closed = false;
    std::string response = raw.read_all(std::chrono::seconds(5), &closed);
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << response;
    EXPECT_NE(response.find("\"message\":\"malformed HTTP request"), std::string::npos) << response;
    expect_closing_headers(response);
    EXPECT_TRUE(closed);
  }
  // Whom a request is for, and from, said twice or empty: which one counts is ambiguous.
  for (std::string headers : {"Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n", "Host: \r\n",
                              "Host: 127.0.0.1\r\nOrigin: http://127.0.0.1:1\r\nOrigin: http://127.0.0.1:1\r\n",
                              "Host: 127.0.0.1\r\nOrigin:\r\n"}) {
    RawConnection raw(server_->port());
    raw.send("GET /v1/status HTTP/1.1\r\n" + headers + "\r\n");
    bool closed = false;
    std::string response = raw.read_all(std::chrono::seconds(5), &closed);
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << headers << response;
    EXPECT_TRUE(response.find("given more than once") != std::string::npos ||
                response.find("an empty ") != std::string::npos) << response;
    EXPECT_TRUE(closed) << headers;
  }
  // A chunked body framed with bare LFs is one 400 and the end of the connection, never an answer and then a
  // second one to the bytes after it.
  {
    const std::string body = R"({"flavor":"llvm22","target":"gfx90a","keys":["s.sleep"]})";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", body.size());
    for (std::string framing : {std::string(size) + "\n" + body + "\n0\n\n", std::string(size) + "\r\n" + body + "\n0\r\n\r\n",
                                std::string(size) + "\r\n" + body + "\r\n0\r\n\n"}) {
      RawConnection raw(server_->port());
      raw.send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\n\r\n" + framing);
      bool closed = false;
      std::string response = raw.read_all(std::chrono::seconds(5), &closed);
      EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << response;
      EXPECT_EQ(response.find("HTTP/1.1", 1), std::string::npos) << "two responses: " << response;
      EXPECT_TRUE(closed);
    }
    // Framed with CR LF, the same request is answered, and the connection serves the next one.
    RawConnection raw(server_->port());
    std::string request = "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n" + std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n";
    raw.send(request + "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    std::string response = raw.read_all(std::chrono::seconds(5));
    EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response;
    size_t second = response.find("HTTP/1.1", 1);
    ASSERT_NE(second, std::string::npos) << response;
    EXPECT_EQ(response.compare(second, 12, "HTTP/1.1 200"), 0) << response.substr(second);
  }
  {
    RawConnection raw(server_->port());
    raw.send("GET /v1/" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    std::string response = raw.read_all(std::chrono::seconds(5));
    EXPECT_EQ(response.rfind("HTTP/1.1 414", 0), 0u) << response.substr(0, 200);
  }
  expect_serving(*server_);
}

// The API reference (docs/service.md's table) names exactly the endpoints `GET /v1` lists from the route table,
// and each listed endpoint is served: a GET route answers something other than 404 and 405, a POST route refuses GET
// with 405 naming POST.
TEST_F(Service, TheApiReferenceIsTheRouteTable) {
  auto c = server_->client();
  json index = body_of(c.Get("/v1"));
  std::set<std::string> listed;
  for (const auto& e : index["endpoints"]) {
    std::string method = e["method"], path = e["path"];
    listed.insert(method + " " + path);
    EXPECT_FALSE(e["description"].get<std::string>().empty()) << path;
    std::string concrete = path;
    for (auto [from, to] : {std::pair{"{flavor}", "llvm22"}, {"{key}", "amdgcn.permlane64"}, {"{target}", "gfx90a"},
                            {"{name}", "cos"}, {"{from}", "llvm22"}, {"{to}", "llvm23"}})
      if (size_t at = concrete.find(from); at != std::string::npos) concrete.replace(at, std::string(from).size(), to);
    if (method == "GET") {
      auto r = c.Get(concrete + (path == "/v1/search" ? "?q=mfma" : path == "/v1/matrix" ? "?flavor=llvm22" : ""));
      ASSERT_TRUE(r) << concrete;
      EXPECT_EQ(r->status, 200) << concrete << ": " << r->body;
    } else {
      expect_error(c.Get(concrete), 405, "use POST");
    }
  }
  std::string doc = test::read(test::source_dir() / "docs/service.md");
  std::set<std::string> documented;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string first = line.substr(0, line.find(" | "));
    for (size_t at = first.find('`'); at != std::string::npos; at = first.find('`', at + 1)) {
      size_t end = first.find('`', at + 1);
      if (end == std::string::npos) break;
      std::string cell = first.substr(at + 1, end - at - 1);
      if (cell.rfind("GET /v1", 0) == 0 || cell.rfind("POST /v1", 0) == 0) documented.insert(cell);
      at = end;
    }
  }
  EXPECT_EQ(documented, listed);
}

TEST_F(Service, TheStaticPageIsServed) {
  auto c = server_->client();
  auto index = c.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("app.js"), std::string::npos);
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  auto js = c.Get("/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(c.Get("/style.css")->status, 200);
  // A query string on a page file is ignored (cache busting, as browsers and caches expect): the same file.
  auto busted = c.Get("/app.js?v=20261203");
  ASSERT_TRUE(busted);
  EXPECT_EQ(busted->status, 200);
  EXPECT_EQ(busted->body, js->body);
  // Conditional requests: an unchanged resource is 304, for the page and for the API.
  for (const char* path : {"/app.js", "/v1/flavors"}) {
    auto first = c.Get(path);
    std::string etag = first->get_header_value("ETag");
    ASSERT_FALSE(etag.empty()) << path;
    auto again = c.Get(path, httplib::Headers{{"If-None-Match", etag}});
    EXPECT_EQ(again->status, 304) << path;
    EXPECT_TRUE(again->body.empty());
  }
}

TEST_F(Service, SlowClientsAreCutOffWhileOthersAreServed) {
  // One client sends half a request and goes quiet; another trickles a byte a second.
  RawConnection silent(server_->port()), trickle(server_->port());
  silent.send("GET /v1/flavors HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    std::string request = "GET /v1/flavors HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(40, 'z') + "\r\n\r\n";
    for (char ch : request) {
      if (done) break;
      trickle.send(std::string(1, ch));
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
    }
  });
  // Meanwhile everyone else is served, promptly.
  auto start = Clock::now();
  auto c = server_->client();
  for (int i = 0; i < 50; ++i) {
    auto r = c.Get("/v1/cells/llvm22/mfma.f32.4x4x4bf16.1k/gfx1201");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  // The silent one is answered 408 and closed after the read timeout (5 s).
  bool closed = false;
  std::string response = silent.read_all(std::chrono::seconds(9), &closed);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(9));
  EXPECT_EQ(response.rfind("HTTP/1.1 408", 0), 0u) << response;
  EXPECT_NE(response.find("\"message\""), std::string::npos) << response;
  expect_closing_headers(response);
  EXPECT_TRUE(closed);
  // The trickler never finishes within the 10 s a whole request may take: 408 and closed.
  response = trickle.read_all(std::chrono::seconds(8), &closed);
  done = true;
  trickler.join();
  EXPECT_EQ(response.rfind("HTTP/1.1 408", 0), 0u) << response;
  EXPECT_TRUE(closed);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(13));
  expect_serving(*server_);
}

TEST_F(Service, ChunkedBodiesAreHeldToTheBodyLimit) {
  const std::string head = "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  // Within the limit, a chunked body is a body like another.
  std::string small = R"({"flavor": "llvm22", "target": "gfx1201", "keys": ["mfma.f32.4x4x4bf16.1k"]})";
  std::string ok = exchange(server_->port(), head + chunked(small), std::chrono::seconds(5));
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok.substr(0, 300);
  EXPECT_NE(ok.find("\"verdict\":\"refused\""), std::string::npos);

  // 2.8 MiB (a JSON string longer than the limit): 413, not parsed.
  std::string big = R"({"flavor": "llvm22", "target": "gfx90a", "keys": ["mfma.f32.4x4x4bf16.1k"], "subject": ")" +
                    std::string(2936013, 'x') + "\"}";
  bool closed = false;
  std::string refused = exchange(server_->port(), head + chunked(big), std::chrono::seconds(5), &closed);
  EXPECT_EQ(refused.rfind("HTTP/1.1 413", 0), 0u) << refused.substr(0, 300);
  EXPECT_NE(refused.find("the limit is 2097152 bytes"), std::string::npos) << refused.substr(0, 300);
  expect_closing_headers(refused);
  EXPECT_TRUE(closed);

  // Refused as soon as the limit is passed: the body need not end (nor the read timeout pass) first.
  std::string unfinished = head + chunked(std::string((2u << 20) + 100000, 'y'), /*finish=*/false);
  auto start = Clock::now();
  refused = exchange(server_->port(), unfinished, std::chrono::seconds(3), &closed);
  EXPECT_EQ(refused.rfind("HTTP/1.1 413", 0), 0u) << refused.substr(0, 300);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  expect_serving(*server_);
}

TEST_F(Service, FramingAndHeadErrorsAreAnsweredAtOnce) {
  struct Case {
    std::string request;
    int status;
    std::string message;
  };
  const std::string post = "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  std::string many_headers;
  for (int i = 0; i < 200; ++i) many_headers += "X-Filler-" + std::to_string(i) + ": " + std::string(1000, 'h') + "\r\n";
  const std::vector<Case> cases = {
      {post + "Content-Length: 99999999999\r\n\r\n{", 413, "99999999999 bytes; the limit is 2097152 bytes"},
      {post + "Content-Length: -5\r\n\r\n{", 400, "invalid Content-Length '-5'"},
      {post + "Content-Length: 12abc\r\n\r\n{", 400, "invalid Content-Length"},
      {post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, "Content-Length given more than once"},
      {post + "Transfer-Encoding: gzip\r\n\r\n", 501, "Transfer-Encoding 'gzip' is not supported"},
      {post + "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}", 400, "both Content-Length and Transfer-Encoding"},
      {"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n", 431,
       "request header fields too large"},
      {"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(200000, 'a') + "\r\n\r\n", 431,
       "request header fields too large"},
      {"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" + many_headers + "\r\n", 431, "16384 bytes in all"},
      {"FOO /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, "method 'FOO' is not implemented"},
      {"BREW /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, "method 'BREW' is not implemented"},
  };
  for (const Case& c : cases) {
    bool closed = false;
    // Well within the 5 s a silent client is given: these are judged from the head alone.
    std::string response = exchange(server_->port(), c.request, std::chrono::seconds(2), &closed);
    std::string line = c.request.substr(0, c.request.find("\r\n"));
    EXPECT_EQ(response.rfind("HTTP/1.1 " + std::to_string(c.status), 0), 0u) << line << ": " << response.substr(0, 300);
    EXPECT_NE(response.find(c.message), std::string::npos) << line << ": " << response.substr(0, 300);
    expect_closing_headers(response);
    EXPECT_TRUE(closed) << line;
  }
  // A method the HTTP parser knows but no endpoint takes: 405, with the methods that apply.
  RawConnection raw(server_->port());
  raw.send("TRACE /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  std::string response = raw.read_all(std::chrono::seconds(2));
  EXPECT_EQ(response.rfind("HTTP/1.1 405", 0), 0u) << response;
  EXPECT_NE(response.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << response;
  // The limits' 413 through a well-behaved client ends its connection the same way.
  RawConnection big(server_->port());
  std::thread sender([&] {
    big.send(post + "Content-Length: " + std::to_string((2u << 20) + 10) + "\r\n\r\n" + std::string((2u << 20) + 10, ' '));
  });
  response = big.read_all(std::chrono::seconds(3));
  sender.join();
  EXPECT_EQ(response.rfind("HTTP/1.1 413", 0), 0u) << response.substr(0, 300);
  expect_closing_headers(response);
  expect_serving(*server_);
}

// Many more slow clients than workers: each holds a socket in the reception, none a worker, and a normal
// request is answered at once.
TEST(ServiceSlowClients, ManyMoreSlowClientsThanWorkersDoNotDelayOthers) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db, {"--threads", "4"});
  std::vector<std::unique_ptr<RawConnection>> slow;
  const std::string body = R"({"flavor": "llvm22", "target": "gfx90a", "keys": ["mfma.f32.4x4x4bf16.1k"]})";
  for (int i = 0; i < 20; ++i) {  // half a head, then silence
    slow.push_back(std::make_unique<RawConnection>(server.port()));
    slow.back()->send("GET /v1/flavors HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  }
  for (int i = 0; i < 20; ++i) {  // a whole head, half the body
    slow.push_back(std::make_unique<RawConnection>(server.port()));
    slow.back()->send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      "Connection: close\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, body.size() / 2));
  }
  std::vector<std::unique_ptr<RawConnection>> tricklers;
  for (int i = 0; i < 20; ++i) tricklers.push_back(std::make_unique<RawConnection>(server.port()));
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string request = "GET /v1/targets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: zzzzzzzzzzzzzzzzzzzz\r\n\r\n";
    for (size_t at = 0; at < request.size() && !done; ++at) {
      for (auto& t : tricklers) t->send(request.substr(at, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // every slow client is in
  auto c = server.client();
  std::chrono::steady_clock::duration slowest{};
  for (int i = 0; i < 10; ++i) {
    auto start = Clock::now();
    auto r = c.Get("/v1/status");
    slowest = std::max(slowest, Clock::now() - start);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
  }
  auto start = Clock::now();
  auto checked = c.Post("/v1/check", body, "application/json");
  slowest = std::max(slowest, Clock::now() - start);
  ASSERT_TRUE(checked);
  EXPECT_EQ(checked->status, 200);
  EXPECT_LT(slowest, std::chrono::milliseconds(1000)) << "60 slow clients held up a normal request";
  // The slow ones finish what they started: each is served.
  for (size_t i = 20; i < 40; ++i) slow[i]->send(body.substr(body.size() / 2));
  for (size_t i = 20; i < 40; ++i) {
    std::string response = slow[i]->read_all(std::chrono::seconds(5));
    EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response.substr(0, 200);
  }
  done = true;
  trickle.join();
  slow.clear();  // gone: a draining server would otherwise give their requests until the deadline
  tricklers.clear();
  EXPECT_EQ(server.stop(), 0) << server.err();
}

// A column rewritten in a loop by another connection (as `regen` replaces one, in one transaction) while
// clients read it: every response shows the old column or the new one, whole.
TEST(ServiceConcurrency, ReadersSeeAWholeColumnWhileItIsRewritten) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db);
  auto writer_store = Store::open(db);
  std::vector<Cell> a, b;
  for (const Cell& c : writer_store->cells("llvm22")) {
    Cell x = c;
    x.status = Status::kOk;
    x.evidence.clear();
    x.cause = Cause::kNone;
    x.lowered_to = {"v_version_a"};
    a.push_back(x);
    Cell y = c;
    y.status = Status::kArchAbsent;
    y.evidence = "version B";
    y.lowered_to.clear();
    y.mc_check.clear();
    y.note.clear();
    y.cause = Cause::kRefusal;
    b.push_back(y);
  }
  ASSERT_GT(a.size(), 1000u);
  const std::string provenance = R"({"schema": "archdb.column/v1", "flavor": "llvm99"})";
  writer_store->replace_column("llvm99", Origin::kMeasured, provenance, a, "digest-a", std::nullopt);
  {
    // The server notices another connection's commit on its own (within a poll interval).
    auto c = server.client();
    auto until = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < until && c.Get("/v1/flavors/llvm99")->status != 200)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(c.Get("/v1/flavors/llvm99")->status, 200);
  }

  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    for (int i = 0; !stop && i < 400; ++i) {
      writer_store->replace_column("llvm99", Origin::kMeasured, provenance, i % 2 ? a : b,
                                   i % 2 ? "digest-a" : "digest-b", std::nullopt);
      ++writes;
    }
  });
  std::atomic<int> seen_a{0}, seen_b{0}, mixed{0}, failed{0};
  auto reader = [&] {
    auto c = server.client();
    auto until = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < until) {
      auto r = c.Get("/v1/matrix?flavor=llvm99");
      if (!r || r->status != 200) {
        if (++failed < 3) ADD_FAILURE() << (r ? r->body : httplib::to_string(r.error()));
        continue;
      }
      json m = json::parse(r->body);
      std::set<std::string> statuses;
      for (const auto& row : m["rows"])
        for (const auto& s : row["statuses"]) statuses.insert(s.is_null() ? "null" : s.get<std::string>());
      if (statuses == std::set<std::string>{"ok"} && m["counts"]["ok"].get<size_t>() == a.size()) ++seen_a;
      else if (statuses == std::set<std::string>{"arch_absent"} && m["counts"]["arch_absent"].get<size_t>() == b.size()) ++seen_b;
      else ++mixed;
      // A single cell and the flavor's counts come from one snapshot too.
      auto f = c.Get("/v1/flavors/llvm99");
      if (f && f->status == 200) {
        json fj = json::parse(f->body);
        int ok = fj["counts"]["ok"], absent = fj["counts"]["arch_absent"];
        if (!((ok == static_cast<int>(a.size()) && absent == 0) || (ok == 0 && absent == static_cast<int>(b.size()))))
          ++mixed;
      }
    }
  };
  std::thread r1(reader), r2(reader);
  r1.join();
  r2.join();
  stop = true;
  writer.join();
  std::printf("[          ] %d column writes; readers saw column A %d times and B %d times, mixed %d times\n",
              writes.load(), seen_a.load(), seen_b.load(), mixed.load());
  EXPECT_EQ(mixed, 0) << "a response mixed the two columns";
  EXPECT_EQ(failed, 0);
  EXPECT_GT(writes, 4);
  EXPECT_GT(seen_a, 0);
  EXPECT_GT(seen_b, 0) << "the server never showed the rewritten column";
  EXPECT_EQ(server.stop(), 0) << server.err();
}

// POST /v1/check answers intrinsics outside the catalog from the census, held in the snapshot: while the
// census is rewritten in a loop, every response shows the old census or the new one, never a mix, and the
// service follows the rewrites.
TEST(ServiceCensus, CensusAnswersComeFromTheSnapshotAndFollowItsSwaps) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  auto writer = Store::open(db);
  std::optional<Census> original = load_census(*writer, "llvm22");
  ASSERT_TRUE(original) << "the committed data/ has no llvm22 census";
  // Instantiations on gfx90a that no catalog key of the column stands for: only the census answers them.
  std::set<std::string> measured;
  for (const Cell& c : writer->cells("llvm22")) measured.insert(c.intrinsic);
  std::vector<std::string> names;
  for (const Cell& c : original->cells)
    if (c.target == "gfx90a" && !measured.count(c.key) && names.size() < 40) names.push_back(c.key);
  ASSERT_EQ(names.size(), 40u);
  ServerProcess server(db);
  auto c = server.client();
  auto check = [&] {
    json request = {{"flavor", "llvm22"}, {"target", "gfx90a"}, {"intrinsics", names}};
    auto r = c.Post("/v1/check", request.dump(), "application/json");
    if (!r || r->status != 200) throw std::runtime_error(r ? r->body : httplib::to_string(r.error()));
    return json::parse(r->body)["results"][0]["items"];
  };
  json items = check();
  ASSERT_EQ(items.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(items[i]["source"], "census") << items[i].dump();
    EXPECT_EQ(items[i]["status"], std::string(status_name(original->find(names[i], "gfx90a")->status))) << names[i];
  }

  // Two versions of the census: every cell ok, or every cell arch_absent.
  Census a = *original, b = *original;
  for (Cell& x : a.cells) {
    x.status = Status::kOk;
    x.evidence.clear();
    x.cause = Cause::kNone;
    x.lowered_to = {"v_census_a"};
  }
  for (Cell& y : b.cells) {
    y.status = Status::kArchAbsent;
    y.evidence = "census B";
    y.lowered_to.clear();
    y.mc_check.clear();
    y.note.clear();
    y.cause = Cause::kRefusal;
  }
  a.recount();
  b.recount();
  store_census(*writer, a, "census-a");
  auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until && check()[0]["status"] != "ok") std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(check()[0]["status"], "ok") << "the service did not follow the census's rewrite";

  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread rewriter([&] {
    for (int i = 0; !stop && i < 200; ++i) {
      store_census(*writer, i % 2 ? a : b, i % 2 ? "census-a" : "census-b");
      ++writes;
    }
  });
  std::atomic<int> seen_a{0}, seen_b{0}, mixed{0}, failed{0};
  auto reader = [&] {
    auto rc = server.client();
    auto end = Clock::now() + std::chrono::seconds(4);
    json request = {{"flavor", "llvm22"}, {"target", "gfx90a"}, {"intrinsics", names}};
    while (Clock::now() < end) {
      auto r = rc.Post("/v1/check", request.dump(), "application/json");
      if (!r || r->status != 200) {
        if (++failed < 3) ADD_FAILURE() << (r ? r->body : httplib::to_string(r.error()));
        continue;
      }
      std::set<std::string> statuses;
      json answer = json::parse(r->body);
      for (const auto& item : answer["results"][0]["items"]) statuses.insert(item["status"].get<std::string>());
      if (statuses == std::set<std::string>{"ok"}) ++seen_a;
      else if (statuses == std::set<std::string>{"arch_absent"}) ++seen_b;
      else if (++mixed < 3) ADD_FAILURE() << r->body.substr(0, 3000);
    }
  };
  std::thread r1(reader), r2(reader);
  r1.join();
  r2.join();
  stop = true;
  rewriter.join();
  std::printf("[          ] %d census writes; checks saw census A %d times and B %d times, mixed %d times\n",
              writes.load(), seen_a.load(), seen_b.load(), mixed.load());
  EXPECT_EQ(mixed, 0) << "a check mixed two versions of the census";
  EXPECT_EQ(failed, 0);
  EXPECT_GT(seen_a, 0);
  EXPECT_GT(seen_b, 0) << "the service never showed the rewritten census";
  EXPECT_EQ(server.stop(), 0) << server.err();
}

// An intrinsic's name is answered over every instantiation the census measured of it, the one that decided named.
TEST(ServiceCensus, AnIntrinsicIsAnsweredOverItsInstantiations) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db);
  auto c = server.client();
  auto r = c.Get("/v1/intrinsics/llvm22/swmmac.f16.16x16x32.f16?targets=gfx1201,gfx1100");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["intrinsic"], "llvm.amdgcn.swmmac.f16.16x16x32.f16");
  EXPECT_EQ(j["instantiations"].size(), 2u) << r->body;
  EXPECT_EQ(j["answers"]["gfx1201"]["status"], "ok") << r->body;
  EXPECT_EQ(j["answers"]["gfx1201"]["instantiation"], "llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i32");
  EXPECT_EQ(j["answers"]["gfx1100"]["status"], "arch_absent") << r->body;
  EXPECT_EQ(j["answers"].size(), 2u);
  // One instantiation, as a kernel's IR names it, is that row alone.
  auto one = c.Get("/v1/intrinsics/llvm22/llvm.amdgcn.cos.f32?targets=gfx90a");
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(json::parse(one->body)["answers"]["gfx90a"]["status"], "ok");
  auto unknown = c.Get("/v1/intrinsics/llvm22/no.such.thing");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_NE(json::parse(unknown->body)["message"].get<std::string>().find("not an llvm.amdgcn.* intrinsic"), std::string::npos);
  auto bad = c.Get("/v1/intrinsics/llvm22/cos?targets=gfx9999");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(server.stop(), 0) << server.err();
}

// /v1/search finds any spelling of a name as `archdb search` does (one JSON form), and the key routes take any
// spelling of a key, saying how they read it; a name the censuses answer, or a processor only they have, is
// answered from them, as the command line answers it.
TEST(ServiceSearch, AnySpellingIsFoundAndResolvedAsTheCommandLineDoes) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db);
  auto c = server.client();
  auto r = c.Get("/v1/search?q=__builtin_amdgcn_mfma_f32_4x4x4bf16_1k&limit=2");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  auto cli = test::run_archdb({"--db", db.string(), "search", "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "--json", "--limit", "2"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(j, json::parse(cli.out)) << "the service and the command line answer alike";
  EXPECT_EQ(j["hits"].size(), 2u);
  EXPECT_EQ(j["hits"][0]["name"], "mfma.f32.4x4x4bf16.1k");

  auto cell = c.Get("/v1/cells/llvm22/__builtin_amdgcn_permlane64/gfx90a");
  ASSERT_TRUE(cell);
  ASSERT_EQ(cell->status, 200) << cell->body;
  EXPECT_EQ(json::parse(cell->body)["key"], "amdgcn.permlane64");
  EXPECT_EQ(json::parse(cell->body)["resolved"]["asked"], "__builtin_amdgcn_permlane64");
  auto history = c.Get("/v1/history/llvm.amdgcn.permlane64?targets=gfx90a");
  ASSERT_TRUE(history);
  ASSERT_EQ(history->status, 200) << history->body;
  EXPECT_EQ(json::parse(history->body)["key"], "amdgcn.permlane64");
  // A name the censuses answer: its history is theirs, the command line's document; a key's cell on a processor
  // only the census has is the census's answer for the instantiation the key poses.
  auto census = c.Get("/v1/history/s_sleep_var?targets=gfx1100,gfx1200");
  ASSERT_TRUE(census);
  ASSERT_EQ(census->status, 200) << census->body;
  auto cli_history = test::run_archdb({"--db", db.string(), "history", "s_sleep_var", "--target", "gfx1100",
                                       "--target", "gfx1200", "--json"});
  ASSERT_EQ(cli_history.exit_code, 0) << cli_history.err;
  EXPECT_EQ(json::parse(census->body), json::parse(cli_history.out));
  EXPECT_EQ(json::parse(census->body)["source"], "census");
  auto processor = c.Get("/v1/cells/llvm22/permlane64/gfx900");
  ASSERT_TRUE(processor);
  ASSERT_EQ(processor->status, 200) << processor->body;
  json p = json::parse(processor->body);
  EXPECT_EQ(p["source"], "census");
  EXPECT_EQ(p["instantiation"], "llvm.amdgcn.permlane64.i32");
  EXPECT_EQ(p["asked"]["key"], "amdgcn.permlane64");
  EXPECT_EQ(p["status"], "arch_absent");
  auto cli_processor = test::run_archdb({"--db", db.string(), "query", "permlane64", "--flavor", "llvm22", "--target", "gfx900", "--json"});
  ASSERT_EQ(cli_processor.exit_code, 0) << cli_processor.err;
  json q = json::parse(cli_processor.out);
  EXPECT_EQ(q["source"], "census");
  EXPECT_EQ(q["flavors"]["llvm22"]["instantiations"][0]["cells"]["gfx900"]["status"], p["status"]);
  EXPECT_NE(q["resolved"]["how"].get<std::string>().find("gfx900 is not a target of amdgcn.permlane64's columns"),
            std::string::npos) << cli_processor.out;
  // source=census: the censuses' history even of an intrinsic a key poses.
  auto posed = c.Get("/v1/history/llvm.amdgcn.permlane64?source=census&targets=gfx900");
  ASSERT_TRUE(posed);
  ASSERT_EQ(posed->status, 200) << posed->body;
  EXPECT_EQ(json::parse(posed->body)["source"], "census");
  EXPECT_EQ(json::parse(posed->body)["targets"]["gfx900"]["cells"]["llvm22"]["status"], "arch_absent");
  auto bad_source = c.Get("/v1/history/permlane64?source=columns");
  ASSERT_TRUE(bad_source);
  EXPECT_EQ(bad_source->status, 400);
  auto nowhere = c.Get("/v1/cells/llvm22/permlane64/gfx9999");
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
  for (const char* bad : {"/v1/search", "/v1/search?q=", "/v1/search?q=x&limit=-1", "/v1/search?q=x&page=2"}) {
    auto b = c.Get(bad);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->status, 400) << bad << ": " << b->body;
  }
  EXPECT_EQ(server.stop(), 0) << server.err();
}

// A database the service cannot read again (here a census cell that is not a cell): it keeps serving the last
// whole snapshot and says why in /v1/status, naming the database by its file name only.
TEST(ServiceCensus, AnUnreadableReloadKeepsTheLastSnapshot) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db);
  auto c = server.client();
  json before = body_of(c.Get("/v1/status"));
  {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    sqlite3_busy_timeout(handle, 10000);
    const char* tamper =
        "UPDATE census SET source_digest = 'tampered' WHERE flavor = 'llvm22';"
        "UPDATE census_group SET detail = '{\"evidence\": 5}' WHERE flavor = 'llvm22' AND status = 'arch_absent' AND "
        "key = (SELECT key FROM census_group WHERE flavor = 'llvm22' AND status = 'arch_absent' LIMIT 1);";
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(handle, tamper, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(handle);
  }
  json status;
  auto until = Clock::now() + std::chrono::seconds(10);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    status = body_of(c.Get("/v1/status"));
  } while (status["reload_error"].is_null() && Clock::now() < until);
  ASSERT_TRUE(status["reload_error"].is_string()) << status.dump();
  std::string why = status["reload_error"];
  EXPECT_NE(why.find("db.sqlite: census of llvm22"), std::string::npos) << why;
  EXPECT_EQ(why.find(dir.path().string()), std::string::npos) << why;
  EXPECT_EQ(status["generation"], before["generation"]);
  EXPECT_NE(server.err().find(dir.path().string()), std::string::npos) << "stderr names the file in full";
  expect_serving(server);
}

TEST(ServiceLifecycle, SigtermFinishesTheRequestInFlightAndExitsZero) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db);
  // An idle kept-alive connection does not hold the drain up.
  auto idle = server.client();
  idle.set_keep_alive(true);
  ASSERT_EQ(idle.Get("/v1/status")->status, 200);

  // A request in flight: headers and half the body sent, the rest after SIGTERM.
  std::string body = R"({"flavor": "llvm22", "target": "gfx1201", "keys": ["mfma.f32.4x4x4bf16.1k"]})";
  RawConnection raw(server.port());
  raw.send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = Clock::now();
  ::kill(server.pid(), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  raw.send(body.substr(20));
  bool closed = false;
  std::string response = raw.read_all(std::chrono::seconds(10), &closed);
  EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response;
  EXPECT_NE(response.find("\"verdict\":\"refused\""), std::string::npos) << response;
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << "a draining server closes after answering";
  EXPECT_TRUE(closed);
  EXPECT_EQ(server.wait(), 0) << server.err();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(server.err().find("stopped"), std::string::npos) << server.err();
}

TEST(ServiceLifecycle, ACorruptDatabaseIsAClearError) {
  test::TempDir dir;
  test::write(dir / "corrupt.sqlite", "SQLite format 3" + std::string(4096, '\x7f'));
  auto corrupt = test::run_archdb({"--db", (dir / "corrupt.sqlite").string(), "serve", "--port", "0"});
  EXPECT_EQ(corrupt.exit_code, 3) << corrupt.err;
  EXPECT_NE(corrupt.err.find("corrupt.sqlite"), std::string::npos) << corrupt.err;
  EXPECT_EQ(corrupt.out.find("listening"), std::string::npos);

  auto no_web = test::run_archdb({"--db", make_database(dir).string(), "serve", "--port", "0", "--web", dir.path().string()});
  EXPECT_EQ(no_web.exit_code, 2);
  EXPECT_NE(no_web.err.find("has no index.html"), std::string::npos) << no_web.err;
}

// A database cut short (a disk that filled, a copy interrupted): exit 3 and one line naming the file.
// serve makes a missing database from data/, as every other command does, and answers from it.
TEST(ServiceLifecycle, AMissingDatabaseIsMadeFromData) {
  test::TempDir dir;
  fs::path db = dir / "new.sqlite";
  ServerProcess server(db);
  EXPECT_TRUE(fs::is_regular_file(db));
  expect_serving(server);
  EXPECT_EQ(server.stop(), 0) << server.err();
}

TEST(ServiceLifecycle, ATruncatedDatabaseIsAClearErrorAtStartUp) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  fs::resize_file(db, fs::file_size(db) / 2);
  auto r = test::run_archdb({"--db", db.string(), "serve", "--port", "0"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(db.string()), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos);
}

TEST(ServiceLifecycle, APortInUseIsAClearError) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess first(db);
  auto second = test::run_archdb({"--db", db.string(), "serve", "--port", std::to_string(first.port())});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())), std::string::npos) << second.err;
  expect_serving(first);
}

TEST(ServiceLifecycle, TheAnswerCacheCanBeTurnedOff) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db, {"--cache-mb", "0"});
  auto c = server.client();
  auto first = c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx1201");
  auto again = c.Get(std::string("/v1/cells/llvm22/") + kKey + "/gfx1201");
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(body_of(first)["status"], "arch_absent");
  EXPECT_EQ(again->body, first->body);
  EXPECT_EQ(again->get_header_value("ETag"), first->get_header_value("ETag"));
  auto bad = test::run_archdb({"--db", db.string(), "serve", "--port", "0", "--cache-mb", "-1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--cache-mb"), std::string::npos) << bad.err;
}

TEST(ServiceLifecycle, WebOverridesThePageFolder) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  test::write(dir / "web/index.html", "<!doctype html><title>another page</title>");
  ServerProcess server(db, {"--web", (dir / "web").string()});
  auto c = server.client();
  EXPECT_NE(c.Get("/")->body.find("another page"), std::string::npos);
  EXPECT_EQ(c.Get("/app.js")->status, 404);
}

// A page folder whose file is a link out of it is refused at start (nothing served comes from elsewhere); a link
// to a file inside it is served.
TEST(ServiceLifecycle, WebRefusesAFileThatLinksOutOfItsFolder) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  test::write(dir / "web/index.html", "<!doctype html><title>page</title>");
  test::write(dir / "secret.txt", "not for the page");
  fs::create_symlink(dir / "web/index.html", dir / "web/home.html");
  {
    ServerProcess inside(db, {"--web", (dir / "web").string()});
    auto c = inside.client();
    EXPECT_NE(c.Get("/home.html")->body.find("<title>page</title>"), std::string::npos);
  }
  fs::create_symlink(dir / "secret.txt", dir / "web/notes.txt");
  auto r = test::run_archdb({"--db", db.string(), "serve", "--port", "0", "--web", (dir / "web").string()});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("'notes.txt' links outside the folder"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos);
}

}  // namespace
}  // namespace archdb

namespace archdb {
namespace {

// The service measures nothing, but answers from the cells the command line measured on demand, as it does: a
// kernel that uses the result of the gfx908 buffer atomic the census found lowering only with its result unused.
TEST(ServiceCheck, CellsMeasuredOnDemandAnswerTheServiceAsTheCommandLine) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "measures on demand with llvm22";
  test::TempDir dir;
  fs::path db = make_database(dir);
  const std::string ir =
      "declare float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float, ptr addrspace(8), i32, i32, i32 immarg)\n"
      "define amdgpu_kernel void @accumulate(ptr addrspace(8) %rsrc, ptr addrspace(1) %out, float %v) #0 {\n"
      "  %old = call float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float %v, ptr addrspace(8) %rsrc, i32 0, i32 0, i32 0)\n"
      "  store float %old, ptr addrspace(1) %out\n  ret void\n}\n"
      "attributes #0 = { \"target-cpu\"=\"gfx908\" }\n";
  auto ask = [&] {
    ServerProcess server(db);
    auto c = server.client();
    json out = body_of(c.Post("/v1/check?flavor=llvm22&target=gfx908", ir, "text/x-llvm-ir"));
    EXPECT_EQ(server.stop(), 0) << server.err();
    return out["results"][0]["items"][0];
  };
  json before = ask();
  EXPECT_EQ(before["status"], "no_answer") << before.dump();
  EXPECT_EQ(before["call"]["result"], "used");
  test::write(dir / "k.ll", ir);
  auto cli = test::run_archdb({"--db", db.string(), "check", "--target", "gfx908", "--flavor", "llvm22", "--json",
                               (dir / "k.ll").string()});
  json measured = json::parse(cli.out)["items"][0];
  EXPECT_EQ(measured["source"], "on_demand") << cli.out << cli.err;
  json after = ask();
  EXPECT_EQ(after["source"], "on_demand") << after.dump();
  EXPECT_EQ(after["status"], measured["status"]);
  EXPECT_EQ(after["evidence"], measured["evidence"]);
  EXPECT_EQ(after["posed"], measured["posed"]);
}

// IR checks share the readers fairly: one past its CPU budget is a 422 naming the budget, and the next check is
// read by another child; one client's checks past its share are 429s, never a queue without end; key checks
// are answered meanwhile.
TEST(ServiceCheck, IrChecksPastTheirBudgetOrTheirClientsShareAreRefusedNamingIt) {
  test::TempDir dir;
  fs::path db = make_database(dir);
  ServerProcess server(db, {"--ir-cpu-ms", "5", "--ir-per-client", "2"});
  std::string big = "define amdgpu_kernel void @big(ptr addrspace(1) %out) {\n  %v0 = add i32 0, 1\n";
  for (int i = 1; i < 28000; ++i) big += "  %v" + std::to_string(i) + " = add i32 %v" + std::to_string(i - 1) + ", 1\n";
  big += "  store i32 %v27999, ptr addrspace(1) %out\n  ret void\n}\n";
  auto c = server.client();
  auto heavy = c.Post("/v1/check?flavor=llvm22&target=gfx90a", big, "text/x-llvm-ir");
  ASSERT_TRUE(heavy);
  EXPECT_EQ(heavy->status, 422) << heavy->body;
  EXPECT_NE(json::parse(heavy->body)["message"].get<std::string>().find("used more than its CPU budget (5 ms)"),
            std::string::npos) << heavy->body;
  const std::string small = "define amdgpu_kernel void @k() {\n  ret void\n}\n";
  auto next = c.Post("/v1/check?flavor=llvm22&target=gfx90a", small, "text/x-llvm-ir");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200) << next->body;
  // Six heavy checks from one client at once (each a distinct kernel): each is read within its budget's 422 or
  // refused as past the client's share, never queued; a key check is answered meanwhile.
  std::vector<std::future<int>> sent;
  std::atomic<int> too_many{0};
  for (int i = 0; i < 6; ++i)
    sent.push_back(std::async(std::launch::async, [&, i] {
      auto one = server.client();
      auto r = one.Post("/v1/check?flavor=llvm22&target=gfx90a", "; " + std::to_string(i) + "\n" + big, "text/x-llvm-ir");
      if (r && r->status == 429) {
        ++too_many;
        EXPECT_NE(r->body.find("IR checks running or waiting, the most one client may (serve --ir-per-client 2)"),
                  std::string::npos) << r->body;
      }
      return r ? r->status : 0;
    }));
  auto keys = c.Post("/v1/check", R"({"flavor":"llvm22","target":"gfx90a","keys":["workitem.x"]})", "application/json");
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->status, 200) << keys->body;
  for (auto& f : sent) {
    int status = f.get();
    EXPECT_TRUE(status == 422 || status == 429) << status;
  }
  EXPECT_EQ(server.stop(), 0) << server.err();
}

}  // namespace
}  // namespace archdb
