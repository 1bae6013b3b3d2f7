// The daemon's identity options: a missing, corrupt or mismatched identity is a clear start-up
// error (exit status 1, a message naming the file), never a crash; --https-port without
// --identity is refused.
#include "support/temp_dir.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/crypto.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Outcome {
    int status {-1}; ///< exit status, -1 on timeout or signal
    std::string err; ///< stderr
};

/// Runs `dhtgate ARGS...` (which must exit on its own) and collects its exit status and stderr.
Outcome runDaemon(std::vector<std::string> args) {
    args.insert(args.begin(), std::string(DHTGATE_BINARY_DIR) + "/dhtgate");
    int fds[2];
    if (::pipe(fds) != 0)
        return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    Outcome out;
    char buf[512];
    bool eof = false;
    while (pid > 0) {
        pollfd p {fds[0], POLLIN, 0};
        if (::poll(&p, 1, 15000) <= 0)
            break;
        const auto n = ::read(fds[0], buf, sizeof(buf));
        if (n <= 0) {
            eof = true;
            break;
        }
        out.err.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (pid > 0) {
        if (!eof)
            ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        if (eof && WIFEXITED(status))
            out.status = WEXITSTATUS(status);
    }
    return out;
}

void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

} // namespace

class HttpsDaemonTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HttpsDaemonTest);
    CPPUNIT_TEST(testMissingIdentity);
    CPPUNIT_TEST(testCorruptIdentity);
    CPPUNIT_TEST(testMismatchedIdentity);
    CPPUNIT_TEST(testHttpsPortNeedsIdentity);
    CPPUNIT_TEST(testHelpDocumentsOptions);
    CPPUNIT_TEST_SUITE_END();

public:
    void testMissingIdentity() {
        dhtgate::test::TempDir dir;
        const auto r = runDaemon({"--identity", dir.path() + "/none", "--https-port", "0", "--http-port", "0",
                                  "--dht-port", "0"});
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT(r.err.find("none.pem") != std::string::npos);
        CPPUNIT_ASSERT(r.err.find("missing") != std::string::npos);
    }

    void testCorruptIdentity() {
        dhtgate::test::TempDir dir;
        const auto prefix = dir.path() + "/id";
        write(prefix + ".pem", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n");
        write(prefix + ".crt", "garbage");
        const auto r = runDaemon({"--identity", prefix, "--https-port", "0", "--http-port", "0", "--dht-port", "0"});
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT(r.err.find("corrupt") != std::string::npos);
    }

    void testMismatchedIdentity() {
        dhtgate::test::TempDir dir;
        auto a = dht::crypto::generateEcIdentity("a");
        auto b = dht::crypto::generateEcIdentity("b");
        dht::crypto::saveIdentity({a.first, b.second}, dir.path() + "/id");
        const auto r = runDaemon({"--identity", dir.path() + "/id", "--https-port", "0", "--http-port", "0",
                                  "--dht-port", "0"});
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT(r.err.find("does not match") != std::string::npos);
    }

    void testHttpsPortNeedsIdentity() {
        const auto r = runDaemon({"--https-port", "0", "--http-port", "0", "--dht-port", "0"});
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT(r.err.find("--identity") != std::string::npos);
    }

    void testHelpDocumentsOptions() {
        // --help goes to stdout: run it through a shell-free check of the exit status only, and
        // the option table through a bad option (usage hint on stderr).
        const auto r = runDaemon({"--identity-create=yes"});
        CPPUNIT_ASSERT_EQUAL(2, r.status);
        CPPUNIT_ASSERT(r.err.find("takes no value") != std::string::npos);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(HttpsDaemonTest);
