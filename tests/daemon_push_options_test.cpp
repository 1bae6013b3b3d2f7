// The daemon's push and state options (--push-server, --bundle-id, --push-none-platform,
// --state-file) and their --help lines.
#include "daemon/options.h"

#include <cppunit/extensions/HelperMacros.h>

using dhtgate::daemon::parseOptions;

class DaemonPushOptionsTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(DaemonPushOptionsTest);
    CPPUNIT_TEST(testPushAndStateOptions);
    CPPUNIT_TEST(testBadValues);
    CPPUNIT_TEST(testHelp);
    CPPUNIT_TEST_SUITE_END();

    static std::optional<dhtgate::daemon::Options> parse(std::vector<const char*> args, std::string& err) {
        args.insert(args.begin(), "dhtgate");
        return parseOptions(static_cast<int>(args.size()), args.data(), err);
    }

public:
    void testPushAndStateOptions() {
        std::string err;
        auto o = parse({}, err);
        CPPUNIT_ASSERT(o);
        CPPUNIT_ASSERT(o->server.push_server.empty());
        CPPUNIT_ASSERT(o->server.state_file.empty());
        CPPUNIT_ASSERT_EQUAL(std::string("ios"), o->server.push_none_platform);
        o = parse({"--push-server", "https://gorush.example:8088", "--bundle-id=com.example.app", "--push-none-platform",
                   "drop", "--state-file", "/var/lib/dhtgate/state"},
                  err);
        CPPUNIT_ASSERT_MESSAGE(err, o);
        CPPUNIT_ASSERT_EQUAL(std::string("https://gorush.example:8088"), o->server.push_server);
        CPPUNIT_ASSERT_EQUAL(std::string("com.example.app"), o->server.bundle_id);
        CPPUNIT_ASSERT_EQUAL(std::string("drop"), o->server.push_none_platform);
        CPPUNIT_ASSERT_EQUAL(std::string("/var/lib/dhtgate/state"), o->server.state_file);
    }

    void testBadValues() {
        std::string err;
        CPPUNIT_ASSERT(!parse({"--push-none-platform", "windows"}, err));
        CPPUNIT_ASSERT(err.find("push-none-platform") != std::string::npos);
        CPPUNIT_ASSERT(!parse({"--push-server="}, err));
        CPPUNIT_ASSERT(!parse({"--state-file"}, err));
    }

    void testHelp() {
        const auto text = dhtgate::daemon::usage("dhtgate");
        for (const char* o : {"--push-server URL", "--bundle-id ID", "--push-none-platform P", "--state-file PATH"})
            CPPUNIT_ASSERT_MESSAGE(o, text.find(o) != std::string::npos);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DaemonPushOptionsTest);
