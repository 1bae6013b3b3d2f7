#include "client/url.h"

#include "dhtgate/error.h"

#include <cppunit/extensions/HelperMacros.h>

using dhtgate::http::detail::parseUrl;
using dhtgate::http::detail::Url;

class ClientUrlTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientUrlTest);
    CPPUNIT_TEST(testReferenceCases);
    CPPUNIT_TEST(testIpv6);
    CPPUNIT_TEST(testHostHeader);
    CPPUNIT_TEST(testBadUrls);
    CPPUNIT_TEST_SUITE_END();

    static Url parse(const std::string& text) {
        Url u;
        auto ec = parseUrl(text, u);
        CPPUNIT_ASSERT_MESSAGE(text, !ec);
        return u;
    }

public:
    // The URL cases of spec §12's HTTP test table.
    void testReferenceCases() {
        auto u = parse("http://google.com/");
        CPPUNIT_ASSERT_EQUAL(std::string("http"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(std::string("google.com"), u.host);
        CPPUNIT_ASSERT_EQUAL(std::string("/"), u.target);
        CPPUNIT_ASSERT_EQUAL(80, int(u.port));

        u = parse("https://jami.net/");
        CPPUNIT_ASSERT_EQUAL(std::string("https"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(443, int(u.port));
        CPPUNIT_ASSERT(u.tls());

        u = parse("google.com");
        CPPUNIT_ASSERT_EQUAL(std::string("http"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(std::string("google.com"), u.host);
        CPPUNIT_ASSERT_EQUAL(std::string("/"), u.target);

        u = parse("https://www.google.com:666/going/under");
        CPPUNIT_ASSERT_EQUAL(666, int(u.port));
        CPPUNIT_ASSERT_EQUAL(std::string("/going/under"), u.target);

        u = parse("http://google.com/?key=1");
        CPPUNIT_ASSERT_EQUAL(std::string("/?key=1"), u.target);
        CPPUNIT_ASSERT_EQUAL(std::string("key=1"), u.query);

        u = parse("http://google.com/?key=1#some-important-id");
        CPPUNIT_ASSERT_EQUAL(std::string("/?key=1"), u.target);
        CPPUNIT_ASSERT_EQUAL(std::string("key=1"), u.query);

        u = parse("http://172.217.13.132/");
        CPPUNIT_ASSERT_EQUAL(std::string("172.217.13.132"), u.host);
        CPPUNIT_ASSERT(u.isIpLiteral());
        u = parse("172.217.13.132");
        CPPUNIT_ASSERT_EQUAL(std::string("http"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(std::string("172.217.13.132"), u.host);
        u = parse("https://172.217.13.132:666/going/under");
        CPPUNIT_ASSERT_EQUAL(666, int(u.port));
        CPPUNIT_ASSERT_EQUAL(std::string("/going/under"), u.target);

        u = parse("HtTp://user:pass@example.org:8080/a/b?c=d#e");
        CPPUNIT_ASSERT_EQUAL(std::string("http"), u.scheme);
        CPPUNIT_ASSERT_EQUAL(std::string("example.org"), u.host);
        CPPUNIT_ASSERT_EQUAL(8080, int(u.port));
        CPPUNIT_ASSERT_EQUAL(std::string("/a/b?c=d"), u.target);
        u = parse("localhost:4222");
        CPPUNIT_ASSERT_EQUAL(std::string("localhost"), u.host);
        CPPUNIT_ASSERT_EQUAL(4222, int(u.port));
    }

    void testIpv6() {
        auto u = parse("http://[2607:f8b0:4006:804::2004]/");
        CPPUNIT_ASSERT_EQUAL(std::string("2607:f8b0:4006:804::2004"), u.host);
        CPPUNIT_ASSERT(u.ipv6Literal);
        CPPUNIT_ASSERT_EQUAL(80, int(u.port));
        u = parse("2607:f8b0:4006:804::2004");
        CPPUNIT_ASSERT_EQUAL(std::string("2607:f8b0:4006:804::2004"), u.host);
        u = parse("https://[2607:f8b0:4006:804::2004]:666/going/under");
        CPPUNIT_ASSERT_EQUAL(std::string("2607:f8b0:4006:804::2004"), u.host);
        CPPUNIT_ASSERT_EQUAL(666, int(u.port));
        CPPUNIT_ASSERT_EQUAL(std::string("/going/under"), u.target);
        u = parse("[::1]:8000");
        CPPUNIT_ASSERT_EQUAL(std::string("::1"), u.host);
        CPPUNIT_ASSERT_EQUAL(8000, int(u.port));
    }

    void testHostHeader() {
        CPPUNIT_ASSERT_EQUAL(std::string("example.org"), parse("http://example.org/").hostHeader());
        CPPUNIT_ASSERT_EQUAL(std::string("example.org:81"), parse("http://example.org:81/").hostHeader());
        CPPUNIT_ASSERT_EQUAL(std::string("[::1]:81"), parse("http://[::1]:81/").hostHeader());
        CPPUNIT_ASSERT_EQUAL(std::string("example.org"), parse("https://example.org:443").hostHeader());
        CPPUNIT_ASSERT(parse("http://a:1/") .authority() != parse("https://a:1/").authority());
    }

    void testBadUrls() {
        for (const char* bad : {"", "   ", "ftp://example.org/", "http://", "http:///path", "http://host:/",
                                "http://host:0/", "http://host:65536/", "http://host:12ab/", "http://[::1/",
                                "http://[not-v6]:80/", "http://[::1]x/", "http://ho st/", "http://h\xc3\xa9/",
                                "http://a:b:c/", "http://host:99999999999/"}) {
            Url u;
            CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, make_error_code(dhtgate::errc::invalid_url), parseUrl(bad, u));
        }
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientUrlTest);
