#include "client/response_parser.h"

#include "dhtgate/error.h"

#include <cppunit/extensions/HelperMacros.h>

#include <random>

using dhtgate::errc;
using dhtgate::http::detail::ResponseParser;

namespace {

struct Parsed {
    std::error_code ec;
    bool complete {false};
    unsigned status {0};
    std::string body;
};

/// Feeds `wire` in pieces of at most `step` bytes, then EOF when `eof`.
Parsed run(const std::string& wire, std::size_t step, bool eof, std::size_t maxBody = 0) {
    ResponseParser p;
    p.setMaxBodySize(maxBody);
    Parsed out;
    p.onBody = [&](std::string_view d) {
        out.body.append(d);
        return true;
    };
    for (std::size_t pos = 0; pos < wire.size() && !out.ec && !p.complete(); pos += step) {
        std::size_t consumed = 0;
        out.ec = p.feed(wire.data() + pos, std::min(step, wire.size() - pos), consumed);
    }
    if (eof && !out.ec && !p.complete())
        out.ec = p.feedEof();
    out.complete = p.complete();
    out.status = p.status();
    return out;
}

const std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"
                            "5\r\nhello\r\n1A\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\n\r\n";

} // namespace

class ClientResponseParserTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientResponseParserTest);
    CPPUNIT_TEST(testFraming);
    CPPUNIT_TEST(testInterimAndHeaders);
    CPPUNIT_TEST(testLimits);
    CPPUNIT_TEST(testTruncated);
    CPPUNIT_TEST(testFuzz);
    CPPUNIT_TEST_SUITE_END();

public:
    void testFraming() {
        for (std::size_t step : {1, 3, 7, 1000}) {
            auto r = run("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", step, false);
            CPPUNIT_ASSERT(!r.ec && r.complete);
            CPPUNIT_ASSERT_EQUAL(std::string("hello"), r.body);
            r = run(chunked, step, false);
            CPPUNIT_ASSERT(!r.ec && r.complete);
            CPPUNIT_ASSERT_EQUAL(std::string("hello abcdefghijklmnopqrstuvwxy"), r.body);
            r = run("HTTP/1.1 200 OK\r\n\r\nuntil the end", step, true);
            CPPUNIT_ASSERT(!r.ec && r.complete);
            CPPUNIT_ASSERT_EQUAL(std::string("until the end"), r.body);
        }
        // Bytes after a complete message are not consumed.
        ResponseParser p;
        std::string two = "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n";
        std::size_t consumed = 0;
        CPPUNIT_ASSERT(!p.feed(two.data(), two.size(), consumed));
        CPPUNIT_ASSERT(p.complete());
        CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 204 No Content\r\n\r\n").size(), consumed);
        CPPUNIT_ASSERT(p.keepAlive());
    }

    void testInterimAndHeaders() {
        ResponseParser p;
        bool headers = false;
        p.onHeaders = [&] { return headers = true; };
        CPPUNIT_ASSERT(!p.feed("HTTP/1.1 100 Continue\r\n\r\n"));
        CPPUNIT_ASSERT(!headers && !p.complete());
        CPPUNIT_ASSERT(!p.feed("HTTP/1.1 404 Not Found\r\nConnection: close\r\nA: x\r\nA: y\r\nContent-Length: 0\r\n\r\n"));
        CPPUNIT_ASSERT(headers && p.complete());
        CPPUNIT_ASSERT_EQUAL(404u, p.status());
        CPPUNIT_ASSERT(!p.keepAlive());
        CPPUNIT_ASSERT_EQUAL(std::size_t(4), p.headers().size());
        CPPUNIT_ASSERT_EQUAL(std::string("y"), p.headers()[2].second);
        // HEAD: no body whatever Content-Length says.
        p.reset(true);
        CPPUNIT_ASSERT(!p.feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"));
        CPPUNIT_ASSERT(p.complete());
        // A callback can stop the parser.
        p.reset();
        p.onHeaders = [] { return false; };
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::cancelled), p.feed("HTTP/1.1 200 OK\r\n\r\n"));
    }

    void testLimits() {
        auto r = run("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'), 16, false, 50);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::response_too_large), r.ec);
        ResponseParser p;
        p.setMaxHeaderSize(100);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::response_too_large),
                             p.feed("HTTP/1.1 200 OK\r\nX: " + std::string(200, 'a') + "\r\n\r\n"));
        p.reset();
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::protocol_error), p.feed("SMTP ready\r\n"));
    }

    void testTruncated() {
        // Every strict prefix of a framed response is incomplete: EOF there is connection_closed.
        for (const std::string& wire : {std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), chunked}) {
            for (std::size_t cut = 0; cut < wire.size(); ++cut) {
                auto r = run(wire.substr(0, cut), 5, true);
                CPPUNIT_ASSERT(!r.complete);
                CPPUNIT_ASSERT(r.ec == make_error_code(errc::connection_closed) ||
                               r.ec == make_error_code(errc::protocol_error));
            }
        }
    }

    void testFuzz() {
        std::mt19937 rng(12345);
        const std::string seeds[] = {chunked, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
                                     "HTTP/1.1 200 OK\r\n\r\nclose delimited"};
        int completed = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string wire = seeds[i % 3];
            // Mutate: flip, insert or delete a few bytes, or pure random bytes.
            if (i % 10 == 9) {
                wire.assign(rng() % 300, '\0');
                for (auto& c : wire)
                    c = char(rng());
            } else {
                for (int m = int(rng() % 4); m > 0; --m) {
                    std::size_t pos = rng() % wire.size();
                    switch (rng() % 3) {
                    case 0: wire[pos] = char(rng()); break;
                    case 1: wire.insert(pos, 1, char(rng())); break;
                    default: wire.erase(pos, 1);
                    }
                }
            }
            const bool eof = rng() % 2;
            auto r = run(wire, 1 + rng() % 40, eof, 1000);
            CPPUNIT_ASSERT(!eof || r.complete || r.ec);
            CPPUNIT_ASSERT(r.body.size() <= 1000);
            completed += r.complete;
        }
        CPPUNIT_ASSERT(completed > 0);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientResponseParserTest);
