// The server driven by the unmodified OpenDHT 2.x client: libopendht's own DhtRunner in
// proxy-client mode (the reference client; tests may use it, the product may not).
#include "dhtgate/proxy_server.h"

#include "support/dht_node.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>

#include <opendht/dhtrunner.h>

#include <future>
#include <mutex>
#include <vector>

using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {

/// Collects listen events from the DHT thread; tests wait on it.
class Collector {
public:
    dht::ValueCallback callback() {
        return [this](const std::vector<std::shared_ptr<dht::Value>>& values, bool expired) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (const auto& v : values)
                    events_.push_back({v, expired});
            }
            cv_.notify_all();
            return true;
        };
    }
    /// Waits for an event matching `pred`.
    bool waitFor(const std::function<bool(const dht::Value&, bool)>& pred, std::chrono::milliseconds t = 10s) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, t, [&] {
            for (const auto& [v, expired] : events_)
                if (pred(*v, expired))
                    return true;
            return false;
        });
    }
    std::size_t count() {
        std::lock_guard<std::mutex> lock(mutex_);
        return events_.size();
    }

private:
    std::mutex mutex_; // guards events_
    std::condition_variable cv_;
    std::vector<std::pair<std::shared_ptr<dht::Value>, bool>> events_;
};

bool putAndWait(dht::DhtRunner& r, const dht::InfoHash& key, std::shared_ptr<dht::Value> v, bool permanent = false) {
    auto p = std::make_shared<std::promise<bool>>();
    auto f = p->get_future();
    r.put(key, std::move(v), [p](bool ok) { p->set_value(ok); }, dht::time_point::max(), permanent);
    return ready(f, 15s) && f.get();
}

std::vector<std::shared_ptr<dht::Value>> getAndWait(dht::DhtRunner& r, const dht::InfoHash& key) {
    auto values = std::make_shared<std::vector<std::shared_ptr<dht::Value>>>();
    auto p = std::make_shared<std::promise<void>>();
    auto f = p->get_future();
    r.get(key, [values](const std::vector<std::shared_ptr<dht::Value>>& vs) {
            values->insert(values->end(), vs.begin(), vs.end());
            return true;
        }, [p](bool) { p->set_value(); });
    if (!ready(f, 15s))
        return {};
    return *values;
}

bool hasData(const std::vector<std::shared_ptr<dht::Value>>& vs, const dht::Blob& data) {
    for (const auto& v : vs)
        if (v->data == data)
            return true;
    return false;
}

dht::Blob blob(const std::string& s) { return dht::Blob(s.begin(), s.end()); }

} // namespace

class ServerClientTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerClientTest);
    CPPUNIT_TEST(testPutGet);
    CPPUNIT_TEST(testListenLaterPut);
    CPPUNIT_TEST(testListenValueFromPeer);
    CPPUNIT_TEST(testCancelListen);
    CPPUNIT_TEST(testBigValue);
    CPPUNIT_TEST(testPermanentPutOutlivesPlainPut);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        proxy_ = std::make_unique<TestProxy>();
        client_ = makeProxyClient(proxy_->url());
    }
    void tearDown() override {
        if (client_)
            client_->join();
        client_.reset();
        proxy_.reset();
    }

    void testPutGet() {
        const auto key = dht::InfoHash::get("put-get");
        CPPUNIT_ASSERT(putAndWait(*client_, key, std::make_shared<dht::Value>(blob("hello"))));
        CPPUNIT_ASSERT(hasData(getAndWait(*client_, key), blob("hello")));
        // Stored in the server's DHT node itself (standalone node).
        CPPUNIT_ASSERT(hasData(getAndWait(*proxy_->node().runner(), key), blob("hello")));
    }

    void testListenLaterPut() {
        const auto key = dht::InfoHash::get("listen-later");
        Collector events;
        auto token = client_->listen(key, events.callback());
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        CPPUNIT_ASSERT(putAndWait(*client_, key, std::make_shared<dht::Value>(blob("later"))));
        CPPUNIT_ASSERT(events.waitFor([](const dht::Value& v, bool expired) { return !expired && v.data == blob("later"); }));
        client_->cancelListen(key, std::move(token));
    }

    void testListenValueFromPeer() {
        TestDhtNode peer;
        peer.bootstrapTo(proxy_->node());
        CPPUNIT_ASSERT(peer.waitConnected());
        const auto key = dht::InfoHash::get("from-peer");
        Collector events;
        auto token = client_->listen(key, events.callback());
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        CPPUNIT_ASSERT(putAndWait(*peer.runner(), key, std::make_shared<dht::Value>(blob("peer value"))));
        CPPUNIT_ASSERT(events.waitFor([](const dht::Value& v, bool) { return v.data == blob("peer value"); }));
        client_->cancelListen(key, std::move(token));
        peer.stop();
    }

    void testCancelListen() {
        const auto key = dht::InfoHash::get("cancel-listen");
        Collector events;
        auto token = client_->listen(key, events.callback());
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 1; }));
        client_->cancelListen(key, std::move(token));
        // A 2.x client keeps the connection after cancelListen (spec §15.3); shutting it down
        // closes it, and the server then drops the stream and its DHT listen.
        client_->join();
        client_.reset();
        CPPUNIT_ASSERT(waitUntil([&] { return proxy_->statsNumber("listenCount") == 0; }));
        CPPUNIT_ASSERT_EQUAL(0LL, *proxy_->statsNumber("listenKeyCount"));
    }

    void testBigValue() {
        const auto key = dht::InfoHash::get("big-value");
        dht::Blob data(62 * 1024);
        for (std::size_t i = 0; i < data.size(); ++i)
            data[i] = static_cast<uint8_t>(i * 7 + 3);
        CPPUNIT_ASSERT(putAndWait(*client_, key, std::make_shared<dht::Value>(data)));
        auto got = getAndWait(*client_, key);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), got.size());
        CPPUNIT_ASSERT(got.front()->data == data);
    }

    void testPermanentPutOutlivesPlainPut() {
        // A value type living 3 s, known to the server's node and the client.
        const dht::ValueType shortLived(4242, "short-lived", std::chrono::seconds(3));
        proxy_->node()->registerType(shortLived);
        client_->registerType(shortLived);
        const auto key = dht::InfoHash::get("permanent");

        auto plain = std::make_shared<dht::Value>(blob("plain"));
        plain->type = shortLived.id;
        auto permanent = std::make_shared<dht::Value>(blob("permanent"));
        permanent->type = shortLived.id;
        CPPUNIT_ASSERT(putAndWait(*client_, key, permanent, true));
        CPPUNIT_ASSERT(putAndWait(*client_, key, plain));
        CPPUNIT_ASSERT_EQUAL(1LL, *proxy_->statsNumber("totalPermanentPuts"));
        CPPUNIT_ASSERT(hasData(getAndWait(*proxy_->node().runner(), key), blob("plain")));
        // Each check is a real DHT get on the server's node; the plain value expires after 3 s.
        CPPUNIT_ASSERT(waitUntil([&] { return !hasData(getAndWait(*proxy_->node().runner(), key), blob("plain")); }, 15s));
        CPPUNIT_ASSERT(hasData(getAndWait(*proxy_->node().runner(), key), blob("permanent")));
    }

private:
    std::unique_ptr<TestProxy> proxy_;
    std::shared_ptr<dht::DhtRunner> client_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ServerClientTest);
