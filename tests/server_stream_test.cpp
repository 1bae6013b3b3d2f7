// Get and listen streams over raw sockets: framing, fan-out, cancellation when the socket closes,
// pipelining behind a stream, shutdown ending streams with their final chunk.
#include "dhtgate/proxy_server.h"

#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"
#include "support/dht_node.h"

#include <opendht/dhtrunner.h>
#include <future>

#include <cppunit/extensions/HelperMacros.h>


using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {
const std::string kKey = "0123456789abcdef0123456789abcdef01234567";
const std::string kValue = R"({"data":"aGVsbG8=","id":"42","type":0})";
} // namespace

class ServerStreamTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerStreamTest);
    CPPUNIT_TEST(testPutThenGet);
    CPPUNIT_TEST(testGetByValueId);
    CPPUNIT_TEST(testListenReceivesPut);
    CPPUNIT_TEST(testListenFanOut);
    CPPUNIT_TEST(testListenReportsExpiry);
    CPPUNIT_TEST(testListenCancelledOnClose);
    CPPUNIT_TEST(testListenPipelinedBehindNodeInfo);
    CPPUNIT_TEST(testRequestBehindListenNotExecuted);
    CPPUNIT_TEST(testStopEndsStreams);
    CPPUNIT_TEST(testListenSurvivesReadTimeout);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override { proxy_ = std::make_unique<TestProxy>(); }
    void tearDown() override { proxy_.reset(); }

    std::optional<RawHttpClient::Response> put(const std::string& body, const std::string& key = kKey) {
        return RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("POST", "/key/" + key, body));
    }

    void testPutThenGet() {
        auto r = put(kValue);
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(kValue + "\n", r->body);
        r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/key/" + kKey));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT(r->chunked);
        CPPUNIT_ASSERT_EQUAL(kValue + "\n", r->body);
        // Legacy path, trailing slash and query string address the same route.
        for (const auto& path : {"/" + kKey, "/key/" + kKey + "/", "/key/" + kKey + "?x=y"}) {
            r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", path));
            CPPUNIT_ASSERT(r);
            CPPUNIT_ASSERT_EQUAL(kValue + "\n", r->body);
        }
    }

    void testGetByValueId() {
        CPPUNIT_ASSERT_EQUAL(200, put(kValue)->status);
        CPPUNIT_ASSERT_EQUAL(200, put(R"({"data":"b3RoZXI=","id":"43","type":0})")->status);
        auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/key/" + kKey + "/42"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(kValue + "\n", r->body);
        r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/key/" + kKey + "/7"));
        CPPUNIT_ASSERT_EQUAL(std::string(), r->body);
    }

    void testListenReceivesPut() {
        CPPUNIT_ASSERT_EQUAL(200, put(kValue)->status);
        RawHttpClient c(proxy_->port());
        c.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen", {}, "Connection: keep-alive\r\n"));
        auto h = c.readHeaders();
        CPPUNIT_ASSERT(h);
        CPPUNIT_ASSERT_EQUAL(200, h->status);
        CPPUNIT_ASSERT(h->chunked);
        CPPUNIT_ASSERT_EQUAL(kValue, *c.readLine()); // already stored
        const std::string later = R"({"data":"bGF0ZXI=","id":"99","type":0})";
        CPPUNIT_ASSERT_EQUAL(200, put(later)->status);
        CPPUNIT_ASSERT_EQUAL(later, *c.readLine());
    }

    void testListenReportsExpiry() {
        // A value type living two seconds, stored by a peer node: the listen stream must re-send
        // the value with "expired":true when the DHT reports its expiry (spec §5).
        const dht::ValueType shortLived(78, "short-lived", std::chrono::seconds(2));
        proxy_->node()->registerType(shortLived);
        TestDhtNode peer;
        peer->registerType(shortLived);
        peer.bootstrapTo(proxy_->node());
        CPPUNIT_ASSERT(peer.waitConnected());
        RawHttpClient c(proxy_->port(), 10s);
        c.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen", {}, "Connection: keep-alive\r\n"));
        auto h = c.readHeaders();
        CPPUNIT_ASSERT(h && h->status == 200);
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        // Warm the peer's search with a long-lived value first: a cold put can take longer than
        // the short lifetime, and a value that arrives expired is never stored.
        CPPUNIT_ASSERT(peer.put(dht::InfoHash(kKey), std::make_shared<dht::Value>(dht::ValueType::USER_DATA, dht::Blob {1}, 4241)));
        auto warm = c.readLine();
        CPPUNIT_ASSERT(warm && warm->find(R"("id":"4241")") != std::string::npos);
        auto v = std::make_shared<dht::Value>(shortLived, dht::Blob {std::uint8_t(7)}, 4242);
        v->type = shortLived.id;
        CPPUNIT_ASSERT(peer.put(dht::InfoHash(kKey), v));
        auto line = c.readLine();
        CPPUNIT_ASSERT(line);
        CPPUNIT_ASSERT(line->find(R"("id":"4242")") != std::string::npos);
        CPPUNIT_ASSERT(line->find("expired") == std::string::npos);
        auto expired = c.readLine();
        CPPUNIT_ASSERT(expired);
        CPPUNIT_ASSERT(expired->find(R"("expired":true)") != std::string::npos);
        CPPUNIT_ASSERT(expired->find(R"("id":"4242")") != std::string::npos);
    }

    void testListenFanOut() {
        std::vector<std::unique_ptr<RawHttpClient>> clients;
        for (int i = 0; i < 3; ++i) {
            clients.push_back(std::make_unique<RawHttpClient>(proxy_->port()));
            clients.back()->send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
            CPPUNIT_ASSERT_EQUAL(200, clients.back()->readHeaders()->status);
        }
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 3; }));
        CPPUNIT_ASSERT_EQUAL(1LL, *proxy_->statsNumber("listenKeyCount")); // one shared DHT listen
        CPPUNIT_ASSERT_EQUAL(200, put(kValue)->status);
        for (auto& c : clients)
            CPPUNIT_ASSERT_EQUAL(kValue, *c->readLine());
        // A late joiner gets the current values first.
        RawHttpClient late(proxy_->port());
        late.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
        CPPUNIT_ASSERT_EQUAL(200, late.readHeaders()->status);
        CPPUNIT_ASSERT_EQUAL(kValue, *late.readLine());
    }

    void testListenCancelledOnClose() {
        {
            RawHttpClient c(proxy_->port());
            c.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
            CPPUNIT_ASSERT_EQUAL(200, c.readHeaders()->status);
            CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        }
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 0; }));
        CPPUNIT_ASSERT_EQUAL(0LL, *proxy_->statsNumber("listenKeyCount"));
    }

    void testListenPipelinedBehindNodeInfo() {
        {
            RawHttpClient c(proxy_->port());
            c.send(RawHttpClient::request("GET", "/") + RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
            auto info = c.readResponse();
            CPPUNIT_ASSERT(info);
            CPPUNIT_ASSERT_EQUAL(200, info->status);
            CPPUNIT_ASSERT(info->body.find("node_id") != std::string::npos);
            CPPUNIT_ASSERT_EQUAL(200, c.readHeaders()->status);
            CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        }
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 0; }));
    }

    void testRequestBehindListenNotExecuted() {
        RawHttpClient c(proxy_->port());
        c.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen") + RawHttpClient::request("POST", "/key/" + kKey, kValue));
        CPPUNIT_ASSERT_EQUAL(200, c.readHeaders()->status);
        // The put behind the stream must not run: a get on another connection finds nothing.
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        auto r = RawHttpClient::exchange(proxy_->port(), RawHttpClient::request("GET", "/key/" + kKey));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(std::string(), r->body);
    }

    void testStopEndsStreams() {
        RawHttpClient listen(proxy_->port());
        listen.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        proxy_->server().stop();
        CPPUNIT_ASSERT(!listen.readLine());
        CPPUNIT_ASSERT(listen.streamEnded()); // the final chunk arrived
        proxy_->server().stop();               // twice is fine
    }

    void testListenSurvivesReadTimeout() {
        auto config = TestProxy::testConfig();
        config.read_timeout = 200ms;
        proxy_ = std::make_unique<TestProxy>(config);
        RawHttpClient idle(proxy_->port());
        CPPUNIT_ASSERT(idle.waitClosed()); // an idle connection is closed by the read timeout
        RawHttpClient listen(proxy_->port());
        listen.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);
        // Outlive several read timeouts: a keep-alive idle check between requests (each a
        // fresh connection closed by the timeout) proves time passed.
        for (int i = 0; i < 3; ++i) {
            RawHttpClient other(proxy_->port());
            CPPUNIT_ASSERT(other.waitClosed());
        }
        CPPUNIT_ASSERT_EQUAL(200, put(kValue)->status);
        auto line = listen.readLine();
        CPPUNIT_ASSERT(line);
        CPPUNIT_ASSERT_EQUAL(kValue, *line);
    }

private:
    std::unique_ptr<TestProxy> proxy_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ServerStreamTest);
