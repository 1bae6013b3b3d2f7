// Crash consistency of the state file: a process saving in a loop is killed with SIGKILL at an
// arbitrary moment; the file must still load, with at least the last acknowledged save.
#include "state/state_store.h"

#include "support/temp_dir.h"

#include <cppunit/extensions/HelperMacros.h>

#include <fstream>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dhtgate;
using namespace dhtgate::state;

namespace {

PersistedState generation(int n) {
    PersistedState s;
    // About 150 KB, so that kills often land in the middle of a write.
    for (int i = 0; i < 1000; ++i) {
        auto v = std::make_shared<dht::Value>(dht::Blob(100, static_cast<std::uint8_t>(i)));
        v->id = static_cast<dht::Value::Id>(i + 1);
        s.puts.push_back({dht::InfoHash::get(std::to_string(i)), v, 4000000000LL, "c", "s", push::Platform::android,
                          "tok", ""});
    }
    s.listeners.push_back({"tok", dht::InfoHash::get("k"), "gen", 4000000000LL, std::to_string(n), push::Platform::ios, ""});
    return s;
}

int generationOf(const PersistedState& s) { return s.listeners.empty() ? -1 : std::stoi(s.listeners[0].session_id); }

// Reads one acknowledged generation from the child, or -1 on timeout/EOF.
int readAck(int fd) {
    pollfd p {fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) != 1)
        return -1;
    int n = -1;
    return ::read(fd, &n, sizeof n) == sizeof n ? n : -1;
}

} // namespace

class StateCrashTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StateCrashTest);
    CPPUNIT_TEST(testKillDuringSavesLeavesALoadableFile);
    CPPUNIT_TEST(testStaleTemporariesRemovedOnLoad);
    CPPUNIT_TEST_SUITE_END();

public:
    void testKillDuringSavesLeavesALoadableFile() {
        test::TempDir dir;
        std::string path = dir.file("state");
        // Encoded before forking: the child only writes files (no threads, no allocation-heavy work).
        std::vector<std::string> encoded;
        for (int n = 0; n < 4; ++n)
            encoded.push_back(encode(generation(n)));
        for (int round = 0; round < 3; ++round) {
            int fds[2];
            CPPUNIT_ASSERT_EQUAL(0, ::pipe(fds));
            pid_t child = ::fork();
            CPPUNIT_ASSERT(child >= 0);
            if (child == 0) {
                ::close(fds[0]);
                for (int n = 0;; ++n) {
                    if (writeFileAtomically(path, encoded[n % encoded.size()]))
                        ::_exit(1);
                    int ack = n % static_cast<int>(encoded.size());
                    if (::write(fds[1], &ack, sizeof ack) != sizeof ack)
                        ::_exit(2);
                }
            }
            ::close(fds[1]);
            int last = -1;
            // Let it complete a few saves, then kill it while it is most likely writing.
            for (int i = 0; i < 5 + round * 3; ++i) {
                int ack = readAck(fds[0]);
                CPPUNIT_ASSERT(ack >= 0);
                last = ack;
            }
            ::kill(child, SIGKILL);
            int status = 0;
            ::waitpid(child, &status, 0);
            CPPUNIT_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            // Saves acknowledged after `last` (before the kill) may also have landed.
            std::vector<int> seen {last};
            for (int ack; (ack = readAck(fds[0])) >= 0;)
                seen.push_back(ack);
            ::close(fds[0]);

            auto out = loadOrMoveAside(path, 0);
            CPPUNIT_ASSERT_MESSAGE(out.message, !out.error);
            CPPUNIT_ASSERT_EQUAL(std::size_t(1000), out.state.puts.size());
            int got = generationOf(out.state);
            // The file holds the last acknowledged save or the one after it (written, not yet acknowledged).
            int next = (seen.back() + 1) % static_cast<int>(encoded.size());
            CPPUNIT_ASSERT_MESSAGE(std::to_string(got), got == seen.back() || got == next);
            CPPUNIT_ASSERT(dir.list() == std::vector<std::string> {"state"}); // temporaries cleaned
        }
    }

    void testStaleTemporariesRemovedOnLoad() {
        test::TempDir dir;
        std::string path = dir.file("state");
        std::ofstream(dir.file("state.tmp.AbC123")) << "partial";
        std::ofstream(dir.file("state.tmp.toolong1")) << "not ours";
        std::ofstream(dir.file("other.tmp.AbC123")) << "not ours";
        CPPUNIT_ASSERT(!save(path, generation(1)));
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), removeStaleTemporaries(path));
        CPPUNIT_ASSERT((dir.list() == std::vector<std::string> {"other.tmp.AbC123", "state", "state.tmp.toolong1"}));
        CPPUNIT_ASSERT_EQUAL(1, generationOf(loadOrMoveAside(path, 0).state));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(StateCrashTest);
