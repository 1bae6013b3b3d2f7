// Bad input over raw sockets (issue 2 item 5), pipelining, HTTP/1.0, timeouts, limits.
#include "dhtgate/proxy_server.h"

#include "codec/value_codec.h"
#include "support/raw_http_client.h"
#include "support/test_keys.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>

#include <sstream>

#include <thread>

using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {
const std::string kKey = "0123456789abcdef0123456789abcdef01234567";
const std::string kPath = "/key/" + kKey;
} // namespace

class ServerInputTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerInputTest);
    CPPUNIT_TEST(testKeyRules);
    CPPUNIT_TEST(testBadBodies);
    CPPUNIT_TEST(testSignatures);
    CPPUNIT_TEST(testValueTooLarge);
    CPPUNIT_TEST(testBodyOverLimitRejectedEarly);
    CPPUNIT_TEST(testHeaderSectionTooLarge);
    CPPUNIT_TEST(testSlowRequestTimesOut);
    CPPUNIT_TEST(testPipeliningOrder);
    CPPUNIT_TEST(testPipeliningBeyondLimit);
    CPPUNIT_TEST(testRequestsSplitAcrossReads);
    CPPUNIT_TEST(testUnusualRequestsBetweenPlainOnes);
    CPPUNIT_TEST(testPipelinedRejection);
    CPPUNIT_TEST(testHttp10AndConnectionClose);
    CPPUNIT_TEST(testPushSignEncryptUnavailable);
    CPPUNIT_TEST(testPermanentPutRefreshAndExpiry);
    CPPUNIT_TEST(testConcurrentPermanentPuts);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override { proxy_ = std::make_unique<TestProxy>(); }
    void tearDown() override { proxy_.reset(); }

    std::optional<RawHttpClient::Response> send(const std::string& bytes) {
        return RawHttpClient::exchange(proxy_->port(), bytes);
    }
    std::optional<RawHttpClient::Response> post(const std::string& body, const std::string& path = kPath) {
        return send(RawHttpClient::request("POST", path, body));
    }
    void assertError(const std::optional<RawHttpClient::Response>& r, int status) {
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(status, r->status);
        CPPUNIT_ASSERT(r->body.rfind("{\"err\":\"", 0) == 0);
        CPPUNIT_ASSERT(r->body.back() == '}'); // no trailing newline on errors
        CPPUNIT_ASSERT_EQUAL(std::string("*"), r->header("access-control-allow-origin"));
    }

    void testKeyRules() {
        assertError(send(RawHttpClient::request("GET", "/key/" + kKey + "0")), 400); // 41 hex: ambiguous
        assertError(send(RawHttpClient::request("GET", "/" + kKey + "ab")), 400);
        auto r = send(RawHttpClient::request("GET", "/key/testkey")); // any other string is hashed
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/key/" + kKey))->status);
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/" + kKey))->status);
        // Still serving.
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/"))->status);
    }

    void testBadBodies() {
        assertError(post(""), 400);
        for (const char* body : {R"({"data":)", "[1,2,3]", "123", R"("abc")", R"({"type":"x"})", R"({"seq":"x","data":""})",
                                 R"({"data":"!!!not base64###"})", R"({"data":"eA"})", R"({"owner":"garbage","data":""})",
                                 "{\"data\":\"aGk=\"} trailing"}) {
            auto r = post(body);
            CPPUNIT_ASSERT_MESSAGE(body, r);
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 400, r->status);
            assertError(r, 400);
        }
        CPPUNIT_ASSERT_EQUAL(200, post(R"({"data":"aGk=","type":0})")->status); // still serving
    }

    void testSignatures() {
        const auto& key = rsaKey(0);
        dht::Value v(dht::Blob {1, 2, 3});
        v.id = 77;
        v.sign(key);
        auto r = post(dhtgate::codec::valueJson(v));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        v.data = {1, 2, 4}; // the signature no longer matches
        assertError(post(dhtgate::codec::valueJson(v)), 400);
    }

    void testValueTooLarge() {
        std::string data(4 * (65 * 1024 / 3 + 1), 'A'); // base64 of ~65 KiB: body under the body limit
        auto r = post("{\"data\":\"" + data + "\",\"type\":0}");
        assertError(r, 413);
    }

    void testBodyOverLimitRejectedEarly() {
        RawHttpClient c(proxy_->port());
        // Announce 10 MB, send 1 KiB of it: the answer must come without the rest.
        c.send("POST " + kPath + " HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n" + std::string(1024, 'x'));
        auto r = c.readResponse();
        assertError(r, 413);
        CPPUNIT_ASSERT_EQUAL(std::string("close"), r->header("connection"));
        c.send(std::string(4096, 'y')); // the server keeps draining until we close
        c.shutdownWrite();
        CPPUNIT_ASSERT(c.waitClosed());
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/"))->status);
    }

    void testHeaderSectionTooLarge() {
        const std::string big = "X-Big: " + std::string(20 * 1024, 'a') + "\r\n";
        auto r = send(RawHttpClient::request("GET", "/", {}, big));
        assertError(r, 431);
        // Many small headers adding up.
        std::string many;
        for (int i = 0; i < 90; ++i)
            many += "X-H" + std::to_string(i) + ": " + std::string(200, 'b') + "\r\n";
        assertError(send(RawHttpClient::request("GET", "/", {}, many)), 431);
        // Too many header fields, each small.
        std::string fields;
        for (int i = 0; i < 120; ++i)
            fields += "X-F" + std::to_string(i) + ": v\r\n";
        assertError(send(RawHttpClient::request("GET", "/", {}, fields)), 431);
        // An over-long request line.
        assertError(send(RawHttpClient::request("GET", "/key/" + std::string(20 * 1024, 'k'))), 431);
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/"))->status);
    }

    void testSlowRequestTimesOut() {
        auto config = TestProxy::testConfig();
        config.read_timeout = 300ms;
        proxy_ = std::make_unique<TestProxy>(config);
        RawHttpClient c(proxy_->port());
        c.send("GET / HTTP/1.1\r\nHost: 127"); // and nothing more
        const auto start = std::chrono::steady_clock::now();
        CPPUNIT_ASSERT(c.waitClosed());
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start < 4s);
    }

    void testPipeliningOrder() {
        RawHttpClient c(proxy_->port());
        c.send(RawHttpClient::request("POST", kPath, R"({"data":"aGk=","id":"5","type":0})") +
               RawHttpClient::request("GET", "/node/stats") + RawHttpClient::request("GET", kPath) +
               RawHttpClient::request("GET", "/nope/nope") + RawHttpClient::request("GET", "/"));
        auto put = c.readResponse();
        CPPUNIT_ASSERT(put);
        CPPUNIT_ASSERT_EQUAL(200, put->status);
        CPPUNIT_ASSERT(put->body.find("\"id\":\"5\"") != std::string::npos);
        auto stats = c.readResponse();
        CPPUNIT_ASSERT(stats->body.find("listenCount") != std::string::npos);
        auto get = c.readResponse();
        CPPUNIT_ASSERT(get->chunked);
        CPPUNIT_ASSERT(get->body.find("\"id\":\"5\"") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(404, c.readResponse()->status);
        auto info = c.readResponse();
        CPPUNIT_ASSERT(info->body.find("node_id") != std::string::npos);
    }

    void testPipeliningBeyondLimit() {
        auto config = TestProxy::testConfig();
        config.max_pipelined_requests = 2;
        proxy_ = std::make_unique<TestProxy>(config);
        RawHttpClient c(proxy_->port());
        std::string burst;
        for (int i = 0; i < 8; ++i)
            burst += RawHttpClient::request("GET", i % 2 ? "/node/stats" : "/key/k" + std::to_string(i));
        c.send(burst);
        for (int i = 0; i < 8; ++i) {
            auto r = c.readResponse();
            CPPUNIT_ASSERT_MESSAGE(std::to_string(i), r);
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT_EQUAL(i % 2 == 1, r->body.find("listenCount") != std::string::npos);
        }
    }

    void testRequestsSplitAcrossReads() {
        // The server parses reads in place and holds back an unfinished header section; a request
        // cut anywhere (mid method, mid field, between header and body, mid body) and requests
        // glued to the end of another must all come out whole and in order.
        const std::string put = RawHttpClient::request("POST", kPath, R"({"data":"c3BsaXQ=","id":"77","type":0})");
        const std::string all = put + RawHttpClient::request("GET", "/node/info") + RawHttpClient::request("GET", kPath) +
                                "GET / HTTP/1.0\r\n\r\n";
        for (std::size_t cut : {std::size_t(2), std::size_t(20), put.find("\r\n\r\n") + 2, put.size() - 3, put.size() + 5}) {
            RawHttpClient c(proxy_->port());
            c.send(all.substr(0, cut));
            // Another connection's full exchange lets the server read the first part on its own.
            CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("GET", "/"))->status);
            c.send(all.substr(cut));
            const std::string at = "cut " + std::to_string(cut);
            auto r = c.readResponse();
            CPPUNIT_ASSERT_MESSAGE(at, r && r->status == 200 && r->body.find("\"id\":\"77\"") != std::string::npos);
            r = c.readResponse();
            CPPUNIT_ASSERT_MESSAGE(at, r && r->body.find("node_id") != std::string::npos);
            r = c.readResponse();
            CPPUNIT_ASSERT_MESSAGE(at, r && r->chunked && r->body.find("c3BsaXQ=") != std::string::npos);
            r = c.readResponse();
            CPPUNIT_ASSERT_MESSAGE(at, r && r->status == 200 && !r->chunked);
            CPPUNIT_ASSERT_MESSAGE(at, c.waitClosed()); // the HTTP/1.0 request ends the connection
        }
    }

    void testUnusualRequestsBetweenPlainOnes() {
        // Requests the guard's fast scanner leaves to the full parser (a chunked body, folded or
        // bare-LF header lines, lower-case header names) pipelined with plain ones: every answer
        // comes, in order.
        const std::string body = R"({"data":"Y2h1bms=","id":"91","type":0})";
        const std::string body2 = R"({"data":"Yg==","id":"92","type":0})";
        std::ostringstream chunked;
        chunked << "POST " << kPath << " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                << std::hex << body.size() << "\r\n" << body << "\r\n0\r\n\r\n";
        RawHttpClient c(proxy_->port());
        c.send(chunked.str() + RawHttpClient::request("GET", "/node/info") +
               "GET " + kPath + " HTTP/1.1\nHost: x\n\n" +
               "GET / HTTP/1.1\r\nhost: x\r\nx-long: a\r\n b\r\n\r\n" +
               "POST " + kPath + " HTTP/1.1\r\ncontent-length: " + std::to_string(body2.size()) + "\r\n\r\n" + body2 +
               RawHttpClient::request("GET", "/node/stats"));
        auto r = c.readResponse();
        CPPUNIT_ASSERT(r && r->status == 200 && r->body.find("\"id\":\"91\"") != std::string::npos);
        r = c.readResponse();
        CPPUNIT_ASSERT(r && r->body.find("node_id") != std::string::npos);
        r = c.readResponse();
        CPPUNIT_ASSERT(r && r->chunked && r->body.find("\"id\":\"91\"") != std::string::npos);
        r = c.readResponse();
        CPPUNIT_ASSERT(r && r->status == 200 && r->body.find("node_id") != std::string::npos);
        r = c.readResponse();
        CPPUNIT_ASSERT(r && r->status == 200 && r->body.find("\"id\":\"92\"") != std::string::npos);
        r = c.readResponse();
        CPPUNIT_ASSERT(r && r->body.find("listenCount") != std::string::npos);
    }

    void testPipelinedRejection() {
        RawHttpClient c(proxy_->port());
        c.send(RawHttpClient::request("GET", "/") + "POST " + kPath +
               " HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\nxxxx");
        auto first = c.readResponse();
        CPPUNIT_ASSERT(first);
        CPPUNIT_ASSERT_EQUAL(200, first->status);
        assertError(c.readResponse(), 413);
    }

    void testHttp10AndConnectionClose() {
        CPPUNIT_ASSERT_EQUAL(200, post(R"({"data":"aGk=","id":"8","type":0})")->status);
        {
            RawHttpClient c(proxy_->port());
            c.send("GET " + kPath + " HTTP/1.0\r\n\r\n");
            auto r = c.readResponse();
            CPPUNIT_ASSERT(r);
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT(!r->chunked); // no chunked encoding for HTTP/1.0
            CPPUNIT_ASSERT(r->body.find("\"id\":\"8\"") != std::string::npos);
            CPPUNIT_ASSERT(c.waitClosed());
        }
        {
            RawHttpClient c(proxy_->port());
            c.send("GET / HTTP/1.0\r\n\r\n");
            auto r = c.readResponse();
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT(c.waitClosed());
        }
        {
            RawHttpClient c(proxy_->port());
            c.send(RawHttpClient::request("GET", "/", {}, "Connection: close\r\n"));
            auto r = c.readResponse();
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT_EQUAL(std::string("close"), r->header("connection"));
            CPPUNIT_ASSERT(c.waitClosed());
        }
        {
            RawHttpClient c(proxy_->port()); // keep-alive: two requests on one connection
            c.send(RawHttpClient::request("GET", "/"));
            CPPUNIT_ASSERT_EQUAL(200, c.readResponse()->status);
            c.send(RawHttpClient::request("GET", "/node/info"));
            CPPUNIT_ASSERT_EQUAL(200, c.readResponse()->status);
        }
    }

    void testPushSignEncryptUnavailable() {
        // Push is implemented (tests/server_push_test.cpp); without a push server only UnifiedPush
        // subscriptions are accepted, so others get a clear 400.
        assertError(send(RawHttpClient::request("SUBSCRIBE", kPath, R"({"key":"token"})")), 400);
        CPPUNIT_ASSERT_EQUAL(200, send(RawHttpClient::request("UNSUBSCRIBE", "/" + kKey, R"({"key":"token"})"))->status);
        assertError(post("{}", "/node/pingPush"), 400); // no token
        assertError(post(R"({"data":"aGk="})", kPath + "/sign"), 501);
        assertError(post(R"({"data":"aGk="})", kPath + "/encrypt"), 501);
    }

    void testPermanentPutRefreshAndExpiry() {
        auto config = TestProxy::testConfig();
        config.permanent_put_lifetime = 1s;
        proxy_ = std::make_unique<TestProxy>(config);
        const std::string body = R"({"data":"cGVybQ==","id":"0","permanent":true,"type":0})";
        auto a = post(body);
        auto b = post(body); // same content, id 0: the same entry is refreshed (§6.2)
        CPPUNIT_ASSERT_EQUAL(200, a->status);
        CPPUNIT_ASSERT_EQUAL(200, b->status);
        CPPUNIT_ASSERT_EQUAL(*jsonString(a->body, "id"), *jsonString(b->body, "id"));
        CPPUNIT_ASSERT(*jsonString(a->body, "id") != "0");
        CPPUNIT_ASSERT_EQUAL(1LL, *proxy_->statsNumber("totalPermanentPuts"));
        CPPUNIT_ASSERT_EQUAL(1LL, *proxy_->statsNumber("putCount"));
        // Expires `permanent_put_lifetime` after the last refresh.
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("totalPermanentPuts") == 0; }, 5s));
    }

    void testConcurrentPermanentPuts() {
        const std::string body = R"({"data":"Y2VydA==","id":"1","permanent":true,"type":8})";
        RawHttpClient a(proxy_->port()), b(proxy_->port());
        a.send(RawHttpClient::request("POST", kPath, body));
        b.send(RawHttpClient::request("POST", kPath, body));
        auto ra = a.readResponse(), rb = b.readResponse();
        CPPUNIT_ASSERT(ra && rb);
        CPPUNIT_ASSERT_EQUAL(200, ra->status);
        CPPUNIT_ASSERT_EQUAL(200, rb->status);
        CPPUNIT_ASSERT_EQUAL(ra->body, rb->body);
        CPPUNIT_ASSERT_EQUAL(1LL, *proxy_->statsNumber("totalPermanentPuts"));
    }

private:
    std::unique_ptr<TestProxy> proxy_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ServerInputTest);
