#include "state/state_saver.h"

#include "dhtgate/error.h"
#include "support/io_thread.h"
#include "support/temp_dir.h"

#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>

using namespace dhtgate;
using namespace dhtgate::state;
using namespace std::chrono_literals;

namespace {

// A state whose size tells which snapshot was saved.
PersistedState stateWithPuts(int n) {
    PersistedState s;
    for (int i = 0; i < n; ++i) {
        auto v = std::make_shared<dht::Value>(dht::Blob {1, 2, 3});
        v->id = static_cast<dht::Value::Id>(i + 1);
        s.puts.push_back({dht::InfoHash::get("k"), v, unixNow() + 3600, "", "", push::Platform::none, "", ""});
    }
    return s;
}

} // namespace

class StateSaverTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StateSaverTest);
    CPPUNIT_TEST(testCoalescesBursts);
    CPPUNIT_TEST(testFlushSavesNow);
    CPPUNIT_TEST(testFailedSaveIsRetried);
    CPPUNIT_TEST_SUITE_END();

public:
    void testCoalescesBursts() {
        test::TempDir dir;
        test::IoThread io;
        test::Counter saved;
        int generation = 0; // io thread only
        std::size_t snapshots = 0;
        std::thread::id snapshotThread;
        StateSaver::Options options;
        options.window = 100ms;
        options.on_saved = [&](std::error_code, const std::string&) { saved.bump(); };
        auto saver = io.run([&] {
            return StateSaver::create(io.io(), dir.file("state"), [&] {
                ++snapshots;
                snapshotThread = std::this_thread::get_id();
                return stateWithPuts(generation);
            }, options);
        });

        // 100 changes in one handler.
        io.run([&] {
            for (int i = 0; i < 100; ++i) {
                ++generation;
                saver->markDirty();
            }
        });
        CPPUNIT_ASSERT(saved.waitFor(1));
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), saver->writes());
        CPPUNIT_ASSERT(snapshotThread == io.id());
        CPPUNIT_ASSERT_EQUAL(std::size_t(100), load(dir.file("state"), unixNow()).state.puts.size());

        // 100 changes in 100 separate handlers: one or two saves (the window may split them).
        for (int i = 0; i < 100; ++i)
            asio::post(io.io(), [&] {
                ++generation;
                saver->markDirty();
            });
        CPPUNIT_ASSERT(saved.waitFor(2));
        for (;;) { // until nothing is armed or in flight (a stalled machine may split the burst)
            auto [idle, seen] = io.run([&] { return std::make_pair(saver->idle(), saved.value()); });
            if (idle)
                break;
            CPPUNIT_ASSERT(saved.waitFor(seen + 1));
        }
        std::size_t writes = saver->writes();
        CPPUNIT_ASSERT(writes >= 2 && writes <= 3);
        CPPUNIT_ASSERT_EQUAL(writes, snapshots);
        CPPUNIT_ASSERT_EQUAL(std::size_t(200), load(dir.file("state"), unixNow()).state.puts.size());
        CPPUNIT_ASSERT_EQUAL(std::size_t(0), saver->failures());
        io.run([&] { saver.reset(); });
        CPPUNIT_ASSERT(dir.list() == std::vector<std::string> {"state"});
    }

    void testFlushSavesNow() {
        test::TempDir dir;
        test::IoThread io;
        int generation = 0;
        StateSaver::Options options;
        options.window = std::chrono::hours(1);
        auto saver = io.run([&] {
            return StateSaver::create(io.io(), dir.file("state"), [&] { return stateWithPuts(generation); }, options);
        });
        auto ec = io.run([&] {
            generation = 3;
            saver->markDirty();
            return saver->flush();
        });
        CPPUNIT_ASSERT(!ec);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), saver->writes());
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), load(dir.file("state"), unixNow()).state.puts.size());
        // The flush cancelled the armed window: destroying the saver writes nothing more.
        io.run([&] { saver.reset(); });
        io.stop();
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), load(dir.file("state"), unixNow()).state.puts.size());
    }

    void testFailedSaveIsRetried() {
        test::TempDir dir;
        test::IoThread io;
        test::Counter attempts;
        std::vector<std::error_code> results; // io thread
        std::string firstMessage;
        StateSaver::Options options;
        options.window = 10ms;
        options.retry_delay = 20ms;
        std::string path = dir.file("sub/state");
        options.on_saved = [&](std::error_code ec, const std::string& message) {
            if (results.empty())
                firstMessage = message;
            results.push_back(ec);
            // The directory appears after the first failure: the retry must then succeed.
            std::filesystem::create_directories(dir.file("sub"));
            attempts.bump();
        };
        auto saver = io.run([&] {
            return StateSaver::create(io.io(), path, [] { return stateWithPuts(1); }, options);
        });
        io.run([&] { saver->markDirty(); });
        CPPUNIT_ASSERT(attempts.waitFor(2));
        io.run([&] {
            CPPUNIT_ASSERT(results[0] == errc::state_io);
            CPPUNIT_ASSERT(firstMessage.find(path) != std::string::npos);
            CPPUNIT_ASSERT(!results[1]);
            saver.reset();
        });
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), load(path, unixNow()).state.puts.size());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(StateSaverTest);
