#include "daemon/options.h"

#include <cppunit/extensions/HelperMacros.h>

using dhtgate::daemon::parseOptions;

class DaemonOptionsTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(DaemonOptionsTest);
    CPPUNIT_TEST(testDefaults);
    CPPUNIT_TEST(testAllOptions);
    CPPUNIT_TEST(testBadOptions);
    CPPUNIT_TEST(testHelpListsEveryOption);
    CPPUNIT_TEST_SUITE_END();

    static std::optional<dhtgate::daemon::Options> parse(std::vector<const char*> args, std::string& err) {
        args.insert(args.begin(), "dhtgate");
        return parseOptions(static_cast<int>(args.size()), args.data(), err);
    }

public:
    void testDefaults() {
        std::string err;
        auto o = parse({}, err);
        CPPUNIT_ASSERT(o);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(4222), o->dht_port);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(8080), o->server.port);
        CPPUNIT_ASSERT_EQUAL(std::string("127.0.0.1"), o->server.address);
        CPPUNIT_ASSERT(o->bootstrap.empty());
        CPPUNIT_ASSERT(o->log_level == dhtgate::LogLevel::info);
        CPPUNIT_ASSERT(!o->dht_thread); // the DHT is driven on the io thread by default
    }
    void testAllOptions() {
        std::string err;
        auto o = parse({"--dht-port", "0", "--bootstrap", "bootstrap.jami.net:4222", "--bootstrap=[::1]:4000",
                        "--http-port=0", "--bind", "::", "--threads", "4", "--log-level", "debug", "--max-pipelined",
                        "3", "--concurrent-accepts", "2", "--dht-thread"},
                       err);
        CPPUNIT_ASSERT_MESSAGE(err, o);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(0), o->dht_port);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), o->bootstrap.size());
        CPPUNIT_ASSERT_EQUAL(std::string("[::1]:4000"), o->bootstrap[1]);
        CPPUNIT_ASSERT_EQUAL(std::string("::"), o->server.address);
        CPPUNIT_ASSERT_EQUAL(4u, o->server.threads);
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), o->server.max_pipelined_requests);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), o->server.concurrent_accepts);
        CPPUNIT_ASSERT(o->log_level == dhtgate::LogLevel::debug);
        CPPUNIT_ASSERT(o->dht_thread);
        std::string host, port;
        CPPUNIT_ASSERT(dhtgate::daemon::splitHostPort("[::1]:4000", host, port));
        CPPUNIT_ASSERT_EQUAL(std::string("::1"), host);
        CPPUNIT_ASSERT_EQUAL(std::string("4000"), port);
    }
    void testBadOptions() {
        for (auto args : std::vector<std::vector<const char*>> {{"--nope"},
                                                                 {"--dht-thread=yes"},
                                                                 {"--http-port"},
                                                                 {"--http-port", "70000"},
                                                                 {"--dht-port", "x"},
                                                                 {"--bootstrap", "hostonly"},
                                                                 {"--threads", "0"},
                                                                 {"--log-level", "loud"},
                                                                 {"--help=yes"},
                                                                 {"positional"}}) {
            std::string err;
            CPPUNIT_ASSERT(!parse(args, err));
            CPPUNIT_ASSERT(!err.empty());
        }
    }
    void testHelpListsEveryOption() {
        const auto text = dhtgate::daemon::usage("dhtgate");
        for (const char* o : {"--dht-port", "--bootstrap", "--http-port", "--bind", "--threads", "--log-level",
                              "--max-pipelined", "--concurrent-accepts", "--dht-thread", "--help"})
            CPPUNIT_ASSERT_MESSAGE(o, text.find(o) != std::string::npos);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(DaemonOptionsTest);
