// Persistence of permanent puts and push listeners (--state-file): restart in-process, crash of the
// real daemon (kill -9), corrupt and expired files. Pushes go to a loopback HttpReceiver.
#include "dhtgate/proxy_server.h"

#include "state/state_store.h"
#include "support/dht_node.h"
#include "support/http_receiver.h"
#include "support/push_capture.h"
#include "support/raw_http_client.h"
#include "support/temp_dir.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>

#include <csignal>
#include <fstream>
#include <mutex>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

using namespace dhtgate;
using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {

const std::string kKey = "ee00de17b4076115e11362ff32d27ddc852242fd";
const std::string kPermanent =
    R"({"data":"cHVzaA==","id":"0","permanent":{"client_id":"client-A","key":"device-token-1","platform":"android",)"
    R"("session_id":"sess1","topic":""},"type":0})";

/// Collects log lines (any thread).
class LogCapture {
public:
    Logger logger() {
        return Logger(LogLevel::info, [this](LogLevel, std::string_view line) {
            std::lock_guard<std::mutex> lock(mutex_);
            text_ += std::string(line) + "\n";
        });
    }
    std::string text() {
        std::lock_guard<std::mutex> lock(mutex_);
        return text_;
    }

private:
    std::mutex mutex_; // guards text_
    std::string text_;
};

ServerConfig stateConfig(const std::string& path, const std::string& pushServer) {
    auto c = TestProxy::testConfig();
    c.state_file = path;
    c.push_server = pushServer;
    c.state_save_window = 100ms;
    return c;
}

std::optional<RawHttpClient::Response> call(std::uint16_t port, const std::string& method, const std::string& path,
                                            const std::string& body = {}) {
    return RawHttpClient::exchange(port, RawHttpClient::request(method, path, body));
}

std::optional<long long> stat(std::uint16_t port, const std::string& name) {
    auto r = call(port, "GET", "/node/stats");
    return r ? jsonNumber(r->body, name) : std::nullopt;
}

/// True once `path` holds a valid state with `puts` puts and `listeners` listeners.
bool fileHolds(const std::string& path, std::size_t puts, std::size_t listeners) {
    return waitUntil([&] {
        auto r = state::load(path, state::unixNow());
        return r && r.state.puts.size() == puts && r.state.listeners.size() == listeners;
    });
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

class ServerStateTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerStateTest);
    CPPUNIT_TEST(testRestartKeepsPutAndSubscription);
    CPPUNIT_TEST(testSavedWhileRunning);
    CPPUNIT_TEST(testDaemonKilled);
    CPPUNIT_TEST(testCorruptFileMovedAside);
    CPPUNIT_TEST(testExpiredEntriesDropped);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRestartKeepsPutAndSubscription() {
        TempDir dir;
        HttpReceiver gorush;
        const auto path = dir.file("state");
        std::string vid;
        {
            TestDhtNode node;
            ProxyServer server(node.runner(), stateConfig(path, gorush.url()));
            CPPUNIT_ASSERT(!server.start());
            auto r = call(server.port(), "POST", "/key/" + kKey, kPermanent);
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            vid = jsonString(r->body, "id").value_or("");
            r = call(server.port(), "SUBSCRIBE", "/key/" + kKey, subscribeBody("ios-token-9", "ios", "client-B", "sessB"));
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            server.stop(); // saves
        }
        CPPUNIT_ASSERT(fileHolds(path, 1, 1));
        const auto before = gorush.requests().size();

        // A fresh node and server: the permanent put is re-put, the listener re-listens.
        TestDhtNode node;
        ProxyServer server(node.runner(), stateConfig(path, gorush.url()));
        CPPUNIT_ASSERT(!server.start());
        CPPUNIT_ASSERT(waitUntil([&] {
            auto r = call(server.port(), "GET", "/key/" + kKey);
            return r && r->body.find("\"id\":\"" + vid + "\"") != std::string::npos;
        }));
        CPPUNIT_ASSERT_EQUAL(1LL, stat(server.port(), "totalPermanentPuts").value_or(-1));
        CPPUNIT_ASSERT_EQUAL(1LL, stat(server.port(), "pushListenersCount").value_or(-1));
        // The restored listener delivers: the re-put value, then a new one.
        auto r = call(server.port(), "POST", "/key/" + kKey, R"({"data":"bmV3","id":"77","type":0})");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        auto p = waitForPush(gorush, [&](const CapturedPush& p) {
            return p.token == "ios-token-9" && p.get("ids").find("77") != std::string::npos;
        });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("sessB"), p->get("s"));
        CPPUNIT_ASSERT(gorush.requests().size() > before);
    }

    void testSavedWhileRunning() {
        // Without stop(): the coalescing saver has written the changes within its window.
        TempDir dir;
        HttpReceiver gorush;
        const auto path = dir.file("state");
        TestDhtNode node;
        ProxyServer server(node.runner(), stateConfig(path, gorush.url()));
        CPPUNIT_ASSERT(!server.start());
        CPPUNIT_ASSERT_EQUAL(200, call(server.port(), "POST", "/key/" + kKey, kPermanent)->status);
        CPPUNIT_ASSERT(fileHolds(path, 1, 0));
        CPPUNIT_ASSERT_EQUAL(200, call(server.port(), "SUBSCRIBE", "/key/" + kKey,
                                       subscribeBody("tok", "android", "c", "s"))->status);
        CPPUNIT_ASSERT(fileHolds(path, 1, 1));
        auto loaded = state::load(path, state::unixNow());
        const auto& put = loaded.state.puts.at(0);
        CPPUNIT_ASSERT_EQUAL(std::string("device-token-1"), put.token);
        CPPUNIT_ASSERT_EQUAL(std::string("client-A"), put.client_id);
        CPPUNIT_ASSERT(put.platform == push::Platform::android);
        CPPUNIT_ASSERT(put.expiry > state::unixNow() + 23 * 3600);
        CPPUNIT_ASSERT_EQUAL(200, call(server.port(), "UNSUBSCRIBE", "/key/" + kKey, R"({"key":"tok","client_id":"c"})")->status);
        CPPUNIT_ASSERT(fileHolds(path, 1, 0));
    }

    void testDaemonKilled() {
        const std::string binary = std::string(DHTGATE_BINARY_DIR) + "/dhtgate";
        if (::access(binary.c_str(), X_OK) != 0) {
            std::fprintf(stderr, "[ServerStateTest] %s not built: kill -9 test skipped (build target dhtgate_daemon)\n",
                         binary.c_str());
            return;
        }
        TempDir dir;
        HttpReceiver gorush;
        const auto path = dir.file("state");
        const std::string pushServer = gorush.url(); // nothing may allocate between fork and exec
        int out[2];
        CPPUNIT_ASSERT_EQUAL(0, ::pipe(out));
        const pid_t pid = ::fork();
        CPPUNIT_ASSERT(pid >= 0);
        if (pid == 0) {
            ::dup2(out[1], 1);
            ::close(out[0]);
            ::execl(binary.c_str(), "dhtgate", "--dht-port", "0", "--http-port", "0", "--bind", "127.0.0.1",
                    "--log-level", "warn", "--state-file", path.c_str(), "--push-server", pushServer.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(out[1]);
        // "... serving http://127.0.0.1:PORT/ ..." on stdout.
        std::string banner;
        char c;
        while (banner.find('\n') == std::string::npos && ::read(out[0], &c, 1) == 1)
            banner += c;
        ::close(out[0]);
        const auto at = banner.find("127.0.0.1:");
        if (at == std::string::npos) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            CPPUNIT_FAIL("daemon did not start: " + banner);
        }
        const auto port = static_cast<std::uint16_t>(std::stoi(banner.substr(at + 10)));
        bool ok = call(port, "POST", "/key/" + kKey, kPermanent).value_or(RawHttpClient::Response {}).status == 200 &&
                  call(port, "SUBSCRIBE", "/key/" + kKey, subscribeBody("tok", "android", "c", "s"))
                          .value_or(RawHttpClient::Response {})
                          .status == 200;
        // Both changes are older than one coalescing window (1 s) once the saver wrote them.
        ok = ok && fileHolds(path, 1, 1);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        CPPUNIT_ASSERT(ok);
        // What the killed daemon left is a complete, valid file; a new server restores it.
        TestDhtNode node;
        ProxyServer server(node.runner(), stateConfig(path, gorush.url()));
        CPPUNIT_ASSERT(!server.start());
        CPPUNIT_ASSERT(waitUntil([&] { return stat(server.port(), "totalPermanentPuts") == 1; }));
        CPPUNIT_ASSERT_EQUAL(1LL, stat(server.port(), "pushListenersCount").value_or(-1));
    }

    void testCorruptFileMovedAside() {
        TempDir dir;
        HttpReceiver gorush;
        const auto path = dir.file("state");
        {
            std::ofstream f(path, std::ios::binary);
            f << "\x83\xa4garbage, not a state file";
        }
        LogCapture log;
        TestDhtNode node;
        ProxyServer server(node.runner(), stateConfig(path, gorush.url()), log.logger());
        CPPUNIT_ASSERT(!server.start());
        CPPUNIT_ASSERT_EQUAL(0LL, stat(server.port(), "totalPermanentPuts").value_or(-1));
        CPPUNIT_ASSERT(log.text().find("moved to") != std::string::npos);
        const auto names = dir.list();
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), names.size());
        CPPUNIT_ASSERT(names[0].rfind("state.corrupt-", 0) == 0);
        CPPUNIT_ASSERT_EQUAL(std::string("\x83\xa4garbage, not a state file"), readFile(dir.file(names[0])));
        // The gateway works and saves a fresh file; the moved one is untouched.
        CPPUNIT_ASSERT_EQUAL(200, call(server.port(), "POST", "/key/" + kKey, kPermanent)->status);
        CPPUNIT_ASSERT(fileHolds(path, 1, 0));
        CPPUNIT_ASSERT_EQUAL(std::string("\x83\xa4garbage, not a state file"), readFile(dir.file(names[0])));
    }

    void testExpiredEntriesDropped() {
        TempDir dir;
        HttpReceiver gorush;
        const auto path = dir.file("state");
        state::PersistedState st;
        auto value = std::make_shared<dht::Value>(dht::Blob {1, 2, 3});
        value->id = 5;
        st.puts.push_back({dht::InfoHash(kKey), value, state::unixNow() - 10, "c", "s", push::Platform::none, "", ""});
        auto live = std::make_shared<dht::Value>(dht::Blob {4, 5});
        live->id = 6;
        st.puts.push_back({dht::InfoHash(kKey), live, state::unixNow() + 3600, "", "", push::Platform::none, "", ""});
        st.listeners.push_back({"tok-old", dht::InfoHash(kKey), "c", state::unixNow() - 1, "s", push::Platform::android, ""});
        st.listeners.push_back({"tok-new", dht::InfoHash(kKey), "c", state::unixNow() + 3600, "s", push::Platform::android, ""});
        CPPUNIT_ASSERT(!state::save(path, st));
        TestDhtNode node;
        ProxyServer server(node.runner(), stateConfig(path, gorush.url()));
        CPPUNIT_ASSERT(!server.start());
        CPPUNIT_ASSERT(waitUntil([&] { return stat(server.port(), "totalPermanentPuts") == 1; }));
        CPPUNIT_ASSERT_EQUAL(1LL, stat(server.port(), "pushListenersCount").value_or(-1));
        // The restored listener is pushed the value that is stored at once...
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-new" && p.has("ids"); });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("6"), p->get("ids"));
        // ...and, with 1 h left (less than the 2 h margin), its "timeout" notice at once too.
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-new" && p.has("timeout"); }));
        for (const auto& q : capturedPushes(gorush))
            CPPUNIT_ASSERT(q.token != "tok-old");
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ServerStateTest);
