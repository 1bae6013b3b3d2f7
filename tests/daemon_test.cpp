// The dhtgate daemon as a process: prints its URL, serves, and on SIGTERM ends listen streams with
// their final chunk and exits 0.
#include "support/dht_node.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

extern char** environ;

using dhtgate::test::RawHttpClient;

namespace {

/// Runs `dhtgate ARGS...` with stdout on a pipe.
class Daemon {
public:
    explicit Daemon(std::vector<std::string> args) {
        args.insert(args.begin(), std::string(DHTGATE_BINARY_DIR) + "/dhtgate");
        int fds[2];
        if (::pipe(fds) != 0)
            return;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0)
            pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
        ::close(fds[1]);
        out_ = fds[0];
    }
    ~Daemon() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (out_ >= 0)
            ::close(out_);
    }
    bool started() const { return pid_ > 0; }
    /// The first stdout line, waiting up to `ms`.
    std::string firstLine(int ms = 10000) {
        std::string line;
        char c;
        while (line.find('\n') == std::string::npos) {
            pollfd p {out_, POLLIN, 0};
            if (::poll(&p, 1, ms) <= 0 || ::read(out_, &c, 1) != 1)
                break;
            line += c;
        }
        return line;
    }
    /// Sends `sig` and waits for the exit status (-1 on timeout or abnormal exit).
    int signalAndWait(int sig) {
        ::kill(pid_, sig);
        // The process closes its stdout when it exits: wait for that EOF, then reap it.
        char buf[256];
        for (;;) {
            pollfd p {out_, POLLIN, 0};
            if (::poll(&p, 1, 15000) <= 0)
                return -1;
            if (::read(out_, buf, sizeof(buf)) <= 0)
                break;
        }
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

private:
    pid_t pid_ {-1};
    int out_ {-1};
};

} // namespace

class DaemonTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(DaemonTest);
    CPPUNIT_TEST(testServesAndStopsCleanly);
    CPPUNIT_TEST(testDhtThreadServesAndStopsCleanly);
    CPPUNIT_TEST(testBootstrapByName);
    CPPUNIT_TEST(testBadOptionExitsNonZero);
    CPPUNIT_TEST_SUITE_END();

public:
    static std::uint16_t httpPort(const std::string& line) {
        const auto at = line.find("http://127.0.0.1:");
        CPPUNIT_ASSERT_MESSAGE(line, at != std::string::npos);
        return static_cast<std::uint16_t>(std::stoi(line.substr(at + 17)));
    }

    static void serveAndStop(std::vector<std::string> args) {
        Daemon d(std::move(args));
        CPPUNIT_ASSERT(d.started());
        const auto port = httpPort(d.firstLine());
        auto info = RawHttpClient::exchange(port, RawHttpClient::request("GET", "/"));
        CPPUNIT_ASSERT(info);
        CPPUNIT_ASSERT_EQUAL(200, info->status);

        RawHttpClient listen(port);
        listen.send(RawHttpClient::request("GET", "/key/daemon/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);
        auto put = RawHttpClient::exchange(port, RawHttpClient::request("POST", "/key/daemon", R"({"data":"aGk=","type":0})"));
        CPPUNIT_ASSERT_EQUAL(200, put->status);
        CPPUNIT_ASSERT(listen.readLine());
        CPPUNIT_ASSERT_EQUAL(0, d.signalAndWait(SIGTERM));
        CPPUNIT_ASSERT(!listen.readLine());
        CPPUNIT_ASSERT(listen.streamEnded()); // the final chunk arrived before the exit
    }

    void testServesAndStopsCleanly() {
        // The default: the DHT node driven on the HTTP io thread.
        serveAndStop({"--dht-port", "0", "--http-port", "0", "--log-level", "off"});
    }

    void testDhtThreadServesAndStopsCleanly() {
        serveAndStop({"--dht-port", "0", "--http-port", "0", "--log-level", "off", "--dht-thread"});
    }

    void testBootstrapByName() {
        // "localhost" goes through the asynchronous resolver; the daemon's node joins the peer,
        // which then finds a value put through the daemon.
        dhtgate::test::TestDhtNode peer;
        Daemon d({"--dht-port", "0", "--http-port", "0", "--log-level", "off", "--bootstrap",
                  "localhost:" + std::to_string(peer.port())});
        CPPUNIT_ASSERT(d.started());
        const auto port = httpPort(d.firstLine());
        CPPUNIT_ASSERT(peer.waitConnected());
        CPPUNIT_ASSERT(dhtgate::test::waitUntil([&] {
            auto info = RawHttpClient::exchange(port, RawHttpClient::request("GET", "/"));
            return info && dhtgate::test::jsonNumber(info->body, "good").value_or(0) >= 1;
        }));
        auto put = RawHttpClient::exchange(port, RawHttpClient::request("POST", "/key/daemon", R"({"data":"aGk=","type":0})"));
        CPPUNIT_ASSERT(put);
        CPPUNIT_ASSERT_EQUAL(200, put->status);
        auto done = std::make_shared<std::promise<std::size_t>>();
        auto count = std::make_shared<std::size_t>(0);
        peer->get(dht::InfoHash::get("daemon"), [count](const std::vector<std::shared_ptr<dht::Value>>& vs) {
            *count += vs.size();
            return true;
        }, [done, count](bool) { done->set_value(*count); });
        auto f = done->get_future();
        CPPUNIT_ASSERT(dhtgate::test::ready(f));
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), f.get());
        CPPUNIT_ASSERT_EQUAL(0, d.signalAndWait(SIGTERM));
    }

    void testBadOptionExitsNonZero() {
        Daemon d({"--no-such-option"});
        CPPUNIT_ASSERT(d.started());
        CPPUNIT_ASSERT_EQUAL(2, d.signalAndWait(0));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(DaemonTest);
