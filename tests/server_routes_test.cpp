// The server's routes over raw sockets: node info, stats, OPTIONS, 404/405, framing.
#include "dhtgate/proxy_server.h"

#include "support/raw_http_client.h"
#include "support/test_proxy.h"

#include <cppunit/extensions/HelperMacros.h>

using dhtgate::test::RawHttpClient;
using dhtgate::test::TestProxy;

class ServerRoutesTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerRoutesTest);
    CPPUNIT_TEST(testNodeInfo);
    CPPUNIT_TEST(testPublicIpFollowsEachClient);
    CPPUNIT_TEST(testStats);
    CPPUNIT_TEST(testOptions);
    CPPUNIT_TEST(testNotFoundAndNotAllowed);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override { proxy_ = std::make_unique<TestProxy>(); }
    void tearDown() override { proxy_.reset(); }

    void testNodeInfo() {
        for (const char* path : {"/", "/node/info", "/node/info/", "/?x=1"}) {
            auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", path));
            CPPUNIT_ASSERT(r);
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT_EQUAL(std::string("application/json"), r->header("content-type"));
            CPPUNIT_ASSERT_EQUAL(std::string("*"), r->header("access-control-allow-origin"));
            CPPUNIT_ASSERT_EQUAL('\n', r->body.back());
            CPPUNIT_ASSERT_EQUAL(proxy_->node()->getNodeId().toString(), *dhtgate::test::jsonString(r->body, "node_id"));
            CPPUNIT_ASSERT_EQUAL(std::string("127.0.0.1"), *dhtgate::test::jsonString(r->body, "public_ip"));
            CPPUNIT_ASSERT_EQUAL(std::string(dhtgate::versionString()), *dhtgate::test::jsonString(r->body, "version"));
            // A standalone node is usable: it reports itself as a good node (docs/server.md).
            CPPUNIT_ASSERT(r->body.find("\"ipv4\":{\"dubious\":0,\"good\":1,") != std::string::npos);
        }
    }

    void testPublicIpFollowsEachClient() {
        // The address text is cached between requests: it must still follow the client.
        auto config = TestProxy::testConfig();
        config.address = "::";
        proxy_ = std::make_unique<TestProxy>(config);
        for (int i = 0; i < 2; ++i) {
            for (const std::string host : {"::1", "127.0.0.1"}) {
                RawHttpClient c(proxy_->port(), std::chrono::seconds(5), host);
                c.send(RawHttpClient::request("GET", "/"));
                auto r = c.readResponse();
                CPPUNIT_ASSERT(r);
                const auto ip = dhtgate::test::jsonString(r->body, "public_ip");
                CPPUNIT_ASSERT(ip);
                CPPUNIT_ASSERT_EQUAL(host == "::1" ? std::string("::1") : std::string("::ffff:127.0.0.1"), *ip);
            }
        }
    }

    void testStats() {
        auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/node/stats"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        for (const char* m : {"listenCount", "putCount", "totalPermanentPuts", "pushListenersCount", "requestRate"})
            CPPUNIT_ASSERT_MESSAGE(m, dhtgate::test::jsonNumber(r->body, m).has_value());
        CPPUNIT_ASSERT(r->body.find("\"nodeInfo\":{") != std::string::npos);
        CPPUNIT_ASSERT(r->body.find("public_ip") == std::string::npos);
    }

    void testOptions() {
        for (const char* req : {"OPTIONS /key/abc", "GET /key/abc/options", "OPTIONS /key/abc/listen"}) {
            std::string line(req);
            const auto sp = line.find(' ');
            auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request(line.substr(0, sp), line.substr(sp + 1)));
            CPPUNIT_ASSERT(r);
            CPPUNIT_ASSERT_EQUAL(200, r->status);
            CPPUNIT_ASSERT_EQUAL(std::string("OPTIONS, GET, POST, SUBSCRIBE, UNSUBSCRIBE"),
                                 r->header("access-control-allow-methods"));
            CPPUNIT_ASSERT_EQUAL(std::string("content-type"), r->header("access-control-allow-headers"));
            CPPUNIT_ASSERT_EQUAL(std::string("86400"), r->header("access-control-max-age"));
            CPPUNIT_ASSERT_EQUAL(std::string("*"), r->header("access-control-allow-origin"));
            CPPUNIT_ASSERT(r->body.empty());
        }
    }

    void testNotFoundAndNotAllowed() {
        auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/no/such/route"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(404, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"err\":\"No such route\"}"), r->body);
        CPPUNIT_ASSERT_EQUAL(std::string("*"), r->header("access-control-allow-origin"));

        r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("DELETE", "/key/abc"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(405, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("OPTIONS, GET, POST, SUBSCRIBE, UNSUBSCRIBE"), r->header("allow"));
        CPPUNIT_ASSERT_EQUAL(std::string("*"), r->header("access-control-allow-origin"));
        CPPUNIT_ASSERT(r->body.back() != '\n');

        r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("POST", "/node/stats"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(405, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("GET"), r->header("allow"));
    }

private:
    std::unique_ptr<TestProxy> proxy_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ServerRoutesTest);
