// The unmodified libopendht 2.4.12 client in push mode (push token set): it SUBSCRIBEs through our
// proxy, our receiver captures the push, and the client gets its values once the application
// hands it that payload (DhtRunner::pushNotificationReceived, spec §7.6).
#include "dhtgate/proxy_server.h"

#include "support/http_receiver.h"
#include "support/push_capture.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/dhtrunner.h>

#include <condition_variable>
#include <mutex>

using namespace dhtgate;
using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<dht::DhtRunner> makePushClient(const std::string& url, const std::string& token) {
    auto client = std::make_shared<dht::DhtRunner>();
    dht::DhtRunner::Config config;
    config.threaded = true;
    config.proxy_server = url;
    config.push_token = token;
    config.push_platform = "android";
    config.push_node_id = "client-node-id";
    client->run(config, dht::DhtRunner::Context {});
    return client;
}

/// Values a listen callback received (DHT client thread), waited on by the test.
class Received {
public:
    dht::ValueCallback callback() {
        return [this](const std::vector<std::shared_ptr<dht::Value>>& values, bool expired) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                for (const auto& v : values)
                    if (!expired)
                        data_.emplace_back(v->data.begin(), v->data.end());
            }
            cv_.notify_all();
            return true;
        };
    }
    bool waitFor(const std::string& data, std::chrono::milliseconds t = 10s) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, t, [&] { return std::find(data_.begin(), data_.end(), data) != data_.end(); });
    }

private:
    std::mutex mutex_; // guards data_
    std::condition_variable cv_;
    std::vector<std::string> data_;
};

} // namespace

class ServerPushClientTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerPushClientTest);
    CPPUNIT_TEST(testClientGetsValuesThroughPush);
    CPPUNIT_TEST_SUITE_END();

public:
    void testClientGetsValuesThroughPush() {
        HttpReceiver gorush;
        auto config = TestProxy::testConfig();
        config.push_server = gorush.url();
        TestProxy proxy(config);
        auto client = makePushClient(proxy.url(), "device-token-7");
        const auto key = dht::InfoHash::get("push-client-key");
        Received received;
        client->listen(key, received.callback());
        // The client subscribes once it sees the proxy connected.
        CPPUNIT_ASSERT(waitUntil([&] { return proxy.statsNumber("pushListenersCount") == 1; }));

        // Another client stores a value through the proxy ("aGVsbG8=" is "hello").
        auto r = RawHttpClient::exchange(proxy.port(), RawHttpClient::request("POST", "/key/" + key.toString(),
                                                                              R"({"data":"aGVsbG8=","id":"0","type":0})"));
        CPPUNIT_ASSERT(r && r->status == 200);
        auto push = waitForPush(gorush, [](const CapturedPush& p) { return p.has("ids"); });
        CPPUNIT_ASSERT(push);
        CPPUNIT_ASSERT_EQUAL(std::string("device-token-7"), push->token);
        CPPUNIT_ASSERT_EQUAL(std::string("client-node-id"), push->get("to"));
        CPPUNIT_ASSERT_EQUAL(key.toString(), push->get("key"));

        // The phone's application hands the payload to the client, which fetches the values.
        client->pushNotificationReceived(push->data);
        CPPUNIT_ASSERT(received.waitFor("hello"));

        client->join();
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ServerPushClientTest);
