// Get coalescing (docs/server.md): GETs of a key whose DHT get is still running join it, get what it
// found so far and what it finds next, and end with it; a put closes the key to joiners.
//
// To keep a DHT get running, the proxy's node is given a peer that then stops: the node keeps
// asking it and waiting for its answer for a few seconds, longer than the test needs.
#include "support/dht_node.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <opendht/dhtrunner.h>

#include <cppunit/extensions/HelperMacros.h>

using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {
const std::string kKey = "5555555555555555555555555555555555555555";
} // namespace

class ServerGetTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerGetTest);
    CPPUNIT_TEST(testConcurrentGetsShareOneDhtGet);
    CPPUNIT_TEST(testPutClosesTheKeyToJoiners);
    CPPUNIT_TEST(testCoalescingDisabled);
    CPPUNIT_TEST_SUITE_END();

public:
    void tearDown() override { proxy_.reset(); }

    /// A proxy whose node's only peer has gone away, with `value` stored in its own storage.
    void startProxy(std::chrono::milliseconds window) {
        auto config = TestProxy::testConfig();
        config.get_coalescing_window = window;
        config.handle_timeout = 3s; // ends the gets (the gone peer would hold them longer)
        proxy_ = std::make_unique<TestProxy>(config);
        {
            TestDhtNode peer;
            peer.bootstrapTo(proxy_->node());
            CPPUNIT_ASSERT(peer.waitConnected());
            CPPUNIT_ASSERT(waitUntil([&] { return proxy_->node()->getNodesStats(AF_INET).good_nodes > 0; }));
        } // the peer stops: the proxy's searches now wait for it
        // Stored locally at once (Dht::put stores before announcing; the runner runs its operations
        // in order, so the gets below see it), the put itself may fail later.
        proxy_->node()->put(dht::InfoHash(kKey), std::make_shared<dht::Value>(dht::ValueType::USER_DATA, dht::Blob {'v'}, 7));
    }

    /// Opens GET `path` and reads its headers and first line.
    std::unique_ptr<RawHttpClient> openGet(const std::string& path, std::string* firstLine) {
        auto c = std::make_unique<RawHttpClient>(proxy_->port(), 15s);
        c->send(RawHttpClient::request("GET", path));
        auto h = c->readHeaders();
        CPPUNIT_ASSERT(h && h->status == 200 && h->chunked);
        auto line = c->readLine();
        CPPUNIT_ASSERT(line);
        *firstLine = *line;
        return c;
    }

    void testConcurrentGetsShareOneDhtGet() {
        startProxy(10s);
        std::string first, second, byId;
        auto a = openGet("/key/" + kKey, &first);
        CPPUNIT_ASSERT(first.find(R"("id":"7")") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
        // The second get joins: it is sent the batch the first already had, no new DHT get.
        auto b = openGet("/key/" + kKey, &second);
        CPPUNIT_ASSERT_EQUAL(first, second);
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("getCount").value_or(-1));
        // A get by value id is another question: its own DHT get.
        auto c = openGet("/key/" + kKey + "/7", &byId);
        CPPUNIT_ASSERT(byId.find(R"("id":"7")") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
        // Both joined answers end together, when their DHT get ends.
        for (auto* client : {a.get(), b.get()}) {
            CPPUNIT_ASSERT(!client->readLine());
            CPPUNIT_ASSERT(client->streamEnded());
        }
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("getCount") == 0; }, 15s));
        CPPUNIT_ASSERT_EQUAL(0LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
    }

    void testPutClosesTheKeyToJoiners() {
        startProxy(10s);
        std::string line;
        auto a = openGet("/key/" + kKey, &line);
        // A put then a get through the proxy, pipelined: the router runs the put's handler first.
        // The get must not join the older get, which may have missed the new value.
        RawHttpClient c(proxy_->port(), 15s);
        c.send(RawHttpClient::request("POST", "/key/" + kKey, R"({"data":"bmV3","id":"8","type":0})") +
               RawHttpClient::request("GET", "/key/" + kKey));
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("dhtGetCount") == 2; }));
        // A third get joins that newer one, and is sent what it found: the new value too.
        RawHttpClient d(proxy_->port(), 15s);
        d.send(RawHttpClient::request("GET", "/key/" + kKey));
        auto h = d.readHeaders();
        CPPUNIT_ASSERT(h && h->status == 200);
        std::string all;
        while (all.find(R"("id":"8")") == std::string::npos) {
            auto l = d.readLine();
            CPPUNIT_ASSERT(l);
            all += *l + '\n';
        }
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
    }

    void testCoalescingDisabled() {
        startProxy(0ms);
        std::string line;
        auto a = openGet("/key/" + kKey, &line);
        auto b = openGet("/key/" + kKey, &line);
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("dhtGetCount").value_or(-1));
    }

private:
    std::unique_ptr<TestProxy> proxy_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(ServerGetTest);
