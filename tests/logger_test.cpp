#include "dhtgate/logger.h"
#include "dhtgate/error.h"

#include <cppunit/extensions/HelperMacros.h>

#include <string>
#include <vector>

class LoggerTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(LoggerTest);
    CPPUNIT_TEST(testThreshold);
    CPPUNIT_TEST(testDefaultDiscards);
    CPPUNIT_TEST(testParseLevel);
    CPPUNIT_TEST(testErrorCategory);
    CPPUNIT_TEST_SUITE_END();

public:
    void testThreshold() {
        std::vector<std::string> lines;
        dhtgate::Logger log(dhtgate::LogLevel::info, [&](dhtgate::LogLevel, std::string_view m) { lines.emplace_back(m); });
        log.debug("hidden {}", 1);
        log.info("[server] [conn:{}] open", 7);
        log.error("{}+{}={}", 1, 2, 3);
        CPPUNIT_ASSERT_EQUAL(size_t(2), lines.size());
        CPPUNIT_ASSERT_EQUAL(std::string("[server] [conn:7] open"), lines[0]);
        CPPUNIT_ASSERT_EQUAL(std::string("1+2=3"), lines[1]);
    }
    void testDefaultDiscards() {
        dhtgate::Logger log;
        CPPUNIT_ASSERT(!log.enabled(dhtgate::LogLevel::error));
        log.error("nothing {}", 1); // must not crash
    }
    void testParseLevel() {
        dhtgate::LogLevel l = dhtgate::LogLevel::off;
        CPPUNIT_ASSERT(dhtgate::parseLogLevel("debug", l));
        CPPUNIT_ASSERT(l == dhtgate::LogLevel::debug);
        CPPUNIT_ASSERT(!dhtgate::parseLogLevel("loud", l));
        CPPUNIT_ASSERT(l == dhtgate::LogLevel::debug);
    }
    void testErrorCategory() {
        std::error_code ec = dhtgate::errc::bind_failed;
        CPPUNIT_ASSERT_EQUAL(std::string("dhtgate"), std::string(ec.category().name()));
        CPPUNIT_ASSERT(ec.message().find("bind") != std::string::npos);
        CPPUNIT_ASSERT(ec != dhtgate::errc::cancelled);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(LoggerTest);
