// Push listeners end to end: SUBSCRIBE / UNSUBSCRIBE / pingPush over raw sockets, pushes captured
// by a real loopback HTTP receiver standing in for gorush and for a UnifiedPush endpoint.
// Lifetimes are shortened through ServerConfig (seconds), so expiry is observed in real time.
#include "dhtgate/proxy_server.h"

#include "support/http_receiver.h"
#include "support/push_capture.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/dhtrunner.h>

using namespace dhtgate;
using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {

const std::string kKey = "5e918933d6f309bb7582ba0faa3ccf1c15b9418d";

ServerConfig pushConfig(const std::string& pushServer) {
    auto c = TestProxy::testConfig();
    c.push_server = pushServer;
    c.push_initial_backoff = 20ms;
    c.push_max_backoff = 40ms;
    c.push_request_timeout = 2s;
    return c;
}

std::string valueBody(int id, const std::string& base64Data = "aGVsbG8=", int type = 0) {
    return R"({"data":")" + base64Data + R"(","id":")" + std::to_string(id) + R"(","type":)" + std::to_string(type) + "}";
}

} // namespace

class ServerPushTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerPushTest);
    CPPUNIT_TEST(testSubscribeThenPutPushes);
    CPPUNIT_TEST(testSubscribeAnswers);
    CPPUNIT_TEST(testBadBodies);
    CPPUNIT_TEST(testPingPush);
    CPPUNIT_TEST(testNoPushServer);
    CPPUNIT_TEST(testUnifiedPushKeepsPort);
    CPPUNIT_TEST(testJoiningListenerGetsCurrentValues);
    CPPUNIT_TEST(testUnsubscribeStopsPushes);
    CPPUNIT_TEST(testRefreshKeepsThenExpiry);
    CPPUNIT_TEST(testPermanentPutTimeoutNotice);
    CPPUNIT_TEST(testExpiredValuesGiveExp);
    CPPUNIT_TEST(testFailingGatewayRetriedAndCounted);
    CPPUNIT_TEST(testUnreachableGateway);
    CPPUNIT_TEST(testPutFromPeerPushes);
    CPPUNIT_TEST_SUITE_END();

public:
    void tearDown() override { proxy_.reset(); }

    std::optional<RawHttpClient::Response> call(const std::string& method, const std::string& path,
                                                const std::string& body = {}) {
        return RawHttpClient::exchange(proxy_->port(), RawHttpClient::request(method, path, body));
    }
    std::optional<RawHttpClient::Response> subscribe(const std::string& token, const std::string& platform = "android",
                                                     const std::string& cid = "client-A", const std::string& sid = "sess1",
                                                     bool refresh = false, const std::string& key = kKey) {
        return call("SUBSCRIBE", "/key/" + key, subscribeBody(token, platform, cid, sid, refresh));
    }
    void put(int id, const std::string& data = "aGVsbG8=", int type = 0, const std::string& key = kKey) {
        auto r = call("POST", "/key/" + key, valueBody(id, data, type));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
    }
    /// Waits until every push queued so far has been delivered or given up.
    bool pushesSettled() {
        return waitUntil([&] { return proxy_->statsNumber("pushQueued") == 0; });
    }

    void testSubscribeThenPutPushes() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        auto r = subscribe("device-token-1");
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("{}\n"), r->body);
        CPPUNIT_ASSERT_EQUAL(std::string("3"), r->header("content-length"));
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushListenersCount").value_or(-1));

        put(4242); // another client's put
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.has("key"); });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("/api/push"), p->target);
        CPPUNIT_ASSERT_EQUAL(std::string("device-token-1"), p->token);
        CPPUNIT_ASSERT_EQUAL(std::string("2"), p->platform);
        CPPUNIT_ASSERT_EQUAL(std::string("high"), p->priority);
        CPPUNIT_ASSERT_EQUAL(kKey, p->get("key"));
        CPPUNIT_ASSERT_EQUAL(std::string("client-A"), p->get("to"));
        CPPUNIT_ASSERT_EQUAL(std::string("sess1"), p->get("s"));
        CPPUNIT_ASSERT_EQUAL(std::string("4242"), p->get("ids"));
        CPPUNIT_ASSERT(!p->has("exp"));
        const auto t = std::stoll(p->get("t"));
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
        CPPUNIT_ASSERT(t <= now && t > now - 10000);
        CPPUNIT_ASSERT(pushesSettled());
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushSent").value_or(-1));
        CPPUNIT_ASSERT_EQUAL(0LL, proxy_->statsNumber("pushFailed").value_or(-1));
        auto stats = call("GET", "/node/stats");
        CPPUNIT_ASSERT(stats->body.find(R"("androidPush":{"highPriorityCount":1,"normalPriorityCount":0})") !=
                       std::string::npos);
    }

    void testSubscribeAnswers() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        put(7);
        // Legacy path, iOS.
        auto r = call("SUBSCRIBE", "/" + kKey, subscribeBody("ios-token", "ios", "client-B", "s1"));
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("{}\n"), r->body);
        // The new listener is pushed the existing value at once.
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.get("ids") == "7"; });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("1"), p->platform);
        // Refresh: chunked, a single "{}\n".
        r = call("SUBSCRIBE", "/" + kKey, subscribeBody("ios-token", "ios", "client-B", "s2", true));
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT(r->chunked);
        CPPUNIT_ASSERT_EQUAL(std::string("{}\n"), r->body);
        // Existing listener without refresh: the current values, one per line.
        r = call("SUBSCRIBE", "/key/" + kKey, subscribeBody("ios-token", "ios", "client-B", "s3"));
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT(r->chunked);
        CPPUNIT_ASSERT(r->body.find(R"("id":"7")") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL('\n', r->body.back());
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushListenersCount").value_or(-1));
        // The latest session id reaches the pushes.
        put(8);
        p = waitForPush(gorush, [](const CapturedPush& p) { return p.get("ids") == "8"; });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("s3"), p->get("s"));
    }

    void testBadBodies() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        for (const char* method : {"SUBSCRIBE", "UNSUBSCRIBE"}) {
            auto r = call(method, "/key/" + kKey, "not json");
            CPPUNIT_ASSERT_EQUAL(400, r->status);
            r = call(method, "/key/" + kKey, R"({"client_id":"x"})");
            CPPUNIT_ASSERT_EQUAL(400, r->status);
            CPPUNIT_ASSERT_EQUAL(std::string(R"({"err":"No token"})"), r->body);
            r = call(method, "/key/" + kKey, R"({"key":""})");
            CPPUNIT_ASSERT_EQUAL(400, r->status);
        }
        auto r = call("POST", "/node/pingPush", "[1]");
        CPPUNIT_ASSERT_EQUAL(400, r->status);
        // Unsubscribing something unknown is fine.
        r = call("UNSUBSCRIBE", "/key/" + kKey, R"({"key":"nobody","client_id":"x"})");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string(), r->body);
        CPPUNIT_ASSERT_EQUAL(std::size_t(0), gorush.requests().size());
    }

    void testPingPush() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        auto r = call("POST", "/node/pingPush", R"({"key":"tok","platform":"android","client_id":"me"})");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("{}\n"), r->body);
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.has("pong"); });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("true"), p->get("pong"));
        CPPUNIT_ASSERT_EQUAL(std::string("me"), p->get("to"));
        CPPUNIT_ASSERT_EQUAL(std::string("tok"), p->token);
    }

    void testNoPushServer() {
        proxy_ = std::make_unique<TestProxy>(pushConfig(""));
        for (const char* platform : {"android", "ios", ""}) {
            auto r = subscribe("tok", platform);
            CPPUNIT_ASSERT_EQUAL(400, r->status);
            CPPUNIT_ASSERT(r->body.find("No push server") != std::string::npos);
        }
        auto r = call("POST", "/node/pingPush", R"({"key":"tok","platform":"android"})");
        CPPUNIT_ASSERT_EQUAL(400, r->status);
        CPPUNIT_ASSERT_EQUAL(0LL, proxy_->statsNumber("pushListenersCount").value_or(-1));
    }

    void testUnifiedPushKeepsPort() {
        HttpReceiver endpoint;
        proxy_ = std::make_unique<TestProxy>(pushConfig("")); // UnifiedPush needs no gateway
        const auto url = endpoint.url() + "/up/endpoint123?x=1";
        auto r = subscribe(url, "unifiedpush", "client-U", "sessU");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        put(99);
        auto p = waitForPush(endpoint, [](const CapturedPush& p) { return p.get("ids") == "99"; });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("/up/endpoint123?x=1"), p->target);
        CPPUNIT_ASSERT_EQUAL(std::string("client-U"), p->get("to"));
        CPPUNIT_ASSERT_EQUAL(std::string("sessU"), p->get("s"));
        CPPUNIT_ASSERT_EQUAL(std::string("high"), p->priority);
        const auto req = endpoint.requests().back();
        CPPUNIT_ASSERT_EQUAL(std::string("86400"), req.header("ttl"));
        CPPUNIT_ASSERT(pushesSettled());
        auto stats = call("GET", "/node/stats");
        CPPUNIT_ASSERT(stats->body.find(R"("unifiedPush":{"highPriorityCount":1,"normalPriorityCount":0})") !=
                       std::string::npos);
    }

    void testJoiningListenerGetsCurrentValues() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok-A", "android", "A")->status);
        put(11);
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-A" && p.has("ids"); }));
        // Same key, second device: one shared DHT listen, and it is told about value 11 at once.
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok-B", "android", "B")->status);
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-B"; });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("11"), p->get("ids"));
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("pushListenersCount").value_or(-1));
        put(12);
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-A" && p.get("ids") == "12"; }));
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-B" && p.get("ids") == "12"; }));
    }

    void testUnsubscribeStopsPushes() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok-A", "android", "A")->status);
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok-B", "android", "B")->status);
        put(21);
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-A" && p.get("ids") == "21"; }));
        auto r = call("UNSUBSCRIBE", "/key/" + kKey, R"({"key":"tok-A","client_id":"A"})");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT_EQUAL(std::string("0"), r->header("content-length"));
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushListenersCount").value_or(-1));
        put(22);
        // B (still subscribed) is the marker: once its push for 22 is in and nothing is queued,
        // A's would have been sent by the same event.
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.token == "tok-B" && p.get("ids") == "22"; }));
        CPPUNIT_ASSERT(pushesSettled());
        for (const auto& p : capturedPushes(gorush))
            CPPUNIT_ASSERT(!(p.token == "tok-A" && p.get("ids") == "22"));
    }

    void testRefreshKeepsThenExpiry() {
        HttpReceiver gorush;
        auto config = pushConfig(gorush.url());
        config.push_listener_lifetime = 2s;
        config.push_expiry_margin = 1s;
        proxy_ = std::make_unique<TestProxy>(config);
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok", "android", "A", "s1")->status);
        // At lifetime - margin: the "timeout" notice.
        auto notice = waitForPush(gorush, [](const CapturedPush& p) { return p.has("timeout"); });
        CPPUNIT_ASSERT(notice);
        CPPUNIT_ASSERT_EQUAL(kKey, notice->get("timeout"));
        CPPUNIT_ASSERT_EQUAL(std::string("A"), notice->get("to"));
        CPPUNIT_ASSERT_EQUAL(std::string("s1"), notice->get("s"));
        CPPUNIT_ASSERT(!notice->has("vid"));
        CPPUNIT_ASSERT_EQUAL(std::string("normal"), notice->priority);
        // The client refreshes on the notice (as a 2.x client does), which moves both deadlines.
        auto r = subscribe("tok", "android", "A", "s2", true);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        const auto refreshed = std::chrono::steady_clock::now();
        auto second = waitForPush(gorush, [](const CapturedPush& p) { return p.get("timeout") == kKey && p.get("s") == "s2"; });
        CPPUNIT_ASSERT(second);
        // Now past the first subscription's expiry, still subscribed and delivering.
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - refreshed >= 900ms);
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushListenersCount").value_or(-1));
        put(31);
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.get("ids") == "31"; }));
        // Not refreshed again: removed at expiry, and its DHT listen with it.
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("pushListenersCount") == 0; }, 5s));
    }

    void testPermanentPutTimeoutNotice() {
        HttpReceiver gorush;
        auto config = pushConfig(gorush.url());
        config.permanent_put_lifetime = 2s;
        config.push_expiry_margin = 1s;
        proxy_ = std::make_unique<TestProxy>(config);
        auto r = call("POST", "/key/" + kKey,
                      R"({"data":"aGVsbG8=","id":"0","permanent":{"client_id":"A","key":"tok","platform":"ios",)"
                      R"("session_id":"sessP","topic":"com.example.app"},"type":0})");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        const auto vid = jsonString(r->body, "id");
        CPPUNIT_ASSERT(vid);
        auto notice = waitForPush(gorush, [](const CapturedPush& p) { return p.has("vid"); });
        CPPUNIT_ASSERT(notice);
        CPPUNIT_ASSERT_EQUAL(*vid, notice->get("vid"));
        CPPUNIT_ASSERT_EQUAL(kKey, notice->get("timeout"));
        CPPUNIT_ASSERT_EQUAL(std::string("A"), notice->get("to"));
        CPPUNIT_ASSERT_EQUAL(std::string("sessP"), notice->get("s"));
        CPPUNIT_ASSERT_EQUAL(std::string("1"), notice->platform);
        const auto req = gorush.requests().back();
        CPPUNIT_ASSERT(req.body.find(R"("topic":"com.example.app")") != std::string::npos);
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("totalPermanentPuts") == 0; }, 5s));
    }

    void testExpiredValuesGiveExp() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(gorush.url()));
        // A value type that lives one second, stored by a peer node (libopendht 2.4 reports the
        // expiry of values stored through the network to listens; see ListenRegistry).
        const dht::ValueType shortLived(77, "short-lived", std::chrono::seconds(2));
        proxy_->node()->registerType(shortLived);
        TestDhtNode peer;
        peer->registerType(shortLived);
        peer.bootstrapTo(proxy_->node());
        CPPUNIT_ASSERT(peer.waitConnected());
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok")->status);
        // The peer stores with its put's creation time; a value whose first put spends longer
        // than its lifetime finding the proxy node arrives expired and is dropped. So warm the
        // peer's search for the key with a long-lived value first, then put the short-lived ones.
        CPPUNIT_ASSERT(peer.put(dht::InfoHash(kKey), std::make_shared<dht::Value>(dht::ValueType::USER_DATA, dht::Blob {50}, 50)));
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.get("ids") == "50"; }));
        for (dht::Value::Id id : {51, 52}) {
            auto v = std::make_shared<dht::Value>(shortLived, dht::Blob {std::uint8_t(id)}, id);
            v->type = shortLived.id;
            CPPUNIT_ASSERT(peer.put(dht::InfoHash(kKey), std::move(v)));
        }
        CPPUNIT_ASSERT(waitForPush(gorush, [](const CapturedPush& p) { return p.get("ids").find("52") != std::string::npos; }));
        std::string expired;
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.has("exp"); }, 8s);
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("normal"), p->priority);
        expired = p->get("exp");
        CPPUNIT_ASSERT_EQUAL(expired, p->get("ids"));
        if (expired.find(',') == std::string::npos) { // the two may expire in separate events
            auto q = waitForPush(gorush, [&](const CapturedPush& q) { return q.has("exp") && q.get("exp") != expired; }, 8s);
            CPPUNIT_ASSERT(q);
            expired += "," + q->get("exp");
        }
        CPPUNIT_ASSERT(expired == "51,52" || expired == "52,51");
    }

    void testFailingGatewayRetriedAndCounted() {
        HttpReceiver gorush;
        gorush.setDefaultReply({500, "{}", {}, false});
        auto config = pushConfig(gorush.url());
        config.push_max_attempts = 3;
        proxy_ = std::make_unique<TestProxy>(config);
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok")->status);
        put(61);
        CPPUNIT_ASSERT(gorush.waitForRequests(3)); // first try + 2 retries
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("pushFailed") == 1; }));
        CPPUNIT_ASSERT_EQUAL(2LL, proxy_->statsNumber("pushRetries").value_or(-1));
        CPPUNIT_ASSERT_EQUAL(0LL, proxy_->statsNumber("pushSent").value_or(-1));
        // The proxy keeps serving meanwhile and after.
        auto r = call("GET", "/key/" + kKey);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        // A transient failure then success: delivered on the retry.
        gorush.script({{503, "{}", {}, false}});
        gorush.setDefaultReply({});
        put(62);
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("pushSent") == 1; }));
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushFailed").value_or(-1));
    }

    void testUnreachableGateway() {
        std::uint16_t closed;
        {
            HttpReceiver gone; // bound then closed: nothing listens on that port any more
            closed = gone.port();
        }
        auto config = pushConfig("127.0.0.1:" + std::to_string(closed));
        config.push_max_attempts = 2;
        proxy_ = std::make_unique<TestProxy>(config);
        CPPUNIT_ASSERT_EQUAL(200, subscribe("tok")->status);
        put(71);
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("pushFailed") == 1; }));
        CPPUNIT_ASSERT_EQUAL(1LL, proxy_->statsNumber("pushRetries").value_or(-1));
        auto r = call("GET", "/key/" + kKey);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        CPPUNIT_ASSERT(r->body.find(R"("id":"71")") != std::string::npos);
    }

    void testPutFromPeerPushes() {
        HttpReceiver gorush;
        proxy_ = std::make_unique<TestProxy>(pushConfig(""));
        // A value stored by another DHT node (not through this proxy) reaches the device too.
        TestDhtNode peer;
        peer.bootstrapTo(proxy_->node());
        CPPUNIT_ASSERT(peer.waitConnected());
        auto r = subscribe(gorush.url() + "/up/peer", "unifiedpush", "P", "sP");
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        auto done = std::make_shared<std::promise<bool>>();
        auto f = done->get_future();
        peer->put(dht::InfoHash(kKey), std::make_shared<dht::Value>(dht::Blob {1, 2, 3}),
                  [done](bool ok) { done->set_value(ok); });
        CPPUNIT_ASSERT(ready(f));
        auto p = waitForPush(gorush, [](const CapturedPush& p) { return p.has("ids"); });
        CPPUNIT_ASSERT(p);
        CPPUNIT_ASSERT_EQUAL(std::string("/up/peer"), p->target);
        CPPUNIT_ASSERT_EQUAL(std::string("P"), p->get("to"));
    }

private:
    std::unique_ptr<TestProxy> proxy_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(ServerPushTest);
