// DhtDriver: a DhtRunner driven on an io_context (no DHT thread), with a threaded peer node on
// loopback; a ProxyServer on the driven runner over HTTP; stop() with operations in flight.
#include "dhtgate/dht_driver.h"
#include "dhtgate/proxy_server.h"

#include "support/dht_node.h"
#include "support/io_thread.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <opendht/dhtrunner.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include <cppunit/extensions/HelperMacros.h>

using namespace dhtgate::test;
using namespace std::chrono_literals;

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef01234567";
const std::string kValue = R"({"data":"aGVsbG8=","id":"42","type":0})";

dht::SockAddr loopback(std::uint16_t port) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return dht::SockAddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin));
}

std::shared_ptr<dht::Value> textValue(const std::string& text, dht::Value::Id id) {
    auto v = std::make_shared<dht::Value>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    v->id = id;
    return v;
}

} // namespace

class DhtDriverTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(DhtDriverTest);
    CPPUNIT_TEST(testPutGetBothWays);
    CPPUNIT_TEST(testListenReceivesPeerPut);
    CPPUNIT_TEST(testProxyServerOnDrivenRunner);
    CPPUNIT_TEST(testStopWithOperationsInFlight);
    CPPUNIT_TEST(testBadBindAddress);
    CPPUNIT_TEST(testIpv6Loopback);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        io_ = std::make_unique<IoThread>();
        driver_ = io_->run(
            [this] { return std::make_unique<dhtgate::DhtDriver>(io_->io(), 0, dhtgate::Logger{}, "127.0.0.1"); });
        CPPUNIT_ASSERT(driver_->port() != 0);
        peer_ = std::make_unique<TestDhtNode>();
        peer_->runner()->bootstrap(loopback(driver_->port()));
        CPPUNIT_ASSERT(peer_->waitConnected());
    }

    void tearDown() override {
        if (server_)
            server_->stop(); // from this thread: waits for the final chunks
        io_->run([this] {
            driver_->stop();
            return 0;
        });
        server_.reset();
        io_->io().stop(); // idle keep-alive connections would keep run() busy
        io_->stop();
        driver_.reset();
        io_.reset();
        peer_.reset();
    }

    /// Puts on the driven runner from this thread (kick after queueing), waits for the result.
    bool drivenPut(const dht::InfoHash& key, std::shared_ptr<dht::Value> v) {
        auto done = std::make_shared<std::promise<bool>>();
        auto f = done->get_future();
        driver_->runner()->put(key, std::move(v), [done](bool ok) { done->set_value(ok); });
        driver_->kick();
        return ready(f) && f.get();
    }

    void testPutGetBothWays() {
        const auto key1 = dht::InfoHash::get("driven->peer");
        CPPUNIT_ASSERT(drivenPut(key1, textValue("from driven", 1)));
        auto got = std::make_shared<std::promise<std::vector<std::shared_ptr<dht::Value>>>>();
        auto values = std::make_shared<std::vector<std::shared_ptr<dht::Value>>>();
        peer_->runner()->get(
            key1,
            [values](const std::vector<std::shared_ptr<dht::Value>>& vs) {
                values->insert(values->end(), vs.begin(), vs.end());
                return true;
            },
            [got, values](bool) { got->set_value(*values); });
        auto gf = got->get_future();
        CPPUNIT_ASSERT(ready(gf));
        auto v1 = gf.get();
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), v1.size());
        CPPUNIT_ASSERT_EQUAL(std::string("from driven"), std::string(v1[0]->data.begin(), v1[0]->data.end()));

        // The other way: the peer puts, the driven runner gets; callbacks run on the io thread.
        const auto key2 = dht::InfoHash::get("peer->driven");
        CPPUNIT_ASSERT(peer_->put(key2, textValue("from peer", 2)));
        auto got2 = std::make_shared<std::promise<std::string>>();
        auto found = std::make_shared<std::string>();
        auto threadOk = std::make_shared<std::atomic<bool>>(true);
        const auto ioId = io_->id();
        driver_->runner()->get(
            key2,
            [found, threadOk, ioId](const std::vector<std::shared_ptr<dht::Value>>& vs) {
                if (std::this_thread::get_id() != ioId)
                    *threadOk = false;
                for (const auto& v : vs)
                    found->assign(v->data.begin(), v->data.end());
                return true;
            },
            [got2, found, threadOk, ioId](bool) {
                if (std::this_thread::get_id() != ioId)
                    *threadOk = false;
                got2->set_value(*found);
            });
        driver_->kick();
        auto f2 = got2->get_future();
        CPPUNIT_ASSERT(ready(f2));
        CPPUNIT_ASSERT_EQUAL(std::string("from peer"), f2.get());
        CPPUNIT_ASSERT(threadOk->load());
    }

    void testListenReceivesPeerPut() {
        const auto key = dht::InfoHash::get("listen");
        auto received = std::make_shared<std::promise<std::string>>();
        auto once = std::make_shared<std::atomic<bool>>(false);
        auto token = driver_->runner()->listen(
            key, [received, once](const std::vector<std::shared_ptr<dht::Value>>& vs, bool expired) {
                if (!expired && !vs.empty() && !once->exchange(true))
                    received->set_value(std::string(vs[0]->data.begin(), vs[0]->data.end()));
                return true;
            });
        driver_->kick();
        CPPUNIT_ASSERT(ready(token)); // the listen op ran on the io thread
        CPPUNIT_ASSERT(peer_->put(key, textValue("pushed", 3)));
        auto f = received->get_future();
        CPPUNIT_ASSERT(ready(f));
        CPPUNIT_ASSERT_EQUAL(std::string("pushed"), f.get());
    }

    void startServer() {
        auto config = TestProxy::testConfig();
        config.dht_kick = [driver = driver_.get()] { driver->kick(); };
        server_ = std::make_unique<dhtgate::ProxyServer>(driver_->runner(), config);
        auto ec = io_->run([this] { return server_->start(io_->io()); });
        CPPUNIT_ASSERT(!ec);
    }

    void testProxyServerOnDrivenRunner() {
        startServer();
        const auto port = server_->port();
        RawHttpClient listen(port);
        listen.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);

        auto r = RawHttpClient::exchange(port, RawHttpClient::request("POST", "/key/" + kKey, kValue));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        r = RawHttpClient::exchange(port, RawHttpClient::request("GET", "/key/" + kKey));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(kValue + "\n", r->body);
        auto line = listen.readLine();
        CPPUNIT_ASSERT(line);
        CPPUNIT_ASSERT_EQUAL(kValue, *line);

        // The value reached the peer through the driven node.
        auto got = std::make_shared<std::promise<std::size_t>>();
        auto count = std::make_shared<std::size_t>(0);
        peer_->runner()->get(
            dht::InfoHash(kKey),
            [count](const std::vector<std::shared_ptr<dht::Value>>& vs) {
                *count += vs.size();
                return true;
            },
            [got, count](bool) { got->set_value(*count); });
        auto gf = got->get_future();
        CPPUNIT_ASSERT(ready(gf));
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), gf.get());

        // Node info: the peer is a good node.
        CPPUNIT_ASSERT(waitUntil([&] {
            auto info = RawHttpClient::exchange(port, RawHttpClient::request("GET", "/"));
            return info && info->status == 200 && jsonNumber(info->body, "good").value_or(0) >= 1;
        }));

        // Stopping the server ends the stream with its final chunk.
        server_->stop();
        CPPUNIT_ASSERT(!listen.readLine());
        CPPUNIT_ASSERT(listen.streamEnded());
    }

    void testStopWithOperationsInFlight() {
        startServer();
        RawHttpClient listen(server_->port());
        listen.send(RawHttpClient::request("GET", "/key/" + kKey + "/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);

        // Operations queued from this thread and from the io thread, then stop on the io thread
        // right behind them: nothing crashes and no callback runs after stop() returned.
        auto calls = std::make_shared<std::atomic<int>>(0);
        auto stopped = std::make_shared<std::atomic<bool>>(false);
        auto late = std::make_shared<std::atomic<bool>>(false);
        auto count = [calls, stopped, late] {
            ++*calls;
            if (*stopped)
                *late = true;
        };
        auto runner = driver_->runner();
        for (int i = 0; i < 20; ++i) {
            const auto key = dht::InfoHash::get("inflight" + std::to_string(i));
            runner->put(key, textValue("x", 100 + i), [count](bool) { count(); });
            runner->get(
                key,
                [count](const std::vector<std::shared_ptr<dht::Value>>&) {
                    count();
                    return true;
                },
                [count](bool) { count(); });
            runner->listen(key, [count](const std::vector<std::shared_ptr<dht::Value>>&, bool) {
                count();
                return true;
            });
        }
        driver_->kick();
        server_->stop(); // from this thread: ends the stream, cancels the DHT listen via kick
        CPPUNIT_ASSERT(!listen.readLine());
        CPPUNIT_ASSERT(listen.streamEnded());
        io_->run([this, stopped] {
            driver_->stop();
            *stopped = true;
            return 0;
        });
        CPPUNIT_ASSERT(!driver_->runner()->isRunning());
        driver_->kick(); // harmless after stop: the posted pump finds the driver stopped
        // Operations queued after stop() fail at once, on the calling thread.
        auto failed = std::make_shared<std::promise<bool>>();
        runner->put(dht::InfoHash::get("after"), textValue("z", 7), [failed](bool ok) { failed->set_value(ok); });
        auto ff = failed->get_future();
        CPPUNIT_ASSERT(ready(ff, 0ms));
        CPPUNIT_ASSERT(!ff.get());
        for (int i = 0; i < 3; ++i) // let anything still queued on the io thread run
            io_->run([] { return 0; });
        CPPUNIT_ASSERT(!late->load());
        driver_->stop(); // twice is fine
    }

    void testBadBindAddress() {
        CPPUNIT_ASSERT_THROW(io_->run([this] {
            dhtgate::DhtDriver d(io_->io(), 0, {}, "not-an-address");
            return 0;
        }),
                             std::invalid_argument);
        // A taken port: the driven node's own.
        CPPUNIT_ASSERT_THROW(io_->run([this] {
            dhtgate::DhtDriver d(io_->io(), driver_->port(), {}, "127.0.0.1");
            return 0;
        }),
                             std::system_error);
    }

    void testIpv6Loopback() {
        std::unique_ptr<dhtgate::DhtDriver> d6;
        try {
            d6 = io_->run(
                [this] { return std::make_unique<dhtgate::DhtDriver>(io_->io(), 0, dhtgate::Logger{}, "::1"); });
        } catch (const std::system_error&) {
            return; // no IPv6 on this machine
        }
        CPPUNIT_ASSERT(d6->port() != 0);
        CPPUNIT_ASSERT_EQUAL(d6->port(), static_cast<std::uint16_t>(d6->runner()->getBoundPort(AF_INET6)));
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(0), static_cast<std::uint16_t>(d6->runner()->getBoundPort(AF_INET)));
        // A standalone node still answers, through the io thread (priority queue: node info).
        auto info = std::make_shared<std::promise<in_port_t>>();
        d6->runner()->getNodeInfo([info](std::shared_ptr<dht::NodeInfo> i) { info->set_value(i->bound6); });
        d6->kick();
        auto f = info->get_future();
        CPPUNIT_ASSERT(ready(f));
        CPPUNIT_ASSERT_EQUAL(d6->port(), static_cast<std::uint16_t>(f.get()));
        io_->run([&d6] {
            d6.reset(); // stop() on the io thread
            return 0;
        });
    }

private:
    std::unique_ptr<IoThread> io_;
    std::unique_ptr<dhtgate::DhtDriver> driver_;
    std::unique_ptr<TestDhtNode> peer_;
    std::unique_ptr<dhtgate::ProxyServer> server_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(DhtDriverTest);
